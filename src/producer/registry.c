/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ring registry: every ring ever created, in a list that only grows
 * (push with compare-and-swap), so that attaching works from a signal
 * handler and a dump can walk it without a lock.
 *
 * Each thread gets a pair of rings on its first event: one for its own
 * records and one for records made by signal handlers that interrupt them.
 *
 * Reuse rule for rings of exited threads: when a thread exits, its pair is
 * RETIRED but keeps its items for readers.  A new thread takes, in order:
 * a FREE pair; a retired pair whose items were all drained; and, once more
 * than `retained_rings` retired pairs hold unread items, the pair retired
 * longest ago (its unread items then count as overflow for the reader).
 * Otherwise a new pair is allocated.  So memory is bounded by
 * (live threads + retained_rings + 1) pairs however many threads come and go.
 */
#include "ring.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

static struct flightrec_ring *_Atomic registry_head;
static _Atomic uint32_t ring_count;
static _Atomic uint64_t retire_counter;


struct flightrec_ring *flightrec__registry_first(void)
{
    return atomic_load_explicit(&registry_head, memory_order_acquire);
}

uint32_t flightrec__registry_count(void)
{
    return atomic_load_explicit(&ring_count, memory_order_relaxed);
}

void flightrec__pack_name(const char *name, uint32_t *words, size_t nwords)
{
    size_t len = strnlen(name, nwords * 4);
    for (size_t w = 0; w < nwords; w++) {
        uint32_t word = 0;
        for (size_t i = 0; i < 4; i++) {
            size_t at = w * 4 + i;
            if (at < len)
                word |= (uint32_t)(unsigned char)name[at] << (8 * i);
        }
        words[w] = word;
    }
}

static size_t ring_header_size(void)
{
    size_t size = sizeof(struct flightrec_ring);
    return (size + FLIGHTREC_CACHE_LINE - 1) & ~(size_t)(FLIGHTREC_CACHE_LINE - 1);
}

static size_t ring_bytes(uintptr_t capacity)
{
    return ring_header_size() + capacity * sizeof(struct flightrec_item);
}

static struct flightrec_ring *ring_create(uintptr_t capacity, uint32_t context)
{
    struct flightrec_ring *ring = flightrec__port_alloc(ring_bytes(capacity));
    if (ring == NULL)
        return NULL;
    /* Port memory is zeroed: positions, counts and identity start at 0. */
    ring->items = (struct flightrec_item *)((char *)ring + ring_header_size());
    ring->capacity = capacity;
    ring->context = context;
    ring->id = atomic_fetch_add_explicit(&ring_count, 1, memory_order_relaxed);
    atomic_store_explicit(&ring->tid, -1, memory_order_relaxed);
    return ring;
}

static void registry_push(struct flightrec_ring *ring)
{
    struct flightrec_ring *first =
        atomic_load_explicit(&registry_head, memory_order_relaxed);
    do {
        atomic_store_explicit(&ring->next, first, memory_order_relaxed);
    } while (!atomic_compare_exchange_weak_explicit(
        &registry_head, &first, ring, memory_order_release,
        memory_order_relaxed));
}

static int fully_read(const struct flightrec_ring *ring)
{
    uintptr_t head =
        atomic_load_explicit(&ring->hot.head, memory_order_relaxed);
    uintptr_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    uintptr_t start = atomic_load_explicit(&ring->start, memory_order_relaxed);
    return position_later(tail, start) == head;
}

/* Takes a pair: the thread ring's state decides (compare-and-swap, so two
 * threads never take the same pair), and its partner follows. */
static int take(struct flightrec_ring *ring, int from_state)
{
    int expected = from_state;
    if (!atomic_compare_exchange_strong_explicit(
            &ring->state, &expected, RING_LIVE, memory_order_acquire,
            memory_order_relaxed))
        return 0;
    atomic_store_explicit(&ring->partner->state, RING_LIVE,
                          memory_order_release);
    return 1;
}

static int pair_fits(const struct flightrec_ring *ring,
                     const struct flightrec_settings *settings)
{
    return ring->context == 0 && ring->capacity == settings->items &&
           ring->partner->capacity == settings->signal_items;
}

/* A pair for a new thread: reused if the rule allows, else allocated. */
static struct flightrec_ring *acquire_pair(
    const struct flightrec_settings *settings)
{
    struct flightrec_ring *oldest = NULL;
    uint64_t oldest_order = UINT64_MAX;
    uint32_t retired_unread = 0;

    for (struct flightrec_ring *ring = flightrec__registry_first(); ring;
         ring = ring_next(ring)) {
        if (!pair_fits(ring, settings))
            continue;
        int state = atomic_load_explicit(&ring->state, memory_order_acquire);
        if (state == RING_FREE && take(ring, RING_FREE))
            return ring;
        if (state != RING_RETIRED)
            continue;
        if (fully_read(ring) && fully_read(ring->partner) &&
            take(ring, RING_RETIRED))
            return ring;
        retired_unread++;
        uint64_t order =
            atomic_load_explicit(&ring->retire_order, memory_order_relaxed);
        if (order < oldest_order) {
            oldest_order = order;
            oldest = ring;
        }
    }
    if (oldest != NULL && retired_unread > settings->retained &&
        take(oldest, RING_RETIRED))
        return oldest;

    struct flightrec_ring *main_ring = ring_create(settings->items, 0);
    struct flightrec_ring *signal_ring =
        main_ring ? ring_create(settings->signal_items, 1) : NULL;
    if (signal_ring == NULL) {
        if (main_ring)
            flightrec__port_free(main_ring, ring_bytes(main_ring->capacity));
        return NULL;
    }
    main_ring->partner = signal_ring;
    signal_ring->partner = main_ring;
    atomic_store_explicit(&main_ring->state, RING_LIVE, memory_order_relaxed);
    atomic_store_explicit(&signal_ring->state, RING_LIVE,
                          memory_order_relaxed);
    registry_push(signal_ring);
    registry_push(main_ring);
    return main_ring;
}

/* Changes tid and start under the ring's sequence counter (the only writer
 * at that moment is the ring's new or last owner). */
static void set_name(struct flightrec_ring *ring, const char *name);

static void set_identity(struct flightrec_ring *ring, int32_t tid,
                         const char *name)
{
    uint32_t generation =
        atomic_load_explicit(&ring->generation, memory_order_relaxed);
    atomic_store_explicit(&ring->generation, generation + 1,
                          memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&ring->tid, tid, memory_order_relaxed);
    set_name(ring, name);
    atomic_store_explicit(
        &ring->start,
        atomic_load_explicit(&ring->hot.head, memory_order_relaxed),
        memory_order_relaxed);
    atomic_store_explicit(
        &ring->dropped_at_start,
        atomic_load_explicit(&ring->dropped, memory_order_relaxed) +
            atomic_load_explicit(&ring->nested_dropped, memory_order_relaxed),
        memory_order_relaxed);
    atomic_store_explicit(&ring->generation, generation + 2,
                          memory_order_release);
}

static void set_name(struct flightrec_ring *ring, const char *name)
{
    uint32_t words[FLIGHTREC_NAME_WORDS];
    flightrec__pack_name(name, words, FLIGHTREC_NAME_WORDS);
    for (size_t i = 0; i < FLIGHTREC_NAME_WORDS; i++)
        atomic_store_explicit(&ring->name[i], words[i], memory_order_relaxed);
}

int flightrec__ring_identity(const struct flightrec_ring *ring,
                             struct ring_identity *out)
{
    for (int attempt = 0; attempt < 1000; attempt++) {
        uint32_t before =
            atomic_load_explicit(&ring->generation, memory_order_acquire);
        if (before & 1u)
            continue;
        out->tid = atomic_load_explicit(&ring->tid, memory_order_relaxed);
        out->start = atomic_load_explicit(&ring->start, memory_order_relaxed);
        for (size_t i = 0; i < FLIGHTREC_NAME_WORDS; i++)
            out->name[i] = atomic_load_explicit(&ring->name[i],
                                                memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&ring->generation, memory_order_relaxed) ==
            before) {
            out->generation = before;
            return 0;
        }
    }
    return -1;
}

static pthread_key_t exit_key;

static void on_thread_exit(void *arg)
{
    (void)arg;
    struct flightrec_ring *ring = flightrec__self_ring();
    if (ring == NULL)
        return;
    /* No handler may record while the rings are handed back. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    char name[16];
    if (flightrec__port_thread_name(
            atomic_load_explicit(&ring->tid, memory_order_relaxed), name) == 0) {
        set_name(ring, name);
        set_name(ring->partner, name);
    }
    flightrec__self_unbind();
    uint64_t order = atomic_fetch_add_explicit(&retire_counter, 1,
                                               memory_order_relaxed);
    atomic_store_explicit(&ring->retire_order, order, memory_order_relaxed);
    atomic_store_explicit(&ring->partner->state, RING_RETIRED,
                          memory_order_release);
    atomic_store_explicit(&ring->state, RING_RETIRED, memory_order_release);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void flightrec__registry_init(void)
{
    (void)pthread_key_create(&exit_key, on_thread_exit);
}

int flightrec__attach(void)
{
    if (flightrec__try_init() != 0)
        return -1; /* start-up under way, maybe in the code we interrupted */
    struct flightrec_ring *ring = acquire_pair(flightrec__settings());
    if (ring == NULL)
        return -1;
    int32_t tid = flightrec__port_thread_id();
    char name[16];
    if (flightrec__port_thread_name(tid, name) != 0)
        name[0] = '\0';
    set_identity(ring, tid, name);
    set_identity(ring->partner, tid, name);
    flightrec__self_bind(ring, ring->partner);
    /* Any non-NULL value: the destructor runs at thread exit. */
    (void)pthread_setspecific(exit_key, ring);
    return 0;
}

void flightrec__refresh_names(void)
{
    for (struct flightrec_ring *ring = flightrec__registry_first(); ring;
         ring = ring_next(ring)) {
        if (atomic_load_explicit(&ring->state, memory_order_acquire) !=
            RING_LIVE)
            continue;
        char name[16];
        int32_t tid = atomic_load_explicit(&ring->tid, memory_order_relaxed);
        if (tid > 0 && flightrec__port_thread_name(tid, name) == 0)
            set_name(ring, name);
    }
}

/* Empties a ring: nothing before its head is delivered again. */
static void ring_empty(struct flightrec_ring *ring)
{
    uintptr_t head =
        atomic_load_explicit(&ring->hot.head, memory_order_relaxed);
    atomic_store_explicit(&ring->start, head, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, head, memory_order_release);
    uintptr_t dropped =
        atomic_load_explicit(&ring->dropped, memory_order_relaxed) +
        atomic_load_explicit(&ring->nested_dropped, memory_order_relaxed);
    ring->reader_dropped = dropped;
    atomic_store_explicit(&ring->dropped_at_start, dropped,
                          memory_order_relaxed);
}

void flightrec__registry_reset_after_fork(void)
{
    struct flightrec_ring *mine = flightrec__self_ring();
    int32_t tid = flightrec__port_thread_id();
    for (struct flightrec_ring *ring = flightrec__registry_first(); ring;
         ring = ring_next(ring)) {
        ring_empty(ring);
        if (mine != NULL && (ring == mine || ring == mine->partner)) {
            atomic_store_explicit(&ring->tid, tid, memory_order_relaxed);
        } else {
            atomic_store_explicit(&ring->tid, -1, memory_order_relaxed);
            atomic_store_explicit(&ring->state, RING_FREE,
                                  memory_order_relaxed);
        }
    }
    if (mine != NULL)
        flightrec__self_resync();
}

void flightrec__registry_cleanup(void)
{
    struct flightrec_ring *keep = NULL;
    struct flightrec_ring *ring = flightrec__registry_first();
    while (ring != NULL) {
        struct flightrec_ring *next =
            atomic_load_explicit(&ring->next, memory_order_relaxed);
        /* A pair lives or goes as one: its thread ring's state decides. */
        const struct flightrec_ring *owner =
            ring->context == 0 ? ring : ring->partner;
        int state = atomic_load_explicit(&owner->state, memory_order_relaxed);
        if (state == RING_LIVE) {
            ring_empty(ring);
            atomic_store_explicit(&ring->next, keep, memory_order_relaxed);
            keep = ring;
        } else {
            flightrec__port_free(ring, ring_bytes(ring->capacity));
        }
        ring = next;
    }
    atomic_store_explicit(&registry_head, keep, memory_order_release);
}
