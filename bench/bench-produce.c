/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cost of recording, as ratios against an ideal ring loop measured in the
 * same run (read the counter, two stores, store-release of the head into a
 * 1 MiB ring): flightrec_produce, produce_n per item, a filtered event, a
 * stopped recorder, and two threads recording at once.
 *
 *   bench-produce [events]               timed comparison (median of 7)
 *   bench-produce --only NAME [events]   one loop, for callgrind
 *
 * NAME: ideal, produce, produce_n, filtered, stopped.  Instructions per
 * event come from bench/callgrind-produce.sh (two lengths, differenced).
 */
#include <flightrec.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPEAT 7
#define IDEAL_ITEMS 65536u

struct ideal_item {
    uint64_t event;
    uint64_t data;
};

struct ideal_ring {
    _Atomic uint64_t head;
    struct ideal_item items[IDEAL_ITEMS];
};

static _Thread_local struct ideal_ring *ideal;

static inline void ideal_produce(uint32_t event, uint64_t data)
{
    uint64_t now = flightrec_counter();
    uint64_t head = atomic_load_explicit(&ideal->head, memory_order_relaxed);
    struct ideal_item *item = &ideal->items[head & (IDEAL_ITEMS - 1)];
    item->event = (now << 10) | event;
    item->data = data;
    atomic_store_explicit(&ideal->head, head + 1, memory_order_release);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The loops: noinline wrappers so that each is measured as a whole, with
 * the recording call inlined inside. */
__attribute__((noinline)) static void loop_ideal(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        ideal_produce(FLIGHTREC_USER(1), i);
}

__attribute__((noinline)) static void loop_produce(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
}

#define BATCH 8
__attribute__((noinline)) static void loop_produce_n(uint64_t n)
{
    struct flightrec_item_in items[BATCH];
    for (int i = 0; i < BATCH; i++)
        items[i].event = FLIGHTREC_USER(2);
    for (uint64_t i = 0; i < n; i += BATCH) {
        items[0].data = (uintptr_t)i;
        flightrec_produce_n(items, BATCH);
    }
}

__attribute__((noinline)) static void loop_filtered(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        flightrec_produce(FLIGHTREC_USER(3), (uintptr_t)i);
}

typedef void (*loop_fn)(uint64_t);

struct thread_run {
    loop_fn fn;
    uint64_t n;
    uint64_t ns;
    pthread_barrier_t *barrier;
};

static void *run_thread(void *p)
{
    struct thread_run *run = p;
    ideal = aligned_alloc(64, sizeof(*ideal));
    memset(ideal, 0, sizeof(*ideal));
    run->fn(1000); /* attach and warm up */
    if (run->barrier)
        pthread_barrier_wait(run->barrier);
    uint64_t start = now_ns();
    run->fn(run->n);
    run->ns = now_ns() - start;
    free(ideal);
    return NULL;
}

/* Per-thread nanoseconds per event of @fn run by @threads threads at once. */
static double measure(loop_fn fn, uint64_t n, int threads)
{
    struct thread_run runs[2];
    pthread_t ids[2];
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)threads);
    for (int t = 0; t < threads; t++) {
        runs[t] = (struct thread_run){ fn, n, 0, &barrier };
        pthread_create(&ids[t], NULL, run_thread, &runs[t]);
    }
    double sum = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        sum += (double)runs[t].ns / (double)n;
    }
    pthread_barrier_destroy(&barrier);
    return sum / threads;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v)
{
    qsort(v, REPEAT, sizeof(*v), compare);
    return v[REPEAT / 2];
}

static loop_fn by_name(const char *name)
{
    if (strcmp(name, "ideal") == 0)
        return loop_ideal;
    if (strcmp(name, "produce") == 0)
        return loop_produce;
    if (strcmp(name, "produce_n") == 0)
        return loop_produce_n;
    if (strcmp(name, "filtered") == 0 || strcmp(name, "stopped") == 0)
        return loop_filtered;
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t n = 20000000;
    flightrec_filter_set(FLIGHTREC_USER(3), 0);
    if (argc >= 3 && strcmp(argv[1], "--only") == 0) {
        loop_fn fn = by_name(argv[2]);
        if (fn == NULL) {
            fprintf(stderr, "bench-produce: unknown loop '%s'\n", argv[2]);
            return 2;
        }
        if (argc >= 4)
            n = strtoull(argv[3], NULL, 0);
        if (strcmp(argv[2], "stopped") == 0)
            flightrec_stop();
        struct thread_run run = { fn, n, 0, NULL };
        run_thread(&run);
        return 0;
    }
    if (argc >= 2)
        n = strtoull(argv[1], NULL, 0);

    enum { IDEAL, PRODUCE, PRODUCE_N, FILTERED, STOPPED, IDEAL2, PRODUCE2,
           KINDS };
    static const char *const names[KINDS] = {
        "ideal loop (counter, 2 stores, release)", "flightrec_produce",
        "flightrec_produce_n, per item (8 a call)", "filtered event",
        "stopped recorder", "ideal loop, 2 threads at once",
        "flightrec_produce, 2 threads at once",
    };
    double results[KINDS][REPEAT];
    /* Interleaved repetitions: a noisy moment hits every kind alike. */
    for (int r = 0; r < REPEAT; r++) {
        results[IDEAL][r] = measure(loop_ideal, n, 1);
        results[PRODUCE][r] = measure(loop_produce, n, 1);
        results[PRODUCE_N][r] = measure(loop_produce_n, n, 1);
        results[FILTERED][r] = measure(loop_filtered, n, 1);
        flightrec_stop();
        results[STOPPED][r] = measure(loop_produce, n, 1);
        flightrec_start();
        results[IDEAL2][r] = measure(loop_ideal, n / 2, 2);
        results[PRODUCE2][r] = measure(loop_produce, n / 2, 2);
    }
    double m[KINDS];
    for (int k = 0; k < KINDS; k++)
        m[k] = median(results[k]);

    printf("flightrec producer benchmark: %llu events per loop, median of %d "
           "interleaved runs, counter %s at %llu Hz\n\n",
           (unsigned long long)n, REPEAT, FLIGHTREC__COUNTER_KIND,
           (unsigned long long)flightrec_counter_frequency());
    printf("%-44s %10s %10s\n", "loop", "ns/event", "ratio");
    for (int k = 0; k < KINDS; k++) {
        double base = k == PRODUCE2 ? m[IDEAL2] : m[IDEAL];
        printf("%-44s %10.2f %10.3f\n", names[k], m[k], m[k] / base);
    }
    printf("\nproduce vs ideal:                    %.3f (goal <= 1.10)\n",
           m[PRODUCE] / m[IDEAL]);
    printf("filtered event:                      %.2f ns (goal <= 1 ns)\n",
           m[FILTERED]);
    printf("stopped recorder:                    %.2f ns (goal <= 1 ns)\n",
           m[STOPPED]);
    printf("2 threads vs 1, per thread:          %.3f (goal <= 1.10)\n",
           m[PRODUCE2] / m[PRODUCE]);
    return 0;
}
