/* SPDX-License-Identifier: BSD-2-Clause */
#include "ring-reader.h"
#include "order.h"

#include <flightrec.h>

#include <string.h>

#define BLOCK_ITEMS 128
/* Tries before a ring whose owner keeps changing is left for next time. */
#define IDENTITY_TRIES 1000
/* Restarts after the producer overtook the copy. */
#define LAP_TRIES 16
#define READER_REWOUND 1u

typedef struct flightrec_region_ring ring_t;

static int before(uintptr_t a, uintptr_t b)
{
    return (intptr_t)(a - b) < 0;
}

static uintptr_t later(uintptr_t a, uintptr_t b)
{
    return before(a, b) ? b : a;
}

static const struct flightrec_region_item *items_of(const unsigned char *base,
                                                    const ring_t *ring)
{
    return (const struct flightrec_region_item *)(const void *)(
        base + ring->items_offset);
}

static int is_recorder_item(uint32_t event_word)
{
    uint32_t id = FLIGHTREC_GET_EVENT(event_word);
    return id == FLIGHTREC_EV_UPTIME_LOW || id == FLIGHTREC_EV_UPTIME_HIGH;
}

/* Packs @n ring items at @from into the stream's item form at @out;
 * returns how many of them are recorder items.  The hot loop of a drain:
 * no mask per item, and the recorder test as one compare (the two uptime
 * ids are adjacent, UPTIME_HIGH even). */
_Static_assert(FLIGHTREC_EV_UPTIME_LOW == FLIGHTREC_EV_UPTIME_HIGH + 1 &&
                   FLIGHTREC_EV_UPTIME_HIGH % 2 == 0,
               "the uptime ids are one even-odd pair");
#define RECORDER_ID_MASK (FLIGHTREC_EVENT_MASK & ~1u)

static uintptr_t copy_items_scalar(unsigned char *out,
                                   const struct flightrec_region_item *from,
                                   size_t n)
{
    uintptr_t recorder = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t event =
            atomic_load_explicit(&from[i].event, memory_order_relaxed);
        uintptr_t data =
            atomic_load_explicit(&from[i].data, memory_order_relaxed);
        memcpy(out, &event, 4);
        memcpy(out + 4, &data, sizeof(data));
        out += FRW_ITEM_SIZE;
        recorder += (event & RECORDER_ID_MASK) == FLIGHTREC_EV_UPTIME_HIGH;
    }
    return recorder;
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FR_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FR_UNDER_TSAN 1
#endif

#if defined(__x86_64__) && defined(__SSE2__) && !defined(FR_UNDER_TSAN)
#include <emmintrin.h>
_Static_assert(sizeof(struct flightrec_region_item) == 16 &&
                   FRW_ITEM_SIZE == 12,
               "16-byte ring items, 12-byte stream items");
/*
 * x86-64: four items a step in SSE2, a third of the scalar loop's
 * instructions (the drain thread's time is the program's).  Each item is
 * one 16-byte load (its two words: an item that changes meanwhile is
 * thrown away by the overtaken check after the block, as with the scalar
 * loads), its dwords 0, 2, 3 moved together and stored as 16 bytes, the
 * last 4 of them overwritten by the next item; the last item of a call
 * goes the scalar way, so nothing is written past @n items.  The event
 * words of the four are tested together.  Not under TSan, which would see
 * the plain loads as races with the producer's atomic stores.
 */
static uintptr_t copy_items(unsigned char *out,
                            const struct flightrec_region_item *from,
                            size_t n)
{
    if (n <= 1)
        return copy_items_scalar(out, from, n);
    size_t vector_n = (n - 1) & ~(size_t)3;
    const __m128i id_mask = _mm_set1_epi32((int)RECORDER_ID_MASK);
    const __m128i uptime = _mm_set1_epi32(FLIGHTREC_EV_UPTIME_HIGH);
    __m128i counts = _mm_setzero_si128();
    for (size_t i = 0; i < vector_n; i += 4) {
        const __m128i *src = (const __m128i *)(const void *)&from[i];
        __m128i a = _mm_loadu_si128(src);
        __m128i b = _mm_loadu_si128(src + 1);
        __m128i c = _mm_loadu_si128(src + 2);
        __m128i d = _mm_loadu_si128(src + 3);
        unsigned char *o = out + i * FRW_ITEM_SIZE;
        _mm_storeu_si128((__m128i *)(void *)o,
                         _mm_shuffle_epi32(a, _MM_SHUFFLE(3, 3, 2, 0)));
        _mm_storeu_si128((__m128i *)(void *)(o + 12),
                         _mm_shuffle_epi32(b, _MM_SHUFFLE(3, 3, 2, 0)));
        _mm_storeu_si128((__m128i *)(void *)(o + 24),
                         _mm_shuffle_epi32(c, _MM_SHUFFLE(3, 3, 2, 0)));
        _mm_storeu_si128((__m128i *)(void *)(o + 36),
                         _mm_shuffle_epi32(d, _MM_SHUFFLE(3, 3, 2, 0)));
        __m128i events = _mm_unpacklo_epi64(_mm_unpacklo_epi32(a, b),
                                            _mm_unpacklo_epi32(c, d));
        counts = _mm_sub_epi32(
            counts,
            _mm_cmpeq_epi32(_mm_and_si128(events, id_mask), uptime));
    }
    uint32_t lanes[4];
    _mm_storeu_si128((__m128i *)(void *)lanes, counts);
    uintptr_t recorder = (uintptr_t)lanes[0] + lanes[1] + lanes[2] + lanes[3];
    return recorder + copy_items_scalar(out + vector_n * FRW_ITEM_SIZE,
                                        from + vector_n, n - vector_n);
}
#else
#define copy_items copy_items_scalar
#endif

struct owner {
    int32_t tid;
    uint32_t name[FLIGHTREC_REGION_NAME_WORDS];
};

struct identity {
    uint32_t generation;
    uint32_t owner_generation;
    struct owner owner;
    uintptr_t start;
    uintptr_t dropped_at_start;
    uint32_t mode;
    uint32_t mode_changes;
#ifndef FLIGHTREC_PORT_FIRMWARE
    uint32_t previous_generation;
    struct owner previous;
    uintptr_t previous_events;
    uintptr_t previous_dropped;
#endif
};

static void load_owner(struct owner *to,
                       const struct flightrec_region_owner *from)
{
    to->tid = atomic_load_explicit(&from->tid, memory_order_relaxed);
    for (size_t i = 0; i < FLIGHTREC_REGION_NAME_WORDS; i++)
        to->name[i] = atomic_load_explicit(&from->name[i],
                                           memory_order_relaxed);
}

/* A consistent copy of the ring's identity (sequence counter). */
static int read_identity(const ring_t *ring, struct identity *out)
{
    for (int attempt = 0; attempt < IDENTITY_TRIES; attempt++) {
        uint32_t g = FR_LOAD_ACQUIRE(&ring->generation);
        if (g & 1u)
            continue;
        load_owner(&out->owner, &ring->owner);
        out->start = atomic_load_explicit(&ring->start, memory_order_relaxed);
        out->dropped_at_start = atomic_load_explicit(&ring->dropped_at_start,
                                                     memory_order_relaxed);
        /* The mode, then its change count (stepped before each change). */
        out->mode = FR_LOAD_ACQUIRE(&ring->mode);
        out->mode_changes =
            atomic_load_explicit(&ring->mode_changes, memory_order_relaxed);
        out->owner_generation = atomic_load_explicit(&ring->owner_generation,
                                                     memory_order_relaxed);
#ifndef FLIGHTREC_PORT_FIRMWARE /* (fr_ring_drain()) */
        out->previous_generation = atomic_load_explicit(
            &ring->previous_generation, memory_order_relaxed);
        load_owner(&out->previous, &ring->previous);
        out->previous_events = atomic_load_explicit(&ring->previous_events,
                                                    memory_order_relaxed);
        out->previous_dropped = atomic_load_explicit(&ring->previous_dropped,
                                                     memory_order_relaxed);
#endif
        FR_FENCE_ACQUIRE();
        if (atomic_load_explicit(&ring->generation, memory_order_relaxed) ==
            g) {
            out->generation = g;
            return 0;
        }
    }
    return -1;
}

/* Whether the ring still has the owner @id was read for (a rename does
 * not change the owner). */
static int same_owner(const ring_t *ring, const struct identity *id)
{
#if defined(FLIGHTREC_PORT_FIRMWARE)
    /* A firmware's rings have one owner ever (fr_ring_drain()), which
     * the identity read: it cannot change under a copy. */
    (void)ring;
    (void)id;
    return 1;
#else
    FR_FENCE_ACQUIRE();
    return atomic_load_explicit(&ring->owner_generation,
                                memory_order_relaxed) == id->owner_generation;
#endif
}

static uintptr_t drops_total(const ring_t *ring)
{
    return atomic_load_explicit(&ring->dropped, memory_order_relaxed) +
           atomic_load_explicit(&ring->nested_dropped, memory_order_relaxed);
}

/*
 * The head, and the recorder items of the current owner before it.  The
 * owner counts a group of recorder items (in the slot it is about to put in
 * force, then steps sync_seq) before it writes and publishes them; a group
 * counted but not yet under the head is taken off.  The slot read is whole
 * when sync_seq did not move meanwhile: also when the owner was stopped in
 * the middle of filling the other slot (by the handler that reads).
 */
static uintptr_t head_and_recorder_items(const ring_t *ring, uintptr_t *head)
{
    uintptr_t count = 0;
    for (int attempt = 0; attempt < IDENTITY_TRIES; attempt++) {
        uint32_t s1 = FR_LOAD_ACQUIRE(&ring->sync_seq);
        *head = FR_LOAD_ACQUIRE(&ring->head);
        const struct flightrec_region_recorder *r = &ring->recorder[s1 & 1u];
        count = atomic_load_explicit(&r->total, memory_order_relaxed);
        uintptr_t at = atomic_load_explicit(&r->last_at, memory_order_relaxed);
        uint32_t n = atomic_load_explicit(&r->last_count, memory_order_relaxed);
        FR_FENCE_ACQUIRE();
        uint32_t s2 = atomic_load_explicit(&ring->sync_seq,
                                           memory_order_relaxed);
        if (!before(at, *head))
            count -= n;
        if (s1 == s2)
            break;
    }
    return count;
}

/* The oldest position the producer cannot have touched, given its head. */
static uintptr_t oldest_intact(const ring_t *ring, const struct identity *id,
                               uintptr_t head)
{
    uintptr_t oldest =
        head - (uintptr_t)(ring->capacity - FLIGHTREC_MAX_PENDING);
    /* The mode may change under the copy (flightrec ctl): the writer says
     * so before it overwrites anything, so a copy validated after that
     * sees the flight bound; the change count catches a change and back. */
    if (id->mode == FLIGHTREC_MODE_DISCARD &&
        FR_LOAD_ACQUIRE(&ring->mode) == FLIGHTREC_MODE_DISCARD &&
        atomic_load_explicit(&ring->mode_changes, memory_order_relaxed) ==
            id->mode_changes) {
        uintptr_t tail = FR_LOAD_ACQUIRE(&ring->tail);
        uintptr_t bound = later(tail, id->start);
        /* Never more than a ring back, whatever a damaged region says. */
        if (head - bound > (uintptr_t)ring->capacity)
            bound = head - (uintptr_t)ring->capacity;
        if (before(bound, oldest))
            oldest = bound;
    }
    return oldest;
}

static uintptr_t current_oldest(const ring_t *ring, const struct identity *id)
{
    FR_FENCE_ACQUIRE();
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
#if !defined(FLIGHTREC_PORT_FIRMWARE) /* one owner ever (same_owner()) */
    if (atomic_load_explicit(&ring->owner_generation, memory_order_relaxed) !=
        id->owner_generation) {
        /* A new owner does not stop at our tail: only the flight bound
         * holds for what it may have written. */
        return head - (uintptr_t)(ring->capacity - FLIGHTREC_MAX_PENDING);
    }
#endif
    return oldest_intact(ring, id, head);
}

#if defined(FLIGHTREC_PORT_FIRMWARE)
/* Where the drain of a ring stands: what fr_ring_drain() stores when it
 * ends, as of its last commit to the sink (each made with interrupts off,
 * FR_COMMIT_BEGIN()), for fr_drain_recover(). */
static struct {
    ring_t *ring;
    uintptr_t tail, events, dropped;
    uint32_t flags; /* reader_flags: a rewind not yet served */
} progress;
#endif

/* The most items a chunk head takes (put_chunk_head()). */
#define CHUNK_HEAD_ITEMS \
    (6 + FLIGHTREC_REGION_NAME_WORDS * 4 / sizeof(uintptr_t))

static void put_chunk_head(struct frw_sink *sink, const ring_t *ring,
                           const struct owner *owner, uintptr_t events,
                           uintptr_t overflow, uintptr_t discard)
{
    frw_put_meta(sink, FLIGHTREC_EV_PROCESSOR, ring->id);
    frw_put_meta(sink, FLIGHTREC_EV_THREAD_ID, (uintptr_t)owner->tid);
    frw_put_name(sink, FLIGHTREC_EV_THREAD_NAME, owner->name,
                FLIGHTREC_REGION_NAME_WORDS);
    frw_put_meta(sink, FLIGHTREC_EV_RING_CONTEXT, ring->context);
    frw_put_meta(sink, FLIGHTREC_EV_RING_POSITION, (uint32_t)events);
    if (overflow != 0)
        frw_put_meta(sink, FLIGHTREC_EV_PER_CPU_OVERFLOW, overflow);
    if (discard != 0)
        frw_put_meta(sink, FLIGHTREC_EV_PER_CPU_DISCARD, discard);
}

/* Counts the recorder items in [*from, head) of the copy as it is now; if
 * the producer overwrote part of it meanwhile, *from moves past that. */
static uintptr_t count_recorder_items(const unsigned char *base,
                                      const ring_t *ring,
                                      const struct identity *id,
                                      uintptr_t *from, uintptr_t head)
{
    const struct flightrec_region_item *items = items_of(base, ring);
    uintptr_t mask = (uintptr_t)ring->capacity - 1;
    uintptr_t count = 0, p = *from;
    int laps = 0;
    while (before(p, head)) {
        size_t n = head - p < BLOCK_ITEMS ? head - p : BLOCK_ITEMS;
        uintptr_t in_block = 0;
        for (size_t i = 0; i < n; i++)
            in_block += (uintptr_t)is_recorder_item(atomic_load_explicit(
                &items[(p + i) & mask].event, memory_order_relaxed));
        uintptr_t oldest = current_oldest(ring, id);
        if (before(p, oldest)) {
            /* Overtaken: what is before the oldest intact item is lost;
             * count again from there. */
            p = before(oldest, head) && ++laps < LAP_TRIES ? oldest : head;
            *from = p;
            count = 0;
            continue;
        }
        count += in_block;
        p += n;
    }
    return count;
}

/*
 * Writes the owner's items from position @from (the owner's events before
 * it: @from_events) to the head, as one chunk or more if the producer
 * overtakes the copy.  With @always a chunk is written even when there is
 * nothing to report; with @reread the first chunk reports no overflow (the
 * reader asked to read again what is held).  On return *end and
 * *end_events say where it got to.  Returns -1 if the ring got another
 * owner before anything was written, else 0.
 */
static int read_owner(struct frw_sink *sink, const unsigned char *base,
                      const ring_t *ring, const struct identity *id,
                      const struct owner *owner, uintptr_t from,
                      uintptr_t from_events, uintptr_t discard, int always,
                      int reread, uintptr_t *end, uintptr_t *end_events,
                      int drains)
{
    (void)drains; /* firmware: whether progress follows (a drain, not a
                     dump) */
    const struct flightrec_region_item *items = items_of(base, ring);
    uintptr_t mask = (uintptr_t)ring->capacity - 1;

    *end = from;
    *end_events = from_events;
    for (int lap = 0;; lap++) {
        uintptr_t head;
        uintptr_t recorder = head_and_recorder_items(ring, &head);
        if (!same_owner(ring, id))
            return lap == 0 ? -1 : 0;
        uintptr_t events_at_head = head - id->start - recorder;
        uintptr_t begin = later(later(from, id->start),
                                oldest_intact(ring, id, head));
        if (before(head, begin))
            begin = head;
        uintptr_t begin_events;
        if (begin == from && !always) {
            /* Nothing lost since @from, whose count of events the caller
             * knows (the tail's, or where the last chunk ended): no need to
             * count the recorder items up to the head. */
            begin_events = from_events;
        } else {
            uintptr_t recorder_in = count_recorder_items(base, ring, id,
                                                         &begin, head);
            begin_events = events_at_head - ((head - begin) - recorder_in);
        }
        uintptr_t overflow = reread ? 0 : begin_events - from_events;
        *end = begin;
        *end_events = begin_events;
        if (begin == head && !always && overflow == 0 && discard == 0) {
            *end = head;
            return 0;
        }
#if defined(FLIGHTREC_PORT_FIRMWARE)
        /* The head goes into the buffer without a write, and counts with
         * the progress it makes in one commit. */
        frw_sink_reserve(sink, CHUNK_HEAD_ITEMS * FRW_ITEM_SIZE);
        put_chunk_head(sink, ring, owner, begin_events, overflow, discard);
        {
            FR_COMMIT_BEGIN();
            frw_sink_commit(sink);
            if (drains && progress.ring == ring) {
                progress.tail = begin;
                progress.events = begin_events;
                progress.dropped += discard;
                progress.flags = 0; /* a rewind is served by this head */
            }
            FR_COMMIT_END();
        }
#else
        put_chunk_head(sink, ring, owner, begin_events, overflow, discard);
#endif
        discard = 0;
        always = 0;
        reread = 0;

        uintptr_t p = begin, p_events = begin_events;
        int overtaken = 0;
        while (before(p, head)) {
            size_t want = head - p < BLOCK_ITEMS ? head - p : BLOCK_ITEMS;
            size_t n;
            /* Copied straight into the sink's buffer, and kept there only
             * if the producer cannot have overwritten them meanwhile. */
            unsigned char *out = frw_items_room(sink, want, &n);
            /* In at most two runs of slots: to the array's end, then from
             * its start. */
            size_t first = (size_t)(mask + 1 - (p & mask));
            if (first > n)
                first = n;
            uintptr_t recorder_in =
                copy_items(out, &items[p & mask], first) +
                copy_items(out + first * FRW_ITEM_SIZE, items, n - first);
            FR_TEST_POINT(4);
            if (before(p, current_oldest(ring, id))) {
                overtaken = 1;
                break;
            }
            FR_COMMIT_BEGIN();
            frw_items_done(sink, n);
            frw_sink_commit(sink);
            p_events += n - recorder_in;
            p += n;
#if defined(FLIGHTREC_PORT_FIRMWARE)
            if (drains && progress.ring == ring) {
                progress.tail = p;
                progress.events = p_events;
            }
#endif
            FR_COMMIT_END();
        }
        *end = p;
        *end_events = p_events;
        if (!overtaken || lap + 1 >= LAP_TRIES)
            return 0;
        /* The producer overtook the copy: go on from here in a new chunk
         * that reports what was lost in between. */
        from = p;
        from_events = p_events;
    }
}

int fr_ring_dump(struct frw_sink *sink, const unsigned char *base,
                 const ring_t *ring, const uint32_t *name)
{
    struct identity id;
    if (read_identity(ring, &id) != 0)
        return -1;
    struct owner owner = id.owner;
    if (name != NULL)
        memcpy(owner.name, name, sizeof(owner.name));
    uintptr_t end, end_events;
    return read_owner(sink, base, ring, &id, &owner, id.start, 0,
                      drops_total(ring) - id.dropped_at_start, 1, 0, &end,
                      &end_events, 0);
}

static uint32_t reader_u32(const _Atomic uint32_t *field)
{
    return atomic_load_explicit(field, memory_order_relaxed);
}

static uintptr_t reader_word(const _Atomic uintptr_t *field)
{
    return atomic_load_explicit(field, memory_order_relaxed);
}

int fr_ring_has_news(const ring_t *ring)
{
    if (reader_u32(&ring->reader_generation) !=
        FR_LOAD_ACQUIRE(&ring->owner_generation))
        return 1;
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    uintptr_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    uintptr_t dropped = drops_total(ring) -
                        atomic_load_explicit(&ring->dropped_at_start,
                                             memory_order_relaxed);
    return head != tail || dropped != reader_word(&ring->reader_dropped) ||
           (reader_u32(&ring->reader_flags) & READER_REWOUND) != 0;
}

int fr_ring_fully_read(const ring_t *ring)
{
    return !fr_ring_has_news(ring);
}

int fr_rewind_requested(const struct flightrec_region_control *control,
                        uint32_t *request)
{
    *request = FR_LOAD_ACQUIRE(&control->rewind_request);
    return *request != atomic_load_explicit(&control->rewind_done,
                                            memory_order_relaxed);
}

void fr_rewind_served(struct flightrec_region_control *control,
                      uint32_t request)
{
    FR_STORE_RELEASE(&control->rewind_done, request);
}

void fr_ring_rewind(ring_t *ring)
{
    /* Only a ring that holds something for its owner has it to re-read. */
    if (atomic_load_explicit(&ring->head, memory_order_relaxed) !=
        atomic_load_explicit(&ring->start, memory_order_relaxed))
        atomic_fetch_or_explicit(&ring->reader_flags, READER_REWOUND,
                                 memory_order_relaxed);
}

int fr_ring_drain(struct frw_sink *sink, const unsigned char *base,
                  ring_t *ring, const uint32_t *name)
{
    struct identity id;
    if (read_identity(ring, &id) != 0)
        return -1;
    if (id.owner_generation != reader_u32(&ring->reader_generation)) {
        /* A new owner.  If the ring was reused from one whose end we had
         * not read (or that we never read at all), report its losses under
         * its own identity.  A firmware's rings have one owner ever (its
         * registry reuses none): the first is the only new one. */
#ifndef FLIGHTREC_PORT_FIRMWARE
        if (id.previous_generation != 0) {
            int followed =
                id.previous_generation == reader_u32(&ring->reader_generation);
            uintptr_t lost = id.previous_events -
                             (followed ? reader_word(&ring->reader_events) : 0);
            uintptr_t dropped =
                id.previous_dropped -
                (followed ? reader_word(&ring->reader_dropped) : 0);
            if (lost != 0 || dropped != 0)
                put_chunk_head(sink, ring, &id.previous, id.previous_events,
                               lost, dropped);
        }
#endif
        atomic_store_explicit(&ring->reader_generation, id.owner_generation,
                              memory_order_relaxed);
        atomic_store_explicit(&ring->reader_events, 0, memory_order_relaxed);
        atomic_store_explicit(&ring->reader_dropped, 0, memory_order_relaxed);
        atomic_store_explicit(&ring->reader_flags, 0, memory_order_relaxed);
        FR_STORE_RELEASE(&ring->tail, id.start);
    }
    struct owner owner = id.owner;
    if (name != NULL)
        memcpy(owner.name, name, sizeof(owner.name));
    uintptr_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    uintptr_t from = tail, from_events = reader_word(&ring->reader_events);
    uintptr_t dropped = drops_total(ring) - id.dropped_at_start;
    /* After a rewind everything still held comes again: a re-read, not a
     * loss (readers see the position go back). */
    int reread = (reader_u32(&ring->reader_flags) & READER_REWOUND) != 0;
    if (reread)
        from = id.start;
    uintptr_t end, end_events;
#if defined(FLIGHTREC_PORT_FIRMWARE)
    {
        FR_COMMIT_BEGIN();
        progress.tail = from;
        progress.events = from_events;
        progress.dropped = reader_word(&ring->reader_dropped);
        progress.flags = reader_u32(&ring->reader_flags);
        progress.ring = ring;
        FR_COMMIT_END();
    }
    FR_TEST_POINT(13);
#endif
    int rc = read_owner(sink, base, ring, &id, &owner, from, from_events,
                        dropped - reader_word(&ring->reader_dropped), reread,
                        reread, &end,
                        &end_events, 1);
    FR_TEST_POINT(3);
    FR_COMMIT_BEGIN();
#if defined(FLIGHTREC_PORT_FIRMWARE)
    progress.ring = NULL;
#endif
    if (rc == 0) {
        atomic_store_explicit(&ring->reader_flags, 0, memory_order_relaxed);
        atomic_store_explicit(&ring->reader_events, end_events,
                              memory_order_relaxed);
        atomic_store_explicit(&ring->reader_dropped, dropped,
                              memory_order_relaxed);
        /* Release: the copies are done before the producer may reuse
         * slots. */
        FR_STORE_RELEASE(&ring->tail, end);
    }
    FR_COMMIT_END();
    return rc;
}

#if defined(FLIGHTREC_PORT_FIRMWARE)
void fr_drain_recover(void)
{
    ring_t *ring = progress.ring;
    if (ring == NULL)
        return;
    atomic_store_explicit(&ring->reader_flags, progress.flags,
                          memory_order_relaxed);
    atomic_store_explicit(&ring->reader_events, progress.events,
                          memory_order_relaxed);
    atomic_store_explicit(&ring->reader_dropped, progress.dropped,
                          memory_order_relaxed);
    FR_STORE_RELEASE(&ring->tail, progress.tail);
    progress.ring = NULL;
}
#endif

uint32_t fr_ring_fill(const ring_t *ring)
{
    uintptr_t unread =
        atomic_load_explicit(&ring->head, memory_order_relaxed) -
        atomic_load_explicit(&ring->tail, memory_order_relaxed);
    if (ring->capacity == 0 || unread >= ring->capacity)
        return FR_FILL_SCALE;
    return (uint32_t)((uint64_t)unread * FR_FILL_SCALE / ring->capacity);
}

uint64_t fr_poll_pause(uint64_t pause_ns, uint64_t elapsed_ns,
                       uint32_t fullest)
{
    uint64_t wanted = fullest == 0
                          ? FR_POLL_PAUSE_MAX_NS
                          : elapsed_ns * FR_POLL_TARGET_FILL / fullest;
    if (wanted > 2 * pause_ns)
        wanted = 2 * pause_ns;
    if (wanted < FR_POLL_PAUSE_MIN_NS)
        wanted = FR_POLL_PAUSE_MIN_NS;
    if (wanted > FR_POLL_PAUSE_MAX_NS)
        wanted = FR_POLL_PAUSE_MAX_NS;
    return wanted;
}
#ifndef FLIGHTREC_PORT_FIRMWARE
/* The server's late clients (hosted only: a firmware's drain stays the
 * code it was, instruction for instruction). */

/* The oldest position intact whatever the mode: below the reader's tail
 * a discard-mode producer overwrites as a flight-mode one does. */
static uintptr_t flight_oldest(const ring_t *ring)
{
    atomic_thread_fence(memory_order_acquire);
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    return head - (uintptr_t)(ring->capacity - FLIGHTREC_MAX_PENDING);
}

/* count_recorder_items() for positions below the reader's tail. */
static uintptr_t count_recorder_below_tail(const unsigned char *base,
                                           const ring_t *ring,
                                           uintptr_t *from, uintptr_t tail)
{
    const struct flightrec_region_item *items = items_of(base, ring);
    uintptr_t mask = (uintptr_t)ring->capacity - 1;
    uintptr_t count = 0, p = *from;
    int laps = 0;
    while (before(p, tail)) {
        size_t n = tail - p < BLOCK_ITEMS ? tail - p : BLOCK_ITEMS;
        uintptr_t in_block = 0;
        for (size_t i = 0; i < n; i++)
            in_block += (uintptr_t)is_recorder_item(atomic_load_explicit(
                &items[(p + i) & mask].event, memory_order_relaxed));
        uintptr_t oldest = flight_oldest(ring);
        if (before(p, oldest)) {
            p = before(oldest, tail) && ++laps < LAP_TRIES ? oldest : tail;
            *from = p;
            count = 0;
            continue;
        }
        count += in_block;
        p += n;
    }
    return count;
}

int fr_ring_dump_read(struct frw_sink *sink, const unsigned char *base,
                      const ring_t *ring, const uint32_t *name)
{
    struct identity id;
    if (read_identity(ring, &id) != 0)
        return -1;
    /* Nothing drained of this owner yet: the next drain delivers it all. */
    if (id.owner_generation != reader_u32(&ring->reader_generation))
        return 0;
    struct owner owner = id.owner;
    if (name != NULL)
        memcpy(owner.name, name, sizeof(owner.name));
    const struct flightrec_region_item *items = items_of(base, ring);
    uintptr_t mask = (uintptr_t)ring->capacity - 1;
    uintptr_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    uintptr_t tail_events = reader_word(&ring->reader_events);
    uintptr_t dropped = reader_word(&ring->reader_dropped);
    if (reader_u32(&ring->reader_flags) & READER_REWOUND)
        return 0; /* the next drain delivers everything held again */
    uintptr_t begin = later(id.start, flight_oldest(ring));
    if (before(tail, begin))
        begin = tail;
    uintptr_t recorder_in = count_recorder_below_tail(base, ring, &begin, tail);
    if (!same_owner(ring, &id))
        return 0;
    uintptr_t begin_events = tail_events - ((tail - begin) - recorder_in);
    /* For this stream the owner's events before the first one held are
     * lost (overflow), as are its drops so far. */
    put_chunk_head(sink, ring, &owner, begin_events, begin_events, dropped);
    uint32_t events[BLOCK_ITEMS];
    uintptr_t datas[BLOCK_ITEMS];
    uintptr_t p = begin, p_events = begin_events;
    while (before(p, tail)) {
        size_t n = tail - p < BLOCK_ITEMS ? tail - p : BLOCK_ITEMS;
        for (size_t i = 0; i < n; i++) {
            const struct flightrec_region_item *item = &items[(p + i) & mask];
            events[i] = atomic_load_explicit(&item->event,
                                             memory_order_relaxed);
            datas[i] = atomic_load_explicit(&item->data, memory_order_relaxed);
        }
        if (before(p, flight_oldest(ring)) || !same_owner(ring, &id)) {
            /* Overtaken: the rest up to the tail is lost for this stream,
             * and said so by an empty chunk at the tail. */
            put_chunk_head(sink, ring, &owner, tail_events,
                           tail_events - p_events, 0);
            return 0;
        }
        for (size_t i = 0; i < n; i++) {
            frw_put_item(sink, events[i], datas[i]);
            p_events += (uintptr_t)!is_recorder_item(events[i]);
        }
        p += n;
    }
    return 0;
}
#endif
