/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Time: converting ticks to nanoseconds exactly, anchoring rings at sync
 * items (UPTIME_LOW/HIGH) and timing held-back items backwards from them.
 *
 * A ring's chain keeps its position as an exact pair (ns, rem) with
 * ticks * 1e9 = ns * f + rem, so that a forward step of < 2^22 ticks costs
 * one multiply and one division by the invariant frequency (done with a
 * precomputed reciprocal), with no 64-bit overflow however long the gap to
 * the anchor: the RTEMS client multiplies the whole distance to its anchor
 * in 64 bits and goes wrong beyond 2 s.
 */
#include "client-internal.h"

#include "../common/muldiv.h"

#include <string.h>

#define NS_PER_S UINT64_C(1000000000)

uint64_t flightrec_ticks_to_ns(uint64_t ticks, uint64_t frequency)
{
    return fr_muldiv(ticks, NS_PER_S, frequency);
}

/* RTEMS uptime is 32.32 fixed-point seconds.  The high part times 1e9 and
 * the low part times 1e9 (< 2^62) both fit, so this is exact without
 * 128-bit arithmetic. */
uint64_t frc_bt_to_ns(uint64_t bt)
{
    return (bt >> 32) * NS_PER_S + (((bt & 0xffffffffu) * NS_PER_S) >> 32);
}

uint64_t frc_mulhi(uint64_t a, uint64_t b)
{
    uint64_t hi, lo;

    fr_mul128(a, b, &hi, &lo);
    return hi;
}

/*
 * Division by the frequency with a precomputed reciprocal (Granlund and
 * Montgomery, "Division by invariant integers using multiplication", the
 * round-up variant with a 65-bit multiplier): exact for every 64-bit x.
 */
void frc_set_divisor(struct flightrec_client *c, uint64_t d)
{
    int l = 0;

    c->freq = d;
    if (d <= 1) {
        c->div_kind = 0;
        return;
    }
    if ((d & (d - 1)) == 0) {
        while ((UINT64_C(1) << l) < d)
            l++;
        c->div_kind = 1;
        c->div_shift = l;
        return;
    }
    while (l < 64 && (UINT64_C(1) << l) < d)
        l++;
    /* 2^(l-1) < d < 2^l; (2^l - d) < d, so the quotient fits. */
    c->div_magic =
        fr_div128(l == 64 ? 0 - d : (UINT64_C(1) << l) - d, 0, d) + 1;
    c->div_shift = l - 1;
    c->div_kind = 2;
}

void frc_refresh_fast(const struct flightrec_client *c, struct frc_ring *r)
{
    (void)c;
    r->fast = r->synced && r->held.len == 0 && !r->in_header &&
              !r->ident_dirty && (!r->has_floor || r->ns >= r->floor);
    /* Fast-path records take the generation without asking. */
    r->gen_used |= r->fast;
}

/* Continuity is lost (overflow, missing chunks, rewind): hold items back
 * until the next sync, as the RTEMS client does. */
void frc_break(struct frc_ring *r)
{
    r->synced = 0;
    r->has_low = 0;
    r->fast = 0;
}

/* Sets the chain to absolute flightrec ticks. */
static void set_ticks(const struct flightrec_client *c, struct frc_ring *r,
                      uint64_t ticks)
{
    r->ticks = ticks;
    r->ns = flightrec_ticks_to_ns(ticks, c->freq);
    /* The true remainder is < f, so wrapping arithmetic gives it. */
    r->rem = r->ns == UINT64_MAX ? 0 : ticks * NS_PER_S - r->ns * c->freq;
}

/* Delivers (or queues for the merge) a timed record, keeping the ring's
 * time monotonic. */
static int emit_timed(struct flightrec_client *c, struct frc_ring *r,
                      struct frc_rec *rec)
{
    if (r->has_floor && rec->time < r->floor) {
        rec->time = r->floor;
        rec->flags |= FLIGHTREC_RECORD_CLAMPED;
    }
    r->floor = rec->time;
    r->has_floor = 1;
    return frc_emit(c, r, rec);
}

/* Time of an item @a back ticks before (negative: after) the anchor. */
static uint64_t time_back(const struct flightrec_client *c,
                          const struct frc_ring *r, uint64_t anchor,
                          int64_t back)
{
    if (c->rtems) {
        uint64_t d = flightrec_ticks_to_ns((uint64_t)back, c->freq);
        return r->ns > d ? r->ns - d : 0;
    }
    if (back >= 0)
        return flightrec_ticks_to_ns(
            (uint64_t)back > anchor ? 0 : anchor - (uint64_t)back, c->freq);
    return flightrec_ticks_to_ns(anchor + (uint64_t)(-back), c->freq);
}

/* Times the held items backwards from the anchor just set, step by step,
 * and delivers all of them up to the last event; losses after the last
 * event stay held for the next item. */
static int resolve_held(struct flightrec_client *c, struct frc_ring *r)
{
    struct frc_queue *q = &r->held;
    size_t mask = q->cap - 1;
    uint32_t cur = r->field;
    int64_t back = 0;
    uint64_t next = 0;
    size_t last = SIZE_MAX;

    for (size_t i = q->len; i-- > 0;) {
        struct frc_rec *rec = &q->buf[(q->head + i) & mask];
        if (rec->type != FLIGHTREC_RECORD_EVENT) {
            rec->time = next;
            continue;
        }
        if (last == SIZE_MAX)
            last = i;
        uint32_t fwd = (cur - rec->field) & FLIGHTREC_TIME_MASK;
        if (!c->rtems && fwd >= c->step_limit)
            back -= (int64_t)(FRC_TIME_WRAP - fwd);
        else
            back += fwd;
        cur = rec->field;
        rec->time = time_back(c, r, r->ticks, back);
        next = rec->time;
    }
    if (last == SIZE_MAX)
        return 0;
    for (size_t i = 0; i <= last; i++) {
        struct frc_rec rec = q->buf[(q->head + i) & mask];
        int rc;
        if (rec.type == FLIGHTREC_RECORD_EVENT) {
            r->held_events--;
        }
        c->held_total--;
        rc = emit_timed(c, r, &rec);
        if (rc != 0) {
            q->head = (q->head + i + 1) & mask;
            q->len -= i + 1;
            return rc;
        }
    }
    q->head = (q->head + last + 1) & mask;
    q->len -= last + 1;
    return 0;
}

static int check_frequency(struct flightrec_client *c, uint64_t offset)
{
    if (c->freq_locked)
        return 0;
    if (c->freq == 0)
        return frc_fail(c, FLIGHTREC_ESTREAM, offset,
                        "timed item before FREQUENCY");
    c->freq_locked = 1;
    return 0;
}

int frc_sync(struct flightrec_client *c, struct frc_ring *r, uint32_t field,
             uint64_t value, uint64_t offset)
{
    int rc = check_frequency(c, offset);

    if (rc != 0)
        return rc;
    if (c->rtems) {
        r->ticks = 0;
        r->ns = frc_bt_to_ns(value);
        r->rem = 0;
    } else {
        set_ticks(c, r, value);
    }
    r->field = field;
    r->synced = 1;
    rc = r->held_events != 0 ? resolve_held(c, r) : 0;
    frc_refresh_fast(c, r);
    return rc;
}

/* Takes the oldest held record off a ring's queue (not empty). */
static struct frc_rec pop_held(struct flightrec_client *c,
                               struct frc_queue *q)
{
    struct frc_rec rec = q->buf[q->head];
    q->head = (q->head + 1) & (q->cap - 1);
    q->len--;
    c->held_total--;
    return rec;
}

/* Delivers the losses held before an item, with the item's time. */
static int flush_losses(struct flightrec_client *c, struct frc_ring *r,
                        uint64_t time)
{
    struct frc_queue *q = &r->held;

    while (q->len != 0) {
        struct frc_rec rec = pop_held(c, q);
        int rc;
        rec.time = time;
        rc = emit_timed(c, r, &rec);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int frc_hold(struct flightrec_client *c, struct frc_ring *r,
             const struct frc_rec *rec)
{
    if (r->held.len >= FRC_HOLD_RING_MAX || c->held_total >= FRC_HOLD_TOTAL_MAX)
        return frc_fail(c, FLIGHTREC_ECOUNT, rec->offset,
                        "ring %u: too many items held back (limit %u per "
                        "ring, %u in all)", (unsigned)r->info.id,
                        (unsigned)FRC_HOLD_RING_MAX,
                        (unsigned)FRC_HOLD_TOTAL_MAX);
    if (frc_queue_push(c, &r->held, rec) != 0)
        return frc_fail(c, FLIGHTREC_ENOMEM, rec->offset, "out of memory");
    c->held_total++;
    if (rec->type == FLIGHTREC_RECORD_EVENT)
        r->held_events++;
    r->fast = 0;
    return 0;
}

int frc_timed_item(struct flightrec_client *c, struct frc_ring *r,
                   uint32_t field, uint32_t event, uint64_t data,
                   uint64_t offset)
{
    struct frc_rec rec;
    uint32_t step;
    int rc = check_frequency(c, offset);

    if (rc != 0)
        return rc;
    memset(&rec, 0, sizeof(rec));
    if (frc_ident_take(c, r, &rec.gen) != 0)
        return frc_fail(c, FLIGHTREC_ENOMEM, offset, "out of memory");
    rec.type = FLIGHTREC_RECORD_EVENT;
    rec.event = event;
    rec.data = data;
    rec.offset = offset;
    rec.field = field;
    if (!r->synced)
        return frc_hold(c, r, &rec);
    step = (field - r->field) & FLIGHTREC_TIME_MASK;
    r->field = field;
    if (step >= c->step_limit) {
        /* A small backwards step of the counter (flightrec only). */
        uint64_t b = FRC_TIME_WRAP - step;
        set_ticks(c, r, r->ticks > b ? r->ticks - b : 0);
    } else {
        uint64_t x = r->rem + (uint64_t)step * NS_PER_S;
        uint64_t qt = frc_div(c, x);
        r->ticks += step;
        r->ns += qt;
        r->rem = x - qt * c->freq;
    }
    rec.time = r->ns;
    if (r->held.len != 0) {
        rc = flush_losses(c, r, rec.time);
        if (rc != 0)
            return rc;
    }
    rc = emit_timed(c, r, &rec);
    frc_refresh_fast(c, r);
    return rc;
}

/* At the end: what never met a sync is delivered untimed (losses take the
 * ring's last time when it has one). */
int frc_flush_untimed(struct flightrec_client *c, struct frc_ring *r)
{
    struct frc_queue *q = &r->held;

    while (q->len != 0) {
        struct frc_rec rec = pop_held(c, q);
        int rc;
        if (rec.type == FLIGHTREC_RECORD_EVENT) {
            r->held_events--;
            rec.time = 0;
            rec.flags |= FLIGHTREC_RECORD_UNTIMED;
        } else if (r->has_floor) {
            rec.time = r->floor;
        } else {
            rec.time = 0;
            rec.flags |= FLIGHTREC_RECORD_UNTIMED;
        }
        rc = frc_deliver(c, r, &rec);
        if (rc != 0)
            return rc;
    }
    return 0;
}
