/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flightrec command on RTEMS streams: the running thread of each CPU
 * in print, stats and --thread, the numbering stats reports, and a piped
 * 1 MHz stream printed in order without late records.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <flightrec/format.h>

#include "stream-vector.h"
#include "test.h"

#ifndef FLIGHTREC_BIN
#error "FLIGHTREC_BIN must name the flightrec program"
#endif
#ifndef CLI_TEST_DIR
#error "CLI_TEST_DIR must name a scratch directory"
#endif

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    CHECK(f != NULL);
    CHECK(fseek(f, 0, SEEK_END) == 0);
    n = ftell(f);
    CHECK(n >= 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    CHECK(buf != NULL);
    CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Runs `BEFORE flightrec ARGS` through the shell (BEFORE may pipe into
 * it); returns its stdout and checks its exit status and that stderr is
 * empty. */
static char *run(const char *before, const char *args, int status)
{
    char cmd[1024], out[512], err[512];
    char *text, *errors;
    int st;

    /* ctest runs the cases in parallel: names of their own. */
    snprintf(out, sizeof out, "%s/rtems.%ld.out", CLI_TEST_DIR,
             (long)getpid());
    snprintf(err, sizeof err, "%s/rtems.%ld.err", CLI_TEST_DIR,
             (long)getpid());
    CHECK((size_t)snprintf(cmd, sizeof cmd, "%s %s %s >%s 2>%s", before,
                           FLIGHTREC_BIN, args, out, err) < sizeof cmd);
    st = system(cmd);
    CHECK(st != -1 && WIFEXITED(st));
    CHECK_EQ_I(WEXITSTATUS(st), status);
    text = slurp(out);
    errors = slurp(err);
    CHECK_EQ_S(errors, "");
    free(errors);
    remove(out);
    remove(err);
    return text;
}

static const char *write_stream(const struct fr_vec *v, const char *name)
{
    static char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", CLI_TEST_DIR, name);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(v->buf, 1, v->len, f) == v->len);
    CHECK(fclose(f) == 0);
    return path;
}

static void load(struct fr_rtems_table *t, const char *file)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", FLIGHTREC_RTEMS_DATA_DIR, file);
    fr_rtems_table_load(t, path);
}

/* RTEMS 5 (version 9), 2 CPUs at 1 MHz: the thread table names IDLE and
 * two tasks; CPU 0 switches IDLE -> UI1, CPU 1 IDLE -> WRK1. */
static void v9_stream(struct fr_vec *v)
{
    struct fr_rtems_table t;
    static const struct {
        uint32_t id;
        const char *name;
    } threads[] = {{0x09010001, "IDLE"}, {0x09010002, "IDLE"},
                   {0x0a010001, "UI1"}, {0x0a010002, "WRK1"}};

    load(&t, "events-rtems-v9.tsv");
    fr_vec_init(v, FLIGHTREC_FORMAT_BE_32);
    fr_vec_item(v, 0, fr_rtems_id(&t, "VERSION"), 9);
    fr_vec_item(v, 0, fr_rtems_id(&t, "PROCESSOR_MAXIMUM"), 1);
    fr_vec_item(v, 0, fr_rtems_id(&t, "PER_CPU_COUNT"), 64);
    fr_vec_item(v, 0, fr_rtems_id(&t, "FREQUENCY"), 1000000);
    fr_vec_packed(v, 0, fr_rtems_id(&t, "BSP"), "leon3", 5);
    for (size_t i = 0; i < 4; i++) {
        fr_vec_item(v, 0, fr_rtems_id(&t, "THREAD_ID"), threads[i].id);
        fr_vec_packed(v, 0, fr_rtems_id(&t, "THREAD_NAME"), threads[i].name,
                      strlen(threads[i].name));
    }
    for (uint32_t cpu = 0; cpu < 2; cpu++) {
        fr_vec_item(v, 0, fr_rtems_id(&t, "PROCESSOR"), cpu);
        fr_vec_item(v, 0, fr_rtems_id(&t, "PER_CPU_TAIL"), 0);
        fr_vec_item(v, 0, fr_rtems_id(&t, "PER_CPU_HEAD"), 6);
        /* uptime 1 s (32.32) */
        fr_vec_item(v, 100 + cpu, fr_rtems_id(&t, "UPTIME_LOW"), 0);
        fr_vec_item(v, 100 + cpu, fr_rtems_id(&t, "UPTIME_HIGH"), 1);
        fr_vec_item(v, 200, fr_rtems_id(&t, "THREAD_SWITCH_OUT"),
                    threads[cpu].id);
        fr_vec_item(v, 200, fr_rtems_id(&t, "THREAD_SWITCH_IN"),
                    threads[2 + cpu].id);
        fr_vec_item(v, 300 + cpu, 512 + cpu, 0x10 + cpu);
        fr_vec_item(v, 400, 512 + 2, 0x20 + cpu);
    }
    fr_rtems_table_free(&t);
}

TEST(print_threads)
{
    struct fr_vec v;
    char args[1024];
    char *out;
    const char *path;

    v9_stream(&v);
    path = write_stream(&v, "v9-print.rec");
    snprintf(args, sizeof args, "print %s", path);
    out = run("", args, 0);
    /* Syncs at field 100 (CPU 0) and 101 (CPU 1), both 1 s: CPU 1's
     * switch at field 200 is first (1.000099 s). */
    CHECK_EQ_S(out,
               "0.000000000 [1] 151060482 IDLE THREAD_SWITCH_OUT 0x9010002\n"
               "0.000000000 [1] 167837698 WRK1 THREAD_SWITCH_IN 0xa010002\n"
               "0.000001000 [0] 151060481 IDLE THREAD_SWITCH_OUT 0x9010001\n"
               "0.000001000 [0] 167837697 UI1 THREAD_SWITCH_IN 0xa010001\n"
               "0.000101000 [0] 167837697 UI1 USER_0 0x10\n"
               "0.000101000 [1] 167837698 WRK1 USER_1 0x11\n"
               "0.000200000 [1] 167837698 WRK1 USER_2 0x21\n"
               "0.000201000 [0] 167837697 UI1 USER_2 0x20\n");
    free(out);
    snprintf(args, sizeof args, "print --thread=WRK1 %s", path);
    out = run("", args, 0);
    CHECK_EQ_S(out,
               "0.000000000 [1] 167837698 WRK1 THREAD_SWITCH_IN 0xa010002\n"
               "0.000101000 [1] 167837698 WRK1 USER_1 0x11\n"
               "0.000200000 [1] 167837698 WRK1 USER_2 0x21\n");
    free(out);
    snprintf(args, sizeof args, "print --thread=167837697 %s", path);
    out = run("", args, 0);
    CHECK_EQ_S(out,
               "0.000001000 [0] 167837697 UI1 THREAD_SWITCH_IN 0xa010001\n"
               "0.000101000 [0] 167837697 UI1 USER_0 0x10\n"
               "0.000201000 [0] 167837697 UI1 USER_2 0x20\n");
    free(out);
    fr_vec_free(&v);
}

TEST(stats_threads)
{
    struct fr_vec v;
    char args[1024];
    char *out;

    v9_stream(&v);
    snprintf(args, sizeof args, "stats %s", write_stream(&v, "v9-stats.rec"));
    out = run("", args, 0);
    CHECK_EQ_S(out,
               "stream: rtems, version 0x00000009, format be32\n"
               "numbering: RTEMS v9 (341 system events)\n"
               "frequency: 1000000 Hz\n"
               "processors: 2\n"
               "items per ring: 64\n"
               "bsp: leon3\n"
               "first record: 1.000099000 s\n"
               "last record: 1.000300000 s\n"
               "duration: 0.000201000 s\n"
               "bytes: 264\n"
               "events: 8 (39801.0/s)\n"
               "untimed: 0\n"
               "late: 0\n"
               "lost: overflow 0, discard 0, missing 0\n"
               "\n"
               "events by type: 5\n"
               "       count         rate/s    id  event\n"
               "           2         9950.2   302  THREAD_SWITCH_IN\n"
               "           2         9950.2   303  THREAD_SWITCH_OUT\n"
               "           2         9950.2   514  USER_2\n"
               "           1         4975.1   512  USER_0\n"
               "           1         4975.1   513  USER_1\n"
               "\n"
               "threads: 4\n"
               "      events         rate/s        tid  name\n"
               "           1         4975.1  151060481  IDLE\n"
               "           1         4975.1  151060482  IDLE\n"
               "           3        14925.4  167837697  UI1\n"
               "           3        14925.4  167837698  WRK1\n"
               "\n"
               "rings: 2\n"
               " ring context       events   overflow    discard    missing"
               "    untimed        tid  name\n"
               "    0  thread            4          0          0          0"
               "          0  167837697  UI1\n"
               "    1  thread            4          0          0          0"
               "          0  167837698  WRK1\n");
    free(out);
    fr_vec_free(&v);
}

/* v10 at 1 MHz, CPU 1's first sync 4.25 s in (its watchdog's period is
 * 2^22 ticks): piped, every record comes out in order, none late. */
TEST(pipe_1mhz)
{
    struct fr_vec v;
    char args[1024];
    char *out, *line;
    size_t lines = 0;
    uint64_t prev = 0;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_item(&v, 0, FLIGHTREC_EV_VERSION, 10);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR_MAXIMUM, 1);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PER_CPU_COUNT, 512);
    fr_vec_item(&v, 0, FLIGHTREC_EV_FREQUENCY, 1000000);
    for (uint32_t k = 0; k < 10; k++) {
        for (uint32_t cpu = 0; cpu < 2; cpu++) {
            fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, cpu);
            for (uint32_t i = 0; i < 5; i++) {
                uint32_t t = k * 500000 + i * 100000;
                uint32_t sync = cpu == 0 ? 250000 : 4250000;
                if (t >= 300000)
                    fr_vec_item(&v, t, FLIGHTREC_USER(cpu), t);
                if (t + 50000 == sync)
                    fr_vec_uptime(&v, sync, (uint64_t)(sync / 1000000) << 32 |
                                                (uint64_t)(sync % 1000000 /
                                                           250000) << 30);
            }
        }
    }
    snprintf(args, sizeof args, "cat %s |", write_stream(&v, "pipe.rec"));
    out = run(args, "print -", 0);
    for (line = strtok(out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        unsigned long long s, ns;
        CHECK(sscanf(line, "%llu.%llu", &s, &ns) == 2);
        CHECK(strstr(line, "late") == NULL);
        CHECK(s * 1000000000u + ns >= prev);
        prev = s * 1000000000u + ns;
        lines++;
    }
    CHECK_EQ_U(lines, 94);
    free(out);
    fr_vec_free(&v);
}

TEST_MAIN(TEST_ENTRY(print_threads), TEST_ENTRY(stats_threads),
          TEST_ENTRY(pipe_1mhz))
