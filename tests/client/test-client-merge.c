/* SPDX-License-Identifier: BSD-2-Clause */
/* Decoder: the windowed merge gives the same records, in the same order
 * and with the same marks, however the stream is cut into feeds. */
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

TEST_MAIN()
