/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec_client_read_fd(): a whole stream from a descriptor.
 *
 * A regular file is read twice.  The first pass decodes it without merge
 * (a throw-away client, a no-op callback, plain events in a running ring
 * only counted: scan_only) to learn where each chunk begins -- the
 * decoder tells it through on_segment -- and where the stream stops
 * being valid.  That gives, per ring, the list of its
 * segments (a chunk, or several adjacent chunks of the ring) in file
 * order: 16 bytes a segment.
 *
 * The second pass decodes into the caller's client ring by ring: each
 * ring's decoder state already lives in its struct frc_ring, so a ring's
 * segments can be fed in slices at their own offsets, interleaved with
 * other rings' slices, and decode exactly as they would in file order.
 * The merge then runs as a lazy k-way merge: every ring that still has
 * input keeps at least one record queued; when the merge takes a ring's
 * last queued record it stops (frc_merge_step) and the reader feeds that
 * ring again.  Since a k-way merge looks only at the first record of each
 * ring, this is the order of merge window 0.  A feed stops once the ring
 * has queued FEED_QUOTA records, keeping the rest of its input read ahead
 * (a slice of at most READ_BYTES_BUDGET / rings bytes) undecoded; and
 * while a ring is fed, its records that come before every queued record
 * go straight to the callback (frc_merge_direct), so rings that record in
 * long runs, as threads taking turns do, barely touch the queues.
 *
 * Name records are fed first, so records name events as the end of the
 * stream does (as window 0 delivers them).  Rings are primed in order of
 * first appearance so that they get the indexes file order gives them.
 *
 * FLIGHTREC_MERGE_BY_RING skips the merge: each ring is fed through all
 * its segments in turn, its records delivered as they are timed, with one
 * ring's slice read ahead at a time.  Each ring decodes as it does in the
 * merge, so its records are the same, in the same order.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64

#include "client-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define READ_BUFFER (1u << 20)      /* bytes per read in sequential passes */
#define READ_BYTES_BUDGET (4u << 20) /* ring input buffers, all rings */
#define SLICE_ITEMS_MIN 8u
#define SLICE_ITEMS_MAX 8192u
#define FEED_QUOTA 64u               /* records a ring queues per feed */
#define PROGRESS_STEP (UINT64_C(16) << 20)
#define NO_SEGMENT UINT32_MAX
#define NAME_SEGMENT UINT32_MAX

struct segment {
    uint64_t start;  /* offset of its first item (PROCESSOR or NAME_ID) */
    uint32_t ring;   /* pass-one ring index, or NAME_SEGMENT */
    uint32_t next;   /* next segment of the same ring, or NO_SEGMENT */
};

/* A ring's input read ahead but not decoded yet (a feed stops once the
 * ring has queued FEED_QUOTA records). */
struct ring_input {
    unsigned char *buf;   /* slice_bytes, while the ring has input */
    uint32_t len;
    uint32_t pos;
};

struct reader {
    flightrec_client *c;     /* the caller's client (second pass) */
    flightrec_client *scan;  /* first pass */
    int fd;
    uint64_t base;           /* file offset of the stream's byte 0 */
    uint64_t size;           /* stream bytes */
    unsigned char *buf;
    size_t buf_size;
    uint64_t progress_done;
    uint64_t progress_shown;

    struct segment *seg;
    size_t seg_len, seg_cap;
    uint32_t *first, *last;  /* per ring: its first and last segment */
    size_t ring_cap;
    uint32_t names_first, names_last;
    uint64_t end;            /* whole valid items end here */

    /* What the first pass found, kept once its client is gone. */
    size_t scan_rings;
    size_t item_size;
    uint64_t scan_consumed;
    size_t scan_part_len;
    int scan_error;
    uint64_t scan_error_offset;
    uint64_t scan_memory;
    int scan_threads_only;  /* a flightrec stream without processor rings */
    char scan_message[sizeof(((struct flightrec_client *)0)->message)];

    /* Second pass: where each ring goes on. */
    uint32_t *at_seg;
    uint64_t *at_pos;    /* next byte to decode */
    struct ring_input *input;
    size_t rings;
    size_t slice_bytes;
};

static int noop(const struct flightrec_record *r, void *arg)
{
    (void)r;
    (void)arg;
    return 0;
}

static void progress(struct reader *rd, uint64_t bytes)
{
    const struct flightrec_client_options *o = &rd->c->opt;

    rd->progress_done += bytes;
    if (o->on_progress != NULL &&
        rd->progress_done - rd->progress_shown >= PROGRESS_STEP) {
        rd->progress_shown = rd->progress_done;
        o->on_progress(o->arg, rd->progress_done, 2 * rd->size);
    }
}

/* Reads exactly @a n bytes at stream offset @a at. */
static int read_at(struct reader *rd, struct flightrec_client *c,
                   unsigned char *p, size_t n, uint64_t at)
{
    size_t got = 0;

    while (got < n) {
        ssize_t k = pread(rd->fd, p + got, n - got,
                          (off_t)(rd->base + at + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            return frc_fail(c, -e, at + got, "read error: %s", strerror(e));
        }
        if (k == 0)
            return frc_fail(c, FLIGHTREC_ETRUNC, at + got,
                            "file shrank while read");
        got += (size_t)k;
    }
    progress(rd, n);
    return 0;
}

/*=====   First pass: the index   =====*/

static int grow(struct reader *rd, void **p, size_t *cap, size_t need,
                size_t elem, uint64_t offset)
{
    size_t n = *cap ? *cap : 64;
    void *q;

    while (n < need)
        n *= 2;
    if (n == *cap)
        return 0;
    if (frc_charge(rd->scan, (n - *cap) * elem, offset) != 0)
        return -1;
    q = realloc(*p, n * elem);
    if (q == NULL)
        return frc_fail(rd->scan, FLIGHTREC_ENOMEM, offset, "out of memory");
    *p = q;
    *cap = n;
    return 0;
}

static void on_segment(void *arg, uint32_t ring, uint64_t offset)
{
    struct reader *rd = arg;
    uint32_t *first, *last, i;

    /* Adjacent chunks of one ring (or name records) feed as one. */
    if (rd->seg_len != 0 && rd->seg[rd->seg_len - 1].ring == ring)
        return;
    if (rd->scan->error != 0)
        return;
    if (rd->seg_len >= NO_SEGMENT - 1) {
        frc_fail(rd->scan, FLIGHTREC_ECOUNT, offset,
                 "more than %u runs of chunks to index",
                 (unsigned)(NO_SEGMENT - 1));
        return;
    }
    if (grow(rd, (void **)&rd->seg, &rd->seg_cap, rd->seg_len + 1,
             sizeof(*rd->seg), offset) != 0)
        return;
    if (ring == NAME_SEGMENT) {
        first = &rd->names_first;
        last = &rd->names_last;
    } else {
        size_t cap = rd->ring_cap, old = cap;
        if (ring >= cap) {
            if (grow(rd, (void **)&rd->first, &cap, (size_t)ring + 1,
                     sizeof(*rd->first), offset) != 0)
                return;
            cap = old;
            if (grow(rd, (void **)&rd->last, &cap, (size_t)ring + 1,
                     sizeof(*rd->last), offset) != 0)
                return;
            for (size_t k = old; k < cap; k++)
                rd->first[k] = rd->last[k] = NO_SEGMENT;
            rd->ring_cap = cap;
        }
        first = &rd->first[ring];
        last = &rd->last[ring];
    }
    i = (uint32_t)rd->seg_len++;
    rd->seg[i].start = offset;
    rd->seg[i].ring = ring;
    rd->seg[i].next = NO_SEGMENT;
    if (*last == NO_SEGMENT)
        *first = i;
    else
        rd->seg[*last].next = i;
    *last = i;
}

static int scan(struct reader *rd)
{
    struct flightrec_client *s = rd->scan;
    uint64_t at = 0;

    s->on_segment = on_segment;
    s->segment_arg = rd;
    s->scan_only = 1;
    while (at < rd->size && s->error == 0) {
        size_t n = rd->size - at < rd->buf_size ? (size_t)(rd->size - at)
                                                 : rd->buf_size;
        if (read_at(rd, s, rd->buf, n, at) != 0)
            break;
        flightrec_client_feed(s, rd->buf, n);
        at += n;
    }
    flightrec_client_finish(s);
    s->on_segment = NULL;
    /* Everything before the first error is valid. */
    rd->end = s->consumed - s->part_len;
    if (s->error != 0 && s->error_offset < rd->end)
        rd->end = s->error_offset;
    rd->scan_rings = s->ring_count;
    rd->item_size = s->item_size;
    rd->scan_consumed = s->consumed;
    rd->scan_part_len = s->part_len;
    rd->scan_error = s->error;
    rd->scan_error_offset = s->error_offset;
    rd->scan_memory = s->totals.memory;
    rd->scan_threads_only = s->info.kind == FLIGHTREC_STREAM_FLIGHTREC;
    for (size_t i = 0; i < s->ring_count; i++) {
        const struct frc_ring *r = s->rings[i];
        if (r != NULL && (r->info.context == FLIGHTREC_RING_CONTEXT_CPU ||
                          r->info.id >= FLIGHTREC_CPU_RING_BASE))
            rd->scan_threads_only = 0;
    }
    memcpy(rd->scan_message, s->message, sizeof(rd->scan_message));
    /* Its rings and held records are not needed any more. */
    flightrec_client_destroy(s);
    rd->scan = NULL;
    return 0;
}

/*=====   Second pass   =====*/

static uint64_t segment_end(const struct reader *rd, uint32_t i)
{
    uint64_t e = i + 1 < rd->seg_len ? rd->seg[i + 1].start : rd->end;

    return e < rd->end ? e : rd->end;
}

/* Feeds [from, to) of the stream, continuing @a cur's chunk; from 0 on,
 * through the framing (format word and magic). */
static int feed_range(struct reader *rd, struct frc_ring *cur, uint64_t from,
                      uint64_t to)
{
    struct flightrec_client *c = rd->c;
    int framed = from == 0;
    uint32_t empty = 0; /* cur_empty to go on with, after the first read */
    size_t used;

    while (from < to && c->error == 0) {
        size_t n = to - from < rd->buf_size ? (size_t)(to - from)
                                             : rd->buf_size;
        if (read_at(rd, c, rd->buf, n, from) != 0)
            break;
        if (framed)
            flightrec_client_feed(c, rd->buf, n);
        else
            frc_feed_items(c, cur, empty, rd->buf, n, from, &used);
        cur = c->cur;
        empty = c->cur_empty;
        from += n;
    }
    return c->error;
}

/* Decodes ring @a i's input until FEED_QUOTA records are queued or the
 * slice read ahead is used up. */
static int feed_ring(struct reader *rd, size_t i)
{
    struct flightrec_client *c = rd->c;
    struct ring_input *in = &rd->input[i];
    uint32_t s = rd->at_seg[i];
    uint64_t pos = rd->at_pos[i];
    uint64_t end = segment_end(rd, s);
    struct frc_ring *r = i < c->ring_count ? c->rings[i] : NULL;
    size_t used = 0;
    int empty;

    if (in->pos == in->len && pos < end) {
        size_t n = end - pos < rd->slice_bytes ? (size_t)(end - pos)
                                               : rd->slice_bytes;
        if (in->buf == NULL) {
            if (frc_charge(c, rd->slice_bytes, pos) != 0)
                return c->error;
            in->buf = malloc(rd->slice_bytes);
            if (in->buf == NULL)
                return frc_fail(c, FLIGHTREC_ENOMEM, pos, "out of memory");
        }
        if (read_at(rd, c, in->buf, n, pos) != 0)
            return c->error;
        in->len = (uint32_t)n;
        in->pos = 0;
    }
    if (in->pos < in->len) {
        c->feed_quota = FEED_QUOTA;
        c->feed_stop = 0;
        /* Mid-chunk, the ring goes on (without a struct if it has none
         * yet); at a segment's start, its PROCESSOR item says. */
        int mid = pos != rd->seg[s].start;
        frc_feed_items(c, mid ? r : NULL,
                       mid && r == NULL ? (uint32_t)i + 1 : 0,
                       in->buf + in->pos, in->len - in->pos, pos, &used);
        c->feed_quota = UINT64_MAX;
        c->feed_stop = 0;
        if (c->error != 0)
            return c->error;
        in->pos += (uint32_t)used;
        pos += used;
    }
    if (r == NULL)
        r = i < c->ring_count ? c->rings[i] : NULL;
    /* A ring that held nothing has no struct (its chunks are PROCESSOR
     * items alone): it is read through and queues nothing. */
    empty = r == NULL && i < c->ring_count;
    if (!empty && (r == NULL || r->index != i)) {
        rd->at_seg[i] = NO_SEGMENT;
        if (used == 0)
            return 0;
        return frc_fail(c, FLIGHTREC_ESTREAM, rd->seg[s].start,
                        "ring %zu did not decode as on the first pass", i);
    }
    if (pos >= end) {
        if (frc_end_chunk(c, r, end) != 0)
            return c->error;
        s = rd->seg[s].next;
        pos = s != NO_SEGMENT ? rd->seg[s].start : 0;
        if (s != NO_SEGMENT && rd->seg[s].start >= rd->end)
            s = NO_SEGMENT;
        in->pos = in->len = 0;
    }
    rd->at_seg[i] = s;
    rd->at_pos[i] = pos;
    if (r != NULL)
        r->pending = s != NO_SEGMENT;
    if (s == NO_SEGMENT) {
        free(in->buf);
        in->buf = NULL;
        frc_uncharge(c, rd->slice_bytes);
    }
    return 0;
}

/* Feeds ring @a i until it has a record queued or no input left. */
static int fill_ring(struct reader *rd, size_t i)
{
    struct flightrec_client *c = rd->c;

    while (rd->at_seg[i] != NO_SEGMENT) {
        if (feed_ring(rd, i) != 0)
            return c->error;
        if (i < c->ring_count && c->rings[i] != NULL &&
            c->rings[i]->rq_head != NULL)
            break;
    }
    return 0;
}

static int merge(struct reader *rd)
{
    struct flightrec_client *c = rd->c;
    size_t slice;
    int rc, by_ring;

    rd->rings = rd->scan_rings;
    if (frc_charge(c, rd->seg_cap * sizeof(*rd->seg) +
                          rd->rings * (sizeof(*rd->at_seg) +
                                       sizeof(*rd->at_pos) +
                                       sizeof(*rd->input)),
                   0) != 0)
        return c->error;
    rd->at_seg = malloc((rd->rings ? rd->rings : 1) * sizeof(*rd->at_seg));
    rd->at_pos = malloc((rd->rings ? rd->rings : 1) * sizeof(*rd->at_pos));
    rd->input = calloc(rd->rings ? rd->rings : 1, sizeof(*rd->input));
    if (rd->at_seg == NULL || rd->at_pos == NULL || rd->input == NULL)
        return frc_fail(c, FLIGHTREC_ENOMEM, 0, "out of memory");
    for (size_t i = 0; i < rd->rings; i++) {
        uint32_t s = i < rd->ring_cap ? rd->first[i] : NO_SEGMENT;
        if (s != NO_SEGMENT && rd->seg[s].start >= rd->end)
            s = NO_SEGMENT;
        rd->at_seg[i] = s;
        rd->at_pos[i] = s != NO_SEGMENT ? rd->seg[s].start : 0;
    }
    /* Each ring's first and last segment served the index: at_seg goes
     * on from here, and the memory goes to the rings. */
    free(rd->first);
    free(rd->last);
    rd->first = rd->last = NULL;
    rd->ring_cap = 0;
    by_ring = c->opt.merge == FLIGHTREC_MERGE_BY_RING && rd->scan_threads_only;
    /* Ring by ring, one ring reads ahead at a time. */
    slice = READ_BYTES_BUDGET / rd->item_size /
            (rd->rings && !by_ring ? rd->rings : 1);
    slice = slice < SLICE_ITEMS_MIN   ? SLICE_ITEMS_MIN
            : slice > SLICE_ITEMS_MAX ? SLICE_ITEMS_MAX
                                      : slice;
    rd->slice_bytes = slice * rd->item_size;

    /* The header, then every name record. */
    if (feed_range(rd, NULL, 0,
                   rd->seg[0].start < rd->end ? rd->seg[0].start : rd->end)
        != 0)
        return c->error;
    for (uint32_t s = rd->names_first; s != NO_SEGMENT; s = rd->seg[s].next)
        if (feed_range(rd, NULL, rd->seg[s].start, segment_end(rd, s)) != 0)
            return c->error;
    c->cur = NULL;
    c->cur_empty = 0;

    c->exact = 1;
    /* Exact order: no window, not even one a FREQUENCY item derives. */
    c->window_auto = 0;
    c->opt.merge_window_ns = 0;
    c->info.merge_window_ns = 0;
    c->release_at = UINT64_MAX;
    if (by_ring) {
        /* Each record goes out as it is timed, as without merge. */
        c->info.by_ring = 1;
        c->opt.merge = 0;
        for (size_t i = 0; i < rd->rings; i++) {
            if (rd->at_seg[i] == NO_SEGMENT)
                break; /* this ring and the later ones start past an error */
            while (rd->at_seg[i] != NO_SEGMENT)
                if (feed_ring(rd, i) != 0)
                    break;
            if (c->error != 0)
                break;
            /* Nothing of this ring comes later: what it holds goes now. */
            if (i < c->ring_count && c->rings[i] != NULL &&
                frc_flush_untimed(c, c->rings[i]) != 0)
                break;
        }
        c->opt.merge = FLIGHTREC_MERGE_BY_RING;
        return c->error;
    }
    for (size_t i = 0; i < rd->rings; i++) {
        if (rd->at_seg[i] == NO_SEGMENT)
            break; /* this ring and the later ones start past an error */
        if (fill_ring(rd, i) != 0)
            return c->error;
    }
    for (;;) {
        struct frc_ring *r = frc_merge_step(c, &rc);
        if (rc != 0 || r == NULL)
            return rc;
        frc_merge_direct(c, r);
        rc = fill_ring(rd, r->index);
        c->direct_ring = NULL;
        if (rc != 0)
            return rc;
    }
}

/* Both passes; the caller's client is finished afterwards. */
static int read_twice(struct reader *rd)
{
    struct flightrec_client *c = rd->c;
    struct flightrec_client_options o = c->opt;

    o.on_record = noop;
    o.merge = 0;
    o.merge_window_ns = 0;
    o.on_progress = NULL;
    if (flightrec_client_create(&rd->scan, &o) != 0)
        return frc_fail(c, FLIGHTREC_ENOMEM, 0, "out of memory");
    scan(rd);
    if (rd->seg_len == 0)
        feed_range(rd, NULL, 0, rd->end); /* no chunk: nothing to order */
    else
        merge(rd);
    /* The first pass saw the whole stream: its end and its error are the
     * stream's (unless this pass stopped earlier, say in the callback). */
    c->consumed = rd->scan_consumed;
    c->part_len = rd->scan_part_len;
    if (c->error == 0 && rd->scan_error != 0) {
        c->error = rd->scan_error;
        c->error_offset = rd->scan_error_offset;
        memcpy(c->message, rd->scan_message, sizeof(c->message));
    }
    if (rd->scan_memory > c->totals.memory)
        c->totals.memory = rd->scan_memory;
    return 0;
}

static int read_once(struct reader *rd)
{
    struct flightrec_client *c = rd->c;

    for (;;) {
        ssize_t n = read(rd->fd, rd->buf, rd->buf_size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            return frc_fail(c, -e, c->consumed, "read error: %s",
                            strerror(e));
        }
        if (n == 0 || flightrec_client_feed(c, rd->buf, (size_t)n) != 0)
            return 0;
    }
}

int flightrec_client_read_fd(flightrec_client *c, int fd)
{
    struct reader rd;
    struct stat st;
    off_t here;

    if (c == NULL || fd < 0)
        return FLIGHTREC_EINVAL_CONFIG;
    if (c->consumed != 0 || c->finished)
        return FLIGHTREC_ESTATE;
    memset(&rd, 0, sizeof(rd));
    rd.c = c;
    rd.fd = fd;
    rd.names_first = rd.names_last = NO_SEGMENT;
    rd.buf_size = READ_BUFFER;
    rd.buf = malloc(rd.buf_size);
    if (rd.buf == NULL) {
        frc_fail(c, FLIGHTREC_ENOMEM, 0, "out of memory");
        return flightrec_client_finish(c);
    }
    if (c->opt.merge && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (here = lseek(fd, 0, SEEK_CUR)) >= 0 && st.st_size >= here) {
        rd.base = (uint64_t)here;
        rd.size = (uint64_t)(st.st_size - here);
        read_twice(&rd);
    } else {
        read_once(&rd);
    }
    free(rd.buf);
    free(rd.seg);
    free(rd.first);
    free(rd.last);
    free(rd.at_seg);
    free(rd.at_pos);
    for (size_t i = 0; rd.input != NULL && i < rd.rings; i++)
        free(rd.input[i].buf);
    free(rd.input);
    flightrec_client_destroy(rd.scan);
    return flightrec_client_finish(c);
}
