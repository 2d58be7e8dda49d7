/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hot path as firmware compiles it, alone: the public header must
 * build freestanding by itself, and examples/firmware/figures.sh counts
 * the instructions of these functions.
 *
 * probe_produce is flightrec_produce() as shipped (interrupts stay
 * enabled; an interrupt inside a record goes to the signal ring).
 * probe_masked is the alternative the firmware chapter weighs: the same
 * item and head stores with interrupts masked around them, as RTEMS does,
 * which needs no deadline protocol (nothing can come in between).
 */
#include <flightrec/producer.h>

void probe_produce(uintptr_t data);
void probe_masked(uintptr_t data);

void probe_produce(uintptr_t data)
{
    flightrec_produce(FLIGHTREC_EV_USER_0 + 1, data);
}

void probe_masked(uintptr_t data)
{
    uint32_t event = FLIGHTREC_EV_USER_0 + 1;
    if (FLIGHTREC_UNLIKELY(!flightrec_event_enabled(event)))
        return;
    struct flightrec__writer *w = &flightrec__self.main;
    uint32_t primask;
    __asm__ __volatile__("mrs %0, primask\n\tcpsid i"
                         : "=r"(primask)::"memory");
    uint64_t now = flightrec_counter();
    uintptr_t head =
        atomic_load_explicit(&w->ring->head, memory_order_relaxed);
    if (FLIGHTREC_UNLIKELY(now >= w->deadline || head >= w->head_limit)) {
        __asm__ __volatile__("msr primask, %0" ::"r"(primask) : "memory");
        flightrec__produce_slow(event, data, now, w->deadline);
        return;
    }
    struct flightrec_item *item = flightrec__lap_slot(w, head);
    atomic_store_explicit(&item->event, FLIGHTREC_TIME_EVENT(now, event),
                          memory_order_relaxed);
    atomic_store_explicit(&item->data, data, memory_order_relaxed);
    atomic_store_explicit(&w->ring->head, head + 1, memory_order_release);
    __asm__ __volatile__("msr primask, %0" ::"r"(primask) : "memory");
}
