/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Workloads for bench/record-overhead.sh, run plain and under tracers:
 *
 *   bench-record-workload locks [ITERATIONS [WORK]]   two threads, each
 *       taking its own mutex every iteration and a shared one every 16th
 *   bench-record-workload malloc [ITERATIONS [WORK]]  one thread: malloc of
 *       16..527 bytes into one of 256 slots, freeing the slot's previous one
 *
 * WORK (default 0): steps of a dependent multiply chain each iteration
 * does besides its calls (about a nanosecond each), for a program that
 * computes between its calls instead of only calling.
 *
 * Prints "ns/op N": the loop's time (CLOCK_MONOTONIC, start-up excluded)
 * per iteration; "cpu-ns/op N": the CPU time of the whole process (all its
 * threads, a tracer's own in-process threads included) meanwhile, per
 * iteration, which waiting for a CPU on a loaded machine does not inflate;
 * "work-cpu-ns/op N": the CPU time of the workload's own threads alone (the
 * rest of cpu-ns/op is a tracer's threads: flightrec's drain thread);
 * and "calls/op N": the wrapped calls all threads make per iteration
 * (locks: 2 threads of 2.125 each; malloc: 2).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long iterations = 200000;
static long work;

/* WORK steps of computation the compiler cannot drop. */
static void compute(void)
{
    static volatile uint32_t sink;
    uint32_t x = sink;
    for (long i = 0; i < work; i++)
        x = x * 2654435761u + 1u;
    sink = x;
}
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t shared_count;

/* CPU time the lock worker thread used, read by itself before it ends. */
static uint64_t worker_cpu_ns;

static void *lock_worker(void *arg)
{
    pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
    volatile uint64_t count = 0;
    for (long i = 0; i < iterations; i++) {
        compute();
        pthread_mutex_lock(&own);
        count++;
        pthread_mutex_unlock(&own);
        if ((i & 15) == 0) {
            pthread_mutex_lock(&shared);
            shared_count++;
            pthread_mutex_unlock(&shared);
        }
    }
    if (arg != NULL)
        worker_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return arg;
}

static void *volatile slots[256];

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (argc > 2)
        iterations = atol(argv[2]);
    if (argc > 3)
        work = atol(argv[3]);
    uint64_t start = clock_ns(CLOCK_MONOTONIC);
    uint64_t cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t main_cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    double calls_per_iteration;
    if (strcmp(argv[1], "locks") == 0) {
        calls_per_iteration = 2.0 * (2.0 + 2.0 / 16.0);
        pthread_t t;
        static char worker_marker;
        pthread_create(&t, NULL, lock_worker, &worker_marker);
        lock_worker(NULL);
        pthread_join(t, NULL);
    } else if (strcmp(argv[1], "malloc") == 0) {
        calls_per_iteration = 2.0;
        uint32_t x = 12345;
        for (long i = 0; i < iterations; i++) {
            compute();
            x = x * 1103515245u + 12345u;
            size_t slot = (x >> 8) & 255u;
            free(slots[slot]);
            slots[slot] = malloc(16 + ((x >> 16) & 511u));
        }
        for (size_t i = 0; i < 256; i++)
            free(slots[i]);
    } else {
        return 2;
    }
    uint64_t elapsed = clock_ns(CLOCK_MONOTONIC) - start;
    uint64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
    /* The worker started after main_cpu_start: all its time counts. */
    uint64_t work_cpu =
        clock_ns(CLOCK_THREAD_CPUTIME_ID) - main_cpu_start + worker_cpu_ns;
    printf("ns/op %.1f\ncpu-ns/op %.1f\nwork-cpu-ns/op %.1f\ncalls/op %.3f\n",
           (double)elapsed / (double)iterations,
           (double)cpu / (double)iterations,
           (double)work_cpu / (double)iterations, calls_per_iteration);
    return 0;
}
