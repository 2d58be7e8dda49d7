/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Positions past the largest one: with 32-bit positions a ring's head
 * wraps to 0 after 2^32 items (72 minutes at a million events a second).
 * The rings start a few hundred items before the wrap
 * (FLIGHTREC_TEST_FIRST_POSITION) and every kind of record crosses it:
 * the program's numbered events come out exact, in order, none lost, from
 * a dump and from drains, in flight and in discard mode.  On 64-bit
 * builds the same positions are only large.
 */
#include "producer-test.h"

#include <inttypes.h>
#include <string.h>

#define EV FLIGHTREC_USER(3)
#define BEFORE_WRAP 300u

static void start_near_wrap(uint32_t items, int mode)
{
    char text[32];
    snprintf(text, sizeof(text), "%" PRIuMAX,
             (uintmax_t)((uintptr_t)UINT32_MAX - BEFORE_WRAP + 1));
    setenv("FLIGHTREC_TEST_FIRST_POSITION", text, 1);
    setup_or_die(items, mode);
}

/* One turn of every kind of call, 22 events numbered from @seq on. */
static uintptr_t record_turn(uintptr_t seq)
{
    flightrec_produce(EV, seq++);
    flightrec_produce_2(EV, seq, EV, seq + 1);
    seq += 2;
    struct flightrec_item_in in[8];
    for (unsigned k = 0; k < 8; k++) {
        in[k].event = EV;
        in[k].data = seq + k;
    }
    flightrec_produce_n(in, 8);
    seq += 8;
    struct flightrec_ctx ctx; /* more than FLIGHTREC_MAX_PENDING items */
    flightrec_prepare(&ctx);
    for (unsigned k = 0; k < 11; k++)
        flightrec_add(&ctx, EV, seq++);
    flightrec_commit(&ctx);
    return seq;
}

static void check_numbered(const struct sp_item *items, size_t n,
                           uintptr_t first)
{
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ_U(items[i].event, EV);
        CHECK_EQ_U(items[i].data, first + i);
    }
}

TEST(dump_across_the_wrap_is_exact)
{
    start_near_wrap(2048, FLIGHTREC_MODE_FLIGHT);
    uintptr_t seq = 0;
    for (int turn = 0; turn < 28; turn++)
        seq = record_turn(seq);
    CHECK_EQ_U(seq, 616);
    struct sp_stream s;
    capture(&s, 0);
    static struct sp_item items[1024];
    size_t n = user_items(&s, 0, items, 1024);
    CHECK_EQ_U(n, seq);
    check_numbered(items, n, 0);
    CHECK_EQ_U(chunk_of(&s, 0)->overflow, 0);
    /* The ring did start before the wrap, and its head is past it. */
    uintptr_t head = atomic_load_explicit(&flightrec__self.main.ring->head,
                                          memory_order_relaxed);
    CHECK((uint32_t)head >= seq - BEFORE_WRAP && (uint32_t)head < 1024);
    sp_free(&s);
}

TEST(drains_across_the_wrap_lose_nothing_in_discard_mode)
{
    start_near_wrap(1024, FLIGHTREC_MODE_DISCARD);
    uintptr_t seq = 0;
    FILE *file = tmpfile(); /* one stream, drained in four parts */
    CHECK(file != NULL);
    for (int part = 0; part < 4; part++) {
        for (int turn = 0; turn < 7; turn++)
            seq = record_turn(seq);
        CHECK_EQ_I(flightrec_drain(fileno(file)), 0);
    }
    struct sp_stream s;
    parse_file(&s, file);
    static struct sp_item items[1024];
    size_t n = user_items(&s, 0, items, 1024);
    CHECK_EQ_U(n, seq);
    check_numbered(items, n, 0);
    for (size_t i = 0; i < s.chunk_count; i++)
        if (s.chunks[i].ring == 0) {
            CHECK_EQ_U(s.chunks[i].discard, 0);
            CHECK_EQ_U(s.chunks[i].overflow, 0);
        }
    sp_free(&s);
}

TEST(overwritten_items_across_the_wrap_leave_the_newest)
{
    start_near_wrap(64, FLIGHTREC_MODE_FLIGHT);
    uintptr_t seq = 0;
    for (int turn = 0; turn < 28; turn++)
        seq = record_turn(seq);
    struct sp_stream s;
    capture(&s, 0);
    static struct sp_item items[128];
    size_t n = user_items(&s, 0, items, 128);
    CHECK(n > 16 && n <= 64);
    /* The newest, consecutive up to the last one recorded. */
    check_numbered(items, n, seq - n);
    sp_free(&s);
}

TEST_MAIN()
