/* SPDX-License-Identifier: BSD-2-Clause */
/* Decoder: formats, versions, header facts, names, errors, truncation. */
#include <stdio.h>
#include <string.h>

#include <flightrec/client.h>

#include "decode-util.h"
#include "stream-vector.h"
#include "test.h"

static const uint32_t formats[4] = {
    FLIGHTREC_FORMAT_LE_32, FLIGHTREC_FORMAT_LE_64, FLIGHTREC_FORMAT_BE_32,
    FLIGHTREC_FORMAT_BE_64};

/* Items of one id carrying a string, packed like names (info strings). */
static void packed(struct fr_vec *v, uint32_t event, const char *s,
                   size_t bytes)
{
    size_t per = fr_vec_data_bytes(v), len = strlen(s);
    for (size_t at = 0; at < bytes; at += per) {
        uint64_t w = 0;
        for (size_t i = 0; i < per; i++)
            if (at + i < len)
                w |= (uint64_t)(unsigned char)s[at + i] << (8 * i);
        fr_vec_item(v, 0, event, w);
    }
}

TEST(flightrec_formats)
{
    for (int f = 0; f < 4; f++) {
        struct fr_vec v;
        struct tresult res;
        struct topts o = {.keep = 1};
        int wide;
        size_t first;

        fr_vec_init(&v, formats[f]);
        wide = fr_vec_data_bytes(&v) == 8;
        fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42,
                                UINT64_C(1234567890123456789));
        fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
        fr_vec_uptime(&v, 100, 5000);
        first = v.len;
        fr_vec_item(&v, 110, FLIGHTREC_USER(1), UINT64_C(0x1122334455667788));
        fr_vec_item(&v, 130, FLIGHTREC_EV_MUTEX_UNLOCK, 7);
        tdecode(&res, v.buf, v.len, &o);
        CHECK_EQ_I(res.finish_rc, 0);
        CHECK_EQ_S(res.message, "");
        CHECK_EQ_U(res.n, 2);
        CHECK_EQ_U(res.recs[0].type, FLIGHTREC_RECORD_EVENT);
        CHECK_EQ_U(res.recs[0].event, FLIGHTREC_USER(1));
        CHECK_EQ_U(res.recs[0].data, wide ? UINT64_C(0x1122334455667788)
                                          : UINT64_C(0x55667788));
        CHECK_EQ_U(res.recs[0].time_ns, 5010);
        CHECK_EQ_U(res.recs[0].offset, first);
        CHECK_EQ_U(res.recs[0].flags, 0);
        CHECK_EQ_I(res.recs[0].thread_id, 100);
        CHECK_EQ_U(res.recs[1].event, FLIGHTREC_EV_MUTEX_UNLOCK);
        CHECK_EQ_U(res.recs[1].time_ns, 5030);
        CHECK_EQ_U(res.info.format, formats[f]);
        CHECK_EQ_U(res.info.kind, FLIGHTREC_STREAM_FLIGHTREC);
        CHECK_EQ_U(res.info.version, FLIGHTREC_STREAM_VERSION_1);
        CHECK_EQ_U(res.info.frequency, 1000000000u);
        CHECK_EQ_U(res.info.items_per_ring, 1024);
        CHECK_EQ_U(res.info.ring_count, 1);
        CHECK_EQ_I(res.info.process_id, 42);
        CHECK_EQ_I(res.info.has_realtime, 1);
        CHECK_EQ_U(res.info.realtime_ns_at_zero,
                   UINT64_C(1234567890123456789));
        CHECK_EQ_U(res.totals.events, 2);
        CHECK_EQ_U(res.totals.bytes, v.len);
        CHECK_EQ_U(res.totals.items, (v.len - 8) / (wide ? 12 : 8));
        CHECK_EQ_U(flightrec_client_ring_count(res.client), 1);
        const struct flightrec_ring_info *ri =
            flightrec_client_ring(res.client, 0);
        CHECK(ri != NULL);
        CHECK(flightrec_client_ring(res.client, 1) == NULL);
        CHECK_EQ_S(ri->thread_name, "main");
        CHECK_EQ_I(ri->thread_id, 100);
        CHECK_EQ_U(ri->events, 2);
        CHECK_EQ_U(ri->first_ns, 5010);
        CHECK_EQ_U(ri->last_ns, 5030);
        CHECK_EQ_S(flightrec_client_thread_name(res.client, 100), "main");
        CHECK(flightrec_client_thread_name(res.client, 101) == NULL);
        CHECK_EQ_S(flightrec_client_event_name(res.client, 351),
                   "MUTEX_LOCK_ENTRY");
        tresult_free(&res);
        fr_vec_free(&v);
    }
}

/* RTEMS v10: header with info strings, thread names, 32.32 uptime. */
TEST(rtems_v10_formats)
{
    for (int f = 0; f < 4; f++) {
        struct fr_vec v;
        struct tresult res;
        struct topts o = {.keep = 1};
        uint64_t bt = (UINT64_C(2) << 32) | UINT64_C(0x80000000); /* 2.5 s */

        fr_vec_init(&v, formats[f]);
        fr_vec_item(&v, 0, FLIGHTREC_EV_VERSION, 10);
        fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR_MAXIMUM, 1);
        fr_vec_item(&v, 0, FLIGHTREC_EV_PER_CPU_COUNT, 512);
        fr_vec_item(&v, 0, FLIGHTREC_EV_FREQUENCY, 1000000);
        packed(&v, FLIGHTREC_EV_ARCH, "sparc", 8);
        packed(&v, FLIGHTREC_EV_BSP, "erc32", 8);
        packed(&v, FLIGHTREC_EV_MULTILIB, "v8", 8);
        packed(&v, FLIGHTREC_EV_TOOLS, "13.2.0 20230727", 16);
        fr_vec_name(&v, FLIGHTREC_EV_THREAD_ID, 0x0a010001,
                    FLIGHTREC_EV_THREAD_NAME, "IDLE", 8);
        fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, 1);
        fr_vec_uptime(&v, 1000, bt);
        fr_vec_item(&v, 1500, FLIGHTREC_EV_THREAD_SWITCH_IN, 0x0a010001);
        fr_vec_item(&v, 1500 + 4000000, FLIGHTREC_USER(0), 5);
        tdecode(&res, v.buf, v.len, &o);
        CHECK_EQ_I(res.finish_rc, 0);
        CHECK_EQ_U(res.info.kind, FLIGHTREC_STREAM_RTEMS_V10);
        CHECK_EQ_U(res.info.ring_count, 2);
        CHECK_EQ_U(res.info.items_per_ring, 512);
        CHECK_EQ_S(res.info.arch, "sparc");
        CHECK_EQ_S(res.info.bsp, "erc32");
        CHECK_EQ_S(res.info.tools, "13.2.0 20230727");
        CHECK_EQ_I(res.info.has_realtime, 0);
        CHECK_EQ_U(res.n, 2);
        CHECK_EQ_U(res.recs[0].ring, 1);
        CHECK_EQ_U(res.recs[0].time_ns, UINT64_C(2500500000));
        /* an unsigned step of 4,000,000 ticks (4 s at 1 MHz) */
        CHECK_EQ_U(res.recs[1].time_ns, UINT64_C(6500500000));
        CHECK_EQ_S(flightrec_client_thread_name(res.client, 0x0a010001),
                   "IDLE");
        CHECK_EQ_S(flightrec_client_event_name(res.client, 322),
                   "UPTIME_HIGH");
        CHECK_EQ_S(flightrec_client_event_name(res.client, 342),
                   "SYSTEM_342");
        tresult_free(&res);
        fr_vec_free(&v);
    }
}

/* RTEMS v1 in the 2018 patch's numbering (FLIGHTREC_V1_*): TAIL/HEAD chunks,
 * names by that table. */
TEST(rtems_v1_formats)
{
    for (int f = 0; f < 4; f++) {
        struct fr_vec v;
        struct tresult res;
        struct topts o = {.keep = 1};

        fr_vec_init(&v, formats[f]);
        fr_vec_item(&v, 0, FLIGHTREC_V1_VERSION, 1);
        fr_vec_item(&v, 0, FLIGHTREC_V1_COUNT, 16);
        fr_vec_item(&v, 0, FLIGHTREC_V1_FREQUENCY, 1000000);
        fr_vec_item(&v, 0, FLIGHTREC_V1_PROCESSOR, 0);
        fr_vec_item(&v, 0, FLIGHTREC_V1_TAIL, 0);
        fr_vec_item(&v, 0, FLIGHTREC_V1_HEAD, 5);
        fr_vec_item(&v, 10, FLIGHTREC_V1_UPTIME_LOW, 0);
        fr_vec_item(&v, 10, FLIGHTREC_V1_UPTIME_HIGH, 1);
        fr_vec_item(&v, 20, 2, 77);
        fr_vec_item(&v, 30, FLIGHTREC_V1_USER_0 + 3, 78);
        fr_vec_item(&v, 40, 4, 79);
        tdecode(&res, v.buf, v.len, &o);
        CHECK_EQ_I(res.finish_rc, 0);
        CHECK_EQ_U(res.info.kind, FLIGHTREC_STREAM_RTEMS_V1_SEED);
        CHECK_EQ_U(res.info.items_per_ring, 16);
        CHECK_EQ_U(res.info.frequency, 1000000);
        CHECK_EQ_U(res.n, 3);
        CHECK_EQ_U(res.recs[0].event, 2);
        CHECK_EQ_U(res.recs[0].time_ns, UINT64_C(1000010000));
        CHECK_EQ_U(res.recs[1].time_ns, UINT64_C(1000020000));
        CHECK_EQ_U(res.recs[2].time_ns, UINT64_C(1000030000));
        CHECK_EQ_U(res.totals.overflow, 0);
        CHECK_EQ_S(flightrec_client_event_name(res.client, 2), "ACCEPT");
        CHECK_EQ_S(flightrec_client_event_name(res.client, 11), "FREQUENCY");
        CHECK_EQ_S(flightrec_client_event_name(res.client, 515), "USER_3");
        CHECK_EQ_I(flightrec_client_event_id(res.client, "HEAD"), 15);
        CHECK_EQ_I(flightrec_client_event_id(res.client, "THREAD_ID"), -1);
        tresult_free(&res);
        fr_vec_free(&v);
    }
}

TEST(event_names)
{
    struct fr_vec v;
    struct tresult res;
    struct topts o = {.keep = 1};
    const char *longname =
        "a_very_long_event_name_that_goes_on_and_on_beyond_sixty_four_bytes_"
        "of_text";
    char trunc[64];

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 1, 0);
    fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, 600, FLIGHTREC_EV_EVENT_NAME,
                "rx_packet", 12);
    fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, 601, FLIGHTREC_EV_EVENT_NAME,
                longname, 80);
    fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, 5000, FLIGHTREC_EV_EVENT_NAME,
                "ignored", 8);
    tdecode(&res, v.buf, v.len, &o);
    CHECK_EQ_I(res.finish_rc, 0);
    CHECK_EQ_S(flightrec_client_event_name(res.client, 600), "rx_packet");
    memcpy(trunc, longname, 63);
    trunc[63] = '\0';
    CHECK_EQ_S(flightrec_client_event_name(res.client, 601), trunc);
    CHECK_EQ_S(flightrec_client_event_name(res.client, 602), "USER_90");
    CHECK_EQ_S(flightrec_client_event_name(res.client, 400), "SYSTEM_400");
    CHECK_EQ_S(flightrec_client_event_name(res.client, 347),
               "RING_POSITION");
    CHECK_EQ_I(flightrec_client_event_id(res.client, "rx_packet"), 600);
    CHECK_EQ_I(flightrec_client_event_id(res.client, "USER_5"), 517);
    CHECK_EQ_I(flightrec_client_event_id(res.client, "USER_512"), -1);
    CHECK_EQ_I(flightrec_client_event_id(res.client, "SYSTEM_400"), 400);
    CHECK_EQ_I(flightrec_client_event_id(res.client, "THREAD_SWITCH_IN"),
               305);
    CHECK_EQ_I(flightrec_client_event_id(res.client, "nope"), -1);
    tresult_free(&res);
    fr_vec_free(&v);
}

static void expect_error(const void *buf, size_t len, int code,
                         const char *message, size_t events)
{
    struct tresult res;
    struct tresult one;
    struct topts o = {.chunking = 1};

    tdecode(&res, buf, len, NULL);
    CHECK_EQ_I(res.finish_rc, code);
    CHECK_EQ_S(res.message, message);
    CHECK_EQ_U(res.totals.events, events);
    tdecode(&one, buf, len, &o);
    tcompare(&res, &one);
    tresult_free(&res);
    tresult_free(&one);
}

/* Stream starts for bad_input rows: what precedes the row's items. */
static void bad_magic_start(struct fr_vec *v)
{
    v->len = 4;
    fr_vec_u32(v, 0x12345678);
}

/* A valid header and chunk with two records: they are delivered before
 * the error. */
static void two_records_start(struct fr_vec *v)
{
    fr_vec_flightrec_header(v, 1000000000u, 1, 1024, 1, 0);
    fr_vec_flightrec_chunk(v, 0, 1, "t", 0, 0, 0, 0);
    fr_vec_uptime(v, 0, 0);
    fr_vec_item(v, 1, FLIGHTREC_USER(0), 0);
    fr_vec_item(v, 2, FLIGHTREC_USER(0), 0);
}

struct bad_item {
    uint32_t time, event;
    uint64_t data;
};

/* Each row: a stream (format word, an optional start, items), the error
 * code, the message after "byte N: " (N = at, or where the items begin
 * when at is -1) and the events delivered before it. */
TEST(bad_input)
{
    static const struct {
        uint32_t format;
        void (*start)(struct fr_vec *v);
        struct bad_item items[4];
        size_t n_items;
        int code;
        long at;
        const char *message;
        size_t events;
    } cases[] = {
        { FLIGHTREC_FORMAT_LE_32, bad_magic_start, { { 0 } }, 0,
          FLIGHTREC_EBADMAGIC, 4, "bad magic 0x12345678", 0 },
        { 0x55555555, NULL, { { 0 } }, 0,
          FLIGHTREC_EFORMAT, 0, "unknown format word 0x55555555", 0 },
        { FLIGHTREC_FORMAT_BE_64, NULL,
          { { 0, FLIGHTREC_EV_VERSION, 11 } }, 1,
          FLIGHTREC_EVERSION, 8, "unsupported stream version 11", 0 },
        { FLIGHTREC_FORMAT_LE_32, NULL,
          { { 0, FLIGHTREC_EV_VERSION, 0x46520003 } }, 1,
          FLIGHTREC_EVERSION, 8, "unsupported stream version 0x46520003", 0 },
        { FLIGHTREC_FORMAT_LE_32, NULL,
          { { 0, FLIGHTREC_EV_FREQUENCY, 1000 } }, 1,
          FLIGHTREC_ESTREAM, 8, "expected the VERSION item, got event 4", 0 },
        { FLIGHTREC_FORMAT_LE_32, two_records_start,
          { { 0, FLIGHTREC_EV_PROCESSOR, 99999999 },
            { 3, FLIGHTREC_USER(0), 0 } }, 2,
          FLIGHTREC_ERING, -1, "ring index 99999999 out of range", 2 },
        { FLIGHTREC_FORMAT_LE_32, NULL,
          { { 0, FLIGHTREC_EV_VERSION, 10 },
            { 0, FLIGHTREC_EV_PROCESSOR_MAXIMUM, 3 },
            { 0, FLIGHTREC_EV_PROCESSOR, 4 } }, 3,
          FLIGHTREC_ERING, 24, "ring index 4 out of range", 0 },
        { FLIGHTREC_FORMAT_LE_32, NULL,
          { { 0, FLIGHTREC_EV_VERSION, 10 },
            { 0, FLIGHTREC_EV_PER_CPU_COUNT, 0 } }, 2,
          FLIGHTREC_ECOUNT, 16, "absurd items per ring 0", 0 },
        { FLIGHTREC_FORMAT_LE_32, NULL,
          { { 0, FLIGHTREC_EV_VERSION, 10 },
            { 0, FLIGHTREC_EV_PROCESSOR, 0 },
            { 5, FLIGHTREC_USER(0), 0 } }, 3,
          FLIGHTREC_ESTREAM, 24, "timed item before FREQUENCY", 0 },
        { FLIGHTREC_FORMAT_LE_32, NULL,
          { { 0, FLIGHTREC_EV_VERSION, 10 },
            { 0, FLIGHTREC_EV_FREQUENCY, 1000 },
            { 5, FLIGHTREC_USER(0), 0 } }, 3,
          FLIGHTREC_ESTREAM, 24,
          "item USER_0 outside a chunk (no PROCESSOR item before it)", 0 },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fr_vec v;
        char msg[160];

        fr_vec_init(&v, cases[i].format);
        if (cases[i].start != NULL)
            cases[i].start(&v);
        size_t at = cases[i].at >= 0 ? (size_t)cases[i].at : v.len;
        for (size_t k = 0; k < cases[i].n_items; k++)
            fr_vec_item(&v, cases[i].items[k].time, cases[i].items[k].event,
                        cases[i].items[k].data);
        snprintf(msg, sizeof msg, "byte %zu: %s", at, cases[i].message);
        expect_error(v.buf, v.len, cases[i].code, msg, cases[i].events);
        fr_vec_free(&v);
    }
    expect_error("", 0, FLIGHTREC_ETRUNC,
                 "byte 0: stream ends inside the header (0 of 8 bytes)", 0);
}

/* Cut a small stream at every byte: what precedes the cut is delivered,
 * the error names the incomplete item. */
TEST(truncate_everywhere)
{
    for (int f = 0; f < 4; f++) {
        struct fr_vec v;
        struct tresult full;
        size_t size;

        fr_vec_init(&v, formats[f]);
        size = fr_vec_data_bytes(&v) + 4;
        fr_vec_flightrec_header(&v, 1000000000u, 2, 1024, 1, 0);
        fr_vec_flightrec_chunk(&v, 0, 1, "a", 0, 0, 0, 0);
        fr_vec_item(&v, 5, FLIGHTREC_USER(1), 1);
        fr_vec_uptime(&v, 10, 1000);
        fr_vec_item(&v, 20, FLIGHTREC_USER(2), 2);
        fr_vec_flightrec_chunk(&v, 1, 2, "b", 0, 0, 0, 0);
        fr_vec_uptime(&v, 10, 2000);
        fr_vec_item(&v, 30, FLIGHTREC_USER(3), 3);
        fr_vec_item(&v, 40, FLIGHTREC_USER(4), 4);
        tdecode(&full, v.buf, v.len, NULL);
        CHECK_EQ_I(full.finish_rc, 0);
        CHECK_EQ_U(full.n, 4);
        for (size_t len = 0; len <= v.len; len++) {
            struct tresult cut;
            char msg[160];
            size_t want = 0, k = 0;

            tdecode(&cut, v.buf, len, NULL);
            if (len < 8) {
                snprintf(msg, sizeof(msg),
                         "byte 0: stream ends inside the header (%zu of 8 "
                         "bytes)", len);
                CHECK_EQ_I(cut.finish_rc, FLIGHTREC_ETRUNC);
                CHECK_EQ_S(cut.message, msg);
            } else if (len == 8) {
                CHECK_EQ_I(cut.finish_rc, FLIGHTREC_ETRUNC);
                CHECK_EQ_S(cut.message,
                           "byte 8: stream ends before the VERSION item");
            } else if ((len - 8) % size != 0) {
                size_t part = (len - 8) % size;
                snprintf(msg, sizeof(msg),
                         "byte %zu: stream ends inside an item (%zu of %zu "
                         "bytes)", len - part, part, size);
                CHECK_EQ_I(cut.finish_rc, FLIGHTREC_ETRUNC);
                CHECK_EQ_S(cut.message, msg);
                CHECK_EQ_U(cut.error_offset, len - part);
            } else {
                CHECK_EQ_I(cut.finish_rc, 0);
            }
            for (size_t i = 0; i < full.n; i++)
                if (full.recs[i].offset + size <= len)
                    want++;
            CHECK_EQ_U(cut.n, want);
            for (size_t i = 0; i < cut.n; i++) {
                /* same items, in the same order */
                while (full.recs[k].offset + size > len)
                    k++;
                CHECK_EQ_U(cut.recs[i].offset, full.recs[k].offset);
                CHECK_EQ_U(cut.recs[i].event, full.recs[k].event);
                CHECK_EQ_U(cut.recs[i].data, full.recs[k].data);
                k++;
            }
            tresult_free(&cut);
        }
        tresult_free(&full);
        fr_vec_free(&v);
    }
}

static int stop_cb(const struct flightrec_record *r, void *arg)
{
    (void)r;
    return ++*(int *)arg >= 2;
}

TEST(api_misuse)
{
    struct flightrec_client_options o = {0};
    flightrec_client *c = (flightrec_client *)1;
    struct fr_vec v;
    int count = 0;

    CHECK_EQ_I(flightrec_client_create(&c, &o), FLIGHTREC_EINVAL_CONFIG);
    CHECK(c == NULL);
    CHECK_EQ_I(flightrec_client_create(&c, NULL), FLIGHTREC_EINVAL_CONFIG);
    flightrec_client_destroy(NULL);

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 1, 0);
    fr_vec_flightrec_chunk(&v, 0, 1, "a", 0, 0, 0, 0);
    fr_vec_uptime(&v, 10, 1000);
    for (int i = 0; i < 5; i++)
        fr_vec_item(&v, 20 + i, FLIGHTREC_USER(2), 2);
    o.on_record = stop_cb;
    o.arg = &count;
    CHECK_EQ_I(flightrec_client_create(&c, &o), 0);
    CHECK_EQ_I(flightrec_client_feed(c, v.buf, v.len), FLIGHTREC_ECALLBACK);
    CHECK_EQ_I(flightrec_client_feed(c, v.buf, v.len), FLIGHTREC_ECALLBACK);
    CHECK_EQ_I(flightrec_client_finish(c), FLIGHTREC_ECALLBACK);
    CHECK_EQ_I(count, 2);
    flightrec_client_destroy(c);

    o.arg = &count;
    count = -100;
    CHECK_EQ_I(flightrec_client_create(&c, &o), 0);
    CHECK_EQ_I(flightrec_client_feed(c, v.buf, v.len), 0);
    CHECK_EQ_I(flightrec_client_finish(c), 0);
    CHECK_EQ_I(flightrec_client_finish(c), 0);
    CHECK_EQ_I(flightrec_client_feed(c, v.buf, 1), FLIGHTREC_ESTATE);
    CHECK_EQ_I(count, -95);
    flightrec_client_destroy(c);
    fr_vec_free(&v);
}

TEST_MAIN()
