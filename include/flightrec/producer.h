/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief The recording hot path: inline, one ring per thread, no lock, no
 * atomic read-modify-write, no system call, no allocation.
 *
 * Each thread writes only its own ring; the ring's head is published with a
 * store-release, and a reader acquires it.  Everything that is not "read the
 * counter, store an item, publish the head" happens in out-of-line slow paths
 * (src/producer/produce.c, produce-multi.c): attaching a ring on a thread's
 * first event, writing uptime sync items, discard-mode fullness, and
 * records made by a signal handler that interrupted a record of the same
 * thread.
 *
 * Two per-thread numbers steer all of these.  The fast path runs while
 * counter < deadline and head < head_limit.  The slow path sets the
 * deadline to the time a sync item is due (2^21 ticks after the last) and
 * the head limit to where one is due by count (a quarter ring later),
 * where a discard-mode ring could be full, or where the head's lap of the
 * ring ends (so that slots need no mask and records no wrap check); a
 * thread without rings has a deadline that is always due
 * (FLIGHTREC__DEADLINE_DUE) and head limit 0.  While a record is being written the
 * deadline holds the busy mark (FLIGHTREC__DEADLINE_BUSY: 0, or on x86-64
 * and 32-bit firmware a high half of 0), so a signal handler that records
 * in between takes the slow path, which writes to the thread's signal ring
 * instead of corrupting the interrupted record.
 */
#ifndef FLIGHTREC_PRODUCER_H
#define FLIGHTREC_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "format.h"
#include "port.h"

FLIGHTREC_BEGIN_DECLS

struct flightrec__writer;

/** A record of several items with one timestamp, on the caller's stack. */
struct flightrec_ctx {
    struct flightrec__writer *writer;   /**< NULL: recording is stopped */
    uintptr_t head;
    /** Items flightrec_add() may still write without its slow path: a
     * count rather than a limit position, so that the compiler sees the
     * first add of a record started on the fast path need not check. */
    uintptr_t room;
    uint64_t deadline;
    uint32_t time_word;
    uint32_t dropping;  /**< items are counted as dropped (slow path) */
};

/** Items a record may hold before add() publishes part of it; a reader
 * keeps this many items away from the head of an overwriting ring. */
#define FLIGHTREC_MAX_PENDING 8u

/** An item for flightrec_produce_n(). */
struct flightrec_item_in {
    uint32_t event;
    uintptr_t data;
};

/* The inline path out of line, for C++ (which has no C11 _Atomic) and for
 * bindings; the same semantics, one call more. */
FLIGHTREC_API int flightrec__event_enabled_call(uint32_t event);
FLIGHTREC_API void flightrec__produce_call(uint32_t event, uintptr_t data);
FLIGHTREC_API void flightrec__prepare_call(struct flightrec_ctx *ctx);
FLIGHTREC_API void flightrec__add_call(struct flightrec_ctx *ctx,
                                       uint32_t event, uintptr_t data);
FLIGHTREC_API void flightrec__commit_call(struct flightrec_ctx *ctx);

#ifdef __cplusplus
static inline int flightrec_event_enabled(uint32_t event)
{
    return flightrec__event_enabled_call(event);
}
static inline void flightrec_produce(uint32_t event, uintptr_t data)
{
    flightrec__produce_call(event, data);
}
static inline void flightrec_prepare(struct flightrec_ctx *ctx)
{
    flightrec__prepare_call(ctx);
}
static inline void flightrec_add(struct flightrec_ctx *ctx, uint32_t event,
                                 uintptr_t data)
{
    flightrec__add_call(ctx, event, data);
}
static inline void flightrec_commit(struct flightrec_ctx *ctx)
{
    flightrec__commit_call(ctx);
}
#else /* C: the inline hot path */

#include <stdatomic.h>

/** One ring item as stored in memory (the stream packs it). */
struct flightrec_item {
    _Atomic uint32_t event;   /**< time << 10 | event id */
    _Atomic uintptr_t data;
};

/** The part of a ring the hot path touches (the rest is private). */
struct flightrec__ring_head {
    _Atomic uintptr_t head;   /**< position of the next item; free-running */
};

/** A thread's writer state for one of its rings. Owned by the thread. */
struct flightrec__writer {
    union {
        uint64_t deadline;              /**< see the file comment */
        uint32_t deadline_half[2];      /**< little-endian halves */
    };
    uintptr_t head_limit;               /**< see the file comment */
    struct flightrec__ring_head *ring;
    struct flightrec_item *items;
    uintptr_t mask;                     /**< items - 1 */
    /** The address of items[0] minus the first position of the head's lap
     * (times the item size): the slot of a position below head_limit,
     * which never passes the lap's end, without the mask. */
    uintptr_t lap_base;
};

struct flightrec__thread {
    struct flightrec__writer main;      /**< thread context */
    struct flightrec__writer signal;    /**< handlers interrupting a record */
};

#if defined(FLIGHTREC_PORT_FIRMWARE)
/* Firmware (one CPU, tasks switched cooperatively): the CPU is the
 * recorder's one thread and interrupts are its signals, so the writer state
 * is a plain global (docs/recording.md, "Firmware"). */
#define FLIGHTREC__THREAD_LOCAL
#define FLIGHTREC__TLS_MODEL
#else
#define FLIGHTREC__THREAD_LOCAL _Thread_local
#define FLIGHTREC__TLS_MODEL __attribute__((tls_model("initial-exec")))
#endif
extern FLIGHTREC_API FLIGHTREC__THREAD_LOCAL struct flightrec__thread
    flightrec__self FLIGHTREC__TLS_MODEL;
#if defined(FLIGHTREC_PORT_FIRMWARE)
#define FLIGHTREC__CONTROL_PAGE_BYTES 128u
#else
/* The largest page size of Linux: the page is mapped from the session
 * file over this object, so nothing else may share its page. */
#define FLIGHTREC__CONTROL_PAGE_BYTES 65536u
#endif
/** What the hot path reads besides its own thread's state, alone in its
 * page(s): in a session this page is the session file's hot page
 * (include/flightrec/region.h), so a `flightrec ctl` from another process
 * changes what every thread's next event sees. */
struct flightrec__control_page {
    /** The filter in force: 1024 bits, set = recorded.  It is the filter
     * the program asked for while recording is started, and all zero while
     * it is stopped, so one bit test covers both. */
    _Atomic uint32_t filter[FLIGHTREC_EVENT_COUNT / 32];
#if FLIGHTREC__CONTROL_PAGE_BYTES > 128
    unsigned char unused[FLIGHTREC__CONTROL_PAGE_BYTES - 128];
#endif
};
extern FLIGHTREC_API struct flightrec__control_page flightrec__control_page;

#if defined(FLIGHTREC_PORT_FIRMWARE)
/* One CPU: whatever reads a ring (a task, an interrupt handler, the fault
 * dump) runs on the CPU that wrote it, which sees its own stores in
 * program order; only the compiler must keep them in order, and the
 * barriers (two DMBs on Cortex-M) are not needed. */
#define FLIGHTREC__ITEMS_AFTER_HEAD() atomic_signal_fence(memory_order_release)
#define FLIGHTREC__PUBLISH(head_word, value)                          \
    (atomic_signal_fence(memory_order_release),                       \
     atomic_store_explicit((head_word), (value), memory_order_relaxed))
#else
/* Orders the previous head publication before the item stores, so a
 * reader validating its copy by re-reading the head is right on weakly
 * ordered CPUs too (no instruction on x86). */
#define FLIGHTREC__ITEMS_AFTER_HEAD() atomic_thread_fence(memory_order_release)
/* Release: a reader that sees the new head sees the items. */
#define FLIGHTREC__PUBLISH(head_word, value) \
    atomic_store_explicit((head_word), (value), memory_order_release)
#endif

/* flightrec__produce_slow() reading the counter again (the later counter
 * value only times the item a little later; the writer is still marked
 * busy).  Firmware: four argument words, all in registers on 32-bit ARM,
 * so that the fast path needs no stack frame for the call's arguments.
 * x86-64: the fast path never joins the counter's two halves. */
FLIGHTREC_API void flightrec__produce_slow_late(uint32_t event,
                                                uintptr_t data,
                                                uint64_t deadline);
#if defined(FLIGHTREC_PORT_FIRMWARE)
#define FLIGHTREC__PRODUCE_SLOW(event, data, now, deadline) \
    ((void)(now), flightrec__produce_slow_late(event, data, deadline))
#else
#define FLIGHTREC__PRODUCE_SLOW(event, data, now, deadline) \
    flightrec__produce_slow(event, data, now, deadline)
#endif

/* Stores an item's two words (not yet published: the head store that
 * follows publishes it). */
static FLIGHTREC_ALWAYS_INLINE void
flightrec__store_item(struct flightrec_item *item, uint32_t word,
                      uintptr_t data)
{
#if defined(FLIGHTREC_PORT_FIRMWARE) && defined(__GNUC__) && \
    defined(__thumb2__) && UINTPTR_MAX == 0xffffffffu
    /* One CPU, and a reader takes an item only below the head: the two
     * words may go in one STRD, which compilers do not make of two atomic
     * stores (nor of a plain struct store). */
    struct flightrec__item_words {
        uint32_t word;
        uintptr_t data;
    } __attribute__((may_alias));
    _Static_assert(sizeof(struct flightrec__item_words) ==
                       sizeof(struct flightrec_item),
                   "a ring item is its two words");
    __asm__("strd %1, %2, [%3]"
            : "=m"(*(struct flightrec__item_words *)(void *)item)
            : "r"(word), "r"(data), "r"(item));
#else
    atomic_store_explicit(&item->event, word, memory_order_relaxed);
    atomic_store_explicit(&item->data, data, memory_order_relaxed);
#endif
}

FLIGHTREC_API void flightrec__produce_slow(uint32_t event, uintptr_t data,
                                           uint64_t now, uint64_t deadline);

/* The counter value at uptime 0 (after start-up), for code of ours outside
 * the library that writes items timed on the counter itself (the preload
 * library's context-switch rings). */
FLIGHTREC_API uint64_t flightrec__counter_base(void);

/* The ring slot of position @a head. */
static FLIGHTREC_ALWAYS_INLINE struct flightrec_item *
flightrec__slot(const struct flightrec__writer *w, uintptr_t head)
{
    return &w->items[head & w->mask];
}

/* The slot of a position below the head limit: one load and one mask
 * fewer. */
static FLIGHTREC_ALWAYS_INLINE struct flightrec_item *
flightrec__lap_slot(const struct flightrec__writer *w, uintptr_t head)
{
#if defined(__x86_64__) && defined(__LP64__) && defined(__clang__)
    /* 16-byte items: 2 * head, scaled by 8 in the stores' addresses, is
     * one instruction less than the shift and add clang chooses (gcc
     * computes the address in one more instruction either way). */
    uintptr_t twice = head + head;
    __asm__("" : "+r"(twice));
    return (struct flightrec_item *)(w->lap_base + twice * 8);
#else
    return (struct flightrec_item *)(w->lap_base +
                                     head * sizeof(struct flightrec_item));
#endif
}

/* The lap slot of @a head and, in @a next, head + 1.  gcc on x86-64 keeps
 * head and makes the slot in a copy (mov, shl, add); computing head + 1
 * into the other register first (lea) saves the copy. */
static FLIGHTREC_ALWAYS_INLINE struct flightrec_item *
flightrec__lap_slot_next(const struct flightrec__writer *w, uintptr_t head,
                         uintptr_t *next)
{
#if defined(__x86_64__) && defined(__LP64__) && defined(__GNUC__) && \
    !defined(__clang__)
    _Static_assert(sizeof(struct flightrec_item) == 16, "16-byte items");
    uintptr_t offset = head;
    __asm__("lea 1(%[offset]), %[next]\n\tshl $4, %[offset]"
            : [offset] "+r"(offset), [next] "=r"(*next));
    return (struct flightrec_item *)(w->lap_base + offset);
#else
    *next = head + 1;
    return flightrec__lap_slot(w, head);
#endif
}

/* Whether head + n passes the largest position (never with 64-bit
 * positions: telling the compiler so lets it drop checks): that record
 * takes the slow path, which re-arms behind it. */
#if UINTPTR_MAX > 0xffffffffu
#define FLIGHTREC__POSITION_WRAPS(head, n) 0
#else
#define FLIGHTREC__POSITION_WRAPS(head, n) ((head) > UINTPTR_MAX - (n))
#endif

#if defined(__clang__)
#define FLIGHTREC__ASSUME(cond) __builtin_assume(cond)
#elif defined(__GNUC__)
#define FLIGHTREC__ASSUME(cond) ((cond) ? (void)0 : __builtin_unreachable())
#else
#define FLIGHTREC__ASSUME(cond) ((void)0)
#endif

#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__) && \
    !defined(FLIGHTREC_PORT_COUNTER)
#define FLIGHTREC__SPLIT_DEADLINE 1
/* Reads the counter and compares it with the deadline half by half (cmp,
 * sbb), without first joining rdtsc's two halves into one register. */
static FLIGHTREC_ALWAYS_INLINE uint32_t
flightrec__counter_due(int *due, const uint32_t *deadline_low,
                       uint32_t deadline_high)
{
    uint32_t low, high;
    __asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
    __asm__("cmpl %[dlow], %[low]\n\tsbbl %[dhigh], %[high]"
            : "=@ccae"(*due), [high] "+r"(high)
            : [low] "r"(low), [dlow] "m"(*deadline_low),
              [dhigh] "r"(deadline_high));
    return low;
}

/* The start of flightrec_produce() and flightrec_prepare() with the split
 * compare: saves the deadline's high half into @deadline_high, marks the
 * writer busy (see FLIGHTREC__DEADLINE_BUSY()), reads the counter and
 * says in @due whether the deadline is reached. */
static FLIGHTREC_ALWAYS_INLINE uint64_t flightrec__busy_counter_due(
    struct flightrec__writer *w, uint32_t *deadline_high, int *due)
{
    *deadline_high = w->deadline_half[1];
    w->deadline_half[1] = 0;
    atomic_signal_fence(memory_order_seq_cst);
    return flightrec__counter_due(due, &w->deadline_half[0], *deadline_high);
}
#else
#define FLIGHTREC__SPLIT_DEADLINE 0
#endif
/* Firmware on a little-endian 32-bit CPU: flightrec_produce() clears only
 * the deadline's high half too (one register of zero, not two), with the
 * 64-bit compare as it is; its counter should then start at 2^32 or more
 * (the Cortex-M port's does), or events take the slow path until then. */
#if defined(FLIGHTREC_PORT_FIRMWARE) && UINTPTR_MAX == 0xffffffffu && \
    defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FLIGHTREC__HIGH_MARK 1
#else
#define FLIGHTREC__HIGH_MARK 0
#endif
/* The busy mark: flightrec_produce() with the split compare (or the high
 * mark) clears only the deadline's high half, the other hot paths the
 * whole deadline; a slow path that finds a deadline below
 * FLIGHTREC__DEADLINE_DUE knows it interrupted a record (or that the
 * thread has no rings).  Armed deadlines are at least
 * FLIGHTREC__DEADLINE_DUE (the slow path makes sure, src/producer/produce.c
 * rearm()). */
#if FLIGHTREC__SPLIT_DEADLINE || FLIGHTREC__HIGH_MARK
#define FLIGHTREC__DEADLINE_DUE ((uint64_t)1 << 32)
#else
#define FLIGHTREC__DEADLINE_DUE ((uint64_t)1)
#endif
#define FLIGHTREC__DEADLINE_BUSY(deadline) \
    ((deadline) < FLIGHTREC__DEADLINE_DUE)

/**
 * @brief Whether @a event passes the global enable and the event filter:
 * one relaxed load and a bit test.
 */
static FLIGHTREC_ALWAYS_INLINE int flightrec_event_enabled(uint32_t event)
{
    uint32_t id = event & FLIGHTREC_EVENT_MASK;
#if (defined(__x86_64__) || defined(__i386__)) && \
    defined(__GCC_ASM_FLAG_OUTPUTS__)
    if (__builtin_constant_p(id)) {
        /* A constant id: one test of the filter byte in memory.  Compilers
         * do not fold an atomic load into the test; a byte load cannot be
         * torn by a concurrent store of its word (x86: little-endian, bit
         * id of the filter is bit id % 8 of byte id / 8). */
        int set;
        __asm__ __volatile__(
            "testb %2, %1"
            : "=@ccnz"(set)
            : "m"(((const volatile unsigned char *)
                       flightrec__control_page.filter)[id >> 3]),
              "iq"((unsigned char)(1u << (id & 7u))));
        return set;
    }
#endif
    return (int)((atomic_load_explicit(
                      &flightrec__control_page.filter[id >> 5],
                      memory_order_relaxed) >>
                  (id & 31u)) & 1u);
}

/**
 * @brief Records one item: @a event (0..1023) with @a data, timed now.
 *
 * Async-signal-safe, never blocks, never fails visibly: a full ring in
 * discard mode counts the item as dropped; in flight mode the oldest item
 * is overwritten.
 */
static FLIGHTREC_ALWAYS_INLINE void flightrec_produce(uint32_t event,
                                                      uintptr_t data)
{
    if (FLIGHTREC_UNLIKELY(!flightrec_event_enabled(event)))
        return;
    struct flightrec__writer *w = &flightrec__self.main;
#if FLIGHTREC__SPLIT_DEADLINE
    uint32_t deadline_high;
    int due;
    uint64_t now = flightrec__busy_counter_due(w, &deadline_high, &due);
    struct flightrec__ring_head *ring = w->ring;
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (FLIGHTREC_UNLIKELY(due || head >= w->head_limit)) {
        flightrec__produce_slow_late(
            event, data, (uint64_t)deadline_high << 32 | w->deadline_half[0]);
        return;
    }
#else
    uint64_t deadline = w->deadline;
#if FLIGHTREC__HIGH_MARK
    w->deadline_half[1] = 0; /* see FLIGHTREC__DEADLINE_BUSY() */
#else
    w->deadline = 0; /* a signal handler recording from here on goes slow */
#endif
    atomic_signal_fence(memory_order_seq_cst);
#if FLIGHTREC__HIGH_MARK
    /* The head limit and the ring, adjacent words, in one load (ldrd),
     * before the counter call; after the mark, so that they are the ones
     * no handler changes until the record ends. */
    _Static_assert(offsetof(struct flightrec__writer, ring) ==
                       offsetof(struct flightrec__writer, head_limit) +
                           sizeof(uintptr_t),
                   "the ring follows the head limit");
    uintptr_t limit_ring[2];
    __builtin_memcpy(limit_ring,
                     (const unsigned char *)w +
                         offsetof(struct flightrec__writer, head_limit),
                     sizeof(limit_ring));
    uint64_t now = flightrec_counter();
    struct flightrec__ring_head *ring =
        (struct flightrec__ring_head *)limit_ring[1];
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (FLIGHTREC_UNLIKELY(now >= deadline || head >= limit_ring[0])) {
        FLIGHTREC__PRODUCE_SLOW(event, data, now, deadline);
        return;
    }
#else
    uint64_t now = flightrec_counter();
    struct flightrec__ring_head *ring = w->ring;
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (FLIGHTREC_UNLIKELY(now >= deadline || head >= w->head_limit)) {
        FLIGHTREC__PRODUCE_SLOW(event, data, now, deadline);
        return;
    }
#endif
#endif
    FLIGHTREC__ITEMS_AFTER_HEAD();
    uintptr_t next;
    struct flightrec_item *item = flightrec__lap_slot_next(w, head, &next);
    flightrec__store_item(item, FLIGHTREC_TIME_EVENT(now, event), data);
    FLIGHTREC__PUBLISH(&ring->head, next);
    atomic_signal_fence(memory_order_seq_cst);
#if FLIGHTREC__SPLIT_DEADLINE
    w->deadline_half[1] = deadline_high;
#elif FLIGHTREC__HIGH_MARK
    w->deadline_half[1] = (uint32_t)(deadline >> 32);
#else
    w->deadline = deadline;
#endif
}

FLIGHTREC_API void flightrec__prepare_slow(struct flightrec_ctx *ctx,
                                           uint64_t now);
FLIGHTREC_API void flightrec__add_slow(struct flightrec_ctx *ctx,
                                       uint32_t event, uintptr_t data);

/*
 * The slow paths take the record by address.  They get it by value here
 * and hand back a copy, so that the caller's flightrec_ctx never has its
 * address taken: the compiler keeps it in registers on the fast path
 * instead of on the stack.
 */
#define FLIGHTREC__COLD_COPY static __attribute__((noinline, cold, unused))

/*
 * What a record keeps of its writer's deadline, for flightrec_commit() to
 * restore: with the split compare, prepare clears only the deadline's high
 * half, so the record keeps that half, and the slow paths, which work with
 * whole deadlines, put the low half of the one to restore into the writer
 * at once (harmless while the high half is 0: the writer is busy).
 */
static FLIGHTREC_ALWAYS_INLINE uint64_t
flightrec__record_deadline(struct flightrec__writer *w, uint64_t deadline)
{
#if FLIGHTREC__SPLIT_DEADLINE
    w->deadline_half[0] = (uint32_t)deadline;
    return deadline >> 32;
#else
    (void)w;
    return deadline;
#endif
}

FLIGHTREC__COLD_COPY struct flightrec_ctx
flightrec__prepare_cold(struct flightrec__writer *w, uintptr_t head,
                        uint64_t now, uint64_t deadline)
{
    struct flightrec_ctx ctx;
    ctx.writer = w;
    ctx.head = head;
    ctx.room = 0;
    ctx.deadline = deadline;
    ctx.time_word = FLIGHTREC_TIME_EVENT(now, 0);
    ctx.dropping = 0;
    flightrec__prepare_slow(&ctx, now);
    return ctx;
}

/**
 * @brief Starts a record: reads the counter once for all its items.
 *
 * Must be followed by flightrec_add() calls and one flightrec_commit() on
 * the same thread.  A signal handler may record in between; its items go to
 * the thread's signal ring.  Records of more than FLIGHTREC_MAX_PENDING items
 * are published in parts.
 */
static FLIGHTREC_ALWAYS_INLINE void flightrec_prepare(struct flightrec_ctx *ctx)
{
    struct flightrec__writer *w = &flightrec__self.main;
#if FLIGHTREC__SPLIT_DEADLINE
    uint32_t deadline_high;
    int due;
    uint64_t now = flightrec__busy_counter_due(w, &deadline_high, &due);
#else
    uint64_t deadline = w->deadline;
    w->deadline = 0;
    atomic_signal_fence(memory_order_seq_cst);
    uint64_t now = flightrec_counter();
    int due = now >= deadline;
#endif
    uintptr_t head = atomic_load_explicit(&w->ring->head, memory_order_relaxed);
    /* The fast path takes the record only if a whole part of it fits below
     * the head limit; the slow path handles the rest (and a stopped
     * recorder, whose filter rejects every add). */
    if (FLIGHTREC_UNLIKELY(
            due || FLIGHTREC__POSITION_WRAPS(head, FLIGHTREC_MAX_PENDING) ||
            head + FLIGHTREC_MAX_PENDING > w->head_limit)) {
#if FLIGHTREC__SPLIT_DEADLINE
        /* The slow path wants the whole counter value: read it again, as
         * flightrec_produce() does. */
        *ctx = flightrec__prepare_cold(
            w, head, flightrec_counter(),
            (uint64_t)deadline_high << 32 | w->deadline_half[0]);
#else
        *ctx = flightrec__prepare_cold(w, head, now, deadline);
#endif
        return;
    }
    /* For the compiler: commit() need not check the writer. */
    FLIGHTREC__ASSUME(w != NULL);
    FLIGHTREC__ITEMS_AFTER_HEAD(); /* the slow path has its own */
    ctx->writer = w;
    ctx->head = head;
    ctx->room = FLIGHTREC_MAX_PENDING;
#if FLIGHTREC__SPLIT_DEADLINE
    ctx->deadline = deadline_high; /* see flightrec__record_deadline() */
#else
    ctx->deadline = deadline;
#endif
    ctx->time_word = FLIGHTREC_TIME_EVENT(now, 0);
    ctx->dropping = 0;
}

/* What flightrec__add_slow() changes in a record. */
struct flightrec__add_result {
    uintptr_t head;
    uintptr_t room;
};

FLIGHTREC__COLD_COPY struct flightrec__add_result
flightrec__add_cold(struct flightrec__writer *w, uintptr_t head,
                    uintptr_t room, uint64_t deadline, uint32_t time_word,
                    uint32_t dropping, uint32_t event, uintptr_t data)
{
    struct flightrec_ctx ctx;
    ctx.writer = w;
    ctx.head = head;
    ctx.room = room;
    ctx.deadline = deadline;
    ctx.time_word = time_word;
    ctx.dropping = dropping;
    flightrec__add_slow(&ctx, event, data);
    struct flightrec__add_result result = { ctx.head, ctx.room };
    return result;
}

/** @brief Adds an item to the record (skipped if the filter rejects it). */
static FLIGHTREC_ALWAYS_INLINE void flightrec_add(struct flightrec_ctx *ctx,
                                                  uint32_t event,
                                                  uintptr_t data)
{
    if (FLIGHTREC_UNLIKELY(ctx->room == 0)) {
        struct flightrec__add_result r = flightrec__add_cold(
            ctx->writer, ctx->head, ctx->room, ctx->deadline,
            ctx->time_word, ctx->dropping, event, data);
        ctx->head = r.head;
        ctx->room = r.room;
        return;
    }
    if (FLIGHTREC_UNLIKELY(!flightrec_event_enabled(event)))
        return;
    /* While there is room, the record's positions are on the lap of the
     * writer's lap base (prepare and the slow paths make sure). */
    struct flightrec_item *item =
        flightrec__lap_slot(ctx->writer, ctx->head);
    atomic_store_explicit(&item->event,
                          ctx->time_word | (event & FLIGHTREC_EVENT_MASK),
                          memory_order_relaxed);
    atomic_store_explicit(&item->data, data, memory_order_relaxed);
    ++ctx->head;
    --ctx->room;
}

/** @brief Publishes the record's items together (store-release). */
static FLIGHTREC_ALWAYS_INLINE void flightrec_commit(struct flightrec_ctx *ctx)
{
    struct flightrec__writer *w = ctx->writer;
    if (FLIGHTREC_UNLIKELY(w == NULL))
        return;
    FLIGHTREC__PUBLISH(&w->ring->head, ctx->head);
    atomic_signal_fence(memory_order_seq_cst);
#if FLIGHTREC__SPLIT_DEADLINE
    w->deadline_half[1] = (uint32_t)ctx->deadline;
#else
    w->deadline = ctx->deadline;
#endif
}

/* flightrec_produce_2() and flightrec_produce_n() are inline in C; the
 * library builds the exported functions of the same names (flightrec.h)
 * from the same code, for C++ and bindings. */

FLIGHTREC_API void flightrec__produce_2_filtered(uint32_t event0,
                                                 uintptr_t data0,
                                                 uint32_t event1,
                                                 uintptr_t data1);
FLIGHTREC_API void flightrec__produce_2_slow(uint32_t event0, uintptr_t data0,
                                             uint32_t event1, uintptr_t data1,
                                             uint64_t now, uint64_t deadline);
FLIGHTREC_API void
flightrec__produce_n_slow(const struct flightrec_item_in *items, size_t n,
                          uint64_t now, uint64_t deadline);

/* The items of a record of n <= FLIGHTREC_MAX_PENDING, written out with
 * constant indices rather than as a loop, for clang: it keeps a caller's
 * array of items in memory (and reloads its events) when a loop variable
 * indexes it, and splits it into registers (and knows constant events)
 * when every index is a constant.  gcc does as well with the unrolled
 * loop, which is smaller where the events are not constants; and code
 * built for size keeps the loop. */
#if defined(__clang__) && !defined(__OPTIMIZE_SIZE__)
#define FLIGHTREC__PENDING_WRITTEN_OUT 1
#else
#define FLIGHTREC__PENDING_WRITTEN_OUT 0
#endif
#if defined(__GNUC__)
#define FLIGHTREC__UNROLL _Pragma("GCC unroll 8")
#else
#define FLIGHTREC__UNROLL
#endif
#define FLIGHTREC__EACH_PENDING(step) \
    step(0) step(1) step(2) step(3) step(4) step(5) step(6) step(7)
_Static_assert(FLIGHTREC_MAX_PENDING == 8,
               "FLIGHTREC__EACH_PENDING has one step per pending item");
#define FLIGHTREC__COPY_PENDING(k) \
    if (n > (k))                     \
        copy.item[k] = items[k];
#define FLIGHTREC__PUT_PENDING(k)                                        \
    if (n > (k) &&                                                       \
        FLIGHTREC_LIKELY(flightrec_event_enabled(items[k].event)))       \
        flightrec__put(next++, time_word, items[k].event, items[k].data);

static FLIGHTREC_ALWAYS_INLINE void flightrec__put(struct flightrec_item *item,
                                                   uint32_t time_word,
                                                   uint32_t event,
                                                   uintptr_t data)
{
    flightrec__store_item(item, time_word | (event & FLIGHTREC_EVENT_MASK),
                          data);
}

/* flightrec_produce_2() */
static FLIGHTREC_ALWAYS_INLINE void flightrec__produce_2_fast(uint32_t event0,
                                                              uintptr_t data0,
                                                              uint32_t event1,
                                                              uintptr_t data1)
{
    if (FLIGHTREC_UNLIKELY(!flightrec_event_enabled(event0) ||
                           !flightrec_event_enabled(event1))) {
        flightrec__produce_2_filtered(event0, data0, event1, data1);
        return;
    }
    struct flightrec__writer *w = &flightrec__self.main;
    uint64_t deadline = w->deadline;
    w->deadline = 0; /* as in flightrec_produce() */
    atomic_signal_fence(memory_order_seq_cst);
    uint64_t now = flightrec_counter();
    struct flightrec__ring_head *ring = w->ring;
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (FLIGHTREC_UNLIKELY(now >= deadline ||
                           FLIGHTREC__POSITION_WRAPS(head, 2) ||
                           head + 2 > w->head_limit)) {
        flightrec__produce_2_slow(event0, data0, event1, data1, now,
                                  deadline);
        return;
    }
    FLIGHTREC__ITEMS_AFTER_HEAD();
    struct flightrec_item *item = flightrec__lap_slot(w, head);
    uint32_t time_word = FLIGHTREC_TIME_EVENT(now, 0);
    flightrec__put(&item[0], time_word, event0, data0);
    flightrec__put(&item[1], time_word, event1, data1);
    FLIGHTREC__PUBLISH(&ring->head, head + 2);
    atomic_signal_fence(memory_order_seq_cst);
    w->deadline = deadline;
}

/* Up to FLIGHTREC_MAX_PENDING items, passed by value. */
struct flightrec__pending {
    struct flightrec_item_in item[FLIGHTREC_MAX_PENDING];
};

/* The slow path of a record of 1..FLIGHTREC_MAX_PENDING items, given a
 * copy of them: the caller's array does not escape, so that the compiler
 * still knows the events of an array filled once and recorded often. */
FLIGHTREC__COLD_COPY void
flightrec__produce_n_cold(struct flightrec__pending copy, size_t n,
                          uint64_t now, uint64_t deadline)
{
    flightrec__produce_n_slow(copy.item, n, now, deadline);
}

/* flightrec_produce_n() */
static FLIGHTREC_ALWAYS_INLINE void
flightrec__produce_n_fast(const struct flightrec_item_in *items, size_t n)
{
    struct flightrec__writer *w = &flightrec__self.main;
    uint64_t deadline = w->deadline;
    w->deadline = 0; /* as in flightrec_produce() */
    atomic_signal_fence(memory_order_seq_cst);
    uint64_t now = flightrec_counter();
    struct flightrec__ring_head *ring = w->ring;
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (FLIGHTREC_UNLIKELY(n - 1 >= FLIGHTREC_MAX_PENDING)) {
        flightrec__produce_n_slow(items, n, now, deadline);
        return;
    }
    if (FLIGHTREC_UNLIKELY(now >= deadline ||
                           FLIGHTREC__POSITION_WRAPS(head, n) ||
                           head + n > w->head_limit)) {
        struct flightrec__pending copy;
#if FLIGHTREC__PENDING_WRITTEN_OUT
        FLIGHTREC__EACH_PENDING(FLIGHTREC__COPY_PENDING)
#else
        for (size_t i = 0; i < n; i++)
            copy.item[i] = items[i];
#endif
        flightrec__produce_n_cold(copy, n, now, deadline);
        return;
    }
    FLIGHTREC__ITEMS_AFTER_HEAD();
    struct flightrec_item *start = flightrec__lap_slot(w, head), *next = start;
    uint32_t time_word = FLIGHTREC_TIME_EVENT(now, 0);
#if FLIGHTREC__PENDING_WRITTEN_OUT
    FLIGHTREC__EACH_PENDING(FLIGHTREC__PUT_PENDING)
#else
    FLIGHTREC__UNROLL
    for (size_t i = 0; i < n; i++) {
        if (FLIGHTREC_LIKELY(flightrec_event_enabled(items[i].event)))
            flightrec__put(next++, time_word, items[i].event, items[i].data);
    }
#endif
    FLIGHTREC__PUBLISH(&ring->head, head + (uintptr_t)(next - start));
    atomic_signal_fence(memory_order_seq_cst);
    w->deadline = deadline;
}

#if !defined(FLIGHTREC__OUT_OF_LINE_MULTI)
/**
 * @brief Records two items with one timestamp, published together.
 *
 * If the filter rejects one of them, the other is recorded alone.
 */
static FLIGHTREC_ALWAYS_INLINE void flightrec_produce_2(uint32_t event0,
                                                        uintptr_t data0,
                                                        uint32_t event1,
                                                        uintptr_t data1)
{
    flightrec__produce_2_fast(event0, data0, event1, data1);
}

/**
 * @brief Records @a n items with one timestamp, published together (in
 * parts of FLIGHTREC_MAX_PENDING items when larger); items the filter
 * rejects are left out.
 */
static FLIGHTREC_ALWAYS_INLINE void
flightrec_produce_n(const struct flightrec_item_in *items, size_t n)
{
    flightrec__produce_n_fast(items, n);
}
#endif

#endif /* __cplusplus */

FLIGHTREC_END_DECLS

#endif
