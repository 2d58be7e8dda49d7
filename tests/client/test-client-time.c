/* SPDX-License-Identifier: BSD-2-Clause */
/* Decoder: exact times for any frequency and gap, hold-back, clamping. */
#include <stdio.h>
#include <string.h>

#include <flightrec/client.h>

#include "decode-util.h"
#include "stream-vector.h"
#include "test.h"

/* Internal helpers of the library, tested directly. */
#include "../../src/common/muldiv.h"
uint64_t frc_mulhi(uint64_t a, uint64_t b);

#define NS UINT64_C(1000000000)
#define MASK22 ((1u << 22) - 1)

static uint64_t bt_ns(uint64_t bt)
{
    return (bt >> 32) * NS + (((bt & 0xffffffffu) * NS) >> 32);
}

static void v10_header(struct fr_vec *v, uint64_t freq)
{
    fr_vec_item(v, 0, FLIGHTREC_EV_VERSION, 10);
    fr_vec_item(v, 0, FLIGHTREC_EV_PROCESSOR_MAXIMUM, 0);
    fr_vec_item(v, 0, FLIGHTREC_EV_PER_CPU_COUNT, 1024);
    fr_vec_item(v, 0, FLIGHTREC_EV_FREQUENCY, freq);
    fr_vec_item(v, 0, FLIGHTREC_EV_PROCESSOR, 0);
}

static void fr_header(struct fr_vec *v, uint64_t freq)
{
    fr_vec_flightrec_header(v, freq, 1, 1024, 1, 0);
    fr_vec_flightrec_chunk(v, 0, 7, "t", 0, 0, 0, 0);
}

static void decode_all_ways(struct tresult *res, const struct fr_vec *v)
{
    struct tresult other;
    struct topts o = {.chunking = 1};

    tdecode(res, v->buf, v->len, NULL);
    tdecode(&other, v->buf, v->len, &o);
    tcompare(res, &other);
    tresult_free(&other);
    o.chunking = 7;
    tdecode(&other, v->buf, v->len, &o);
    tcompare(res, &other);
    tresult_free(&other);
}

TEST(ticks_to_ns)
{
    static const uint64_t f[] = {1,     1000,        999983,     1000000,
                                 1u << 20, 2399987651u, 3000000000u,
                                 UINT64_C(10000000000), UINT64_C(1) << 40};
    uint64_t x = 88172645463325252u;

    CHECK_EQ_U(flightrec_ticks_to_ns(3000000000u, 3000000000u), NS);
    CHECK_EQ_U(flightrec_ticks_to_ns(1, 3), 333333333);
    CHECK_EQ_U(flightrec_ticks_to_ns(UINT64_MAX, NS), UINT64_MAX);
    CHECK_EQ_U(flightrec_ticks_to_ns(UINT64_MAX, UINT64_C(10000000000)),
               UINT64_MAX / 10);
    CHECK_EQ_U(flightrec_ticks_to_ns(UINT64_MAX, 1000), UINT64_MAX);
    CHECK_EQ_U(flightrec_ticks_to_ns(5, 0), 0);
    /* 5 hours of a 3 GHz counter: 5.4e13 ticks, product > 2^64 */
    CHECK_EQ_U(flightrec_ticks_to_ns(UINT64_C(54000000000000), 3000000000u),
               UINT64_C(18000) * NS);
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t fr = f[i % 9];
        uint64_t t = x >> (i % 64);
        CHECK_EQ_U(flightrec_ticks_to_ns(t, fr),
                   fr_muldiv_portable(t, NS, fr));
#ifdef __SIZEOF_INT128__
        /* the 64-bit fallback of the high product half */
        CHECK_EQ_U(frc_mulhi(x, t * 0x9e3779b97f4a7c15u),
                   (uint64_t)(((unsigned __int128)x *
                               (t * 0x9e3779b97f4a7c15u)) >> 64));
#endif
    }
}

/* The RTEMS client gets these wrong (64-bit overflow beyond 2 s). */
TEST(rtems_1mhz_long_gap)
{
    struct fr_vec v;
    struct tresult res;
    uint64_t bt = UINT64_C(10) << 32;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    v10_header(&v, 1000000);
    fr_vec_uptime(&v, 0, bt);
    fr_vec_item(&v, 2500000, FLIGHTREC_USER(0), 0);
    fr_vec_item(&v, 3000000, FLIGHTREC_USER(1), 0);
    decode_all_ways(&res, &v);
    CHECK_EQ_I(res.finish_rc, 0);
    CHECK_EQ_U(res.n, 2);
    CHECK_EQ_U(res.recs[0].time_ns, UINT64_C(12500000000));
    CHECK_EQ_U(res.recs[1].time_ns, UINT64_C(13000000000));
    CHECK_EQ_U(res.recs[0].flags | res.recs[1].flags, 0);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* 3 s of items held back before the first sync, at 100 MHz; timed
 * backwards step by step (the RTEMS client puts item 0 at 9.03 s). */
TEST(held_100mhz_3s)
{
    for (int rtems = 0; rtems < 2; rtems++) {
        struct fr_vec v;
        struct tresult res;
        uint64_t f = 100000000u, step = 1000000; /* 10 ms */
        uint64_t bt = (UINT64_C(10) << 32) + UINT64_C(128849019); /* 10.03s */
        uint64_t tu = UINT64_C(1003000000);                    /* ticks */
        uint32_t field0 = 12345;

        fr_vec_init(&v, rtems ? FLIGHTREC_FORMAT_BE_32
                              : FLIGHTREC_FORMAT_LE_64);
        if (rtems)
            v10_header(&v, f);
        else
            fr_header(&v, f);
        for (uint32_t i = 0; i < 300; i++)
            fr_vec_item(&v, (field0 + i * step) & MASK22, FLIGHTREC_USER(0),
                        i);
        fr_vec_uptime(&v, (field0 + 300 * step) & MASK22, rtems ? bt : tu);
        fr_vec_item(&v, (field0 + 300 * step + 5) & MASK22, FLIGHTREC_USER(1),
                    300);
        decode_all_ways(&res, &v);
        CHECK_EQ_I(res.finish_rc, 0);
        CHECK_EQ_U(res.n, 301);
        for (uint32_t i = 0; i < 300; i++) {
            uint64_t want = rtems ? bt_ns(bt) - (300 - i) * 10000000u
                                  : (tu - (300 - i) * step) * 10;
            CHECK_EQ_U(res.recs[i].data, i);
            CHECK_EQ_U(res.recs[i].time_ns, want);
            CHECK_EQ_U(res.recs[i].flags, 0);
        }
        CHECK_EQ_U(res.recs[300].time_ns,
                   rtems ? bt_ns(bt) + 50 : (tu + 5) * 10);
        CHECK_EQ_U(res.recs[0].time_ns, 7030000000u);
        tresult_free(&res);
        fr_vec_free(&v);
    }
}

/* flightrec chains at several frequencies, exact to the nanosecond. */
static void chain(uint32_t format, uint64_t f, uint64_t tu, uint64_t step,
                  int n)
{
    struct fr_vec v;
    struct tresult res;
    uint32_t field = 777;

    fr_vec_init(&v, format);
    fr_header(&v, f);
    fr_vec_uptime(&v, field, tu);
    for (int i = 1; i <= n; i++)
        fr_vec_item(&v, (field + (uint32_t)(i * step)) & MASK22,
                    FLIGHTREC_USER(0), (uint64_t)i);
    decode_all_ways(&res, &v);
    CHECK_EQ_I(res.finish_rc, 0);
    CHECK_EQ_U(res.n, (size_t)n);
    for (int i = 1; i <= n; i++) {
        CHECK_EQ_U(res.recs[i - 1].time_ns,
                   fr_muldiv_portable(tu + (uint64_t)i * step, NS, f));
        CHECK_EQ_U(res.recs[i - 1].flags, 0);
    }
    CHECK_EQ_U(res.info.frequency, f);
    tresult_free(&res);
    fr_vec_free(&v);
}

TEST(freq_1khz)
{
    /* 1 s per step; 2^21 ticks is 35 minutes at 1 kHz */
    chain(FLIGHTREC_FORMAT_LE_32, 1000, 5, 1000, 10);
    chain(FLIGHTREC_FORMAT_BE_64, 1000, UINT64_C(123456789), 2097151, 20);
}

TEST(freq_1mhz)
{
    /* items 1 s, 2 s, ... 20 s after the anchor, chained */
    chain(FLIGHTREC_FORMAT_LE_32, 1000000, 3, 1000000, 20);
    chain(FLIGHTREC_FORMAT_BE_32, 999983, 77, 2000000, 50);
}

TEST(freq_10ghz)
{
    /* 10 GHz needs FREQUENCY_HIGH on 32-bit formats */
    chain(FLIGHTREC_FORMAT_LE_32, UINT64_C(10000000000),
          UINT64_C(30000000001), 1000001, 3000);
    chain(FLIGHTREC_FORMAT_BE_64, UINT64_C(10000000000), 0, 2097151, 100);
    chain(FLIGHTREC_FORMAT_LE_64, 2399987651u, UINT64_C(1) << 50, 1234567,
          1000);
}

/* Syncs hours apart: 5 hours of a 3 GHz counter, and RTEMS 32.32. */
TEST(hours_gap)
{
    struct fr_vec v;
    struct tresult res;
    uint64_t f = 3000000000u, t5h = UINT64_C(54000000000000);
    uint64_t bt = (UINT64_C(18000) << 32) | 0x40000000u; /* 18000.25 s */

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_header(&v, f);
    fr_vec_uptime(&v, 100, 0);
    fr_vec_item(&v, 200, FLIGHTREC_USER(0), 0);
    fr_vec_uptime(&v, 300, t5h);
    fr_vec_item(&v, 400, FLIGHTREC_USER(0), 1);
    fr_vec_uptime(&v, 500, t5h * 2 + 1);
    fr_vec_item(&v, 800, FLIGHTREC_USER(0), 2);
    decode_all_ways(&res, &v);
    CHECK_EQ_U(res.n, 3);
    CHECK_EQ_U(res.recs[0].time_ns, 33);
    CHECK_EQ_U(res.recs[1].time_ns, UINT64_C(18000) * NS + 33);
    CHECK_EQ_U(res.recs[2].time_ns,
               fr_muldiv_portable(t5h * 2 + 301, NS, f));
    tresult_free(&res);
    fr_vec_free(&v);

    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_64);
    v10_header(&v, 1000000);
    fr_vec_uptime(&v, 100, bt);
    fr_vec_item(&v, 200, FLIGHTREC_USER(0), 0);
    decode_all_ways(&res, &v);
    CHECK_EQ_U(res.n, 1);
    CHECK_EQ_U(res.recs[0].time_ns, UINT64_C(18000250100000));
    tresult_free(&res);
    fr_vec_free(&v);
}

/* The 22-bit field wraps between items. */
TEST(field_wrap)
{
    struct fr_vec v;
    struct tresult res;
    uint64_t tu = UINT64_C(1000000000000);

    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_32);
    fr_header(&v, NS);
    fr_vec_uptime(&v, 4194000, tu);
    fr_vec_item(&v, 4194100, FLIGHTREC_USER(0), 0);
    fr_vec_item(&v, 96, FLIGHTREC_USER(0), 0);     /* wrapped: +300 */
    fr_vec_item(&v, 1096, FLIGHTREC_USER(0), 0);
    for (int i = 1; i <= 8; i++) /* eight more wraps, 2^21 - 1 at a time */
        fr_vec_item(&v, (1096 + i * 2097151u) & MASK22, FLIGHTREC_USER(0), 0);
    decode_all_ways(&res, &v);
    CHECK_EQ_U(res.n, 11);
    CHECK_EQ_U(res.recs[0].time_ns, tu + 100);
    CHECK_EQ_U(res.recs[1].time_ns, tu + 400);
    CHECK_EQ_U(res.recs[2].time_ns, tu + 1400);
    CHECK_EQ_U(res.recs[10].time_ns, tu + 1400 + 8 * 2097151u);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* flightrec: a step >= 2^21 is a small backwards step: clamp, flag. RTEMS:
 * the same field difference is a long forward step. */
TEST(backwards_clamp)
{
    for (int rtems = 0; rtems < 2; rtems++) {
        struct fr_vec v;
        struct tresult res;

        fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
        if (rtems)
            v10_header(&v, NS);
        else
            fr_header(&v, NS);
        fr_vec_uptime(&v, 1000, rtems ? UINT64_C(1) << 32 : NS);
        fr_vec_item(&v, 1010, FLIGHTREC_USER(0), 0);
        fr_vec_item(&v, 1005, FLIGHTREC_USER(0), 1);
        fr_vec_item(&v, 1020, FLIGHTREC_USER(0), 2);
        decode_all_ways(&res, &v);
        CHECK_EQ_U(res.n, 3);
        CHECK_EQ_U(res.recs[0].time_ns, NS + 10);
        if (rtems) {
            CHECK_EQ_U(res.recs[1].time_ns, NS + 10 + MASK22 - 4);
            CHECK_EQ_U(res.recs[1].flags, 0);
            CHECK_EQ_U(res.recs[2].time_ns, NS + 10 + MASK22 + 11);
        } else {
            CHECK_EQ_U(res.recs[1].time_ns, NS + 10);
            CHECK_EQ_U(res.recs[1].flags, FLIGHTREC_RECORD_CLAMPED);
            CHECK_EQ_U(res.recs[2].time_ns, NS + 20);
            CHECK_EQ_U(res.recs[2].flags, 0);
        }
        tresult_free(&res);
        fr_vec_free(&v);
    }
}

/* A sync that jumps backwards: later items are clamped until time
 * catches up; per ring time never decreases. */
TEST(sync_backwards)
{
    struct fr_vec v;
    struct tresult res;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_header(&v, NS);
    fr_vec_uptime(&v, 0, 1000);
    fr_vec_item(&v, 500, FLIGHTREC_USER(0), 0);  /* 1500 */
    fr_vec_uptime(&v, 600, 1200);                /* behind the chain */
    fr_vec_item(&v, 700, FLIGHTREC_USER(0), 1);  /* 1300 -> 1500 */
    fr_vec_item(&v, 1000, FLIGHTREC_USER(0), 2); /* 1600 */
    decode_all_ways(&res, &v);
    CHECK_EQ_U(res.n, 3);
    CHECK_EQ_U(res.recs[1].time_ns, 1500);
    CHECK_EQ_U(res.recs[1].flags, FLIGHTREC_RECORD_CLAMPED);
    CHECK_EQ_U(res.recs[2].time_ns, 1600);
    CHECK_EQ_U(res.recs[2].flags, 0);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* No sync ever reaches them: delivered at finish, UNTIMED, not dropped.
 * An UPTIME_HIGH without its LOW is no sync. */
TEST(untimed)
{
    struct fr_vec v;
    struct tresult res;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_header(&v, NS);
    fr_vec_item(&v, 10, FLIGHTREC_USER(0), 0);
    fr_vec_item(&v, 20, FLIGHTREC_EV_UPTIME_HIGH, 5);
    fr_vec_item(&v, 30, FLIGHTREC_USER(0), 1);
    fr_vec_item(&v, 40, FLIGHTREC_EV_UPTIME_LOW, 5);
    fr_vec_item(&v, 50, FLIGHTREC_USER(0), 2);
    fr_vec_item(&v, 60, FLIGHTREC_EV_UPTIME_HIGH, 0);
    decode_all_ways(&res, &v);
    CHECK_EQ_I(res.finish_rc, 0);
    CHECK_EQ_U(res.n, 3);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_U(res.recs[i].flags, FLIGHTREC_RECORD_UNTIMED);
        CHECK_EQ_U(res.recs[i].time_ns, 0);
        CHECK_EQ_U(res.recs[i].data, (uint64_t)i);
    }
    CHECK_EQ_U(res.totals.untimed, 3);
    CHECK_EQ_U(res.totals.events, 3);
    tresult_free(&res);
    fr_vec_free(&v);
}

/* Hold-back is bounded: the 2^22 + 1st held item of a ring is an error;
 * what was decoded is still delivered (untimed). */
TEST(hold_limit)
{
    struct fr_vec v;
    struct tresult res;
    size_t at;
    char msg[160];

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_header(&v, NS);
    for (uint32_t i = 0; i < (1u << 22); i++)
        fr_vec_item(&v, i & 1023, FLIGHTREC_USER(0), i);
    at = v.len;
    fr_vec_item(&v, 5, FLIGHTREC_USER(0), 0);
    tdecode(&res, v.buf, v.len, NULL);
    snprintf(msg, sizeof(msg),
             "byte %zu: ring 0: too many items held back (limit 4194304 per "
             "ring, 16777216 in all)", at);
    CHECK_EQ_I(res.finish_rc, FLIGHTREC_ECOUNT);
    CHECK_EQ_S(res.message, msg);
    CHECK_EQ_U(res.n, 1u << 22);
    CHECK_EQ_U(res.totals.untimed, 1u << 22);
    tresult_free(&res);
    fr_vec_free(&v);
}

TEST_MAIN()
