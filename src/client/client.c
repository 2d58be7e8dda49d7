/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The decoder's API, its byte framing (format word, magic, items split
 * across feeds) and the decode loop, which times and delivers the common
 * item in place and hands every other one to the header (client-header.c)
 * or chunk (client-chunk.c) code.  Timing lives in client-time.c, delivery
 * in client-merge.c.
 *
 * Items are decoded byte by byte in the stream's byte order, so the host's
 * byte order never matters; the compiler turns the shifts into plain
 * (byte-swapping) loads.  A whole item in the caller's buffer is decoded in
 * place; only an item split across two feeds is copied.
 *
 * Choices this decoder makes where the format leaves room:
 *  - Metadata items (header, chunk framing, names, UPTIME_LOW/HIGH) are
 *    consumed, not delivered; every other item is an EVENT.
 *  - A LOSS record sits in its ring's sequence where the loss was found and
 *    takes the time of the ring's next timed item; with none (end of
 *    stream) the ring's previous time, or UNTIMED if it never had one.
 *  - Overflow and missing chunks break the ring's time chain (items wait
 *    for the next sync); discards do not (the ring's items stay
 *    consecutive).  A rewind breaks it and restarts the monotonic floor.
 *  - RTEMS: a CPU's records carry the thread running on it (from the
 *    THREAD_SWITCH items), unknown before the first switch and after a
 *    loss.
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

static int slow_item(struct flightrec_client *c, uint32_t word, uint64_t data,
                     uint64_t offset)
{
    uint32_t event = FLIGHTREC_GET_EVENT(word);
    uint32_t action;
    int rc;

    /* What the window made due goes before anything else changes. */
    rc = frc_merge_settle(c);
    if (rc != 0)
        return rc;
    /* The item's number: name sequences must be consecutive items. */
    c->item_no = (offset - 8) / c->item_size;
    if (FLIGHTREC_UNLIKELY(c->info.kind == FLIGHTREC_STREAM_UNKNOWN)) {
        if (c->v1_pending) {
            rc = frc_v1_numbering(c, event, offset);
            if (rc != 0)
                return rc;
        } else if (event != FLIGHTREC_EV_VERSION) {
            return frc_fail(c, FLIGHTREC_ESTREAM, offset,
                            "expected the VERSION item, got event %u",
                            (unsigned)event);
        } else {
            return frc_set_version(c, data, offset);
        }
    }
    action = c->cls[event];
    /* A chunk that holds more than its PROCESSOR item needs its ring. */
    if (FLIGHTREC_UNLIKELY(c->cur_empty != 0) && action <= A_CHUNK_LAST &&
        action != A_PROCESSOR && action != A_NAME_ID &&
        frc_cur(c, offset) == NULL)
        return c->error;
    if (action <= A_RING_LAST)
        rc = frc_ring_item(c, action, word, data, offset);
    else if (action <= A_CHUNK_LAST)
        rc = frc_chunk_item(c, action, data, offset);
    else
        rc = frc_header_item(c, action, data, offset);
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
 * The fast path's common case, a run of plain events of one ring delivered
 * straight to the callback (no merge, or the ordered reader's direct
 * delivery: times below direct_below): the time chain stays in registers
 * from item to item and goes back to the ring when the run ends, since
 * nothing the callback may call reads it.  The caller has found the first
 * item (at @a p: its @a field, @a step, and x and q of its division) to
 * qualify.  The run ends before the first item that does not: another
 * kind of item, a backwards step, a time at or past @a below; what
 * run() does with it is what it would have done without this loop.
 * Returns where the run ended; *@a failed when the callback stopped it.
 */
static FLIGHTREC_ALWAYS_INLINE const unsigned char *run_direct(
    struct flightrec_client *c, struct frc_ring *r, const unsigned char *p,
    const unsigned char *end, uint64_t offset_at_p, int be, int wide,
    uint32_t field, uint32_t step, uint64_t x, uint64_t q, uint64_t below,
    int *failed)
{
    const size_t size = wide ? 12 : 8;
    const unsigned char *cls = c->cls;
    const uint32_t limit = c->step_limit;
    const int div_kind = c->div_kind;
    const int div_shift = c->div_shift;
    const uint64_t div_magic = c->div_magic, freq = c->freq;
    const flightrec_record_fn fn = c->opt.on_record;
    void *const arg = c->opt.arg;
    struct flightrec_record *out = &c->rec;
    /* The stream offset of an item is base + its address (wrapping
     * arithmetic), one add instead of two and a spilled pointer. */
    const uint64_t base = offset_at_p - (uint64_t)(uintptr_t)p;
    uint64_t ticks = r->ticks, ns = r->ns, rem = r->rem, seq = r->seq;

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
    if (FLIGHTREC_UNLIKELY(!r->has_first)) {
        r->info.first_ns = ns + q;
        r->has_first = 1;
    }
    for (;;) {
        uint32_t word = rd32(p, be);
        /* The item is taken: the chain moves on and it is counted
         * (FRC_COUNT_EVENT and FRC_COUNT_TIME of an unflagged record). */
        ticks += step;
        ns += q;
        rem = x - q * freq;
        seq++;
        r->info.events++;
        c->totals.events++;
        r->info.last_ns = ns;
        out->time_ns = ns;
        out->event = word & FLIGHTREC_EVENT_MASK;
        out->data = wide ? rd64(p + 4, be) : rd32(p + 4, be);
        out->offset = base + (uint64_t)(uintptr_t)p;
        if (FLIGHTREC_UNLIKELY(fn(out, arg) != 0)) {
            frc_fail(c, FLIGHTREC_ECALLBACK, out->offset,
                     "stopped by callback");
            *failed = 1;
            break;
        }
        p += size;
        if (p == end)
            break;
        /* Whether the next item qualifies; nothing is changed if not. */
        word = rd32(p, be);
        uint32_t f = word >> FLIGHTREC_EVENT_BITS;
        step = (f - field) & FLIGHTREC_TIME_MASK;
        if (cls[word & FLIGHTREC_EVENT_MASK] != A_EVENT || step >= limit)
            break;
        x = rem + (uint64_t)step * NS_PER_S;
        q = frc_div_by(div_kind, div_magic, div_shift, x);
        if (ns + q >= below)
            break;
        field = f;
    }
    r->field = field;
    r->ticks = ticks;
    r->ns = ns;
    r->rem = rem;
    r->floor = ns;
    r->has_floor = 1;
    r->seq = seq;
    return p;
}

/*
 * The merged counterpart of run_direct(): a run of plain events of one
 * ring queued for the merge in place, as frc_merge_push_fast() queues
 * each (room in the ring's last block, not below fast_floor), with the
 * time chain in registers.  A release that becomes due is done (or
 * deferred) after the item that made it due, as the item by item path
 * does.  *@a status: 0 on, 1 feed_stop was set (the caller stops), -1 an
 * error (the item at the returned position counts as not consumed).
 */
static FLIGHTREC_ALWAYS_INLINE const unsigned char *run_queue(
    struct flightrec_client *c, struct frc_ring *r, const unsigned char *p,
    const unsigned char *end, uint64_t offset_at_p, int be, int wide,
    uint32_t field, uint32_t step, uint64_t x, uint64_t q, int *status)
{
    const size_t size = wide ? 12 : 8;
    const unsigned char *cls = c->cls;
    const uint32_t limit = c->step_limit;
    const int div_kind = c->div_kind;
    const int div_shift = c->div_shift;
    const uint64_t div_magic = c->div_magic, freq = c->freq;
    /* The stream offset of an item is base + its address (wrapping
     * arithmetic), one add instead of two and a spilled pointer. */
    const uint64_t base = offset_at_p - (uint64_t)(uintptr_t)p;
    uint64_t ticks = r->ticks, ns = r->ns, rem = r->rem, seq = r->seq;

    for (;;) {
        uint32_t word = rd32(p, be);
        struct frc_qrec *rec;

        ticks += step;
        ns += q;
        rem = x - q * freq;
        seq++;
        rec = &r->rq_tail->rec[r->rq_end++];
        rec->time = ns;
        rec->data = wide ? rd64(p + 4, be) : rd32(p + 4, be);
        rec->offset = base + (uint64_t)(uintptr_t)p;
        rec->gen = r->gen;
        rec->event = (uint16_t)(word & FLIGHTREC_EVENT_MASK);
        rec->type = FLIGHTREC_RECORD_EVENT;
        rec->flags = 0;
        if (FLIGHTREC_UNLIKELY(--c->feed_quota == 0))
            c->feed_stop = 1;
        if (ns > c->max_time)
            c->max_time = ns;
        if (FLIGHTREC_UNLIKELY(c->max_time >= c->release_at)) {
            if (c->defer_left != 0) {
                /* As in frc_merge_push_fast(). */
                c->defer_left--;
                c->fast_floor = c->max_time - c->opt.merge_window_ns + 1;
            } else if (frc_merge_release(c) != 0) {
                *status = -1;
                break;
            }
        }
        p += size;
        if (FLIGHTREC_UNLIKELY(c->feed_stop)) {
            *status = 1;
            break;
        }
        if (p == end)
            break;
        /* Whether the next item qualifies; nothing is changed if not. */
        word = rd32(p, be);
        uint32_t f = word >> FLIGHTREC_EVENT_BITS;
        step = (f - field) & FLIGHTREC_TIME_MASK;
        if (cls[word & FLIGHTREC_EVENT_MASK] != A_EVENT || step >= limit)
            break;
        x = rem + (uint64_t)step * NS_PER_S;
        q = frc_div_by(div_kind, div_magic, div_shift, x);
        if (!(r->rq_head != NULL && r->rq_end < r->rq_cap &&
              ns + q >= c->fast_floor))
            break;
        field = f;
    }
    r->field = field;
    r->ticks = ticks;
    r->ns = ns;
    r->rem = rem;
    r->floor = ns;
    r->has_floor = 1;
    r->seq = seq;
    return p;
}

/*
 * Decodes the whole items in p[0..n).  The common case -- a plain event in
 * a ring whose time chain is running, nothing held, no merge -- is timed
 * and delivered right here; everything else goes through slow_item().
 * Returns the bytes consumed (less than n only after an error).
 */
static FLIGHTREC_ALWAYS_INLINE size_t run(struct flightrec_client *c,
                                          const unsigned char *p, size_t n,
                                          uint64_t offset, int be, int wide,
                                          int scan)
{
    const size_t size = wide ? 12 : 8;
    const unsigned char *start = p;
    const unsigned char *end = p + (n - n % size);

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
                if (scan && FLIGHTREC_LIKELY(!c->text_active)) {
                    /* The index pass of an ordered read: no time and no
                     * record, only what decides how later items decode
                     * (their steps, the ring's position count). */
                    /* The plain events that follow in this ring, the
                     * same way, with the chain in registers: nothing
                     * else reads it meanwhile. */
                    const unsigned char *cls = c->cls;
                    const uint32_t limit = c->step_limit;
                    uint64_t ticks = r->ticks + step, seq = r->seq + 1;
                    p += size;
                    while (p != end) {
                        uint32_t w = rd32(p, be);
                        uint32_t f = w >> FLIGHTREC_EVENT_BITS;
                        uint32_t s = (f - field) & FLIGHTREC_TIME_MASK;
                        if (cls[w & FLIGHTREC_EVENT_MASK] != A_EVENT ||
                            s >= limit)
                            break;
                        field = f;
                        ticks += s;
                        seq++;
                        p += size;
                    }
                    r->field = field;
                    r->ticks = ticks;
                    r->seq = seq;
                    continue;
                }
                uint64_t x = r->rem + (uint64_t)step * NS_PER_S;
                uint64_t q = frc_div(c, x);
                if (FLIGHTREC_LIKELY(c->opt.merge && !c->text_active) &&
                    (r != c->direct_ring || r->ns + q >= c->direct_below) &&
                    r->rq_head != NULL && r->rq_end < r->rq_cap &&
                    r->ns + q >= c->fast_floor) {
                    int status = 0;
                    p = run_queue(c, r, p, end,
                                  offset + (uint64_t)(p - start), be, wide,
                                  field, step, x, q, &status);
                    if (FLIGHTREC_UNLIKELY(status < 0))
                        return (size_t)(p - start);
                    if (FLIGHTREC_UNLIKELY(status > 0))
                        break;
                    continue;
                }
                if (FLIGHTREC_LIKELY(!c->text_active) &&
                    (!c->opt.merge || (r == c->direct_ring &&
                                       r->ns + q < c->direct_below))) {
                    int failed = 0;
                    p = run_direct(c, r, p, end,
                                   offset + (uint64_t)(p - start), be, wide,
                                   field, step, x, q,
                                   c->opt.merge ? c->direct_below
                                                : UINT64_MAX,
                                   &failed);
                    if (FLIGHTREC_UNLIKELY(failed))
                        return (size_t)(p - start);
                    continue;
                }
                r->field = field;
                r->ticks += step;
                r->ns += q;
                r->rem = x - q * c->freq;
                r->floor = r->ns;
                r->has_floor = 1;
                r->seq++;
                if (c->opt.merge && (r != c->direct_ring ||
                                     r->ns >= c->direct_below)) {
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
                    if (FLIGHTREC_UNLIKELY(c->feed_stop))
                        break;
                    continue;
                }
                /* Delivered now while strings are being defined
                 * (run_direct() took the other cases): they are put
                 * together in deliver(). */
                struct frc_rec rec;
                rec.time = r->ns;
                rec.data = data;
                rec.offset = offset + (uint64_t)(p - start);
                rec.event = event;
                rec.field = field;
                rec.gen = r->gen;
                rec.type = FLIGHTREC_RECORD_EVENT;
                rec.flags = 0;
                if (frc_deliver(c, r, &rec) != 0)
                    return (size_t)(p - start);
                p += size;
                continue;
            }
        }
        if (slow_item(c, word, data, offset + (uint64_t)(p - start)) != 0)
            return (size_t)(p - start);
        p += size;
        if (FLIGHTREC_UNLIKELY(c->feed_stop))
            break; /* the ordered reader has queued enough of this ring */
    }
    return (size_t)(p - start);
}

static size_t run_le32(struct flightrec_client *c, const unsigned char *p,
                       size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 0, 0, 0);
}

static size_t scan_le32(struct flightrec_client *c, const unsigned char *p,
                      size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 0, 0, 1);
}

static size_t run_le64(struct flightrec_client *c, const unsigned char *p,
                       size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 0, 1, 0);
}

static size_t scan_le64(struct flightrec_client *c, const unsigned char *p,
                      size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 0, 1, 1);
}

static size_t run_be32(struct flightrec_client *c, const unsigned char *p,
                       size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 1, 0, 0);
}

static size_t scan_be32(struct flightrec_client *c, const unsigned char *p,
                      size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 1, 0, 1);
}

static size_t run_be64(struct flightrec_client *c, const unsigned char *p,
                       size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 1, 1, 0);
}

static size_t scan_be64(struct flightrec_client *c, const unsigned char *p,
                      size_t n, uint64_t offset)
{
    return run(c, p, n, offset, 1, 1, 1);
}

static size_t items(struct flightrec_client *c, const unsigned char *p,
                    size_t n, uint64_t offset)
{
    if (FLIGHTREC_UNLIKELY(c->scan_only)) {
        if (c->big_endian)
            return c->wide ? scan_be64(c, p, n, offset)
                           : scan_be32(c, p, n, offset);
        return c->wide ? scan_le64(c, p, n, offset)
                       : scan_le32(c, p, n, offset);
    }
    if (c->big_endian)
        return c->wide ? run_be64(c, p, n, offset) : run_be32(c, p, n, offset);
    return c->wide ? run_le64(c, p, n, offset) : run_le32(c, p, n, offset);
}

int frc_feed_items(struct flightrec_client *c, struct frc_ring *cur,
                   uint32_t cur_empty, const unsigned char *p, size_t n,
                   uint64_t offset, size_t *used)
{
    *used = 0;
    if (c->error != 0)
        return c->error;
    c->cur = cur;
    c->cur_empty = cur == NULL ? cur_empty : 0;
    *used = items(c, p, n, offset);
    return c->error;
}

int frc_end_chunk(struct flightrec_client *c, struct frc_ring *r,
                  uint64_t offset)
{
    int rc = frc_close_chunk(c, r, offset);

    if (c->cur == r)
        c->cur = NULL;
    c->cur_empty = 0;
    return rc;
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
    if (options->merge_window_ns == FLIGHTREC_MERGE_WINDOW_AUTO) {
        /* Set from the FREQUENCY item; no record is timed before it. */
        c->window_auto = 1;
    }
    c->info.merge_window_ns = c->window_auto ? 0 : c->opt.merge_window_ns;
    c->info.process_id = -1;
    c->proc_max = -1;
    c->item_size = 8;
    c->release_at = UINT64_MAX;
    c->defer_left = FRC_RELEASE_BATCH;
    c->feed_quota = UINT64_MAX;
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
    /* Nothing due waits past a feed: a pipe's records go out as soon as
     * the window allows. */
    if (c->error == 0)
        frc_merge_settle(c);
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
        else if (c->v1_pending)
            frc_fail(c, FLIGHTREC_ETRUNC, c->consumed,
                     "stream ends before the version 1 header shows its "
                     "numbering");
        else if (c->info.kind == FLIGHTREC_STREAM_UNKNOWN)
            frc_fail(c, FLIGHTREC_ETRUNC, c->consumed,
                     "stream ends before the VERSION item");
    }
    /* Deliver what was decoded, unless the callback asked to stop. */
    if (c->error == FLIGHTREC_ECALLBACK)
        return c->error;
    if (c->cur != NULL && frc_close_chunk(c, c->cur, c->consumed) != 0 &&
        c->error == FLIGHTREC_ECALLBACK)
        return c->error;
    if (frc_merge_drain(c) != 0 && c->error == FLIGHTREC_ECALLBACK)
        return c->error;
    for (size_t i = 0; i < c->ring_count; i++) {
        if (c->rings[i] != NULL && frc_flush_untimed(c, c->rings[i]) != 0 &&
            c->error == FLIGHTREC_ECALLBACK)
            return c->error;
    }
    if (frc_text_flush(c) != 0 && c->error == FLIGHTREC_ECALLBACK)
        return c->error;
    return c->error;
}

void flightrec_client_destroy(flightrec_client *c)
{
    if (c == NULL)
        return;
    frc_merge_free(c);
    for (size_t i = 0; i < c->ring_count; i++) {
        if (c->rings[i] == NULL)
            continue;
        frc_queue_free(&c->rings[i]->held);
        frc_ring_free(c->rings[i]);
        free(c->rings[i]);
    }
    free(c->rings);
    fr_hash_map_free(&c->ring_map);
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
    struct flightrec_ring_info *e;

    if (c == NULL || index >= c->ring_count)
        return NULL;
    if (c->rings[index] != NULL)
        return &c->rings[index]->info;
    /* A ring that held nothing: its description is its id alone, made in
     * one place per client (the client is not const, only this view). */
    e = (struct flightrec_ring_info *)&c->empty_info;
    memset(e, 0, sizeof(*e));
    e->id = (uint32_t)fr_hash_map_key(&c->ring_map, (uint32_t)index);
    e->thread_id = -1;
    return e;
}
