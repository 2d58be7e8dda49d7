/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief The counter seam: how the hot path reads time.
 *
 * By default the CPU counter is read inline: rdtsc on x86, cntvct_el0 on
 * aarch64, CLOCK_MONOTONIC nanoseconds elsewhere.  A port (firmware, a test)
 * defines FLIGHTREC_PORT_COUNTER when building both the library and its
 * users and then provides flightrec_port_counter() and
 * flightrec_port_counter_frequency().
 */
#ifndef FLIGHTREC_PORT_H
#define FLIGHTREC_PORT_H

#include <stdint.h>

#include "common.h"

FLIGHTREC_BEGIN_DECLS

#if defined(FLIGHTREC_PORT_COUNTER)
/** Port-provided counter (monotonic, any frequency 1 kHz..10 GHz). */
uint64_t flightrec_port_counter(void);
/** Port-provided counter frequency in Hz. */
uint64_t flightrec_port_counter_frequency(void);
#define FLIGHTREC__COUNTER_KIND "port"
static FLIGHTREC_ALWAYS_INLINE uint64_t flightrec_counter(void)
{
    return flightrec_port_counter();
}
#if defined(FLIGHTREC_PORT_COUNTER_LOW)
/* A firmware port whose counter's low 32 bits are a memory-mapped register
 * defines FLIGHTREC_PORT_COUNTER_LOW to its address (its bits above the
 * low 12 a Thumb-2 immediate) and FLIGHTREC_PORT_COUNTER_LOW_DOWN if the
 * register counts down (it is inverted), so that flightrec_produce()
 * reads them inline (flightrec/producer.h, FLIGHTREC__LIMIT_MARK). */
/** Firmware with FLIGHTREC_PORT_COUNTER_LOW: to be called at least every
 * 2^29 counter ticks (a timer interrupt), whether anything records or
 * not.  flightrec_produce() compares the counter's low 32 bits with its
 * deadline's, which is exact while they are less than 2^31 ticks apart:
 * the kick sends the next event to the slow path, which compares the
 * whole counter, so that no item after an idle gap is timed wrong. */
void flightrec_counter_kick(void);
#if defined(FLIGHTREC_PORT_COUNTER_LOW_DOWN)
#define FLIGHTREC__COUNTER_LOW_UP(reg) "mvn\t" reg ", " reg "\n\t"
#else
#define FLIGHTREC__COUNTER_LOW_UP(reg) ""
#endif
static FLIGHTREC_ALWAYS_INLINE uint32_t flightrec__counter_low(void)
{
    uint32_t value =
        *(const volatile uint32_t *)(uintptr_t)(FLIGHTREC_PORT_COUNTER_LOW);
#if defined(FLIGHTREC_PORT_COUNTER_LOW_DOWN)
    value = ~value;
#endif
    return value;
}
#endif
#elif defined(__x86_64__) || defined(__i386__)
#define FLIGHTREC__COUNTER_KIND "rdtsc"
/** Reads the time-stamp counter (no fence: ordering within one thread is
 * what the ring needs).  The builtin lets the compiler know rdtsc clears
 * the upper halves, which inline asm would hide. */
static FLIGHTREC_ALWAYS_INLINE uint64_t flightrec_counter(void)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ia32_rdtsc();
#else
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#endif
}
#elif defined(__aarch64__)
#define FLIGHTREC__COUNTER_KIND "cntvct_el0"
static FLIGHTREC_ALWAYS_INLINE uint64_t flightrec_counter(void)
{
    uint64_t value;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(value));
    return value;
}
#else
#define FLIGHTREC__COUNTER_KIND "clock_gettime"
/** CLOCK_MONOTONIC in nanoseconds (out of line: needs <time.h>). */
FLIGHTREC_API uint64_t flightrec__counter_fallback(void);
static FLIGHTREC_ALWAYS_INLINE uint64_t flightrec_counter(void)
{
    return flightrec__counter_fallback();
}
#endif

FLIGHTREC_END_DECLS

#endif
