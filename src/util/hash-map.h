/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hash map the decoder, the converters and the flightrec command share
 * (internal, not installed).  It maps 64-bit keys (any value, 0 included)
 * to dense indexes 0 .. count - 1, given in order of insertion, and the
 * caller keeps what a key stands for in its own arrays at that index: a
 * ring's state, a thread's counters, a pointer.  That keeps the table
 * small -- 8 bytes a key and a 4-byte slot per table entry, about 16 to
 * 24 bytes a key in all -- which matters at millions of rings.
 *
 * Open addressing with linear probing at most 3/4 full; removal moves the
 * last key into the hole (the caller moves its value likewise) and shifts
 * the probe run back, so there are no tombstones.
 */
#ifndef FLIGHTREC_UTIL_HASH_MAP_H
#define FLIGHTREC_UTIL_HASH_MAP_H

#include <stddef.h>
#include <stdint.h>

/* No index: the key is absent, or there was no memory. */
#define FR_HASH_NONE UINT32_MAX

struct fr_hash_map {
    uint64_t *keys;    /* keys[i]: the key of index i */
    uint32_t *slots;   /* index + 1, 0 for an empty slot */
    uint32_t count;    /* keys held */
    uint32_t key_cap;  /* room in keys */
    size_t slot_cap;   /* power of two, or 0 before the first key */
};

void fr_hash_map_init(struct fr_hash_map *m);
void fr_hash_map_free(struct fr_hash_map *m);

/* The index of @a key, or FR_HASH_NONE. */
uint32_t fr_hash_map_find(const struct fr_hash_map *m, uint64_t key);

/* The index of @a key, adding it (as index count) if absent, then
 * *added = 1 when @a added is not NULL; FR_HASH_NONE when out of memory
 * (the map is unchanged). */
uint32_t fr_hash_map_add(struct fr_hash_map *m, uint64_t key, int *added);

/* Removes @a key and returns the index it had, or FR_HASH_NONE.  The key
 * that had the last index (count, after the call) now has the returned
 * one: move its value there too. */
uint32_t fr_hash_map_remove(struct fr_hash_map *m, uint64_t key);

/* Bytes the map holds. */
size_t fr_hash_map_bytes(const struct fr_hash_map *m);

static inline uint32_t fr_hash_map_count(const struct fr_hash_map *m)
{
    return m->count;
}

static inline uint64_t fr_hash_map_key(const struct fr_hash_map *m,
                                       uint32_t index)
{
    return m->keys[index];
}

#endif
