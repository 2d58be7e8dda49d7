/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench-print: how fast "flightrec print FILE > /dev/null" goes.
 *
 * Writes a large flightrec stream (default 10 M events, 4 rings of 4096-item
 * chunks, LE_64) to a temporary file, then times, best of --runs:
 *
 *   decode   the same decode in this process with a no-op callback
 *            (flightrec_client_read_fd, merged, exact order, as print
 *            reads a file) -- the baseline;
 *   print    the flightrec program printing text to /dev/null;
 *   csv      the same with --csv.
 *
 * and reports events/s and the ratio print / decode.  Times are CPU
 * seconds (user and system), which a machine shared with other work
 * leaves comparable.
 *
 *   bench-print [-n EVENTS] [--runs N] [--flightrec PATH] [--keep FILE]
 */
#define _POSIX_C_SOURCE 200809L

#include <flightrec/client.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FLIGHTREC_BIN
#define FLIGHTREC_BIN ""
#endif

/*=====   Stream generation   =====*/

struct gen {
    FILE *f;
    unsigned char buf[1 << 16];
    size_t len;
};

static void put32(struct gen *g, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        g->buf[g->len++] = (unsigned char)(v >> (8 * i));
}

static void item(struct gen *g, uint64_t ticks, uint32_t event, uint64_t data)
{
    if (g->len > sizeof g->buf - 12) {
        if (fwrite(g->buf, 1, g->len, g->f) != g->len) {
            perror("bench-print: write");
            exit(1);
        }
        g->len = 0;
    }
    put32(g, FLIGHTREC_TIME_EVENT(ticks & FLIGHTREC_TIME_MASK, event));
    put32(g, (uint32_t)data);
    put32(g, (uint32_t)(data >> 32));
}

static void name(struct gen *g, uint32_t head, uint64_t head_data,
                 uint32_t ev, const char *s, size_t items)
{
    size_t len = strlen(s);

    item(g, 0, head, head_data);
    for (size_t i = 0; i < items; i++) {
        uint64_t w = 0;
        for (size_t b = 0; b < 8; b++)
            if (i * 8 + b < len)
                w |= (uint64_t)(unsigned char)s[i * 8 + b] << (8 * b);
        item(g, 0, ev, w);
    }
}

/* @a rings rings take turns, a chunk of up to 4096 events each (fewer
 * when the events do not fill every ring's chunk). */
static void generate(const char *path, uint64_t events, unsigned rings)
{
    enum { CHUNK = 4096, SYNC_EVERY = 1024 };
    static const char *const names[4] = { "main", "worker-1", "worker-2",
                                          "io" };
    static const uint32_t ids[8] = {
        FLIGHTREC_USER(0), FLIGHTREC_USER(1), FLIGHTREC_EV_MALLOC_ENTRY,
        FLIGHTREC_EV_MALLOC_EXIT, FLIGHTREC_EV_FREE_ENTRY,
        FLIGHTREC_EV_MUTEX_LOCK_ENTRY, FLIGHTREC_EV_MUTEX_UNLOCK,
        FLIGHTREC_USER(2),
    };
    struct gen *g = calloc(1, sizeof(*g));
    uint64_t *ticks = calloc(rings, sizeof(*ticks));
    uint64_t *pos = calloc(rings, sizeof(*pos));
    uint64_t done = 0, seed = 88172645463325252u;
    uint64_t chunk = events / rings < CHUNK ? events / rings : CHUNK;

    if (chunk == 0)
        chunk = 1;
    if (g == NULL || ticks == NULL || pos == NULL ||
        (g->f = fopen(path, "wb")) == NULL) {
        perror("bench-print: create stream");
        exit(1);
    }
    put32(g, FLIGHTREC_FORMAT_LE_64);
    put32(g, FLIGHTREC_MAGIC);
    item(g, 0, FLIGHTREC_EV_VERSION, FLIGHTREC_STREAM_VERSION);
    item(g, 0, FLIGHTREC_EV_RING_COUNT, rings);
    item(g, 0, FLIGHTREC_EV_PER_CPU_COUNT, 65536);
    item(g, 0, FLIGHTREC_EV_FREQUENCY, 1000000000u);
    item(g, 0, FLIGHTREC_EV_PROCESS_ID, 4242);
    item(g, 0, FLIGHTREC_EV_REALTIME_LOW, 0);
    item(g, 0, FLIGHTREC_EV_REALTIME_HIGH, 0x17900000u);
    name(g, FLIGHTREC_EV_EVENT_NAME_ID, FLIGHTREC_USER(0),
         FLIGHTREC_EV_EVENT_NAME, "request_begin", 2);
    for (unsigned r = 0; r < rings; r++)
        ticks[r] = 1000u + 37u * r;
    while (done < events) {
        for (unsigned r = 0; r < rings && done < events; r++) {
            item(g, 0, FLIGHTREC_EV_PROCESSOR, (uint64_t)r);
            name(g, FLIGHTREC_EV_THREAD_ID, 5000u + r,
                 FLIGHTREC_EV_THREAD_NAME, names[r % 4], 2);
            item(g, 0, FLIGHTREC_EV_RING_CONTEXT, 0);
            item(g, 0, FLIGHTREC_EV_RING_POSITION, pos[r]);
            for (uint64_t i = 0; i < chunk && done < events; i++, done++) {
                if (i % SYNC_EVERY == 0) {
                    item(g, ticks[r], FLIGHTREC_EV_UPTIME_LOW,
                         (uint32_t)ticks[r]);
                    item(g, ticks[r], FLIGHTREC_EV_UPTIME_HIGH,
                         (uint32_t)(ticks[r] >> 32));
                    pos[r] += 2;
                }
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                ticks[r] += 20 + (seed & 63);
                item(g, ticks[r], ids[seed >> 61],
                     0x7f0000000000u + (seed & 0xffffff0u));
                pos[r]++;
            }
        }
    }
    if (fwrite(g->buf, 1, g->len, g->f) != g->len || fclose(g->f) != 0) {
        perror("bench-print: write stream");
        exit(1);
    }
    free(ticks);
    free(pos);
    free(g);
}

/*=====   Timing   =====*/

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int count_record(const struct flightrec_record *r, void *arg)
{
    (void)r;
    ++*(uint64_t *)arg;
    return 0;
}

static double time_decode(const char *path, uint64_t *records)
{
    int fd = open(path, O_RDONLY);
    flightrec_client *c;
    struct flightrec_client_options opt = {
        .on_record = count_record, .arg = records, .merge = 1,
    };

    *records = 0;
    if (fd < 0 || flightrec_client_create(&c, &opt) != 0) {
        fprintf(stderr, "bench-print: cannot set up the decode\n");
        exit(1);
    }
    double t0 = now();
    int rc = flightrec_client_read_fd(c, fd);
    double t = now() - t0;
    if (rc != 0)
        fprintf(stderr, "bench-print: decode: %s\n",
                flightrec_client_message(c));
    flightrec_client_destroy(c);
    close(fd);
    return t;
}

static double cpu_seconds(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_stime.tv_sec +
           ((double)ru->ru_utime.tv_usec + (double)ru->ru_stime.tv_usec) *
               1e-6;
}

/* CPU seconds (user and system) of the program: comparable on a machine
 * shared with other work, where wall time is not. */
static double time_program(const char *bin, const char *path, int csv)
{
    pid_t pid = fork();

    if (pid < 0) {
        perror("bench-print: fork");
        exit(1);
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, 1) < 0)
            _exit(126);
        if (csv)
            execl(bin, bin, "print", "--csv", path, (char *)NULL);
        else
            execl(bin, bin, "print", path, (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    getrusage(RUSAGE_CHILDREN, &after);
    double t = cpu_seconds(&after) - cpu_seconds(&before);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench-print: %s print failed (status %d)\n", bin,
                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        exit(1);
    }
    return t;
}

int main(int argc, char **argv)
{
    uint64_t events = 10000000u;
    int runs = 3;
    const char *bin = FLIGHTREC_BIN;
    const char *keep = NULL;
    unsigned rings = 4;
    int generate_only = 0;
    char path[256];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            events = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--flightrec") == 0 && i + 1 < argc)
            bin = argv[++i];
        else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
            keep = argv[++i];
        else if (strcmp(argv[i], "--rings") == 0 && i + 1 < argc)
            rings = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--generate-only") == 0)
            generate_only = 1;
        else {
            fprintf(stderr, "usage: bench-print [-n EVENTS] [--runs N] "
                    "[--rings N] [--flightrec PATH] [--keep FILE "
                    "[--generate-only]]\n");
            return 2;
        }
    }
    if (rings == 0 || rings > (1u << 24) ||
        (generate_only && keep == NULL)) {
        fprintf(stderr, "bench-print: --rings is 1..2^24; --generate-only "
                "needs --keep\n");
        return 2;
    }
    if (generate_only) {
        generate(keep, events, rings);
        return 0;
    }
    if (bin[0] == '\0') {
        fprintf(stderr, "bench-print: give the program with --flightrec\n");
        return 2;
    }
    if (runs < 1)
        runs = 1;
    if (keep != NULL) {
        snprintf(path, sizeof path, "%s", keep);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/bench-print-XXXXXX",
                 tmp && tmp[0] ? tmp : "/tmp");
        int fd = mkstemp(path);
        if (fd < 0) {
            perror("bench-print: mkstemp");
            return 1;
        }
        close(fd);
    }
    generate(path, events, rings);

    double best_decode = 1e30, best_print = 1e30, best_csv = 1e30;
    uint64_t records = 0;
    for (int i = 0; i < runs; i++) {
        double t = time_decode(path, &records);
        if (t < best_decode)
            best_decode = t;
        t = time_program(bin, path, 0);
        if (t < best_print)
            best_print = t;
        t = time_program(bin, path, 1);
        if (t < best_csv)
            best_csv = t;
    }
    if (keep == NULL)
        unlink(path);

    double ev = (double)events;
    printf("bench-print: %llu events (%llu records), %u rings, best of "
           "%d\n", (unsigned long long)events, (unsigned long long)records,
           rings, runs);
    printf("  decode only (no-op callback) %8.3f s %7.2f M events/s\n",
           best_decode, ev / best_decode / 1e6);
    printf("  flightrec print > /dev/null  %8.3f s %7.2f M events/s\n",
           best_print, ev / best_print / 1e6);
    printf("  flightrec print --csv        %8.3f s %7.2f M events/s\n",
           best_csv, ev / best_csv / 1e6);
    printf("  print / decode-only speed    %8.2f\n",
           best_decode / best_print);
    return 0;
}
