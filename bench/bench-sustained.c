/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sustained recording rate with zero loss: discard mode at the default
 * ring sizes, one producer thread paced at a target rate, one thread
 * draining to /dev/null without pause.  A trial runs for a fixed time and
 * passes if flightrec_get_stats() counts no dropped item; the highest
 * passing rate is found by doubling and then bisecting.  The search is
 * repeated; the figure is the rate the producer achieved in the best
 * passing trial of each search.  Public API only.
 *
 *   bench-sustained [--trial-ms N] [--searches N]   (defaults 300, 5)
 */
#include <flightrec.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"

static _Atomic int draining;
static int devnull;

static void *drainer(void *arg)
{
    (void)arg;
    while (atomic_load_explicit(&draining, memory_order_relaxed))
        if (flightrec_drain(devnull) != 0)
            abort();
    return NULL;
}

struct trial {
    double target;      /* events/s, 0: unpaced */
    uint64_t ns;        /* trial length */
    double achieved;    /* events/s */
    uint64_t produced, dropped;
};

static void *producer(void *arg)
{
    struct trial *t = arg;
    flightrec_produce(FLIGHTREC_USER(1), 0); /* attach before timing */
    uint64_t start = bench_now_ns(), now = start, n = 0;
    while (now - start < t->ns) {
        for (int i = 0; i < 256; i++)
            flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)n++);
        now = bench_now_ns();
        if (t->target > 0) {
            /* Wait until the schedule catches up with what was produced. */
            uint64_t due = start + (uint64_t)((double)n * 1e9 / t->target);
            while (now < due && due - start < t->ns + 1000000)
                now = bench_now_ns();
        }
    }
    t->produced = n;
    t->achieved = (double)n * 1e9 / (double)(now - start);
    return NULL;
}

static void run_trial(struct trial *t)
{
    struct flightrec_stats before, after;
    flightrec_get_stats(&before);
    pthread_t thread;
    if (pthread_create(&thread, NULL, producer, t) != 0 ||
        pthread_join(thread, NULL) != 0)
        abort();
    flightrec_get_stats(&after);
    t->dropped = after.dropped - before.dropped;
}

/* The highest rate of one search that lost nothing (achieved rate). */
static double search(uint64_t trial_ns, double ceiling)
{
    double good = 0, bad = 0, rate = 1e6;
    while (bad == 0 && rate < 2 * ceiling) {
        struct trial t = { rate, trial_ns, 0, 0, 0 };
        run_trial(&t);
        if (t.dropped == 0) {
            good = t.achieved;
            rate *= 2;
        } else {
            bad = rate;
        }
    }
    if (bad == 0)
        return good;
    double low = bad / 2;
    for (int step = 0; step < 6; step++) {
        double mid = (low + bad) / 2;
        struct trial t = { mid, trial_ns, 0, 0, 0 };
        run_trial(&t);
        if (t.dropped == 0) {
            low = mid;
            if (t.achieved > good)
                good = t.achieved;
        } else {
            bad = mid;
        }
    }
    return good;
}

int main(int argc, char **argv)
{
    int trial_ms = 300, searches = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--trial-ms") == 0)
            trial_ms = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--searches") == 0)
            searches = atoi(argv[i + 1]);
    }
    if (trial_ms < 1 || searches < 1) {
        fprintf(stderr, "usage: bench-sustained [--trial-ms N] "
                        "[--searches N]\n");
        return 2;
    }
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.mode = FLIGHTREC_MODE_DISCARD;
    if (flightrec_setup(&config) != 0)
        return 1;
    devnull = open("/dev/null", O_WRONLY);
    if (devnull < 0)
        return 1;
    flightrec_counter_frequency(); /* calibration out of the way */
    atomic_store(&draining, 1);
    pthread_t drain_thread;
    if (pthread_create(&drain_thread, NULL, drainer, NULL) != 0)
        return 1;

    uint64_t trial_ns = (uint64_t)trial_ms * 1000000u;
    struct trial unpaced = { 0, trial_ns, 0, 0, 0 };
    run_trial(&unpaced);
    double *rates = calloc((size_t)searches, sizeof(*rates));
    for (int i = 0; i < searches; i++)
        rates[i] = search(trial_ns, unpaced.achieved);
    atomic_store(&draining, 0);
    pthread_join(drain_thread, NULL);

    struct bench_summary s = bench_summarize(rates, (size_t)searches);
    printf("flightrec sustained rate, discard mode, %u-item rings, one "
           "producer, one draining thread, %d ms trials\n\n",
           config.items_per_ring, trial_ms);
    printf("unpaced producer:        %8.2f M events/s, %.2f%% dropped\n",
           unpaced.achieved / 1e6,
           100.0 * (double)unpaced.dropped / (double)unpaced.produced);
    printf("zero loss, %d searches:  %8.2f M events/s median "
           "(min %.2f, max %.2f)\n", searches, s.median / 1e6, s.min / 1e6,
           s.max / 1e6);
    free(rates);
    return 0;
}
