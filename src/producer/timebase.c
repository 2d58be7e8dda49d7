/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The time base: the counter value at uptime 0 with the wall clock there,
 * and the counter's frequency.  Portable: the clocks come from the port.
 */
#include "platform.h"
#include "runtime.h"

static struct flightrec_timebase timebase;
#if !defined(FLIGHTREC_PORT_FIRMWARE)
static uint64_t monotonic_at_base;      /* monotonic ns at base */
#endif
/* A firmware's port states its counter's frequency: nothing to start up,
 * measure or keep. */
#if defined(FLIGHTREC_PORT_FIRMWARE) && defined(FLIGHTREC_PORT_COUNTER)
#define FREQUENCY_STATED 1
#else
#define FREQUENCY_STATED 0
/* A region word: lock-free wherever the header's copy is (region.h). */
static _Atomic flightrec_region_word frequency_cache;
#endif

#if !defined(FLIGHTREC_PORT_COUNTER) && !defined(__x86_64__) && \
    !defined(__i386__) && !defined(__aarch64__)
uint64_t flightrec__counter_fallback(void)
{
    return flightrec__port_monotonic_ns();
}
#endif

#if !defined(FLIGHTREC_PORT_FIRMWARE)
/* Reads the counter between two monotonic clock reads; returns the clock
 * at the middle.  Taking the closest of a few tries keeps the error of a
 * pair within tens of nanoseconds. */
static uint64_t counter_and_clock(uint64_t *counter)
{
    uint64_t best_width = UINT64_MAX, best_clock = 0;
    *counter = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t before = flightrec__port_monotonic_ns();
        uint64_t value = flightrec_counter();
        uint64_t after = flightrec__port_monotonic_ns();
        if (after - before < best_width) {
            best_width = after - before;
            best_clock = before + (after - before) / 2;
            *counter = value;
        }
    }
    return best_clock;
}
#endif

void flightrec__timebase_init(void)
{
#if defined(FLIGHTREC_PORT_FIRMWARE)
    /* No monotonic clock to pair the counter with (a firmware port's reads
     * 0) and a counter whose frequency the port states: uptime 0 is now,
     * at the port's wall-clock time. */
    timebase.base = flightrec_counter();
    timebase.realtime_ns = flightrec__port_realtime_ns();
#else
    monotonic_at_base = counter_and_clock(&timebase.base);
    uint64_t realtime = flightrec__port_realtime_ns();
    uint64_t monotonic = flightrec__port_monotonic_ns();
    timebase.realtime_ns = realtime - (monotonic - monotonic_at_base);
#endif
}

const struct flightrec_timebase *flightrec__timebase(void)
{
    return &timebase;
}

uint64_t flightrec__counter_base(void)
{
    flightrec__ensure_init();
    return timebase.base;
}

#if !defined(FLIGHTREC_PORT_COUNTER) && (defined(__x86_64__) || defined(__i386__))
/* Frequency of a counter that does not say it: measured against the
 * monotonic clock over at least 20 ms since start-up (waiting for the
 * rest, once).  The first stream fixes it for the process. */
static uint64_t measure_frequency(void)
{
    const uint64_t min_span = 20000000u;
    uint64_t counter = 0;
    uint64_t now = counter_and_clock(&counter);
    if (now - monotonic_at_base < min_span) {
        flightrec__port_sleep_ns(min_span - (now - monotonic_at_base));
        now = counter_and_clock(&counter);
    }
    /* A double keeps 53 bits: far below the measurement's own error. */
    double ticks = (double)(counter - timebase.base);
    double span = (double)(now - monotonic_at_base);
    return (uint64_t)(ticks * 1e9 / span + 0.5);
}
#endif

_Atomic int flightrec__frequency_published;

static uint64_t known_frequency(void);

void flightrec__timebase_publish_if_ready(void)
{
    if (flightrec__region_base == NULL)
        return;
#if !defined(FLIGHTREC_PORT_COUNTER) && (defined(__x86_64__) || defined(__i386__))
    /* Not before the calibration span: a slow path must never wait. */
    if (atomic_load_explicit(&frequency_cache, memory_order_relaxed) == 0 &&
        flightrec__port_monotonic_ns() - monotonic_at_base < 20000000u)
        return;
#endif
    atomic_store_explicit(&region_header()->counter_frequency,
                          known_frequency(), memory_order_relaxed);
    atomic_store_explicit(&flightrec__frequency_published, 1,
                          memory_order_relaxed);
}

uint64_t flightrec_counter_frequency(void)
{
#if !FREQUENCY_STATED
    if (atomic_load_explicit(&frequency_cache, memory_order_relaxed) == 0)
        flightrec__ensure_init();
#endif
    return known_frequency();
}

/* The frequency, measured (once) if need be; start-up must be done or
 * under way in this thread. */
static uint64_t known_frequency(void)
{
#if FREQUENCY_STATED
    return flightrec_port_counter_frequency();
#else
    uint64_t cached = atomic_load_explicit(&frequency_cache,
                                           memory_order_relaxed);
    if (cached != 0)
        return cached;
#if defined(FLIGHTREC_PORT_COUNTER)
    cached = flightrec_port_counter_frequency();
#elif defined(__x86_64__) || defined(__i386__)
    cached = measure_frequency();
#elif defined(__aarch64__)
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(cached));
#else
    cached = 1000000000u;
#endif
    atomic_store_explicit(&frequency_cache, cached, memory_order_relaxed);
    return cached;
#endif
}
