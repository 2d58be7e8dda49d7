/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Threads and processes: ring identity (thread id and name, renames),
 * rings that outlive their thread, bounded memory over many short-lived
 * threads, and fork().
 */
#include "producer-test.h"

#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int32_t gettid_now(void)
{
    return (int32_t)syscall(SYS_gettid);
}

struct worker_arg {
    const char *name;
    int events;
    int32_t tid;
};

static void *named_worker(void *p)
{
    struct worker_arg *arg = p;
    pthread_setname_np(pthread_self(), arg->name);
    arg->tid = gettid_now();
    for (int i = 0; i < arg->events; i++)
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    return NULL;
}

TEST(ring_carries_thread_identity)
{
    struct worker_arg arg = { "worker-one", 5, 0 };
    pthread_t thread;
    CHECK_EQ_I(pthread_create(&thread, NULL, named_worker, &arg), 0);
    CHECK_EQ_I(pthread_join(thread, NULL), 0);
    /* The thread has exited: its ring still holds its items. */
    struct sp_stream s;
    capture(&s, 0);
    const struct sp_chunk *c = chunk_of(&s, 0);
    CHECK(c != NULL);
    CHECK_EQ_I(c->tid, arg.tid);
    CHECK_EQ_S(c->name, "worker-one");
    struct sp_item items[8];
    CHECK_EQ_U(user_items(&s, 0, items, 8), 5);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_U(items[i].data, i);
    sp_free(&s);
}

TEST(rename_is_picked_up)
{
    pthread_setname_np(pthread_self(), "before");
    flightrec_produce(FLIGHTREC_USER(1), 1);
    FILE *file = tmpfile();
    int fd = fileno(file);
    CHECK_EQ_I(flightrec_drain(fd), 0);
    pthread_setname_np(pthread_self(), "after rename");
    flightrec_produce(FLIGHTREC_USER(1), 2);
    CHECK_EQ_I(flightrec_drain(fd), 0);
    struct sp_stream s;
    parse_file(&s, file);
    CHECK_EQ_U(s.chunk_count, 2);
    CHECK_EQ_S(s.chunks[0].name, "before");
    CHECK_EQ_S(s.chunks[1].name, "after rename");
    CHECK_EQ_I(s.chunks[1].tid, gettid_now());
    sp_free(&s);

    struct sp_stream d;
    capture(&d, 0);
    CHECK_EQ_S(chunk_of(&d, 0)->name, "after rename");
    sp_free(&d);
}

static void *one_event(void *p)
{
    flightrec_produce(FLIGHTREC_USER(2), (uintptr_t)p);
    return NULL;
}

static void run_short_threads(int count)
{
    for (int i = 0; i < count; i++) {
        pthread_t thread;
        CHECK_EQ_I(pthread_create(&thread, NULL, one_event,
                                  (void *)(uintptr_t)i), 0);
        CHECK_EQ_I(pthread_join(thread, NULL), 0);
    }
}

TEST(many_short_threads_bounded)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = 64;
    config.retained_rings = 8;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    run_short_threads(10000);
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    /* Pairs: retained + 1 (documented bound, no thread alive now). */
    CHECK_EQ_U(stats.rings, 2 * (8 + 1));
    CHECK_EQ_U(stats.live_rings, 0);

    /* The dump holds the items of the 9 most recent threads. */
    struct sp_stream s;
    capture(&s, 0);
    size_t threads = 0;
    for (size_t i = 0; i < s.chunk_count; i++) {
        const struct sp_chunk *c = &s.chunks[i];
        if (c->context != 0)
            continue;
        struct sp_item items[4];
        CHECK_EQ_U(user_items(&s, c->ring, items, 4), 1);
        CHECK(items[0].data >= 10000 - 9);
        threads++;
    }
    CHECK_EQ_U(threads, 9);
    sp_free(&s);
}

TEST(drained_rings_are_reused_first)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = 64;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    FILE *file = tmpfile();
    for (int round = 0; round < 1000; round++) {
        run_short_threads(1);
        CHECK_EQ_I(flightrec_drain(fileno(file)), 0);
    }
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    /* Every exited thread's items were drained before the next started. */
    CHECK_EQ_U(stats.rings, 2);
    struct sp_stream s;
    parse_file(&s, file);
    /* 1000 threads, one item each, all delivered: nothing lost. */
    size_t delivered = 0;
    for (size_t i = 0; i < s.chunk_count; i++) {
        CHECK_EQ_U(s.chunks[i].overflow, 0);
        for (size_t j = 0; j < s.chunks[i].count; j++)
            delivered += s.chunks[i].items[j].event == FLIGHTREC_USER(2);
    }
    CHECK_EQ_U(delivered, 1000);
    sp_free(&s);
}

TEST(fork_child_records_fresh)
{
    flightrec_produce(FLIGHTREC_USER(3), 1);
    flightrec_produce(FLIGHTREC_USER(3), 2);
    FILE *file = tmpfile();
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        flightrec_produce(FLIGHTREC_USER(4), 3);
        _exit(flightrec_dump(fileno(file)) == 0 ? 0 : 1);
    }
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct sp_stream s;
    parse_file(&s, file);
    CHECK_EQ_I(s.pid, child);
    const struct sp_chunk *c = chunk_of(&s, 0);
    CHECK_EQ_I(c->tid, child); /* the child's only thread */
    struct sp_item items[8];
    CHECK_EQ_U(user_items(&s, 0, items, 8), 1);
    CHECK_EQ_U(items[0].event, FLIGHTREC_USER(4));
    CHECK_EQ_U(items[0].data, 3);
    /* Its first item is timed: a sync pair comes first. */
    CHECK_EQ_U(c->items[0].event, FLIGHTREC_EV_UPTIME_LOW);
    sp_free(&s);

    /* The parent's rings are untouched. */
    struct sp_stream p;
    capture(&p, 0);
    CHECK_EQ_U(user_items(&p, 0, items, 8), 2);
    CHECK_EQ_U(items[1].data, 2);
    sp_free(&p);
}

struct reuse_arg {
    sem_t ready, go;
};

static void *record_after_cleanup(void *p)
{
    struct reuse_arg *arg = p;
    flightrec_produce(FLIGHTREC_USER(5), 1); /* takes the drained pair */
    sem_post(&arg->ready);
    sem_wait(&arg->go);
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_USER(5), 2);
    flightrec_produce(FLIGHTREC_USER(6), 3); /* as a handler would */
    flightrec_add(&ctx, FLIGHTREC_USER(5), 4);
    flightrec_commit(&ctx);
    return NULL;
}

TEST(reused_pair_survives_cleanup)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = 64;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    run_short_threads(1);
    FILE *file = tmpfile();
    CHECK_EQ_I(flightrec_drain(fileno(file)), 0);
    fclose(file);

    struct reuse_arg arg;
    sem_init(&arg.ready, 0, 0);
    sem_init(&arg.go, 0, 0);
    pthread_t thread;
    CHECK_EQ_I(pthread_create(&thread, NULL, record_after_cleanup, &arg), 0);
    sem_wait(&arg.ready);
    flightrec_cleanup(); /* keeps the live thread's pair, both rings */
    flightrec_start();
    sem_post(&arg.go);
    CHECK_EQ_I(pthread_join(thread, NULL), 0);

    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    CHECK_EQ_U(stats.rings, 2);
    struct sp_stream s;
    capture(&s, 0);
    struct sp_item items[8];
    CHECK_EQ_U(user_items(&s, 0, items, 8), 2);
    CHECK_EQ_U(items[0].data, 2);
    CHECK_EQ_U(items[1].data, 4);
    CHECK_EQ_U(user_items(&s, 1, items, 8), 1);
    CHECK_EQ_U(items[0].data, 3);
    sp_free(&s);
}

TEST(fork_inside_a_record)
{
    flightrec_produce(FLIGHTREC_USER(0), 0);
    FILE *file = tmpfile();
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_USER(3), 3);
    flightrec_add(&ctx, FLIGHTREC_USER(4), 4);
    pid_t child = fork(); /* as a signal handler might, mid-record */
    if (child == 0) {
        flightrec_produce(FLIGHTREC_USER(5), 5); /* the handler's event */
        flightrec_add(&ctx, FLIGHTREC_USER(6), 6);
        flightrec_commit(&ctx);
        _exit(flightrec_dump(fileno(file)) == 0 ? 0 : 1);
    }
    flightrec_commit(&ctx);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct sp_stream s;
    parse_file(&s, file);
    /* The child's main ring: the interrupted record, whole. */
    struct sp_item items[8];
    CHECK_EQ_U(user_items(&s, 0, items, 8), 3);
    CHECK_EQ_U(items[0].data, 3);
    CHECK_EQ_U(items[1].data, 4);
    CHECK_EQ_U(items[2].data, 6);
    /* The handler's event: in the signal ring. */
    CHECK_EQ_U(user_items(&s, 1, items, 8), 1);
    CHECK_EQ_U(items[0].data, 5);
    sp_free(&s);
}

TEST_MAIN()
