/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A flightrec stream with processor rings (context switches recorded from
 * perf by `flightrec record`) converted to CTF: the kernel trace beside
 * the user-space one, read by babeltrace2 (exact sched_switch lines) and
 * by LTTng's analyses (lttng-cputop, lttng-schedtop: the CPU shares and
 * wait times of the known switches), and to Perfetto (CPU tracks).
 */
#define _POSIX_C_SOURCE 200809L
#include <flightrec/events.h>
#include <flightrec/format.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sink-driver.h"
#include "test.h"

static struct flightrec_ring_info cpu_info[2];

static void cpu_event(struct drv *d, int cpu, uint64_t ns, uint32_t event,
                      uint64_t tid)
{
    struct flightrec_record r = { 0 };
    r.type = FLIGHTREC_RECORD_EVENT;
    r.time_ns = ns;
    r.ring = FLIGHTREC_CPU_RING_BASE + (uint32_t)cpu;
    r.event = event;
    r.data = tid;
    cpu_info[cpu].id = r.ring;
    cpu_info[cpu].context = FLIGHTREC_RING_CONTEXT_CPU;
    cpu_info[cpu].thread_id = -1;
    r.ring_info = &cpu_info[cpu];
    if (fr_sink_record(d->sink, &r) != 0)
        TEST_FAIL("record: %s", d->sink->error);
}

/* Thread 101 ("one") on CPU 0, thread 102 ("two") on CPU 1, from 1000 to
 * 9000 ns: 101 runs 4000 ns (blocks at 3000, preempted at 6000 and back at
 * 8000), 102 runs 5500 ns (preempted at 2000, back at 4500); thread 103
 * ("three") runs on CPU 1 from 2100 until it exits at 2500 (perf records
 * no switch out of an exiting thread: its THREAD_EXIT ends the run). */
static void scenario(int format, const char *path)
{
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, format, path);
    drv_ring(&d, 0, 101, "one", 0);
    drv_ring(&d, 1, 102, "two", 0);
    drv_ring(&d, 2, 103, "three", 0);
    drv_thread(&d, 101, "one");
    drv_thread(&d, 102, "two");
    drv_thread(&d, 103, "three");
    drv_begin(&d);
    cpu_event(&d, 0, 1000, FLIGHTREC_EV_THREAD_SWITCH_IN, 101);
    cpu_event(&d, 1, 1000, FLIGHTREC_EV_THREAD_SWITCH_IN, 102);
    drv_event(&d, 0, 1500, FLIGHTREC_USER(2), 7);
    cpu_event(&d, 1, 2000, FLIGHTREC_EV_THREAD_SWITCH_OUT, 102);
    cpu_event(&d, 1, 2100, FLIGHTREC_EV_THREAD_SWITCH_IN, 103);
    drv_event(&d, 2, 2500, FLIGHTREC_EV_THREAD_EXIT, 103);
    cpu_event(&d, 0, 3000, FLIGHTREC_EV_SCHEDULER_BLOCK, 101);
    cpu_event(&d, 0, 3000, FLIGHTREC_EV_THREAD_SWITCH_OUT, 101);
    cpu_event(&d, 1, 4500, FLIGHTREC_EV_THREAD_SWITCH_IN, 102);
    drv_event(&d, 1, 4600, FLIGHTREC_USER(3), 8);
    cpu_event(&d, 0, 5000, FLIGHTREC_EV_THREAD_SWITCH_IN, 101);
    cpu_event(&d, 0, 6000, FLIGHTREC_EV_THREAD_SWITCH_OUT, 101);
    cpu_event(&d, 0, 8000, FLIGHTREC_EV_THREAD_SWITCH_IN, 101);
    cpu_event(&d, 0, 9000, FLIGHTREC_EV_SCHEDULER_BLOCK, 101);
    cpu_event(&d, 0, 9000, FLIGHTREC_EV_THREAD_SWITCH_OUT, 101);
    cpu_event(&d, 1, 9000, FLIGHTREC_EV_SCHEDULER_BLOCK, 102);
    cpu_event(&d, 1, 9000, FLIGHTREC_EV_THREAD_SWITCH_OUT, 102);
    drv_end(&d);
}

static void check_lines(const char *text, const char *const *want, size_t n)
{
    const char *p = text;
    for (size_t i = 0; i < n; i++) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (strlen(want[i]) != len || memcmp(p, want[i], len) != 0)
            TEST_FAIL("line %zu:\n  got  %.*s\n  want %s\nall:\n%s", i + 1,
                      (int)len, p, want[i], text);
        p = eol ? eol + 1 : p + len;
    }
    if (*p != '\0')
        TEST_FAIL("extra output after %zu lines:\n%s", n, p);
}

#define SW(t, cpu, pc, pt, ps, nc, nt)                                    \
    "[" t "] flightrec sched_switch: { cpu_id = " cpu " }, { prev_comm = " \
    "\"" pc "\", prev_tid = " pt ", prev_prio = 20, prev_state = " ps      \
    ", next_comm = \"" nc "\", next_tid = " nt ", next_prio = 20 }"
#define WAKE(t, cpu, c, tid)                                              \
    "[" t "] flightrec sched_waking: { cpu_id = " cpu " }, { comm = \"" c  \
    "\", tid = " tid ", prio = 20, target_cpu = " cpu " }"

TEST(ctf_kernel_trace_babeltrace2)
{
    const char *dir = scratch("processors-ctf");
    scenario(FR_FORMAT_CTF, dir);
    char path[1200];
    struct stat st;
    /* LTTng's session layout: the two traces side by side. */
    snprintf(path, sizeof path, "%s/kernel/metadata", dir);
    CHECK(stat(path, &st) == 0);
    snprintf(path, sizeof path, "%s/ust/metadata", dir);
    CHECK(stat(path, &st) == 0);
    snprintf(path, sizeof path, "%s/metadata", dir);
    CHECK(stat(path, &st) != 0);

    char cmd[1400];
    int status;
    snprintf(cmd, sizeof cmd, "babeltrace2 --clock-cycles --no-delta "
             "'%s/kernel'", dir);
    char *out = run_cmd(cmd, &status);
    CHECK_EQ_I(status, 0);
    static const char *const want[] = {
        SW("00000000000000001000", "0", "swapper/0", "0", "0", "one", "101"),
        SW("00000000000000001000", "1", "swapper/1", "0", "0", "two", "102"),
        SW("00000000000000002000", "1", "two", "102", "0", "swapper/1", "0"),
        WAKE("00000000000000002000", "1", "two", "102"),
        SW("00000000000000002100", "1", "swapper/1", "0", "0", "three", "103"),
        SW("00000000000000002500", "1", "three", "103", "128", "swapper/1", "0"),
        SW("00000000000000003000", "0", "one", "101", "1", "swapper/0", "0"),
        SW("00000000000000004500", "1", "swapper/1", "0", "0", "two", "102"),
        SW("00000000000000005000", "0", "swapper/0", "0", "0", "one", "101"),
        SW("00000000000000006000", "0", "one", "101", "0", "swapper/0", "0"),
        WAKE("00000000000000006000", "0", "one", "101"),
        SW("00000000000000008000", "0", "swapper/0", "0", "0", "one", "101"),
        SW("00000000000000009000", "0", "one", "101", "1", "swapper/0", "0"),
        SW("00000000000000009000", "1", "two", "102", "1", "swapper/1", "0"),
    };
    check_lines(out, want, sizeof want / sizeof want[0]);
    free(out);

    /* The whole session: both traces, merged in time. */
    snprintf(cmd, sizeof cmd, "babeltrace2 --clock-cycles --no-delta '%s'",
             dir);
    out = run_cmd(cmd, &status);
    CHECK_EQ_I(status, 0);
    CHECK_EQ_I(count_lines(out, "sched_switch:"), 12);
    CHECK_EQ_I(count_lines(out, "sched_waking:"), 2);
    CHECK_EQ_I(count_lines(out, "USER_2:"), 1);
    CHECK_EQ_I(count_lines(out, "USER_3:"), 1);
    free(out);

    /* Converting again replaces the session (it is a CTF output). */
    scenario(FR_FORMAT_CTF, dir);
    snprintf(path, sizeof path, "%s/kernel/metadata", dir);
    CHECK(stat(path, &st) == 0);
}

TEST(ctf_kernel_trace_lttng_analyses)
{
    const char *dir = scratch("processors-analyses");
    scenario(FR_FORMAT_CTF, dir);
    char command[4096];
    snprintf(command, sizeof command,
             "python3 %s/check-processor-analyses.py %s", SRC_DIR, dir);
    int status = system(command);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
}

/* Perfetto: a track per CPU whose slices are the threads running there,
 * checked by the schema (protoc) and by what the importer relies on. */
TEST(perfetto_cpu_tracks)
{
    const char *file = scratch("processors.pftrace");
    scenario(FR_FORMAT_PERFETTO, file);
    char cmd[2048];
    int status;
    snprintf(cmd, sizeof cmd, "protoc --proto_path='%s' "
             "--decode=perfetto.protos.Trace perfetto-trace.proto < '%s' "
             "| grep -cE '^ *[0-9]+:'", SRC_DIR, file);
    char *out = run_cmd(cmd, &status);
    CHECK_EQ_S(out, "0\n");   /* no field the schema does not know */
    free(out);
    snprintf(cmd, sizeof cmd, "python3 '%s/check-perfetto.py' '%s' --detail "
             "| grep -E '^(track|slice)'", SRC_DIR, file);
    out = run_cmd(cmd, &status);
    CHECK_EQ_I(status, 0);
    CHECK_EQ_S(out, "track 1 flightrec pid 4242: slices 0\n"
                    "track 16 CPU 0: slices 3\n"
                    "track 17 CPU 1: slices 3\n"
                    "track 18 one: slices 0\n"
                    "track 19 three: slices 0\n"
                    "track 20 two: slices 0\n"
                    "slice CPU 1 two 1000..2000 depth 0\n"
                    "slice CPU 1 three 2100..2500 depth 0\n"
                    "slice CPU 0 one 1000..3000 depth 0\n"
                    "slice CPU 0 one 5000..6000 depth 0\n"
                    "slice CPU 0 one 8000..9000 depth 0\n"
                    "slice CPU 1 two 4500..9000 depth 0\n");
    free(out);
}

/* ftrace: a thread's own lines are on the CPU the processor rings last
 * switched it in on (before: all on 000); the switch lines on theirs. */
TEST(ftrace_threads_on_their_cpu)
{
    const char *file = scratch("processors.ftrace");
    scenario(FR_FORMAT_FTRACE, file);
    char cmd[2048];
    int status;
    snprintf(cmd, sizeof cmd, "grep -v '^#' '%s'", file);
    char *out = run_cmd(cmd, &status);
    CHECK_EQ_I(status, 0);
    static const char *const want[] = {
        "          <idle>-0       [000] d..2.     0.000001000: sched_switch: "
        "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
        "next_comm=one next_pid=101 next_prio=120",
        "          <idle>-0       [001] d..2.     0.000001000: sched_switch: "
        "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
        "next_comm=two next_pid=102 next_prio=120",
        "             one-101     [000] .....     0.000001500: "
        "tracing_mark_write: I|4242|USER_2 data=0x7",
        "             two-102     [001] d..2.     0.000002000: sched_switch: "
        "prev_comm=two prev_pid=102 prev_prio=120 prev_state=R ==> "
        "next_comm=swapper/1 next_pid=0 next_prio=120",
        "          <idle>-0       [001] d..2.     0.000002100: sched_switch: "
        "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
        "next_comm=three next_pid=103 next_prio=120",
        "           three-103     [001] d..2.     0.000002500: sched_switch: "
        "prev_comm=three prev_pid=103 prev_prio=120 prev_state=X ==> "
        "next_comm=swapper/1 next_pid=0 next_prio=120",
        "           three-103     [001] .....     0.000002500: "
        "tracing_mark_write: I|4242|THREAD_EXIT data=0x67",
        "             one-101     [000] d..2.     0.000003000: sched_switch: "
        "prev_comm=one prev_pid=101 prev_prio=120 prev_state=S ==> "
        "next_comm=swapper/0 next_pid=0 next_prio=120",
        "          <idle>-0       [001] d..2.     0.000004500: sched_switch: "
        "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
        "next_comm=two next_pid=102 next_prio=120",
        "             two-102     [001] .....     0.000004600: "
        "tracing_mark_write: I|4242|USER_3 data=0x8",
        "          <idle>-0       [000] d..2.     0.000005000: sched_switch: "
        "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
        "next_comm=one next_pid=101 next_prio=120",
        /* Preempted, not blocked (before: S, from the run that blocked at
         * 3000). */
        "             one-101     [000] d..2.     0.000006000: sched_switch: "
        "prev_comm=one prev_pid=101 prev_prio=120 prev_state=R ==> "
        "next_comm=swapper/0 next_pid=0 next_prio=120",
        "          <idle>-0       [000] d..2.     0.000008000: sched_switch: "
        "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
        "next_comm=one next_pid=101 next_prio=120",
        "             one-101     [000] d..2.     0.000009000: sched_switch: "
        "prev_comm=one prev_pid=101 prev_prio=120 prev_state=S ==> "
        "next_comm=swapper/0 next_pid=0 next_prio=120",
        "             two-102     [001] d..2.     0.000009000: sched_switch: "
        "prev_comm=two prev_pid=102 prev_prio=120 prev_state=S ==> "
        "next_comm=swapper/1 next_pid=0 next_prio=120",
    };
    check_lines(out, want, sizeof want / sizeof want[0]);
    free(out);
}

TEST_MAIN()
