/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * First-event cost of a new thread with many rings already registered:
 * the rings of threads that recorded one event and exited, kept by a large
 * retained_rings.  Each count runs in a child process of its own, so that
 * every count starts from an empty registry.  Each sample is a new thread
 * timing its own first flightrec_produce() (attach included); every sample
 * adds its thread's rings, so the count grows a little while sampling.
 *
 *   bench-attach [--items N] [--samples N] [RINGS...]
 *
 * Defaults: rings of 64 items (the attach cost does not depend on their
 * size), 15 samples, 10 1000 100000 rings.  Public API only.
 */
#include <flightrec.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

static void *one_event(void *arg)
{
    (void)arg;
    flightrec_produce(FLIGHTREC_USER(1), 0);
    return NULL;
}

static void *timed_first_event(void *arg)
{
    uint64_t start = bench_now_ns();
    flightrec_produce(FLIGHTREC_USER(2), 0);
    *(double *)arg = (double)(bench_now_ns() - start);
    return NULL;
}

static uint32_t ring_count(void)
{
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    return stats.rings;
}

static int run_thread(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return rc;
    return pthread_join(thread, NULL);
}

/* In a child: registers @rings rings, then samples. */
static int measure(uint32_t rings, uint32_t items, int samples)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = items;
    config.signal_items_per_ring = 16;
    config.retained_rings = rings + 2u * (uint32_t)samples + 16;
    int rc = flightrec_setup(&config);
    if (rc != 0) {
        fprintf(stderr, "bench-attach: setup failed (%d)\n", rc);
        return 1;
    }
    uint64_t start = bench_now_ns();
    /* Each exited thread leaves a pair; counting the rings walks them all,
     * so count only now and then (the setup stays linear). */
    for (uint32_t have = ring_count(); have < rings; have = ring_count()) {
        for (uint32_t n = (rings - have + 1) / 2; n > 0; n--) {
            if (run_thread(one_event, NULL) != 0) {
                fprintf(stderr, "bench-attach: thread creation failed\n");
                return 1;
            }
        }
    }
    double setup_s = (double)(bench_now_ns() - start) / 1e9;
    uint32_t before = ring_count();
    double *ns = calloc((size_t)samples, sizeof(*ns));
    for (int i = 0; i < samples; i++)
        if (run_thread(timed_first_event, &ns[i]) != 0)
            return 1;
    uint32_t after = ring_count();
    struct bench_summary s = bench_summarize(ns, (size_t)samples);
    printf("%8u %8u-%-8u %12.1f %12.1f %12.1f %10.1f\n", rings, before,
           after, s.median / 1e3, s.min / 1e3, s.max / 1e3, setup_s);
    free(ns);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t items = 64;
    int samples = 15;
    int first = 1;
    while (first + 1 < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "--items") == 0)
            items = (uint32_t)strtoul(argv[first + 1], NULL, 10);
        else if (strcmp(argv[first], "--samples") == 0)
            samples = atoi(argv[first + 1]);
        else
            break;
        first += 2;
    }
    if (samples < 1) {
        fprintf(stderr, "usage: bench-attach [--items N] [--samples N] "
                        "[RINGS...]\n");
        return 2;
    }
    static const uint32_t defaults[] = { 10, 1000, 100000 };
    size_t counts = argc > first ? (size_t)(argc - first) : 3;

    printf("flightrec first event of a new thread: rings of %u items, "
           "%d samples each (new threads, one after another)\n\n",
           items, samples);
    printf("%8s %17s %12s %12s %12s %10s\n", "rings", "while sampling",
           "median us", "min us", "max us", "setup s");
    fflush(stdout);
    for (size_t i = 0; i < counts; i++) {
        uint32_t rings = argc > first
                             ? (uint32_t)strtoul(argv[first + (int)i], NULL, 10)
                             : defaults[i];
        pid_t pid = fork();
        if (pid == 0) {
            int rc = measure(rings, items, samples);
            fflush(stdout);
            _exit(rc);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid ||
            !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench-attach: the run with %u rings failed\n",
                    rings);
            return 1;
        }
    }
    return 0;
}
