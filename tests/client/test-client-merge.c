/* SPDX-License-Identifier: BSD-2-Clause */
/* Decoder: the windowed merge gives the same records, in the same order
 * and with the same marks, however the stream is cut into feeds; and the
 * decode loop's runs (plain events of one ring delivered, queued or
 * indexed many at a time) give what item by item decoding gives. */
#include <stdio.h>
#include <string.h>

#include <flightrec/client.h>

#include "decode-util.h"
#include "stream-vector.h"
#include "test.h"

#define NS UINT64_C(1000000000)
#define RINGS 4u
#define WINDOW 2000u /* ns; the counter runs at 1 GHz, a tick a ns */

/*
 * Rings take turns in bursts of @a burst events (long runs in time order,
 * so that the merge batches its releases), starting where the previous
 * burst ended or at the same time (equal times across rings), with every
 * fifth burst placed 3 windows in the past (late records) and every
 * seventh one overlapping the previous ring's burst record by record.
 */
static void build(struct fr_vec *v, uint32_t bursts, uint32_t burst,
                  uint64_t *events)
{
    uint64_t t = 1000000, seed = 7;
    uint32_t pos[RINGS] = {0};

    *events = 0;
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(v, NS, RINGS, 1u << 16, 1, 0);
    for (uint32_t b = 0; b < bursts; b++) {
        uint32_t ring = b % RINGS;
        uint64_t start = t;
        if (b % 5 == 4)
            start = t - 3 * WINDOW;
        else if (b % 7 == 6)
            start = t - (uint64_t)burst * 2;
        else if (b % 3 == 1)
            start = t - 0; /* the next ring starts on the same tick */
        fr_vec_flightrec_chunk(v, ring, 100 + ring, "worker", 0, pos[ring],
                               0, 0);
        fr_vec_uptime(v, (uint32_t)start & ((1u << 22) - 1), start);
        uint64_t at = start;
        for (uint32_t i = 0; i < burst; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            at += (seed >> 62); /* 0 to 3 ticks: many equal times */
            fr_vec_item(v, (uint32_t)at & ((1u << 22) - 1),
                        FLIGHTREC_USER(ring), i);
        }
        pos[ring] += burst;
        *events += burst;
        if (at > t)
            t = at;
    }
}

TEST(batched_release_is_exact)
{
    static const uint32_t bursts[] = {1, 600, 1500};
    for (size_t k = 0; k < sizeof bursts / sizeof bursts[0]; k++) {
        struct fr_vec v;
        struct tresult whole, items, pieces;
        struct topts o = {.merge = 1, .window = WINDOW};
        uint64_t events, late = 0, ties = 0;

        build(&v, 40, bursts[k], &events);
        /* One feed: due releases are batched. */
        tdecode(&whole, v.buf, v.len, &o);
        /* A byte a feed: every feed ends by releasing what is due, so
         * each record is released as soon as it becomes due. */
        o.chunking = 1;
        tdecode(&items, v.buf, v.len, &o);
        o.chunking = 11;
        tdecode(&pieces, v.buf, v.len, &o);
        CHECK_EQ_I(whole.finish_rc, 0);
        CHECK_EQ_U(whole.n, events);
        tcompare(&whole, &items);
        tcompare(&whole, &pieces);
        for (size_t i = 0; i < whole.n; i++) {
            const struct trec *r = &whole.recs[i];
            if (r->flags & FLIGHTREC_RECORD_LATE) {
                late++;
                continue;
            }
            if (i > 0 && r->time_ns == whole.recs[i - 1].time_ns &&
                r->ring != whole.recs[i - 1].ring)
                ties++;
        }
        CHECK_EQ_U(whole.totals.late, late);
        if (bursts[k] > 1) {
            /* The stream has what the test is about. */
            CHECK(late > 0);
            CHECK(ties > 0);
        }
        tresult_free(&whole);
        tresult_free(&items);
        tresult_free(&pieces);
        fr_vec_free(&v);
    }
}

/*
 * Runs as the decode loop takes them many items at a time, and every way
 * one ends: rings record two chunks in a row (a run across a chunk
 * boundary), the next pair starting on the tick the last one ended (ties
 * across rings) or inside it (interleaved runs); equal times inside runs;
 * losses inside a ring's run (overflow and missing items, which break the
 * time chain until the next sync, and discards, which do not); a small
 * backwards step (clamped); a pair 3 windows in the past (late records
 * for the windowed merge).  Every event's data is its number in its
 * ring.  Counts what the stream holds.
 */
struct runs_expect {
    uint64_t events, overflow, missing, discard;
    uint64_t ring_events[RINGS];
};

static void build_runs(struct fr_vec *v, uint32_t format, uint32_t pairs,
                       uint32_t burst, struct runs_expect *x)
{
    uint64_t t = 5000000, seed = 11;
    uint32_t pos[RINGS] = {0};
    uint64_t last[RINGS] = {0};

    memset(x, 0, sizeof(*x));
    fr_vec_init(v, format);
    fr_vec_flightrec_header(v, NS, RINGS, 1u << 16, 1, 0);
    for (uint32_t b = 0; b < 2 * pairs; b++) {
        uint32_t ring = (b / 2) % RINGS;
        int second = b % 2 == 1;
        uint64_t overflow = second && b % 6 == 1 ? 5 : 0;
        uint64_t gap = b % 10 == 3 ? 7 : 0;
        uint64_t discard = b % 8 == 5 ? 3 : 0;
        uint64_t at;
        int sync;

        /* A chunk's position counts every ring item (version 1), lost
         * ones included. */
        pos[ring] += (uint32_t)(overflow + gap);
        x->overflow += overflow;
        x->missing += gap;
        x->discard += discard;
        fr_vec_flightrec_chunk(v, ring, 100 + ring, "runner", 0, pos[ring],
                               overflow, discard);
        if (second) {
            at = last[ring]; /* the ring goes on where it stopped */
        } else if (b % 14 == 12) {
            at = t - burst; /* inside the previous pair's run */
        } else if (b % 22 == 10) {
            at = t - 3 * WINDOW; /* late, for the windowed merge */
        } else {
            at = t; /* on the tick the previous pair ended */
        }
        /* A pair's first chunk syncs; a second one only after a loss
         * that broke the chain (it would wait for a sync otherwise). */
        sync = !second || overflow != 0 || gap != 0;
        if (sync) {
            fr_vec_uptime(v, (uint32_t)at & FLIGHTREC_TIME_MASK, at);
            pos[ring] += 2;
        }
        for (uint32_t i = 0; i < burst; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            if (b % 9 == 4 && i == burst / 2 && at > 2)
                at -= 2; /* the counter steps back: clamped */
            else
                at += seed >> 62; /* 0 to 3 ticks: equal times */
            fr_vec_item(v, (uint32_t)at & FLIGHTREC_TIME_MASK,
                        FLIGHTREC_USER(ring), x->ring_events[ring]++);
            pos[ring]++;
            x->events++;
        }
        last[ring] = at;
        if (at > t)
            t = at;
    }
}

/* What exact order means, checked on the records themselves. */
static void check_exact(const struct tresult *res,
                        const struct runs_expect *x)
{
    uint64_t next[RINGS] = {0}, losses[3] = {0}, clamped = 0;

    CHECK_EQ_I(res->finish_rc, 0);
    CHECK_EQ_U(res->totals.events, x->events);
    CHECK_EQ_U(res->totals.overflow, x->overflow);
    CHECK_EQ_U(res->totals.missing, x->missing);
    CHECK_EQ_U(res->totals.discard, x->discard);
    CHECK_EQ_U(res->totals.late, 0);
    for (size_t i = 0; i < res->n; i++) {
        const struct trec *r = &res->recs[i];
        CHECK(r->ring < RINGS);
        CHECK_EQ_U(r->flags & ~(uint32_t)FLIGHTREC_RECORD_CLAMPED, 0);
        if (i > 0) {
            const struct trec *p = &res->recs[i - 1];
            /* Time order; equal times in order of first appearance. */
            CHECK(r->time_ns > p->time_ns ||
                  (r->time_ns == p->time_ns && r->ring >= p->ring));
        }
        if (r->type == FLIGHTREC_RECORD_LOSS) {
            CHECK(r->loss_kind < 3);
            losses[r->loss_kind] += r->loss_count;
            continue;
        }
        /* Each ring's events all come, once, in their order. */
        CHECK_EQ_U(r->data, next[r->ring]);
        next[r->ring]++;
        CHECK_EQ_U(r->thread_id, 100 + r->ring);
        clamped += (r->flags & FLIGHTREC_RECORD_CLAMPED) != 0;
    }
    for (uint32_t k = 0; k < RINGS; k++)
        CHECK_EQ_U(next[k], x->ring_events[k]);
    CHECK_EQ_U(losses[FLIGHTREC_LOSS_OVERFLOW], x->overflow);
    CHECK_EQ_U(losses[FLIGHTREC_LOSS_MISSING], x->missing);
    CHECK_EQ_U(losses[FLIGHTREC_LOSS_DISCARD], x->discard);
    CHECK(clamped > 0);
}

TEST(runs_decode_as_items_one_by_one)
{
    static const uint32_t formats[] = {FLIGHTREC_FORMAT_LE_32,
                                       FLIGHTREC_FORMAT_LE_64,
                                       FLIGHTREC_FORMAT_BE_32};
    static const uint32_t bursts[] = {1, 3, 300};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        for (size_t k = 0; k < sizeof bursts / sizeof bursts[0]; k++) {
            struct fr_vec v;
            struct runs_expect x;
            /* Unmerged, windowed, window 0 (exact). */
            static const struct {
                int merge;
                uint64_t window;
            } modes[] = {{0, 0}, {1, WINDOW}, {1, 0}};
            struct tresult exact;

            build_runs(&v, formats[f], 30, bursts[k], &x);
            for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
                struct tresult whole, items, pieces;
                struct topts o = {.merge = modes[m].merge,
                                  .window = modes[m].window};
                /* One feed: the loop's runs are as long as they get.  A
                 * byte a feed: each item is decoded alone. */
                tdecode(&whole, v.buf, v.len, &o);
                o.chunking = 1;
                tdecode(&items, v.buf, v.len, &o);
                o.chunking = 13;
                tdecode(&pieces, v.buf, v.len, &o);
                CHECK_EQ_I(whole.finish_rc, 0);
                CHECK_EQ_U(whole.totals.events, x.events);
                if (m == 1 && bursts[k] >= 300)
                    CHECK(whole.totals.late > 0); /* as the test means */
                tcompare(&whole, &items);
                tcompare(&whole, &pieces);
                tresult_free(&items);
                tresult_free(&pieces);
                /* A callback that stops inside a run stops it there. */
                for (int stop = 1; stop < 3; stop++) {
                    struct tresult a, b;
                    struct topts s = o;
                    s.stop_after = (int)(whole.n * (size_t)stop / 3) + 1;
                    s.chunking = 0;
                    tdecode(&a, v.buf, v.len, &s);
                    s.chunking = 1;
                    tdecode(&b, v.buf, v.len, &s);
                    CHECK_EQ_U(a.n, (size_t)s.stop_after);
                    CHECK_EQ_I(a.finish_rc, FLIGHTREC_ECALLBACK);
                    tcompare(&a, &b);
                    tresult_free(&a);
                    tresult_free(&b);
                }
                if (m == 2)
                    exact = whole;
                else
                    tresult_free(&whole);
            }
            check_exact(&exact, &x);
            /* The ordered reader of files (its index pass and direct
             * delivery run too) gives the order of window 0. */
            {
                struct tresult file;
                struct topts o = {.merge = 1, .read_fd = 1};
                tdecode(&file, v.buf, v.len, &o);
                tcompare(&exact, &file);
                tresult_free(&file);
                o.stop_after = (int)(exact.n / 2) + 1;
                tdecode(&file, v.buf, v.len, &o);
                CHECK_EQ_U(file.n, (size_t)o.stop_after);
                CHECK_EQ_I(file.finish_rc, FLIGHTREC_ECALLBACK);
                for (size_t i = 0; i < file.n; i++)
                    CHECK_EQ_U(file.recs[i].offset, exact.recs[i].offset);
                tresult_free(&file);
            }
            tresult_free(&exact);
            fr_vec_free(&v);
        }
    }
}

/* A run longer than the window is released while it is queued, so the
 * windowed merge holds about a window of it, not the run. */
TEST(runs_longer_than_the_window_are_released_inside)
{
    struct fr_vec v;
    struct runs_expect x;
    struct tresult whole, items;
    /* A chunk of the run alone is 256 KB of queued records. */
    struct topts o = {.merge = 1, .window = WINDOW,
                      .memory_limit = 128u << 10};

    build_runs(&v, FLIGHTREC_FORMAT_LE_32, 4, 8000, &x);
    tdecode(&whole, v.buf, v.len, &o);
    o.chunking = 1;
    tdecode(&items, v.buf, v.len, &o);
    CHECK_EQ_I(whole.finish_rc, 0);
    CHECK_EQ_U(whole.totals.events, x.events);
    tcompare(&whole, &items);
    tresult_free(&whole);
    tresult_free(&items);
    fr_vec_free(&v);
}

TEST_MAIN()
