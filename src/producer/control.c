/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Channel control: start, stop, cleanup, the filter in force and the
 * statistics.
 */
#include "platform.h"
#include "runtime.h"

#include "../common/filter-spec.h"

#include <pthread.h>
#include <string.h>

flightrec__mutex_t flightrec__control_lock = FLIGHTREC__MUTEX_INITIALIZER;

#define ALL_ONES_8 \
    0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, \
        0xffffffffu, 0xffffffffu, 0xffffffffu
/* The filter the program asked for and whether recording is started, as
 * this process last set or saw them: the region's control block is the
 * truth once it exists, since `flightrec ctl` may change it. */
uint32_t flightrec__filter_wanted[FLIGHTREC_FILTER_WORDS] = {
    ALL_ONES_8, ALL_ONES_8, ALL_ONES_8, ALL_ONES_8,
};
static int running_wanted = 1;
/* A fork child that could not have rings of its own: recording stays off
 * whatever it asks (registry.c). */
static int running_refused;
/* The control block's generation when this process last read it. */
static uint32_t generation_seen;

/* Alone in its page(s), so that a session can map its hot page here. */
_Alignas(FLIGHTREC__CONTROL_PAGE_BYTES) struct flightrec__control_page
    flightrec__control_page = {
        .filter = { ALL_ONES_8, ALL_ONES_8, ALL_ONES_8, ALL_ONES_8 },
};

/* The claim of a holder that kept the lock too long: while it is still
 * there, the program does not wait for it again. */
static flightrec_region_word stuck_claim;

/* Another process (flightrec ctl) may change the control words: between
 * its changes and ours, the region's control lock.  Only a shared hot page
 * lets another process act, so only then is there anyone to exclude. */
static int region_lock(void)
{
    if (flightrec__region_base == NULL ||
        !(region_header()->flags & FLIGHTREC_REGION_HOT_SHARED))
        return 0;
    _Atomic flightrec_region_word *lock = &region_control()->lock;
    if (stuck_claim != 0 &&
        atomic_load_explicit(lock, memory_order_relaxed) == stuck_claim)
        return 0;
    if (flightrec__port_control_lock(lock) != 0) {
        stuck_claim = atomic_load_explicit(lock, memory_order_relaxed);
        /* A `flightrec ctl` stopped while it held the lock: the program's
         * own change goes ahead rather than hang. */
        static const char text[] =
            "flightrec: the session's control lock is held too long (a "
            "stopped flightrec ctl?); changing the control words without it\n";
        flightrec__port_message(text, sizeof(text) - 1);
        return 0;
    }
    return 1;
}

static void region_unlock(int held)
{
    if (held)
        flightrec__port_control_unlock(&region_control()->lock);
}

/* Takes in what another process changed since we last looked. */
static void refresh_locked(void)
{
    if (flightrec__region_base == NULL)
        return;
    struct flightrec_region_control *c = region_control();
    uint32_t generation =
        atomic_load_explicit(&c->generation, memory_order_acquire);
    if (generation == generation_seen)
        return;
    for (size_t i = 0; i < FLIGHTREC_FILTER_WORDS; i++)
        flightrec__filter_wanted[i] =
            atomic_load_explicit(&c->filter[i], memory_order_relaxed);
    running_wanted =
        atomic_load_explicit(&c->running, memory_order_relaxed) != 0;
    generation_seen = generation;
}

void flightrec__control_begin(struct flightrec__control_hold *hold)
{
    flightrec__mutex_lock(&flightrec__control_lock);
    hold->region_held = region_lock();
    refresh_locked();
}

void flightrec__control_begin_read(void)
{
    flightrec__mutex_lock(&flightrec__control_lock);
    refresh_locked();
}

void flightrec__control_end(struct flightrec__control_hold *hold)
{
    region_unlock(hold->region_held);
    flightrec__mutex_unlock(&flightrec__control_lock);
}

void flightrec__filter_publish(void)
{
    uint32_t in_force[FLIGHTREC_FILTER_WORDS];
    fr_filter_in_force(flightrec__filter_wanted, running_wanted, in_force);
    for (size_t i = 0; i < FLIGHTREC_FILTER_WORDS; i++)
        atomic_store_explicit(&flightrec__control_page.filter[i], in_force[i],
                              memory_order_relaxed);
    /* The region's control block says the same, for readers outside. */
    flightrec__region_publish_control(flightrec__filter_wanted, running_wanted,
                                      in_force);
    if (flightrec__region_base != NULL)
        generation_seen = atomic_load_explicit(&region_control()->generation,
                                               memory_order_relaxed);
}

void flightrec__set_running_locked(int running)
{
    running_wanted = running != 0 && !running_refused;
    flightrec__filter_publish();
}

void flightrec__set_running(int running)
{
    struct flightrec__control_hold hold;
    flightrec__control_begin(&hold);
    flightrec__set_running_locked(running);
    flightrec__control_end(&hold);
}

void flightrec__refuse_running(void)
{
    struct flightrec__control_hold hold;
    flightrec__control_begin(&hold);
    running_refused = 1;
    flightrec__set_running_locked(0);
    flightrec__control_end(&hold);
}

void flightrec_start(void)
{
    flightrec__ensure_init();
    flightrec__set_running(1);
}

void flightrec_stop(void)
{
    flightrec__ensure_init();
    flightrec__set_running(0);
}

int flightrec_is_running(void)
{
    if (flightrec__region_base != NULL)
        return atomic_load_explicit(&region_control()->running,
                                    memory_order_relaxed) != 0;
    return running_wanted;
}

void flightrec_cleanup(void)
{
    flightrec_stop();
    flightrec__mutex_lock(&flightrec__control_lock);
    flightrec__rings_cleanup();
    flightrec__configured = 0;
    flightrec__mutex_unlock(&flightrec__control_lock);
    /* This thread's next item starts with a pair; other live threads get
     * theirs within a quarter ring or 2^21 ticks (docs/recording.md). */
    flightrec__self_resync();
}

void flightrec_get_stats(struct flightrec_stats *stats)
{
    memset(stats, 0, sizeof(*stats));
    if (flightrec__region_base != NULL)
        stats->lost_without_ring = atomic_load_explicit(
            &region_header()->lost_without_ring, memory_order_relaxed);
    for (ring_t *ring = ring_first(); ring; ring = ring_next(ring)) {
        stats->rings++;
        if (atomic_load_explicit(&ring->state, memory_order_relaxed) ==
            FLIGHTREC_RING_LIVE)
            stats->live_rings++;
        stats->produced +=
            atomic_load_explicit(&ring->head, memory_order_relaxed);
        stats->dropped +=
            atomic_load_explicit(&ring->dropped, memory_order_relaxed) +
            atomic_load_explicit(&ring->nested_dropped, memory_order_relaxed);
    }
}
