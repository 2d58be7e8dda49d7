/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Round trip: streams written by the recording runtime, decoded by the
 * client library, give back exactly the events produced: ids, data,
 * threads, exact times (the counter is driven by the test) and exact loss
 * counts, in flight and discard mode, dumped and drained, several threads.
 */
#include <flightrec.h>
#include <flightrec/client.h>
#include <flightrec/region.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stream-parse.h"
#include "test.h"

/* Lock-free on every host (32 bits where 64-bit atomics are not): the
 * counter is read in signal handlers too. */
static _Atomic flightrec_region_word test_now;

uint64_t flightrec_port_counter(void)
{
    return test_now;
}

uint64_t flightrec_port_counter_frequency(void)
{
    return 250000000u; /* 4 ns per tick */
}

#define BASE 1000000u
#define NS_PER_TICK 4u

struct decoded {
    struct flightrec_record rec;
    char thread[64];
    int64_t tid;
};

struct sink {
    struct decoded *list;
    size_t count, cap;
    uint64_t overflow, discard, missing;
};

static int collect(const struct flightrec_record *rec, void *arg)
{
    struct sink *sink = arg;
    if (rec->type == FLIGHTREC_RECORD_LOSS) {
        if (rec->loss_kind == FLIGHTREC_LOSS_OVERFLOW)
            sink->overflow += rec->loss_count;
        else if (rec->loss_kind == FLIGHTREC_LOSS_DISCARD)
            sink->discard += rec->loss_count;
        else
            sink->missing += rec->loss_count;
        return 0;
    }
    if (sink->count == sink->cap) {
        sink->cap = sink->cap ? sink->cap * 2 : 1024;
        sink->list = realloc(sink->list, sink->cap * sizeof(*sink->list));
        CHECK(sink->list != NULL);
    }
    struct decoded *d = &sink->list[sink->count++];
    d->rec = *rec;
    d->rec.ring_info = NULL;
    snprintf(d->thread, sizeof(d->thread), "%s", rec->ring_info->thread_name);
    d->tid = rec->ring_info->thread_id;
    return 0;
}

/* Dumps (or drains) and decodes, merged, one byte at a time if asked. */
static void decode_now(struct sink *sink, int drain, int bytewise)
{
    FILE *file = tmpfile();
    CHECK(file != NULL);
    CHECK_EQ_I(drain ? flightrec_drain(fileno(file)) : flightrec_dump(fileno(file)), 0);
    size_t len;
    unsigned char *bytes = sp_read_fd(fileno(file), &len);
    fclose(file);
    struct flightrec_client_options options = {
        .on_record = collect, .arg = sink, .merge = 1,
    };
    flightrec_client *client;
    CHECK_EQ_I(flightrec_client_create(&client, &options), 0);
    if (bytewise) {
        for (size_t i = 0; i < len; i++)
            CHECK_EQ_I(flightrec_client_feed(client, bytes + i, 1), 0);
    } else {
        CHECK_EQ_I(flightrec_client_feed(client, bytes, len), 0);
    }
    CHECK_EQ_I(flightrec_client_finish(client), 0);
    flightrec_client_destroy(client);
    free(bytes);
}

static void set_up(uint32_t items, int mode)
{
    test_now = BASE;
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = items;
    config.mode = mode;
    CHECK_EQ_I(flightrec_setup(&config), 0);
}

static uint64_t ns_at(uint64_t ticks)
{
    return (ticks - BASE) * NS_PER_TICK;
}

TEST(exact_events_and_times)
{
    set_up(1024, FLIGHTREC_MODE_FLIGHT);
    pthread_setname_np(pthread_self(), "main thread");
    flightrec_event_set_name(FLIGHTREC_USER(7), "tick");
    /* Steps from 1 tick to hours: the 22-bit field wraps many times. */
    static const uint64_t steps[] = { 1, 3, 1000, (1u << 21) - 1, 1u << 21,
                                      5u << 22, 250000000ull * 3600 * 2, 7 };
    uint64_t at[8];
    for (int i = 0; i < 8; i++) {
        test_now += steps[i];
        at[i] = test_now;
        flightrec_produce(FLIGHTREC_USER(7), (uintptr_t)(100 + i));
    }
    test_now += 9;
    flightrec_produce_2(FLIGHTREC_EV_MALLOC_ENTRY, 64, FLIGHTREC_EV_MALLOC_EXIT,
                        0xbeef);

    for (int bytewise = 0; bytewise < 2; bytewise++) {
        struct sink sink = { 0 };
        decode_now(&sink, 0, bytewise);
        CHECK_EQ_U(sink.count, 10);
        CHECK_EQ_U(sink.overflow + sink.discard + sink.missing, 0);
        int32_t tid = (int32_t)syscall(SYS_gettid);
        for (int i = 0; i < 8; i++) {
            const struct decoded *d = &sink.list[i];
            CHECK_EQ_U(d->rec.event, FLIGHTREC_USER(7));
            CHECK_EQ_U(d->rec.data, 100 + i);
            CHECK_EQ_U(d->rec.time_ns, ns_at(at[i]));
            CHECK_EQ_U(d->rec.flags, 0);
            CHECK_EQ_S(d->thread, "main thread");
            CHECK_EQ_I(d->tid, tid);
        }
        CHECK_EQ_U(sink.list[8].rec.event, FLIGHTREC_EV_MALLOC_ENTRY);
        CHECK_EQ_U(sink.list[9].rec.data, 0xbeef);
        CHECK_EQ_U(sink.list[9].rec.time_ns, ns_at(at[7] + 9));
        free(sink.list);
    }
}

struct worker {
    int index;
    int events;
};

static void *worker(void *p)
{
    struct worker *w = p;
    char name[16];
    snprintf(name, sizeof(name), "w%d", w->index);
    pthread_setname_np(pthread_self(), name);
    for (int i = 0; i < w->events; i++) {
        test_now += 1;
        flightrec_produce(FLIGHTREC_USER(w->index), (uintptr_t)i);
    }
    return NULL;
}

/* Threads in turn (the counter is shared), then one dump: per thread the
 * newest items in order, and per ring delivered + overflow = produced. */
static void threads_and_losses(int mode, int drain)
{
    set_up(64, mode);
    enum { THREADS = 3, EVENTS = 500 };
    for (int t = 0; t < THREADS; t++) {
        struct worker w = { t, EVENTS };
        pthread_t thread;
        CHECK_EQ_I(pthread_create(&thread, NULL, worker, &w), 0);
        CHECK_EQ_I(pthread_join(thread, NULL), 0);
    }
    struct sink sink = { 0 };
    decode_now(&sink, drain, 0);
    uint64_t per[THREADS] = { 0 };
    uint64_t last[THREADS];
    uint64_t previous_time = 0;
    for (size_t i = 0; i < sink.count; i++) {
        const struct decoded *d = &sink.list[i];
        int t = (int)d->rec.event - FLIGHTREC_USER(0);
        CHECK(t >= 0 && t < THREADS);
        char name[16];
        snprintf(name, sizeof(name), "w%d", t);
        CHECK_EQ_S(d->thread, name);
        if (per[t] > 0)
            CHECK_EQ_U(d->rec.data, last[t] + 1); /* no gap inside */
        last[t] = d->rec.data;
        per[t]++;
        CHECK(d->rec.time_ns >= previous_time); /* merged in time order */
        previous_time = d->rec.time_ns;
    }
    uint64_t delivered = 0;
    for (int t = 0; t < THREADS; t++) {
        delivered += per[t];
        if (mode == FLIGHTREC_MODE_FLIGHT)
            CHECK_EQ_U(last[t], EVENTS - 1); /* the newest are kept */
        else
            CHECK_EQ_U(last[t], per[t] - 1); /* the oldest are kept */
    }
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    if (mode == FLIGHTREC_MODE_FLIGHT) {
        /* Items written (sync pairs included) = delivered events + their
         * sync items + overflow; the overflow holds every lost event. */
        CHECK_EQ_U(sink.discard, 0);
        CHECK(sink.overflow >= THREADS * EVENTS - delivered);
        CHECK(sink.overflow < stats.produced);
    } else {
        CHECK_EQ_U(sink.overflow, 0);
        CHECK_EQ_U(sink.discard + delivered, THREADS * EVENTS);
        CHECK_EQ_U(sink.discard, stats.dropped);
    }
    free(sink.list);
}

TEST(flight_dump_threads) { threads_and_losses(FLIGHTREC_MODE_FLIGHT, 0); }
TEST(flight_drain_threads) { threads_and_losses(FLIGHTREC_MODE_FLIGHT, 1); }
TEST(discard_dump_threads) { threads_and_losses(FLIGHTREC_MODE_DISCARD, 0); }
TEST(discard_drain_threads) { threads_and_losses(FLIGHTREC_MODE_DISCARD, 1); }

TEST(flight_overflow_count_is_exact)
{
    set_up(64, FLIGHTREC_MODE_FLIGHT);
    for (int i = 0; i < 1000; i++) {
        test_now += 2;
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    }
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    struct sink sink = { 0 };
    decode_now(&sink, 0, 0);
    /* Losses count the program's events, not ring items: the events
     * delivered and the events reported lost add up to the 1000 produced,
     * whatever uptime pairs were overwritten with them. */
    CHECK(sink.count > 0 && sink.count < 64 - FLIGHTREC_MAX_PENDING);
    CHECK(stats.produced > 1000); /* the ring also held uptime pairs */
    CHECK_EQ_U(sink.overflow + sink.count, 1000);
    CHECK_EQ_U(sink.list[0].rec.data, 1000 - sink.count);
    for (size_t i = 0; i < sink.count; i++) {
        CHECK_EQ_U(sink.list[i].rec.flags, 0);
        uint64_t data = sink.list[i].rec.data;
        CHECK_EQ_U(sink.list[i].rec.time_ns, ns_at(BASE + 2 * (data + 1)));
    }
    CHECK_EQ_U(sink.list[sink.count - 1].rec.data, 999);
    free(sink.list);
}

/* The oldest items of a flight ring whose pair was overwritten, followed by
 * an idle gap: they are timed exactly from the restated pair that the
 * producer writes before the pair that follows a gap. */
TEST(items_before_a_gap_keep_exact_times)
{
    set_up(32, FLIGHTREC_MODE_FLIGHT); /* 24 held, a pair per 8 items */
    uint64_t x[7], g;
    for (int i = 0; i < 7; i++) {
        test_now += 1;
        x[i] = test_now;
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    }
    test_now += 12500000; /* 50 ms idle */
    g = test_now;
    flightrec_produce(FLIGHTREC_USER(2), 100);
    /* Ten more: the first pair (positions 0 and 1) is overwritten, the
     * seven items after it are held. */
    for (int i = 0; i < 10; i++) {
        test_now += 3;
        flightrec_produce(FLIGHTREC_USER(3), (uintptr_t)i);
    }
    struct sink sink = { 0 };
    decode_now(&sink, 0, 0);
    /* Only the recorder's own first pair was overwritten: no event of the
     * program is lost, and none is reported lost. */
    CHECK_EQ_U(sink.overflow, 0);
    CHECK_EQ_U(sink.count, 18);
    for (int i = 0; i < 7; i++) {
        CHECK_EQ_U(sink.list[i].rec.data, i);
        CHECK_EQ_U(sink.list[i].rec.flags, 0);
        CHECK_EQ_U(sink.list[i].rec.time_ns, ns_at(x[i]));
    }
    CHECK_EQ_U(sink.list[7].rec.time_ns, ns_at(g));
    CHECK_EQ_U(sink.list[17].rec.time_ns, ns_at(g + 30));
    free(sink.list);
}

TEST(signal_ring_is_attributed)
{
    set_up(1024, FLIGHTREC_MODE_FLIGHT);
    test_now += 10;
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_USER(1), 1);
    test_now += 5;
    /* What a signal handler does when it interrupts the record. */
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_ENTRY, 10);
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_EXIT, 10);
    flightrec_add(&ctx, FLIGHTREC_USER(1), 2);
    flightrec_commit(&ctx);

    struct sink sink = { 0 };
    decode_now(&sink, 0, 0);
    CHECK_EQ_U(sink.count, 4);
    /* In time order: the record (at +10) before the handler (at +15). */
    CHECK_EQ_U(sink.list[0].rec.data, 1);
    CHECK_EQ_U(sink.list[1].rec.data, 2);
    CHECK_EQ_U(sink.list[1].rec.time_ns, ns_at(BASE + 10));
    CHECK_EQ_U(sink.list[2].rec.event, FLIGHTREC_EV_INTERRUPT_ENTRY);
    CHECK_EQ_U(sink.list[2].rec.time_ns, ns_at(BASE + 15));
    CHECK(sink.list[2].rec.ring != sink.list[0].rec.ring);
    CHECK_EQ_I(sink.list[2].tid, sink.list[0].tid);
    free(sink.list);
}

/* A drain whose write is cut short, then fails (the file system fills up,
 * here a file size limit), then works again: the stream stays aligned, the
 * real decoder reads it to the end, and the events the failed drain held
 * show as missing, exactly. */
TEST(failed_write_leaves_no_partial_item)
{
    FILE *file = tmpfile();
    CHECK(file != NULL);
    int fd = fileno(file);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        set_up(4096, FLIGHTREC_MODE_FLIGHT);
        signal(SIGXFSZ, SIG_IGN);
        for (int i = 0; i < 100; i++) {
            test_now += 2;
            flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
        }
        if (flightrec_drain(fd) != 0)
            exit(2);
        struct rlimit limit;
        getrlimit(RLIMIT_FSIZE, &limit);
        struct rlimit small = limit;
        /* Room for part of the next drain: the write stops mid-item. */
        small.rlim_cur = (rlim_t)lseek(fd, 0, SEEK_END) + 1000 + 5;
        setrlimit(RLIMIT_FSIZE, &small);
        for (int i = 100; i < 1100; i++) {
            test_now += 2;
            flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
        }
        if (flightrec_drain(fd) != -EFBIG)
            exit(3);
        setrlimit(RLIMIT_FSIZE, &limit); /* space again */
        for (int i = 1100; i < 1200; i++) {
            test_now += 2;
            flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
        }
        exit(flightrec_drain(fd) == 0 ? 0 : 4);
    }
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);

    size_t len;
    unsigned char *bytes = sp_read_fd(fd, &len);
    fclose(file);
    struct sink sink = { 0 };
    struct flightrec_client_options options = {
        .on_record = collect, .arg = &sink, .merge = 1,
    };
    flightrec_client *client;
    CHECK_EQ_I(flightrec_client_create(&client, &options), 0);
    CHECK_EQ_I(flightrec_client_feed(client, bytes, len), 0);
    CHECK_EQ_I(flightrec_client_finish(client), 0);
    flightrec_client_destroy(client);
    free(bytes);
    /* Delivered in order; the gap is the one missing run. */
    uint64_t next = 0, gap = 0;
    for (size_t i = 0; i < sink.count; i++) {
        uint64_t data = sink.list[i].rec.data;
        CHECK(data >= next);
        gap += data - next;
        next = data + 1;
    }
    CHECK_EQ_U(next, 1200);
    CHECK(gap > 0);
    CHECK(sink.count > 100 + 100); /* part of the cut drain got through */
    CHECK_EQ_U(sink.missing, gap);
    CHECK_EQ_U(sink.overflow + sink.discard, 0);
    CHECK_EQ_U(sink.count + sink.missing, 1200);
    free(sink.list);
}

TEST_MAIN()
