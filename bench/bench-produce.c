/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cost of recording, as ratios against an ideal ring loop measured in the
 * same run (read the counter, two stores, store-release of the head into a
 * 1 MiB ring): flightrec_produce, produce_2 and produce_n per item,
 * prepare/add/commit records of 1, 2 and 8 items per item, a filtered
 * event, a stopped recorder, and two threads recording at once.  The ideal
 * loop also runs with packed 12-byte items (the wire size on 64-bit hosts)
 * instead of the 16 bytes a ring item takes in memory.
 *
 *   bench-produce [events]               timed comparison (median of 7,
 *                                        thread CPU time)
 *   bench-produce --only NAME [events]   one loop, for callgrind
 *
 * NAME: ideal, ideal_packed, produce, produce_2, produce_n, produce_n_var,
 * record_1, record_2, record_8, filtered, stopped.  Instructions per event come from
 * bench/callgrind-produce.sh (two lengths, differenced).
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

/* The packed alternative: 12 bytes an item, the data word unaligned. */
struct ideal_packed_item {
    uint32_t event;
    uint64_t data;
} __attribute__((packed));

struct ideal_packed_ring {
    _Atomic uint64_t head;
    struct ideal_packed_item items[IDEAL_ITEMS];
};

static _Thread_local struct ideal_packed_ring *ideal_packed;

static inline void ideal_packed_produce(uint32_t event, uint64_t data)
{
    uint64_t now = flightrec_counter();
    uint64_t head =
        atomic_load_explicit(&ideal_packed->head, memory_order_relaxed);
    struct ideal_packed_item *item =
        &ideal_packed->items[head & (IDEAL_ITEMS - 1)];
    item->event = (uint32_t)(now << 10) | event;
    item->data = data;
    atomic_store_explicit(&ideal_packed->head, head + 1,
                          memory_order_release);
}

static inline void ideal_produce(uint32_t event, uint64_t data)
{
    uint64_t now = flightrec_counter();
    uint64_t head = atomic_load_explicit(&ideal->head, memory_order_relaxed);
    struct ideal_item *item = &ideal->items[head & (IDEAL_ITEMS - 1)];
    item->event = (now << 10) | event;
    item->data = data;
    atomic_store_explicit(&ideal->head, head + 1, memory_order_release);
}

/* The calling thread's CPU time: a loop preempted on a shared machine is
 * not charged for the time it did not run. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The loops: noinline wrappers so that each is measured as a whole, with
 * the recording call inlined inside. */
__attribute__((noinline)) static void loop_ideal(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        ideal_produce(FLIGHTREC_USER(1), i);
}

__attribute__((noinline)) static void loop_ideal_packed(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        ideal_packed_produce(FLIGHTREC_USER(1), i);
}

__attribute__((noinline)) static void loop_produce(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
}

#define BATCH 8
/* The events of a record are nearly always constants the compiler sees,
 * as here; produce_n_var has events it cannot know. */
__attribute__((noinline)) static void loop_produce_n(uint64_t n)
{
    struct flightrec_item_in items[BATCH] = {
        { FLIGHTREC_USER(2), 0 }, { FLIGHTREC_USER(2), 1 },
        { FLIGHTREC_USER(2), 2 }, { FLIGHTREC_USER(2), 3 },
        { FLIGHTREC_USER(2), 4 }, { FLIGHTREC_USER(2), 5 },
        { FLIGHTREC_USER(2), 6 }, { FLIGHTREC_USER(2), 7 },
    };
    for (uint64_t i = 0; i < n; i += BATCH) {
        items[0].data = (uintptr_t)i;
        flightrec_produce_n(items, BATCH);
    }
}

static struct flightrec_item_in var_items[BATCH];

__attribute__((noinline)) static void loop_produce_n_var(uint64_t n)
{
    for (int i = 0; i < BATCH; i++) {
        var_items[i].event = FLIGHTREC_USER(2);
        var_items[i].data = (uintptr_t)i;
    }
    for (uint64_t i = 0; i < n; i += BATCH) {
        var_items[0].data = (uintptr_t)i;
        flightrec_produce_n(var_items, BATCH);
    }
}

__attribute__((noinline)) static void loop_produce_2(uint64_t n)
{
    for (uint64_t i = 0; i < n; i += 2)
        flightrec_produce_2(FLIGHTREC_USER(4), (uintptr_t)i,
                            FLIGHTREC_USER(5), (uintptr_t)i + 1);
}

/* Records of @items items with prepare/add/commit, inlined (forced: clang
 * would otherwise make one loop of the three callers, for any count). */
static inline __attribute__((always_inline)) void record_items(uint64_t n,
                                                               unsigned items)
{
    for (uint64_t i = 0; i < n; i += items) {
        struct flightrec_ctx ctx;
        flightrec_prepare(&ctx);
        for (unsigned k = 0; k < items; k++)
            flightrec_add(&ctx, FLIGHTREC_USER(6), (uintptr_t)(i + k));
        flightrec_commit(&ctx);
    }
}

__attribute__((noinline)) static void loop_record_1(uint64_t n)
{
    record_items(n, 1);
}

__attribute__((noinline)) static void loop_record_2(uint64_t n)
{
    record_items(n, 2);
}

__attribute__((noinline)) static void loop_record_8(uint64_t n)
{
    record_items(n, 8);
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
    ideal_packed = aligned_alloc(64, sizeof(*ideal_packed));
    memset(ideal_packed, 0, sizeof(*ideal_packed));
    run->fn(1000); /* attach and warm up */
    if (run->barrier)
        pthread_barrier_wait(run->barrier);
    uint64_t start = now_ns();
    run->fn(run->n);
    run->ns = now_ns() - start;
    free(ideal);
    free(ideal_packed);
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
    if (strcmp(name, "ideal_packed") == 0)
        return loop_ideal_packed;
    if (strcmp(name, "produce") == 0)
        return loop_produce;
    if (strcmp(name, "produce_2") == 0)
        return loop_produce_2;
    if (strcmp(name, "produce_n") == 0)
        return loop_produce_n;
    if (strcmp(name, "produce_n_var") == 0)
        return loop_produce_n_var;
    if (strcmp(name, "record_1") == 0)
        return loop_record_1;
    if (strcmp(name, "record_2") == 0)
        return loop_record_2;
    if (strcmp(name, "record_8") == 0)
        return loop_record_8;
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

    enum { IDEAL, IDEAL_PACKED, PRODUCE, PRODUCE_2, PRODUCE_N, PRODUCE_N_VAR,
           RECORD_1,
           RECORD_2, RECORD_8, FILTERED, STOPPED, IDEAL2, PRODUCE2, KINDS };
    static const char *const names[KINDS] = {
        "ideal loop (counter, 2 stores, release)",
        "ideal loop, packed 12-byte items",
        "flightrec_produce",
        "flightrec_produce_2, per item",
        "flightrec_produce_n, per item (8 a call)",
        "produce_n, events unknown to the compiler",
        "prepare/add/commit, 1 item",
        "prepare/add/commit, 2 items, per item",
        "prepare/add/commit, 8 items, per item",
        "filtered event",
        "stopped recorder", "ideal loop, 2 threads at once",
        "flightrec_produce, 2 threads at once",
    };
    double results[KINDS][REPEAT];
    /* Interleaved repetitions: a noisy moment hits every kind alike. */
    for (int r = 0; r < REPEAT; r++) {
        results[IDEAL][r] = measure(loop_ideal, n, 1);
        results[IDEAL_PACKED][r] = measure(loop_ideal_packed, n, 1);
        results[PRODUCE][r] = measure(loop_produce, n, 1);
        results[PRODUCE_2][r] = measure(loop_produce_2, n, 1);
        results[PRODUCE_N][r] = measure(loop_produce_n, n, 1);
        results[PRODUCE_N_VAR][r] = measure(loop_produce_n_var, n, 1);
        results[RECORD_1][r] = measure(loop_record_1, n, 1);
        results[RECORD_2][r] = measure(loop_record_2, n, 1);
        results[RECORD_8][r] = measure(loop_record_8, n, 1);
        results[FILTERED][r] = measure(loop_filtered, n, 1);
        flightrec_stop();
        results[STOPPED][r] = measure(loop_produce, n, 1);
        flightrec_start();
        results[IDEAL2][r] = measure(loop_ideal, n / 2, 2);
        results[PRODUCE2][r] = measure(loop_produce, n / 2, 2);
    }
    double m[KINDS], lo[KINDS], hi[KINDS];
    for (int k = 0; k < KINDS; k++) {
        m[k] = median(results[k]);
        lo[k] = results[k][0]; /* sorted by median() */
        hi[k] = results[k][REPEAT - 1];
    }

    printf("flightrec producer benchmark: %llu events per loop, median of %d "
           "interleaved runs, counter %s at %llu Hz\n\n",
           (unsigned long long)n, REPEAT, FLIGHTREC__COUNTER_KIND,
           (unsigned long long)flightrec_counter_frequency());
    printf("%-44s %10s %15s %8s\n", "loop", "ns/event", "min-max",
           "ratio");
    for (int k = 0; k < KINDS; k++) {
        double base = k == PRODUCE2 ? m[IDEAL2] : m[IDEAL];
        printf("%-44s %10.2f %7.2f-%-7.2f %8.3f\n", names[k], m[k], lo[k],
               hi[k], m[k] / base);
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
