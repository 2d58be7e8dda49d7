/* SPDX-License-Identifier: BSD-2-Clause */
#include "hash-map.h"

#include <stdlib.h>
#include <string.h>

/* A 64-bit finalizer: ids that differ in any bit spread over the table. */
static inline size_t home(uint64_t k, size_t mask)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return (size_t)k & mask;
}

void fr_hash_map_init(struct fr_hash_map *m)
{
    memset(m, 0, sizeof(*m));
}

void fr_hash_map_free(struct fr_hash_map *m)
{
    free(m->keys);
    free(m->slots);
    fr_hash_map_init(m);
}

/* The slot holding @a key, or the empty slot where it would go. */
static size_t probe(const struct fr_hash_map *m, uint64_t key)
{
    size_t mask = m->slot_cap - 1, i = home(key, mask);

    while (m->slots[i] != 0 && m->keys[m->slots[i] - 1] != key)
        i = (i + 1) & mask;
    return i;
}

uint32_t fr_hash_map_find(const struct fr_hash_map *m, uint64_t key)
{
    size_t i;

    if (m->count == 0)
        return FR_HASH_NONE;
    i = probe(m, key);
    return m->slots[i] != 0 ? m->slots[i] - 1 : FR_HASH_NONE;
}

static int grow_slots(struct fr_hash_map *m)
{
    size_t cap = m->slot_cap ? m->slot_cap * 2 : 8, mask = cap - 1;
    uint32_t *slots;

    if (cap > SIZE_MAX / sizeof(*slots))
        return -1;
    slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return -1;
    for (uint32_t k = 0; k < m->count; k++) {
        size_t i = home(m->keys[k], mask);
        while (slots[i] != 0)
            i = (i + 1) & mask;
        slots[i] = k + 1;
    }
    free(m->slots);
    m->slots = slots;
    m->slot_cap = cap;
    return 0;
}

uint32_t fr_hash_map_add(struct fr_hash_map *m, uint64_t key, int *added)
{
    size_t i;

    if (added != NULL)
        *added = 0;
    if (m->count != 0) {
        i = probe(m, key);
        if (m->slots[i] != 0)
            return m->slots[i] - 1;
    }
    if (m->count == FR_HASH_NONE - 1)
        return FR_HASH_NONE;
    if (m->count == m->key_cap) {
        uint32_t cap = m->key_cap ? m->key_cap * 2 : 8;
        uint64_t *keys;
        if (cap < m->key_cap || cap > FR_HASH_NONE - 1)
            cap = FR_HASH_NONE - 1;
        keys = realloc(m->keys, (size_t)cap * sizeof(*keys));
        if (keys == NULL)
            return FR_HASH_NONE;
        m->keys = keys;
        m->key_cap = cap;
    }
    /* At most 3/4 full, so that probe runs stay short. */
    if (((size_t)m->count + 1) * 4 > m->slot_cap * 3 && grow_slots(m) != 0)
        return FR_HASH_NONE;
    i = probe(m, key);
    m->keys[m->count] = key;
    m->slots[i] = ++m->count;
    if (added != NULL)
        *added = 1;
    return m->count - 1;
}

uint32_t fr_hash_map_remove(struct fr_hash_map *m, uint64_t key)
{
    size_t mask = m->slot_cap - 1, i, j;
    uint32_t index, last;

    if (m->count == 0)
        return FR_HASH_NONE;
    i = probe(m, key);
    if (m->slots[i] == 0)
        return FR_HASH_NONE;
    index = m->slots[i] - 1;
    /* Backward shift: a later entry of the run moves into the hole unless
     * its home lies in (hole, entry]. */
    for (j = (i + 1) & mask; m->slots[j] != 0; j = (j + 1) & mask) {
        size_t h = home(m->keys[m->slots[j] - 1], mask);
        int stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (stays)
            continue;
        m->slots[i] = m->slots[j];
        i = j;
    }
    m->slots[i] = 0;
    last = --m->count;
    if (index != last) {
        /* The last key takes the freed index. */
        m->keys[index] = m->keys[last];
        m->slots[probe(m, m->keys[index])] = index + 1;
    }
    return index;
}

size_t fr_hash_map_bytes(const struct fr_hash_map *m)
{
    return (size_t)m->key_cap * sizeof(*m->keys) +
           m->slot_cap * sizeof(*m->slots);
}
