/* SPDX-License-Identifier: BSD-2-Clause */
/* CTF writer, read back with babeltrace2: exact events, fields, thread
 * names, times and the discarded-event counts babeltrace2 reports. */
#define _POSIX_C_SOURCE 200809L
#include <flightrec/events.h>
#include <inttypes.h>

#include "sink-driver.h"
#include "test.h"

static char *bt(const char *dir)
{
    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd, "babeltrace2 --clock-cycles --clock-gmt --no-delta "
             "'%s'", dir);
    char *out = run_cmd(cmd, &st);
    if (st != 0)
        TEST_FAIL("babeltrace2 failed (%d):\n%s", st, out);
    return out;
}

/* Checks that @a text holds exactly @a want lines, in order. */
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

/* The thread identity is in the packet context, not on every event. */
#define CTX0 "{ cpu_id = 0, vtid = 101, procname = \"worker one\" }"
#define CTX1 "{ cpu_id = 1, vtid = 102, procname = \"logger\" }"

TEST(ust_events)
{
    const char *dir = scratch("ust");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_CTF, dir);
    d.user_names[3] = "frame_done";
    drv_ring(&d, 0, 101, "worker one", 0);
    drv_ring(&d, 1, 102, "logger", 0);
    drv_begin(&d);
    drv_event(&d, 0, 1000, FLIGHTREC_USER(3), 42);
    drv_event(&d, 1, 1500, FLIGHTREC_EV_MALLOC_ENTRY, 64);
    drv_event(&d, 1, 1600, FLIGHTREC_EV_MALLOC_EXIT, 0x5000);
    drv_event(&d, 0, 2000, FLIGHTREC_EV_FUNCTION_ENTRY, 0x401000);
    drv_event(&d, 0, 2100, FLIGHTREC_EV_FUNCTION_EXIT, 0x401000);
    drv_event(&d, 1, 2200, FLIGHTREC_EV_FREE_ENTRY, 0x5000);
    drv_event(&d, 1, 2300, FLIGHTREC_EV_FREE_EXIT, 0);
    drv_event(&d, 0, 3000, FLIGHTREC_EV_MUTEX_LOCK_EXIT, 0xabc0);
    drv_event(&d, 1, 3100, FLIGHTREC_EV_READ_ENTRY, 3);
    drv_event(&d, 1, 3200, FLIGHTREC_EV_READ_EXIT, 17);
    /* an entry whose exit was lost stays a plain event */
    drv_event(&d, 1, 4000, FLIGHTREC_EV_MALLOC_ENTRY, 8);
    drv_event(&d, 1, 4100, FLIGHTREC_USER(0), 1);
    drv_end(&d);
    char *out = bt(dir);
    static const char *const want[] = {
        "[00000000000000001000] flightrec:(4242) frame_done: " CTX0
        ", { data = 0x2A }",
        "[00000000000000001600] flightrec:(4242) lttng_ust_libc:malloc: " CTX1
        ", { size = 64, ptr = 0x5000 }",
        "[00000000000000002000] flightrec:(4242) "
        "lttng_ust_cyg_profile:func_entry: " CTX0
        ", { addr = 0x401000, call_site = 0x0 }",
        "[00000000000000002100] flightrec:(4242) "
        "lttng_ust_cyg_profile:func_exit: " CTX0
        ", { addr = 0x401000, call_site = 0x0 }",
        "[00000000000000002200] flightrec:(4242) lttng_ust_libc:free: " CTX1
        ", { ptr = 0x5000 }",
        "[00000000000000003000] flightrec:(4242) MUTEX_LOCK_EXIT: " CTX0
        ", { data = 0xABC0 }",
        "[00000000000000003100] flightrec:(4242) READ_ENTRY: " CTX1
        ", { data = 0x3 }",
        "[00000000000000003200] flightrec:(4242) READ_EXIT: " CTX1
        ", { data = 0x11 }",
        "[00000000000000004100] flightrec:(4242) MALLOC_ENTRY: " CTX1
        ", { data = 0x8 }",
        "[00000000000000004100] flightrec:(4242) USER_0: " CTX1
        ", { data = 0x1 }",
    };
    check_lines(out, want, sizeof want / sizeof want[0]);
    free(out);

    /* Wall-clock time comes from the realtime reference. */
    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd, "babeltrace2 --clock-seconds --clock-gmt "
             "--no-delta '%s' | head -n 1", dir);
    out = run_cmd(cmd, &st);
    CHECK(strncmp(out, "[1700000000.000001000]", 22) == 0);
    free(out);
    snprintf(cmd, sizeof cmd, "babeltrace2 query src.ctf.fs metadata-info "
             "--params='path=\"%s\"' | grep -c 'domain = \"ust\"'", dir);
    out = run_cmd(cmd, &st);
    CHECK_EQ_S(out, "1\n");
    free(out);
}

/* Discarded-event warnings: "Tracer discarded N events between ...". */
static uint64_t discarded(const char *text, int *messages)
{
    uint64_t total = 0;
    *messages = 0;
    for (const char *p = text; (p = strstr(p, "Tracer discarded ")) != NULL;
         p++) {
        total += strtoull(p + 17, NULL, 10);
        (*messages)++;
    }
    if (strstr(text, "may have discarded") != NULL)
        TEST_FAIL("unknown discarded count reported:\n%s", text);
    return total;
}

TEST(ust_losses)
{
    const char *dir = scratch("losses");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_CTF, dir);
    drv_ring(&d, 0, 101, "worker one", 0);
    drv_ring(&d, 1, 102, "logger", 0);
    drv_begin(&d);
    /* ring 1 loses items before its first event */
    drv_loss(&d, 1, 500, FLIGHTREC_LOSS_OVERFLOW, 7);
    drv_event(&d, 0, 1000, FLIGHTREC_USER(1), 1);
    drv_event(&d, 1, 1100, FLIGHTREC_USER(1), 2);
    drv_event(&d, 0, 1200, FLIGHTREC_USER(1), 3);
    drv_loss(&d, 0, 1300, FLIGHTREC_LOSS_DISCARD, 5);
    drv_event(&d, 0, 1400, FLIGHTREC_USER(1), 4);
    drv_loss(&d, 0, 1500, FLIGHTREC_LOSS_MISSING, 3);
    drv_end(&d);
    char *out = bt(dir);
    int messages;
    CHECK_EQ_U(discarded(out, &messages), 15);
    CHECK_EQ_I(messages, 3);
    CHECK_EQ_I(count_lines(out, "Tracer discarded 7 events between "
                                "[22:13:20.000000500] and "
                                "[22:13:20.000000500]"), 1);
    /* Between the last event before the loss and the loss (was: from the
     * start of the packet, whose size depends on the buffers). */
    CHECK_EQ_I(count_lines(out, "Tracer discarded 5 events between "
                                "[22:13:20.000001200] and "
                                "[22:13:20.000001300]"), 1);
    CHECK_EQ_I(count_lines(out, "Tracer discarded 3 events between "
                                "[22:13:20.000001400] and "
                                "[22:13:20.000001500]"), 1);
    CHECK_EQ_I(count_lines(out, "flightrec:(4242) USER_1:"), 4);
    CHECK_EQ_I(count_lines(out, "[00000000000000001400] flightrec:(4242) "
                                "USER_1: " CTX0 ", { data = 0x4 }"), 1);
    free(out);
}

TEST(kernel_events)
{
    const char *dir = scratch("kernel");
    drv_kernel_scenario(FR_FORMAT_CTF, dir, 0);
    char *out = bt(dir);
    static const char *const want[] = {
        "WARNING: ",
        "[00000000000000001000] qemu sched_switch: { cpu_id = 0 }, "
        "{ prev_comm = \"swapper/0\", prev_tid = 0, prev_prio = 20, "
        "prev_state = 1026, next_comm = \"WORK\", next_tid = 167837697, "
        "next_prio = 20 }",
        "[00000000000000001100] qemu sched_switch: { cpu_id = 1 }, "
        "{ prev_comm = \"swapper/1\", prev_tid = 0, prev_prio = 20, "
        "prev_state = 1026, next_comm = \"UART rx\", next_tid = 167837698, "
        "next_prio = 20 }",
        "[00000000000000001200] qemu irq_handler_entry: { cpu_id = 0 }, "
        "{ irq = 11, name = \"\" }",
        "[00000000000000001250] qemu sched_waking: { cpu_id = 0 }, "
        "{ comm = \"UART rx\", tid = 167837698, prio = 20, target_cpu = 0 }",
        "[00000000000000001300] qemu irq_handler_exit: { cpu_id = 0 }, "
        "{ irq = 11, ret = 1 }",
        "[00000000000000001400] qemu syscall_entry_write: { cpu_id = 0 }, "
        "{ data = 0x1 }",
        "[00000000000000001500] qemu syscall_exit_write: { cpu_id = 0 }, "
        "{ ret = 5 }",
        "[00000000000000001600] qemu USER_2: { cpu_id = 0 }, "
        "{ data = 0xDEADBEEF }",
        "[00000000000000001700] qemu sched_switch: { cpu_id = 0 }, "
        "{ prev_comm = \"WORK\", prev_tid = 167837697, prev_prio = 20, "
        "prev_state = 0, next_comm = \"swapper/0\", next_tid = 0, "
        "next_prio = 20 }",
    };
    /* The warning (ring 1 lost 2) comes first on stderr; compare the rest. */
    int messages;
    CHECK_EQ_U(discarded(out, &messages), 2);
    CHECK_EQ_I(messages, 1);
    const char *events = strstr(out, "\n[");
    CHECK(events != NULL);
    CHECK(strncmp(out, want[0], strlen(want[0])) == 0);
    check_lines(events + 1, want + 1, sizeof want / sizeof want[0] - 1);
    free(out);

    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd, "babeltrace2 query src.ctf.fs metadata-info "
             "--params='path=\"%s\"' | grep -E -c 'domain = \"kernel\"|"
             "tracer_name = \"lttng-modules\"|tracer_major = 2;|"
             "tracer_minor = 12;'", dir);
    out = run_cmd(cmd, &st);
    CHECK_EQ_S(out, "4\n");
    free(out);
}

TEST(packets)
{
    /* Enough events for many 64 KiB packets on two streams, with losses
     * in between: every event and every loss must come back. */
    const char *dir = scratch("packets");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_CTF, dir);
    drv_ring(&d, 0, 101, "worker one", 0);
    drv_ring(&d, 1, 102, "logger", 0);
    drv_begin(&d);
    const uint64_t n = 80000;
    uint64_t lost = 0;
    int loss_records = 0;
    for (uint64_t i = 0; i < n; i++) {
        drv_event(&d, (uint32_t)(i & 1), 1000 + i * 10, FLIGHTREC_USER(7),
                  i);
        if (i % 9973 == 9972) {
            drv_loss(&d, (uint32_t)(i & 1), 1000 + i * 10 + 5,
                     FLIGHTREC_LOSS_OVERFLOW, i);
            lost += i;
            loss_records++;
        }
    }
    drv_end(&d);
    char *out = bt(dir);
    int messages;
    CHECK_EQ_U(discarded(out, &messages), lost);
    CHECK_EQ_I(messages, loss_records);
    CHECK_EQ_I(count_lines(out, "USER_7:"), (int)n);
    CHECK_EQ_I(count_lines(out, "[00000000000000400990] flightrec:(4242) "
                                "USER_7: " CTX1 ", { data = 0x9C3F }"), 1);
    CHECK_EQ_I(count_lines(out, "[00000000000000800990] flightrec:(4242) "
                                "USER_7: " CTX1 ", { data = 0x1387F }"), 1);
    free(out);
    /* The streams really were cut into packets. */
    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd, "stat -c %%s '%s/stream_0'", dir);
    out = run_cmd(cmd, &st);
    CHECK(strtoull(out, NULL, 10) > 8 * 65536);
    free(out);
    snprintf(cmd, sizeof cmd, "babeltrace2 -c sink.text.details "
             "--params='compact=true,with-metadata=false' '%s' "
             "| grep -c 'Packet beginning'",
             dir);
    out = run_cmd(cmd, &st);
    CHECK(strtoul(out, NULL, 10) > 20);
    free(out);
}

TEST(untimed)
{
    /* Untimed records (time 0) and late records never step a stream's
     * time backwards: babeltrace2 would abort on that. */
    const char *dir = scratch("untimed");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_CTF, dir);
    drv_ring(&d, 0, 101, "worker one", 0);
    drv_begin(&d);
    drv_event(&d, 0, 5000, FLIGHTREC_USER(1), 1);
    drv_event(&d, 0, 0, FLIGHTREC_USER(1), 2);
    drv_event(&d, 0, 4000, FLIGHTREC_USER(1), 3);
    drv_end(&d);
    char *out = bt(dir);
    CHECK_EQ_I(count_lines(out, "[00000000000000005000] flightrec:(4242) "
                                "USER_1:"), 3);
    free(out);
}

TEST(untimed_left_out)
{
    /* Was: untimed events written at the stream's time (time 0 first). */
    const char *dir = scratch("untimed-out");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_CTF, dir);
    drv_ring(&d, 0, 101, "worker one", 0);
    drv_begin(&d);
    drv_untimed(&d, 0, FLIGHTREC_USER(1), 1);
    drv_event(&d, 0, 5000, FLIGHTREC_USER(1), 2);
    drv_untimed(&d, 0, FLIGHTREC_USER(1), 3);
    drv_untimed(&d, 0, FLIGHTREC_USER(1), 4);
    drv_finish(&d);
    CHECK_EQ_U(d.sink->untimed, 3);
    drv_destroy(&d);
    char *out = bt(dir);
    check_lines(out, (const char *const[]){
        "[00000000000000005000] flightrec:(4242) USER_1: " CTX0
        ", { data = 0x2 }" }, 1);
    free(out);
}

TEST(half_switch)
{
    /* Was: sched_switch with prev_tid 0 and an empty prev_comm when the
     * thread switched out was unknown (first switch of a CPU, or a loss
     * between SWITCH_OUT and SWITCH_IN). */
    const char *dir = scratch("half-switch");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_RTEMS_V10, FR_FORMAT_CTF, dir);
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
    drv_event(&d, 0, 1400, FLIGHTREC_EV_THREAD_SWITCH_OUT, (uint64_t)a);
    drv_event(&d, 0, 1400, FLIGHTREC_EV_THREAD_SWITCH_IN, (uint64_t)b);
    drv_finish(&d);
    CHECK_EQ_U(d.sink->half_switches, 2);
    drv_destroy(&d);
    char *out = bt(dir);
    const char *events = strstr(out, "\n[");
    CHECK(events != NULL);
    check_lines(events + 1, (const char *const[]){
        "[00000000000000001100] qemu sched_switch: { cpu_id = 0 }, "
        "{ prev_comm = \"A\", prev_tid = 167837697, prev_prio = 20, "
        "prev_state = 0, next_comm = \"B\", next_tid = 167837698, "
        "next_prio = 20 }",
        "[00000000000000001400] qemu sched_switch: { cpu_id = 0 }, "
        "{ prev_comm = \"A\", prev_tid = 167837697, prev_prio = 20, "
        "prev_state = 0, next_comm = \"B\", next_tid = 167837698, "
        "next_prio = 20 }" }, 2);
    free(out);
}

TEST_MAIN()
