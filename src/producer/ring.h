/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ring layout as the producer uses it: the region (include/flightrec/
 * region.h) seen through this process's mapping, and the pinned layout.
 * The rest of the runtime's internal interface is in runtime.h.
 */
#ifndef FLIGHTREC_RING_H
#define FLIGHTREC_RING_H

#include <flightrec.h>
#include <flightrec/region.h>

#include "../region/order.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Layout pins: a reader of another build finds every field where the
 * documentation (docs/format.md, "The ring region") says. */
_Static_assert(sizeof(struct flightrec_region_header) == 192,
               "region header is 192 bytes");
_Static_assert(offsetof(struct flightrec_region_header, hot_offset) == 128,
               "region header: hot_offset at 128");
/* The shared 8-byte words: their member is the less significant half
 * where they are 32-bit (region.h, FLIGHTREC_REGION_WORD). */
#define WORD_AT(type, member) \
    (offsetof(struct type, member) - FLIGHTREC_REGION_WORD_SHIFT)
_Static_assert(WORD_AT(flightrec_region_header, used) == 32,
               "region header: used at 32");
_Static_assert(WORD_AT(flightrec_region_header, ring_list) == 64,
               "region header: ring_list at 64");
_Static_assert(WORD_AT(flightrec_region_header, counter_frequency) == 96,
               "region header: counter_frequency at 96");
_Static_assert(WORD_AT(flightrec_region_header, lost_without_ring) == 104,
               "region header: lost_without_ring at 104");
_Static_assert(WORD_AT(flightrec_region_control, consumer_claim) == 32,
               "control block: consumer claim at 32");
_Static_assert(WORD_AT(flightrec_region_ring, next_offset) ==
                   offsetof(struct flightrec_region_ring, bytes) + 8,
               "ring: next_offset after bytes");
_Static_assert(sizeof(flightrec_region_word) == 4 * (1 + !FLIGHTREC_REGION_NARROW),
               "shared words are 32 bits exactly where they are narrow");
_Static_assert(sizeof(struct flightrec_region_control) == 704,
               "control block is 704 bytes");
_Static_assert(offsetof(struct flightrec_region_control, remembered) == 192,
               "control block: remembered specs at 192");
_Static_assert(offsetof(struct flightrec_region_control, remembered_length) ==
                   56,
               "control block: remembered specs' length at 56");
_Static_assert(offsetof(struct flightrec_region_control, filter) == 64,
               "control block: filter at 64");
_Static_assert(offsetof(struct flightrec_region_control, consumer_pid) == 24,
               "control block: consumer at 24");
_Static_assert(WORD_AT(flightrec_region_control, lock) == 40 &&
                   offsetof(struct flightrec_region_control,
                            rewind_request) == 48,
               "control block: lock at 40, rewind at 48");
/* The hot path reads the hot page through its own control page. */
_Static_assert(offsetof(struct flightrec__control_page, filter) ==
                   offsetof(struct flightrec_region_hot, filter) &&
                   sizeof(((struct flightrec__control_page *)0)->filter) ==
                       sizeof(((struct flightrec_region_hot *)0)->filter),
               "hot page: the filter in force at 0");
_Static_assert(offsetof(struct flightrec_region_names, kind) ==
                   FLIGHTREC_EVENT_COUNT * 4 * (1 + FLIGHTREC_REGION_EVENT_NAME_WORDS),
               "region names: kinds after the names");
_Static_assert(sizeof(struct flightrec_region_names) == 73728,
               "region names are 73,728 bytes");
_Static_assert(offsetof(struct flightrec_region_header, process_offset) == 112,
               "region header: process_offset at 112");
_Static_assert(sizeof(struct flightrec_region_process) == 264,
               "process block is 264 bytes");
_Static_assert(offsetof(struct flightrec_region_ring, head) == 0,
               "ring: head first (the hot path's ring head)");
_Static_assert(offsetof(struct flightrec_region_ring, recorder) == 64,
               "ring: recorder counts at 64");
_Static_assert(offsetof(struct flightrec_region_ring, tail) == 128,
               "ring: reader line at 128");
_Static_assert(offsetof(struct flightrec_region_ring, generation) == 192,
               "ring: identity at 192");
_Static_assert(sizeof(struct flightrec_region_ring) <= 448,
               "ring descriptor fits in 7 cache lines");
/* The hot path's view of a ring and of an item are the region's. */
_Static_assert(sizeof(struct flightrec_item) ==
                   sizeof(struct flightrec_region_item),
               "item layout");
_Static_assert(offsetof(struct flightrec_item, data) ==
                   offsetof(struct flightrec_region_item, data),
               "item layout");
_Static_assert(sizeof(struct flightrec__ring_head) == sizeof(uintptr_t),
               "the hot path's ring head is the region ring's head word");

_Static_assert(FLIGHTREC_REGION_MODE_DISCARD == FLIGHTREC_MODE_DISCARD &&
                   FLIGHTREC_REGION_MODE_FLIGHT == FLIGHTREC_MODE_FLIGHT,
               "region modes are enum flightrec_mode");

typedef struct flightrec_region_ring ring_t;

/* The owner's recorder count: its current slot, and a new one put in force
 * (owner or, while it cannot record, the registry). */
static inline struct flightrec_region_recorder *recorder_now(ring_t *ring)
{
    return &ring->recorder[atomic_load_explicit(&ring->sync_seq,
                                                memory_order_relaxed) &
                           1u];
}

static inline void recorder_set(ring_t *ring, uintptr_t total,
                                uintptr_t last_at, uint32_t last_count)
{
    uint32_t seq = atomic_load_explicit(&ring->sync_seq, memory_order_relaxed);
    struct flightrec_region_recorder *next = &ring->recorder[(seq + 1) & 1u];
    atomic_store_explicit(&next->total, total, memory_order_relaxed);
    atomic_store_explicit(&next->last_at, last_at, memory_order_relaxed);
    atomic_store_explicit(&next->last_count, last_count,
                          memory_order_relaxed);
    FR_STORE_RELEASE(&ring->sync_seq, seq + 1);
}

/* Ring positions are free-running and wrap (after 2^32 items on 32-bit
 * hosts): compare them by their distance, never with < on the values. */
static inline int position_before(uintptr_t a, uintptr_t b)
{
    return (intptr_t)(a - b) < 0;
}

static inline uintptr_t position_later(uintptr_t a, uintptr_t b)
{
    return position_before(a, b) ? b : a;
}

/* This process's region (region.c): its first byte, NULL before start-up. */
extern unsigned char *flightrec__region_base;

static inline struct flightrec_region_header *region_header(void)
{
    return (struct flightrec_region_header *)(void *)flightrec__region_base;
}

/* Offsets are 64-bit words in the region, but this process's region lies
 * in its address space: a word-sized offset does (32-bit CPUs then need no
 * 64-bit arithmetic for them). */
static inline ring_t *ring_at(uint64_t offset)
{
    uintptr_t at = (uintptr_t)offset;
    return at == 0 ? NULL : (ring_t *)(void *)(flightrec__region_base + at);
}

static inline uintptr_t ring_offset(const ring_t *ring)
{
    return (uintptr_t)((const unsigned char *)ring - flightrec__region_base);
}

static inline ring_t *ring_partner(const ring_t *ring)
{
    return ring_at(ring->partner_offset);
}

static inline struct flightrec_region_item *ring_items(const ring_t *ring)
{
    return (struct flightrec_region_item *)(void *)(flightrec__region_base +
                                                    ring->items_offset);
}

/* The newest ring; walk on with ring_next().  Lock-free: a ring is linked
 * only once it is complete. */
static inline ring_t *ring_first(void)
{
    if (flightrec__region_base == NULL)
        return NULL;
    return ring_at(FR_LOAD_ACQUIRE(&region_header()->ring_list));
}

static inline ring_t *ring_next(const ring_t *ring)
{
    return ring_at(FR_LOAD_ACQUIRE(&ring->next_offset));
}

static inline struct flightrec_region_control *region_control(void)
{
    return (struct flightrec_region_control *)(void *)(
        flightrec__region_base + region_header()->control_offset);
}

static inline struct flightrec_region_hot *region_hot(void)
{
    return (struct flightrec_region_hot *)(void *)(
        flightrec__region_base + region_header()->hot_offset);
}

static inline struct flightrec_region_names *region_names(void)
{
    return (struct flightrec_region_names *)(void *)(
        flightrec__region_base + region_header()->names_offset);
}

#endif
