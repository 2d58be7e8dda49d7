/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sustained recording rate with zero loss, discard mode.  Producer threads
 * are paced at a target total rate (they sleep between bursts, so that on
 * a small machine the consumer gets a CPU); a trial runs for a fixed time
 * and passes if nothing was dropped.  The consumers compared, each in a
 * child process of its own and interleaved search by search:
 *
 *   drain   a thread of the program calling flightrec_drain() to /dev/null
 *           without pause (the in-process consumer)
 *   stream  `flightrec stream PID -o -` to /dev/null, another process
 *           reading the rings in the session file (the CLI of the same
 *           build, or --flightrec PATH)
 *   stream-b  the same with --flightrec-b PATH: another version of the CLI
 *           (before and after a change, in the same run)
 *   lttng   the same producers recording an LTTng-UST tracepoint (one
 *           64-bit field) into a discard-mode per-user channel whose
 *           buffers total the memory of the flightrec thread rings
 *           (threads x FLIGHTREC_ITEMS x 16 bytes), split over the CPUs in
 *           4 sub-buffers each; lttng-consumerd writes the trace to a
 *           temporary directory (in /dev/shm), a session for each trial;
 *           needs bench-sustained-lttng
 *
 * Search mode: the highest passing rate, by doubling from 1 M events/s
 * and then bisecting; the figure is the rate achieved in the best passing
 * trial.  Fixed-rate mode (--rate): the loss of each of --trials trials.
 * Drops are flightrec_get_stats() for flightrec and, for LTTng, the
 * events produced less those babeltrace2 counts in the trial's trace
 * (the last of the counter's tallies is the total).  Public API only,
 * apart from reading the session's consumer word to wait for `flightrec
 * stream`.
 *
 *   bench-sustained [--trial-ms N] [--searches N] [--threads N]
 *                   [--consumers drain,stream,lttng] [--rate EVENTS_PER_S]
 *                   [--trials N] [--flightrec PATH] [--flightrec-b PATH]
 *
 * Defaults: 300 ms trials, 5 searches, 1 thread, drain, 3 trials; the ring
 * size is FLIGHTREC_ITEMS (default 65,536).  bench/session-stream.sh
 * runs the comparisons of the sessions issue.
 */
#include <flightrec.h>
#include <flightrec/region.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

#ifdef BENCH_SUSTAINED_LTTNG
#define TRACEPOINT_DEFINE
#define TRACEPOINT_CREATE_PROBES
#include "bench-lttng-tp.h"
#endif

extern char **environ;

#define MAX_THREADS 8
#define MAX_TRIALS 64
#define BURST_PERIOD_NS 100000u

struct options {
    int trial_ms, searches, threads, trials;
    double rate; /* total events/s; 0: search */
    const char *flightrec;
    const char *flightrec_b; /* the CLI of consumer stream-b */
};

/*=====   Producers   =====*/

enum recorder { RECORD_FLIGHTREC, RECORD_LTTNG };

struct trial {
    enum recorder recorder;
    int threads;
    double target;   /* total events/s, 0: unpaced */
    uint64_t ns;     /* trial length */
    double achieved; /* total events/s */
    uint64_t produced, dropped;
};

struct producer_run {
    struct trial *trial;
    pthread_barrier_t *barrier;
    uint64_t produced, ns;
};

static inline void record_one(enum recorder recorder, uint64_t n)
{
#ifdef BENCH_SUSTAINED_LTTNG
    if (recorder == RECORD_LTTNG) {
        tracepoint(flightrec_bench, item, n);
        return;
    }
#endif
    (void)recorder;
    flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)n);
}

static void sleep_ns(uint64_t ns)
{
    struct timespec pause = { (time_t)(ns / 1000000000u),
                              (long)(ns % 1000000000u) };
    nanosleep(&pause, NULL);
}

/* Produces at the thread's share of the target rate: each wake-up makes
 * up what the schedule asks for by now, then sleeps a burst period. */
static void *producer(void *arg)
{
    struct producer_run *run = arg;
    struct trial *t = run->trial;
    double rate = t->target / t->threads;
    record_one(t->recorder, 0); /* attach before timing */
    pthread_barrier_wait(run->barrier);
    uint64_t start = bench_now_ns(), now = start, n = 0;
    while (now - start < t->ns) {
        if (rate > 0) {
            uint64_t due = (uint64_t)((double)(now - start) * rate / 1e9);
            while (n < due)
                record_one(t->recorder, n++);
            sleep_ns(BURST_PERIOD_NS);
        } else {
            for (int i = 0; i < 256; i++)
                record_one(t->recorder, n++);
        }
        now = bench_now_ns();
    }
    run->produced = n;
    run->ns = now - start;
    return NULL;
}

/*=====   Loss counters   =====*/

static uint64_t flightrec_dropped(void)
{
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    return stats.dropped;
}

#ifdef BENCH_SUSTAINED_LTTNG
static char lttng_session[64], lttng_dir[128];
static int lttng_active;
static int lttng(const char *verb, const char *args);
static void destroy_lttng_at_exit(void);

/* The events of this trial's session that reached the trace: the
 * session is stopped (its buffers flushed) and the trace counted with
 * babeltrace2.  Counting, rather than LTTng's discarded-event statistics:
 * LTTng-UST 2.13 reports some packets' discarded counts as negative (a
 * count that goes back), so its sums are not to be trusted. */
static uint64_t lttng_recorded(void)
{
    if (lttng("stop", lttng_session) != 0)
        exit(1);
    char command[300], line[512];
    snprintf(command, sizeof(command),
             "babeltrace2 '%s' -c sink.utils.counter 2>/dev/null",
             lttng_dir);
    FILE *p = popen(command, "r");
    if (p == NULL)
        abort();
    uint64_t events = 0;
    int found = 0;
    while (fgets(line, sizeof(line), p) != NULL)
        if (strstr(line, " Event messages") != NULL) {
            events = strtoull(line, NULL, 10);
            found = 1;
        }
    if (pclose(p) != 0 || !found) {
        fprintf(stderr, "bench-sustained: cannot count the lttng trace "
                        "(babeltrace2 installed?)\n");
        exit(1);
    }
    return events;
}
#endif

static uint64_t dropped_so_far(enum recorder recorder)
{
    /* LTTng's trial has a session of its own, counted after the trial. */
    return recorder == RECORD_LTTNG ? 0 : flightrec_dropped();
}

#ifdef BENCH_SUSTAINED_LTTNG
static uint64_t lttng_total; /* bytes of the channel's buffers */
static int start_lttng(uint64_t total);
static void stop_lttng(void);
#endif

static void run_trial(struct trial *t)
{
#ifdef BENCH_SUSTAINED_LTTNG
    /* A session of its own for each trial: its discarded count is the
     * trial's. */
    if (t->recorder == RECORD_LTTNG && start_lttng(lttng_total) != 0)
        exit(1);
#endif
    uint64_t before = dropped_so_far(t->recorder);
    pthread_t ids[MAX_THREADS];
    struct producer_run runs[MAX_THREADS];
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)t->threads);
    for (int i = 0; i < t->threads; i++) {
        runs[i] = (struct producer_run){ t, &barrier, 0, 0 };
        if (pthread_create(&ids[i], NULL, producer, &runs[i]) != 0)
            abort();
    }
    uint64_t produced = 0, longest = 1;
    for (int i = 0; i < t->threads; i++) {
        pthread_join(ids[i], NULL);
        produced += runs[i].produced;
        if (runs[i].ns > longest)
            longest = runs[i].ns;
    }
    pthread_barrier_destroy(&barrier);
    /* Let the consumer take what is still in the buffers before counting
     * and before the next trial. */
    sleep_ns(100 * 1000000u);
    t->produced = produced;
    t->achieved = (double)produced * 1e9 / (double)longest;
    t->dropped = dropped_so_far(t->recorder) - before;
#ifdef BENCH_SUSTAINED_LTTNG
    if (t->recorder == RECORD_LTTNG) {
        /* Each thread's first event, before timing, is in the trace too. */
        uint64_t recorded = lttng_recorded(),
                 written = produced + (uint64_t)t->threads;
        t->dropped = recorded < written ? written - recorded : 0;
        stop_lttng();
    }
#endif
}

/* The highest rate of one search that lost nothing (achieved rate). */
static double search(struct trial base, double ceiling)
{
    double good = 0, bad = 0, rate = 1e6;
    while (bad == 0 && rate < 2 * ceiling) {
        struct trial t = base;
        t.target = rate;
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
        struct trial t = base;
        t.target = mid;
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

/*=====   Consumers   =====*/

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

/* This process's region, read from the start of its session file's
 * mapping; NULL if the rings are private. */
static const unsigned char *own_region(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL)
        return NULL;
    char line[1024];
    const unsigned char *base = NULL;
    while (base == NULL && fgets(line, sizeof(line), maps) != NULL) {
        unsigned long start, offset;
        char perms[8];
        if (strstr(line, ".region") != NULL &&
            sscanf(line, "%lx-%*x %7s %lx", &start, perms, &offset) == 3 &&
            perms[3] == 's' && offset == 0)
            base = (const unsigned char *)start;
    }
    fclose(maps);
    return base;
}

static pid_t stream_pid;

/* Starts `flightrec stream` on this process and waits until it holds the
 * session. */
static int start_stream(const char *flightrec)
{
    const unsigned char *base = own_region();
    if (base == NULL) {
        fprintf(stderr, "bench-sustained: the rings are not in a session "
                        "file (FLIGHTREC_SHM=0?)\n");
        return -1;
    }
    const struct flightrec_region_header *h = (const void *)base;
    const struct flightrec_region_control *c =
        (const void *)(base + h->control_offset);
    char pid[16];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, devnull, STDOUT_FILENO);
    char *args[] = { (char *)flightrec, "stream", "-o", "-", pid, NULL };
    int rc = posix_spawn(&stream_pid, flightrec, &actions, NULL, args,
                         environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        fprintf(stderr, "bench-sustained: cannot run %s: %s\n", flightrec,
                strerror(rc));
        return -1;
    }
    for (int i = 0; i < 5000; i++) {
        if (atomic_load(&c->consumer_pid) == stream_pid)
            return 0;
        sleep_ns(1000000u);
    }
    fprintf(stderr, "bench-sustained: flightrec stream did not claim the "
                    "session\n");
    return -1;
}

static int stop_stream(void)
{
    int status;
    kill(stream_pid, SIGINT);
    if (waitpid(stream_pid, &status, 0) != stream_pid) {
        perror("bench-sustained: waitpid");
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench-sustained: flightrec stream failed: %s %d\n",
                WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return -1;
    }
    return 0;
}

#ifdef BENCH_SUSTAINED_LTTNG
static int lttng(const char *verb, const char *args)
{
    char command[600];
    snprintf(command, sizeof(command), "lttng -q %s %s >/dev/null", verb,
             args);
    if (system(command) != 0) {
        fprintf(stderr, "bench-sustained: '%s' failed\n", command);
        return -1;
    }
    return 0;
}

/* A session with one discard-mode channel of @total bytes of buffers, the
 * tracepoint enabled, started. */
static int start_lttng(uint64_t total)
{
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    uint64_t subbuf = total / (uint64_t)(cpus > 0 ? cpus : 1) / 4;
    static int trials;
    snprintf(lttng_session, sizeof(lttng_session), "frbench-%d-%d",
             (int)getpid(), trials++);
    snprintf(lttng_dir, sizeof(lttng_dir), "/dev/shm/%s", lttng_session);
    char create[300], channel[200];
    snprintf(create, sizeof(create), "%s --output=%s", lttng_session,
             lttng_dir);
    snprintf(channel, sizeof(channel),
             "-u -s %s --buffers-uid --discard --subbuf-size=%llu "
             "--num-subbuf=4 chan",
             lttng_session, (unsigned long long)subbuf);
    static int registered;
    if (!registered && atexit(destroy_lttng_at_exit) == 0)
        registered = 1;
    lttng_active = 1;
    if (lttng("create", create) != 0 ||
        lttng("enable-channel", channel) != 0)
        return -1;
    char event[200];
    snprintf(event, sizeof(event), "-u -s %s -c chan flightrec_bench:item",
             lttng_session);
    if (lttng("enable-event", event) != 0 ||
        lttng("start", lttng_session) != 0)
        return -1;
    /* The application's buffers are made asynchronously: wait until an
     * event of this process is seen as enabled. */
    for (int i = 0; i < 500; i++) {
        if (tracepoint_enabled(flightrec_bench, item))
            return 0;
        sleep_ns(10000000u);
    }
    fprintf(stderr, "bench-sustained: the lttng session did not reach this "
                    "process (is lttng-sessiond running as this user?)\n");
    return -1;
}

/* A child that fails midway leaves no session behind. */
static void destroy_lttng_at_exit(void)
{
    if (lttng_active)
        stop_lttng();
}

static void stop_lttng(void)
{
    lttng_active = 0;
    lttng("destroy", lttng_session);
    /* The next session must not start while this one's enabling is still
     * seen (its events would go nowhere, and count as no loss). */
    for (int i = 0; i < 500 && tracepoint_enabled(flightrec_bench, item); i++)
        sleep_ns(10000000u);
    if (getenv("BENCH_LTTNG_KEEP") != NULL) {
        fprintf(stderr, "bench-sustained: lttng trace kept in %s\n",
                lttng_dir);
        return;
    }
    char command[300];
    snprintf(command, sizeof(command), "rm -rf '%s'", lttng_dir);
    if (system(command) != 0)
        fprintf(stderr, "bench-sustained: cannot remove %s\n", lttng_dir);
}
#endif

/*=====   A child: one consumer   =====*/

static uint64_t ring_items(void)
{
    const char *items = getenv("FLIGHTREC_ITEMS");
    return items != NULL ? strtoull(items, NULL, 10) : 65536u;
}

/* Prints "unpaced_rate unpaced_dropped_fraction" then either the search's
 * zero-loss rate or, for each trial at the fixed rate, "achieved dropped
 * produced". */
static int child(const char *consumer, const struct options *o)
{
    struct trial base = { RECORD_FLIGHTREC, o->threads, 0,
                          (uint64_t)o->trial_ms * 1000000u, 0, 0, 0 };
    int stream = strncmp(consumer, "stream", 6) == 0;
    if (strcmp(consumer, "lttng") == 0) {
#ifdef BENCH_SUSTAINED_LTTNG
        base.recorder = RECORD_LTTNG;
        lttng_total = (uint64_t)o->threads * ring_items() * 16u;
#else
        fprintf(stderr, "bench-sustained: built without LTTng-UST\n");
        return 1;
#endif
    } else {
        struct flightrec_config config;
        flightrec_config_init(&config);
        config.mode = FLIGHTREC_MODE_DISCARD;
        config.items_per_ring = (uint32_t)ring_items();
        if (flightrec_setup(&config) != 0)
            return 1;
        flightrec_counter_frequency(); /* calibration out of the way */
        /* A dump puts the calibrated frequency in the session for
         * `flightrec stream`, which would measure it again otherwise. */
        if (flightrec_dump(devnull) != 0)
            return 1;
    }
    pthread_t drain_thread;
    if (strcmp(consumer, "drain") == 0) {
        atomic_store(&draining, 1);
        if (pthread_create(&drain_thread, NULL, drainer, NULL) != 0)
            return 1;
    } else if (stream && start_stream(o->flightrec) != 0) {
        return 1;
    }

    struct trial unpaced = base;
    run_trial(&unpaced);
    printf("%.0f %.6f", unpaced.achieved,
           (double)unpaced.dropped / (double)unpaced.produced);
    if (o->rate > 0) {
        for (int i = 0; i < o->trials; i++) {
            struct trial t = base;
            t.target = o->rate;
            run_trial(&t);
            printf(" %.0f %llu %llu", t.achieved,
                   (unsigned long long)t.dropped,
                   (unsigned long long)t.produced);
        }
    } else {
        printf(" %.0f", search(base, unpaced.achieved));
    }
    printf("\n");

    int rc = 0;
    if (strcmp(consumer, "drain") == 0) {
        atomic_store(&draining, 0);
        pthread_join(drain_thread, NULL);
    } else if (stream) {
        rc = stop_stream();
    }
    return rc == 0 ? 0 : 1;
}

/*=====   The parent: children interleaved   =====*/

#define MAX_CONSUMERS 4

/* The program that runs a consumer's child: bench-sustained-lttng beside
 * this one for lttng. */
static void child_program(const char *consumer, char *out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 32);
    if (n < 0)
        n = 0;
    out[n] = '\0';
    if (strcmp(consumer, "lttng") == 0 &&
        strstr(out, "bench-sustained-lttng") == NULL)
        strcat(out, "-lttng");
}

/* Runs one child and reads its line into @v (up to @max numbers). */
static int run_child(const char *consumer, const struct options *o,
                     double *v, int max)
{
    char program[1024], ms[16], threads[16], trials[16], rate[32];
    child_program(consumer, program, sizeof(program));
    snprintf(ms, sizeof(ms), "%d", o->trial_ms);
    snprintf(threads, sizeof(threads), "%d", o->threads);
    snprintf(trials, sizeof(trials), "%d", o->trials);
    snprintf(rate, sizeof(rate), "%.0f", o->rate);
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    char *args[] = { program, "--child", (char *)consumer, "--trial-ms", ms,
                     "--threads", threads, "--trials", trials, "--rate",
                     rate, "--flightrec",
                     (char *)(strcmp(consumer, "stream-b") == 0
                                  ? o->flightrec_b
                                  : o->flightrec),
                     NULL };
    pid_t pid;
    int rc = posix_spawn(&pid, program, &actions, NULL, args, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
        fprintf(stderr, "bench-sustained: cannot run %s: %s\n", program,
                strerror(rc));
        close(fds[0]);
        return -1;
    }
    FILE *in = fdopen(fds[0], "r");
    int got = 0;
    while (got < max && fscanf(in, "%lf", &v[got]) == 1)
        got++;
    fclose(in);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench-sustained: the %s child failed\n", consumer);
        return -1;
    }
    return got;
}

static void print_summary(const char *label, double *v, size_t n,
                          double scale, const char *unit)
{
    struct bench_summary s = bench_summarize(v, n);
    printf("%-34s %10.2f %s median (min %.2f, max %.2f)\n", label,
           s.median / scale, unit, s.min / scale, s.max / scale);
}

static int parent(const struct options *o, char consumers[][16], int count)
{
    int reps = o->searches;
    double unpaced[MAX_CONSUMERS][MAX_TRIALS];
    double lost[MAX_CONSUMERS][MAX_TRIALS];
    double found[MAX_CONSUMERS][MAX_TRIALS];
    double ratio[MAX_CONSUMERS][MAX_TRIALS];
    double loss[MAX_CONSUMERS][MAX_TRIALS * MAX_TRIALS];
    double achieved[MAX_CONSUMERS][MAX_TRIALS * MAX_TRIALS];
    int zero[MAX_CONSUMERS] = { 0 }, runs[MAX_CONSUMERS] = { 0 };
    int slow[MAX_CONSUMERS] = { 0 }, lossy[MAX_CONSUMERS] = { 0 };
    for (int r = 0; r < reps; r++) {
        for (int c = 0; c < count; c++) {
            double v[2 + 3 * MAX_TRIALS];
            int want = o->rate > 0 ? 2 + 3 * o->trials : 3;
            if (run_child(consumers[c], o, v, want) != want)
                return 1;
            unpaced[c][r] = v[0];
            lost[c][r] = v[1];
            if (o->rate > 0) {
                for (int i = 0; i < o->trials; i++) {
                    int k = runs[c]++;
                    achieved[c][k] = v[2 + 3 * i];
                    loss[c][k] = v[3 + 3 * i] / v[4 + 3 * i];
                    /* A trial passes at the rate asked for, not below. */
                    int reached = v[2 + 3 * i] >= 0.95 * o->rate;
                    slow[c] += !reached;
                    zero[c] += reached && v[3 + 3 * i] == 0;
                    lossy[c] += v[3 + 3 * i] != 0;
                }
            } else {
                found[c][r] = v[2];
                ratio[c][r] = v[2] / found[0][r];
            }
        }
    }
    printf("flightrec sustained rate, discard mode, %llu-item rings, %d "
           "producer thread%s, %d ms trials, %d interleaved child processes "
           "per consumer\n\n",
           (unsigned long long)ring_items(), o->threads,
           o->threads > 1 ? "s" : "", o->trial_ms, reps);
    for (int c = 0; c < count; c++) {
        char label[80];
        snprintf(label, sizeof(label), "%s: unpaced producers", consumers[c]);
        print_summary(label, unpaced[c], (size_t)reps, 1e6, "M events/s");
        snprintf(label, sizeof(label), "%s: unpaced, dropped", consumers[c]);
        print_summary(label, lost[c], (size_t)reps, 0.01, "%        ");
        if (o->rate > 0) {
            snprintf(label, sizeof(label), "%s: at %.2f M events/s, got",
                     consumers[c], o->rate / 1e6);
            print_summary(label, achieved[c], (size_t)runs[c], 1e6,
                          "M events/s");
            snprintf(label, sizeof(label), "%s: dropped", consumers[c]);
            print_summary(label, loss[c], (size_t)runs[c], 0.01,
                          "%        ");
            printf("%-34s %d of %d trials\n", "  zero loss in", zero[c],
                   runs[c]);
            printf("%-34s %d of %d trials\n", "  events lost in", lossy[c],
                   runs[c]);
            if (slow[c] > 0)
                printf("%-34s %d of %d trials (below 95%% of the rate: "
                       "not passed)\n", "  producers too slow in", slow[c],
                       runs[c]);
        } else {
            snprintf(label, sizeof(label), "%s: zero-loss rate",
                     consumers[c]);
            print_summary(label, found[c], (size_t)reps, 1e6, "M events/s");
            if (c > 0) {
                snprintf(label, sizeof(label), "  %s / %s, same search",
                         consumers[c], consumers[0]);
                print_summary(label, ratio[c], (size_t)reps, 1, "          ");
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options o = { 300, 5, 1, 3, 0, NULL, NULL };
    const char *child_consumer = NULL, *list = "drain";
    char flightrec[1024];
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *name = argv[i], *value = argv[i + 1];
        if (strcmp(name, "--trial-ms") == 0)
            o.trial_ms = atoi(value);
        else if (strcmp(name, "--searches") == 0)
            o.searches = atoi(value);
        else if (strcmp(name, "--threads") == 0)
            o.threads = atoi(value);
        else if (strcmp(name, "--trials") == 0)
            o.trials = atoi(value);
        else if (strcmp(name, "--rate") == 0)
            o.rate = strtod(value, NULL);
        else if (strcmp(name, "--consumers") == 0)
            list = value;
        else if (strcmp(name, "--flightrec") == 0)
            o.flightrec = value;
        else if (strcmp(name, "--flightrec-b") == 0)
            o.flightrec_b = value;
        else if (strcmp(name, "--child") == 0)
            child_consumer = value;
        else
            o.trial_ms = 0;
    }
    if (o.trial_ms < 1 || o.searches < 1 || o.searches > MAX_TRIALS ||
        o.threads < 1 || o.threads > MAX_THREADS || o.trials < 1 ||
        o.trials > MAX_TRIALS || o.rate < 0 || argc % 2 == 0) {
        fprintf(stderr, "usage: bench-sustained [--trial-ms N] [--searches N] "
                        "[--threads N] [--consumers "
                        "drain,stream,stream-b,lttng] [--rate EVENTS_PER_S] "
                        "[--trials N] [--flightrec PATH] [--flightrec-b "
                        "PATH]\n");
        return 2;
    }
    devnull = open("/dev/null", O_WRONLY);
    if (devnull < 0)
        return 1;
    if (o.flightrec == NULL) {
        /* The CLI of the same build: BUILD/bench/.. /tools/flightrec. */
        ssize_t n = readlink("/proc/self/exe", flightrec,
                             sizeof(flightrec) - 64);
        if (n < 0)
            return 1;
        flightrec[n] = '\0';
        char *slash = strrchr(flightrec, '/');
        strcpy(slash != NULL ? slash : flightrec,
               "/../tools/flightrec/flightrec");
        o.flightrec = flightrec;
    }
    if (child_consumer != NULL)
        return child(child_consumer, &o);

    char consumers[MAX_CONSUMERS][16];
    int count = 0;
    for (const char *p = list; *p != '\0' && count < MAX_CONSUMERS;) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof(consumers[0]))
            break;
        memcpy(consumers[count], p, n);
        consumers[count][n] = '\0';
        if (strcmp(consumers[count], "drain") != 0 &&
            strcmp(consumers[count], "stream") != 0 &&
            (strcmp(consumers[count], "stream-b") != 0 ||
             o.flightrec_b == NULL) &&
            strcmp(consumers[count], "lttng") != 0) {
            fprintf(stderr, "bench-sustained: unknown consumer '%s'\n",
                    consumers[count]);
            return 2;
        }
        count++;
        p += n;
        if (*p == ',')
            p++;
    }
    if (count == 0)
        return 2;
    return parent(&o, consumers, count);
}
