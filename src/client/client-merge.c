/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Delivery.  Unmerged, a timed record goes straight to the callback.
 * Merged, it waits in its ring's FIFO; a binary min-heap over the rings,
 * keyed by the time of each FIFO's head, releases records in time order as
 * soon as a record merge_window_ns later has been decoded, which bounds the
 * memory by the window rather than by the stream.
 *
 * The order is that of a k-way merge taking one record at a time from the
 * ring whose first record has the least (time, ring index): equal times go
 * in order of the rings' first appearance, and a ring's own records keep
 * their order.  Rings hold runs of records in time order (chunks), so the
 * merge delivers from the heap's first ring for as long as its next record
 * still comes before the runner-up (one of the root's children) -- exactly
 * the records the one-at-a-time merge would have taken from it -- and
 * touches the heap once per run instead of once per record.
 *
 * Identity generations: a ring's thread id, name and context change when a
 * dead thread's ring is reused, while records of the old owner may still be
 * held back or queued.  Each record carries the generation of the ring's
 * identity when it was decoded; a generation is snapshotted only when the
 * identity really changed and a record may carry the old one, and kept
 * while a queued record may refer to it.  Delivery points ring_info at the
 * live description when the record's generation is the current one (the
 * common case, no copy) and otherwise at a per-client view: the snapshot's
 * identity with the ring's live counters.
 */
#include "client-internal.h"

#include <stdlib.h>
#include <string.h>

int frc_charge(struct flightrec_client *c, uint64_t bytes, uint64_t offset)
{
    uint64_t limit = c->opt.memory_limit;

    if (limit != 0 && (bytes > limit || c->mem_used > limit - bytes))
        return frc_fail(c, FLIGHTREC_ENOMEM, offset,
                        "memory limit of %llu MiB reached (%zu rings, %zu "
                        "records held back)",
                        (unsigned long long)(limit >> 20), c->ring_count,
                        c->held_total);
    c->mem_used += bytes;
    if (c->mem_used > c->totals.memory)
        c->totals.memory = c->mem_used;
    return 0;
}

void frc_uncharge(struct flightrec_client *c, uint64_t bytes)
{
    c->mem_used = bytes < c->mem_used ? c->mem_used - bytes : 0;
}

int frc_queue_push(struct flightrec_client *c, struct frc_queue *q,
                   const struct frc_rec *rec)
{
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 4;
        struct frc_rec *buf;
        if (cap > SIZE_MAX / sizeof(*buf))
            return -1;
        if (frc_charge(c, (cap - q->cap) * sizeof(*buf), rec->offset) != 0)
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

/*=====   Identity generations   =====*/

void frc_ident_init(struct frc_ring *r)
{
    r->ident.thread_id = r->info.thread_id;
    r->ident.context = r->info.context;
    r->ident.gen = r->gen;
    memcpy(r->ident.thread_name, r->info.thread_name, FRC_NAME_MAX);
}

static int same_ident(const struct frc_ident *id,
                      const struct flightrec_ring_info *info)
{
    return id->thread_id == info->thread_id && id->context == info->context &&
           strncmp(id->thread_name, info->thread_name, FRC_NAME_MAX) == 0;
}

/* Drops the generations older than every record still waiting in the
 * ring: its queues hold records in decode order, so their heads carry the
 * oldest generations. */
static void ident_collect(struct frc_ring *r)
{
    uint32_t keep = 0; /* age (r->gen - gen) of the oldest still referred */

    if (r->held.len != 0)
        keep = r->gen - r->held.buf[r->held.head].gen;
    if (r->rq_head != NULL) {
        uint32_t age = r->gen - r->rq_head->rec[r->rq_first].gen;
        if (age > keep)
            keep = age;
    }
    while (r->hist_len != 0 &&
           r->gen - r->hist[r->hist_head].gen > keep) {
        r->hist_head = (r->hist_head + 1) & (r->hist_cap - 1);
        r->hist_len--;
    }
}

int frc_ident_take(struct flightrec_client *c, struct frc_ring *r,
                   uint32_t *gen)
{
    (void)c;
    if (FLIGHTREC_UNLIKELY(r->ident_dirty)) {
        r->ident_dirty = 0;
        if (!same_ident(&r->ident, &r->info)) {
            if (r->gen_used) {
                /* Records may refer to the old identity: keep it. */
                ident_collect(r);
                if (r->hist_len == r->hist_cap) {
                    size_t cap = r->hist_cap ? r->hist_cap * 2 : 4;
                    struct frc_ident *h = malloc(cap * sizeof(*h));
                    if (h == NULL) {
                        r->ident_dirty = 1;
                        return -1;
                    }
                    for (size_t i = 0; i < r->hist_len; i++)
                        h[i] = r->hist[(r->hist_head + i) &
                                       (r->hist_cap - 1)];
                    free(r->hist);
                    r->hist = h;
                    r->hist_cap = cap;
                    r->hist_head = 0;
                }
                r->hist[(r->hist_head + r->hist_len) & (r->hist_cap - 1)] =
                    r->ident;
                r->hist_len++;
                r->gen++;
                r->gen_used = 0;
            }
            frc_ident_init(r);
        }
    }
    r->gen_used = 1;
    *gen = r->gen;
    return 0;
}

void frc_ring_free(struct frc_ring *r)
{
    free(r->hist);
    r->hist = NULL;
    r->hist_cap = r->hist_len = r->hist_head = 0;
}

/* ring_info for a record of an older generation, or of the current one
 * while the identity is being rewritten (after the counters were updated
 * for it). */
static FLIGHTREC_COLD const struct flightrec_ring_info *
ring_view_old(struct flightrec_client *c, struct frc_ring *r, uint32_t gen)
{
    const struct frc_ident *id = &r->ident;

    if (gen != r->gen) {
        uint32_t i = r->hist_len != 0 ? gen - r->hist[r->hist_head].gen : 0;
        if (i >= r->hist_len)
            return &r->info; /* not reached: generations are kept */
        id = &r->hist[(r->hist_head + i) & (r->hist_cap - 1)];
    }
    c->view = r->info;
    c->view.thread_id = id->thread_id;
    c->view.context = id->context;
    memcpy(c->view.thread_name, id->thread_name, FRC_NAME_MAX);
    return &c->view;
}

/*=====   Delivery   =====*/

static int deliver_text(struct flightrec_client *c, struct frc_ring *r,
                        uint32_t type, uint32_t flags, uint64_t time,
                        uint32_t event, uint64_t data, uint64_t offset,
                        uint32_t gen);

/* @a text: strings may be defined (c->text_active, or not known). */
static FLIGHTREC_ALWAYS_INLINE int deliver_as(struct flightrec_client *c,
                                              struct frc_ring *r,
                                              uint32_t type, uint32_t flags,
                                              uint64_t time, uint32_t event,
                                              uint64_t data, uint64_t offset,
                                              uint32_t gen, int text)
{
    struct flightrec_record *out = &c->rec;

    if (text && FLIGHTREC_UNLIKELY(c->text_active))
        return deliver_text(c, r, type, flags, time, event, data, offset,
                            gen);

    c->rec_ring = NULL;
    out->type = type;
    out->flags = flags;
    out->time_ns = time;
    out->ring = r->info.id;
    out->offset = offset;
    if (FLIGHTREC_LIKELY(type == FLIGHTREC_RECORD_EVENT && flags == 0)) {
        /* The common record: what the macros below do for it. */
        out->event = event;
        out->data = data;
        out->loss_kind = 0;
        out->loss_count = 0;
        r->info.events++;
        c->totals.events++;
        if (FLIGHTREC_UNLIKELY(!r->has_first)) {
            r->info.first_ns = time;
            r->has_first = 1;
        }
        r->info.last_ns = time;
    } else {
        if (type == FLIGHTREC_RECORD_EVENT) {
            out->event = event;
            out->data = data;
            out->loss_kind = 0;
            out->loss_count = 0;
            FRC_COUNT_EVENT(c, r, flags);
        } else {
            out->event = 0;
            out->data = 0;
            out->loss_kind = event;
            out->loss_count = data;
        }
        FRC_COUNT_TIME(c, r, flags, time);
    }
    out->ring_info = FLIGHTREC_LIKELY(gen == r->gen && !r->ident_dirty)
                         ? &r->info
                         : ring_view_old(c, r, gen);
    if (FLIGHTREC_UNLIKELY(c->opt.on_record(out, c->opt.arg) != 0))
        return frc_fail(c, FLIGHTREC_ECALLBACK, offset, "stopped by callback");
    return 0;
}

static FLIGHTREC_ALWAYS_INLINE int deliver(struct flightrec_client *c,
                                           struct frc_ring *r, uint32_t type,
                                           uint32_t flags, uint64_t time,
                                           uint32_t event, uint64_t data,
                                           uint64_t offset, uint32_t gen)
{
    return deliver_as(c, r, type, flags, time, event, data, offset, gen, 1);
}

/* The string being put together goes out as one record: the first
 * item's time, data and offset, the text of all its items. */
int frc_text_flush(struct flightrec_client *c)
{
    struct flightrec_record *out = &c->rec;
    struct frc_ring *r = c->text.ring;
    int rc = 0;

    if (!c->text.pending)
        return 0;
    c->text.pending = 0;
    c->rec_ring = NULL;
    c->text.buf[c->text.len] = '\0';
    out->type = FLIGHTREC_RECORD_EVENT;
    out->flags = c->text.flags;
    out->time_ns = c->text.time;
    out->ring = r->info.id;
    out->offset = c->text.offset;
    out->event = c->text.event;
    out->data = c->text.data;
    out->loss_kind = 0;
    out->loss_count = 0;
    out->ring_info = c->text.gen == r->gen && !r->ident_dirty
                         ? &r->info
                         : ring_view_old(c, r, c->text.gen);
    out->text = c->text.buf;
    out->text_len = c->text.len;
    if (c->opt.on_record(out, c->opt.arg) != 0)
        rc = frc_fail(c, FLIGHTREC_ECALLBACK, c->text.offset,
                      "stopped by callback");
    out->text = NULL;
    out->text_len = 0;
    return rc;
}

/* Adds an item's characters; returns 1 at its NUL. */
static int text_append(struct flightrec_client *c, uint64_t data)
{
    size_t bytes = c->item_size - 4;
    for (size_t i = 0; i < bytes; i++) {
        char ch = (char)((data >> (8 * i)) & 0xffu);
        if (ch == '\0')
            return 1;
        if (c->text.len + 1 < sizeof(c->text.buf))
            c->text.buf[c->text.len++] = ch;
        else
            c->text.flags |= FLIGHTREC_RECORD_TEXT_CUT;
    }
    return 0;
}

/* Delivery once the stream defined a string event: the items of one string
 * record (same ring, event and time, one after another) become one record
 * with its text; the counters count every item. */
static FLIGHTREC_COLD int deliver_text(struct flightrec_client *c,
                                       struct frc_ring *r, uint32_t type,
                                       uint32_t flags, uint64_t time,
                                       uint32_t event, uint64_t data,
                                       uint64_t offset, uint32_t gen)
{
    int is_text = type == FLIGHTREC_RECORD_EVENT &&
                  FLIGHTREC_EVENT_KIND_OF(c->event_kind[event]) ==
                      FLIGHTREC_EVENT_STRING;
    int rc;

    if (c->text.pending) {
        if (is_text && r == c->text.ring && event == c->text.event &&
            time == c->text.time) {
            FRC_COUNT_EVENT(c, r, flags);
            FRC_COUNT_TIME(c, r, flags, time);
            return text_append(c, data) ? frc_text_flush(c) : 0;
        }
        rc = frc_text_flush(c);
        if (rc != 0)
            return rc;
    }
    if (is_text) {
        c->text.pending = 1;
        c->text.ring = r;
        c->text.flags = flags;
        c->text.event = event;
        c->text.gen = gen;
        c->text.time = time;
        c->text.data = data;
        c->text.offset = offset;
        c->text.len = 0;
        FRC_COUNT_EVENT(c, r, flags);
        FRC_COUNT_TIME(c, r, flags, time);
        return text_append(c, data) ? frc_text_flush(c) : 0;
    }
    c->text_active = 0; /* deliver() as before, just this once */
    rc = deliver(c, r, type, flags, time, event, data, offset, gen);
    c->text_active = 1;
    return rc;
}

int frc_deliver(struct flightrec_client *c, struct frc_ring *r,
                const struct frc_rec *rec)
{
    return deliver(c, r, rec->type, rec->flags, rec->time, rec->event,
                   rec->data, rec->offset, rec->gen);
}

/*=====   The merge heap   =====*/

static inline int less(const struct frc_heap_entry *a,
                       const struct frc_heap_entry *b)
{
    return a->key < b->key || (a->key == b->key && a->index < b->index);
}

static void sift_up(struct frc_heap_entry *h, size_t i)
{
    struct frc_heap_entry e = h[i];

    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!less(&e, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

/* Puts @a e into the hole at @a i, moving it down to its place. */
static FLIGHTREC_ALWAYS_INLINE void sift_down(struct frc_heap_entry *h,
                                              size_t len, size_t i,
                                              struct frc_heap_entry e)
{
    for (;;) {
        size_t l = 2 * i + 1, m;
        if (l >= len)
            break;
        m = l + 1 < len && less(&h[l + 1], &h[l]) ? l + 1 : l;
        if (!less(&h[m], &e))
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = e;
}

/* When the heap's first record becomes due: max_time >= its time + w. */
static void update_release_at(struct flightrec_client *c)
{
    uint64_t w = c->opt.merge_window_ns;

    if (w == 0 || c->heap_len == 0)
        c->release_at = UINT64_MAX;
    else
        c->release_at = c->heap[0].key > UINT64_MAX - w ? UINT64_MAX
                                                        : c->heap[0].key + w;
}

static int heap_insert(struct flightrec_client *c, struct frc_ring *r,
                       uint64_t key)
{
    if (c->heap_len == c->heap_cap) {
        size_t cap = c->heap_cap ? c->heap_cap * 2 : 16;
        struct frc_heap_entry *h;
        if (frc_charge(c, (cap - c->heap_cap) * sizeof(*h), 0) != 0)
            return -1;
        h = realloc(c->heap, cap * sizeof(*h));
        if (h == NULL)
            return -1;
        c->heap = h;
        c->heap_cap = cap;
    }
    c->heap[c->heap_len].key = key;
    c->heap[c->heap_len].index = r->index;
    sift_up(c->heap, c->heap_len++);
    return 0;
}

/*=====   Ring queues   =====*/

static const uint32_t block_caps[FRC_BLOCK_CLASSES] = { 3, 15, 63,
                                                        FRC_BLOCK_RECS };

static struct frc_block *block_get(struct flightrec_client *c,
                                   uint32_t size_class, uint64_t offset)
{
    struct frc_block *b = c->pool[size_class];
    uint32_t cap = block_caps[size_class];

    if (b != NULL) {
        c->pool[size_class] = b->next;
    } else {
        size_t size = sizeof(*b) + cap * sizeof(b->rec[0]);
        if (frc_charge(c, size, offset) != 0)
            return NULL;
        b = malloc(size);
        if (b == NULL)
            return NULL;
        b->cap = cap;
        b->size_class = size_class;
    }
    b->next = NULL;
    return b;
}

static void block_put(struct flightrec_client *c, struct frc_block *b)
{
    b->next = c->pool[b->size_class];
    c->pool[b->size_class] = b;
}

/* Appends a record; the ring enters the heap if it had none queued. */
static int rq_push(struct flightrec_client *c, struct frc_ring *r,
                   const struct frc_rec *rec)
{
    struct frc_qrec *q;

    if (r->rq_head == NULL) {
        struct frc_block *b = block_get(c, 0, rec->offset);
        if (b == NULL)
            return -1;
        if (heap_insert(c, r, rec->time) != 0) {
            block_put(c, b);
            return -1;
        }
        r->rq_head = r->rq_tail = b;
        r->rq_first = r->rq_end = 0;
        r->rq_cap = b->cap;
        update_release_at(c);
    } else if (r->rq_end == r->rq_cap) {
        uint32_t k = r->rq_tail->size_class;
        struct frc_block *b =
            block_get(c, k + 1 < FRC_BLOCK_CLASSES ? k + 1 : k, rec->offset);
        if (b == NULL)
            return -1;
        r->rq_tail->next = b;
        r->rq_tail = b;
        r->rq_end = 0;
        r->rq_cap = b->cap;
    }
    q = &r->rq_tail->rec[r->rq_end++];
    q->time = rec->time;
    q->data = rec->data;
    q->offset = rec->offset;
    q->gen = rec->gen;
    q->event = (uint16_t)rec->event;
    q->type = (uint8_t)rec->type;
    q->flags = (uint8_t)rec->flags;
    return 0;
}

/* Drops the ring's first record, delivered from its place in the queue;
 * returns 0 if the ring has no more, else 1. */
static FLIGHTREC_ALWAYS_INLINE int rq_drop(struct flightrec_client *c,
                                           struct frc_ring *r)
{
    struct frc_block *b = r->rq_head;

    r->rq_first++;
    if (b == r->rq_tail) {
        if (r->rq_first != r->rq_end)
            return 1;
        r->rq_head = r->rq_tail = NULL;
        block_put(c, b);
        return 0;
    }
    if (r->rq_first == b->cap) {
        r->rq_head = b->next;
        r->rq_first = 0;
        block_put(c, b);
    }
    return 1;
}

static inline uint64_t rq_key(const struct frc_ring *r)
{
    return r->rq_head->rec[r->rq_first].time;
}

/*=====   Release   =====*/

/* Delivers, in merge order, every queued record whose turn comes at or
 * before time @a limit; @a text as deliver_as() (strings are defined by
 * the decoder, never during a release, so one test per release does). */
static FLIGHTREC_ALWAYS_INLINE int release_as(struct flightrec_client *c,
                                              uint64_t limit, int text)
{
    int rc = 0;

    while (c->heap_len != 0 && c->heap[0].key <= limit) {
        struct frc_heap_entry *h = c->heap;
        struct frc_ring *r = c->rings[h[0].index];
        uint64_t stop = limit, top = c->released;
        size_t len = c->heap_len, m = 0;
        int more = 1, left;

        /* The run ends where the runner-up h[m] (the lesser child of the
         * root) goes first. */
        if (len > 1) {
            m = len > 2 && less(&h[2], &h[1]) ? 2 : 1;
            if (r->index < h[m].index) {
                if (h[m].key < stop)
                    stop = h[m].key;
            } else if (h[m].key == 0) {
                more = 0;
            } else if (h[m].key - 1 < stop) {
                stop = h[m].key - 1;
            }
        }
        do {
            /* Delivered in place (nothing the callback may do touches
             * the queues), then dropped: no copy of the record. */
            const struct frc_qrec *q = &r->rq_head->rec[r->rq_first];
            if (q->time > top)
                top = q->time;
            rc = deliver_as(c, r, q->type, q->flags, q->time, q->event,
                            q->data, q->offset, q->gen, text);
            left = rq_drop(c, r);
        } while (rc == 0 && left && more && rq_key(r) <= stop);
        c->released = top;
        if (!left) {
            c->heap_len = --len;
            if (len != 0)
                sift_down(h, len, 0, h[len]);
            if (r->pending && rc == 0) {
                /* Its next records are not decoded yet: the reader feeds
                 * it before the merge may go on. */
                c->hungry = r;
                break;
            }
        } else {
            struct frc_heap_entry e;
            e.key = rq_key(r);
            e.index = r->index;
            if (m != 0 && less(&h[m], &e)) {
                /* Usually so (the run ended at the runner-up): it moves
                 * up without comparing it again. */
                h[0] = h[m];
                sift_down(h, len, m, e);
            } else {
                h[0].key = e.key;
            }
        }
        if (rc != 0)
            break;
    }
    update_release_at(c);
    c->fast_floor = c->released;
    c->defer_left = FRC_RELEASE_BATCH;
    return rc;
}

static int release(struct flightrec_client *c, uint64_t limit)
{
    return FLIGHTREC_UNLIKELY(c->text_active) ? release_as(c, limit, 1)
                                               : release_as(c, limit, 0);
}

int frc_merge_release(struct flightrec_client *c)
{
    uint64_t w = c->opt.merge_window_ns;

    if (w == 0 || c->max_time < w)
        return 0;
    return release(c, c->max_time - w);
}

int frc_emit(struct flightrec_client *c, struct frc_ring *r,
             struct frc_rec *rec)
{
    if (!c->opt.merge)
        return frc_deliver(c, r, rec);
    if (frc_merge_settle(c) != 0)
        return c->error;
    if (r == c->direct_ring) {
        if (rec->time < c->direct_below)
            return frc_deliver(c, r, rec);
        c->direct_ring = NULL; /* the rest queue behind this one */
    }
    if (rec->time > c->max_time)
        c->max_time = rec->time;
    if (rec->time < c->released && !c->exact) {
        /* Its turn has passed: deliver it now, marked. */
        rec->flags |= FLIGHTREC_RECORD_LATE;
        return frc_deliver(c, r, rec);
    }
    if (rq_push(c, r, rec) != 0)
        return frc_fail(c, FLIGHTREC_ENOMEM, rec->offset, "out of memory");
    if (--c->feed_quota == 0)
        c->feed_stop = 1;
    if (c->max_time >= c->release_at)
        return frc_merge_release(c);
    return 0;
}

int frc_merge_drain(struct flightrec_client *c)
{
    return release(c, UINT64_MAX);
}

struct frc_ring *frc_merge_step(struct flightrec_client *c, int *rc)
{
    c->hungry = NULL;
    *rc = release(c, UINT64_MAX);
    return c->hungry;
}

void frc_merge_direct(struct flightrec_client *c, struct frc_ring *r)
{
    c->direct_ring = r;
    if (c->heap_len == 0) {
        c->direct_below = UINT64_MAX;
    } else {
        /* Equal times go in ring order. */
        const struct frc_heap_entry *h = &c->heap[0];
        c->direct_below = h->key + (r->index < h->index && h->key != UINT64_MAX);
    }
}

void frc_merge_free(struct flightrec_client *c)
{
    for (size_t i = 0; i < c->ring_count; i++) {
        struct frc_ring *r = c->rings[i];
        struct frc_block *b = r != NULL ? r->rq_head : NULL;
        if (r == NULL)
            continue;
        while (b != NULL) {
            struct frc_block *next = b == r->rq_tail ? NULL : b->next;
            free(b);
            b = next;
        }
        r->rq_head = r->rq_tail = NULL;
    }
    for (size_t k = 0; k < FRC_BLOCK_CLASSES; k++) {
        while (c->pool[k] != NULL) {
            struct frc_block *next = c->pool[k]->next;
            free(c->pool[k]);
            c->pool[k] = next;
        }
    }
    free(c->heap);
    c->heap = NULL;
    c->heap_len = c->heap_cap = 0;
}
