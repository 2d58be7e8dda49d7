/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Delivery.  Unmerged, a timed record goes straight to the callback.
 * Merged, it waits in its ring's FIFO; a binary min-heap over the rings,
 * keyed by the time of each FIFO's head, releases records in time order as
 * soon as a record merge_window_ns later has been decoded, which bounds the
 * memory by the window rather than by the stream.
 */
#include "client-internal.h"

#include <stdlib.h>
#include <string.h>

int frc_queue_push(struct frc_queue *q, const struct frc_rec *rec)
{
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16;
        struct frc_rec *buf;
        if (cap > SIZE_MAX / sizeof(*buf))
            return -1;
        buf = malloc(cap * sizeof(*buf));
        if (buf == NULL)
            return -1;
        /* Unroll the circle into the new buffer. */
        for (size_t i = 0; i < q->len; i++)
            buf[i] = q->buf[(q->head + i) & (q->cap - 1)];
        free(q->buf);
        q->buf = buf;
        q->cap = cap;
        q->head = 0;
    }
    q->buf[(q->head + q->len) & (q->cap - 1)] = *rec;
    q->len++;
    return 0;
}

void frc_queue_free(struct frc_queue *q)
{
    free(q->buf);
    memset(q, 0, sizeof(*q));
}

int frc_deliver(struct flightrec_client *c, struct frc_ring *r,
                const struct frc_rec *rec)
{
    struct flightrec_record *out = &c->rec;

    out->type = rec->type;
    out->flags = rec->flags;
    out->time_ns = rec->time;
    out->ring = r->info.id;
    out->offset = rec->offset;
    out->ring_info = &r->info;
    if (rec->type == FLIGHTREC_RECORD_EVENT) {
        out->event = rec->event;
        out->data = rec->data;
        out->loss_kind = 0;
        out->loss_count = 0;
        r->info.events++;
        c->totals.events++;
        if (rec->flags & FLIGHTREC_RECORD_UNTIMED) {
            r->info.untimed++;
            c->totals.untimed++;
        }
    } else {
        out->event = 0;
        out->data = 0;
        out->loss_kind = rec->event;
        out->loss_count = rec->data;
    }
    if (!(rec->flags & FLIGHTREC_RECORD_UNTIMED)) {
        if (!r->has_first) {
            r->info.first_ns = rec->time;
            r->has_first = 1;
        }
        r->info.last_ns = rec->time;
    }
    if (rec->flags & FLIGHTREC_RECORD_LATE)
        c->totals.late++;
    if (c->opt.on_record(out, c->opt.arg) != 0)
        return frc_fail(c, FLIGHTREC_ECALLBACK, rec->offset,
                        "stopped by callback");
    return 0;
}

static uint64_t key(const struct frc_ring *r)
{
    return r->ready.buf[r->ready.head].time;
}

static int less(const struct frc_ring *a, const struct frc_ring *b)
{
    uint64_t ka = key(a), kb = key(b);
    return ka < kb || (ka == kb && a->index < b->index);
}

static void put(struct flightrec_client *c, size_t i, struct frc_ring *r)
{
    c->heap[i] = r;
    r->heap_pos = i;
}

static void sift_up(struct flightrec_client *c, size_t i)
{
    struct frc_ring *r = c->heap[i];

    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!less(r, c->heap[p]))
            break;
        put(c, i, c->heap[p]);
        i = p;
    }
    put(c, i, r);
}

static void sift_down(struct flightrec_client *c, size_t i)
{
    struct frc_ring *r = c->heap[i];

    for (;;) {
        size_t l = 2 * i + 1, m = i;
        const struct frc_ring *best = r;
        if (l < c->heap_len && less(c->heap[l], best)) {
            m = l;
            best = c->heap[l];
        }
        if (l + 1 < c->heap_len && less(c->heap[l + 1], best))
            m = l + 1;
        if (m == i)
            break;
        put(c, i, c->heap[m]);
        i = m;
    }
    put(c, i, r);
}

static int heap_insert(struct flightrec_client *c, struct frc_ring *r)
{
    if (c->heap_len == c->heap_cap) {
        size_t cap = c->heap_cap ? c->heap_cap * 2 : 16;
        struct frc_ring **h = realloc(c->heap, cap * sizeof(*h));
        if (h == NULL)
            return -1;
        c->heap = h;
        c->heap_cap = cap;
    }
    put(c, c->heap_len++, r);
    sift_up(c, r->heap_pos);
    return 0;
}

/* Delivers the earliest queued record. */
static int pop(struct flightrec_client *c)
{
    struct frc_ring *r = c->heap[0];
    struct frc_queue *q = &r->ready;
    struct frc_rec rec = q->buf[q->head];

    q->head = (q->head + 1) & (q->cap - 1);
    q->len--;
    if (q->len == 0) {
        r->heap_pos = SIZE_MAX;
        c->heap_len--;
        if (c->heap_len != 0) {
            put(c, 0, c->heap[c->heap_len]);
            sift_down(c, 0);
        }
    } else {
        sift_down(c, 0);
    }
    if (!c->has_released || rec.time > c->released)
        c->released = rec.time;
    c->has_released = 1;
    return frc_deliver(c, r, &rec);
}

int frc_emit(struct flightrec_client *c, struct frc_ring *r,
             struct frc_rec *rec)
{
    uint64_t w = c->opt.merge_window_ns;

    if (!c->opt.merge)
        return frc_deliver(c, r, rec);
    if (rec->time > c->max_time)
        c->max_time = rec->time;
    if (c->has_released && rec->time < c->released) {
        /* Its turn has passed: deliver it now, marked. */
        rec->flags |= FLIGHTREC_RECORD_LATE;
        return frc_deliver(c, r, rec);
    }
    if (frc_queue_push(&r->ready, rec) != 0)
        return frc_fail(c, FLIGHTREC_ENOMEM, rec->offset, "out of memory");
    if (r->ready.len == 1 && heap_insert(c, r) != 0)
        return frc_fail(c, FLIGHTREC_ENOMEM, rec->offset, "out of memory");
    if (w == 0 || c->max_time < w)
        return 0;
    while (c->heap_len != 0 && key(c->heap[0]) <= c->max_time - w) {
        int rc = pop(c);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int frc_merge_drain(struct flightrec_client *c)
{
    while (c->heap_len != 0) {
        int rc = pop(c);
        if (rc != 0)
            return rc;
    }
    return 0;
}

void frc_merge_free(struct flightrec_client *c)
{
    free(c->heap);
    c->heap = NULL;
    c->heap_len = c->heap_cap = 0;
}
