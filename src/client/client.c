/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The decoder's state machine and API: framing (format word, magic, items
 * split across feeds), the stream header, chunks and loss accounting.
 * Timing lives in client-time.c, delivery in client-merge.c.
 *
 * Items are decoded byte by byte in the stream's byte order, so the host's
 * byte order never matters; the compiler turns the shifts into plain
 * (byte-swapping) loads.  A whole item in the caller's buffer is decoded in
 * place; only an item split across two feeds is copied.
 *
 * Choices this decoder makes where the format leaves room:
 *  - Metadata items (ids 0..16, flightrec's 342..350, UPTIME_LOW/HIGH, v1
 *    framing) are consumed, not delivered; every other item is an EVENT.
 *  - A LOSS record sits in its ring's sequence where the loss was found and
 *    takes the time of the ring's next timed item; with none (end of
 *    stream) the ring's previous time, or UNTIMED if it never had one.
 *  - Overflow and missing chunks break the ring's time chain (items wait
 *    for the next sync); discards do not (the ring's items stay
 *    consecutive).  A rewind breaks it and restarts the monotonic floor.
 *  - RTEMS v1: a chunk's HEAD - TAIL items were produced; a COUNT-item ring
 *    hands out at most COUNT - 1, the rest are overflow; a TAIL that is not
 *    the previous HEAD of that ring means missing chunks.
 *  - Limits: ring ids < 2^24, 2^22 held items per ring and 2^24 in all,
 *    PER_CPU_COUNT 1..2^30, frequency <= 2^44 Hz, names 63 bytes.
 *  - record->ring_info: identity fields (thread id and name, context) as
 *    when the item was decoded, counters as at delivery (client-merge.c).
 */
#include "client-internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S UINT64_C(1000000000)
#define FREQUENCY_MAX (UINT64_C(1) << 44) /* ~17.6 THz: beyond is garbage */

int frc_fail(struct flightrec_client *c, int code, uint64_t offset,
             const char *fmt, ...)
{
    va_list ap;
    int n;

    if (c->error != 0)
        return c->error; /* the first error is the one to report */
    c->error = code;
    c->error_offset = offset;
    n = snprintf(c->message, sizeof(c->message), "byte %llu: ",
                 (unsigned long long)offset);
    va_start(ap, fmt);
    vsnprintf(c->message + n, sizeof(c->message) - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

static struct frc_ring *new_ring(struct flightrec_client *c, uint32_t id)
{
    struct frc_ring *r;

    if (c->ring_count == c->ring_cap) {
        size_t cap = c->ring_cap ? c->ring_cap * 2 : 16;
        struct frc_ring **rings = realloc(c->rings, cap * sizeof(*rings));
        if (rings == NULL)
            return NULL;
        c->rings = rings;
        c->ring_cap = cap;
    }
    r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    if (frc_map_put(&c->ring_map, id, (uint32_t)c->ring_count) != 0) {
        free(r);
        return NULL;
    }
    r->info.id = id;
    r->info.thread_id = -1;
    r->index = (uint32_t)c->ring_count;
    frc_ident_init(r);
    c->rings[c->ring_count++] = r;
    c->totals.rings = (uint32_t)c->ring_count;
    return r;
}

/*=====   Loss accounting   =====*/

/* Loss counters stop at UINT64_MAX instead of wrapping. */
static void sat_add(uint64_t *counter, uint64_t n)
{
    *counter = *counter > UINT64_MAX - n ? UINT64_MAX : *counter + n;
}

static int loss(struct flightrec_client *c, struct frc_ring *r, uint32_t kind,
                uint64_t count, uint64_t offset)
{
    struct frc_rec rec;

    if (count == 0)
        return 0;
    switch (kind) {
    case FLIGHTREC_LOSS_OVERFLOW:
        sat_add(&r->info.overflow, count);
        sat_add(&c->totals.overflow, count);
        break;
    case FLIGHTREC_LOSS_DISCARD:
        sat_add(&r->info.discard, count);
        sat_add(&c->totals.discard, count);
        break;
    default:
        sat_add(&r->info.missing, count);
        sat_add(&c->totals.missing, count);
        break;
    }
    /* Discarded items were never in the ring, so the ring's items stay
     * consecutive; everything else leaves a hole in the time chain. */
    if (kind != FLIGHTREC_LOSS_DISCARD)
        frc_break(r);
    memset(&rec, 0, sizeof(rec));
    if (frc_ident_take(c, r, &rec.gen) != 0)
        return frc_fail(c, FLIGHTREC_ENOMEM, offset, "out of memory");
    rec.type = FLIGHTREC_RECORD_LOSS;
    rec.event = kind;
    rec.data = count;
    rec.offset = offset;
    /* Held until the ring's next item is timed: it takes that time. */
    return frc_hold(c, r, &rec);
}

/* A position behind the end of the previous chunk: the consumer re-read
 * the ring.  No loss; continuity and the monotonic floor start afresh. */
static void rewind_ring(struct frc_ring *r)
{
    frc_break(r);
    r->has_floor = 0;
}

/* The chunk header is complete: turn positions and counts into losses. */
static int settle(struct flightrec_client *c, struct frc_ring *r,
                  uint64_t offset)
{
    uint64_t missing = 0;
    int rc;

    r->in_header = 0;
    if (r->has_position && r->has_end) {
        uint32_t d = r->position - r->end;
        if (d != 0 && d < (1u << 31))
            missing = d > r->chunk_overflow ? d - r->chunk_overflow : 0;
        else if (d != 0)
            rewind_ring(r);
    }
    rc = loss(c, r, FLIGHTREC_LOSS_OVERFLOW, r->chunk_overflow, offset);
    if (rc == 0)
        rc = loss(c, r, FLIGHTREC_LOSS_MISSING, missing, offset);
    if (rc == 0)
        rc = loss(c, r, FLIGHTREC_LOSS_DISCARD, r->chunk_discard, offset);
    r->chunk_overflow = 0;
    r->chunk_discard = 0;
    r->chunk_seq = r->seq;
    r->chunk_uptime_seq = r->uptime_seq;
    frc_refresh_fast(c, r);
    return rc;
}

/* The chunk ends: remember where, for the next chunk's continuity. */
static int close_chunk(struct flightrec_client *c, struct frc_ring *r,
                       uint64_t offset)
{
    int rc = 0;

    if (r == NULL)
        return 0;
    if (r->in_header)
        rc = settle(c, r, offset);
    r->has_end = r->has_position;
    r->end = r->position + (uint32_t)(r->seq - r->chunk_seq);
    if (c->positions_in_events)
        r->end -= (uint32_t)(r->uptime_seq - r->chunk_uptime_seq);
    r->has_position = 0;
    r->chunk_seq = r->seq;
    r->chunk_uptime_seq = r->uptime_seq;
    return rc;
}

/* RTEMS v1: the chunk's TAIL and HEAD say how many items the ring got since
 * the last drain (HEAD - TAIL); a ring of COUNT items hands out at most
 * COUNT - 1 of them, the rest were overwritten.  A TAIL that is not the
 * previous chunk's HEAD means chunks are missing (or a re-read). */
static int v1_head(struct flightrec_client *c, struct frc_ring *r,
                   uint32_t head, uint64_t offset)
{
    uint32_t produced, count = c->info.items_per_ring;
    uint64_t missing = 0;

    if (!r->has_v1_tail)
        return 0;
    produced = head - r->v1_tail;
    if (count > 1 && produced >= count)
        r->chunk_overflow += produced - (count - 1);
    if (r->has_v1_head && r->v1_tail != r->v1_head) {
        uint32_t d = r->v1_tail - r->v1_head;
        if (d < (1u << 31))
            missing = d;
        else
            rewind_ring(r);
    }
    r->v1_head = head;
    r->has_v1_head = 1;
    r->has_v1_tail = 0;
    r->in_header = 0;
    int rc = loss(c, r, FLIGHTREC_LOSS_OVERFLOW, r->chunk_overflow, offset);
    if (rc == 0)
        rc = loss(c, r, FLIGHTREC_LOSS_MISSING, missing, offset);
    r->chunk_overflow = 0;
    frc_refresh_fast(c, r);
    return rc;
}

/*=====   Stream kinds   =====*/

static void set_common(unsigned char *cls)
{
    cls[FLIGHTREC_EV_EMPTY] = A_IGNORE;
    cls[FLIGHTREC_EV_VERSION] = A_VERSION;
    cls[FLIGHTREC_EV_ARCH] = A_INFO_ARCH;
    cls[FLIGHTREC_EV_BSP] = A_INFO_BSP;
    cls[FLIGHTREC_EV_FREQUENCY] = A_FREQUENCY;
    cls[FLIGHTREC_EV_MULTILIB] = A_INFO_OTHER;
    cls[FLIGHTREC_EV_PER_CPU_COUNT] = A_COUNT;
    cls[FLIGHTREC_EV_PER_CPU_DISCARD] = A_DISCARD;
    cls[FLIGHTREC_EV_PER_CPU_OVERFLOW] = A_OVERFLOW;
    cls[FLIGHTREC_EV_PROCESSOR] = A_PROCESSOR;
    cls[FLIGHTREC_EV_PROCESSOR_MAXIMUM] = A_PROC_MAX;
    cls[FLIGHTREC_EV_THREAD_ID] = A_THREAD_ID;
    cls[FLIGHTREC_EV_THREAD_NAME] = A_THREAD_NAME;
    cls[FLIGHTREC_EV_TIME_ADJUSTMENT] = A_IGNORE;
    cls[FLIGHTREC_EV_TOOLS] = A_INFO_TOOLS;
    cls[FLIGHTREC_EV_UNRELIABLE_TIME] = A_IGNORE;
    cls[FLIGHTREC_EV_VERSION_CONTROL_KEY] = A_INFO_OTHER;
    cls[FLIGHTREC_EV_UPTIME_LOW] = A_UP_LOW;
    cls[FLIGHTREC_EV_UPTIME_HIGH] = A_UP_HIGH;
}

static int set_version(struct flightrec_client *c, uint64_t version,
                       uint64_t offset)
{
    unsigned char *cls = c->cls;

    memset(cls, A_EVENT, sizeof(c->cls));
    c->step_limit = FRC_TIME_WRAP; /* RTEMS: every step is forwards */
    c->rtems = 1;
    if (version == FLIGHTREC_STREAM_VERSION ||
        version == FLIGHTREC_STREAM_VERSION_1) {
        c->info.kind = FLIGHTREC_STREAM_FLIGHTREC;
        c->rtems = 0;
        c->positions_in_events = version != FLIGHTREC_STREAM_VERSION_1;
        c->step_limit = FLIGHTREC_SYNC_TICKS;
        set_common(cls);
        cls[FLIGHTREC_EV_RING_COUNT] = A_RING_COUNT;
        cls[FLIGHTREC_EV_FREQUENCY_HIGH] = A_FREQUENCY_HIGH;
        cls[FLIGHTREC_EV_REALTIME_LOW] = A_RT_LOW;
        cls[FLIGHTREC_EV_REALTIME_HIGH] = A_RT_HIGH;
        cls[FLIGHTREC_EV_RING_CONTEXT] = A_CONTEXT;
        cls[FLIGHTREC_EV_RING_POSITION] = A_POSITION;
        cls[FLIGHTREC_EV_EVENT_NAME_ID] = A_NAME_ID;
        cls[FLIGHTREC_EV_EVENT_NAME] = A_NAME;
        cls[FLIGHTREC_EV_PROCESS_ID] = A_PID;
    } else if (version == FLIGHTREC_RTEMS_VERSION_10) {
        c->info.kind = FLIGHTREC_STREAM_RTEMS_V10;
        set_common(cls);
        cls[FLIGHTREC_EV_THREAD_CREATE] = A_EVENT_THREAD;
    } else if (version == FLIGHTREC_RTEMS_VERSION_1) {
        c->info.kind = FLIGHTREC_STREAM_RTEMS_V1;
        cls[FLIGHTREC_V1_EMPTY] = A_IGNORE;
        cls[FLIGHTREC_V1_VERSION] = A_VERSION;
        cls[FLIGHTREC_V1_COUNT] = A_COUNT;
        cls[FLIGHTREC_V1_FREQUENCY] = A_FREQUENCY;
        cls[FLIGHTREC_V1_HEAD] = A_HEAD;
        cls[FLIGHTREC_V1_OVERFLOW] = A_OVERFLOW;
        cls[FLIGHTREC_V1_PROCESSOR] = A_PROCESSOR;
        cls[FLIGHTREC_V1_TAIL] = A_TAIL;
        cls[FLIGHTREC_V1_UPTIME_HIGH] = A_UP_HIGH;
        cls[FLIGHTREC_V1_UPTIME_LOW] = A_UP_LOW;
    } else if (version > 0xffff) {
        return frc_fail(c, FLIGHTREC_EVERSION, offset,
                        "unsupported stream version 0x%llx",
                        (unsigned long long)version);
    } else {
        return frc_fail(c, FLIGHTREC_EVERSION, offset,
                        "unsupported stream version %llu",
                        (unsigned long long)version);
    }
    c->info.version = (uint32_t)version;
    return 0;
}

static int set_frequency(struct flightrec_client *c, uint64_t offset)
{
    /* On 32-bit formats FREQUENCY_HIGH holds the upper half. */
    uint64_t f = c->freq_low | (uint64_t)c->freq_high << 32;

    if (c->freq_locked)
        return 0; /* times already depend on the first one */
    if (f > FREQUENCY_MAX)
        return frc_fail(c, FLIGHTREC_ECOUNT, offset,
                        "absurd frequency %llu Hz", (unsigned long long)f);
    c->info.frequency = f;
    frc_set_divisor(c, f);
    return 0;
}

/*=====   Items (slow path)   =====*/

static int need_ring(struct flightrec_client *c, uint32_t event,
                     uint64_t offset)
{
    if (c->cur != NULL)
        return 0;
    return frc_fail(c, FLIGHTREC_ESTREAM, offset,
                    "item %s outside a chunk (no PROCESSOR item before it)",
                    flightrec_client_event_name(c, event));
}

static int processor(struct flightrec_client *c, uint64_t id, uint64_t offset)
{
    struct frc_ring *r;
    uint32_t i;
    int rc;

    if (id >= FRC_RING_ID_LIMIT || (c->proc_max >= 0 &&
                                    id > (uint64_t)c->proc_max))
        return frc_fail(c, FLIGHTREC_ERING, offset,
                        "ring index %llu out of range",
                        (unsigned long long)id);
    rc = close_chunk(c, c->cur, offset);
    if (rc != 0)
        return rc;
    if (frc_map_get(&c->ring_map, id, &i)) {
        r = c->rings[i];
    } else {
        r = new_ring(c, (uint32_t)id);
        if (r == NULL)
            return frc_fail(c, FLIGHTREC_ENOMEM, offset, "out of memory");
    }
    c->cur = r;
    r->in_header = 1;
    r->has_position = 0;
    r->chunk_seq = r->seq;
    r->chunk_uptime_seq = r->uptime_seq;
    r->has_v1_tail = 0;
    r->fast = 0;
    return 0;
}

/* A ring item other than a plain fast-path event. */
static int ring_item(struct flightrec_client *c, uint32_t action,
                     uint32_t word, uint64_t data, uint64_t offset)
{
    struct frc_ring *r = c->cur;
    uint32_t event = FLIGHTREC_GET_EVENT(word);
    uint32_t field = FLIGHTREC_GET_TIME(word);
    int rc = need_ring(c, event, offset);

    if (rc != 0)
        return rc;
    if (r->in_header) {
        rc = settle(c, r, offset);
        if (rc != 0)
            return rc;
    }
    r->seq++;
    if (action == A_UP_LOW || action == A_UP_HIGH)
        r->uptime_seq++;
    switch (action) {
    case A_UP_LOW:
        r->low_value = (uint32_t)data;
        r->low_field = field;
        r->low_seq = r->seq;
        r->has_low = 1;
        return 0;
    case A_UP_HIGH:
        /* Only a HIGH right after its LOW makes a pair (an orphan HIGH
         * after an overflow is ignored). */
        if (!r->has_low || r->low_seq + 1 != r->seq)
            return 0;
        r->has_low = 0;
        return frc_sync(c, r, r->low_field,
                        r->low_value | (uint64_t)(uint32_t)data << 32,
                        offset);
    case A_EVENT_THREAD:
        rc = frc_timed_item(c, r, field, event, data, offset);
        frc_name_start(c, 1, (int64_t)data, NULL);
        return rc;
    default:
        return frc_timed_item(c, r, field, event, data, offset);
    }
}

static int check_count(struct flightrec_client *c, uint64_t v, uint64_t max,
                       const char *what, uint64_t offset)
{
    if (v > max)
        return frc_fail(c, FLIGHTREC_ECOUNT, offset, "absurd %s %llu", what,
                        (unsigned long long)v);
    return 0;
}

static int meta_item(struct flightrec_client *c, uint32_t action,
                     uint64_t data, uint64_t offset)
{
    struct frc_ring *r = c->cur;

    switch (action) {
    case A_IGNORE:
    case A_INFO_OTHER:
        return 0;
    case A_VERSION:
        if (data != c->info.version)
            return frc_fail(c, FLIGHTREC_ESTREAM, offset,
                            "second VERSION item %llu differs",
                            (unsigned long long)data);
        return 0;
    case A_FREQUENCY:
        c->freq_low = data;
        if (!c->wide)
            c->freq_low = (uint32_t)data;
        return set_frequency(c, offset);
    case A_FREQUENCY_HIGH:
        c->freq_high = (uint32_t)data;
        return set_frequency(c, offset);
    case A_COUNT:
        if (data == 0 || data > FRC_ITEMS_PER_RING_MAX)
            return frc_fail(c, FLIGHTREC_ECOUNT, offset,
                            "absurd items per ring %llu",
                            (unsigned long long)data);
        c->info.items_per_ring = (uint32_t)data;
        return 0;
    case A_RING_COUNT:
        if (check_count(c, data, FRC_RING_ID_LIMIT, "ring count", offset))
            return c->error;
        c->info.ring_count = (uint32_t)data;
        return 0;
    case A_PROC_MAX:
        if (check_count(c, data, FRC_RING_ID_LIMIT - 1,
                        "PROCESSOR_MAXIMUM", offset))
            return c->error;
        c->info.ring_count = (uint32_t)data + 1;
        c->proc_max = (int64_t)data;
        return 0;
    case A_PROCESSOR:
        return processor(c, data, offset);
    case A_THREAD_ID:
        /* Past a flightrec chunk's header, name items are the owner's
         * events: its positions count them (format section 4). */
        if (!c->rtems && r != NULL && !r->in_header)
            r->seq++;
        /* flightrec: the ring's owner; RTEMS: a name table entry. */
        if (!c->rtems && r != NULL && r->in_header) {
            r->info.thread_id = (int64_t)data;
            r->info.thread_name[0] = '\0';
            frc_ident_touch(r);
            frc_name_start(c, 1, (int64_t)data, r);
        } else {
            frc_name_start(c, 1, (int64_t)data, NULL);
        }
        return 0;
    case A_THREAD_NAME:
        if (!c->rtems && r != NULL && !r->in_header)
            r->seq++;
        /* fall through */
    case A_NAME:
        if (frc_name_item(c, data) != 0)
            return frc_fail(c, FLIGHTREC_ENOMEM, offset, "out of memory");
        return 0;
    case A_NAME_ID: {
        int rc = close_chunk(c, r, offset);
        c->cur = NULL;
        if (data < FLIGHTREC_EVENT_COUNT)
            frc_name_start(c, 2, (int64_t)data, NULL);
        else
            c->name_kind = 0;
        return rc;
    }
    case A_PID:
        c->info.process_id = (int64_t)data;
        return 0;
    case A_RT_LOW:
        c->rt_low = (uint32_t)data;
        c->has_rt_low = 1;
        return 0;
    case A_RT_HIGH:
        if (c->has_rt_low) {
            c->info.realtime_ns_at_zero =
                c->rt_low | (uint64_t)(uint32_t)data << 32;
            c->info.has_realtime = 1;
        }
        return 0;
    case A_INFO_ARCH:
    case A_INFO_BSP:
    case A_INFO_TOOLS:
        frc_info_item(c, action, data);
        return 0;
    default:
        break;
    }
    /* Chunk framing: needs a ring. */
    if (need_ring(c, 0, offset) != 0)
        return c->error;
    switch (action) {
    case A_CONTEXT:
        r->info.context = (uint32_t)data;
        frc_ident_touch(r);
        return 0;
    case A_POSITION:
        if (!r->in_header) {
            /* A new chunk head without PROCESSOR: close the old one. */
            int rc = close_chunk(c, r, offset);
            if (rc != 0)
                return rc;
            r->in_header = 1;
            r->fast = 0;
        }
        r->position = (uint32_t)data;
        r->has_position = 1;
        return 0;
    case A_OVERFLOW:
    case A_DISCARD: {
        uint32_t kind = action == A_OVERFLOW ? FLIGHTREC_LOSS_OVERFLOW
                                             : FLIGHTREC_LOSS_DISCARD;
        uint64_t *acc = action == A_OVERFLOW ? &r->chunk_overflow
                                             : &r->chunk_discard;
        if (!r->in_header)
            return loss(c, r, kind, data, offset);
        if (*acc + data < *acc)
            return frc_fail(c, FLIGHTREC_ECOUNT, offset, "absurd loss count");
        *acc += data;
        return 0;
    }
    case A_TAIL:
        r->v1_tail = (uint32_t)data;
        r->has_v1_tail = 1;
        return 0;
    case A_HEAD:
        return v1_head(c, r, (uint32_t)data, offset);
    default:
        return 0;
    }
}

static int slow_item(struct flightrec_client *c, uint32_t word, uint64_t data,
                     uint64_t offset)
{
    uint32_t event = FLIGHTREC_GET_EVENT(word);
    uint32_t action;
    int rc;

    /* The item's number: name sequences must be consecutive items. */
    c->item_no = (offset - 8) / c->item_size;
    if (c->info.kind == FLIGHTREC_STREAM_UNKNOWN) {
        if (event != FLIGHTREC_EV_VERSION)
            rc = frc_fail(c, FLIGHTREC_ESTREAM, offset,
                          "expected the VERSION item, got event %u",
                          (unsigned)event);
        else
            rc = set_version(c, data, offset);
        return rc;
    }
    action = c->cls[event];
    switch (action) {
    case A_EVENT:
    case A_EVENT_THREAD:
    case A_UP_LOW:
    case A_UP_HIGH:
        rc = ring_item(c, action, word, data, offset);
        break;
    default:
        rc = meta_item(c, action, data, offset);
        break;
    }
    return rc;
}

/*=====   Framing and the fast path   =====*/

static FLIGHTREC_ALWAYS_INLINE uint32_t rd32(const unsigned char *p, int be)
{
    if (be)
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
               (uint32_t)p[2] << 8 | (uint32_t)p[3];
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static FLIGHTREC_ALWAYS_INLINE uint64_t rd64(const unsigned char *p, int be)
{
    if (be)
        return (uint64_t)rd32(p, 1) << 32 | rd32(p + 4, 1);
    return (uint64_t)rd32(p + 4, 0) << 32 | rd32(p, 0);
}

/*
 * Decodes the whole items in p[0..n).  The common case -- a plain event in
 * a ring whose time chain is running, nothing held, no merge -- is timed
 * and delivered right here; everything else goes through slow_item().
 * Returns the bytes consumed (less than n only after an error).
 */
static FLIGHTREC_ALWAYS_INLINE size_t run(struct flightrec_client *c,
                                          const unsigned char *p, size_t n,
                                          uint64_t offset, int be, int wide)
{
    const size_t size = wide ? 12 : 8;
    const unsigned char *start = p;
    const unsigned char *end = p + (n - n % size);
    struct flightrec_record *out = &c->rec;
    flightrec_record_fn fn = c->opt.on_record;
    void *arg = c->opt.arg;

    while (p != end) {
        uint32_t word = rd32(p, be);
        uint64_t data = wide ? rd64(p + 4, be) : rd32(p + 4, be);
        uint32_t event = word & FLIGHTREC_EVENT_MASK;
        struct frc_ring *r = c->cur;

        if (FLIGHTREC_LIKELY(c->cls[event] == A_EVENT && r != NULL &&
                             r->fast)) {
            uint32_t field = word >> FLIGHTREC_EVENT_BITS;
            uint32_t step = (field - r->field) & FLIGHTREC_TIME_MASK;
            if (FLIGHTREC_LIKELY(step < c->step_limit)) {
                uint64_t x = r->rem + (uint64_t)step * NS_PER_S;
                uint64_t q = frc_div(c, x);
                r->field = field;
                r->ticks += step;
                r->ns += q;
                r->rem = x - q * c->freq;
                r->floor = r->ns;
                r->has_floor = 1;
                r->seq++;
                if (c->opt.merge) {
                    /* Timed in place; the merge decides when it goes. */
                    struct frc_rec rec;
                    int rc;
                    if (!frc_merge_push_fast(c, r, r->ns, data,
                                             offset + (uint64_t)(p - start),
                                             event, &rc)) {
                        rec.time = r->ns;
                        rec.data = data;
                        rec.offset = offset + (uint64_t)(p - start);
                        rec.event = event;
                        rec.field = field;
                        rec.gen = r->gen; /* fast: identity is current */
                        rec.type = FLIGHTREC_RECORD_EVENT;
                        rec.flags = 0;
                        rc = frc_emit(c, r, &rec);
                    }
                    if (rc != 0)
                        return (size_t)(p - start);
                    p += size;
                    continue;
                }
                r->info.events++;
                r->info.last_ns = r->ns;
                if (FLIGHTREC_UNLIKELY(!r->has_first)) {
                    r->has_first = 1;
                    r->info.first_ns = r->ns;
                }
                c->totals.events++;
                if (FLIGHTREC_UNLIKELY(c->rec_ring != r)) {
                    /* The fields that stay the same from item to item. */
                    out->type = FLIGHTREC_RECORD_EVENT;
                    out->flags = 0;
                    out->ring = r->info.id;
                    out->loss_kind = 0;
                    out->loss_count = 0;
                    out->ring_info = &r->info;
                    c->rec_ring = r;
                }
                out->time_ns = r->ns;
                out->event = event;
                out->data = data;
                out->offset = offset + (uint64_t)(p - start);
                if (FLIGHTREC_UNLIKELY(fn(out, arg) != 0)) {
                    frc_fail(c, FLIGHTREC_ECALLBACK, out->offset,
                             "stopped by callback");
                    return (size_t)(p - start);
                }
                p += size;
                continue;
            }
        }
        if (slow_item(c, word, data, offset + (uint64_t)(p - start)) != 0)
            return (size_t)(p - start);
        p += size;
    }
    return (size_t)(p - start);
}

static size_t run_le32(struct flightrec_client *c, const unsigned char *p,
                       size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 0, 0);
}

static size_t run_le64(struct flightrec_client *c, const unsigned char *p,
                       size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 0, 1);
}

static size_t run_be32(struct flightrec_client *c, const unsigned char *p,
                       size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 1, 0);
}

static size_t run_be64(struct flightrec_client *c, const unsigned char *p,
                       size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 1, 1);
}

static size_t items(struct flightrec_client *c, const unsigned char *p,
                    size_t n, uint64_t offset)
{
    if (c->big_endian)
        return c->wide ? run_be64(c, p, n, offset) : run_be32(c, p, n, offset);
    return c->wide ? run_le64(c, p, n, offset) : run_le32(c, p, n, offset);
}

static int header(struct flightrec_client *c)
{
    const unsigned char *p = c->part;
    /* Each format word reads the same in either byte order. */
    uint32_t format = rd32(p, 0);
    uint32_t magic;

    switch (format) {
    case FLIGHTREC_FORMAT_LE_32:
    case FLIGHTREC_FORMAT_LE_64:
    case FLIGHTREC_FORMAT_BE_32:
    case FLIGHTREC_FORMAT_BE_64:
        break;
    default:
        return frc_fail(c, FLIGHTREC_EFORMAT, 0,
                        "unknown format word 0x%08x", (unsigned)format);
    }
    c->big_endian = format == FLIGHTREC_FORMAT_BE_32 ||
                    format == FLIGHTREC_FORMAT_BE_64;
    c->wide = format == FLIGHTREC_FORMAT_LE_64 ||
              format == FLIGHTREC_FORMAT_BE_64;
    c->item_size = FLIGHTREC_ITEM_SIZE(format);
    magic = rd32(p + 4, c->big_endian);
    if (magic != FLIGHTREC_MAGIC)
        return frc_fail(c, FLIGHTREC_EBADMAGIC, 4, "bad magic 0x%08x",
                        (unsigned)magic);
    c->info.format = format;
    c->header_done = 1;
    return 0;
}

/*=====   API   =====*/

int flightrec_client_create(flightrec_client **out,
                            const struct flightrec_client_options *options)
{
    struct flightrec_client *c;

    if (out == NULL)
        return FLIGHTREC_EINVAL_CONFIG;
    *out = NULL;
    if (options == NULL || options->on_record == NULL)
        return FLIGHTREC_EINVAL_CONFIG;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return FLIGHTREC_ENOMEM;
    c->opt = *options;
    c->info.process_id = -1;
    c->proc_max = -1;
    c->item_size = 8;
    c->release_at = UINT64_MAX;
    *out = c;
    return 0;
}

int flightrec_client_feed(flightrec_client *c, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    size_t k, whole, done;

    if (c == NULL)
        return FLIGHTREC_EINVAL_CONFIG;
    if (c->error != 0)
        return c->error;
    if (c->finished)
        return FLIGHTREC_ESTATE;
    if (n == 0)
        return 0;
    if (p == NULL)
        return FLIGHTREC_EINVAL_CONFIG;
    if (!c->header_done) {
        k = 8 - c->part_len < n ? 8 - c->part_len : n;
        memcpy(c->part + c->part_len, p, k);
        c->part_len += k;
        c->consumed += k;
        p += k;
        n -= k;
        if (c->part_len < 8)
            return 0;
        c->part_len = 0;
        if (header(c) != 0)
            return c->error;
    }
    if (c->part_len != 0) {
        /* Complete the item that the previous feed split. */
        k = c->item_size - c->part_len < n ? c->item_size - c->part_len : n;
        memcpy(c->part + c->part_len, p, k);
        c->part_len += k;
        c->consumed += k;
        p += k;
        n -= k;
        if (c->part_len < c->item_size)
            return 0;
        c->part_len = 0;
        items(c, c->part, c->item_size, c->consumed - c->item_size);
        if (c->error != 0)
            return c->error;
    }
    whole = n - n % c->item_size;
    done = items(c, p, whole, c->consumed);
    c->consumed += done;
    if (c->error != 0)
        return c->error;
    memcpy(c->part, p + whole, n - whole);
    c->part_len = n - whole;
    c->consumed += n - whole;
    return 0;
}

int flightrec_client_finish(flightrec_client *c)
{
    if (c == NULL)
        return FLIGHTREC_EINVAL_CONFIG;
    if (c->finished)
        return c->error;
    c->finished = 1;
    if (c->error == 0) {
        if (!c->header_done)
            frc_fail(c, FLIGHTREC_ETRUNC, 0,
                     "stream ends inside the header (%zu of 8 bytes)",
                     c->part_len);
        else if (c->part_len != 0)
            frc_fail(c, FLIGHTREC_ETRUNC, c->consumed - c->part_len,
                     "stream ends inside an item (%zu of %zu bytes)",
                     c->part_len, c->item_size);
        else if (c->info.kind == FLIGHTREC_STREAM_UNKNOWN)
            frc_fail(c, FLIGHTREC_ETRUNC, c->consumed,
                     "stream ends before the VERSION item");
    }
    /* Deliver what was decoded, unless the callback asked to stop. */
    if (c->error == FLIGHTREC_ECALLBACK)
        return c->error;
    if (c->cur != NULL && close_chunk(c, c->cur, c->consumed) != 0 &&
        c->error == FLIGHTREC_ECALLBACK)
        return c->error;
    if (frc_merge_drain(c) != 0 && c->error == FLIGHTREC_ECALLBACK)
        return c->error;
    for (size_t i = 0; i < c->ring_count; i++) {
        if (frc_flush_untimed(c, c->rings[i]) != 0 &&
            c->error == FLIGHTREC_ECALLBACK)
            return c->error;
    }
    return c->error;
}

void flightrec_client_destroy(flightrec_client *c)
{
    if (c == NULL)
        return;
    frc_merge_free(c);
    for (size_t i = 0; i < c->ring_count; i++) {
        frc_queue_free(&c->rings[i]->held);
        frc_ring_free(c->rings[i]);
        free(c->rings[i]);
    }
    free(c->rings);
    frc_map_free(&c->ring_map);
    frc_names_free(c);
    free(c);
}

const char *flightrec_client_message(const flightrec_client *c)
{
    return c != NULL ? c->message : "";
}

uint64_t flightrec_client_error_offset(const flightrec_client *c)
{
    return c != NULL ? c->error_offset : 0;
}

const struct flightrec_stream_info *flightrec_client_info(
    const flightrec_client *c)
{
    return c != NULL ? &c->info : NULL;
}

void flightrec_client_totals(const flightrec_client *c,
                             struct flightrec_client_totals *out)
{
    if (out == NULL)
        return;
    if (c == NULL) {
        memset(out, 0, sizeof(*out));
        return;
    }
    *out = c->totals;
    out->bytes = c->consumed;
    out->items = c->header_done
                     ? (c->consumed - c->part_len - 8) / c->item_size
                     : 0;
    out->rings = (uint32_t)c->ring_count;
}

size_t flightrec_client_ring_count(const flightrec_client *c)
{
    return c != NULL ? c->ring_count : 0;
}

const struct flightrec_ring_info *flightrec_client_ring(
    const flightrec_client *c, size_t index)
{
    if (c == NULL || index >= c->ring_count)
        return NULL;
    return &c->rings[index]->info;
}
