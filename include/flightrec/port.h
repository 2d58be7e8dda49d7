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
