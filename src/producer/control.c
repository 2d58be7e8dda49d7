/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Channel control: start, stop, cleanup, the filter in force and the
 * statistics.
 */
#include "runtime.h"

#include <pthread.h>
#include <string.h>

flightrec__mutex_t flightrec__control_lock = FLIGHTREC__MUTEX_INITIALIZER;

#define ALL_ONES_8 \
    0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, \
        0xffffffffu, 0xffffffffu, 0xffffffffu
/* The filter the program asked for (under the control lock) and the one in
 * force, which is all zero while recording is stopped. */
uint32_t flightrec__filter_wanted[FLIGHTREC_FILTER_WORDS] = {
    ALL_ONES_8, ALL_ONES_8, ALL_ONES_8, ALL_ONES_8,
};
_Atomic uint32_t flightrec__filter[FLIGHTREC_FILTER_WORDS] = {
    ALL_ONES_8, ALL_ONES_8, ALL_ONES_8, ALL_ONES_8,
};
_Atomic int flightrec__running = 1;

void flightrec__filter_publish(void)
{
    int running = atomic_load_explicit(&flightrec__running,
                                       memory_order_relaxed);
    for (size_t i = 0; i < FLIGHTREC_FILTER_WORDS; i++) {
        uint32_t word = running ? flightrec__filter_wanted[i] : 0;
        /* The uptime ids are the recorder's own: a program that recorded
         * them would shift every reader's count of its events. */
        for (uint32_t id = FLIGHTREC_EV_UPTIME_HIGH;
             id <= FLIGHTREC_EV_UPTIME_LOW; id++)
            if (id / 32 == i)
                word &= ~(1u << (id % 32));
        atomic_store_explicit(&flightrec__filter[i], word,
                              memory_order_relaxed);
    }
    /* The region's control block says the same, for readers outside. */
    flightrec__region_publish_control(flightrec__filter_wanted, running,
                                      flightrec__settings());
}

void flightrec__set_running_locked(int running)
{
    atomic_store_explicit(&flightrec__running, running, memory_order_relaxed);
    flightrec__filter_publish();
}

void flightrec__set_running(int running)
{
    pthread_mutex_lock(&flightrec__control_lock);
    flightrec__set_running_locked(running);
    pthread_mutex_unlock(&flightrec__control_lock);
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
    return atomic_load_explicit(&flightrec__running, memory_order_relaxed);
}

void flightrec_cleanup(void)
{
    flightrec_stop();
    pthread_mutex_lock(&flightrec__control_lock);
    flightrec__rings_cleanup();
    flightrec__configured = 0;
    pthread_mutex_unlock(&flightrec__control_lock);
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
