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
 *   bench-produce --session [events]     rings in a session file (the
 *                                        default) against private rings
 *                                        (FLIGHTREC_SHM=0), each against
 *                                        the ideal loop of its own process
 *
 * NAME: empty (the loop alone), ideal, ideal_packed, produce, produce_2, produce_n, produce_n_var,
 * record_1, record_2, record_8, filtered, stopped.  Instructions per event come from
 * bench/callgrind-produce.sh (two lengths, differenced).
 */
#include <flightrec.h>

#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
 * the recording call inlined inside.
 *
 * The loops of one event per call run UNROLL calls per turn, written out
 * (every event count used is a multiple of UNROLL): the loop's counter,
 * compare and branch then cost a quarter of an instruction per event
 * instead of three, which would otherwise be an eighth of the figure.  The
 * calls stay what they are: each one has its own filter test, counter
 * read, checks, stores and publication (the fences of the hot path keep
 * the compiler from merging memory accesses of consecutive calls); what a
 * compiler may share between them is what it would share between any
 * calls in one function (an address it keeps in a register).  The four
 * events of a turn carry the same data word, the loop's counter. */
#define UNROLL 4
#define UNROLLED(n, call)                        \
    for (uint64_t i = 0; i < (n); i += UNROLL) { \
        call(i);                                 \
        call(i);                                 \
        call(i);                                 \
        call(i);                                 \
    }

/* The loop alone (counter, compare, branch): what every loop's figure
 * includes besides the recording.  The empty asm, given i, keeps the
 * compiler from deleting or collapsing it. */
#define EMPTY_STEP(i) __asm__ __volatile__("" ::"r"(i))
__attribute__((noinline)) static void loop_empty(uint64_t n)
{
    UNROLLED(n, EMPTY_STEP)
}

#define IDEAL_STEP(i) ideal_produce(FLIGHTREC_USER(1), (i))
__attribute__((noinline)) static void loop_ideal(uint64_t n)
{
    UNROLLED(n, IDEAL_STEP)
}

#define IDEAL_PACKED_STEP(i) ideal_packed_produce(FLIGHTREC_USER(1), (i))
__attribute__((noinline)) static void loop_ideal_packed(uint64_t n)
{
    UNROLLED(n, IDEAL_PACKED_STEP)
}

#define PRODUCE_STEP(i) flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)(i))
__attribute__((noinline)) static void loop_produce(uint64_t n)
{
    UNROLLED(n, PRODUCE_STEP)
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

static inline __attribute__((always_inline)) void record_one(uint64_t i)
{
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_USER(6), (uintptr_t)i);
    flightrec_commit(&ctx);
}

/* One item a record: unrolled as the other loops of one event a call. */
__attribute__((noinline)) static void loop_record_1(uint64_t n)
{
    UNROLLED(n, record_one)
}

__attribute__((noinline)) static void loop_record_2(uint64_t n)
{
    record_items(n, 2);
}

__attribute__((noinline)) static void loop_record_8(uint64_t n)
{
    record_items(n, 8);
}

#define FILTERED_STEP(i) flightrec_produce(FLIGHTREC_USER(3), (uintptr_t)(i))
__attribute__((noinline)) static void loop_filtered(uint64_t n)
{
    UNROLLED(n, FILTERED_STEP)
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
    if (strcmp(name, "empty") == 0)
        return loop_empty;
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

/*=====   Session file against private rings   =====*/

/* Whether this process's rings are in a session file: its region is a
 * shared mapping of a file named *.region. */
static int rings_in_session_file(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL)
        return -1;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof(line), maps) != NULL) {
        char *perms = strchr(line, ' ');
        found = perms != NULL && perms[4] == 's' &&
                strstr(line, ".region") != NULL;
    }
    fclose(maps);
    return found;
}

/* One child's figures: each loop once, interleaved, after a warm-up
 * pass; the rings' pages are committed by then. */
static int session_child(uint64_t n)
{
    flightrec_produce(FLIGHTREC_USER(1), 0); /* rings made before the check */
    int shared = rings_in_session_file();
    double ideal_ns = 0, produce_ns = 0, record_ns = 0, produce_n_ns = 0;
    for (int pass = 0; pass < 2; pass++) {
        ideal_ns = measure(loop_ideal, n, 1);
        produce_ns = measure(loop_produce, n, 1);
        record_ns = measure(loop_record_1, n, 1);
        produce_n_ns = measure(loop_produce_n, n, 1);
    }
    printf("%d %.4f %.4f %.4f %.4f\n", shared, ideal_ns, produce_ns,
           record_ns, produce_n_ns);
    return 0;
}

extern char **environ;

/* Runs this program as a session child with FLIGHTREC_SHM=@shm (NULL:
 * unset) and reads its line of figures into @v (5 values). */
static int run_session_child(const char *shm, uint64_t n, double *v)
{
    char count[32];
    snprintf(count, sizeof(count), "%llu", (unsigned long long)n);
    if (shm != NULL)
        setenv("FLIGHTREC_SHM", shm, 1);
    else
        unsetenv("FLIGHTREC_SHM");
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    char *args[] = { "bench-produce", "--session-child", count, NULL };
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", &actions, NULL, args,
                         environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    unsetenv("FLIGHTREC_SHM");
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    FILE *in = fdopen(fds[0], "r");
    int status, got = fscanf(in, "%lf %lf %lf %lf %lf", &v[0], &v[1], &v[2],
                             &v[3], &v[4]);
    fclose(in);
    waitpid(pid, &status, 0);
    return got == 5 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int compare_session(uint64_t n)
{
    enum { SHARED, PRIVATE, SETUPS };
    static const char *const setup_names[SETUPS] = { "session file",
                                                     "private (SHM=0)" };
    static const char *const shm_values[SETUPS] = { NULL, "0" };
    /* Per setup: ideal, produce, record_1, produce_n (ns), and the ratios
     * of the last three to the ideal loop of the same process. */
    double ns[SETUPS][4][REPEAT], ratio[SETUPS][3][REPEAT];
    for (int r = 0; r < REPEAT; r++) {
        for (int s = 0; s < SETUPS; s++) {
            double v[5];
            if (run_session_child(shm_values[s], n, v) != 0) {
                fprintf(stderr, "bench-produce: a session child failed\n");
                return 1;
            }
            if ((int)v[0] != (s == SHARED)) {
                fprintf(stderr, "bench-produce: the %s child's rings are %s\n",
                        setup_names[s],
                        v[0] > 0 ? "in a session file" : "private");
                return 1;
            }
            for (int k = 0; k < 4; k++)
                ns[s][k][r] = v[k + 1];
            for (int k = 0; k < 3; k++)
                ratio[s][k][r] = v[k + 2] / v[1];
        }
    }
    static const char *const loops[4] = {
        "ideal loop", "flightrec_produce", "prepare/add/commit, 1 item",
        "flightrec_produce_n, per item (8 a call)",
    };
    printf("flightrec hot path, session file against private rings: %llu "
           "events per loop, median of %d interleaved child processes each\n"
           "(ratio: to the ideal loop of the same process, median of the "
           "per-process ratios)\n\n",
           (unsigned long long)n, REPEAT);
    printf("%-42s %-16s %9s %15s %8s %15s\n", "loop", "rings", "ns/event",
           "min-max", "ratio", "min-max");
    double m[SETUPS][4], mr[SETUPS][3];
    for (int k = 0; k < 4; k++)
        for (int s = 0; s < SETUPS; s++) {
            double *v = ns[s][k];
            m[s][k] = median(v);
            printf("%-42s %-16s %9.2f %7.2f-%-7.2f", loops[k], setup_names[s],
                   m[s][k], v[0], v[REPEAT - 1]);
            if (k > 0) {
                double *q = ratio[s][k - 1];
                mr[s][k - 1] = median(q);
                printf(" %8.3f %7.3f-%-7.3f", mr[s][k - 1], q[0],
                       q[REPEAT - 1]);
            }
            printf("\n");
        }
    printf("\nproduce vs ideal, session file:      %.3f (goal <= 1.10)\n",
           mr[SHARED][0]);
    printf("produce vs ideal, private rings:     %.3f\n", mr[PRIVATE][0]);
    printf("produce, session file vs private:    %.3f\n",
           m[SHARED][1] / m[PRIVATE][1]);
    return 0;
}

/* Event counts are multiples of 8 (a record of 8 items, UNROLL calls, and
 * half of it for each of two threads). */
static uint64_t whole(uint64_t n)
{
    return n - n % (2 * 8);
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
            n = whole(strtoull(argv[3], NULL, 0));
        if (strcmp(argv[2], "stopped") == 0)
            flightrec_stop();
        struct thread_run run = { fn, n, 0, NULL };
        run_thread(&run);
        /* For callgrind-produce.sh, which checks where the rings were. */
        fprintf(stderr, "bench-produce: rings %s\n",
                rings_in_session_file() == 1 ? "in a session file"
                                             : "private");
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "--session-child") == 0)
        return session_child(whole(strtoull(argv[2], NULL, 0)));
    if (argc >= 2 && strcmp(argv[1], "--session") == 0)
        return compare_session(argc >= 3 ? whole(strtoull(argv[2], NULL, 0))
                                         : n);
    if (argc >= 2)
        n = whole(strtoull(argv[1], NULL, 0));

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
