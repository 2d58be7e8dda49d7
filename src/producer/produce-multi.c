/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec_produce_2() and flightrec_produce_n(): several items with one
 * timestamp, published together.
 *
 * The fast path is the one of flightrec_produce() for n items at once: the
 * deadline is 0 while the items are written (a signal handler recording in
 * between goes to the signal ring), one counter read, one check that the
 * deadline holds and that head + n stays below the head limit and inside
 * the ring's array (no wrap), n stores, one publication.  Anything else
 * (attach, a sync pair due, discard-mode fullness, the array's end, more
 * than FLIGHTREC_MAX_PENDING items) goes the way of prepare/add/commit,
 * with the counter value already read.
 */
#include <flightrec.h>

/* The record the way flightrec_prepare() would start it at @head, @now,
 * followed by flightrec_add() of every item and flightrec_commit(). */
static FLIGHTREC_COLD void record_generic(struct flightrec__writer *w,
                                          uintptr_t head, uint64_t now,
                                          uint64_t deadline,
                                          const struct flightrec_item_in *items,
                                          size_t n)
{
    struct flightrec_ctx ctx;
    atomic_thread_fence(memory_order_release); /* see flightrec_produce() */
    if (now >= deadline || head > UINTPTR_MAX - FLIGHTREC_MAX_PENDING ||
        head + FLIGHTREC_MAX_PENDING > w->head_limit) {
        ctx = flightrec__prepare_cold(w, head, now, deadline);
    } else {
        ctx.writer = w;
        ctx.head = head;
        ctx.limit = head + FLIGHTREC_MAX_PENDING;
        ctx.deadline = deadline;
        ctx.time_word = FLIGHTREC_TIME_EVENT(now, 0);
        ctx.dropping = 0;
    }
    for (size_t i = 0; i < n; i++)
        flightrec_add(&ctx, items[i].event, items[i].data);
    flightrec_commit(&ctx);
}

/* Whether head + n steps over the largest position: never in practice
 * with 64-bit positions; on 32-bit hosts that record takes the slow path,
 * which re-arms the head limit behind the wrap. */
#if UINTPTR_MAX > 0xffffffffu
#define POSITION_WRAPS(head, n) 0
#else
#define POSITION_WRAPS(head, n) ((head) > UINTPTR_MAX - (n))
#endif

/* Starts a record on the main writer: its deadline is 0 from here on. */
#define RECORD_BEGIN(w, deadline, now, ring, head)                          \
    struct flightrec__writer *w = &flightrec__self.main;                    \
    uint64_t deadline = w->deadline;                                        \
    w->deadline = 0;                                                        \
    atomic_signal_fence(memory_order_seq_cst);                              \
    uint64_t now = flightrec_counter();                                     \
    struct flightrec__ring_head *ring = w->ring;                            \
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed)

/* Publishes the items up to @end and re-arms the deadline. */
static FLIGHTREC_ALWAYS_INLINE void record_end(struct flightrec__writer *w,
                                               struct flightrec__ring_head *ring,
                                               uintptr_t end,
                                               uint64_t deadline)
{
    atomic_store_explicit(&ring->head, end, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    w->deadline = deadline;
}

static FLIGHTREC_ALWAYS_INLINE void put(struct flightrec_item *item,
                                        uint32_t time_word, uint32_t event,
                                        uintptr_t data)
{
    atomic_store_explicit(&item->event,
                          time_word | (event & FLIGHTREC_EVENT_MASK),
                          memory_order_relaxed);
    atomic_store_explicit(&item->data, data, memory_order_relaxed);
}

static FLIGHTREC_COLD void record_2_generic(struct flightrec__writer *w,
                                            uintptr_t head, uint64_t now,
                                            uint64_t deadline,
                                            uint32_t event0, uintptr_t data0,
                                            uint32_t event1, uintptr_t data1)
{
    const struct flightrec_item_in items[2] = { { event0, data0 },
                                                { event1, data1 } };
    record_generic(w, head, now, deadline, items, 2);
}

/* One of the two filtered (or recording stopped): the record holds the
 * other one, if any. */
static FLIGHTREC_COLD void produce_2_filtered(uint32_t event0, uintptr_t data0,
                                             uint32_t event1, uintptr_t data1)
{
    if (flightrec_event_enabled(event0))
        flightrec_produce(event0, data0);
    else if (flightrec_event_enabled(event1))
        flightrec_produce(event1, data1);
}

void flightrec_produce_2(uint32_t event0, uintptr_t data0, uint32_t event1,
                         uintptr_t data1)
{
    if (FLIGHTREC_UNLIKELY(!flightrec_event_enabled(event0) ||
                           !flightrec_event_enabled(event1))) {
        produce_2_filtered(event0, data0, event1, data1);
        return;
    }
    RECORD_BEGIN(w, deadline, now, ring, head);
    uintptr_t slot = head & w->mask;
    if (FLIGHTREC_UNLIKELY(now >= deadline || POSITION_WRAPS(head, 2) ||
                           head + 2 > w->head_limit || slot == w->mask)) {
        record_2_generic(w, head, now, deadline, event0, data0, event1, data1);
        return;
    }
    atomic_thread_fence(memory_order_release); /* see flightrec_produce() */
    struct flightrec_item *item = &w->items[slot];
    uint32_t time_word = FLIGHTREC_TIME_EVENT(now, 0);
    put(&item[0], time_word, event0, data0);
    put(&item[1], time_word, event1, data1);
    record_end(w, ring, head + 2, deadline);
}

/* More than FLIGHTREC_MAX_PENDING items, published in parts by
 * flightrec_add(), or none. */
static FLIGHTREC_COLD void produce_n_parts(const struct flightrec_item_in *items,
                                          size_t n)
{
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    for (size_t i = 0; i < n; i++)
        flightrec_add(&ctx, items[i].event, items[i].data);
    flightrec_commit(&ctx);
}

void flightrec_produce_n(const struct flightrec_item_in *items, size_t n)
{
    if (FLIGHTREC_UNLIKELY(n - 1 >= FLIGHTREC_MAX_PENDING)) {
        produce_n_parts(items, n);
        return;
    }
    RECORD_BEGIN(w, deadline, now, ring, head);
    uintptr_t slot = head & w->mask;
    if (FLIGHTREC_UNLIKELY(now >= deadline || POSITION_WRAPS(head, n) ||
                           head + n > w->head_limit || slot + n > w->mask + 1)) {
        record_generic(w, head, now, deadline, items, n);
        return;
    }
    atomic_thread_fence(memory_order_release); /* see flightrec_produce() */
    struct flightrec_item *start = &w->items[slot], *next = start;
    uint32_t time_word = FLIGHTREC_TIME_EVENT(now, 0);
    const struct flightrec_item_in *end = items + n;
    do {
        /* flightrec_event_enabled(), with the id masked once for both. */
        uint32_t id = items->event & FLIGHTREC_EVENT_MASK;
        uint32_t word = atomic_load_explicit(
            &flightrec__control_page.filter[id >> 5], memory_order_relaxed);
        if ((word >> (id & 31u)) & 1u) {
            atomic_store_explicit(&next->event, time_word | id,
                                  memory_order_relaxed);
            atomic_store_explicit(&next->data, items->data,
                                  memory_order_relaxed);
            next++;
        }
    } while (++items != end);
    record_end(w, ring, head + (uintptr_t)(next - start), deadline);
}
