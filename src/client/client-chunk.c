/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Chunks: the PROCESSOR item that opens one, its head (positions, loss
 * counts, RTEMS TAIL/HEAD, the flightrec ring's owner), the loss records
 * that follow from it, and the ring items themselves, including the RTEMS
 * thread switches that say which thread runs on a CPU.
 *
 * Loss rules:
 *  - flightrec: RING_POSITION against the end of the ring's previous chunk
 *    gives missing items, PER_CPU_OVERFLOW / PER_CPU_DISCARD exact counts.
 *  - RTEMS v10: PER_CPU_OVERFLOW is the exact count.
 *  - RTEMS v1..v9: a chunk's HEAD - TAIL items were produced since the last
 *    drain; a ring of COUNT items hands out at most COUNT - 1 of them, the
 *    rest were overwritten (overflow).  A TAIL that is not the ring's
 *    previous HEAD means chunks are missing: exactly TAIL - previous HEAD
 *    items never reached the stream.
 */
#include "client-internal.h"

#include <stdlib.h>
#include <string.h>

/* Registers ring @a id at index ring_count, without its struct. */
int frc_new_ring(struct flightrec_client *c, uint32_t id, uint64_t offset)
{
    size_t before = fr_hash_map_bytes(&c->ring_map), grown = 0;

    if (c->ring_count == c->ring_cap) {
        size_t cap = c->ring_cap ? c->ring_cap * 2 : 16;
        struct frc_ring **rings = realloc(c->rings, cap * sizeof(*rings));
        if (rings == NULL)
            return frc_fail(c, FLIGHTREC_ENOMEM, offset, "out of memory");
        grown = (cap - c->ring_cap) * sizeof(*rings);
        c->rings = rings;
        c->ring_cap = cap;
    }
    /* Added last, so its index is ring_count. */
    if (fr_hash_map_add(&c->ring_map, id, NULL) == FR_HASH_NONE)
        return frc_fail(c, FLIGHTREC_ENOMEM, offset, "out of memory");
    c->rings[c->ring_count++] = NULL;
    c->totals.rings = (uint32_t)c->ring_count;
    return frc_charge(c, grown + fr_hash_map_bytes(&c->ring_map) - before,
                      offset);
}

/* The struct of ring @a index, as a ring whose chunk just started. */
static struct frc_ring *make_ring(struct flightrec_client *c, uint32_t index,
                                  uint64_t offset)
{
    struct frc_ring *r;

    if (frc_charge(c, FRC_RING_COST, offset) != 0)
        return NULL;
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        frc_fail(c, FLIGHTREC_ENOMEM, offset, "out of memory");
        return NULL;
    }
    r->info.id = (uint32_t)fr_hash_map_key(&c->ring_map, index);
    r->info.thread_id = -1;
    r->index = index;
    frc_ident_init(r);
    r->in_header = 1;
    c->rings[index] = r;
    return r;
}

struct frc_ring *frc_cur(struct flightrec_client *c, uint64_t offset)
{
    if (c->cur == NULL && c->cur_empty != 0) {
        struct frc_ring *r = make_ring(c, c->cur_empty - 1, offset);
        if (r == NULL)
            return NULL;
        c->cur = r;
        c->cur_empty = 0;
    }
    return c->cur;
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
     * consecutive; everything else leaves a hole in the time chain, and
     * on RTEMS in the thread switches: who runs is unknown until the next
     * switch. */
    if (kind != FLIGHTREC_LOSS_DISCARD) {
        frc_break(r);
        if (c->rtems)
            frc_thread_unknown(r);
    }
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
int frc_close_chunk(struct flightrec_client *c, struct frc_ring *r,
                    uint64_t offset)
{
    int rc = 0;

    if (r == NULL)
        return 0;
    if (r->in_header)
        rc = settle(c, r, offset);
    r->has_end = r->has_position;
    r->end = r->position + (uint32_t)(r->seq - r->chunk_seq);
    /* Version 2 positions count the program's events only. */
    if (c->positions_in_events)
        r->end -= (uint32_t)(r->uptime_seq - r->chunk_uptime_seq);
    r->has_position = 0;
    r->chunk_seq = r->seq;
    r->chunk_uptime_seq = r->uptime_seq;
    return rc;
}

/* RTEMS v1..v9 HEAD, after the chunk's TAIL (rules at the top). */
static int tail_head(struct flightrec_client *c, struct frc_ring *r,
                     uint32_t head, uint64_t offset)
{
    uint32_t produced, count = c->info.items_per_ring;
    uint64_t missing = 0;
    int rc;

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
    /* What was lost comes first: the missing chunks preceded this one. */
    rc = loss(c, r, FLIGHTREC_LOSS_MISSING, missing, offset);
    if (rc == 0)
        rc = loss(c, r, FLIGHTREC_LOSS_OVERFLOW, r->chunk_overflow, offset);
    r->chunk_overflow = 0;
    frc_refresh_fast(c, r);
    return rc;
}

/*=====   Chunk items   =====*/

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
    rc = frc_close_chunk(c, c->cur, offset);
    if (rc != 0)
        return rc;
    c->cur = NULL;
    c->cur_empty = 0;
    i = fr_hash_map_find(&c->ring_map, id);
    if (i == FR_HASH_NONE) {
        i = (uint32_t)c->ring_count;
        if (frc_new_ring(c, (uint32_t)id, offset) != 0)
            return c->error;
    }
    if (FLIGHTREC_UNLIKELY(c->on_segment != NULL))
        c->on_segment(c->segment_arg, i, offset);
    r = c->rings[i];
    if (r == NULL) {
        /* Nothing to start: its struct is made when the chunk has more
         * than this item (frc_cur). */
        c->cur_empty = i + 1;
        return 0;
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
int frc_ring_item(struct flightrec_client *c, uint32_t action, uint32_t word,
                  uint64_t data, uint64_t offset)
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
    case A_SWITCH_OUT:
    case A_SWITCH_IN:
        /* SWITCH_OUT still runs on the old thread (its data), SWITCH_IN
         * already on the new one: both items belong to the thread they
         * name, and so does everything after SWITCH_IN. */
        frc_thread_runs(c, r, (int64_t)data);
        return frc_timed_item(c, r, field, event, data, offset);
    case A_EVENT_THREAD:
        rc = frc_timed_item(c, r, field, event, data, offset);
        frc_name_start(c, 1, (int64_t)data, NULL);
        return rc;
    default:
        return frc_timed_item(c, r, field, event, data, offset);
    }
}

static int loss_item(struct flightrec_client *c, struct frc_ring *r,
                     uint32_t action, uint64_t data, uint64_t offset)
{
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

int frc_chunk_item(struct flightrec_client *c, uint32_t action,
                   uint64_t data, uint64_t offset)
{
    struct frc_ring *r = c->cur;
    int rc;

    switch (action) {
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
    case A_NAME_ID:
        rc = frc_close_chunk(c, r, offset);
        c->cur = NULL;
        c->cur_empty = 0;
        if (FLIGHTREC_UNLIKELY(c->on_segment != NULL))
            c->on_segment(c->segment_arg, UINT32_MAX, offset);
        if (data < FLIGHTREC_EVENT_COUNT) {
            frc_name_start(c, 2, (int64_t)data, NULL);
            /* A name record without EVENT_KIND names an instant. */
            c->event_kind[data] = FLIGHTREC_EVENT_INSTANT;
        } else {
            c->name_kind = 0;
        }
        return rc;
    case A_KIND:
        /* Only right after its event's name record (docs/format.md). */
        if (c->name_kind == 2 && c->item_no == c->name_next) {
            uint32_t id = (uint32_t)c->name_target;
            c->event_kind[id] = (uint32_t)data;
            if (FLIGHTREC_EVENT_KIND_OF(data) == FLIGHTREC_EVENT_STRING)
                c->text_active = 1;
            c->event_names_changes++;
            c->name_kind = 0;
        }
        return 0;
    default:
        break;
    }
    /* The rest belongs to the head of the current chunk. */
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
            rc = frc_close_chunk(c, r, offset);
            if (rc != 0)
                return rc;
            r->in_header = 1;
            r->fast = 0;
        }
        r->position = (uint32_t)data;
        r->has_position = 1;
        return 0;
    case A_OVERFLOW:
    case A_DISCARD:
        return loss_item(c, r, action, data, offset);
    case A_TAIL:
        r->v1_tail = (uint32_t)data;
        r->has_v1_tail = 1;
        return 0;
    case A_HEAD:
        return tail_head(c, r, (uint32_t)data, offset);
    default:
        return 0;
    }
}
