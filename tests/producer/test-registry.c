/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ring registry from a user's side: no event lost while the runtime
 * starts, a bound on rings whatever threads do, attach in constant steps,
 * losses that stay with the thread that had them, no ring left behind by a
 * signal after a thread's exit.
 */
#include "producer-test.h"

#include <flightrec/region.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Pairs looked at by attaches so far (registry.c). */
extern uint64_t flightrec__attach_steps;

/*=====   Start-up   =====*/

#define STARTERS 8
#define STARTER_EVENTS 50

static pthread_barrier_t start_barrier;

static void *starter(void *arg)
{
    uintptr_t index = (uintptr_t)arg;
    pthread_barrier_wait(&start_barrier);
    for (uintptr_t i = 0; i < STARTER_EVENTS; i++)
        flightrec_produce(FLIGHTREC_USER(index), i);
    return NULL;
}

/* In a fresh process: eight threads released together record the first
 * events the runtime ever sees; the dump goes to @fd. */
static void start_together(int fd)
{
    pthread_t threads[STARTERS];
    pthread_barrier_init(&start_barrier, NULL, STARTERS);
    for (uintptr_t i = 0; i < STARTERS; i++)
        pthread_create(&threads[i], NULL, starter, (void *)i);
    for (int i = 0; i < STARTERS; i++)
        pthread_join(threads[i], NULL);
    exit(flightrec_dump(fd) == 0 ? 0 : 3); /* exit(): its session file goes */
}

TEST(no_event_lost_while_starting)
{
    /* The race is short: many fresh processes, each its own start-up. */
    for (int run = 0; run < 60; run++) {
        FILE *file = tmpfile();
        CHECK(file != NULL);
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0)
            start_together(fileno(file));
        int status;
        CHECK_EQ_I(waitpid(child, &status, 0), child);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        struct sp_stream s;
        parse_file(&s, file);
        uint64_t seen[STARTERS] = { 0 };
        uint64_t lost = 0;
        for (size_t c = 0; c < s.chunk_count; c++) {
            lost += s.chunks[c].overflow + s.chunks[c].discard;
            for (size_t i = 0; i < s.chunks[c].count; i++) {
                uint32_t e = s.chunks[c].items[i].event;
                if (e >= FLIGHTREC_USER(0) && e < FLIGHTREC_USER(STARTERS)) {
                    CHECK_EQ_U(s.chunks[c].items[i].data,
                               seen[e - FLIGHTREC_USER(0)]);
                    seen[e - FLIGHTREC_USER(0)]++;
                }
            }
        }
        for (int t = 0; t < STARTERS; t++)
            CHECK_EQ_U(seen[t], STARTER_EVENTS);
        CHECK_EQ_U(lost, 0);
        sp_free(&s);
    }
}

/*=====   The bound on rings under churn   =====*/

static void *one_event(void *arg)
{
    (void)arg;
    flightrec_produce(FLIGHTREC_USER(1), 1);
    return NULL;
}

/* @together threads start and exit at once, round after round: at no
 * moment are more than @together threads alive besides this one. */
static void churn(int together, int rounds, uint32_t retained)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = 16;
    config.retained_rings = retained;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    flightrec_produce(FLIGHTREC_USER(0), 0); /* this thread: one pair */
    pthread_t threads[64];
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < together; i++)
            CHECK_EQ_I(pthread_create(&threads[i], NULL, one_event, NULL), 0);
        for (int i = 0; i < together; i++)
            CHECK_EQ_I(pthread_join(threads[i], NULL), 0);
    }
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    /* Pairs: this thread's, those of the threads alive at once, and the
     * retained ones (docs/recording.md). */
    CHECK(stats.rings <= 2 * (1 + (uint32_t)together + retained));
    CHECK_EQ_U(stats.live_rings, 2);
}

TEST(bound_holds_one_at_a_time) { churn(1, 3000, 4); }
TEST(bound_holds_two_at_a_time) { churn(2, 1500, 4); }
TEST(bound_holds_eight_at_a_time) { churn(8, 400, 4); }
TEST(bound_holds_fifty_at_a_time) { churn(50, 60, 4); }

/*=====   Attach in constant steps   =====*/

static pthread_barrier_t hold_barrier;

static void *hold(void *arg)
{
    (void)arg;
    flightrec_produce(FLIGHTREC_USER(1), 1);
    pthread_barrier_wait(&hold_barrier);
    return NULL;
}

/* Steps of one new thread's first event with @rings_before pairs of
 * exited threads retained. */
static uint64_t attach_steps_with(int pairs_before)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = 16;
    config.retained_rings = 100000;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    /* Threads alive together (so none reuses another's pair), then gone:
     * their pairs are retained with unread items. */
    pthread_t *threads = calloc((size_t)pairs_before, sizeof(*threads));
    pthread_barrier_init(&hold_barrier, NULL, (unsigned)pairs_before + 1);
    /* Small stacks: thousands of threads at once fit a 32-bit process. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < pairs_before; i++)
        CHECK_EQ_I(pthread_create(&threads[i], &attr, hold, NULL), 0);
    pthread_attr_destroy(&attr);
    pthread_barrier_wait(&hold_barrier);
    for (int i = 0; i < pairs_before; i++)
        CHECK_EQ_I(pthread_join(threads[i], NULL), 0);
    free(threads);
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    CHECK_EQ_U(stats.rings, 2 * (uint32_t)pairs_before);
    uint64_t before = flightrec__attach_steps;
    pthread_t one;
    CHECK_EQ_I(pthread_create(&one, NULL, one_event, NULL), 0);
    CHECK_EQ_I(pthread_join(one, NULL), 0);
    return flightrec__attach_steps - before;
}

TEST(attach_steps_do_not_grow_with_rings)
{
    CHECK_EQ_U(attach_steps_with(10), 1);
}

TEST(attach_steps_with_many_rings)
{
    CHECK_EQ_U(attach_steps_with(2000), 1);
}

/*=====   Losses stay with their owner   =====*/

static atomic_int_least32_t dropper_tid;

static void *dropper(void *arg)
{
    (void)arg;
    atomic_store(&dropper_tid, (int32_t)gettid());
    for (uintptr_t i = 0; i < 100; i++)
        flightrec_produce(FLIGHTREC_USER(1), i);
    return NULL;
}

static void *latecomer(void *arg)
{
    (void)arg;
    for (uintptr_t i = 0; i < 3; i++)
        flightrec_produce(FLIGHTREC_USER(2), i);
    return NULL;
}

TEST(discard_losses_stay_with_the_thread_that_had_them)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = 16;
    config.mode = FLIGHTREC_MODE_DISCARD;
    config.retained_rings = 0;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    FILE *file = tmpfile();
    int fd = fileno(file);
    CHECK_EQ_I(flightrec_drain(fd), 0); /* a reader from the start */
    pthread_t t;
    CHECK_EQ_I(pthread_create(&t, NULL, dropper, NULL), 0);
    CHECK_EQ_I(pthread_join(t, NULL), 0);
    /* No drain in between: the latecomer takes the dropper's pair. */
    CHECK_EQ_I(pthread_create(&t, NULL, latecomer, NULL), 0);
    CHECK_EQ_I(pthread_join(t, NULL), 0);
    CHECK_EQ_I(flightrec_drain(fd), 0);
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    CHECK_EQ_U(stats.rings, 2); /* the pair was reused */

    struct sp_stream s;
    parse_file(&s, file);
    int32_t first = atomic_load(&dropper_tid);
    uint64_t first_events = 0, first_lost = 0, late_events = 0, late_lost = 0;
    for (size_t c = 0; c < s.chunk_count; c++) {
        const struct sp_chunk *chunk = &s.chunks[c];
        uint64_t events = 0;
        for (size_t i = 0; i < chunk->count; i++)
            events += chunk->items[i].event >= FLIGHTREC_USER(0);
        if (chunk->tid == first) {
            first_events += events;
            first_lost += chunk->overflow + chunk->discard;
        } else {
            late_events += events;
            late_lost += chunk->overflow + chunk->discard;
        }
    }
    /* The dropper's 100 events: what the ring kept (never read: lost to
     * the reuse) and what it dropped, all under its own thread id. */
    CHECK_EQ_U(first_events, 0);
    CHECK_EQ_U(first_lost, 100);
    CHECK_EQ_U(late_events, 3);
    CHECK_EQ_U(late_lost, 0);
    sp_free(&s);
}

/* A pair whose items a drain has read goes back to the pool, but until a
 * new thread takes it a dump still shows its thread's last events (the
 * post-mortem view of an exited worker). */
TEST(drained_exited_thread_still_dumps)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    pthread_t t;
    CHECK_EQ_I(pthread_create(&t, NULL, dropper, NULL), 0);
    CHECK_EQ_I(pthread_join(t, NULL), 0);
    FILE *drained = tmpfile();
    CHECK_EQ_I(flightrec_drain(fileno(drained)), 0);
    fclose(drained);
    struct sp_stream s;
    capture(&s, 0);
    int32_t tid = atomic_load(&dropper_tid);
    size_t events = 0;
    uint64_t last = 0;
    for (size_t c = 0; c < s.chunk_count; c++) {
        if (s.chunks[c].tid != tid)
            continue;
        for (size_t i = 0; i < s.chunks[c].count; i++)
            if (s.chunks[c].items[i].event == FLIGHTREC_USER(1)) {
                events++;
                last = s.chunks[c].items[i].data;
            }
    }
    CHECK(events > 0);
    CHECK_EQ_U(last, 99);
    sp_free(&s);
}

/*=====   Signals after a thread's exit   =====*/

static atomic_int storm_on;
/* Lock-free on every host (32 bits where 64-bit atomics are not). */
static _Atomic flightrec_region_word storm_handled;

static void storm_handler(int sig)
{
    (void)sig;
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_ENTRY, 10);
    atomic_fetch_add(&storm_handled, 1);
}

struct worker_slot {
    pthread_t thread;
    int alive;              /* under slot_lock: joinable, may be signalled */
};

static struct worker_slot slots[4];
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static void *short_worker(void *arg)
{
    struct worker_slot *slot = arg;
    for (uintptr_t i = 0; i < 20; i++)
        flightrec_produce(FLIGHTREC_USER(1), i);
    (void)slot;
    return NULL;
}

static void *storm(void *arg)
{
    (void)arg;
    while (atomic_load(&storm_on)) {
        pthread_mutex_lock(&slot_lock);
        for (int i = 0; i < 4; i++)
            if (slots[i].alive)
                pthread_kill(slots[i].thread, SIGUSR1);
        pthread_mutex_unlock(&slot_lock);
        sched_yield();
    }
    return NULL;
}

TEST(signals_while_threads_exit_leave_no_live_ring)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = storm_handler;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ_I(sigaction(SIGUSR1, &sa, NULL), 0);
    atomic_store(&storm_on, 1);
    pthread_t sender;
    CHECK_EQ_I(pthread_create(&sender, NULL, storm, NULL), 0);
    for (int round = 0; round < 2500; round++) {
        pthread_mutex_lock(&slot_lock);
        for (int i = 0; i < 4; i++) {
            CHECK_EQ_I(pthread_create(&slots[i].thread, NULL, short_worker,
                                      &slots[i]),
                       0);
            slots[i].alive = 1;
        }
        pthread_mutex_unlock(&slot_lock);
        for (int i = 0; i < 4; i++) {
            /* Signals reach the thread until it is joined: while it
             * records, in its exit hook and after it. */
            sched_yield();
            pthread_mutex_lock(&slot_lock);
            slots[i].alive = 0;
            pthread_mutex_unlock(&slot_lock);
            CHECK_EQ_I(pthread_join(slots[i].thread, NULL), 0);
        }
    }
    atomic_store(&storm_on, 0);
    CHECK_EQ_I(pthread_join(sender, NULL), 0);
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    CHECK(atomic_load(&storm_handled) > 0);
    /* Every worker handed its pair back: none of them is live. */
    CHECK_EQ_U(stats.live_rings, 0);
    CHECK(stats.rings <= 2 * (4 + 64 + 1));
}

TEST_MAIN(TEST_ENTRY(no_event_lost_while_starting),
          TEST_ENTRY(bound_holds_one_at_a_time),
          TEST_ENTRY(bound_holds_two_at_a_time),
          TEST_ENTRY(bound_holds_eight_at_a_time),
          TEST_ENTRY(bound_holds_fifty_at_a_time),
          TEST_ENTRY(attach_steps_do_not_grow_with_rings),
          TEST_ENTRY(attach_steps_with_many_rings),
          TEST_ENTRY(discard_losses_stay_with_the_thread_that_had_them),
          TEST_ENTRY(signals_while_threads_exit_leave_no_live_ring))
