/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Multi-item records: flightrec_produce_2(), flightrec_produce_n() and
 * prepare/add/commit, each with its own fast path.  With a counter the test
 * drives, every item has one expected place, data and time:
 * - records of 0..12 items, some filtered, over the end of the ring's array,
 *   over quarter-ring sync points and after time gaps, drained as they go:
 *   every enabled item once, in order, with its record's time;
 * - discard mode: delivered + dropped == produced, item by item;
 * - a signal handler recording in the middle of a record (called at that
 *   point, and sent for real at random moments): the record stays whole
 *   (adjacent, one time) and the handler's items land in the signal ring.
 */
#include "producer-test.h"

#include <flightrec/region.h>

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

/* The counter: set by the test; atomic because handlers read it too, so
 * lock-free on every host (32 bits where 64-bit atomics are not). */
static _Atomic flightrec_region_word test_now;

uint64_t flightrec_port_counter(void)
{
    return atomic_load_explicit(&test_now, memory_order_relaxed);
}

uint64_t flightrec_port_counter_frequency(void)
{
    return 1000000000u;
}

#define T0 5000u
#define MASK22 ((1u << 22) - 1u)
#define ON_EVENT FLIGHTREC_USER(1)
#define OFF_EVENT FLIGHTREC_USER(13)
#define HANDLER_EVENT FLIGHTREC_USER(9)

static int is_sync(uint32_t event)
{
    return event == FLIGHTREC_EV_UPTIME_LOW ||
           event == FLIGHTREC_EV_UPTIME_HIGH;
}

/* What a record is expected to leave in the ring. */
struct expected {
    uint32_t event;
    uint64_t data;
    uint32_t time22;
    uint32_t record;  /* records are numbered; items of one are adjacent */
};

struct plan {
    struct expected *items;
    size_t count, cap;
    uint64_t produced;  /* enabled items handed to the recorder */
};

static void expect(struct plan *p, uint32_t event, uint64_t data,
                   uint32_t record)
{
    if (event == OFF_EVENT)
        return;
    if (p->count == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 1024;
        p->items = realloc(p->items, p->cap * sizeof(*p->items));
        CHECK(p->items != NULL);
    }
    p->items[p->count++] = (struct expected){
        event, data, (uint32_t)(atomic_load(&test_now) & MASK22), record
    };
    p->produced++;
}

/* KIND_SINGLE: each item a flightrec_produce() of its own, between the
 * multi-item records (their slow paths leave the head limit to re-arm). */
enum kind { KIND_PRODUCE_2, KIND_PRODUCE_N, KIND_PREPARE, KIND_SINGLE, KINDS };

/* Set between prepare and commit, so the handler knows it interrupted a
 * record: the test runs until that happened, instead of hoping it did. */
static volatile sig_atomic_t inside_record, landed_inside;

/* Records record number @r of @kind with @n items (produce_2: 2) whose
 * data are *seq, *seq + 1, ...; every fifth item is filtered. */
static void record(struct plan *p, enum kind kind, size_t n, uint32_t r,
                   uint64_t *seq, unsigned *seed)
{
    struct flightrec_item_in in[16];
    if (kind == KIND_PRODUCE_2)
        n = 2;
    for (size_t i = 0; i < n; i++) {
        in[i].event = rand_r(seed) % 5 == 0 ? OFF_EVENT : ON_EVENT;
        in[i].data = (uintptr_t)(*seq)++;
        /* Singles are records of one item each: numbered apart. */
        expect(p, in[i].event, in[i].data,
               kind == KIND_SINGLE ? 0x80000000u | (r * 16u + (uint32_t)i)
                                   : r);
    }
    switch (kind) {
    case KIND_SINGLE:
        for (size_t i = 0; i < n; i++)
            flightrec_produce(in[i].event, in[i].data);
        break;
    case KIND_PRODUCE_2:
        flightrec_produce_2(in[0].event, in[0].data, in[1].event,
                            in[1].data);
        break;
    case KIND_PRODUCE_N:
        flightrec_produce_n(in, n);
        break;
    default: {
        struct flightrec_ctx ctx;
        flightrec_prepare(&ctx);
        atomic_fetch_add(&test_now, 1); /* the time is prepare's */
        inside_record = 1;
        for (size_t i = 0; i < n; i++)
            flightrec_add(&ctx, in[i].event, in[i].data);
        inside_record = 0;
        flightrec_commit(&ctx);
    }
    }
}

/* The user items of ring 0 in @s, in stream order, against @p; checks
 * the items of one record are adjacent in the ring: no sync item and no
 * handler item inside a record.  Returns the handler items of ring 0. */
static size_t check_plan(const struct sp_stream *s, const struct plan *p)
{
    size_t next = 0, handler_items = 0;
    uint32_t last_record = UINT32_MAX;
    int last_was_sync = 0;
    for (size_t i = 0; i < s->chunk_count; i++) {
        const struct sp_chunk *c = &s->chunks[i];
        if (c->ring != 0)
            continue;
        for (size_t j = 0; j < c->count; j++) {
            const struct sp_item *item = &c->items[j];
            if (is_sync(item->event) || item->event == HANDLER_EVENT) {
                handler_items += item->event == HANDLER_EVENT;
                last_was_sync = 1;
                continue;
            }
            CHECK(next < p->count);
            const struct expected *e = &p->items[next++];
            CHECK_EQ_U(item->event, e->event);
            CHECK_EQ_U(item->data, e->data);
            CHECK_EQ_U(item->time22, e->time22);
            if (e->record == last_record && last_was_sync)
                TEST_FAIL("record %u split at item %zu of chunk %zu "
                          "(before: event %u)", e->record, j, i,
                          j > 0 ? c->items[j - 1].event : 0u);
            last_record = e->record;
            last_was_sync = 0;
        }
    }
    CHECK_EQ_U(next, p->count);
    return handler_items;
}

static void setup_clock(uint32_t items, int mode)
{
    atomic_store(&test_now, T0);
    setup_or_die(items, mode);
    flightrec_filter_set(OFF_EVENT, 0);
}

/* Records of every kind and size, drained after each: nothing is lost, and
 * the 64-item ring's array end, its quarter-ring sync points and the 2^21
 * tick deadline fall inside records many times. */
static void run_exact(enum kind only)
{
    setup_clock(64, FLIGHTREC_MODE_FLIGHT);
    FILE *file = tmpfile();
    CHECK(file != NULL);
    struct plan p = { 0 };
    uint64_t seq = 0;
    unsigned seed = 99;
    for (uint32_t r = 0; r < 3000; r++) {
        enum kind kind = only < KINDS ? only : (enum kind)(r % KINDS);
        size_t n = (r / KINDS) % 13; /* 0..12 */
        if (r % 97 == 96)
            atomic_fetch_add(&test_now, FLIGHTREC_SYNC_TICKS + 5);
        else
            atomic_fetch_add(&test_now, 3);
        record(&p, kind, n, r, &seq, &seed);
        CHECK_EQ_I(flightrec_drain(fileno(file)), 0);
    }
    struct sp_stream s;
    parse_file(&s, file);
    for (size_t i = 0; i < s.chunk_count; i++) {
        CHECK_EQ_U(s.chunks[i].overflow, 0);
        CHECK_EQ_U(s.chunks[i].discard, 0);
    }
    CHECK_EQ_U(check_plan(&s, &p), 0);
    CHECK(p.produced > 4000);
    sp_free(&s);
    free(p.items);
}

TEST(produce_2_exact) { run_exact(KIND_PRODUCE_2); }
TEST(produce_n_exact) { run_exact(KIND_PRODUCE_N); }
TEST(prepare_add_commit_exact) { run_exact(KIND_PREPARE); }
TEST(mixed_records_exact) { run_exact(KINDS); }
TEST(singles_exact) { run_exact(KIND_SINGLE); }

/* Discard mode: a 64-item ring filled by records of every kind without a
 * drain, then drained, several times over.  Each enabled item is either
 * delivered (in order, with its time) or counted as dropped. */
TEST(discard_counts_every_item)
{
    setup_clock(64, FLIGHTREC_MODE_DISCARD);
    FILE *file = tmpfile();
    CHECK(file != NULL);
    struct plan p = { 0 };
    uint64_t seq = 0;
    unsigned seed = 7;
    uint32_t r = 0;
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k < 40; k++, r++) {
            atomic_fetch_add(&test_now, 2);
            record(&p, (enum kind)(r % KINDS), 1 + r % 11, r, &seq, &seed);
        }
        CHECK_EQ_I(flightrec_drain(fileno(file)), 0);
    }
    struct sp_stream s;
    parse_file(&s, file);
    uint64_t dropped = 0, delivered = 0;
    size_t next = 0;
    for (size_t i = 0; i < s.chunk_count; i++) {
        const struct sp_chunk *c = &s.chunks[i];
        if (c->ring != 0)
            continue;
        CHECK_EQ_U(c->overflow, 0);
        dropped += c->discard;
        for (size_t j = 0; j < c->count; j++) {
            const struct sp_item *item = &c->items[j];
            if (is_sync(item->event))
                continue;
            /* The next delivered item is a later one of the plan. */
            while (next < p.count && p.items[next].data != item->data)
                next++;
            CHECK(next < p.count);
            CHECK_EQ_U(item->event, p.items[next].event);
            CHECK_EQ_U(item->time22, p.items[next].time22);
            next++;
            delivered++;
        }
    }
    CHECK(dropped > 0);
    CHECK_EQ_U(delivered + dropped, p.produced);
    sp_free(&s);
    free(p.items);
}

/* A handler's records, called where a signal would interrupt a record. */
static uintptr_t handler_seq;

static void handler_records(void)
{
    flightrec_produce_2(HANDLER_EVENT, handler_seq, HANDLER_EVENT,
                        handler_seq + 1);
    struct flightrec_item_in in[3];
    for (int i = 0; i < 3; i++) {
        in[i].event = HANDLER_EVENT;
        in[i].data = handler_seq + 2 + (uintptr_t)i;
    }
    flightrec_produce_n(in, 3);
    handler_seq += 5;
}

TEST(handler_inside_record_keeps_it_whole)
{
    setup_clock(1024, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(ON_EVENT, 0); /* attach outside the record */
    atomic_store(&test_now, T0 + 40);
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, ON_EVENT, 1);
    atomic_store(&test_now, T0 + 50);
    handler_records(); /* interrupts the record */
    flightrec_add(&ctx, ON_EVENT, 2);
    flightrec_commit(&ctx);
    atomic_store(&test_now, T0 + 60);
    handler_records(); /* outside a record: the thread's ring */

    struct sp_stream s;
    capture(&s, 0);
    struct sp_item items[16];
    CHECK_EQ_U(user_items(&s, 0, items, 16), 8);
    CHECK_EQ_U(items[1].data, 1);
    CHECK_EQ_U(items[2].data, 2);
    CHECK_EQ_U(items[1].time22, T0 + 40);
    CHECK_EQ_U(items[2].time22, T0 + 40);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_U(items[3 + i].event, HANDLER_EVENT);
        CHECK_EQ_U(items[3 + i].data, 5 + i);
        CHECK_EQ_U(items[3 + i].time22, T0 + 60);
    }
    CHECK_EQ_U(user_items(&s, 1, items, 16), 5);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_U(items[i].event, HANDLER_EVENT);
        CHECK_EQ_U(items[i].data, i);
        CHECK_EQ_U(items[i].time22, T0 + 50);
    }
    sp_free(&s);
}

/* The same one level down: a handler's record interrupted by a second
 * handler, whose produce_2 and produce_n are too deep and are counted. */
TEST(too_deep_multi_items_are_counted)
{
    setup_clock(1024, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(ON_EVENT, 0);
    struct flightrec_ctx outer, inner;
    flightrec_prepare(&outer);
    flightrec_add(&outer, ON_EVENT, 1);
    flightrec_prepare(&inner); /* first handler */
    flightrec_add(&inner, HANDLER_EVENT, 2);
    handler_records(); /* second handler: 5 items too deep */
    flightrec_add(&inner, HANDLER_EVENT, 3);
    flightrec_commit(&inner);
    flightrec_add(&outer, ON_EVENT, 4);
    flightrec_commit(&outer);

    struct sp_stream s;
    capture(&s, 0);
    struct sp_item items[8];
    CHECK_EQ_U(user_items(&s, 0, items, 8), 3);
    CHECK_EQ_U(items[1].data, 1);
    CHECK_EQ_U(items[2].data, 4);
    CHECK_EQ_U(user_items(&s, 1, items, 8), 2);
    CHECK_EQ_U(items[0].data, 2);
    CHECK_EQ_U(items[1].data, 3);
    CHECK_EQ_U(chunk_of(&s, 1)->discard, 5);
    sp_free(&s);
}

/* Real signals at random moments while the thread records multi-item
 * records of every kind; the handler records produce_n of 2. */
static volatile sig_atomic_t signal_count;
static _Atomic int stop_sending;

static void on_signal(int signo)
{
    (void)signo;
    struct flightrec_item_in in[2] = {
        { HANDLER_EVENT, (uintptr_t)signal_count * 2 },
        { HANDLER_EVENT, (uintptr_t)signal_count * 2 + 1 },
    };
    flightrec_produce_n(in, 2);
    if (inside_record)
        landed_inside = landed_inside + 1;
    signal_count = signal_count + 1;
}

static void *sender(void *arg)
{
    pthread_t target = *(pthread_t *)arg;
    unsigned seed = 321;
    while (!atomic_load(&stop_sending)) {
        pthread_kill(target, SIGUSR1);
        struct timespec ts = { 0, (long)(rand_r(&seed) % 20000) };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

TEST(random_signals_keep_multi_records_whole)
{
    setup_clock(1u << 22, FLIGHTREC_MODE_FLIGHT);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    CHECK_EQ_I(sigaction(SIGUSR1, &sa, NULL), 0);
    flightrec_produce(ON_EVENT, 0); /* attach before the first signal */
    struct plan p = { 0 };
    expect(&p, ON_EVENT, 0, UINT32_MAX - 1); /* a record of its own */
    uint64_t seq = 1;
    unsigned seed = 5;
    pthread_t self = pthread_self(), thread;
    CHECK_EQ_I(pthread_create(&thread, NULL, sender, &self), 0);
    /* Until 1000 signals came and one interrupted a record, however slow
     * the sender is on a loaded machine; past the item budget (the ring
     * holds it whole) only the prepare/commit records go on, one item
     * each, so that a signal can still land inside one. */
    uint32_t r = 0;
    while (signal_count < 1000 || landed_inside == 0) {
        for (volatile int spin = 0; spin < 300; spin++)
            ;
        atomic_fetch_add(&test_now, 1);
        if (p.count < 2000000)
            record(&p, (enum kind)(r % KINDS), 1 + r % 10, r, &seq, &seed);
        else if (p.count < 3000000)
            record(&p, KIND_PREPARE, 1, r, &seq, &seed);
        r++;
    }
    atomic_store(&stop_sending, 1);
    CHECK_EQ_I(pthread_join(thread, NULL), 0);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &block, NULL);

    struct sp_stream s;
    capture(&s, 0);
    /* Handler items lie between records, never inside one. */
    size_t handler_items = check_plan(&s, &p);
    for (size_t i = 0; i < s.chunk_count; i++) {
        const struct sp_chunk *c = &s.chunks[i];
        CHECK_EQ_U(c->overflow, 0);
        CHECK_EQ_U(c->discard, 0);
        if (c->ring == 1)
            for (size_t j = 0; j < c->count; j++)
                handler_items += c->items[j].event == HANDLER_EVENT;
    }
    CHECK_EQ_U(handler_items, 2 * (size_t)signal_count);
    CHECK(signal_count >= 1000);
    /* Each handler that interrupted a record wrote its 2 items there. */
    CHECK(chunk_of(&s, 1)->count >= 2 * (size_t)landed_inside);
    CHECK(landed_inside > 0);
    sp_free(&s);
    free(p.items);
}

TEST_MAIN(TEST_ENTRY(produce_2_exact), TEST_ENTRY(produce_n_exact),
          TEST_ENTRY(prepare_add_commit_exact), TEST_ENTRY(mixed_records_exact),
          TEST_ENTRY(singles_exact),
          TEST_ENTRY(discard_counts_every_item),
          TEST_ENTRY(handler_inside_record_keeps_it_whole),
          TEST_ENTRY(too_deep_multi_items_are_counted),
          TEST_ENTRY(random_signals_keep_multi_records_whole))
