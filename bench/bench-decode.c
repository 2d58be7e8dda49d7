/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoder throughput.  Builds a stream in memory the way a producer writes
 * one (8 rings drained in chunks, an uptime pair every quarter ring, a few
 * hundred ticks between items of a 3 GHz counter) and decodes it unmerged
 * and merged, N runs interleaved (median and min-max), next to a baseline
 * pass that only reads the same bytes (sum of 64-bit words), so figures
 * compare across machines.  Every pass must deliver exactly the stream's
 * events and no other record.
 *
 * Two shapes: "mixed" (the default), where the rings record at once and
 * their items interleave finely in time, so the merge changes ring at
 * nearly every record; and "runs", where each chunk of a ring is a burst
 * while the other rings are idle, as threads taking turns record -- long
 * runs in time order, which the merge delivers without touching its heap.
 * The merged figures include flightrec_client_read_fd() on a temporary
 * file: both passes, exact order.  Times are CPU seconds of the process.
 *
 * Usage: bench-decode [MILLION_ITEMS [RUNS [FORMAT [mixed|runs [PASS]]]]]
 *        (defaults 50 5 le32 mixed); PASS (unmerged, window, window0 or
 *        read_fd) runs that pass alone, for profiles: under callgrind,
 *        the inclusive cost of decode() or read_file() over the items is
 *        the pass's instructions per item.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <flightrec/client.h>

#define RINGS 8
#define CHUNK 4096       /* items per chunk (a quarter of a 16 Ki ring) */
#define PIECE (1u << 20) /* bytes per feed */

struct buf {
    unsigned char *p;
    size_t len;
    int be;
    size_t data_bytes;
};

static void put(struct buf *b, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b->p[b->len++] = (unsigned char)(v >> (b->be ? (n - 1 - i) * 8
                                                      : i * 8));
}

static void item(struct buf *b, uint32_t t, uint32_t ev, uint64_t data)
{
    put(b, FLIGHTREC_TIME_EVENT(t & FLIGHTREC_TIME_MASK, ev), 4);
    put(b, data, b->data_bytes);
}

static size_t build(struct buf *b, uint32_t format, size_t items, int runs)
{
    uint64_t ticks[RINGS] = {0}, seed = 1, latest = 0;
    uint32_t pos[RINGS] = {0};
    size_t n = 0;

    b->be = format == FLIGHTREC_FORMAT_BE_32 ||
            format == FLIGHTREC_FORMAT_BE_64;
    b->data_bytes = FLIGHTREC_ITEM_SIZE(format) - 4;
    b->p = malloc((items + items / 64 + 64) * FLIGHTREC_ITEM_SIZE(format));
    if (b->p == NULL)
        return 0;
    b->len = 0;
    put(b, format, 4);
    put(b, FLIGHTREC_MAGIC, 4);
    item(b, 0, FLIGHTREC_EV_VERSION, FLIGHTREC_STREAM_VERSION);
    item(b, 0, FLIGHTREC_EV_RING_COUNT, RINGS);
    item(b, 0, FLIGHTREC_EV_PER_CPU_COUNT, 4 * CHUNK);
    item(b, 0, FLIGHTREC_EV_FREQUENCY, 3000000000u);
    for (int r = 0; r < RINGS; r++)
        ticks[r] = 1000 + (uint64_t)r * 7;
    while (n < items) {
        for (uint32_t r = 0; r < RINGS && n < items; r++) {
            if (runs && ticks[r] < latest)
                ticks[r] = latest + 10; /* its burst starts after the last */
            item(b, 0, FLIGHTREC_EV_PROCESSOR, r);
            item(b, 0, FLIGHTREC_EV_THREAD_ID, 1000 + r);
            item(b, 0, FLIGHTREC_EV_RING_CONTEXT, 0);
            item(b, 0, FLIGHTREC_EV_RING_POSITION, pos[r]);
            item(b, (uint32_t)ticks[r], FLIGHTREC_EV_UPTIME_LOW,
                 (uint32_t)ticks[r]);
            item(b, (uint32_t)ticks[r], FLIGHTREC_EV_UPTIME_HIGH,
                 (uint32_t)(ticks[r] >> 32));
            /* Version 2 positions count the program's events only, not
             * the uptime pair (docs/format.md, chunk continuity). */
            for (int i = 0; i < CHUNK - 2 && n < items; i++, n++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                ticks[r] += 50 + (seed >> 57);
                item(b, (uint32_t)ticks[r], FLIGHTREC_USER(seed >> 60),
                     seed >> 20);
                pos[r]++;
            }
            if (ticks[r] > latest)
                latest = ticks[r];
        }
    }
    return n;
}

/* CPU time of this process (user and system): on a machine shared with
 * other work it measures the decoder, where wall time would not. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct count {
    uint64_t events;  /* EVENT records */
    uint64_t others;  /* any other record (a loss would be a bench bug) */
    uint64_t sum;
};

static int on_record(const struct flightrec_record *r, void *arg)
{
    struct count *c = arg;
    if (r->type == FLIGHTREC_RECORD_EVENT)
        c->events++;
    else
        c->others++;
    c->sum += r->time_ns;
    return 0;
}

#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/* Not inlined, so that profiles show each pass as one function. */
static NOINLINE double decode(const struct buf *b, int merge,
                              uint64_t window, struct count *out)
{
    struct count cnt = {0, 0, 0};
    struct flightrec_client_options o = {.on_record = on_record,
                                         .arg = &cnt,
                                         .merge = merge,
                                         .merge_window_ns = window};
    flightrec_client *c;
    double t0 = now();

    if (flightrec_client_create(&c, &o) != 0)
        exit(1);
    for (size_t at = 0; at < b->len; at += PIECE) {
        size_t k = b->len - at < PIECE ? b->len - at : PIECE;
        if (flightrec_client_feed(c, b->p + at, k) != 0)
            break;
    }
    if (flightrec_client_finish(c) != 0) {
        fprintf(stderr, "decode failed: %s\n", flightrec_client_message(c));
        exit(1);
    }
    flightrec_client_destroy(c);
    *out = cnt;
    return now() - t0;
}

/* flightrec_client_read_fd() on the stream in a file. */
static NOINLINE double read_file(const char *path, struct count *out)
{
    struct count cnt = {0, 0, 0};
    struct flightrec_client_options o = {.on_record = on_record,
                                         .arg = &cnt,
                                         .merge = 1};
    flightrec_client *c;
    int fd = open(path, O_RDONLY);
    double t0 = now();

    if (fd < 0 || flightrec_client_create(&c, &o) != 0)
        exit(1);
    if (flightrec_client_read_fd(c, fd) != 0) {
        fprintf(stderr, "read_fd failed: %s\n", flightrec_client_message(c));
        exit(1);
    }
    flightrec_client_destroy(c);
    close(fd);
    *out = cnt;
    return now() - t0;
}

static volatile uint64_t sink;

static double baseline(const struct buf *b)
{
    double t0 = now();
    uint64_t s = 0;

    for (size_t i = 0; i + 8 <= b->len; i += 8) {
        uint64_t w;
        memcpy(&w, b->p + i, 8);
        s += w;
    }
    sink = s;
    return now() - t0;
}

#define PASSES 5
#define RUNS_MAX 101

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    size_t millions = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 50;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    const char *fmt = argc > 3 ? argv[3] : "le32";
    int shape_runs = argc > 4 && strcmp(argv[4], "runs") == 0;
    const char *only = argc > 5 ? argv[5] : NULL;
    uint32_t format = strcmp(fmt, "le64") == 0   ? FLIGHTREC_FORMAT_LE_64
                      : strcmp(fmt, "be32") == 0 ? FLIGHTREC_FORMAT_BE_32
                      : strcmp(fmt, "be64") == 0 ? FLIGHTREC_FORMAT_BE_64
                                                 : FLIGHTREC_FORMAT_LE_32;
    struct buf b;
    size_t items = build(&b, format, millions * 1000000u, shape_runs);
    static double times[PASSES][RUNS_MAX];
    int done[PASSES] = {0};
    struct count recs[PASSES];
    static const char *names[PASSES] = {"baseline (sum of words)",
                                        "decode, unmerged",
                                        "decode, merged (window 1 ms)",
                                        "decode, merged (window 0)",
                                        "read_fd, merged (file, exact)"};
    char path[256];
    const char *tmp = getenv("TMPDIR");
    int fd;

    static const char *const pass_names[PASSES] = {"baseline", "unmerged",
                                                   "window", "window0",
                                                   "read_fd"};
    int want = -1; /* the one pass to run, or -1: all */

    if (only != NULL) {
        for (int i = 0; i < PASSES; i++)
            if (strcmp(only, pass_names[i]) == 0)
                want = i;
        if (want < 0) {
            fprintf(stderr, "bench-decode: unknown pass '%s'\n", only);
            return 2;
        }
    }
    if (items == 0 || runs < 1 || runs > RUNS_MAX)
        return 1;
    memset(recs, 0, sizeof recs);
    snprintf(path, sizeof path, "%s/bench-decode-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    fd = mkstemp(path);
    if (fd < 0 || write(fd, b.p, b.len) != (ssize_t)b.len) {
        perror("bench-decode: temporary file");
        return 1;
    }
    close(fd);
    printf("stream: %s, %s, %zu events, %zu bytes, %d rings, %d runs "
           "(median, min-max)\n",
           fmt, shape_runs ? "runs" : "mixed", items, b.len, RINGS, runs);
    /* Passes interleave run by run, so load on the machine spreads over
     * all of them alike. */
#define RUN_PASS(i) (want < 0 || want == (i))
    for (int r = 0; r < runs; r++) {
        if (RUN_PASS(0) || want > 0) /* the others' figures need it */
            times[0][done[0]++] = baseline(&b);
        if (RUN_PASS(1))
            times[1][done[1]++] = decode(&b, 0, 0, &recs[1]);
        if (RUN_PASS(2))
            times[2][done[2]++] = decode(&b, 1, 1000000, &recs[2]);
        /* Window 0 holds every record. */
        if (RUN_PASS(3) && (items <= 20000000u || want == 3))
            times[3][done[3]++] = decode(&b, 1, 0, &recs[3]);
        if (RUN_PASS(4))
            times[4][done[4]++] = read_file(path, &recs[4]);
    }
    unlink(path);
    qsort(times[0], (size_t)done[0], sizeof(double), cmp_double);
    for (int i = 0; i < PASSES; i++) {
        double med, lo, hi, base = times[0][done[0] / 2];
        if (done[i] == 0)
            continue;
        /* Exactly the generated events, and nothing else: the stream
         * has no losses, and its uptime and chunk items are no records. */
        if (i > 0 && (recs[i].events != items || recs[i].others != 0)) {
            fprintf(stderr, "%s: %llu events and %llu other records, "
                    "want %zu events and no other record\n", names[i],
                    (unsigned long long)recs[i].events,
                    (unsigned long long)recs[i].others, items);
            return 1;
        }
        qsort(times[i], (size_t)done[i], sizeof(double), cmp_double);
        med = times[i][done[i] / 2];
        lo = times[i][0];
        hi = times[i][done[i] - 1];
        printf("%-30s %8.1f M items/s (%6.1f - %6.1f)  %6.3f s  "
               "%5.2fx baseline time\n",
               names[i], (double)items / med / 1e6, (double)items / hi / 1e6,
               (double)items / lo / 1e6, med, med / base);
    }
    free(b.p);
    return 0;
}
