/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Signals are the interrupts of user space: a handler that records while
 * it interrupts a record of the same thread must neither lose its items
 * nor corrupt the interrupted record.  The deterministic cases call the
 * handler functions at the exact point a signal would interrupt (raise()
 * is not synchronous under sanitizers, which defer signals); the random
 * case has another thread send real signals at random moments.
 */
#include "producer-test.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#define HANDLER_EVENT FLIGHTREC_USER(9)
#define DEEP_EVENT FLIGHTREC_USER(10)
#define WARM_UP_EVENT FLIGHTREC_USER(11)

static void install(int signo, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    CHECK_EQ_I(sigaction(signo, &sa, NULL), 0);
}

static void record_one(int signo)
{
    flightrec_produce(HANDLER_EVENT, (uintptr_t)signo);
}

TEST(handler_inside_record_goes_to_signal_ring)
{
    flightrec_produce(FLIGHTREC_USER(0), 0); /* attach outside the record */
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_USER(1), 1);
    record_one(SIGUSR1); /* interrupts the record */
    flightrec_add(&ctx, FLIGHTREC_USER(1), 2);
    flightrec_commit(&ctx);
    record_one(SIGUSR1); /* outside a record: the thread's own ring */

    struct sp_stream s;
    capture(&s, 0);
    struct sp_item items[8];
    size_t n = user_items(&s, 0, items, 8);
    CHECK_EQ_U(n, 4);
    CHECK_EQ_U(items[0].event, FLIGHTREC_USER(0));
    CHECK_EQ_U(items[1].data, 1);
    CHECK_EQ_U(items[2].data, 2);
    CHECK_EQ_U(items[1].time22, items[2].time22);
    CHECK_EQ_U(items[3].event, HANDLER_EVENT);
    n = user_items(&s, 1, items, 8);
    CHECK_EQ_U(n, 1);
    CHECK_EQ_U(items[0].event, HANDLER_EVENT);
    CHECK_EQ_U(items[0].data, SIGUSR1);
    CHECK_EQ_U(chunk_of(&s, 1)->context, 1);
    sp_free(&s);
}

/*
 * A handler that records the thread's very first event while it interrupts
 * the thread's own first event, between the hot path's load of the
 * deadline and its busy store: the handler attaches the thread, and the
 * interrupted event then goes on with the deadline it loaded before.  The
 * test runs that interleaving step by step.  The thread's later events
 * are its own, in its main ring; before the fix the interrupted event's
 * slow path took the saved deadline for the busy mark, and the main
 * writer stayed busy for good: every later event went to the signal ring.
 */
TEST(handler_that_attaches_inside_the_first_event_leaves_the_thread_ready)
{
    struct flightrec__writer *w = &flightrec__self.main;
#if FLIGHTREC__SPLIT_DEADLINE
    uint32_t saved_high = w->deadline_half[1]; /* the hot path's load */
#else
    uint64_t saved = w->deadline;
#endif
    record_one(SIGUSR1); /* the handler: attaches the thread */
#if FLIGHTREC__SPLIT_DEADLINE
    w->deadline_half[1] = 0; /* the busy store */
    flightrec__produce_slow_late(FLIGHTREC_USER(1), 1,
                                 (uint64_t)saved_high << 32 |
                                     w->deadline_half[0]);
#else
    w->deadline = 0;
    flightrec__produce_slow(FLIGHTREC_USER(1), 1, flightrec_counter(), saved);
#endif
    CHECK(!FLIGHTREC__DEADLINE_BUSY(w->deadline));
    for (uintptr_t i = 2; i < 102; i++)
        flightrec_produce(FLIGHTREC_USER(1), i);

    struct sp_stream s;
    capture(&s, 0);
    struct sp_item items[128];
    size_t n = user_items(&s, 0, items, 128);
    CHECK_EQ_U(n, 102);
    CHECK_EQ_U(items[0].event, HANDLER_EVENT);
    CHECK_EQ_U(items[0].data, SIGUSR1);
    for (size_t i = 1; i < n; i++) {
        CHECK_EQ_U(items[i].event, FLIGHTREC_USER(1));
        CHECK_EQ_U(items[i].data, i);
    }
    CHECK_EQ_U(user_items(&s, 1, items, 128), 0);
    sp_free(&s);
}

/*
 * The other interleaving of a first record: the handler comes after the
 * hot path's busy store, attaches the thread and, recording into the main
 * ring, arms its writer.  The interrupted prepare's slow path then finds
 * the thread attached and takes the main ring too: the main writer must be
 * busy again for the rest of the record, so that a second handler inside
 * the record goes to the signal ring.  Run step by step, as above; the
 * second handler is called where a signal would come, between two adds.
 */
TEST(handler_that_attaches_after_the_busy_store_leaves_the_record_busy)
{
    struct flightrec__writer *w = &flightrec__self.main;
    struct flightrec_ctx ctx;
#if FLIGHTREC__SPLIT_DEADLINE
    uint32_t saved_high = w->deadline_half[1]; /* the hot path's load */
    w->deadline_half[1] = 0;                   /* its busy store */
    record_one(SIGUSR1); /* the handler: attaches the thread */
    ctx = flightrec__prepare_cold(w, 0, flightrec_counter(),
                                  (uint64_t)saved_high << 32 |
                                      w->deadline_half[0]);
#else
    uint64_t saved = w->deadline;
    w->deadline = 0;
    record_one(SIGUSR1);
    ctx = flightrec__prepare_cold(w, 0, flightrec_counter(), saved);
#endif
    int busy_in_record = FLIGHTREC__DEADLINE_BUSY(w->deadline);
    flightrec_add(&ctx, FLIGHTREC_USER(1), 1);
    record_one(SIGUSR2); /* a second handler, inside the record */
    flightrec_add(&ctx, FLIGHTREC_USER(1), 2);
    flightrec_commit(&ctx);

    struct sp_stream s;
    capture(&s, 0);
    struct sp_item items[8];
    size_t n = user_items(&s, 0, items, 8);
    CHECK_EQ_U(n, 3);
    CHECK_EQ_U(items[0].event, HANDLER_EVENT);
    CHECK_EQ_U(items[0].data, SIGUSR1);
    CHECK_EQ_U(items[1].event, FLIGHTREC_USER(1));
    CHECK_EQ_U(items[1].data, 1);
    CHECK_EQ_U(items[2].event, FLIGHTREC_USER(1));
    CHECK_EQ_U(items[2].data, 2);
    n = user_items(&s, 1, items, 8);
    CHECK_EQ_U(n, 1);
    CHECK_EQ_U(items[0].event, HANDLER_EVENT);
    CHECK_EQ_U(items[0].data, SIGUSR2);
    CHECK_EQ_I(busy_in_record, 1);
    sp_free(&s);
}

static void record_deep(int signo);

static void record_nested(int signo)
{
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, HANDLER_EVENT, (uintptr_t)signo);
    record_deep(SIGUSR2); /* a second signal, inside this record */
    flightrec_add(&ctx, HANDLER_EVENT, (uintptr_t)signo + 1000);
    flightrec_commit(&ctx);
}

static void record_deep(int signo)
{
    flightrec_produce(DEEP_EVENT, (uintptr_t)signo);
    flightrec_produce_2(DEEP_EVENT, 1, DEEP_EVENT, 2);
}

TEST(nesting_too_deep_is_counted)
{
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_USER(1), 7);
    record_nested(SIGUSR1);
    flightrec_commit(&ctx);

    struct sp_stream s;
    capture(&s, 0);
    struct sp_item items[8];
    CHECK_EQ_U(user_items(&s, 0, items, 8), 1);
    CHECK_EQ_U(items[0].data, 7);
    CHECK_EQ_U(user_items(&s, 1, items, 8), 2);
    CHECK_EQ_U(items[0].data, SIGUSR1);
    CHECK_EQ_U(items[1].data, SIGUSR1 + 1000);
    /* Three items of the third level: dropped and counted. */
    CHECK_EQ_U(chunk_of(&s, 1)->discard, 3);
    sp_free(&s);
}

/* Random signals: the recording thread writes records of 1, 2 and 3 items
 * carrying a sequence number; handlers write their own sequence. */
static volatile sig_atomic_t handler_seq;
static _Atomic int stop_sending;

static void record_seq(int signo)
{
    (void)signo;
    flightrec_produce(HANDLER_EVENT, (uintptr_t)handler_seq);
    handler_seq = handler_seq + 1;
}

static void *sender(void *p)
{
    pthread_t target = *(pthread_t *)p;
    unsigned seed = 12345;
    while (!stop_sending) {
        pthread_kill(target, SIGUSR1);
        struct timespec ts = { 0, (long)(rand_r(&seed) % 20000) };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Records until this many signals arrived (or the ring would fill). */
#define SIGNALS 1000
#define MAX_ITEMS 3000000u

TEST(random_signals_keep_records_intact)
{
    setup_or_die(1u << 22, FLIGHTREC_MODE_FLIGHT);
    install(SIGUSR1, record_seq);
    /* Attach before the first signal: a handler interrupting the attach
     * itself would be dropped (and counted), which is not the point here. */
    flightrec_produce(WARM_UP_EVENT, 0);
    pthread_t self = pthread_self(), thread;
    CHECK_EQ_I(pthread_create(&thread, NULL, sender, &self), 0);
    uintptr_t seq = 0;
    /* Until SIGNALS signals came, however slow the sender is on a loaded
     * machine; past MAX_ITEMS (the ring holds them whole) the thread only
     * spins, and the handlers' items still go to its ring. */
    for (int r = 0; handler_seq < SIGNALS; r++) {
        for (volatile int spin = 0; spin < 300; spin++)
            ; /* fewer items per signal: the ring holds them all */
        if (seq >= MAX_ITEMS)
            continue;
        switch (r % 3) {
        case 0:
            flightrec_produce(FLIGHTREC_USER(1), seq++);
            break;
        case 1:
            flightrec_produce_2(FLIGHTREC_USER(2), seq, FLIGHTREC_USER(2),
                                seq + 1);
            seq += 2;
            break;
        default: {
            struct flightrec_ctx ctx;
            flightrec_prepare(&ctx);
            for (int i = 0; i < 3; i++)
                flightrec_add(&ctx, FLIGHTREC_USER(3), seq++);
            flightrec_commit(&ctx);
        }
        }
    }
    stop_sending = 1;
    CHECK_EQ_I(pthread_join(thread, NULL), 0);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &block, NULL);

    struct sp_stream s;
    capture(&s, 0);
    /* The thread's ring: every sequence number once, in order; the items
     * of one record adjacent with one time; handler items in between. */
    uint64_t expect = 0;
    size_t handler_items = 0;
    uint64_t last_handler = 0;
    const struct sp_chunk *c = chunk_of(&s, 0);
    CHECK_EQ_U(c->overflow, 0);
    for (size_t i = 0; i < c->count; i++) {
        const struct sp_item *item = &c->items[i];
        if (item->event == FLIGHTREC_EV_UPTIME_LOW ||
            item->event == FLIGHTREC_EV_UPTIME_HIGH ||
            item->event == WARM_UP_EVENT)
            continue;
        if (item->event == HANDLER_EVENT) {
            CHECK(handler_items == 0 || item->data > last_handler);
            last_handler = item->data;
            handler_items++;
            continue;
        }
        CHECK_EQ_U(item->data, expect);
        /* Sequence numbers 6k..6k+5: a record of 1, then 2, then 3 items;
         * an item inside a record follows its predecessor directly, with
         * the same time: nothing came in between. */
        unsigned offset = (unsigned)(expect % 6);
        if (offset == 2 || offset == 4 || offset == 5) {
            CHECK(i > 0);
            CHECK_EQ_U(c->items[i - 1].data, expect - 1);
            CHECK_EQ_U(c->items[i - 1].time22, item->time22);
        }
        expect++;
    }
    CHECK_EQ_U(expect, seq);
    /* The signal ring: handler items that interrupted a record. */
    const struct sp_chunk *sc = chunk_of(&s, 1);
    CHECK_EQ_U(sc->overflow, 0);
    CHECK_EQ_U(sc->discard, 0);
    for (size_t i = 0; i < sc->count; i++)
        if (sc->items[i].event == HANDLER_EVENT)
            handler_items++;
    CHECK_EQ_U(handler_items, (size_t)handler_seq);
    CHECK(handler_seq >= SIGNALS);
    CHECK(sc->count > 0); /* some signals did land inside a record */
    sp_free(&s);
}

TEST_MAIN()
