/* SPDX-License-Identifier: BSD-2-Clause */
#include "convert-map.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

void fr_map_init(struct fr_map *m)
{
    memset(m, 0, sizeof *m);
}

void fr_map_free(struct fr_map *m)
{
    free(m->keys);
    free(m->vals);
    fr_map_init(m);
}

void *fr_map_get(const struct fr_map *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
        if (m->vals[i] == NULL)
            return NULL;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

static int grow(struct fr_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    uint64_t *keys = calloc(cap, sizeof *keys);
    void **vals = calloc(cap, sizeof *vals);
    if (keys == NULL || vals == NULL) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t j = 0; j < m->cap; j++) {
        if (m->vals[j] == NULL)
            continue;
        size_t i = mix(m->keys[j]) & (cap - 1);
        while (vals[i] != NULL)
            i = (i + 1) & (cap - 1);
        keys[i] = m->keys[j];
        vals[i] = m->vals[j];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int fr_map_put(struct fr_map *m, uint64_t key, void *val)
{
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    size_t mask = m->cap - 1;
    size_t i = mix(key) & mask;
    while (m->vals[i] != NULL && m->keys[i] != key)
        i = (i + 1) & mask;
    if (m->vals[i] == NULL)
        m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

void *fr_map_remove(struct fr_map *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    size_t mask = m->cap - 1, i = mix(key) & mask;
    while (m->vals[i] != NULL && m->keys[i] != key)
        i = (i + 1) & mask;
    void *val = m->vals[i];
    if (val == NULL)
        return NULL;
    /* Backward shift: move later entries of the probe run into the hole
     * when their home slot allows, so that lookups need no tombstones. */
    for (size_t j = (i + 1) & mask; m->vals[j] != NULL; j = (j + 1) & mask) {
        size_t home = mix(m->keys[j]) & mask;
        /* Entry j may move to i unless its home lies in (i, j]. */
        int home_in_gap = i <= j ? (home > i && home <= j)
                                 : (home > i || home <= j);
        if (home_in_gap)
            continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        i = j;
    }
    m->vals[i] = NULL;
    m->keys[i] = 0;
    m->count--;
    return val;
}

void fr_map_each(const struct fr_map *m, void (*fn)(void *val, void *arg),
                 void *arg)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i] != NULL)
            fn(m->vals[i], arg);
}

int fr_heap_init(struct fr_heap *h, size_t cap)
{
    memset(h, 0, sizeof *h);
    size_t c = 16;
    while (c < cap * 2)
        c *= 2;
    h->ptrs = calloc(c, sizeof *h->ptrs);
    h->sizes = calloc(c, sizeof *h->sizes);
    if (h->ptrs == NULL || h->sizes == NULL) {
        fr_heap_free(h);
        return -1;
    }
    h->cap = c;
    return 0;
}

void fr_heap_free(struct fr_heap *h)
{
    free(h->ptrs);
    free(h->sizes);
    h->ptrs = h->sizes = NULL;
    h->cap = 0;
}

/* Rebuilds the table without tombstones once they pile up, so probe
 * lengths stay short in long traces with many malloc/free cycles. */
static void rehash(struct fr_heap *h)
{
    uint64_t *ptrs = calloc(h->cap, sizeof *ptrs);
    uint64_t *sizes = calloc(h->cap, sizeof *sizes);
    if (ptrs == NULL || sizes == NULL) {
        free(ptrs);
        free(sizes);
        return;
    }
    size_t used = 0, mask = h->cap - 1;
    for (size_t j = 0; j < h->cap; j++) {
        if (h->ptrs[j] <= 1)
            continue;
        size_t i = mix(h->ptrs[j]) & mask;
        while (ptrs[i] != 0)
            i = (i + 1) & mask;
        ptrs[i] = h->ptrs[j];
        sizes[i] = h->sizes[j];
        used++;
    }
    free(h->ptrs);
    free(h->sizes);
    h->ptrs = ptrs;
    h->sizes = sizes;
    h->used = used;
}

void fr_heap_alloc(struct fr_heap *h, uint64_t ptr, uint64_t size)
{
    if (h->cap == 0 || ptr <= 1)
        return;
    if (h->used + 1 > h->cap / 2 && h->live < h->cap / 4)
        rehash(h);
    size_t mask = h->cap - 1;
    size_t i = mix(ptr) & mask, tomb = SIZE_MAX;
    for (;; i = (i + 1) & mask) {
        if (h->ptrs[i] == ptr) {
            /* Allocated again without a free we saw: replace. */
            h->in_use -= h->sizes[i];
            h->sizes[i] = size;
            h->in_use += size;
            return;
        }
        if (h->ptrs[i] == 1 && tomb == SIZE_MAX)
            tomb = i;
        if (h->ptrs[i] == 0)
            break;
    }
    if (tomb != SIZE_MAX) {
        i = tomb;
    } else {
        if (h->used + 1 > h->cap / 2) {
            h->dropped++;
            return;
        }
        h->used++;
    }
    h->ptrs[i] = ptr;
    h->sizes[i] = size;
    h->in_use += size;
    h->live++;
}

int fr_heap_release(struct fr_heap *h, uint64_t ptr)
{
    if (h->cap == 0 || ptr <= 1)
        return 0;
    size_t mask = h->cap - 1;
    for (size_t i = mix(ptr) & mask; h->ptrs[i] != 0; i = (i + 1) & mask) {
        if (h->ptrs[i] == ptr) {
            h->in_use -= h->sizes[i];
            h->ptrs[i] = 1;
            h->sizes[i] = 0;
            h->live--;
            return 1;
        }
    }
    h->unknown_frees++;
    return 0;
}
