/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading the rings into a record stream (docs/format.md): flightrec_dump()
 * and flightrec_drain().
 *
 * The copy runs while producers keep writing (the optimistic fetch of RTEMS
 * record): copy a block of items with relaxed loads, re-read the head, and
 * keep only the items the producer cannot have overwritten meanwhile.  A
 * producer may be writing up to FLIGHTREC_MAX_PENDING items past its
 * published head, so in flight mode position p is intact while
 * p >= head - capacity + FLIGHTREC_MAX_PENDING.  In discard mode the
 * producer never passes the reader's tail, so [tail, head) is intact too.
 * Items dropped from the front of a block start a new chunk that reports
 * them as overflow: every position is delivered or counted exactly once.
 */
#include "ring.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define BLOCK_ITEMS 128
#define OUT_BYTES 4096


/*=====   Output buffer (no allocation: dump runs in signal handlers)   =====*/

struct out {
    int fd;
    int error;
    size_t len;
    unsigned char buf[OUT_BYTES];
};

static void out_flush(struct out *o)
{
    size_t done = 0;
    while (done < o->len && o->error == 0) {
        ssize_t n = write(o->fd, o->buf + done, o->len - done);
        if (n > 0)
            done += (size_t)n;
        else if (n < 0 && errno != EINTR)
            o->error = -errno;
        else if (n == 0)
            o->error = -EIO;
    }
    o->len = 0;
}

static void out_init(struct out *o, int fd)
{
    o->fd = fd;
    o->error = 0;
    o->len = 0;
}

static void out_bytes(struct out *o, const void *bytes, size_t n)
{
    if (o->len + n > sizeof(o->buf))
        out_flush(o);
    memcpy(o->buf + o->len, bytes, n);
    o->len += n;
}

/* Items go out in the host's own format: packed event word + data word. */
static void out_item(struct out *o, uint32_t event_word, uintptr_t data)
{
    unsigned char item[4 + sizeof(uintptr_t)];
    memcpy(item, &event_word, 4);
    memcpy(item + 4, &data, sizeof(data));
    out_bytes(o, item, sizeof(item));
}

static void out_meta(struct out *o, uint32_t event, uintptr_t data)
{
    out_item(o, FLIGHTREC_TIME_EVENT(0, event), data);
}

/* Name words (4 chars each, LSB first) as data words of this host. */
static void out_name(struct out *o, uint32_t event, const uint32_t *words,
                     size_t nwords)
{
    size_t per_item = sizeof(uintptr_t) / 4;
    for (size_t i = 0; i < nwords; i += per_item) {
        uintptr_t data = words[i];
#if UINTPTR_MAX > UINT32_MAX
        data |= (uintptr_t)words[i + 1] << 32;
#endif
        out_meta(o, event, data);
    }
}

static uint32_t host_format(void)
{
    const uint16_t probe = 1;
    int little = *(const unsigned char *)&probe == 1;
    if (sizeof(uintptr_t) == 8)
        return little ? FLIGHTREC_FORMAT_LE_64 : FLIGHTREC_FORMAT_BE_64;
    return little ? FLIGHTREC_FORMAT_LE_32 : FLIGHTREC_FORMAT_BE_32;
}

static void out_header(struct out *o)
{
    uint32_t words[2] = { host_format(), FLIGHTREC_MAGIC };
    out_bytes(o, words, sizeof(words));
    out_meta(o, FLIGHTREC_EV_VERSION, FLIGHTREC_STREAM_VERSION);
    out_meta(o, FLIGHTREC_EV_RING_COUNT, flightrec__registry_count());
    out_meta(o, FLIGHTREC_EV_PER_CPU_COUNT, flightrec__settings()->items);
    uint64_t frequency = flightrec_counter_frequency();
    out_meta(o, FLIGHTREC_EV_FREQUENCY, (uintptr_t)frequency);
    if (sizeof(uintptr_t) == 4 && frequency > UINT32_MAX)
        out_meta(o, FLIGHTREC_EV_FREQUENCY_HIGH,
                 (uintptr_t)(frequency >> 16 >> 16));
    out_meta(o, FLIGHTREC_EV_PROCESS_ID,
             (uintptr_t)flightrec__port_process_id());
    uint64_t realtime = flightrec__timebase()->realtime_ns;
    out_meta(o, FLIGHTREC_EV_REALTIME_LOW, (uint32_t)realtime);
    out_meta(o, FLIGHTREC_EV_REALTIME_HIGH, (uint32_t)(realtime >> 32));
}

/* Writes name records of events whose name serial differs from @seen
 * (NULL: all named events) and updates @seen. */
static void out_event_names(struct out *o, uint32_t *seen)
{
    for (uint32_t event = 0; event < FLIGHTREC_EVENT_COUNT; event++) {
        uint32_t words[16];
        uint32_t serial = flightrec__event_name_words(event, words);
        if (serial == 0 || (seen != NULL && seen[event] == serial))
            continue;
        if (seen != NULL)
            seen[event] = serial;
        size_t nwords = 16;
        while (nwords > 2 && words[nwords - 1] == 0 && words[nwords - 2] == 0)
            nwords -= 2;
        out_meta(o, FLIGHTREC_EV_EVENT_NAME_ID, event);
        out_name(o, FLIGHTREC_EV_EVENT_NAME, words, nwords);
    }
}

/*=====   Ring copy   =====*/

struct chunk_head {
    const struct flightrec_ring *ring;
    struct ring_identity identity;
};

static void out_chunk_head(struct out *o, const struct chunk_head *c,
                           uintptr_t position, uintptr_t overflow,
                           uintptr_t discard)
{
    out_meta(o, FLIGHTREC_EV_PROCESSOR, c->ring->id);
    out_meta(o, FLIGHTREC_EV_THREAD_ID, (uintptr_t)c->identity.tid);
    out_name(o, FLIGHTREC_EV_THREAD_NAME, c->identity.name,
             FLIGHTREC_NAME_WORDS);
    out_meta(o, FLIGHTREC_EV_RING_CONTEXT, c->ring->context);
    out_meta(o, FLIGHTREC_EV_RING_POSITION, (uint32_t)position);
    if (overflow != 0)
        out_meta(o, FLIGHTREC_EV_PER_CPU_OVERFLOW, overflow);
    if (discard != 0)
        out_meta(o, FLIGHTREC_EV_PER_CPU_DISCARD, discard);
}

/* The oldest position no producer write can have touched, given the head
 * seen after a copy. */
static uintptr_t oldest_intact(const struct flightrec_ring *ring,
                               uintptr_t head)
{
    uintptr_t oldest = head - (ring->capacity - FLIGHTREC_MAX_PENDING);
    if (flightrec__settings()->mode == FLIGHTREC_MODE_DISCARD) {
        uintptr_t tail =
            atomic_load_explicit(&ring->tail, memory_order_acquire);
        uintptr_t start =
            atomic_load_explicit(&ring->start, memory_order_relaxed);
        uintptr_t bound = position_later(tail, start);
        if (position_before(bound, oldest))
            oldest = bound;
    }
    return oldest;
}

/*
 * Writes the ring's items [from, head) as one or more chunks; @overflow and
 * @discard are reported in the first.  With @always a chunk is written even
 * with nothing to report.  Returns the position after the last item.
 */
static uintptr_t out_ring(struct out *o, const struct chunk_head *c,
                          uintptr_t from, uintptr_t head, uintptr_t overflow,
                          uintptr_t discard, int always)
{
    const struct flightrec_ring *ring = c->ring;
    uint32_t events[BLOCK_ITEMS];
    uintptr_t datas[BLOCK_ITEMS];
    uintptr_t position = from;
    int need_head = 1;

    while (position_before(position, head)) {
        size_t n = head - position < BLOCK_ITEMS ? head - position
                                                 : BLOCK_ITEMS;
        for (size_t i = 0; i < n; i++) {
            const struct flightrec_item *item =
                &ring->items[(position + i) & (ring->capacity - 1)];
            events[i] = atomic_load_explicit(&item->event,
                                             memory_order_relaxed);
            datas[i] = atomic_load_explicit(&item->data,
                                            memory_order_relaxed);
        }
        /* The copies above happen before the head is read again. */
        atomic_thread_fence(memory_order_acquire);
        uintptr_t oldest = oldest_intact(
            ring, atomic_load_explicit(&ring->hot.head, memory_order_relaxed));
        size_t skip = 0;
        if (position_before(position, oldest)) {
            skip = oldest - position < n ? oldest - position : n;
            overflow += skip;
            need_head = 1;
        }
        if (skip < n && need_head) {
            out_chunk_head(o, c, position + skip, overflow, discard);
            overflow = discard = 0;
            need_head = 0;
        }
        for (size_t i = skip; i < n; i++)
            out_item(o, events[i], datas[i]);
        position += n;
    }
    if (need_head && (always || overflow != 0 || discard != 0))
        out_chunk_head(o, c, position, overflow, discard);
    return position;
}

static uintptr_t discard_total(const struct flightrec_ring *ring)
{
    return atomic_load_explicit(&ring->dropped, memory_order_relaxed) +
           atomic_load_explicit(&ring->nested_dropped, memory_order_relaxed);
}

/* The oldest position an overwriting ring still holds intact (before the
 * ring's first item while it has not filled once: callers take the later
 * of this and the owner's start). */
static uintptr_t oldest_held(const struct flightrec_ring *ring, uintptr_t head)
{
    return head - (ring->capacity - FLIGHTREC_MAX_PENDING);
}

/*=====   Dump   =====*/

int flightrec_dump(int fd)
{
    struct out o;
    out_init(&o, fd);
    /* No waiting here: a crash handler may have interrupted start-up. */
    if (flightrec__try_init() != 0)
        return -EAGAIN;
    out_header(&o);
    out_event_names(&o, NULL);
    for (struct flightrec_ring *ring = flightrec__registry_first(); ring;
         ring = ring_next(ring)) {
        struct chunk_head c = { .ring = ring };
        /* The head before the identity, as in drain_ring(). */
        uintptr_t head =
            atomic_load_explicit(&ring->hot.head, memory_order_acquire);
        if (atomic_load_explicit(&ring->state, memory_order_acquire) ==
                RING_FREE ||
            flightrec__ring_identity(ring, &c.identity) != 0)
            continue;
        char name[16];
        if (atomic_load_explicit(&ring->state, memory_order_relaxed) ==
                RING_LIVE &&
            flightrec__port_thread_name(c.identity.tid, name) == 0)
            flightrec__pack_name(name, c.identity.name, FLIGHTREC_NAME_WORDS);
        uintptr_t from = oldest_held(ring, head);
        if (flightrec__settings()->mode == FLIGHTREC_MODE_DISCARD) {
            /* The producer stops at the reader's tail: all from it on is
             * intact, whatever the red zone says. */
            uintptr_t tail =
                atomic_load_explicit(&ring->tail, memory_order_acquire);
            if (position_before(tail, from))
                from = tail;
        }
        from = position_later(from, c.identity.start);
        uintptr_t discard =
            discard_total(ring) -
            atomic_load_explicit(&ring->dropped_at_start, memory_order_relaxed);
        out_ring(&o, &c, from, head, from - c.identity.start, discard, 1);
    }
    out_flush(&o);
    return o.error;
}

/*=====   Drain   =====*/

static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static int drain_started;
static uint32_t drain_name_serial[FLIGHTREC_EVENT_COUNT];

void flightrec__drain_reset_after_fork(void)
{
    pthread_mutex_init(&drain_lock, NULL);
    drain_started = 0;
    memset(drain_name_serial, 0, sizeof(drain_name_serial));
}

void flightrec__rings_cleanup(void)
{
    pthread_mutex_lock(&drain_lock);
    flightrec__registry_cleanup();
    drain_started = 0;
    memset(drain_name_serial, 0, sizeof(drain_name_serial));
    pthread_mutex_unlock(&drain_lock);
}

void flightrec_drain_reset(void)
{
    pthread_mutex_lock(&drain_lock);
    drain_started = 0;
    memset(drain_name_serial, 0, sizeof(drain_name_serial));
    pthread_mutex_unlock(&drain_lock);
}

static void drain_ring(struct out *o, struct flightrec_ring *ring)
{
    struct chunk_head c = { .ring = ring };
    /* The head first: a new owner changes the identity before it publishes
     * items, so every item below this head is labelled right. */
    uintptr_t head = atomic_load_explicit(&ring->hot.head, memory_order_acquire);
    if (flightrec__ring_identity(ring, &c.identity) != 0)
        return; /* its owner is changing; next drain */
    uintptr_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    uintptr_t from = position_later(tail, c.identity.start);
    if (flightrec__settings()->mode == FLIGHTREC_MODE_FLIGHT)
        from = position_later(from, oldest_held(ring, head));
    uintptr_t discard_now = discard_total(ring);
    uintptr_t discard = discard_now - ring->reader_dropped;
    if (from == head && from == tail && discard == 0)
        return;
    uintptr_t end = out_ring(o, &c, from, head, from - tail, discard, 0);
    ring->reader_dropped = discard_now;
    /* Release: our copies are done before the producer may reuse slots. */
    atomic_store_explicit(&ring->tail, end, memory_order_release);
}

int flightrec_drain(int fd)
{
    struct out o;
    out_init(&o, fd);
    flightrec__ensure_init();
    pthread_mutex_lock(&drain_lock);
    if (!drain_started) {
        out_header(&o);
        drain_started = 1;
    }
    out_event_names(&o, drain_name_serial);
    flightrec__refresh_names();
    for (struct flightrec_ring *ring = flightrec__registry_first(); ring;
         ring = ring_next(ring)) {
        if (atomic_load_explicit(&ring->state, memory_order_acquire) !=
            RING_FREE)
            drain_ring(&o, ring);
    }
    out_flush(&o);
    pthread_mutex_unlock(&drain_lock);
    return o.error;
}

int flightrec_rewind(void)
{
    if (flightrec__settings()->mode != FLIGHTREC_MODE_FLIGHT)
        return FLIGHTREC_EMODE;
    pthread_mutex_lock(&drain_lock);
    for (struct flightrec_ring *ring = flightrec__registry_first(); ring;
         ring = ring_next(ring)) {
        uintptr_t head =
            atomic_load_explicit(&ring->hot.head, memory_order_acquire);
        uintptr_t start =
            atomic_load_explicit(&ring->start, memory_order_relaxed);
        atomic_store_explicit(&ring->tail,
                              position_later(oldest_held(ring, head), start),
                              memory_order_release);
    }
    pthread_mutex_unlock(&drain_lock);
    return 0;
}
