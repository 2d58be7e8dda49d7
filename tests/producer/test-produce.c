/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Recording with a counter the test drives (FLIGHTREC_PORT_COUNTER), so
 * that every time field, sync item and position has one exact expected
 * value.  Covers: produce, produce_2, produce_n, prepare/add/commit, sync
 * pairs (first event, gaps, quarter ring), the filter, start/stop, event
 * names, flight overflow, discard drops, drain, rewind, configuration.
 */
#include "producer-test.h"

#include <errno.h>

#include <unistd.h>

static uint64_t test_now;

uint64_t flightrec_port_counter(void)
{
    return test_now;
}

uint64_t flightrec_port_counter_frequency(void)
{
    return 1000000000u;
}

#define T0 5000u
#define MASK22 ((1u << 22) - 1u)

static int is_sync(const struct sp_item *item)
{
    return item->event == FLIGHTREC_EV_UPTIME_LOW ||
           item->event == FLIGHTREC_EV_UPTIME_HIGH;
}

static void start_clock(uint32_t items, int mode)
{
    test_now = T0;
    setup_or_die(items, mode);
}

TEST(first_event_writes_sync_pair)
{
    start_clock(64, FLIGHTREC_MODE_FLIGHT);
    test_now = T0 + 300;
    flightrec_produce(FLIGHTREC_USER(1), 11);

    struct sp_stream s;
    capture(&s, 0);
    CHECK_EQ_U(s.version, FLIGHTREC_STREAM_VERSION);
    CHECK_EQ_U(s.frequency, 1000000000u);
    CHECK_EQ_U(s.items_per_ring, 64);
    CHECK_EQ_U(s.ring_count, 2);
    CHECK_EQ_I(s.pid, getpid());
    const uint16_t probe = 1;
    int little = *(const unsigned char *)&probe == 1;
    uint32_t host_format =
        sizeof(uintptr_t) == 8
            ? (little ? FLIGHTREC_FORMAT_LE_64 : FLIGHTREC_FORMAT_BE_64)
            : (little ? FLIGHTREC_FORMAT_LE_32 : FLIGHTREC_FORMAT_BE_32);
    CHECK_EQ_U(s.format, host_format);
    CHECK_EQ_U(s.chunk_count, 2);
    const struct sp_chunk *c = chunk_of(&s, 0);
    CHECK(c != NULL);
    CHECK_EQ_U(c->context, 0);
    CHECK_EQ_U(c->position, 0);
    CHECK_EQ_U(c->overflow, 0);
    CHECK_EQ_U(c->count, 3);
    CHECK_EQ_U(c->items[0].event, FLIGHTREC_EV_UPTIME_LOW);
    CHECK_EQ_U(c->items[0].data, 300);
    CHECK_EQ_U(c->items[0].time22, (T0 + 300) & MASK22);
    CHECK_EQ_U(c->items[1].event, FLIGHTREC_EV_UPTIME_HIGH);
    CHECK_EQ_U(c->items[1].data, 0);
    CHECK_EQ_U(c->items[2].event, FLIGHTREC_USER(1));
    CHECK_EQ_U(c->items[2].data, 11);
    CHECK_EQ_U(c->items[2].time22, (T0 + 300) & MASK22);
    const struct sp_chunk *signal = chunk_of(&s, 1);
    CHECK(signal != NULL);
    CHECK_EQ_U(signal->context, 1);
    CHECK_EQ_U(signal->count, 0);
    CHECK_EQ_I(signal->tid, c->tid);
    sp_free(&s);
}

/* Checks c->items[at] and [at + 1] are the pair of counter value @counter. */
static void check_pair(const struct sp_chunk *c, size_t at, uint64_t counter)
{
    CHECK(at + 1 < c->count);
    CHECK_EQ_U(c->items[at].event, FLIGHTREC_EV_UPTIME_LOW);
    CHECK_EQ_U(c->items[at].data, (uint32_t)(counter - T0));
    CHECK_EQ_U(c->items[at].time22, counter & MASK22);
    CHECK_EQ_U(c->items[at + 1].event, FLIGHTREC_EV_UPTIME_HIGH);
    CHECK_EQ_U(c->items[at + 1].data, (counter - T0) >> 32);
    CHECK_EQ_U(c->items[at + 1].time22, counter & MASK22);
}

TEST(time_field_wraps)
{
    start_clock(1024, FLIGHTREC_MODE_FLIGHT);
    /* Steps of 2^20 + 1 ticks: the 22-bit field wraps twice.  Before every
     * second event 2^21 ticks or more have passed since the last pair: the
     * previous pair is restated, then the new pair comes. */
    uint64_t times[8];
    for (int i = 0; i < 8; i++) {
        test_now = T0 + 100 + (uint64_t)i * ((1u << 20) + 1);
        times[i] = test_now;
        flightrec_produce(FLIGHTREC_USER(2), (uintptr_t)i);
    }
    struct sp_stream s;
    capture(&s, 0);
    const struct sp_chunk *c = chunk_of(&s, 0);
    CHECK_EQ_U(c->count, 4 + 3 * 6);
    check_pair(c, 0, times[0]);
    size_t at = 2;
    for (int i = 0; i < 8; i++) {
        if (i > 0 && i % 2 == 0) {
            check_pair(c, at, times[i - 2]); /* restated */
            check_pair(c, at + 2, times[i]);
            at += 4;
        }
        const struct sp_item *item = &c->items[at++];
        CHECK_EQ_U(item->event, FLIGHTREC_USER(2));
        CHECK_EQ_U(item->data, i);
        CHECK_EQ_U(item->time22, times[i] & MASK22);
    }
    sp_free(&s);
}

TEST(sync_after_gap)
{
    start_clock(1024, FLIGHTREC_MODE_FLIGHT);
    uint64_t first = T0 + 10;
    test_now = first;
    flightrec_produce(FLIGHTREC_USER(3), 1);
    test_now = first + FLIGHTREC_SYNC_TICKS - 1; /* no sync yet */
    flightrec_produce(FLIGHTREC_USER(3), 2);
    uint64_t second = first + FLIGHTREC_SYNC_TICKS; /* due: 2^21 after */
    test_now = second;
    flightrec_produce(FLIGHTREC_USER(3), 3);
    uint64_t third = second + 3ull * 3600 * 1000000000u; /* 3 hours idle */
    test_now = third;
    flightrec_produce(FLIGHTREC_USER(3), 4);

    struct sp_stream s;
    capture(&s, 0);
    const struct sp_chunk *c = chunk_of(&s, 0);
    /* pair, 1, 2, restated first pair, pair, 3, restated, pair, 4 */
    CHECK_EQ_U(c->count, 14);
    check_pair(c, 0, first);
    CHECK_EQ_U(c->items[2].data, 1);
    CHECK_EQ_U(c->items[3].data, 2);
    check_pair(c, 4, first);
    check_pair(c, 6, second);
    CHECK_EQ_U(c->items[8].data, 3);
    check_pair(c, 9, second);
    check_pair(c, 11, third);
    CHECK_EQ_U(c->items[13].data, 4);
    CHECK_EQ_U(c->items[13].time22, third & MASK22);
    sp_free(&s);
}

TEST(sync_every_quarter_ring)
{
    start_clock(64, FLIGHTREC_MODE_FLIGHT);
    for (int i = 0; i < 40; i++) {
        test_now = T0 + 1 + (uint64_t)i;
        flightrec_produce(FLIGHTREC_USER(4), (uintptr_t)i);
    }
    struct sp_stream s;
    capture(&s, 0);
    const struct sp_chunk *c = chunk_of(&s, 0);
    /* Pairs at 0, then 16 items after each pair: positions 0, 18, 36. */
    CHECK_EQ_U(c->count, 46);
    size_t pairs = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (c->items[i].event == FLIGHTREC_EV_UPTIME_LOW) {
            CHECK(i == 0 || i == 18 || i == 36);
            CHECK_EQ_U(c->items[i + 1].event, FLIGHTREC_EV_UPTIME_HIGH);
            pairs++;
        }
    }
    CHECK_EQ_U(pairs, 3);
    sp_free(&s);
}

TEST(multi_item_records_share_time)
{
    start_clock(1024, FLIGHTREC_MODE_FLIGHT);
    test_now = T0 + 7;
    flightrec_produce_2(FLIGHTREC_USER(5), 1, FLIGHTREC_USER(6), 2);
    test_now = T0 + 9;
    struct flightrec_item_in in[5];
    for (int i = 0; i < 5; i++) {
        in[i].event = FLIGHTREC_USER(7);
        in[i].data = (uintptr_t)(10 + i);
    }
    flightrec_produce_n(in, 5);
    test_now = T0 + 11;
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    test_now = T0 + 12; /* one timestamp: the one read by prepare */
    for (int i = 0; i < 20; i++)
        flightrec_add(&ctx, FLIGHTREC_USER(8), (uintptr_t)(100 + i));
    flightrec_commit(&ctx);

    struct sp_stream s;
    capture(&s, 0);
    struct sp_item items[64];
    size_t n = user_items(&s, 0, items, 64);
    CHECK_EQ_U(n, 27);
    CHECK_EQ_U(items[0].event, FLIGHTREC_USER(5));
    CHECK_EQ_U(items[1].event, FLIGHTREC_USER(6));
    CHECK_EQ_U(items[1].data, 2);
    CHECK_EQ_U(items[0].time22, T0 + 7);
    CHECK_EQ_U(items[1].time22, T0 + 7);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_U(items[2 + i].data, 10 + i);
        CHECK_EQ_U(items[2 + i].time22, T0 + 9);
    }
    for (int i = 0; i < 20; i++) {
        CHECK_EQ_U(items[7 + i].event, FLIGHTREC_USER(8));
        CHECK_EQ_U(items[7 + i].data, 100 + i);
        CHECK_EQ_U(items[7 + i].time22, T0 + 11);
    }
    sp_free(&s);
}

TEST(filter_start_stop)
{
    start_clock(1024, FLIGHTREC_MODE_FLIGHT);
    test_now = T0 + 1;
    flightrec_filter_set(FLIGHTREC_USER(2), 0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(2)), 0);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    flightrec_produce(FLIGHTREC_USER(2), 2);
    flightrec_produce(FLIGHTREC_USER(3), 3);
    flightrec_stop();
    CHECK_EQ_I(flightrec_is_running(), 0);
    flightrec_produce(FLIGHTREC_USER(1), 4);
    flightrec_produce_2(FLIGHTREC_USER(1), 5, FLIGHTREC_USER(1), 6);
    flightrec_start();
    flightrec_produce(FLIGHTREC_USER(1), 7);
    CHECK_EQ_I(flightrec_filter_parse("all,-512-520,600"), 0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(3)), 0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(9)), 1);
    flightrec_produce(FLIGHTREC_USER(3), 8);
    flightrec_produce(FLIGHTREC_USER(9), 9);
    CHECK_EQ_I(flightrec_filter_parse("user,-bogus"), FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_I(flightrec_filter_parse("5-3"), FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_I(flightrec_filter_parse("1024"), FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(9)), 1);

    struct sp_stream s;
    capture(&s, 0);
    struct sp_item items[16];
    size_t n = user_items(&s, 0, items, 16);
    uint64_t expect[] = { 1, 3, 7, 9 };
    CHECK_EQ_U(n, 4);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_U(items[i].data, expect[i]);
    sp_free(&s);
}

TEST(event_names_travel)
{
    start_clock(64, FLIGHTREC_MODE_FLIGHT);
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_USER(1), "request"), 0);
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_USER(2),
                                        "a-rather-long-event-name-that-goes-"
                                        "on-past-sixty-characters-and-more"),
               0);
    CHECK_EQ_I(flightrec_event_set_name(1024, "x"), FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_USER(3), ""),
               FLIGHTREC_EINVAL_CONFIG);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    struct sp_stream s;
    capture(&s, 0);
    CHECK_EQ_S(s.event_names[FLIGHTREC_USER(1)], "request");
    CHECK_EQ_S(s.event_names[FLIGHTREC_USER(2)],
               "a-rather-long-event-name-that-goes-on-past-sixty-characters-");
    CHECK_EQ_S(s.event_names[FLIGHTREC_USER(3)], "");
    sp_free(&s);
}

TEST(flight_overflow_exact)
{
    start_clock(16, FLIGHTREC_MODE_FLIGHT);
    for (int i = 0; i < 100; i++) {
        test_now = T0 + 1 + (uint64_t)i;
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    }
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    uint64_t head = stats.produced; /* the signal ring has none */

    struct sp_stream s;
    capture(&s, 0);
    const struct sp_chunk *c = chunk_of(&s, 0);
    /* A reader keeps FLIGHTREC_MAX_PENDING items away from the head. */
    CHECK_EQ_U(c->count, 16 - FLIGHTREC_MAX_PENDING);
    CHECK(head > 100); /* uptime pairs took ring positions too */
    /* Positions and losses count the program's events, not ring items:
     * the events held and those reported lost are the 100 produced. */
    size_t events = 0;
    for (size_t i = 0; i < c->count; i++)
        events += !is_sync(&c->items[i]);
    CHECK(events > 0);
    CHECK_EQ_U(c->position, 100 - events);
    CHECK_EQ_U(c->overflow, 100 - events);
    /* The held items end with the last ones produced, in order, and hold
     * a sync pair (one per quarter ring). */
    uint64_t next = 99;
    int saw_sync = 0;
    for (size_t i = c->count; i-- > 0;) {
        if (is_sync(&c->items[i])) {
            saw_sync = 1;
            continue;
        }
        CHECK_EQ_U(c->items[i].data, next);
        next--;
    }
    CHECK(saw_sync);
    sp_free(&s);
}

TEST(discard_counts_drops)
{
    start_clock(16, FLIGHTREC_MODE_DISCARD);
    for (int i = 0; i < 100; i++) {
        test_now = T0 + 1 + (uint64_t)i;
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    }
    FILE *file = tmpfile();
    int fd = fileno(file);
    CHECK_EQ_I(flightrec_drain(fd), 0);
    CHECK_EQ_I(flightrec_drain(fd), 0); /* nothing new: writes nothing */
    for (int i = 100; i < 105; i++) {
        test_now = T0 + 1 + (uint64_t)i;
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    }
    CHECK_EQ_I(flightrec_drain(fd), 0);
    struct sp_stream s;
    parse_file(&s, file);

    CHECK_EQ_U(s.chunk_count, 2);
    const struct sp_chunk *first = &s.chunks[0];
    CHECK_EQ_U(first->count, 16);
    size_t kept = 0;
    for (size_t i = 0; i < first->count; i++) {
        if (is_sync(&first->items[i]))
            continue;
        CHECK_EQ_U(first->items[i].data, kept); /* the oldest are kept */
        kept++;
    }
    CHECK_EQ_U(first->discard, 100 - kept);
    const struct sp_chunk *second = &s.chunks[1];
    CHECK_EQ_U(second->position, kept); /* events before it */
    CHECK_EQ_U(second->discard, 0);
    struct sp_item items[8];
    size_t n = 0;
    for (size_t i = 0; i < second->count; i++)
        if (!is_sync(&second->items[i]))
            items[n++] = second->items[i];
    CHECK_EQ_U(n, 5);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_U(items[i].data, 100 + i);
    sp_free(&s);
}

/* The mode changes on live rings (as flightrec ctl changes it): after
 * setup() with discard, a full ring drops the newest and counts them, and
 * setup() with the first configuration again is accepted. */
TEST(setup_changes_the_mode_of_live_rings)
{
    start_clock(16, FLIGHTREC_MODE_FLIGHT);
    for (int i = 0; i < 5; i++) {
        test_now = T0 + 1 + (uint64_t)i;
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    }
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = 16;
    config.mode = FLIGHTREC_MODE_DISCARD;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    struct flightrec_config now;
    flightrec_get_config(&now);
    CHECK_EQ_I(now.mode, FLIGHTREC_MODE_DISCARD);
    for (int i = 5; i < 100; i++) {
        test_now = T0 + 1 + (uint64_t)i;
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    }
    struct sp_stream s;
    capture(&s, 0);
    const struct sp_chunk *c = chunk_of(&s, 0);
    size_t kept = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (is_sync(&c->items[i]))
            continue;
        CHECK_EQ_U(c->items[i].data, kept); /* the oldest are kept */
        kept++;
    }
    CHECK(kept >= 5);
    CHECK_EQ_U(c->overflow, 0);
    CHECK_EQ_U(c->discard, 100 - kept);
    sp_free(&s);
    config.mode = FLIGHTREC_MODE_FLIGHT;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    flightrec_get_config(&now);
    CHECK_EQ_I(now.mode, FLIGHTREC_MODE_FLIGHT);
    config.items_per_ring = 32;
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_EBUSY_CONFIG);
}

TEST(drain_incremental_and_rewind)
{
    start_clock(1024, FLIGHTREC_MODE_FLIGHT);
    FILE *file = tmpfile();
    int fd = fileno(file);
    test_now = T0 + 1;
    for (int i = 0; i < 10; i++)
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    CHECK_EQ_I(flightrec_drain(fd), 0);
    for (int i = 10; i < 15; i++)
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    CHECK_EQ_I(flightrec_drain(fd), 0);
    CHECK_EQ_I(flightrec_rewind(), 0);
    CHECK_EQ_I(flightrec_drain(fd), 0);
    struct sp_stream s;
    parse_file(&s, file); /* fails on a second header */

    CHECK_EQ_U(s.chunk_count, 3);
    CHECK_EQ_U(s.chunks[0].position, 0);
    CHECK_EQ_U(s.chunks[0].count, 12);
    CHECK_EQ_U(s.chunks[1].position, 10); /* events, not ring items */
    CHECK_EQ_U(s.chunks[1].count, 5);
    CHECK_EQ_U(s.chunks[1].items[0].data, 10);
    CHECK_EQ_U(s.chunks[2].position, 0); /* rewound: everything again */
    CHECK_EQ_U(s.chunks[2].count, 17);
    CHECK_EQ_U(s.chunks[2].overflow, 0);
    sp_free(&s);
}

TEST(rewind_refused_in_discard_mode)
{
    start_clock(64, FLIGHTREC_MODE_DISCARD);
    CHECK_EQ_I(flightrec_rewind(), FLIGHTREC_EMODE);
}

TEST(config_validation)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    CHECK_EQ_U(config.items_per_ring, 65536);
    CHECK_EQ_I(config.mode, FLIGHTREC_MODE_FLIGHT);
    config.items_per_ring = 1000;
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_ENOTPOW2);
    config.items_per_ring = 8;
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_ETOOSMALL);
    config.items_per_ring = 64;
    config.signal_items_per_ring = 48;
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_ENOTPOW2);
    config.signal_items_per_ring = 0;
    config.mode = 7;
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_EMODE);
    config.mode = FLIGHTREC_MODE_DISCARD;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    struct flightrec_config now;
    flightrec_get_config(&now);
    CHECK_EQ_U(now.items_per_ring, 64);
    CHECK_EQ_U(now.signal_items_per_ring, 16);
    CHECK_EQ_I(now.mode, FLIGHTREC_MODE_DISCARD);
    flightrec_produce(FLIGHTREC_USER(1), 1); /* rings exist now */
    config.items_per_ring = 128;
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_EBUSY_CONFIG);
    flightrec_cleanup();
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_EBUSY_CONFIG); /* live */
    CHECK_EQ_S(flightrec_strerror(FLIGHTREC_ENOTPOW2),
               "item count is not a power of two");
}

TEST(config_from_environment)
{
    struct flightrec_config config;
    char message[128];
    flightrec_config_init(&config);
    setenv("FLIGHTREC_ITEMS", "4096", 1);
    setenv("FLIGHTREC_MODE", "discard", 1);
    setenv("FLIGHTREC_RETAIN", "3", 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)), 0);
    CHECK_EQ_U(config.items_per_ring, 4096);
    CHECK_EQ_I(config.mode, FLIGHTREC_MODE_DISCARD);
    CHECK_EQ_U(config.retained_rings, 3);
    setenv("FLIGHTREC_MODE", "bogus", 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)),
               FLIGHTREC_EMODE);
    CHECK_EQ_S(message, "FLIGHTREC_MODE=bogus: unknown mode (flight or discard)");
    setenv("FLIGHTREC_ITEMS", "12abc", 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)),
               FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_S(message, "FLIGHTREC_ITEMS=12abc: not a decimal number");
}

TEST(invalid_environment_keeps_recording_off)
{
    setenv("FLIGHTREC_ITEMS", "1000", 1);
    FILE *err = tmpfile();
    int saved = dup(2);
    dup2(fileno(err), 2);
    flightrec_produce(FLIGHTREC_USER(1), 1); /* first event: lazy start-up */
    dup2(saved, 2);
    close(saved);
    size_t len;
    unsigned char *text = sp_read_fd(fileno(err), &len);
    fclose(err);
    CHECK_EQ_I(flightrec_is_running(), 0);
    const char *expect = "flightrec: FLIGHTREC_ITEMS=1000: item count is not "
                         "a power of two; recording is off\n";
    CHECK_EQ_U(len, strlen(expect));
    CHECK_EQ_MEM(text, expect, len);
    free(text);
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    CHECK_EQ_U(stats.produced, 0);
}

TEST(zero_setup_defaults)
{
    test_now = T0;
    flightrec_produce(FLIGHTREC_USER(1), 42);
    struct sp_stream s;
    capture(&s, 0);
    CHECK_EQ_U(s.items_per_ring, 65536);
    struct sp_item items[4];
    CHECK_EQ_U(user_items(&s, 0, items, 4), 1);
    CHECK_EQ_U(items[0].data, 42);
    sp_free(&s);
}

/* The slow paths (here a thread's first record, which attaches its ring
 * with system calls) keep errno: the preload library's wrappers record
 * around libc calls without saving it themselves. */
TEST(first_records_keep_errno)
{
    start_clock(64, FLIGHTREC_MODE_FLIGHT);
    errno = EXDEV;
    flightrec_produce(FLIGHTREC_USER(1), 1);
    CHECK_EQ_I(errno, EXDEV);
    start_clock(64, FLIGHTREC_MODE_FLIGHT);
    errno = ENOTTY;
    flightrec_produce_2(FLIGHTREC_USER(1), 2, FLIGHTREC_USER(2), 3);
    CHECK_EQ_I(errno, ENOTTY);
    start_clock(64, FLIGHTREC_MODE_FLIGHT);
    errno = EPIPE;
    const struct flightrec_item_in items[3] = {
        { FLIGHTREC_USER(1), 4 }, { FLIGHTREC_USER(2), 5 },
        { FLIGHTREC_USER(3), 6 }
    };
    flightrec_produce_n(items, 3);
    CHECK_EQ_I(errno, EPIPE);
    struct sp_stream s;
    capture(&s, 0);
    /* The ring stays the thread's across set-ups: every record is in it. */
    struct sp_item got[7];
    CHECK_EQ_U(user_items(&s, 0, got, 7), 6);
    for (size_t i = 0; i < 6; i++)
        CHECK_EQ_U(got[i].data, i + 1);
    sp_free(&s);
}

TEST_MAIN()
