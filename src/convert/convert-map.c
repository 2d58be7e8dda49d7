/* SPDX-License-Identifier: BSD-2-Clause */
#include "convert-map.h"

#include <stdlib.h>
#include <string.h>

void fr_map_init(struct fr_map *m)
{
    memset(m, 0, sizeof *m);
    fr_hash_map_init(&m->index);
}

void fr_map_free(struct fr_map *m)
{
    fr_hash_map_free(&m->index);
    free(m->vals);
    fr_map_init(m);
}

size_t fr_map_count(const struct fr_map *m)
{
    return fr_hash_map_count(&m->index);
}

void *fr_map_get(const struct fr_map *m, uint64_t key)
{
    uint32_t i = fr_hash_map_find(&m->index, key);
    return i != FR_HASH_NONE ? m->vals[i] : NULL;
}

int fr_map_put(struct fr_map *m, uint64_t key, void *val)
{
    uint32_t i;

    if (m->val_cap == fr_hash_map_count(&m->index)) {
        /* Room first, so that a key is never added without its value. */
        size_t cap = m->val_cap ? m->val_cap * 2 : 16;
        void **vals = realloc(m->vals, cap * sizeof *vals);
        if (vals == NULL)
            return -1;
        m->vals = vals;
        m->val_cap = cap;
    }
    i = fr_hash_map_add(&m->index, key, NULL);
    if (i == FR_HASH_NONE)
        return -1;
    m->vals[i] = val;
    return 0;
}

void *fr_map_remove(struct fr_map *m, uint64_t key)
{
    uint32_t i = fr_hash_map_find(&m->index, key);
    void *val;

    if (i == FR_HASH_NONE)
        return NULL;
    val = m->vals[i];
    fr_hash_map_remove(&m->index, key);
    /* The last key moved to index i. */
    m->vals[i] = m->vals[fr_hash_map_count(&m->index)];
    return val;
}

void fr_map_each(const struct fr_map *m, void (*fn)(void *val, void *arg),
                 void *arg)
{
    for (uint32_t i = 0; i < fr_hash_map_count(&m->index); i++)
        fn(m->vals[i], arg);
}

int fr_heap_init(struct fr_heap *h, size_t cap)
{
    memset(h, 0, sizeof *h);
    fr_hash_map_init(&h->index);
    h->cap = cap;
    return 0;
}

void fr_heap_free(struct fr_heap *h)
{
    fr_hash_map_free(&h->index);
    free(h->sizes);
    h->sizes = NULL;
    h->size_cap = h->cap = 0;
}

void fr_heap_alloc(struct fr_heap *h, uint64_t ptr, uint64_t size)
{
    uint32_t i = fr_hash_map_find(&h->index, ptr), n;

    if (i != FR_HASH_NONE) {
        /* Allocated again without a free we saw: replace. */
        h->in_use -= h->sizes[i];
        h->sizes[i] = size;
        h->in_use += size;
        return;
    }
    n = fr_hash_map_count(&h->index);
    if (n == h->size_cap && n < h->cap) {
        size_t cap = h->size_cap ? h->size_cap * 2 : 64;
        uint64_t *sizes;
        if (cap > h->cap)
            cap = h->cap;
        sizes = realloc(h->sizes, cap * sizeof *sizes);
        if (sizes != NULL) {
            h->sizes = sizes;
            h->size_cap = cap;
        }
    }
    if (n >= h->size_cap ||
        (i = fr_hash_map_add(&h->index, ptr, NULL)) == FR_HASH_NONE) {
        h->dropped++;
        return;
    }
    h->sizes[i] = size;
    h->in_use += size;
}

int fr_heap_release(struct fr_heap *h, uint64_t ptr)
{
    uint32_t i = fr_hash_map_find(&h->index, ptr);

    if (i == FR_HASH_NONE) {
        h->unknown_frees++;
        return 0;
    }
    h->in_use -= h->sizes[i];
    fr_hash_map_remove(&h->index, ptr);
    h->sizes[i] = h->sizes[fr_hash_map_count(&h->index)];
    return 1;
}
