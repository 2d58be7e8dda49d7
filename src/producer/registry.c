/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ring registry: which pair of rings each thread records into.
 *
 * Each thread gets a pair on its first event: a ring for its own records
 * and one for records of signal handlers that interrupt them.  Pairs live
 * in the region and never move; every ring is in the region's ring list
 * (newest first, walked by readers without a lock).  Who owns which pair
 * is decided under one lock, in constant time:
 *
 * - a new thread takes a FREE pair (free list), else, once more than
 *   `retained` pairs of exited threads still hold unread items, the one
 *   retired longest ago (retired queue, oldest first: its unread items are
 *   then reported as lost under its own owner's identity), else a new pair
 *   placed after the last;
 * - an exiting thread's pair is RETIRED, or FREE at once if a reader has
 *   everything it held; a drain that reads a retired pair completely frees
 *   it (flightrec__registry_pair_read()).
 *
 * Since a pair is created only when no pair is free and at most `retained`
 * are retired, there are never more than (live threads + retained) pairs
 * whatever the interleaving of threads that start and exit.
 *
 * The lock is a spin lock, taken from signal handlers too (a handler may be
 * a thread's first event): a thread never waits for itself, since a handler
 * that interrupts its own thread inside the lock gives up instead.
 */
#include "platform.h"
#include "runtime.h"

#include "../region/order.h"

#include <errno.h>
#include <string.h>

/* A firmware (FLIGHTREC_PORT_FIRMWARE) has one recording thread, the CPU,
 * which never exits nor forks: it takes one pair at its first event and
 * keeps it, so the free list, the retired queue, the previous owners'
 * accounting, the region's growth and the fork and cleanup paths are
 * hosted only.  Its lock is the held mark alone: one CPU whose tasks
 * switch cooperatively (never inside the registry), and an interrupt that
 * finds the mark set gives up as a handler does. */
#if defined(FLIGHTREC_PORT_FIRMWARE)
#define REUSES_PAIRS 0
#else
#define REUSES_PAIRS 1
#endif

static FLIGHTREC__THREAD_LOCAL volatile int registry_held;   /* by this thread */
#if REUSES_PAIRS
static _Atomic int registry_lock;
static uint64_t free_list;          /* thread rings, via list_next */
static uint64_t retired_oldest, retired_newest;
static uint32_t retired_count;
static uint64_t retire_counter;
static _Atomic int out_of_memory_said;
#endif
/* Pairs looked at by attaches, in all: tests check that an attach looks at
 * a constant number whatever the number of rings. */
uint64_t flightrec__attach_steps;

uint32_t flightrec__registry_count(void)
{
    if (flightrec__region_base == NULL)
        return 0;
    return atomic_load_explicit(&region_header()->ring_count,
                                memory_order_relaxed);
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

/* Returns 0 with the lock held, or -1 if this thread holds it already (a
 * handler interrupted it there). */
static int lock(void)
{
    if (registry_held)
        return -1;
    /* Marked before it is taken and until after it is released: a handler
     * of this thread never spins on a lock its own thread holds. */
    registry_held = 1;
    atomic_signal_fence(memory_order_seq_cst);
#if REUSES_PAIRS
    int expected = 0;
    while (!atomic_compare_exchange_weak_explicit(
        &registry_lock, &expected, 1, memory_order_acquire,
        memory_order_relaxed)) {
        expected = 0;
        flightrec__port_yield();
    }
#endif
    return 0;
}

#if REUSES_PAIRS
int flightrec__registry_busy(void)
{
    return atomic_load_explicit(&registry_lock, memory_order_acquire);
}
#endif

static void unlock(void)
{
#if REUSES_PAIRS
    atomic_store_explicit(&registry_lock, 0, memory_order_release);
#endif
    atomic_signal_fence(memory_order_seq_cst);
    registry_held = 0;
}

/*=====   Pairs in the region   =====*/

static size_t align_up(size_t n)
{
    return (n + FLIGHTREC_REGION_ALIGN - 1) &
           ~(size_t)(FLIGHTREC_REGION_ALIGN - 1);
}

static size_t ring_bytes(uintptr_t capacity)
{
    return align_up(sizeof(ring_t)) +
           align_up(capacity * sizeof(struct flightrec_region_item));
}

/* Pairs take whole pages, so that a session file can back each as it
 * comes. */
static size_t pair_bytes(size_t bytes)
{
    size_t page = flightrec__port_page_size();
    return (bytes + page - 1) / page * page;
}

#if REUSES_PAIRS
/* FLIGHTREC_TEST_FIRST_POSITION=N (decimal), for tests only: new rings
 * start at position N instead of 0, so that a test reaches the wrap of
 * 32-bit positions (after 2^32 items, 72 minutes at a million events a
 * second) in a few events. */
static uintptr_t first_position(void)
{
    const char *text = flightrec__port_getenv("FLIGHTREC_TEST_FIRST_POSITION");
    uintptr_t n = 0;
    for (; text != NULL && *text >= '0' && *text <= '9'; text++)
        n = n * 10 + (uintptr_t)(*text - '0');
    return n;
}
#endif

static void ring_init(ring_t *ring, uintptr_t capacity, uint32_t context,
                      int mode)
{
    struct flightrec_region_header *h = region_header();
#if REUSES_PAIRS
    uintptr_t first = first_position();
    atomic_store_explicit(&ring->head, first, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, first, memory_order_relaxed);
#endif
    ring->id = atomic_fetch_add_explicit(&h->ring_count, 1,
                                         memory_order_relaxed);
    ring->context = context;
    ring->capacity = capacity;
    ring->bytes = ring_bytes(capacity);
    ring->items_offset = ring_offset(ring) + align_up(sizeof(ring_t));
    atomic_store_explicit(&ring->mode, (uint32_t)mode, memory_order_relaxed);
    atomic_store_explicit(&ring->owner.tid, -1, memory_order_relaxed);
}

static void ring_link(ring_t *ring)
{
    struct flightrec_region_header *h = region_header();
    uint64_t first = atomic_load_explicit(&h->ring_list, memory_order_relaxed);
    atomic_store_explicit(&ring->next_offset, first, memory_order_relaxed);
    /* Release: a reader that finds the ring finds it initialised. */
    FR_STORE_RELEASE(&h->ring_list, ring_offset(ring));
}

/* A new pair after the last one; NULL when the region is full. */
static ring_t *pair_create(const struct flightrec_settings *s)
{
    struct flightrec_region_header *h = region_header();
    size_t main_bytes = ring_bytes(s->items);
    size_t total = pair_bytes(main_bytes + ring_bytes(s->signal_items));
    uint64_t used = atomic_load_explicit(&h->used, memory_order_relaxed);
    if (total > h->region_size || used > h->region_size - total)
        return NULL;
#if REUSES_PAIRS /* a firmware's region is all there from the start */
    if (flightrec__port_region_grow(flightrec__region_base, (size_t)used,
                                    (size_t)(used + total)) != 0)
        return NULL;
#endif
    ring_t *main_ring = ring_at(used);
    ring_t *signal_ring = ring_at(used + main_bytes);
    atomic_store_explicit(&h->used, used + total, memory_order_relaxed);
    ring_init(main_ring, s->items, 0, flightrec__current_mode());
    ring_init(signal_ring, s->signal_items, 1, flightrec__current_mode());
    main_ring->partner_offset = ring_offset(signal_ring);
    signal_ring->partner_offset = ring_offset(main_ring);
#if REUSES_PAIRS
    if (s->prefault)
        flightrec__port_region_prefault(main_ring, total);
#endif
    ring_link(signal_ring);
    ring_link(main_ring);
    return main_ring;
}

#if REUSES_PAIRS
static int pair_fits(const ring_t *ring, const struct flightrec_settings *s)
{
    return ring->capacity == s->items &&
           ring_partner(ring)->capacity == s->signal_items;
}

enum { LIST_NONE = 0, LIST_FREE = 1, LIST_RETIRED = 2 };

/* Makes a pair reusable.  A retired pair whose items a reader has all
 * keeps its state, so that a dump still shows its last events until a new
 * thread takes it. */
static void free_push(ring_t *ring, int state)
{
    atomic_store_explicit(&ring->state, (uint32_t)state, memory_order_relaxed);
    atomic_store_explicit(&ring_partner(ring)->state, (uint32_t)state,
                          memory_order_relaxed);
    ring->registry_list = LIST_FREE;
    ring->list_next = free_list;
    free_list = ring_offset(ring);
}

static ring_t *free_pop(void)
{
    ring_t *ring = ring_at(free_list);
    if (ring != NULL) {
        free_list = ring->list_next;
        ring->registry_list = LIST_NONE;
    }
    return ring;
}

static void retired_append(ring_t *ring)
{
    ring->retire_order = retire_counter++;
    ring->registry_list = LIST_RETIRED;
    ring->list_next = 0;
    ring->list_prev = retired_newest;
    if (retired_newest != 0)
        ring_at(retired_newest)->list_next = ring_offset(ring);
    else
        retired_oldest = ring_offset(ring);
    retired_newest = ring_offset(ring);
    retired_count++;
}

static void retired_remove(ring_t *ring)
{
    if (ring->list_prev != 0)
        ring_at(ring->list_prev)->list_next = ring->list_next;
    else
        retired_oldest = ring->list_next;
    if (ring->list_next != 0)
        ring_at(ring->list_next)->list_prev = ring->list_prev;
    else
        retired_newest = ring->list_prev;
    ring->list_prev = ring->list_next = 0;
    ring->registry_list = LIST_NONE;
    retired_count--;
}

/* Drops of the current owner (discard mode, deep nesting, attach). */
static uintptr_t owner_dropped(const ring_t *ring)
{
    return atomic_load_explicit(&ring->dropped, memory_order_relaxed) +
           atomic_load_explicit(&ring->nested_dropped, memory_order_relaxed) -
           atomic_load_explicit(&ring->dropped_at_start, memory_order_relaxed);
}

/* Whether a reader has everything the ring's owner recorded and lost. */
static int ring_fully_read(const ring_t *ring)
{
    uint32_t generation =
        atomic_load_explicit(&ring->owner_generation, memory_order_acquire);
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    uintptr_t start = atomic_load_explicit(&ring->start, memory_order_relaxed);
    uint32_t previous = atomic_load_explicit(&ring->previous_generation,
                                             memory_order_relaxed);
    if (head == start && owner_dropped(ring) == 0 && previous == 0)
        return 1; /* nothing to report, ever */
    if (atomic_load_explicit(&ring->reader_generation, memory_order_acquire) !=
        generation)
        return 0;
    return atomic_load_explicit(&ring->tail, memory_order_acquire) == head &&
           atomic_load_explicit(&ring->reader_dropped, memory_order_relaxed) ==
               owner_dropped(ring);
}

static int pair_fully_read(const ring_t *ring)
{
    return ring_fully_read(ring) && ring_fully_read(ring_partner(ring));
}
#endif /* REUSES_PAIRS */

/*=====   Identity   =====*/

static void store_name(struct flightrec_region_owner *owner, const char *name)
{
    uint32_t words[FLIGHTREC_REGION_NAME_WORDS];
    flightrec__pack_name(name, words, FLIGHTREC_REGION_NAME_WORDS);
    for (size_t i = 0; i < FLIGHTREC_REGION_NAME_WORDS; i++)
        atomic_store_explicit(&owner->name[i], words[i], memory_order_relaxed);
}

#if REUSES_PAIRS
static void copy_owner(struct flightrec_region_owner *to,
                       const struct flightrec_region_owner *from)
{
    atomic_store_explicit(&to->tid,
                          atomic_load_explicit(&from->tid, memory_order_relaxed),
                          memory_order_relaxed);
    for (size_t i = 0; i < FLIGHTREC_REGION_NAME_WORDS; i++)
        atomic_store_explicit(
            &to->name[i],
            atomic_load_explicit(&from->name[i], memory_order_relaxed),
            memory_order_relaxed);
}
#endif

/* Identity changes happen between two generation steps (odd meanwhile), so
 * a reader copies a consistent identity or tries again. */
static uint32_t identity_begin(ring_t *ring)
{
    uint32_t generation =
        atomic_load_explicit(&ring->generation, memory_order_relaxed);
    atomic_store_explicit(&ring->generation, generation + 1,
                          memory_order_relaxed);
    FR_FENCE_RELEASE();
    return generation;
}

static void identity_end(ring_t *ring, uint32_t generation)
{
    FR_STORE_RELEASE(&ring->generation, generation + 2);
}

/* Gives @ring to a new owner.  With @keep_previous, the owner it takes
 * over from had items or losses no reader has seen: they stay reportable
 * under that owner's identity. */
static void set_owner(ring_t *ring, int32_t tid, const char *name,
                      int keep_previous)
{
    uint32_t generation = identity_begin(ring);
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
#if REUSES_PAIRS
    if (keep_previous) {
        /* The snapshot kept from the owner before the outgoing one is
         * about to go: if a reader follows this ring and has not reported
         * it yet, its losses are counted as lost without an owner to name
         * (a ring reused twice between two drains). */
        uint32_t older = atomic_load_explicit(&ring->previous_generation,
                                              memory_order_relaxed);
        uint32_t read = atomic_load_explicit(&ring->reader_generation,
                                             memory_order_relaxed);
        if (older != 0 && read != 0 &&
            read != atomic_load_explicit(&ring->owner_generation,
                                         memory_order_relaxed)) {
            int followed = read == older;
            uintptr_t lost =
                atomic_load_explicit(&ring->previous_events,
                                     memory_order_relaxed) -
                (followed ? atomic_load_explicit(&ring->reader_events,
                                                 memory_order_relaxed)
                          : 0) +
                atomic_load_explicit(&ring->previous_dropped,
                                     memory_order_relaxed) -
                (followed ? atomic_load_explicit(&ring->reader_dropped,
                                                 memory_order_relaxed)
                          : 0);
            flightrec__count_lost_without_ring(lost);
        }
        uintptr_t start =
            atomic_load_explicit(&ring->start, memory_order_relaxed);
        /* The owner is gone: its count is final, but a group counted and
         * not published (it exited inside a record) is no event. */
        const struct flightrec_region_recorder *r = recorder_now(ring);
        uintptr_t recorder =
            atomic_load_explicit(&r->total, memory_order_relaxed);
        if (!position_before(
                atomic_load_explicit(&r->last_at, memory_order_relaxed), head))
            recorder -= atomic_load_explicit(&r->last_count,
                                             memory_order_relaxed);
        copy_owner(&ring->previous, &ring->owner);
        atomic_store_explicit(&ring->previous_end, head, memory_order_relaxed);
        atomic_store_explicit(&ring->previous_events, head - start - recorder,
                              memory_order_relaxed);
        atomic_store_explicit(&ring->previous_dropped, owner_dropped(ring),
                              memory_order_relaxed);
        atomic_store_explicit(
            &ring->previous_generation,
            atomic_load_explicit(&ring->owner_generation, memory_order_relaxed),
            memory_order_relaxed);
    } else {
        atomic_store_explicit(&ring->previous_generation, 0,
                              memory_order_relaxed);
    }
#else
    (void)keep_previous; /* a firmware's pair has one owner, ever */
#endif
    atomic_store_explicit(&ring->owner.tid, tid, memory_order_relaxed);
    store_name(&ring->owner, name);
    atomic_store_explicit(&ring->start, head, memory_order_relaxed);
    atomic_store_explicit(
        &ring->dropped_at_start,
        atomic_load_explicit(&ring->dropped, memory_order_relaxed) +
            atomic_load_explicit(&ring->nested_dropped, memory_order_relaxed),
        memory_order_relaxed);
    recorder_set(ring, 0, head, 0);
    atomic_store_explicit(&ring->mode, (uint32_t)flightrec__current_mode(),
                          memory_order_relaxed);
    atomic_store_explicit(&ring->owner_generation, generation + 2,
                          memory_order_relaxed);
    identity_end(ring, generation);
}

#if REUSES_PAIRS
static void rename_owner(ring_t *ring, const char *name)
{
    uint32_t generation = identity_begin(ring);
    store_name(&ring->owner, name);
    identity_end(ring, generation);
}

/*=====   Attach and retire   =====*/

/* Under the lock: a pair for a new thread, and whether it was taken from a
 * retired owner with unread items. */
static ring_t *acquire_pair(const struct flightrec_settings *s,
                            int *from_retired)
{
    *from_retired = 0;
    ring_t *ring;
    while ((ring = free_pop()) != NULL) {
        flightrec__attach_steps++;
        if (pair_fits(ring, s))
            return ring;
        /* Sized for an earlier configuration: left unused, pages given
         * back at cleanup. */
    }
    if (retired_count > s->retained) {
        ring = ring_at(retired_oldest);
        while (ring != NULL && !pair_fits(ring, s)) {
            flightrec__attach_steps++;
            ring = ring_at(ring->list_next);
        }
        if (ring != NULL) {
            retired_remove(ring);
            *from_retired = 1;
            return ring;
        }
    }
    flightrec__attach_steps++;
    return pair_create(s);
}

static void on_thread_exit(void *arg);
#endif /* REUSES_PAIRS */

int flightrec__attach(void)
{
    if (flightrec__try_init() != 0) {
        /* Start-up is under way.  In another thread: wait for it.  In this
         * one (a handler interrupted it): the event is lost, counted. */
        if (flightrec__init_is_mine())
            return -EAGAIN;
        flightrec__ensure_init();
    }
    if (flightrec__region_base == NULL)
        return -ENOMEM; /* start-up could not reserve the region */
    const struct flightrec_settings *s = flightrec__settings();
    if (lock() != 0)
        return -EAGAIN;
    int from_retired = 0;
#if REUSES_PAIRS
    ring_t *ring = acquire_pair(s, &from_retired);
#else
    ring_t *ring = pair_create(s);
#endif
    if (ring != NULL) {
        atomic_store_explicit(&ring->state, FLIGHTREC_RING_LIVE,
                              memory_order_relaxed);
        atomic_store_explicit(&ring_partner(ring)->state, FLIGHTREC_RING_LIVE,
                              memory_order_relaxed);
    }
    unlock();
    if (ring == NULL) {
#if REUSES_PAIRS
        if (!atomic_exchange_explicit(&out_of_memory_said, 1,
                                      memory_order_relaxed)) {
            static const char text[] =
                "flightrec: no memory left in the ring region for a new "
                "thread's rings; its events are counted as lost\n";
            flightrec__port_message(text, sizeof(text) - 1);
        }
#endif
        /* A firmware's region is sized at build time for its one pair:
         * its loss shows in the stream (lost without a ring). */
        return -ENOMEM;
    }
    int32_t tid = flightrec__port_thread_id();
    char name[16];
    if (flightrec__port_self_name(name) != 0)
        name[0] = '\0';
    set_owner(ring, tid, name, from_retired);
    set_owner(ring_partner(ring), tid, name, from_retired);
    flightrec__self_bind(ring, ring_partner(ring));
#if REUSES_PAIRS
    (void)flightrec__port_on_thread_exit(ring);
#endif
    return 0;
}

/* Thread exit, reuse, fork and cleanup, to the end of the file: hosted
 * only. */
#if REUSES_PAIRS

static void on_thread_exit(void *arg)
{
    (void)arg;
    ring_t *ring = flightrec__self_ring();
    if (ring == NULL)
        return;
    /* From here on this thread's events (a handler, a later destructor)
     * are counted as lost: a pair that is handed back has no owner. */
    flightrec__self_exited();
    char name[16];
    if (flightrec__port_self_name(name) == 0) {
        rename_owner(ring, name);
        rename_owner(ring_partner(ring), name);
    }
    if (lock() != 0)
        return; /* cannot happen: exit is not a handler */
    atomic_store_explicit(&ring_partner(ring)->state, FLIGHTREC_RING_RETIRED,
                          memory_order_release);
    atomic_store_explicit(&ring->state, FLIGHTREC_RING_RETIRED,
                          memory_order_release);
    if (pair_fully_read(ring))
        free_push(ring, FLIGHTREC_RING_RETIRED);
    else
        retired_append(ring);
    unlock();
}

void flightrec__registry_pair_read(ring_t *thread_ring)
{
    if (lock() != 0)
        return;
    if (thread_ring->registry_list == LIST_RETIRED &&
        pair_fully_read(thread_ring)) {
        retired_remove(thread_ring);
        free_push(thread_ring, FLIGHTREC_RING_RETIRED);
    }
    unlock();
}

void flightrec__registry_init(void)
{
    flightrec__port_thread_exit_init(on_thread_exit);
}

/* Empties a ring: nothing before its head is delivered again. */
static void ring_empty(ring_t *ring)
{
    uint32_t generation = identity_begin(ring);
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    atomic_store_explicit(&ring->start, head, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, head, memory_order_relaxed);
    uintptr_t dropped =
        atomic_load_explicit(&ring->dropped, memory_order_relaxed) +
        atomic_load_explicit(&ring->nested_dropped, memory_order_relaxed);
    atomic_store_explicit(&ring->dropped_at_start, dropped,
                          memory_order_relaxed);
    atomic_store_explicit(&ring->previous_generation, 0, memory_order_relaxed);
    /* A group counted but not yet published (the owner is inside a record,
     * or forked from one) stays counted: its items come after the head. */
    const struct flightrec_region_recorder *r = recorder_now(ring);
    uintptr_t pending_at = atomic_load_explicit(&r->last_at,
                                                memory_order_relaxed);
    uint32_t pending = atomic_load_explicit(&r->last_count,
                                            memory_order_relaxed);
    if (position_before(pending_at, head))
        recorder_set(ring, 0, head, 0);
    else
        recorder_set(ring, pending, pending_at, pending);
    atomic_store_explicit(&ring->reader_events, 0, memory_order_relaxed);
    atomic_store_explicit(&ring->reader_dropped, 0, memory_order_relaxed);
    atomic_store_explicit(
        &ring->reader_generation,
        atomic_load_explicit(&ring->owner_generation, memory_order_relaxed),
        memory_order_relaxed);
    identity_end(ring, generation);
}

/* Rebuilds the lists from the ring states (fork child, cleanup). */
static void lists_rebuild(ring_t *keep, int discard_pages)
{
    free_list = 0;
    retired_oldest = retired_newest = 0;
    retired_count = 0;
    for (ring_t *ring = ring_first(); ring; ring = ring_next(ring)) {
        if (ring->context != 0)
            continue;
        int live = atomic_load_explicit(&ring->state, memory_order_relaxed) ==
                   FLIGHTREC_RING_LIVE;
        if (keep != NULL ? ring == keep : live) {
            ring_empty(ring);
            ring_empty(ring_partner(ring));
            continue;
        }
        ring_empty(ring);
        ring_empty(ring_partner(ring));
        atomic_store_explicit(&ring->owner.tid, -1, memory_order_relaxed);
        atomic_store_explicit(&ring_partner(ring)->owner.tid, -1,
                              memory_order_relaxed);
        if (discard_pages) {
            flightrec__port_region_discard(ring_items(ring),
                                           ring->capacity *
                                               sizeof(struct flightrec_region_item));
            ring_t *partner = ring_partner(ring);
            flightrec__port_region_discard(ring_items(partner),
                                           partner->capacity *
                                               sizeof(struct flightrec_region_item));
        }
        free_push(ring, FLIGHTREC_RING_FREE);
    }
}

/* A shared region is the parent's: the child gets a private snapshot taken
 * just before the fork, holding what it needs (the fixed blocks, every ring
 * descriptor, and the forking thread's own pair with the record it may be
 * in the middle of); other rings' items are not copied, they become free. */
static void *fork_snapshot;
static size_t fork_snapshot_size;
/* The registry lock is held across the fork: no other thread grows the
 * region or links a ring while the snapshot is taken. */
static int fork_locked;
/* The forking thread's main head, taken before the fork. */
static uintptr_t fork_main_head;

void flightrec__registry_before_fork(void)
{
    fork_snapshot = NULL;
    fork_locked = 0;
#if !defined(FLIGHTREC_PORT_FIRMWARE)
    /* Where a record this thread is in the middle of (a fork from a
     * handler) started, should the child have to give its region up. */
    fork_main_head = atomic_load_explicit(&flightrec__self.main.ring->head,
                                          memory_order_relaxed);
#endif
    if (flightrec__region_base == NULL || !flightrec__port_region_is_shared())
        return;
    /* A fork from a handler that interrupted this thread's registry work
     * cannot wait for it: no snapshot then. */
    if (lock() != 0)
        return;
    fork_locked = 1;
    struct flightrec_region_header *h = region_header();
    size_t used = (size_t)atomic_load_explicit(&h->used, memory_order_acquire);
    unsigned char *copy = flightrec__port_region_snapshot_begin(used);
    if (copy == NULL)
        return;
    flightrec__port_region_snapshot_copy(copy, flightrec__region_base,
                                         (size_t)h->rings_offset);
    ring_t *mine = flightrec__self_ring();
    for (ring_t *ring = ring_first(); ring; ring = ring_next(ring)) {
        size_t at = (size_t)ring_offset(ring);
        int own = mine != NULL && (ring == mine || ring == ring_partner(mine));
        size_t bytes = own ? (size_t)ring->bytes : sizeof(ring_t);
        if (at > used || bytes > used - at)
            continue; /* cannot happen under the lock; never past the copy */
        flightrec__port_region_snapshot_copy(copy + at, ring, bytes);
    }
    fork_snapshot = copy;
    fork_snapshot_size = used;
}

void flightrec__registry_after_fork_parent(void)
{
    if (fork_snapshot != NULL)
        flightrec__port_region_snapshot_drop(fork_snapshot, fork_snapshot_size);
    fork_snapshot = NULL;
    if (fork_locked)
        unlock();
    fork_locked = 0;
}

#if !defined(FLIGHTREC_PORT_FIRMWARE)
/* Where a record the forking thread was in the middle of (a fork from a
 * handler that interrupted it) ends, in a child that gave its region up. */
static struct flightrec_item orphan_items[FLIGHTREC_MAX_PENDING];
static struct flightrec__ring_head orphan_head;

/* The child of a shared region without a copy of its own: the region is
 * the parent's file (now unmapped), so the child records nothing, says so
 * once, and reads and writes no region. */
static void give_region_up(void)
{
    free_list = 0;
    retired_oldest = retired_newest = 0;
    retired_count = 0;
    flightrec__region_base = NULL;
    struct flightrec__writer *w = &flightrec__self.main;
    int in_record = flightrec__self_ring() != NULL &&
                    FLIGHTREC__DEADLINE_BUSY(w->deadline);
    flightrec__self_unbind();
    if (in_record) {
        /* The record's positions run from the head it started at: its
         * slots, found from the lap base, are the orphan items. */
        atomic_store_explicit(&orphan_head.head, fork_main_head,
                              memory_order_relaxed);
        w->ring = &orphan_head;
        w->items = orphan_items;
        w->mask = FLIGHTREC_MAX_PENDING - 1;
        w->lap_base = (uintptr_t)orphan_items -
                      fork_main_head * (uintptr_t)sizeof(struct flightrec_item);
    }
    flightrec__refuse_running();
    static const char text[] =
        "flightrec: the forked child could not have its own copy of the "
        "session's rings; recording is off in the child\n";
    flightrec__port_message(text, sizeof(text) - 1);
}
#endif

void flightrec__registry_reset_after_fork(void)
{
    atomic_store_explicit(&registry_lock, 0, memory_order_relaxed);
    registry_held = 0;
    fork_locked = 0;
    if (flightrec__region_base == NULL)
        return;
    /* Private memory (no session file) is the child's own copy already. */
    int shared = flightrec__port_region_is_shared();
    int own_copy = 0;
    if (shared) {
        /* Without a snapshot, the whole reserve: the parent's file may be
         * mapped past `used` (a fork from a handler that interrupted this
         * thread's own growing of it). */
        void *snapshot = fork_snapshot;
        size_t size = snapshot != NULL ? fork_snapshot_size
                                       : (size_t)region_header()->region_size;
        fork_snapshot = NULL;
        own_copy = flightrec__port_region_snapshot_install(
                       flightrec__region_base, snapshot, size) == 0;
    }
    /* The hot page and the control lock were the parent's: the child's
     * control page becomes its own. */
    flightrec__port_hot_unshare(&flightrec__control_page);
#if !defined(FLIGHTREC_PORT_FIRMWARE)
    if (shared && !own_copy) {
        give_region_up();
        return;
    }
#endif
    if (own_copy && (region_header()->flags & FLIGHTREC_REGION_HOT_SHARED)) {
        region_header()->flags &= ~FLIGHTREC_REGION_HOT_SHARED;
        atomic_store_explicit(&region_control()->lock, 0,
                              memory_order_relaxed);
    }
    /* A consumer claim in the copy is the parent's drain (or another
     * process's, on the parent's file): nobody consumes the child's copy
     * yet, and the child must be free to drain it. */
    atomic_store_explicit(&region_control()->consumer_claim, 0,
                          memory_order_relaxed);
    atomic_store_explicit(&region_control()->consumer_pid, 0,
                          memory_order_relaxed);
    region_header()->process_id = flightrec__port_process_id();
    flightrec__port_process_forked(
        (void *)(flightrec__region_base + region_header()->process_offset));
    ring_t *mine = flightrec__self_ring();
    lists_rebuild(mine, 0);
    if (mine != NULL) {
        int32_t tid = flightrec__port_thread_id();
        atomic_store_explicit(&mine->owner.tid, tid, memory_order_relaxed);
        atomic_store_explicit(&ring_partner(mine)->owner.tid, tid,
                              memory_order_relaxed);
        flightrec__self_resync();
    }
}

void flightrec__registry_cleanup(void)
{
    if (flightrec__region_base == NULL || lock() != 0)
        return;
    lists_rebuild(NULL, 1);
    unlock();
}
#endif /* REUSES_PAIRS */
