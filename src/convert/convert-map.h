/* SPDX-License-Identifier: BSD-2-Clause */
/* The writers' maps, both over the shared hash map (src/util/hash-map.h):
 * ring id -> per-ring state, and (for heap accounting) pointer -> size
 * with a fixed capacity. */
#ifndef FLIGHTREC_CONVERT_MAP_H
#define FLIGHTREC_CONVERT_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/hash-map.h"

/* uint64 key -> pointer; grows; keys are arbitrary (0 allowed). */
struct fr_map {
    struct fr_hash_map index;
    void **vals;     /* vals[i]: the value of the key of index i */
    size_t val_cap;
};

void fr_map_init(struct fr_map *m);
void fr_map_free(struct fr_map *m);
/* Keys held. */
size_t fr_map_count(const struct fr_map *m);
/* The value stored for @a key, or NULL. */
void *fr_map_get(const struct fr_map *m, uint64_t key);
/* Stores @a val (non-NULL) for @a key; returns 0 or -1 (no memory). */
int fr_map_put(struct fr_map *m, uint64_t key, void *val);
/* Removes @a key; returns its value, or NULL if it had none. */
void *fr_map_remove(struct fr_map *m, uint64_t key);
/* Calls @a fn for every value, in order of insertion (removals move the
 * last key into the removed one's place). */
void fr_map_each(const struct fr_map *m, void (*fn)(void *val, void *arg),
                 void *arg);

/* Bounded pointer -> size table.  When full, new allocations are not
 * tracked and counted in @c dropped. */
struct fr_heap {
    struct fr_hash_map index;
    uint64_t *sizes;     /* sizes[i]: the size of the pointer of index i */
    size_t size_cap;     /* room in sizes */
    size_t cap;          /* pointers tracked at most */
    uint64_t in_use;     /* bytes allocated and not freed */
    uint64_t dropped;    /* allocations not tracked (table full) */
    uint64_t unknown_frees; /* frees of pointers not tracked */
};

int fr_heap_init(struct fr_heap *h, size_t cap);
void fr_heap_free(struct fr_heap *h);
void fr_heap_alloc(struct fr_heap *h, uint64_t ptr, uint64_t size);
/* Returns 1 if @a ptr was tracked (in_use changed). */
int fr_heap_release(struct fr_heap *h, uint64_t ptr);

#endif
