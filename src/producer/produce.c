/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Slow paths of the hot path in flightrec/producer.h (the multi-item calls
 * are in produce-multi.c).
 *
 * A slow path runs when the writer's deadline or head limit is reached:
 * - deadline 0 and the thread has no rings: attach them;
 * - deadline 0 and the thread has rings: a signal handler interrupted a
 *   record of this thread; record into the thread's signal ring instead,
 *   with the same protocol one level down (deeper nesting is counted);
 * - otherwise a sync item is due (2^21 ticks or a quarter ring since the
 *   last) or, in discard mode, the ring may be full.
 * Every slow path ends by re-arming the deadline (rearm()).
 */
#include "runtime.h"

#include "../region/order.h"

#include <string.h>

#ifndef FLIGHTREC_PORT_FIRMWARE
#include <errno.h>
/* The slow paths keep errno: attaching a ring makes system calls, and a
 * record made around a libc call (the preload library's wrappers) must not
 * change what the program sees.  The fast paths make none.  Firmware makes
 * no system calls. */
#define ERRNO_SAVE() int saved_errno = errno
#define ERRNO_RESTORE() (errno = saved_errno)
#else
#define ERRNO_SAVE() (void)0
#define ERRNO_RESTORE() (void)0
#endif

/* The head the hot path reads before the thread has a ring. */
static struct flightrec__ring_head unattached_head;

/* A thread's main writer starts armed and due, not busy: were it busy, a
 * handler that attached the thread between the hot path's load of the
 * deadline and its busy store would leave the interrupted event's slow path
 * taking the thread for one inside a record, and the main writer busy for
 * good (every later event in the slow path and the signal ring). */
FLIGHTREC__THREAD_LOCAL struct flightrec__thread flightrec__self = {
    .main = { .deadline = FLIGHTREC__DEADLINE_DUE, .ring = &unattached_head },
    .signal = { .ring = &unattached_head },
};

/* Per-thread state only the slow paths touch. */
struct writer_sync {
    uint64_t time;          /* counter at the last sync pair */
    uintptr_t head;         /* head after it */
    int none_yet;           /* no pair since the ring was bound */
};

static FLIGHTREC__THREAD_LOCAL struct {
    int attached;
    int attaching;
    int exited;                 /* the thread-exit hook ran */
    uintptr_t lost_attaching;   /* handler items while attaching */
    uint64_t attach_retry_at;   /* after a failed attach: not before */
    ring_t *ring[2];            /* 0: main, 1: signal */
    struct writer_sync sync[2];
} self_private;

/* After an attach that failed for want of memory, the next try waits this
 * many ticks: a thread without rings must not pay an attach per event. */
#define ATTACH_RETRY_TICKS ((uint64_t)1 << 26)

/* ctx->deadline of records without a writer because nesting went too
 * deep; each of their items is counted as dropped. */
#define DEADLINE_TOO_DEEP UINT64_MAX

enum { WRITER_MAIN = 0, WRITER_SIGNAL = 1 };

static struct flightrec__writer *writer_of(int which)
{
    return which == WRITER_MAIN ? &flightrec__self.main
                                : &flightrec__self.signal;
}

/* Not inline: called twice, once per writer. */
static __attribute__((noinline)) void writer_bind(struct flightrec__writer *w,
                                                  ring_t *ring)
{
    int which = w == &flightrec__self.main ? WRITER_MAIN : WRITER_SIGNAL;
    self_private.ring[which] = ring;
    self_private.sync[which].time = 0;
    self_private.sync[which].none_yet = 1;
    self_private.sync[which].head =
        atomic_load_explicit(&ring->head, memory_order_relaxed);
    /* The region ring's head word is the hot path's ring head. */
    w->ring = (struct flightrec__ring_head *)(void *)&ring->head;
    w->items = (struct flightrec_item *)(void *)ring_items(ring);
    w->mask = (uintptr_t)ring->capacity - 1;
    w->head_limit = 0;
    /* The main writer is bound inside its own slow path, which re-arms it
     * at the end; until then a signal handler must see 0.  The signal
     * writer is armed at once (its first item writes a sync pair). */
    w->deadline = which == WRITER_MAIN ? 0 : FLIGHTREC__DEADLINE_DUE;
}

static void writer_unbind(struct flightrec__writer *w)
{
    w->deadline = 0;
    w->head_limit = 0;
    w->ring = &unattached_head;
    w->items = NULL;
    w->mask = 0;
    w->lap_base = 0;
}

/* Where, in discard mode, the owner must stop: the reader's tail (or this
 * owner's start, if later) plus the capacity. */
static uintptr_t discard_limit(const ring_t *ring)
{
    uintptr_t tail = FR_LOAD_ACQUIRE(&ring->tail);
    uintptr_t start = atomic_load_explicit(&ring->start, memory_order_relaxed);
    return position_later(start, tail) + (uintptr_t)ring->capacity;
}

/* Items the owner may still write at @head in discard mode: 0 when the
 * head is at or past the limit, as it is after a switch from flight mode
 * while nobody read (flightrec ctl mode discard). */
static uintptr_t discard_room(const ring_t *ring, uintptr_t head)
{
    uintptr_t room = discard_limit(ring) - head;
    return (intptr_t)room > 0 ? room : 0;
}

/* The mode is the ring's own, and readers of the region see which mode
 * each ring is in.  A change of the control block's mode (flightrec ctl,
 * flightrec_setup()) reaches a ring through its own writer, between two
 * records: a reader may trust discard mode's bound (nothing is overwritten
 * past its tail) only once the writer stops at that tail, and a writer
 * leaving discard mode says so before it overwrites anything. */
static void mode_follow(int which)
{
#if defined(FLIGHTREC_PORT_FIRMWARE)
    /* Nothing changes a firmware's mode after start-up (no flightrec ctl,
     * no flightrec_setup()): its rings keep the mode they were made in. */
    (void)which;
#else
    ring_t *ring = self_private.ring[which];
    uint32_t mode = (uint32_t)flightrec__current_mode();
    if (atomic_load_explicit(&ring->mode, memory_order_relaxed) != mode) {
        atomic_store_explicit(
            &ring->mode_changes,
            atomic_load_explicit(&ring->mode_changes, memory_order_relaxed) +
                1,
            memory_order_relaxed);
        atomic_store_explicit(&ring->mode, mode, memory_order_release);
    }
#endif
}

static int discard_mode(int which)
{
    return atomic_load_explicit(&self_private.ring[which]->mode,
                                memory_order_relaxed) ==
           FLIGHTREC_MODE_DISCARD;
}

/* A sync pair is due 2^21 ticks, or a quarter ring, after the last one. */
static int sync_is_due(int which, uint64_t now, uintptr_t head)
{
    const struct writer_sync *sync = &self_private.sync[which];
    uintptr_t quarter = (uintptr_t)self_private.ring[which]->capacity / 4;
    return sync->none_yet || now - sync->time >= FLIGHTREC_SYNC_TICKS ||
           head - sync->head >= quarter;
}

/* The next deadline of a writer; also refreshes its head limit and lap
 * base.  Position arithmetic is modular: where a limit would wrap past the
 * head (32-bit heads after 2^32 items), the limit becomes the largest
 * position.  The limit stops at the end of the head's lap (one slow path
 * more per lap), so that the fast paths find their slots from the lap base
 * without masking and never wrap around the array within a record. */
static uint64_t rearm(int which, uintptr_t head)
{
    struct flightrec__writer *w = writer_of(which);
    const ring_t *ring = self_private.ring[which];
    const struct writer_sync *sync = &self_private.sync[which];
    uintptr_t limit = sync->head + (uintptr_t)ring->capacity / 4;
    if (limit < head)
        limit = UINTPTR_MAX;
    if (discard_mode(which)) {
        uintptr_t room = discard_room(ring, head);
        if (room < limit - head)
            limit = head + room;
    }
    uintptr_t lap_first = head & ~w->mask;
    uintptr_t lap_end = lap_first + w->mask + 1; /* 0: the last lap */
    if (lap_end != 0 && lap_end < limit)
        limit = lap_end;
    w->lap_base = (uintptr_t)w->items -
                  lap_first * (uintptr_t)sizeof(struct flightrec_item);
    w->head_limit = limit;
    uint64_t deadline = sync->time + FLIGHTREC_SYNC_TICKS;
    if (sync->none_yet || deadline < FLIGHTREC__DEADLINE_DUE) {
        /* The next event writes the first pair; or, with the split
         * compare of x86-64 (producer.h), the counter is still below 2^32
         * (its first second or so after boot), where a deadline cannot be
         * told from the busy mark: the head limit sends the next event
         * here whatever its time. */
        w->head_limit = 0;
        return FLIGHTREC__DEADLINE_DUE;
    }
    return deadline;
}

/* A record's limit for flightrec_add(), whose fast path finds slots from
 * the lap base: the lap base is set to @head's lap, and the limit ends at
 * that lap's end (on the last lap of 32-bit positions, where the lap's end
 * is 0, every position below the limit is on it). */
static __attribute__((noinline)) uintptr_t
lap_limit(struct flightrec__writer *w, uintptr_t head, uintptr_t limit)
{
    uintptr_t lap_first = head & ~w->mask;
    uintptr_t lap_end = lap_first + w->mask + 1;
    w->lap_base = (uintptr_t)w->items -
                  lap_first * (uintptr_t)sizeof(struct flightrec_item);
    return lap_end != 0 && limit > lap_end ? lap_end : limit;
}

/* A record may write up to @limit (exclusive) on its fast path. */
static void set_room(struct flightrec_ctx *ctx, uintptr_t limit)
{
    ctx->room = limit > ctx->head ? limit - ctx->head : 0;
}

static void put(struct flightrec__writer *w, uintptr_t position,
                uint32_t time_word, uint32_t event, uintptr_t data)
{
    struct flightrec_item *item = &w->items[position & w->mask];
    atomic_store_explicit(&item->event,
                          time_word | (event & FLIGHTREC_EVENT_MASK),
                          memory_order_relaxed);
    atomic_store_explicit(&item->data, data, memory_order_relaxed);
}

static void count_dropped(ring_t *ring, uintptr_t n)
{
    /* Single writer: a plain increment, published for the reader. */
    uintptr_t dropped =
        atomic_load_explicit(&ring->dropped, memory_order_relaxed);
    atomic_store_explicit(&ring->dropped, dropped + n, memory_order_relaxed);
}

/* Whether a pair comes because 2^21 ticks passed since the last one: then
 * the items since that pair may be more than 2^21 ticks before the new one,
 * and a reader cannot time them backwards from it. */
static int sync_after_gap(int which, uint64_t now)
{
    const struct writer_sync *sync = &self_private.sync[which];
    return !sync->none_yet && now - sync->time >= FLIGHTREC_SYNC_TICKS;
}

/* Items the sync due at @now takes: 0, a pair, or after a gap the previous
 * pair restated and the new pair. */
static uintptr_t sync_items(int which, uint64_t now, uintptr_t head)
{
    if (!sync_is_due(which, now, head))
        return 0;
    return sync_after_gap(which, now) ? 4 : 2;
}

static void put_pair(struct flightrec__writer *w, uintptr_t position,
                     uint64_t counter)
{
    uint32_t time_word = FLIGHTREC_TIME_EVENT(counter, 0);
    uint64_t uptime = counter - flightrec__timebase()->base;
    put(w, position, time_word, FLIGHTREC_EV_UPTIME_LOW, (uint32_t)uptime);
    put(w, position + 1, time_word, FLIGHTREC_EV_UPTIME_HIGH,
        (uint32_t)(uptime >> 32));
}

/* Counts @n recorder items about to be written at @at, under the ring's
 * sync sequence, so that a reader can tell the program's events from the
 * recorder's own items at any head (ring reader, "events before"). */
static void note_recorder_items(ring_t *ring, uintptr_t at, uintptr_t n)
{
    uintptr_t total = atomic_load_explicit(&recorder_now(ring)->total,
                                           memory_order_relaxed);
    recorder_set(ring, total + n, at, (uint32_t)n);
}

/* Writes the @n sync items due at @now (sync_items(), which the callers
 * have counted already) from head on; returns the new head.  The restated
 * pair carries the previous pair's time in its time field too, so the
 * items before it, all less than 2^21 ticks after that time, are timed
 * from it exactly (docs/format.md). */
static uintptr_t write_sync_if_due(int which, uint64_t now, uintptr_t head,
                                   uintptr_t n)
{
    if (n == 0)
        return head;
    struct flightrec__writer *w = writer_of(which);
    if (!atomic_load_explicit(&flightrec__frequency_published,
                              memory_order_relaxed))
        flightrec__timebase_publish_if_ready();
    note_recorder_items(self_private.ring[which], head, n);
    if (n == 4) {
        put_pair(w, head, self_private.sync[which].time);
        head += 2;
    }
    put_pair(w, head, now);
    self_private.sync[which].time = now;
    self_private.sync[which].head = head + 2;
    self_private.sync[which].none_yet = 0;
    return head + 2;
}

#if !defined(FLIGHTREC_PORT_FIRMWARE)
/* Room check for discard mode; counts the record as dropped if none. */
static int has_room(int which, uintptr_t head, uintptr_t needed)
{
    if (!discard_mode(which))
        return 1;
    ring_t *ring = self_private.ring[which];
    if (discard_room(ring, head) >= needed)
        return 1;
    count_dropped(ring, 1);
    return 0;
}

/* One item through the slow path of writer @which, whose deadline is 0 now
 * and is re-armed at the end. */
static void write_one(int which, uint32_t event, uintptr_t data, uint64_t now)
{
    struct flightrec__writer *w = writer_of(which);
    uintptr_t head = atomic_load_explicit(&w->ring->head, memory_order_relaxed);
    uint32_t time_word = FLIGHTREC_TIME_EVENT(now, 0);

    mode_follow(which);
    uintptr_t sync = sync_items(which, now, head);
    if (has_room(which, head, sync + 1)) {
        /* Orders the previous head publication before these item stores,
         * for readers validating a copy (free on x86). */
        FLIGHTREC__ITEMS_AFTER_HEAD();
        head = write_sync_if_due(which, now, head, sync);
        put(w, head, time_word, event, data);
        atomic_store_explicit(&w->ring->head, ++head, memory_order_release);
    }
    uint64_t deadline = rearm(which, head);
    atomic_signal_fence(memory_order_seq_cst);
    w->deadline = deadline;
}

#endif /* !FLIGHTREC_PORT_FIRMWARE */

static void count_too_deep(void)
{
    ring_t *ring = self_private.ring[WRITER_SIGNAL];
    atomic_fetch_add_explicit(&ring->nested_dropped, 1, memory_order_relaxed);
}

#if !defined(FLIGHTREC_PORT_FIRMWARE)
/* A signal handler interrupted a record of this thread: record into the
 * signal ring with the hot path's protocol. */
static void write_nested(uint32_t event, uintptr_t data)
{
    struct flightrec__writer *w = &flightrec__self.signal;
    uint64_t deadline = w->deadline;
    w->deadline = 0;
    atomic_signal_fence(memory_order_seq_cst);
    if (FLIGHTREC__DEADLINE_BUSY(deadline)) {
        count_too_deep();
        return; /* the interrupted level restores its own deadline */
    }
    write_one(WRITER_SIGNAL, event, data, flightrec_counter());
}

#endif /* !FLIGHTREC_PORT_FIRMWARE */

/* Attaches the calling thread; returns 0, or -1 if the event is lost
 * (a handler interrupted the attach itself, or memory ran out). */
static int attach_self(void)
{
    if (self_private.attaching) {
        self_private.lost_attaching++;
        return -1;
    }
#if !defined(FLIGHTREC_PORT_FIRMWARE) /* a firmware's CPU never exits */
    if (self_private.exited) {
        /* A handler or a later destructor after the exit hook: no pair
         * may be taken that nobody would hand back. */
        flightrec__count_lost_without_ring(1);
        return -1;
    }
#endif
    if (self_private.attach_retry_at != 0 &&
        flightrec_counter() < self_private.attach_retry_at) {
        flightrec__count_lost_without_ring(1);
        flightrec__self.main.deadline = FLIGHTREC__DEADLINE_DUE;
        return -1;
    }
    self_private.attaching = 1;
    atomic_signal_fence(memory_order_seq_cst);
    int rc = 0;
    if (!self_private.attached) /* unless a handler attached meanwhile */
        rc = flightrec__attach();
    /* Still inside the main writer's slow path: keep handlers away from it
     * (a handler that attached has armed it). */
    flightrec__self.main.deadline = 0;
    atomic_signal_fence(memory_order_seq_cst);
    self_private.attaching = 0;
    /* A handler's count made before the store above must be read after it. */
    atomic_signal_fence(memory_order_seq_cst);
    if (rc != 0) {
        if (rc == -ENOMEM)
            self_private.attach_retry_at =
                flightrec_counter() + ATTACH_RETRY_TICKS;
        flightrec__count_lost_without_ring(1 + self_private.lost_attaching);
        self_private.lost_attaching = 0;
    }
    if (rc != 0) /* unattached again: armed and due (see flightrec__self) */
        flightrec__self.main.deadline = FLIGHTREC__DEADLINE_DUE;
    if (rc == 0)
        self_private.attach_retry_at = 0;
    if (rc == 0 && self_private.lost_attaching != 0) {
        /* Handler items that came while attaching: dropped, counted. */
        atomic_fetch_add_explicit(
            &self_private.ring[WRITER_SIGNAL]->nested_dropped,
            self_private.lost_attaching, memory_order_relaxed);
        self_private.lost_attaching = 0;
    }
    return rc;
}

/* The main writer's slow path with the thread attached: a handler may
 * have attached it after the hot path's busy store and armed the writer
 * (its own event went to the main ring); busy again, before the head is
 * read, so that a later handler goes to the signal ring.  Every main path
 * re-arms at its end (write_one(), commit). */
static void mark_main_busy(void)
{
    flightrec__self.main.deadline = 0;
    atomic_signal_fence(memory_order_seq_cst);
}

#if defined(FLIGHTREC_PORT_FIRMWARE)
/* Firmware: a slow item is a record of one (prepare, add, commit), so that
 * one slow path serves every kind of record (less code; the same items:
 * the record's slow paths write the sync pair, check discard mode's room,
 * go to the signal ring inside a record and attach as the item's own slow
 * path does).  One difference, which a firmware cannot see: where start-up
 * switched the event off, the item's own path writes nothing and the
 * record its sync pair; a firmware's start-up changes no filter. */
void flightrec__produce_slow(uint32_t event, uintptr_t data, uint64_t now,
                             uint64_t deadline)
{
    const struct flightrec_item_in item = { event, data };
    flightrec__record_slow(now, deadline, &item, 1);
}

void flightrec__produce_slow_late(uint32_t event, uintptr_t data,
                                  uint64_t deadline)
{
    const struct flightrec_item_in item = { event, data };
    flightrec__record_slow(flightrec_counter(), deadline, &item, 1);
}
#else
static void produce_slow(uint32_t event, uintptr_t data, uint64_t now,
                         uint64_t deadline)
{
    if (FLIGHTREC__DEADLINE_BUSY(deadline) && self_private.attached) {
        write_nested(event, data);
        return;
    }
    if (!self_private.attached) {
        if (attach_self() != 0)
            return;
        if (!flightrec_event_enabled(event)) {
            /* Start-up configuration switched this event off. */
            struct flightrec__writer *w = &flightrec__self.main;
            w->deadline = rearm(
                WRITER_MAIN,
                atomic_load_explicit(&w->ring->head, memory_order_relaxed));
            return;
        }
        now = flightrec_counter();
    } else {
        mark_main_busy();
    }
    write_one(WRITER_MAIN, event, data, now);
}

void flightrec__produce_slow(uint32_t event, uintptr_t data, uint64_t now,
                             uint64_t deadline)
{
    ERRNO_SAVE();
    produce_slow(event, data, now, deadline);
    ERRNO_RESTORE();
}

void flightrec__produce_slow_late(uint32_t event, uintptr_t data,
                                  uint64_t deadline)
{
    flightrec__produce_slow(event, data, flightrec_counter(), deadline);
}
#endif

static void prepare_slow(struct flightrec_ctx *ctx, uint64_t now)
{
    int which = WRITER_MAIN;

    if (!flightrec_is_running()) {
        flightrec__self.main.deadline = ctx->deadline;
        ctx->writer = NULL;
        ctx->room = 0;
        ctx->deadline = 0;
        return;
    }
    if (FLIGHTREC__DEADLINE_BUSY(ctx->deadline) && self_private.attached) {
        struct flightrec__writer *sw = &flightrec__self.signal;
        ctx->deadline = sw->deadline;
        sw->deadline = 0;
        atomic_signal_fence(memory_order_seq_cst);
        if (FLIGHTREC__DEADLINE_BUSY(ctx->deadline)) {
            ctx->writer = NULL;
            ctx->room = 0;
            ctx->deadline = DEADLINE_TOO_DEEP;
            return;
        }
        which = WRITER_SIGNAL;
        now = flightrec_counter();
    } else if (!self_private.attached) {
        if (attach_self() != 0) {
            ctx->writer = NULL;
            ctx->room = 0;
            return;
        }
        now = flightrec_counter();
    } else {
        mark_main_busy();
    }

    struct flightrec__writer *w = writer_of(which);
    uintptr_t head = atomic_load_explicit(&w->ring->head, memory_order_relaxed);
    ctx->writer = w;
    ctx->time_word = FLIGHTREC_TIME_EVENT(now, 0);
    mode_follow(which);
    FLIGHTREC__ITEMS_AFTER_HEAD();
    uintptr_t sync = sync_items(which, now, head);
    if (sync != 0 && discard_mode(which) &&
        discard_room(self_private.ring[which], head) < sync + 1) {
        /* Items without their due sync pair could not be timed: count
         * them as dropped, still with the deadline at 0 until commit. */
        ctx->head = head;
        ctx->deadline = rearm(which, head);
        ctx->room = 0;
        ctx->dropping = 1;
        return;
    }
    head = write_sync_if_due(which, now, head, sync);
    ctx->head = head;
    ctx->deadline = rearm(which, head);
    /* Sync items (if any) are published with the record's first part. */
    uintptr_t published =
        atomic_load_explicit(&w->ring->head, memory_order_relaxed);
    uintptr_t limit = published + FLIGHTREC_MAX_PENDING;
    if (discard_mode(which) && w->head_limit < limit)
        limit = w->head_limit;
    set_room(ctx, lap_limit(w, ctx->head, limit));
}

void flightrec__prepare_slow(struct flightrec_ctx *ctx, uint64_t now)
{
    ERRNO_SAVE();
    prepare_slow(ctx, now);
    if (ctx->writer != NULL)
        ctx->deadline = flightrec__record_deadline(ctx->writer, ctx->deadline);
    ERRNO_RESTORE();
}

static void add_slow(struct flightrec_ctx *ctx, uint32_t event,
                     uintptr_t data)
{
    struct flightrec__writer *w = ctx->writer;
    if (!flightrec_event_enabled(event))
        return;
    if (w == NULL) {
        if (ctx->deadline == DEADLINE_TOO_DEEP)
            count_too_deep();
        return;
    }

    int which = w == &flightrec__self.main ? WRITER_MAIN : WRITER_SIGNAL;
    if (ctx->dropping) {
        count_dropped(self_private.ring[which], 1);
        return;
    }
    uintptr_t published =
        atomic_load_explicit(&w->ring->head, memory_order_relaxed);
    if (ctx->head - published >= FLIGHTREC_MAX_PENDING) {
        /* Publish the first part so a reader's red zone stays valid. */
        FLIGHTREC__PUBLISH(&w->ring->head, ctx->head);
        published = ctx->head;
        FLIGHTREC__ITEMS_AFTER_HEAD();
    }
    uintptr_t room = UINTPTR_MAX;
    if (discard_mode(which)) {
        room = discard_room(self_private.ring[which], ctx->head);
        if (room == 0) {
            count_dropped(self_private.ring[which], 1);
            ctx->room = 0;
            return;
        }
    }
    put(w, ctx->head, ctx->time_word, event, data);
    ctx->head++;
#if UINTPTR_MAX <= 0xffffffffu
    /* The record may pass the largest position without a re-arm, and the
     * head then be below the limit again: the next record takes the slow
     * path, so that no fast path uses a lap base the head has left.  (With
     * 64-bit positions a head past the limit is above it.) */
    w->head_limit = 0;
#endif
    uintptr_t limit = published + FLIGHTREC_MAX_PENDING;
    /* The room counted the item just put. */
    if (room - 1 < limit - ctx->head)
        limit = ctx->head + (room - 1);
    set_room(ctx, lap_limit(w, ctx->head, limit));
}

void flightrec__add_slow(struct flightrec_ctx *ctx, uint32_t event,
                         uintptr_t data)
{
    ERRNO_SAVE();
    add_slow(ctx, event, data);
    ERRNO_RESTORE();
}

void flightrec__self_bind(ring_t *main_ring, ring_t *signal_ring)
{
    writer_bind(&flightrec__self.signal, signal_ring);
    writer_bind(&flightrec__self.main, main_ring);
    self_private.attached = 1;
}

void flightrec__self_unbind(void)
{
    self_private.attached = 0;
    writer_unbind(&flightrec__self.main);
    writer_unbind(&flightrec__self.signal);
    memset(self_private.ring, 0, sizeof(self_private.ring));
}

ring_t *flightrec__self_ring(void)
{
    return self_private.attached ? self_private.ring[WRITER_MAIN] : NULL;
}

void flightrec__self_exited(void)
{
    self_private.exited = 1;
    atomic_signal_fence(memory_order_seq_cst);
    flightrec__self_unbind();
}

void flightrec__self_resync(void)
{
    self_private.sync[WRITER_MAIN].none_yet = 1;
    self_private.sync[WRITER_SIGNAL].none_yet = 1;
    /* The head limit, not the deadline: fork() may come from a handler
     * that interrupted a record, whose deadline must stay 0. */
    flightrec__self.main.head_limit = 0;
    flightrec__self.signal.head_limit = 0;
}
