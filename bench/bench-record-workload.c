/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Workloads for bench/record-overhead.sh, run plain and under tracers:
 *
 *   bench-record-workload locks [ITERATIONS]   two threads, each taking its
 *       own mutex every iteration and a shared one every 16th
 *   bench-record-workload malloc [ITERATIONS]  one thread: malloc of 16..527
 *       bytes into one of 256 slots, freeing the slot's previous block
 *
 * Prints "ns/op N": the loop's time (CLOCK_MONOTONIC, start-up excluded)
 * per iteration, each iteration making 2 to 3 wrapped calls.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long iterations = 200000;
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t shared_count;

static void *lock_worker(void *arg)
{
    pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
    volatile uint64_t count = 0;
    for (long i = 0; i < iterations; i++) {
        pthread_mutex_lock(&own);
        count++;
        pthread_mutex_unlock(&own);
        if ((i & 15) == 0) {
            pthread_mutex_lock(&shared);
            shared_count++;
            pthread_mutex_unlock(&shared);
        }
    }
    return arg;
}

static void *volatile slots[256];

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (argc > 2)
        iterations = atol(argv[2]);
    uint64_t start = now_ns();
    if (strcmp(argv[1], "locks") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, lock_worker, NULL);
        lock_worker(NULL);
        pthread_join(t, NULL);
    } else if (strcmp(argv[1], "malloc") == 0) {
        uint32_t x = 12345;
        for (long i = 0; i < iterations; i++) {
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
    uint64_t elapsed = now_ns() - start;
    printf("ns/op %.1f\n", (double)elapsed / (double)iterations);
    return 0;
}
