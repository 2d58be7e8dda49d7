/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench-convert [EVENTS [BABELTRACE_EVENTS [RINGS [FORMAT]]]]
 *
 * For each format (or only FORMAT): events/s (CPU time) of the writer alone
 * (records handed to the sink) and end to end (stream bytes through the decoder into
 * the sink) with the events spread over RINGS rings (default 4), and the
 * bytes the output takes per event; then, in the same run, the time
 * babeltrace2 takes to print a smaller CTF trace we wrote and the time
 * `flightrec print` takes on its source stream (BABELTRACE_EVENTS 0 skips
 * this).  The process's peak RSS is printed last: run one FORMAT at a time
 * to read it per format.  Outputs go to a scratch directory under $TMPDIR
 * (or /tmp): each phase writes its own and removes it untimed, so no
 * phase pays for deleting another's files.  For CTF, which writes a file
 * per ring, the time this file system takes to create that many empty files
 * is measured in the same place and printed beside it.  With
 * BENCH_CONVERT_SAVE=PATH the generated stream is also saved to PATH.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <flightrec/events.h>
#include <flightrec/format.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"

static uint32_t RINGS = 4;
#define CHUNK 4096u

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This process's CPU seconds (user and system, so the writes count): a
 * machine shared with other work leaves them comparable, unlike wall time. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*----- a generated flightrec stream (LE_64) -----*/

#ifndef FLIGHTREC_TOOL
#define FLIGHTREC_TOOL "flightrec" /* from PATH when not built alongside */
#endif

struct gen {
    unsigned char *buf;
    size_t len, cap;
};

static void item(struct gen *g, uint32_t t22, uint32_t ev, uint64_t data)
{
    if (g->len + 12 > g->cap) {
        g->cap = g->cap ? g->cap * 2 : 1 << 20;
        g->buf = realloc(g->buf, g->cap);
        if (g->buf == NULL)
            abort();
    }
    uint32_t w = FLIGHTREC_TIME_EVENT(t22 & FLIGHTREC_TIME_MASK, ev);
    memcpy(g->buf + g->len, &w, 4);
    memcpy(g->buf + g->len + 4, &data, 8);
    g->len += 12;
}

/* The event mix of a typical user-space recording. */
static void pick(uint64_t i, uint32_t *ev, uint64_t *data)
{
    static const uint32_t mix[8] = {
        FLIGHTREC_USER(1), FLIGHTREC_EV_MALLOC_ENTRY, FLIGHTREC_EV_MALLOC_EXIT,
        FLIGHTREC_EV_MUTEX_LOCK_ENTRY, FLIGHTREC_EV_MUTEX_LOCK_EXIT,
        FLIGHTREC_EV_MUTEX_UNLOCK, FLIGHTREC_EV_FREE_ENTRY,
        FLIGHTREC_EV_FREE_EXIT
    };
    *ev = mix[i & 7];
    *data = (*ev == FLIGHTREC_EV_MALLOC_ENTRY) ? 64 : 0x10000 + (i & ~7ull);
}

static struct gen make_stream(uint64_t events)
{
    struct gen g = { NULL, 0, 0 };
    uint32_t w = FLIGHTREC_FORMAT_LE_64, magic = FLIGHTREC_MAGIC;
    g.cap = (size_t)(events * 12 * 11 / 10 + 4096);
    g.buf = malloc(g.cap);
    memcpy(g.buf, &w, 4);
    memcpy(g.buf + 4, &magic, 4);
    g.len = 8;
    item(&g, 0, FLIGHTREC_EV_VERSION, FLIGHTREC_STREAM_VERSION);
    item(&g, 0, FLIGHTREC_EV_RING_COUNT, RINGS);
    item(&g, 0, FLIGHTREC_EV_PER_CPU_COUNT, 65536);
    item(&g, 0, FLIGHTREC_EV_FREQUENCY, 1000000000u);
    item(&g, 0, FLIGHTREC_EV_PROCESS_ID, 1234);
    uint64_t per_ring = events / RINGS, done = 0;
    uint32_t *pos = calloc(RINGS, sizeof *pos);
    while (done < per_ring) {
        uint64_t n = per_ring - done < CHUNK ? per_ring - done : CHUNK;
        for (uint32_t r = 0; r < RINGS; r++) {
            item(&g, 0, FLIGHTREC_EV_PROCESSOR, r);
            item(&g, 0, FLIGHTREC_EV_THREAD_ID, 1000 + r);
            item(&g, 0, FLIGHTREC_EV_THREAD_NAME, 0x726f6b726f77ull + r);
            item(&g, 0, FLIGHTREC_EV_THREAD_NAME, 0);
            item(&g, 0, FLIGHTREC_EV_RING_CONTEXT, 0);
            item(&g, 0, FLIGHTREC_EV_RING_POSITION, pos[r]);
            for (uint64_t i = 0; i < n; i++) {
                uint64_t k = done + i;
                uint64_t ticks = 1000 + k * 40 + r * 10;
                if (i % 256 == 0) {
                    item(&g, (uint32_t)ticks, FLIGHTREC_EV_UPTIME_LOW,
                         (uint32_t)ticks);
                    item(&g, (uint32_t)ticks, FLIGHTREC_EV_UPTIME_HIGH,
                         ticks >> 32);
                    pos[r] += 2;
                }
                uint32_t ev;
                uint64_t data;
                pick(k, &ev, &data);
                item(&g, (uint32_t)ticks, ev, data);
                pos[r]++;
            }
        }
        done += n;
    }
    free(pos);
    return g;
}

/*----- sink alone -----*/

static struct flightrec_stream_info bench_info;
static char user_name[32];

static const char *bench_event_name(void *arg, uint32_t event)
{
    (void)arg;
    static const char *const known[] = {
        [FLIGHTREC_EV_MALLOC_ENTRY] = "MALLOC_ENTRY",
        [FLIGHTREC_EV_MALLOC_EXIT] = "MALLOC_EXIT",
        [FLIGHTREC_EV_FREE_ENTRY] = "FREE_ENTRY",
        [FLIGHTREC_EV_FREE_EXIT] = "FREE_EXIT",
        [FLIGHTREC_EV_MUTEX_LOCK_ENTRY] = "MUTEX_LOCK_ENTRY",
        [FLIGHTREC_EV_MUTEX_LOCK_EXIT] = "MUTEX_LOCK_EXIT",
        [FLIGHTREC_EV_MUTEX_UNLOCK] = "MUTEX_UNLOCK",
    };
    if (event < sizeof known / sizeof known[0] && known[event] != NULL)
        return known[event];
    snprintf(user_name, sizeof user_name, "EVENT_%u", event);
    return user_name;
}

static double sink_only(int format, const char *path, uint64_t events)
{
    char err[256];
    struct fr_sink *sink;
    if (fr_sink_create(&sink, format, path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    struct fr_source src = { .info = &bench_info,
                             .event_name = bench_event_name };
    struct flightrec_ring_info *rings = calloc(RINGS, sizeof *rings);
    for (uint32_t r = 0; r < RINGS; r++) {
        rings[r].id = r;
        rings[r].thread_id = 1000 + r;
        snprintf(rings[r].thread_name, sizeof rings[r].thread_name,
                 "worker%u", r);
    }
    double t0 = cpu_now();
    if (fr_sink_begin(sink, &src) != 0)
        exit(1);
    struct flightrec_record rec = { 0 };
    for (uint64_t i = 0; i < events; i++) {
        uint32_t r = (uint32_t)(i % RINGS);
        rec.ring = r;
        rec.ring_info = &rings[r];
        rec.time_ns = 1000 + i * 10;
        pick(i / RINGS, &rec.event, &rec.data);
        if (fr_sink_record(sink, &rec) != 0) {
            fprintf(stderr, "%s\n", sink->error);
            exit(1);
        }
    }
    if (fr_sink_end(sink) != 0) {
        fprintf(stderr, "%s\n", sink->error);
        exit(1);
    }
    double t = cpu_now() - t0;
    fr_sink_destroy(sink);
    free(rings);
    return (double)events / t;
}

/* CPU seconds to create (and close) @a n empty files in a new directory
 * @a dir, which is then removed (untimed). */
static double create_files(const char *dir, uint32_t n)
{
    if (mkdir(dir, 0755) != 0)
        return -1;
    char path[700];
    double t0 = cpu_now();
    for (uint32_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/stream_%" PRIu32, dir, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || close(fd) != 0)
            return -1;
    }
    double t = cpu_now() - t0;
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return -1;
    return t;
}

static double end_to_end(int format, const char *path, const struct gen *g,
                         uint64_t *records)
{
    char err[256];
    struct fr_sink *sink;
    if (fr_sink_create(&sink, format, path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    struct fr_convert_stats stats;
    double t0 = cpu_now();
    if (fr_convert_buffer(g->buf, g->len, sink, &stats, err, sizeof err)) {
        fprintf(stderr, "convert: %s\n", err);
        exit(1);
    }
    double t = cpu_now() - t0;
    fr_sink_destroy(sink);
    *records = stats.records;
    return (double)stats.records / t;
}

int main(int argc, char **argv)
{
    uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000;
    uint64_t bt_events = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    if (argc > 3)
        RINGS = (uint32_t)strtoul(argv[3], NULL, 10);
    int only = argc > 4 ? fr_format_parse(argv[4]) : -1;
    if (RINGS == 0 || (argc > 4 && only < 0)) {
        fprintf(stderr, "usage: bench-convert [EVENTS [BT_EVENTS [RINGS "
                        "[FORMAT]]]]\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char base[512];
    snprintf(base, sizeof base, "%s/bench-convert-%d", tmp, (int)getpid());
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", base);
    if (system(cmd) != 0)
        return 1;
    bench_info.kind = FLIGHTREC_STREAM_FLIGHTREC;
    bench_info.frequency = 1000000000u;
    bench_info.process_id = 1234;

    printf("generating a %" PRIu64 "-event stream over %" PRIu32
           " rings ...\n", events, RINGS);
    struct gen g = make_stream(events);
    /* The same stream as a file, for measuring the command itself
     * (e.g. under /usr/bin/time -v). */
    const char *save = getenv("BENCH_CONVERT_SAVE");
    if (save != NULL) {
        FILE *f = fopen(save, "wb");
        if (f == NULL || fwrite(g.buf, 1, g.len, f) != g.len || fclose(f))
            return 1;
    }
    printf("%-9s %16s %22s %12s\n", "format", "writer (Mev/s)",
           "decode+write (Mev/s)", "bytes/event");
    static const int formats[] = { FR_FORMAT_CTF, FR_FORMAT_PERFETTO,
                                   FR_FORMAT_FTRACE, FR_FORMAT_JSON };
    for (size_t i = 0; i < 4; i++) {
        if (only >= 0 && formats[i] != only)
            continue;
        char path[640], path_e2e[700];
        snprintf(path, sizeof path, "%s/out-%s", base,
                 fr_format_name(formats[i]));
        snprintf(path_e2e, sizeof path_e2e, "%s-e2e", path);
        double w = sink_only(formats[i], path, events);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
        if (system(cmd) != 0)
            return 1;
        uint64_t records;
        double e = end_to_end(formats[i], path_e2e, &g, &records);
        snprintf(cmd, sizeof cmd, "du -s -b '%s'", path_e2e);
        FILE *du = popen(cmd, "r");
        unsigned long long bytes = 0;
        if (du == NULL || fscanf(du, "%llu", &bytes) != 1)
            bytes = 0;
        if (du != NULL)
            pclose(du);
        printf("%-9s %16.1f %22.1f %12.2f\n", fr_format_name(formats[i]),
               w / 1e6, e / 1e6, (double)bytes / (double)records);
        if (records != events)
            printf("  (decoder delivered %" PRIu64 " records)\n", records);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", path_e2e);
        if (system(cmd) != 0)
            return 1;
        if (formats[i] == FR_FORMAT_CTF) {
            /* What one file per ring costs here by itself, and its share
             * of the writer-alone time. */
            snprintf(path, sizeof path, "%s/create-test", base);
            double c = create_files(path, RINGS);
            if (c >= 0)
                printf("  creating %" PRIu32 " empty files here: %.1f us "
                       "each, %.0f%% of the CTF writer's time "
                       "(%" PRIu64 " events a ring)\n", RINGS,
                       c / RINGS * 1e6, 100.0 * c * w / (double)events,
                       events / RINGS);
        }
    }

    if (bt_events == 0)
        goto done;
    /* babeltrace2 reading a CTF trace we wrote, for scale. */
    struct gen small = make_stream(bt_events);
    char dir[640];
    snprintf(dir, sizeof dir, "%s/bt-ctf", base);
    uint64_t records;
    end_to_end(FR_FORMAT_CTF, dir, &small, &records);
    snprintf(cmd, sizeof cmd, "babeltrace2 '%s' > /dev/null", dir);
    double t0 = now();
    int rc = system(cmd);
    double t = now() - t0;
    if (rc == 0)
        printf("babeltrace2 printing our CTF: %" PRIu64 " events in %.2f s "
               "= %.2f Mev/s\n", records, t, (double)records / t / 1e6);
    else
        printf("babeltrace2 not available or failed (%d)\n", rc);

    /* The same events printed by flightrec from the source stream. */
    char stream_path[640];
    snprintf(stream_path, sizeof stream_path, "%s/source.rec", base);
    FILE *file = fopen(stream_path, "wb");
    if (file == NULL || fwrite(small.buf, 1, small.len, file) != small.len ||
        fclose(file) != 0)
        return 1;
    snprintf(cmd, sizeof cmd, "'%s' print '%s' > /dev/null", FLIGHTREC_TOOL,
             stream_path);
    t0 = now();
    rc = system(cmd);
    double tp = now() - t0;
    if (rc == 0)
        printf("flightrec print, same events:  %" PRIu64 " events in %.2f s "
               "= %.2f Mev/s (%.1fx babeltrace2)\n", records, tp,
               (double)records / tp / 1e6, t / tp);
    else
        printf("flightrec print failed (%d)\n", rc);
    free(small.buf);
done:;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS: %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        return 1;
    free(g.buf);
    return 0;
}
