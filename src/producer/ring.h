/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The private side of a ring, the ring registry and the port seams.
 *
 * Who writes what:
 * - the owning thread: head (store-release), dropped, the items;
 * - the reader (dump/drain, under the reader lock for drain): tail and the
 *   reader_* fields; dump writes nothing;
 * - attach/retire (the owning thread, slow path): identity, start,
 *   generation (odd while identity changes), state.
 */
#ifndef FLIGHTREC_RING_H
#define FLIGHTREC_RING_H

#include <flightrec.h>

#include <stdatomic.h>
#include <stdint.h>

#define FLIGHTREC_CACHE_LINE 64
#define FLIGHTREC_NAME_WORDS 4   /* 16 name bytes, 4 per word, LSB first */

enum ring_state {
    RING_FREE = 0,      /* reusable: no owner, nothing unread */
    RING_LIVE = 1,      /* owned by a live thread */
    RING_RETIRED = 2    /* its thread exited; unread items may remain */
};

struct flightrec_ring {
    /* Owner's cache line: the hot path reads and writes only head. */
    struct flightrec__ring_head hot;
    _Atomic uintptr_t dropped;          /* discard mode, owner only */
    _Atomic uintptr_t nested_dropped;   /* nesting too deep, atomic add */
    char pad0[FLIGHTREC_CACHE_LINE - 3 * sizeof(uintptr_t)];

    /* Reader's cache line. */
    _Atomic uintptr_t tail;             /* next position the drain reads */
    uintptr_t reader_dropped;           /* dropped count already reported */
    uint32_t reader_generation;         /* owner generation last reported */
    char pad1[FLIGHTREC_CACHE_LINE - 2 * sizeof(uintptr_t) - 4];

    /* Identity and lifetime, changed on attach and retire. */
    _Atomic uint32_t generation;        /* odd while changing */
    _Atomic int state;
    _Atomic int32_t tid;
    _Atomic uint32_t name[FLIGHTREC_NAME_WORDS];
    _Atomic uintptr_t start;            /* first position of this owner */
    _Atomic uint64_t retire_order;      /* for reusing the oldest first */
    _Atomic uintptr_t dropped_at_start; /* dropped count when owner came */
    uint32_t id;
    uint32_t context;                   /* 0 thread, 1 signal */
    uintptr_t capacity;
    struct flightrec_item *items;
    struct flightrec_ring *partner;     /* thread ring <-> signal ring */
    struct flightrec_ring *_Atomic next; /* registry list */
};

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

/* Registry (registry.c).  Walk it with
 *   for (ring = flightrec__registry_first(); ring; ring = ring_next(ring)) */
struct flightrec_ring *flightrec__registry_first(void);
static inline struct flightrec_ring *ring_next(const struct flightrec_ring *r)
{
    return atomic_load_explicit(&r->next, memory_order_acquire);
}
uint32_t flightrec__registry_count(void);
/* Owner side: attach the calling thread (both rings); 0 or -errno. */
int flightrec__attach(void);
/* Reader side: a consistent copy of a ring's identity. */
struct ring_identity {
    uint32_t generation;
    int32_t tid;
    uint32_t name[FLIGHTREC_NAME_WORDS];
    uintptr_t start;
};
int flightrec__ring_identity(const struct flightrec_ring *ring,
                             struct ring_identity *out);
/* Refreshes the names of live threads from the system. */
void flightrec__refresh_names(void);
void flightrec__registry_reset_after_fork(void);
void flightrec__registry_cleanup(void);
/* Frees the rings of exited threads and forgets the drain stream, under the
 * drain lock (stream.c). */
void flightrec__rings_cleanup(void);

#include "runtime.h" /* settings, start-up, event names */

/* Time (port-*.c). */
struct flightrec_timebase {
    uint64_t base;              /* counter value at uptime 0 */
    uint64_t realtime_ns;       /* CLOCK_REALTIME at uptime 0 */
};
const struct flightrec_timebase *flightrec__timebase(void);
void flightrec__timebase_init(void);

/* Port seams (port-linux.c): thread identity and ring memory. */
int32_t flightrec__port_thread_id(void);
/* Reads the current name of thread @a tid into 16 bytes; 0 or -1. */
int flightrec__port_thread_name(int32_t tid, char name[16]);
void *flightrec__port_alloc(size_t size);
void flightrec__port_free(void *memory, size_t size);
int32_t flightrec__port_process_id(void);

/* The calling thread's rings (produce.c). */
void flightrec__self_bind(struct flightrec_ring *main_ring,
                          struct flightrec_ring *signal_ring);
void flightrec__self_unbind(void);
struct flightrec_ring *flightrec__self_ring(void);
/* After fork() in the child: the next event writes a sync pair. */
void flightrec__self_resync(void);

/* Start-up and fork hooks (registry.c, stream.c). */
void flightrec__registry_init(void);
void flightrec__drain_reset_after_fork(void);

/* Packs a name into LSB-first words. */
void flightrec__pack_name(const char *name, uint32_t *words, size_t nwords);

#endif
