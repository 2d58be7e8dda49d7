/* SPDX-License-Identifier: BSD-2-Clause */
/* `flightrec convert` end to end: stream bytes through the decoder and the
 * command into each format, read back by the real readers. */
#define _POSIX_C_SOURCE 200809L
#include <flightrec/events.h>
#include <stdio.h>

#include "sink-driver.h"
#include "stream-vector.h"
#include "test.h"

int cmd_convert(int argc, char **argv);

static const char *write_stream(void)
{
    struct fr_vec v;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 2, 1024, 777,
                            1600000000000000000ull);
    fr_vec_flightrec_chunk(&v, 0, 101, "worker", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 1500, FLIGHTREC_USER(1), 7);
    fr_vec_item(&v, 2000, FLIGHTREC_EV_MALLOC_ENTRY, 64);
    fr_vec_item(&v, 2100, FLIGHTREC_EV_MALLOC_EXIT, 0x5000);
    fr_vec_flightrec_chunk(&v, 1, 102, "logger", 0, 10, 3, 0);
    fr_vec_uptime(&v, 1200, 1200);
    fr_vec_item(&v, 1300, FLIGHTREC_USER(2), 9);
    const char *path = scratch("e2e.rec");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_EQ_U(fwrite(v.buf, 1, v.len, f), v.len);
    fclose(f);
    fr_vec_free(&v);
    static char copy[1024];
    snprintf(copy, sizeof copy, "%s", path);
    return copy;
}

static int convert(const char *to, const char *out, const char *in)
{
    char *argv[] = { "convert", "--to", (char *)to, "-o", (char *)out,
                     (char *)in, NULL };
    return cmd_convert(6, argv);
}

TEST(ctf)
{
    const char *in = write_stream();
    const char *dir = scratch("e2e-ctf");
    CHECK_EQ_I(convert("ctf", dir, in), 0);
    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd, "babeltrace2 --clock-cycles --no-delta '%s'",
             dir);
    char *out = run_cmd(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(count_lines(out, "[00000000000000001500] flightrec:(777) "
               "USER_1: { cpu_id = 0, vtid = 101, procname = \"worker\" "
               "}, { data = 0x7 }"), 1);
    CHECK_EQ_I(count_lines(out, "[00000000000000002100] flightrec:(777) "
               "lttng_ust_libc:malloc: { cpu_id = 0, vtid = 101, "
               "procname = \"worker\" }, { size = 64, ptr = 0x5000 }"), 1);
    CHECK_EQ_I(count_lines(out, "[00000000000000001300] flightrec:(777) "
               "USER_2: { cpu_id = 1, vtid = 102, procname = \"logger\" "
               "}, { data = 0x9 }"), 1);
    CHECK_EQ_I(count_lines(out, "Tracer discarded 3 events"), 1);
    CHECK_EQ_I(count_lines(out, "] flightrec:(777) "), 3);
    free(out);
}

TEST(formats)
{
    const char *in = write_stream();
    char file[1024];
    snprintf(file, sizeof file, "%s", scratch("e2e.pftrace"));
    CHECK_EQ_I(convert("perfetto", file, in), 0);
    char cmd[2048];
    int st;
    snprintf(cmd, sizeof cmd, "protoc --proto_path='%s' "
             "--decode=perfetto.protos.Trace perfetto-trace.proto < '%s'",
             SRC_DIR, file);
    char *out = run_cmd(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(count_lines(out, "type: TYPE_SLICE_BEGIN"), 1);
    CHECK_EQ_I(count_lines(out, "type: TYPE_INSTANT"), 3);
    CHECK_EQ_I(count_lines(out, "counter_value: 64"), 1);
    free(out);

    snprintf(file, sizeof file, "%s", scratch("e2e.json"));
    CHECK_EQ_I(convert("json", file, in), 0);
    snprintf(cmd, sizeof cmd, "python3 '%s/check-json.py' '%s'", SRC_DIR,
             file);
    out = run_cmd(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(count_lines(out, "i 101 1500 USER_1 {\"data\": \"0x7\"}"), 1);
    CHECK_EQ_I(count_lines(out, "i 102 1300 USER_2 {\"data\": \"0x9\"}"), 1);
    free(out);

    snprintf(file, sizeof file, "%s", scratch("e2e.txt"));
    CHECK_EQ_I(convert("ftrace", file, in), 0);
    snprintf(cmd, sizeof cmd, "python3 '%s/check-ftrace.py' '%s'", SRC_DIR,
             file);
    out = run_cmd(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(count_lines(out, "worker 101 000 1500 tracing_mark_write:"
                                "I|777|USER_1 data=0x7"), 1);
    CHECK_EQ_I(count_lines(out, "LOST cpu=0 count=3"), 1);
    free(out);
}

TEST(errors)
{
    char *argv1[] = { "convert", "--to", "svg", "-o", "x", NULL };
    CHECK_EQ_I(cmd_convert(5, argv1), 2);
    char *argv2[] = { "convert", "--to", "ctf", "-o", "-", NULL };
    CHECK_EQ_I(cmd_convert(5, argv2), 2);
    CHECK_EQ_I(convert("json", scratch("e2e-missing.json"),
                       "/nonexistent/input.rec"), 1);
    /* A bad stream fails with the decoder's message, exit status 1. */
    const char *bad = scratch("e2e-bad.rec");
    FILE *f = fopen(bad, "wb");
    fputs("not a stream at all", f);
    fclose(f);
    char badcopy[1024];
    snprintf(badcopy, sizeof badcopy, "%s", bad);
    CHECK_EQ_I(convert("json", scratch("e2e-bad.json"), badcopy), 1);
}

TEST_MAIN(TEST_ENTRY(ctf), TEST_ENTRY(formats), TEST_ENTRY(errors))
