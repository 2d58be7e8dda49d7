/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Perfetto, Chrome JSON and ftrace writers on the same two scenarios (a
 * flightrec user-space recording and an RTEMS kernel recording), read back
 * with protoc against Perfetto's trace schema, with python checkers that
 * apply the readers' own rules, and with the JSON readers themselves.
 */
#define _POSIX_C_SOURCE 200809L
#include <flightrec/events.h>
#include <inttypes.h>

#include "sink-driver.h"
#include "test.h"

#ifndef SRC_DIR
#error SRC_DIR must name tests/convert
#endif

static void user_scenario(int format, const char *path)
{
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, format, path);
    d.user_names[3] = "frame_done";
    drv_ring(&d, 0, 101, "worker one", 0);
    drv_ring(&d, 1, 102, "logger", 0);
    drv_ring(&d, 2, 101, "worker one", 1);
    drv_begin(&d);
    drv_event(&d, 0, 1000, FLIGHTREC_EV_MUTEX_LOCK_ENTRY, 0xa0);
    drv_event(&d, 0, 1100, FLIGHTREC_EV_MUTEX_LOCK_EXIT, 0xa0);
    drv_event(&d, 0, 1200, FLIGHTREC_EV_READ_ENTRY, 3);
    drv_event(&d, 1, 1300, FLIGHTREC_EV_MALLOC_ENTRY, 100);
    drv_event(&d, 1, 1350, FLIGHTREC_EV_MALLOC_EXIT, 0x5000);
    drv_event(&d, 2, 1400, FLIGHTREC_EV_INTERRUPT_ENTRY, 10);
    drv_event(&d, 2, 1450, FLIGHTREC_USER(3), 42);
    drv_event(&d, 2, 1500, FLIGHTREC_EV_INTERRUPT_EXIT, 10);
    drv_event(&d, 0, 1600, FLIGHTREC_EV_READ_EXIT, 17);
    drv_event(&d, 0, 1700, FLIGHTREC_EV_MUTEX_UNLOCK, 0xa0);
    drv_event(&d, 1, 1800, FLIGHTREC_EV_FREE_ENTRY, 0x5000);
    drv_event(&d, 1, 1850, FLIGHTREC_EV_FREE_EXIT, 0);
    drv_event(&d, 0, 1900, FLIGHTREC_EV_FUNCTION_ENTRY, 0x401000);
    drv_event(&d, 0, 2000, FLIGHTREC_EV_FUNCTION_EXIT, 0x401000);
    drv_loss(&d, 1, 2100, FLIGHTREC_LOSS_OVERFLOW, 4);
    drv_end(&d);
}


static char *decode_perfetto(const char *file)
{
    char cmd[2048];
    int st;
    snprintf(cmd, sizeof cmd, "protoc --proto_path='%s' "
             "--decode=perfetto.protos.Trace perfetto-trace.proto < '%s'",
             SRC_DIR, file);
    char *out = run_cmd(cmd, &st);
    if (st != 0)
        TEST_FAIL("protoc failed:\n%s", out);
    /* Fields the schema does not know print as bare numbers. */
    snprintf(cmd, sizeof cmd, "protoc --proto_path='%s' "
             "--decode=perfetto.protos.Trace perfetto-trace.proto < '%s' "
             "| grep -cE '^ *[0-9]+:'", SRC_DIR, file);
    char *unknown = run_cmd(cmd, &st);
    CHECK_EQ_S(unknown, "0\n");
    free(unknown);
    return out;
}

/* What the importer relies on beyond the schema (check-perfetto.py). */
static char *check_perfetto(const char *file)
{
    char cmd[2048];
    int st;
    snprintf(cmd, sizeof cmd, "python3 '%s/check-perfetto.py' '%s'", SRC_DIR,
             file);
    char *out = run_cmd(cmd, &st);
    if (st != 0)
        TEST_FAIL("check-perfetto.py rejects %s:\n%s", file, out);
    return out;
}

static void check_text(const char *got, const char *want);

TEST(perfetto_user)
{
    const char *file = scratch("user.pftrace");
    user_scenario(FR_FORMAT_PERFETTO, file);
    char *out = decode_perfetto(file);
    CHECK_EQ_I(count_lines(out, "packet {"), 24);
    CHECK_EQ_I(count_lines(out, "trusted_packet_sequence_id: 1"), 24);
    CHECK_EQ_I(count_lines(out, "clock_snapshot {"), 1);
    CHECK_EQ_I(count_lines(out, "sequence_flags: 3"), 1);
    CHECK_EQ_I(count_lines(out, "track_descriptor {"), 5);
    CHECK_EQ_I(count_lines(out, "process_name: \"flightrec pid 4242\""), 1);
    CHECK_EQ_I(count_lines(out, "thread_name: \"worker one\""), 1);
    CHECK_EQ_I(count_lines(out, "thread_name: \"logger\""), 1);
    CHECK_EQ_I(count_lines(out, "name: \"worker one signals\""), 1);
    CHECK_EQ_I(count_lines(out, "unit: UNIT_SIZE_BYTES"), 1);
    CHECK_EQ_I(count_lines(out, "type: TYPE_SLICE_BEGIN"), 7);
    CHECK_EQ_I(count_lines(out, "type: TYPE_SLICE_END"), 7);
    CHECK_EQ_I(count_lines(out, "type: TYPE_INSTANT"), 2);
    CHECK_EQ_I(count_lines(out, "type: TYPE_COUNTER"), 2);
    static const char *const names[] = {
        "name: \"lock wait 0xa0\"", "name: \"lock held 0xa0\"",
        "name: \"read\"", "name: \"malloc\"", "name: \"signal 10\"",
        "name: \"free\"", "name: \"0x401000\"",
        "name: \"frame_done\"", "name: \"items lost (overflow)\"",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (count_lines(out, names[i]) != 1)
            TEST_FAIL("%s: %d times in\n%s", names[i],
                      count_lines(out, names[i]), out);
    CHECK_EQ_I(count_lines(out, "counter_value: 100"), 1);
    CHECK_EQ_I(count_lines(out, "counter_value: 0"), 1);
    CHECK_EQ_I(count_lines(out, "timestamp: 1100"), 2);
    free(out);
    out = check_perfetto(file);
    check_text(out,
        "clock snapshot: BOOTTIME 0 = REALTIME 1700000000000000000\n"
        "track 1 flightrec pid 4242: slices 0\n"
        "track 2 heap bytes in use: slices 0\n"
        "track 16 worker one: slices 4\n"
        "track 17 logger: slices 2\n"
        "track 18 worker one signals: slices 1\n");
    free(out);
}

TEST(perfetto_kernel)
{
    const char *file = scratch("kernel.pftrace");
    drv_kernel_scenario(FR_FORMAT_PERFETTO, file, 1);
    char *out = decode_perfetto(file);
    CHECK_EQ_I(count_lines(out, "track_descriptor {"), 9);
    CHECK_EQ_I(count_lines(out, "name: \"CPU 0\""), 1);
    CHECK_EQ_I(count_lines(out, "name: \"CPU 1 IRQs\""), 1);
    CHECK_EQ_I(count_lines(out, "thread_name: \"WORK\""), 1);
    CHECK_EQ_I(count_lines(out, "thread_name: \"UART rx\""), 1);
    CHECK_EQ_I(count_lines(out, "type: TYPE_SLICE_BEGIN"), 4);
    /* UART rx still runs at the end: its slice ends there (was left open) */
    CHECK_EQ_I(count_lines(out, "type: TYPE_SLICE_END"), 4);
    /* no wall-clock time in an RTEMS stream: no snapshot */
    CHECK_EQ_I(count_lines(out, "clock_snapshot {"), 0);
    CHECK_EQ_I(count_lines(out, "type: TYPE_INSTANT"), 3);
    CHECK_EQ_I(count_lines(out, "name: \"IRQ 11\""), 1);
    CHECK_EQ_I(count_lines(out, "name: \"write\""), 1);
    CHECK_EQ_I(count_lines(out, "name: \"waking\""), 1);
    CHECK_EQ_I(count_lines(out, "name: \"USER_2\""), 1);
    /* running-thread slices, plus the thread_name lines */
    CHECK_EQ_I(count_lines(out, "name: \"WORK\""), 2);
    CHECK_EQ_I(count_lines(out, "name: \"UART rx\""), 2);
    free(out);
    out = check_perfetto(file);
    check_text(out,
        "clock snapshot: none\n"
        "track 1 RTEMS qemu: slices 0\n"
        "track 16 CPU 0: slices 1\n"
        "track 17 CPU 0 IRQs: slices 1\n"
        "track 18 IDLE: slices 0\n"
        "track 19 WORK: slices 1\n"
        "track 20 CPU 1: slices 1\n"
        "track 21 CPU 1 IRQs: slices 0\n"
        "track 22 IDLE: slices 0\n"
        "track 23 UART rx: slices 0\n");
    free(out);
}

/* The main thread names the process; a record delivered late (earlier
 * than one already written) and slices open at the end still give a trace
 * the importer takes whole. */
TEST(perfetto_semantics)
{
    const char *file = scratch("semantics.pftrace");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_PERFETTO, file);
    drv_ring(&d, 0, 4242, "myprog", 0);
    drv_ring(&d, 1, 4250, "worker", 0);
    drv_begin(&d);
    drv_event(&d, 0, 1000, FLIGHTREC_EV_READ_ENTRY, 3);
    drv_event(&d, 1, 2000, FLIGHTREC_EV_MUTEX_LOCK_EXIT, 0xa0);
    drv_event(&d, 0, 1500, FLIGHTREC_EV_READ_EXIT, 3);   /* late */
    drv_event(&d, 0, 2500, FLIGHTREC_EV_WRITE_ENTRY, 1);
    drv_end(&d);
    char *out = decode_perfetto(file);
    CHECK_EQ_I(count_lines(out, "process_name: \"flightrec pid 4242\""), 1);
    CHECK_EQ_I(count_lines(out, "process_name: \"myprog\""), 1);
    /* the late exit is shown at the latest time written */
    CHECK_EQ_I(count_lines(out, "timestamp: 2000"), 2);
    CHECK_EQ_I(count_lines(out, "timestamp: 2500"), 3);
    free(out);
    out = check_perfetto(file);
    check_text(out,
        "clock snapshot: BOOTTIME 0 = REALTIME 1700000000000000000\n"
        "track 1 myprog: slices 0\n"
        "track 16 myprog: slices 2\n"
        "track 17 worker: slices 1\n");
    free(out);
}

static char *check_script(const char *script, const char *file)
{
    char cmd[2048];
    int st;
    snprintf(cmd, sizeof cmd, "python3 '%s/%s' '%s'", SRC_DIR, script, file);
    char *out = run_cmd(cmd, &st);
    if (st != 0)
        TEST_FAIL("%s rejects %s:\n%s", script, file, out);
    return out;
}

static void check_text(const char *got, const char *want)
{
    if (strcmp(got, want) != 0)
        TEST_FAIL("got:\n%s\nwant:\n%s", got, want);
}

TEST(json_user)
{
    const char *file = scratch("user.json");
    user_scenario(FR_FORMAT_JSON, file);
    char *out = check_script("check-json.py", file);
    /* Complete slices, written when they end; the process is named at
     * the end (no thread is the main thread here). */
    check_text(out,
        "M 101 worker one\n"
        "X 101 1000+100 lock wait 0xa0 {}\n"
        "M 102 logger\n"
        "X 102 1300+50 malloc {\"data\": \"0x64\", \"result\": \"0x5000\"}\n"
        "C 0 1350 heap {\"bytes_in_use\": 100}\n"
        "M 1000000018 worker one signals\n"
        "i 1000000018 1450 frame_done {\"data\": \"0x2a\"}\n"
        "X 1000000018 1400+100 signal 10 {}\n"
        "X 101 1200+400 read {\"data\": \"0x3\", \"result\": \"0x11\"}\n"
        "X 101 1100+600 lock held 0xa0 {}\n"
        "C 0 1800 heap {\"bytes_in_use\": 0}\n"
        "X 102 1800+50 free {\"data\": \"0x5000\", \"result\": \"0x0\"}\n"
        "X 101 1900+100 0x401000 {}\n"
        "i 102 2100 items lost {\"count\": 4, \"kind\": \"overflow\"}\n"
        "M 0 flightrec pid 4242\n");
    free(out);
}

TEST(json_kernel)
{
    const char *file = scratch("kernel.json");
    drv_kernel_scenario(FR_FORMAT_JSON, file, 1);
    char *out = check_script("check-json.py", file);
    /* UART rx still runs when the trace ends: its slice ends there. */
    check_text(out,
        "M 1000000016 CPU 0\n"
        "M 1000000017 CPU 0 IRQs\n"
        "M 151060481 IDLE\n"
        "M 167837697 WORK\n"
        "M 1000000020 CPU 1\n"
        "M 1000000021 CPU 1 IRQs\n"
        "M 151060482 IDLE\n"
        "M 167837698 UART rx\n"
        "i 167837698 1250 waking {\"cpu\": 0}\n"
        "X 1000000017 1200+100 IRQ 11 {}\n"
        "X 167837697 1400+100 write {\"data\": \"0x1\", \"result\": \"0x5\"}\n"
        "i 167837697 1600 USER_2 {\"data\": \"0xdeadbeef\"}\n"
        "X 1000000016 1000+700 WORK {}\n"
        "i 1000000020 1800 items lost {\"count\": 2, \"kind\": \"overflow\"}\n"
        "X 1000000020 1100+700 UART rx {}\n"
        "M 0 RTEMS qemu\n");
    free(out);
}

/* Two threads interleaved, slices three deep, adjacent slices (lock wait
 * then held at the same nanosecond) three hours into the uptime, where
 * microseconds in floating point no longer add up exactly, and a lock
 * released out of order (the model splits the slices to keep them
 * nested).  Was: the DevTools engine threw on unnamed E events and
 * speedscope built a staircase of unended slices. */
TEST(json_viewers)
{
    const char *file = scratch("viewers.json");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_JSON, file);
    drv_ring(&d, 0, 4242, "myprog", 0);
    drv_ring(&d, 1, 4243, "worker", 0);
    drv_begin(&d);
    uint64_t t = 3ull * 3600 * 1000000000 + 123;
    for (uint32_t i = 0; i < 1000; i++) {
        for (uint32_t ring = 0; ring < 2; ring++) {
            uint64_t lock = 0xa0 + ring;
            drv_event(&d, ring, t + 0, FLIGHTREC_EV_MUTEX_LOCK_ENTRY, lock);
            drv_event(&d, ring, t + 7, FLIGHTREC_EV_MUTEX_LOCK_EXIT, lock);
            drv_event(&d, ring, t + 9, FLIGHTREC_EV_READ_ENTRY, 3);
            drv_event(&d, ring, t + 9, FLIGHTREC_EV_MALLOC_ENTRY, 16);
            drv_event(&d, ring, t + 13, FLIGHTREC_EV_MALLOC_EXIT, 0x5000);
            drv_event(&d, ring, t + 13, FLIGHTREC_EV_READ_EXIT, 16);
            drv_event(&d, ring, t + 21, FLIGHTREC_EV_MUTEX_UNLOCK, lock);
            t += 3;
        }
        t += 17;
    }
    /* held 0xb0, then 0xb1 inside; 0xb0 is released first */
    drv_event(&d, 1, t, FLIGHTREC_EV_MUTEX_LOCK_EXIT, 0xb0);
    drv_event(&d, 1, t + 10, FLIGHTREC_EV_MUTEX_LOCK_EXIT, 0xb1);
    drv_event(&d, 1, t + 20, FLIGHTREC_EV_MUTEX_UNLOCK, 0xb0);
    drv_event(&d, 1, t + 30, FLIGHTREC_EV_MUTEX_UNLOCK, 0xb1);
    drv_end(&d);
    char cmd[2048];
    int st;
    snprintf(cmd, sizeof cmd, "node '%s/check-json-viewers.mjs' '%s' '%s'",
             SRC_DIR, NPM_MODULES, file);
    char *out = run_cmd(cmd, &st);
    if (st != 0)
        TEST_FAIL("the JSON readers failed (scripts/install-deps.sh test "
                  "installs them):\n%s", out);
    /* 4 slices an iteration; worker: + held 0xb0, and held 0xb1 in two
     * pieces (ended and reopened when 0xb0, below it, is released). */
    check_text(out,
        "devtools 4242 myprog: slices 4000, entries 4000, depth 3\n"
        "devtools 4243 worker: slices 4003, entries 4003, depth 3\n"
        "devtools complaints: 0\n"
        "speedscope myprog (pid 4242), myprog (tid 4242): slices 4000, "
        "depth 3\n"
        "speedscope myprog (pid 4242), worker (tid 4243): slices 4003, "
        "depth 3\n"
        "speedscope warnings: 0\n");
    free(out);
    free(check_script("check-json.py", file));
}

TEST(ftrace_user)
{
    const char *file = scratch("user.txt");
    user_scenario(FR_FORMAT_FTRACE, file);
    char *out = check_script("check-ftrace.py", file);
    check_text(out,
        "worker_one 101 000 1000 tracing_mark_write:B|4242|lock wait 0xa0\n"
        "worker_one 101 000 1100 tracing_mark_write:E|4242\n"
        "worker_one 101 000 1100 tracing_mark_write:B|4242|lock held 0xa0\n"
        "worker_one 101 000 1200 sys_read(data: 3\n"
        "logger 102 000 1300 tracing_mark_write:B|4242|malloc\n"
        "logger 102 000 1350 tracing_mark_write:E|4242\n"
        "logger 102 000 1350 tracing_mark_write:C|4242|heap_bytes_in_use|100\n"
        "worker_one 101 000 1400 tracing_mark_write:B|4242|signal 10\n"
        "worker_one 101 000 1450 tracing_mark_write:I|4242|frame_done data=0x2a\n"
        "worker_one 101 000 1500 tracing_mark_write:E|4242\n"
        "worker_one 101 000 1600 sys_read->0x11\n"
        "worker_one 101 000 1700 tracing_mark_write:E|4242\n"
        "logger 102 000 1800 tracing_mark_write:B|4242|free\n"
        "logger 102 000 1800 tracing_mark_write:C|4242|heap_bytes_in_use|0\n"
        "logger 102 000 1850 tracing_mark_write:E|4242\n"
        "worker_one 101 000 1900 tracing_mark_write:B|4242|0x401000\n"
        "worker_one 101 000 2000 tracing_mark_write:E|4242\n"
        "LOST cpu=0 count=4\n");
    free(out);
}

TEST(ftrace_kernel)
{
    const char *file = scratch("kernel.txt");
    drv_kernel_scenario(FR_FORMAT_FTRACE, file, 1);
    char *out = check_script("check-ftrace.py", file);
    check_text(out,
        "<idle> 0 000 1000 sched_switch:prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=WORK next_pid=167837697 next_prio=120\n"
        "<idle> 0 001 1100 sched_switch:prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=UART_rx next_pid=167837698 next_prio=120\n"
        "WORK 167837697 000 1200 irq_handler_entry:irq=11 name=irq11\n"
        "WORK 167837697 000 1250 sched_waking:comm=UART_rx pid=167837698 prio=120 target_cpu=000\n"
        "WORK 167837697 000 1300 irq_handler_exit:irq=11 ret=handled\n"
        "WORK 167837697 000 1400 sys_write(data: 1\n"
        "WORK 167837697 000 1500 sys_write->0x5\n"
        "WORK 167837697 000 1600 tracing_mark_write:I|167837697|USER_2 data=0xdeadbeef\n"
        "WORK 167837697 000 1700 sched_switch:prev_comm=WORK prev_pid=167837697 prev_prio=120 prev_state=R ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
        "LOST cpu=1 count=2\n");
    free(out);
}

/* Was: a switch from "swapper" (pid 0) invented when the thread switched
 * out is unknown: the first switch of a CPU, or one a loss cut in half. */
TEST(ftrace_half_switch)
{
    const char *file = scratch("half-switch.txt");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_RTEMS_V10, FR_FORMAT_FTRACE, file);
    const int64_t a = 0x0a010001, b = 0x0a010002;
    drv_thread(&d, a, "A");
    drv_thread(&d, b, "B");
    drv_begin(&d);
    drv_event(&d, 0, 1000, FLIGHTREC_EV_THREAD_SWITCH_IN, (uint64_t)a);
    drv_event(&d, 0, 1100, FLIGHTREC_EV_THREAD_SWITCH_OUT, (uint64_t)a);
    drv_event(&d, 0, 1100, FLIGHTREC_EV_THREAD_SWITCH_IN, (uint64_t)b);
    drv_event(&d, 0, 1200, FLIGHTREC_EV_THREAD_SWITCH_OUT, (uint64_t)b);
    drv_loss(&d, 0, 1250, FLIGHTREC_LOSS_OVERFLOW, 9);
    drv_event(&d, 0, 1300, FLIGHTREC_EV_THREAD_SWITCH_IN, (uint64_t)a);
    drv_event(&d, 0, 1400, FLIGHTREC_USER(1), 5);
    drv_end(&d);
    char *out = check_script("check-ftrace.py", file);
    check_text(out,
        "A 167837697 000 1100 sched_switch:prev_comm=A prev_pid=167837697 prev_prio=120 prev_state=R ==> next_comm=B next_pid=167837698 next_prio=120\n"
        "LOST cpu=0 count=9\n"
        "A 167837697 000 1400 tracing_mark_write:I|167837697|USER_1 data=0x5\n");
    free(out);
}

/* `flightrec record` writes free() as FREE_ENTRY alone: each is a free of
 * no duration, ended at its own time before the next record (here another
 * thread's), or at the end of the stream; a FREE_EXIT right after it (older
 * recordings) still ends it at the exit's time.  Was: the slice stayed
 * open, and the frees after it nested inside it.  Output in time order. */
TEST(ftrace_free_without_exit)
{
    const char *file = scratch("free-alone.txt");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_FTRACE, file);
    drv_ring(&d, 0, 101, "worker", 0);
    drv_ring(&d, 1, 102, "logger", 0);
    drv_begin(&d);
    drv_event(&d, 0, 1000, FLIGHTREC_EV_MALLOC_ENTRY, 64);
    drv_event(&d, 0, 1000, FLIGHTREC_EV_MALLOC_EXIT, 0x5000);
    drv_event(&d, 0, 1200, FLIGHTREC_EV_FREE_ENTRY, 0x5000);
    drv_event(&d, 1, 1300, FLIGHTREC_USER(1), 7);
    drv_event(&d, 0, 1400, FLIGHTREC_EV_FREE_ENTRY, 0);
    drv_event(&d, 0, 1450, FLIGHTREC_EV_FREE_EXIT, 0);
    drv_event(&d, 0, 1500, FLIGHTREC_EV_FREE_ENTRY, 0);
    drv_event(&d, 0, 1600, FLIGHTREC_EV_MALLOC_ENTRY, 32);
    drv_event(&d, 0, 1600, FLIGHTREC_EV_MALLOC_EXIT, 0x6000);
    drv_event(&d, 0, 1700, FLIGHTREC_EV_FREE_ENTRY, 0x6000);
    /* A free recorded by hand whose exit comes after another thread's
     * record: no duration, and its exit shows nothing. */
    drv_event(&d, 0, 1800, FLIGHTREC_EV_FREE_ENTRY, 0);
    drv_event(&d, 1, 1850, FLIGHTREC_USER(1), 8);
    drv_event(&d, 0, 1900, FLIGHTREC_EV_FREE_EXIT, 0);
    drv_event(&d, 0, 2000, FLIGHTREC_EV_FREE_ENTRY, 0);
    drv_end(&d);
    char *out = check_script("check-ftrace.py", file);
    check_text(out,
        "worker 101 000 1000 tracing_mark_write:B|4242|malloc\n"
        "worker 101 000 1000 tracing_mark_write:E|4242\n"
        "worker 101 000 1000 tracing_mark_write:C|4242|heap_bytes_in_use|64\n"
        "worker 101 000 1200 tracing_mark_write:B|4242|free\n"
        "worker 101 000 1200 tracing_mark_write:C|4242|heap_bytes_in_use|0\n"
        "worker 101 000 1200 tracing_mark_write:E|4242\n"
        "logger 102 000 1300 tracing_mark_write:I|4242|USER_1 data=0x7\n"
        "worker 101 000 1400 tracing_mark_write:B|4242|free\n"
        "worker 101 000 1450 tracing_mark_write:E|4242\n"
        "worker 101 000 1500 tracing_mark_write:B|4242|free\n"
        "worker 101 000 1500 tracing_mark_write:E|4242\n"
        "worker 101 000 1600 tracing_mark_write:B|4242|malloc\n"
        "worker 101 000 1600 tracing_mark_write:E|4242\n"
        "worker 101 000 1600 tracing_mark_write:C|4242|heap_bytes_in_use|32\n"
        "worker 101 000 1700 tracing_mark_write:B|4242|free\n"
        "worker 101 000 1700 tracing_mark_write:C|4242|heap_bytes_in_use|0\n"
        "worker 101 000 1700 tracing_mark_write:E|4242\n"
        "worker 101 000 1800 tracing_mark_write:B|4242|free\n"
        "worker 101 000 1800 tracing_mark_write:E|4242\n"
        "logger 102 000 1850 tracing_mark_write:I|4242|USER_1 data=0x8\n"
        "worker 101 000 2000 tracing_mark_write:B|4242|free\n"
        "worker 101 000 2000 tracing_mark_write:E|4242\n");
    free(out);
}

TEST_MAIN()
