/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory order between the writers of a region's rings and its readers.
 *
 * Hosted, they are other threads and processes: acquire and release, with
 * the barriers a weakly ordered CPU needs.  On firmware
 * (FLIGHTREC_PORT_FIRMWARE) one CPU runs every writer and reader (tasks,
 * interrupts, the fault dump) and sees its own stores in program order:
 * only the compiler must keep the accesses in order, which signal fences
 * do (an interrupt is a signal handler of the one thread), and no barrier
 * instruction is needed, as on the hot path (flightrec/producer.h).
 */
#ifndef FLIGHTREC_REGION_ORDER_H
#define FLIGHTREC_REGION_ORDER_H

#include <stdatomic.h>
#include <stdint.h>

#if defined(FLIGHTREC_PORT_FIRMWARE)
static inline uint64_t fr_acquired_u64(uint64_t value)
{
    atomic_signal_fence(memory_order_acquire);
    return value;
}

static inline uintptr_t fr_acquired_word(uintptr_t value)
{
    atomic_signal_fence(memory_order_acquire);
    return value;
}

/* An acquire load of *@p (a word, 32 or 64 bits): the fence follows the
 * load, since the argument is evaluated before the call. */
#define FR_LOAD_ACQUIRE(p)                                            \
    _Generic(atomic_load_explicit((p), memory_order_relaxed),         \
             uint64_t: fr_acquired_u64,                               \
             default: fr_acquired_word)(                              \
        atomic_load_explicit((p), memory_order_relaxed))
#define FR_STORE_RELEASE(p, value)                   \
    (atomic_signal_fence(memory_order_release),      \
     atomic_store_explicit((p), (value), memory_order_relaxed))
#define FR_FETCH_ADD_RELEASE(p, value)               \
    (atomic_signal_fence(memory_order_release),      \
     atomic_fetch_add_explicit((p), (value), memory_order_relaxed))
#define FR_FENCE_ACQUIRE() atomic_signal_fence(memory_order_acquire)
#define FR_FENCE_RELEASE() atomic_signal_fence(memory_order_release)

/* A fault handler that drains may interrupt a drain that never resumes;
 * the drain makes each of its commits (items counted into the sink and
 * the ring's progress) with interrupts off, so that the handler finds one
 * whole state (the port provides these: examples/firmware). */
uint32_t flightrec__port_interrupts_off(void);
void flightrec__port_interrupts_restore(uint32_t state);
#define FR_COMMIT_BEGIN() uint32_t fr_commit_ = flightrec__port_interrupts_off()
#define FR_COMMIT_END() flightrec__port_interrupts_restore(fr_commit_)
/* Test builds of the demo (-DFW_TEST_POINTS, tests/firmware): places in
 * the drain where a test makes an interrupt fault. */
#if defined(FW_TEST_POINTS)
void fw_test_point(unsigned id);
#define FR_TEST_POINT(id) fw_test_point(id)
#else
#define FR_TEST_POINT(id) ((void)0)
#endif
#else
#define FR_LOAD_ACQUIRE(p) atomic_load_explicit((p), memory_order_acquire)
#define FR_STORE_RELEASE(p, value) \
    atomic_store_explicit((p), (value), memory_order_release)
#define FR_FETCH_ADD_RELEASE(p, value) \
    atomic_fetch_add_explicit((p), (value), memory_order_release)
#define FR_FENCE_ACQUIRE() atomic_thread_fence(memory_order_acquire)
#define FR_FENCE_RELEASE() atomic_thread_fence(memory_order_release)
/* Hosted, a drain is never interrupted by another one. */
#define FR_COMMIT_BEGIN() ((void)0)
#define FR_COMMIT_END() ((void)0)
#define FR_TEST_POINT(id) ((void)0)
#endif

#endif
