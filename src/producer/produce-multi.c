/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Slow paths of flightrec_produce_2() and flightrec_produce_n(), and the
 * exported functions of those names (for C++ and bindings).
 *
 * Their fast paths are inline (flightrec/producer.h): the one of
 * flightrec_produce() for n items at once, with one check that head + n
 * stays within the head limit (which never passes the end of the head's
 * lap, so the items never wrap around the array).  Anything else (attach,
 * a sync pair due, discard-mode fullness, the lap's end, more than
 * FLIGHTREC_MAX_PENDING items, none) comes here and goes the way of
 * prepare/add/commit, with the counter value already read.
 */
#define FLIGHTREC__OUT_OF_LINE_MULTI 1
#include "runtime.h"

/* The record the way flightrec_prepare() would start it at @now, followed
 * by flightrec_add() of every item and flightrec_commit(); the main
 * writer's deadline is 0 and @deadline is what it was.  On firmware it is
 * the slow path of every record (flightrec__record_slow(), runtime.h). */
#if defined(FLIGHTREC_PORT_FIRMWARE)
#define record_generic flightrec__record_slow
#else
static
#endif
void record_generic(uint64_t now, uint64_t deadline,
                    const struct flightrec_item_in *items, size_t n)
{
    struct flightrec__writer *w = &flightrec__self.main;
    uintptr_t head = atomic_load_explicit(&w->ring->head, memory_order_relaxed);
    struct flightrec_ctx ctx;
    FLIGHTREC__ITEMS_AFTER_HEAD(); /* see flightrec_produce() */
#if defined(FLIGHTREC_PORT_FIRMWARE)
    /* Straight to the slow path (whose records start here): when nothing
     * is due it starts the record as the fast path would, with the same
     * deadline, and its room is never more than the fast path's. */
    ctx.writer = w;
    ctx.head = head;
    ctx.room = 0;
    ctx.deadline = deadline;
    ctx.time_word = FLIGHTREC_TIME_EVENT(now, 0);
    ctx.dropping = 0;
    flightrec__prepare_slow(&ctx, now);
#else
    if (now >= deadline || head > UINTPTR_MAX - FLIGHTREC_MAX_PENDING ||
        head + FLIGHTREC_MAX_PENDING > w->head_limit) {
        ctx = flightrec__prepare_cold(w, head, now, deadline);
    } else {
        ctx.writer = w;
        ctx.head = head;
        ctx.room = FLIGHTREC_MAX_PENDING;
        ctx.deadline = flightrec__record_deadline(w, deadline);
        ctx.time_word = FLIGHTREC_TIME_EVENT(now, 0);
        ctx.dropping = 0;
    }
#endif
    for (size_t i = 0; i < n; i++) {
#if defined(FLIGHTREC_PORT_FIRMWARE)
        /* add()'s own slow path, without its copy of the record (the
         * record is ours, in memory already). */
        if (ctx.room == 0) {
            flightrec__add_slow(&ctx, items[i].event, items[i].data);
            continue;
        }
#endif
        flightrec_add(&ctx, items[i].event, items[i].data);
    }
    flightrec_commit(&ctx);
}

void flightrec__produce_2_slow(uint32_t event0, uintptr_t data0,
                               uint32_t event1, uintptr_t data1, uint64_t now,
                               uint64_t deadline)
{
    const struct flightrec_item_in items[2] = { { event0, data0 },
                                                { event1, data1 } };
    record_generic(now, deadline, items, 2);
}

void flightrec__produce_n_slow(const struct flightrec_item_in *items, size_t n,
                               uint64_t now, uint64_t deadline)
{
    record_generic(now, deadline, items, n);
}

/* One of the two filtered (or recording stopped): the record holds the
 * other one, if any.  One inline produce (which tests the filter again)
 * rather than two: half the code.  Firmware: no inline produce here, but
 * the other one through the slow path, which records it as the fast path
 * would when nothing is due. */
void flightrec__produce_2_filtered(uint32_t event0, uintptr_t data0,
                                   uint32_t event1, uintptr_t data1)
{
#if defined(FLIGHTREC_PORT_FIRMWARE)
    if (!flightrec_event_enabled(event0)) {
        if (!flightrec_event_enabled(event1))
            return;
        event0 = event1;
        data0 = data1;
    }
    struct flightrec__writer *w = &flightrec__self.main;
    uint64_t deadline = w->deadline;
    w->deadline = 0; /* as in flightrec_produce() */
    atomic_signal_fence(memory_order_seq_cst);
    flightrec__produce_slow_late(event0, data0, deadline);
#else
    if (!flightrec_event_enabled(event0)) {
        event0 = event1;
        data0 = data1;
    }
    flightrec_produce(event0, data0);
#endif
}

void flightrec_produce_2(uint32_t event0, uintptr_t data0, uint32_t event1,
                         uintptr_t data1)
{
    flightrec__produce_2_fast(event0, data0, event1, data1);
}

void flightrec_produce_n(const struct flightrec_item_in *items, size_t n)
{
    flightrec__produce_n_fast(items, n);
}
