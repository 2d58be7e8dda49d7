/* SPDX-License-Identifier: BSD-2-Clause */
/* Decoder: loss accounting, merge, many rings, chunking invariance. */
#include <stdio.h>
#include <string.h>

#include <flightrec/client.h>

#include "decode-util.h"
#include "stream-vector.h"
#include "test.h"

#define NS UINT64_C(1000000000)

static void check_loss(const struct trec *r, uint32_t kind, uint64_t count,
                       uint64_t time)
{
    CHECK_EQ_U(r->type, FLIGHTREC_RECORD_LOSS);
    CHECK_EQ_U(r->loss_kind, kind);
    CHECK_EQ_U(r->loss_count, count);
    CHECK_EQ_U(r->time_ns, time);
}

/* Chunk 1 of ring 0: position 0, a sync and 4 events (6 ring items). */
static void first_chunk(struct fr_vec *v)
{
    fr_vec_flightrec_header(v, NS, 1, 64, 1, 0);
    fr_vec_flightrec_chunk(v, 0, 7, "t", 0, 0, 0, 0);
    fr_vec_uptime(v, 0, 1000);
    for (uint32_t i = 1; i <= 4; i++)
        fr_vec_item(v, i * 10, FLIGHTREC_USER(0), i);
}

static void decode_checked(struct tresult *res, const struct fr_vec *v)
{
    struct tresult other;
    struct topts o = {.chunking = 1};

    tdecode(res, v->buf, v->len, NULL);
    CHECK_EQ_I(res->finish_rc, 0);
    tdecode(&other, v->buf, v->len, &o);
    tcompare(res, &other);
    tresult_free(&other);
}

/* Flight mode: items overwritten between chunks.  The loss breaks the time
 * chain; the next chunk's items wait for its sync and are timed backwards;
 * the LOSS record takes the time of the ring's next item. */
TEST(overflow)
{
    struct fr_vec v;
    struct tresult res;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    first_chunk(&v);
    fr_vec_flightrec_chunk(&v, 0, 7, "t", 0, 20, 14, 0);
    fr_vec_item(&v, 5000, FLIGHTREC_USER(1), 5);
    fr_vec_item(&v, 5100, FLIGHTREC_USER(1), 6);
    fr_vec_uptime(&v, 5200, 90000);
    fr_vec_item(&v, 5300, FLIGHTREC_USER(1), 7);
    decode_checked(&res, &v);
    CHECK_EQ_U(res.n, 8);
    check_loss(&res.recs[4], FLIGHTREC_LOSS_OVERFLOW, 14, 89800);
    CHECK_EQ_U(res.recs[5].time_ns, 89800);
    CHECK_EQ_U(res.recs[6].time_ns, 89900);
    CHECK_EQ_U(res.recs[7].time_ns, 90100);
    CHECK_EQ_U(res.totals.overflow, 14);
    CHECK_EQ_U(res.totals.missing, 0);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* A task's name recorded into a ring (THREAD_ID, then THREAD_NAME items,
 * as firmware does) is the owner's events: the next chunk's position counts
 * them, and nothing is reported missing. */
TEST(names_in_ring)
{
    struct fr_vec v;
    struct tresult res;
    struct topts o = {.keep = 1};

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, NS, 1, 64, 1, 0);
    fr_vec_flightrec_chunk(&v, 0, 7, "cpu", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 1000);
    fr_vec_name(&v, FLIGHTREC_EV_THREAD_ID, 42, FLIGHTREC_EV_THREAD_NAME,
                "sensor", 16);
    fr_vec_item(&v, 10, FLIGHTREC_USER(0), 1);
    /* 2 uptime + 1 THREAD_ID + 4 THREAD_NAME + 1 event */
    fr_vec_flightrec_chunk(&v, 0, 7, "cpu", 0, 8, 0, 0);
    fr_vec_item(&v, 20, FLIGHTREC_USER(0), 2);
    decode_checked(&res, &v);
    CHECK_EQ_U(res.n, 2);
    CHECK_EQ_U(res.totals.missing, 0);
    CHECK_EQ_U(res.recs[1].time_ns, 1020);
    tresult_free(&res);
    tdecode(&res, v.buf, v.len, &o);
    CHECK_EQ_S(flightrec_client_thread_name(res.client, 42), "sensor");
    CHECK_EQ_U(flightrec_client_ring(res.client, 0)->missing, 0);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* Positions skip more than the overflow explains: chunks are missing. */
TEST(missing)
{
    struct fr_vec v;
    struct tresult res;
    struct topts o = {.keep = 1};

    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_64);
    first_chunk(&v);
    fr_vec_flightrec_chunk(&v, 0, 7, "t", 0, 30, 4, 0);
    fr_vec_uptime(&v, 5200, 90000);
    fr_vec_item(&v, 5300, FLIGHTREC_USER(1), 7);
    /* 3 ring items: the next chunk continues at 33 */
    fr_vec_flightrec_chunk(&v, 0, 7, "t", 0, 33, 0, 0);
    fr_vec_item(&v, 5400, FLIGHTREC_USER(1), 8);
    decode_checked(&res, &v);
    CHECK_EQ_U(res.n, 8);
    check_loss(&res.recs[4], FLIGHTREC_LOSS_OVERFLOW, 4, 90100);
    check_loss(&res.recs[5], FLIGHTREC_LOSS_MISSING, 20, 90100);
    CHECK_EQ_U(res.recs[6].time_ns, 90100);
    CHECK_EQ_U(res.recs[7].time_ns, 90200); /* continuity kept */
    CHECK_EQ_U(res.totals.missing, 20);
    tresult_free(&res);
    tdecode(&res, v.buf, v.len, &o);
    const struct flightrec_ring_info *ri = flightrec_client_ring(res.client, 0);
    CHECK_EQ_U(ri->overflow, 4);
    CHECK_EQ_U(ri->missing, 20);
    CHECK_EQ_U(ri->discard, 0);
    CHECK_EQ_U(ri->events, 6);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* Discard mode: dropped items were never in the ring; the time chain
 * goes on without a sync. */
TEST(discard)
{
    struct fr_vec v;
    struct tresult res;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    first_chunk(&v);
    fr_vec_flightrec_chunk(&v, 0, 7, "t", 0, 6, 0, 9);
    fr_vec_item(&v, 100, FLIGHTREC_USER(1), 5);
    decode_checked(&res, &v);
    CHECK_EQ_U(res.n, 6);
    check_loss(&res.recs[4], FLIGHTREC_LOSS_DISCARD, 9, 1100);
    CHECK_EQ_U(res.recs[5].time_ns, 1100);
    CHECK_EQ_U(res.totals.discard, 9);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* A position behind the previous chunk's end is a re-read: no loss. */
TEST(rewind)
{
    struct fr_vec v;
    struct tresult res;

    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_32);
    first_chunk(&v);
    fr_vec_flightrec_chunk(&v, 0, 7, "t", 0, 2, 0, 0);
    fr_vec_item(&v, 20, FLIGHTREC_USER(0), 2);
    fr_vec_item(&v, 30, FLIGHTREC_USER(0), 3);
    fr_vec_uptime(&v, 35, 1035);
    decode_checked(&res, &v);
    CHECK_EQ_U(res.n, 6);
    CHECK_EQ_U(res.recs[4].type, FLIGHTREC_RECORD_EVENT);
    CHECK_EQ_U(res.recs[4].time_ns, 1020);
    CHECK_EQ_U(res.recs[5].time_ns, 1030);
    CHECK_EQ_U(res.totals.overflow + res.totals.missing, 0);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* RTEMS v10 PER_CPU_OVERFLOW; a loss at the very end takes the ring's
 * previous time. */
TEST(rtems_v10_overflow)
{
    struct fr_vec v;
    struct tresult res;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_item(&v, 0, FLIGHTREC_EV_VERSION, 10);
    fr_vec_item(&v, 0, FLIGHTREC_EV_FREQUENCY, NS);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, 0);
    fr_vec_uptime(&v, 0, UINT64_C(1) << 32);
    fr_vec_item(&v, 10, FLIGHTREC_USER(0), 0);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, 0);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PER_CPU_OVERFLOW, 5);
    fr_vec_item(&v, 500, FLIGHTREC_USER(0), 1); /* chain broken: held */
    fr_vec_uptime(&v, 600, UINT64_C(2) << 32);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, 0);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PER_CPU_OVERFLOW, 3);
    decode_checked(&res, &v);
    CHECK_EQ_U(res.n, 4);
    CHECK_EQ_U(res.recs[0].time_ns, NS + 10);
    check_loss(&res.recs[1], FLIGHTREC_LOSS_OVERFLOW, 5, 2 * NS - 100);
    CHECK_EQ_U(res.recs[2].time_ns, 2 * NS - 100);
    check_loss(&res.recs[3], FLIGHTREC_LOSS_OVERFLOW, 3, 2 * NS - 100);
    CHECK_EQ_U(res.totals.overflow, 8);
    tresult_free(&res);
    fr_vec_free(&v);
}

static void v1_chunk(struct fr_vec *v, uint32_t tail, uint32_t head)
{
    fr_vec_item(v, 0, FLIGHTREC_V1_PROCESSOR, 0);
    fr_vec_item(v, 0, FLIGHTREC_V1_TAIL, tail);
    fr_vec_item(v, 0, FLIGHTREC_V1_HEAD, head);
}

/* RTEMS v1: overflow and missing chunks from successive TAIL/HEAD. */
TEST(rtems_v1_tail_head)
{
    struct fr_vec v;
    struct tresult res;

    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_32);
    fr_vec_item(&v, 0, FLIGHTREC_V1_VERSION, 1);
    fr_vec_item(&v, 0, FLIGHTREC_V1_COUNT, 16);
    fr_vec_item(&v, 0, FLIGHTREC_V1_FREQUENCY, 1000000);
    v1_chunk(&v, 0, 5);
    fr_vec_item(&v, 5, FLIGHTREC_V1_UPTIME_LOW, 0);
    fr_vec_item(&v, 5, FLIGHTREC_V1_UPTIME_HIGH, 1);
    for (uint32_t i = 0; i < 3; i++)
        fr_vec_item(&v, 10 + i, FLIGHTREC_V1_USER_0, i);
    /* 25 produced, a 16-item ring hands out 15: 10 overwritten */
    v1_chunk(&v, 5, 30);
    for (uint32_t i = 0; i < 13; i++)
        fr_vec_item(&v, 100 + i, FLIGHTREC_V1_USER_0, 100 + i);
    fr_vec_item(&v, 113, FLIGHTREC_V1_UPTIME_LOW, 0);
    fr_vec_item(&v, 113, FLIGHTREC_V1_UPTIME_HIGH, 2);
    /* the chunk for 30..40 never arrived */
    v1_chunk(&v, 40, 41);
    fr_vec_item(&v, 200, FLIGHTREC_V1_USER_0, 200);
    decode_checked(&res, &v);
    CHECK_EQ_U(res.totals.overflow, 10);
    CHECK_EQ_U(res.totals.missing, 10);
    CHECK_EQ_U(res.totals.events, 17);
    CHECK_EQ_U(res.n, 19);
    check_loss(&res.recs[3], FLIGHTREC_LOSS_OVERFLOW, 10, 2 * NS - 13000);
    CHECK_EQ_U(res.recs[4].time_ns, 2 * NS - 13000);
    /* no sync after it: the loss takes the ring's previous time */
    check_loss(&res.recs[17], FLIGHTREC_LOSS_MISSING, 10, 2 * NS - 1000);
    CHECK_EQ_U(res.recs[17].flags, 0);
    CHECK_EQ_U(res.recs[18].flags, FLIGHTREC_RECORD_UNTIMED);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* Rings a, b, c each with events at their own times; chunks in any order. */
static void three_rings(struct fr_vec *v)
{
    fr_vec_flightrec_header(v, NS, 3, 64, 1, 0);
    for (uint32_t round = 0; round < 3; round++) {
        for (uint32_t ring = 0; ring < 3; ring++) {
            fr_vec_flightrec_chunk(v, ring, 10 + ring, "r", 0, round * 11,
                                   0, 0);
            uint64_t t0 = round * 10000 + ring * 3000;
            fr_vec_uptime(v, 0, t0);
            for (uint32_t i = 1; i <= 9; i++)
                fr_vec_item(v, i * 100, FLIGHTREC_USER(ring), t0 + i * 100);
        }
    }
}

TEST(merge_order)
{
    struct fr_vec v;
    struct tresult res, one;
    struct topts o = {.merge = 1};

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    three_rings(&v);
    tdecode(&res, v.buf, v.len, &o);
    CHECK_EQ_I(res.finish_rc, 0);
    CHECK_EQ_U(res.n, 81);
    for (size_t i = 0; i < res.n; i++) {
        CHECK_EQ_U(res.recs[i].data, res.recs[i].time_ns);
        CHECK_EQ_U(res.recs[i].flags, 0);
        if (i > 0)
            CHECK(res.recs[i - 1].time_ns < res.recs[i].time_ns);
    }
    o.chunking = 1;
    tdecode(&one, v.buf, v.len, &o);
    tcompare(&res, &one);
    tresult_free(&one);
    tresult_free(&res);

    /* equal times: ring order of first appearance */
    fr_vec_free(&v);
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, NS, 2, 64, 1, 0);
    fr_vec_flightrec_chunk(&v, 5, 1, "a", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 100);
    fr_vec_item(&v, 10, FLIGHTREC_USER(5), 0);
    fr_vec_flightrec_chunk(&v, 2, 1, "a", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 100);
    fr_vec_item(&v, 10, FLIGHTREC_USER(2), 0);
    fr_vec_item(&v, 5, FLIGHTREC_USER(2), 0);
    o.chunking = 0;
    tdecode(&res, v.buf, v.len, &o);
    CHECK_EQ_U(res.n, 3);
    CHECK_EQ_U(res.recs[0].ring, 5);
    CHECK_EQ_U(res.recs[1].ring, 2);
    CHECK_EQ_U(res.recs[2].ring, 2);
    CHECK_EQ_U(res.recs[2].flags, FLIGHTREC_RECORD_CLAMPED);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* A bounded window releases early; what comes after its turn is LATE. */
TEST(merge_window_late)
{
    struct fr_vec v;
    struct tresult res;
    struct topts o = {.merge = 1, .window = 1000};
    size_t late = 0;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, NS, 2, 64, 1, 0);
    fr_vec_flightrec_chunk(&v, 0, 1, "a", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 0);
    for (uint32_t i = 1; i <= 100; i++)
        fr_vec_item(&v, i * 100, FLIGHTREC_USER(0), i * 100); /* ..10000 */
    fr_vec_flightrec_chunk(&v, 1, 2, "b", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 8500);
    for (uint32_t i = 0; i < 10; i++)
        fr_vec_item(&v, i * 100, FLIGHTREC_USER(1), 8500 + i * 100);
    tdecode(&res, v.buf, v.len, &o);
    CHECK_EQ_I(res.finish_rc, 0);
    CHECK_EQ_U(res.n, 110);
    /* ring 0 released through 9000 before ring 1 arrived */
    for (size_t i = 0; i < res.n; i++) {
        CHECK_EQ_U(res.recs[i].data, res.recs[i].time_ns);
        if (res.recs[i].flags & FLIGHTREC_RECORD_LATE) {
            CHECK_EQ_U(res.recs[i].ring, 1);
            CHECK(res.recs[i].time_ns < 9000);
            late++;
        }
    }
    CHECK_EQ_U(late, 5); /* 8500 .. 8900 */
    CHECK_EQ_U(res.totals.late, 5);
    tresult_free(&res);
    fr_vec_free(&v);
}

TEST(rings_5000)
{
    struct fr_vec v;
    struct tresult res;
    struct topts o = {.keep = 1, .merge = 1};

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, NS, 5000, 64, 1, 0);
    for (uint32_t r = 0; r < 5000; r++) {
        fr_vec_flightrec_chunk(&v, r, 1000 + r, "worker", r & 1, 0, 0, 0);
        fr_vec_uptime(&v, 0, 5000 - r);
        fr_vec_item(&v, 1, FLIGHTREC_USER(0), r);
        fr_vec_item(&v, 2, FLIGHTREC_USER(1), r);
    }
    tdecode(&res, v.buf, v.len, &o);
    CHECK_EQ_I(res.finish_rc, 0);
    CHECK_EQ_U(res.n, 10000);
    CHECK_EQ_U(res.totals.rings, 5000);
    CHECK_EQ_U(flightrec_client_ring_count(res.client), 5000);
    for (size_t i = 0; i < 5000; i++) {
        const struct flightrec_ring_info *ri =
            flightrec_client_ring(res.client, i);
        CHECK_EQ_U(ri->id, i);
        CHECK_EQ_I(ri->thread_id, 1000 + (int64_t)i);
        CHECK_EQ_U(ri->context, i & 1);
        CHECK_EQ_U(ri->events, 2);
    }
    for (size_t i = 1; i < res.n; i++)
        CHECK(res.recs[i - 1].time_ns <= res.recs[i].time_ns);
    CHECK_EQ_U(res.recs[0].ring, 4999);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* The identity a record's chunk gave its ring, by the data word. */
static void check_identity(const struct trec *r)
{
    static const struct {
        int64_t tid;
        const char *name;
    } owner[] = { { 0, "" },     { 7, "alpha" }, { 8, "beta" },
                  { 9, "other" }, { 10, "gamma" }, { 11, "delta" } };
    uint64_t k = r->type == FLIGHTREC_RECORD_LOSS ? 4 : r->data;

    CHECK(k >= 1 && k <= 5);
    CHECK_EQ_I(r->thread_id, owner[k].tid);
    CHECK_EQ_S(r->thread_name, owner[k].name);
    CHECK_EQ_U(r->context, k == 5 ? 1 : 0);
}

/* A reused ring changes owner (THREAD_ID / THREAD_NAME, and once the
 * context) between chunks while records of the old owner wait: in the
 * merge (window 0 holds everything until finish), in a short window, and
 * held back for a sync that only the next owner's chunk brings.  Each
 * record's ring_info names the owner of its own chunk. */
TEST(ring_identity)
{
    struct fr_vec v;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, NS, 2, 64, 1, 0);
    /* ring 0, owner alpha: 1010, 1020, 1030 */
    fr_vec_flightrec_chunk(&v, 0, 7, "alpha", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 1000);
    for (uint32_t i = 1; i <= 3; i++)
        fr_vec_item(&v, i * 10, FLIGHTREC_USER(0), 1);
    /* ring 1 interleaves: 1005, 1015, 1025 */
    fr_vec_flightrec_chunk(&v, 1, 9, "other", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 1000);
    for (uint32_t i = 0; i < 3; i++)
        fr_vec_item(&v, 5 + i * 10, FLIGHTREC_USER(1), 3);
    /* ring 0 continues (no loss, no sync) under owner beta: 1040, 1050 */
    fr_vec_flightrec_chunk(&v, 0, 8, "beta", 0, 5, 0, 0);
    fr_vec_item(&v, 40, FLIGHTREC_USER(0), 2);
    fr_vec_item(&v, 50, FLIGHTREC_USER(0), 2);
    fr_vec_flightrec_chunk(&v, 1, 9, "other", 0, 5, 0, 0);
    fr_vec_item(&v, 35, FLIGHTREC_USER(1), 3);
    fr_vec_item(&v, 45, FLIGHTREC_USER(1), 3);
    /* owner gamma after an overflow: no time until the next sync */
    fr_vec_flightrec_chunk(&v, 0, 10, "gamma", 0, 20, 13, 0);
    fr_vec_item(&v, 100, FLIGHTREC_USER(0), 4);
    fr_vec_item(&v, 200, FLIGHTREC_USER(0), 4);
    /* owner delta (a signal ring now) brings the sync for gamma's items */
    fr_vec_flightrec_chunk(&v, 0, 11, "delta", 1, 22, 0, 0);
    fr_vec_uptime(&v, 300, 5000);
    fr_vec_item(&v, 400, FLIGHTREC_USER(0), 5);

    for (int merge = 0; merge < 2; merge++) {
        for (uint64_t window = 0; window <= 20; window += 20) {
            struct topts o = {.merge = merge, .window = window, .keep = 1};
            struct tresult res, one;
            size_t seen[6] = {0};

            tdecode(&res, v.buf, v.len, &o);
            CHECK_EQ_I(res.finish_rc, 0);
            CHECK_EQ_U(res.n, 14);
            for (size_t i = 0; i < res.n; i++) {
                check_identity(&res.recs[i]);
                seen[res.recs[i].type == FLIGHTREC_RECORD_LOSS
                         ? 0 : res.recs[i].data]++;
            }
            CHECK_EQ_U(seen[0], 1);
            CHECK_EQ_U(seen[1], 3);
            CHECK_EQ_U(seen[2], 2);
            CHECK_EQ_U(seen[3], 5);
            CHECK_EQ_U(seen[4], 2);
            CHECK_EQ_U(seen[5], 1);
            if (merge && window == 0) {
                /* everything waited: alpha's records came after beta's
                 * chunk, gamma's after delta's */
                CHECK_EQ_U(res.recs[0].time_ns, 1005);
                CHECK_EQ_U(res.recs[1].data, 1);
            }
            /* the live description is the last owner's */
            const struct flightrec_ring_info *ri =
                flightrec_client_ring(res.client, 0);
            CHECK_EQ_I(ri->thread_id, 11);
            CHECK_EQ_S(ri->thread_name, "delta");
            CHECK_EQ_U(ri->context, 1);
            CHECK_EQ_U(ri->events, 8);
            o.keep = 0;
            o.chunking = 1;
            tdecode(&one, v.buf, v.len, &o);
            tcompare(&res, &one);
            tresult_free(&one);
            tresult_free(&res);
        }
    }
    fr_vec_free(&v);
}

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(*s >> 33);
}

/* A random stream of interleaved chunks: equal times across rings, small
 * backward steps (clamped), rewinds (a ring's times go back), missing
 * chunks and overflow (LOSS records), runs longer than a queue block.
 * Every chunk syncs and ends with an event, so nothing is left untimed. */
static void random_stream(struct fr_vec *v, uint64_t seed)
{
    uint64_t ticks[6];
    uint32_t end[6] = {0};
    uint32_t rings = 1 + rnd(&seed) % 6, chunks = rings * (1 + rnd(&seed) % 6);
    uint64_t data = 0;

    fr_vec_flightrec_header(v, NS, rings, 1024, 1, 0);
    for (uint32_t r = 0; r < rings; r++)
        ticks[r] = 1000 + rnd(&seed) % 20;
    for (uint32_t k = 0; k < chunks; k++) {
        uint32_t r = rnd(&seed) % rings, pos = end[r], overflow = 0;
        uint32_t kind = rnd(&seed) % 10, n;
        if (kind == 0 && pos > 3) {
            pos -= 1 + rnd(&seed) % 3; /* rewind */
            ticks[r] -= rnd(&seed) % 300;
        } else if (kind == 1) {
            pos += 5; /* missing */
        } else if (kind == 2) {
            overflow = 3;
            pos += 3;
        }
        fr_vec_flightrec_chunk(v, r * 3 + 1, 100 + r, "t", 0, pos, overflow,
                               0);
        fr_vec_uptime(v, (uint32_t)ticks[r] & FLIGHTREC_TIME_MASK, ticks[r]);
        n = 1 + rnd(&seed) % (rnd(&seed) % 4 == 0 ? 600 : 20);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t field;
            if (rnd(&seed) % 50 == 0) {
                field = (uint32_t)(ticks[r] - 3); /* clamped */
            } else {
                ticks[r] += rnd(&seed) % 4 == 0 ? 0 : rnd(&seed) % 40;
                field = (uint32_t)ticks[r];
            }
            fr_vec_item(v, field & FLIGHTREC_TIME_MASK, FLIGHTREC_USER(r),
                        data++);
        }
        end[r] = pos + 2 + n;
    }
}

/* The merge as a plain k-way merge, one record at a time, over the records
 * in the order the decoder produced them (the unmerged order): each ring a
 * FIFO, the next record the least (time, ring's first appearance) among the
 * FIFOs' heads; released once a record window_ns later was decoded; a
 * record whose turn has passed goes at once, LATE. */
static void reference_merge(const struct tresult *in, uint64_t window,
                            struct trec *out)
{
    size_t n = in->n, done = 0, *fifo = malloc(n * sizeof(*fifo));
    size_t head[8] = {0}, len[8] = {0}, base[8] = {0};
    uint32_t ids[8];
    size_t rings = 0, *ring_of = malloc(n * sizeof(*ring_of));
    uint64_t max_time = 0, released = 0;
    int has_released = 0;

    CHECK(fifo != NULL && ring_of != NULL);
    /* FIFO storage: ring k's records at base[k] .. in decode order */
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < rings && ids[k] != in->recs[i].ring)
            k++;
        if (k == rings) {
            CHECK(rings < 8);
            ids[rings++] = in->recs[i].ring;
        }
        ring_of[i] = k;
        len[k]++;
    }
    for (size_t k = 1; k < rings; k++)
        base[k] = base[k - 1] + len[k - 1];
    memset(len, 0, sizeof len);
    for (size_t i = 0; i < n; i++) {
        const struct trec *x = &in->recs[i];
        size_t k = ring_of[i];
        if (x->time_ns > max_time)
            max_time = x->time_ns;
        if (has_released && x->time_ns < released) {
            out[done] = *x;
            out[done++].flags |= FLIGHTREC_RECORD_LATE;
        } else {
            fifo[base[k] + head[k] + len[k]++] = i;
        }
        for (;;) {
            size_t best = SIZE_MAX;
            int at_end = i + 1 == n;
            if (!at_end && (window == 0 || max_time < window))
                break;
            for (size_t j = 0; j < rings; j++) {
                if (len[j] != 0 &&
                    (best == SIZE_MAX ||
                     in->recs[fifo[base[j] + head[j]]].time_ns <
                         in->recs[fifo[base[best] + head[best]]].time_ns))
                    best = j;
            }
            if (best == SIZE_MAX)
                break;
            const struct trec *y = &in->recs[fifo[base[best] + head[best]]];
            if (!at_end && y->time_ns > max_time - window)
                break;
            head[best]++;
            len[best]--;
            if (!has_released || y->time_ns > released)
                released = y->time_ns;
            has_released = 1;
            out[done++] = *y;
        }
    }
    CHECK_EQ_U(done, n);
    free(fifo);
    free(ring_of);
}

/* The merge delivers exactly what a plain one-at-a-time k-way merge does,
 * flags included, whatever the window and the feed sizes.  The streams
 * have LATE and CLAMPED records, losses, and rings whose queued times go
 * back (rewinds). */
TEST(merge_reference)
{
    static const uint64_t windows[] = {0, 1, 7, 50, 1000, 100000};

    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct fr_vec v;
        struct tresult plain;

        fr_vec_init(&v, seed & 1 ? FLIGHTREC_FORMAT_LE_32
                                  : FLIGHTREC_FORMAT_BE_64);
        random_stream(&v, seed);
        tdecode(&plain, v.buf, v.len, NULL);
        CHECK_EQ_I(plain.finish_rc, 0);
        for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
            struct topts o = {.merge = 1, .window = windows[w],
                              .chunking = (int)(seed % 3) * 7};
            struct tresult merged;
            struct tresult want = plain;
            want.recs = malloc(plain.n * sizeof(*want.recs));
            CHECK(want.recs != NULL);
            reference_merge(&plain, windows[w], want.recs);
            want.client = NULL;
            tdecode(&merged, v.buf, v.len, &o);
            tcompare(&want, &merged);
            free(want.recs);
            tresult_free(&merged);
        }
        tresult_free(&plain);
        fr_vec_free(&v);
    }
}

/* flightrec_client_read_fd() gives exactly the records, totals and error
 * of feeding the whole stream: on a file those of merge window 0 (exact
 * order, though it holds only slices), on a pipe those of the window. */
static void check_read_fd(const struct fr_vec *v)
{
    static const uint64_t windows[] = {0, 1500};

    for (int how = 1; how <= 2; how++) {
        for (size_t w = 0; w < 2; w++) {
            struct topts fed = {.merge = 1, .window = how == 1 ? 0
                                                               : windows[w]};
            struct topts read = fed;
            struct tresult want, got;
            read.read_fd = how;
            read.window = windows[w]; /* not used on a file */
            tdecode(&want, v->buf, v->len, &fed);
            tdecode(&got, v->buf, v->len, &read);
            tcompare(&want, &got);
            CHECK_EQ_U(got.error_offset, want.error_offset);
            CHECK_EQ_U(got.totals.bytes, want.totals.bytes);
            CHECK_EQ_U(got.totals.items, want.totals.items);
            CHECK_EQ_U(got.totals.events, want.totals.events);
            CHECK_EQ_U(got.totals.overflow, want.totals.overflow);
            CHECK_EQ_U(got.totals.missing, want.totals.missing);
            CHECK_EQ_U(got.totals.discard, want.totals.discard);
            CHECK_EQ_U(got.totals.untimed, want.totals.untimed);
            CHECK_EQ_U(got.totals.late, want.totals.late);
            CHECK_EQ_U(got.totals.rings, want.totals.rings);
            tresult_free(&want);
            tresult_free(&got);
        }
    }
}

TEST(read_fd_reference)
{
    struct fr_vec v;

    for (uint64_t seed = 1; seed <= 60; seed++) {
        fr_vec_init(&v, seed & 1 ? FLIGHTREC_FORMAT_LE_32
                                  : FLIGHTREC_FORMAT_BE_64);
        random_stream(&v, seed);
        check_read_fd(&v);
        fr_vec_free(&v);
    }
    /* Hold-back across chunks, names between chunks, a truncated end. */
    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_64);
    three_rings(&v);
    fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, 600, FLIGHTREC_EV_EVENT_NAME,
                "name", 8);
    fr_vec_flightrec_chunk(&v, 1, 11, "r", 0, 40, 3, 2);
    fr_vec_item(&v, 100, FLIGHTREC_USER(7), 1);
    fr_vec_uptime(&v, 200, 50000);
    fr_vec_item(&v, 300, FLIGHTREC_USER(7), 2);
    fr_vec_flightrec_chunk(&v, 2, 12, "r", 0, 20, 0, 0);
    fr_vec_item(&v, 100, FLIGHTREC_USER(7), 3);
    check_read_fd(&v);
    fr_vec_u32(&v, 0x1234); /* truncated item */
    check_read_fd(&v);
    /* An error inside a chunk: what came before it, in both. */
    v.len -= 4;
    fr_vec_item(&v, 5, FLIGHTREC_EV_PROCESSOR, 1u << 24);
    fr_vec_item(&v, 6, FLIGHTREC_USER(1), 9);
    check_read_fd(&v);
    fr_vec_free(&v);
    /* Nothing but a header; and less than the framing. */
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, NS, 1, 64, 1, 0);
    check_read_fd(&v);
    v.len = 5;
    check_read_fd(&v);
    fr_vec_free(&v);
}

/* One ring's chunk for read_fd_strings_and_losses: its uptime pair and
 * @a n plain events of USER(ring), a string event of USER(5) after every
 * tenth when @a strings is set. */
static uint32_t scan_chunk(struct fr_vec *v, uint32_t ring, uint32_t pos,
                           uint64_t *ticks, uint32_t n, int strings)
{
    uint32_t items = 2;

    fr_vec_flightrec_chunk(v, ring, 20 + ring, "s", 0, pos, 0, 0);
    fr_vec_uptime(v, (uint32_t)*ticks & FLIGHTREC_TIME_MASK, *ticks);
    for (uint32_t i = 0; i < n; i++) {
        *ticks += 7 + i % 5;
        fr_vec_item(v, (uint32_t)*ticks & FLIGHTREC_TIME_MASK,
                    FLIGHTREC_USER(ring), i);
        items++;
        if (strings && i % 10 == 9) {
            size_t before = v->len;
            fr_vec_packed(v, (uint32_t)*ticks & FLIGHTREC_TIME_MASK,
                          FLIGHTREC_USER(5), "hello, scan", 12);
            items += (uint32_t)((v->len - before) /
                                FLIGHTREC_ITEM_SIZE(v->format));
        }
    }
    return pos + items;
}

/* The first pass of read_fd skips timing plain events: what it still finds
 * (losses from positions counted over those events, a string event defined
 * halfway, an error after them) and the records are those of feeding. */
TEST(read_fd_strings_and_losses)
{
    for (int format = 0; format < 2; format++) {
        struct fr_vec v;
        uint64_t ticks[2] = {5000, 5400};
        uint32_t pos[2] = {0, 0};

        fr_vec_init(&v, format ? FLIGHTREC_FORMAT_BE_64
                               : FLIGHTREC_FORMAT_LE_32);
        fr_vec_flightrec_header(&v, NS, 2, 4096, 1, 0);
        for (uint32_t round = 0; round < 3; round++)
            for (uint32_t r = 0; r < 2; r++)
                pos[r] = scan_chunk(&v, r, pos[r], &ticks[r], 300, 0);
        fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, FLIGHTREC_USER(5),
                    FLIGHTREC_EV_EVENT_NAME, "note", 4);
        fr_vec_item(&v, 0, FLIGHTREC_EV_EVENT_KIND, FLIGHTREC_EVENT_STRING);
        pos[1] += 9; /* 9 items of ring 1 never reached the stream */
        for (uint32_t round = 0; round < 3; round++)
            for (uint32_t r = 0; r < 2; r++)
                pos[r] = scan_chunk(&v, r, pos[r], &ticks[r], 200, 1);
        {
            struct tresult fed;
            struct topts o = {.merge = 1};
            tdecode(&fed, v.buf, v.len, &o);
            CHECK_EQ_I(fed.finish_rc, 0);
            CHECK_EQ_U(fed.totals.missing, 9);
            /* Each item of a string counts as an event. */
            CHECK_EQ_U(fed.totals.events,
                       6 * 300 + 6 * 200 +
                           6 * 20 * ((12 + fr_vec_data_bytes(&v) - 1) /
                                     fr_vec_data_bytes(&v)));
            tresult_free(&fed);
        }
        check_read_fd(&v);
        /* A bad ring index after them: the same error, at the same byte. */
        fr_vec_item(&v, 5, FLIGHTREC_EV_PROCESSOR, 1u << 24);
        fr_vec_item(&v, 6, FLIGHTREC_USER(1), 9);
        check_read_fd(&v);
        fr_vec_free(&v);
    }
}

/* Any chunking gives the same records, merged or not, with losses,
 * hold-back, names and a truncated end. */
TEST(chunking_invariance)
{
    struct fr_vec v;

    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_64);
    three_rings(&v);
    fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, 600, FLIGHTREC_EV_EVENT_NAME,
                "name", 8);
    fr_vec_flightrec_chunk(&v, 1, 11, "r", 0, 40, 3, 2);
    fr_vec_item(&v, 100, FLIGHTREC_USER(7), 1);
    fr_vec_uptime(&v, 200, 50000);
    fr_vec_item(&v, 300, FLIGHTREC_USER(7), 2);
    fr_vec_flightrec_chunk(&v, 2, 12, "r", 0, 20, 0, 0);
    fr_vec_item(&v, 100, FLIGHTREC_USER(7), 3);
    fr_vec_u32(&v, 0x1234); /* truncated item */
    for (int merge = 0; merge < 2; merge++) {
        for (uint64_t window = 0; window < 3000; window += 1500) {
            struct tresult whole;
            struct topts o = {.merge = merge, .window = window};
            tdecode(&whole, v.buf, v.len, &o);
            CHECK_EQ_I(whole.finish_rc, FLIGHTREC_ETRUNC);
            CHECK(whole.n > 80);
            for (int ch = 1; ch < 40; ch++) {
                struct tresult other;
                o.chunking = ch;
                tdecode(&other, v.buf, v.len, &o);
                tcompare(&whole, &other);
                tresult_free(&other);
            }
            tresult_free(&whole);
        }
    }
    fr_vec_free(&v);
}

TEST_MAIN()
