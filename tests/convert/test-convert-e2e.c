/* SPDX-License-Identifier: BSD-2-Clause */
/* `flightrec convert` end to end: stream bytes through the decoder and the
 * command into each format, read back by the real readers. */
#define _POSIX_C_SOURCE 200809L
#include <flightrec/events.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sink-driver.h"
#include "stream-vector.h"
#include "test.h"

int cmd_convert(int argc, char **argv);

/* Writes @a v to the scratch file @a name (one per test case: ctest runs
 * cases at once) and frees it; returns the path. */
static const char *save_vector(struct fr_vec *v, const char *name)
{
    const char *path = scratch(name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_EQ_U(fwrite(v->buf, 1, v->len, f), v->len);
    fclose(f);
    fr_vec_free(v);
    static char copy[1024];
    snprintf(copy, sizeof copy, "%s", path);
    return copy;
}

static char *babeltrace(const char *dir)
{
    char cmd[1200];
    int st;
    snprintf(cmd, sizeof cmd, "babeltrace2 --clock-cycles --no-delta '%s'",
             dir);
    char *out = run_cmd(cmd, &st);
    CHECK_EQ_I(st, 0);
    return out;
}

static const char *write_stream(const char *name)
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
    return save_vector(&v, name);
}

static int convert(const char *to, const char *out, const char *in)
{
    char *argv[] = { "convert", "--to", (char *)to, "-o", (char *)out,
                     (char *)in, NULL };
    return cmd_convert(6, argv);
}

TEST(ctf)
{
    const char *in = write_stream("e2e-ctf.rec");
    const char *dir = scratch("e2e-ctf");
    CHECK_EQ_I(convert("ctf", dir, in), 0);
    char *out = babeltrace(dir);
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
    const char *in = write_stream("e2e-formats.rec");
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

static void copy_path(char *dst, size_t n, const char *name)
{
    snprintf(dst, n, "%s", scratch(name));
}

static char *file_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    static char buf[1 << 16];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

/* Entries in the scratch directory (the build's tests/convert) whose name
 * starts with @a prefix: temporary names are ".OUT.XXXXXX". */
static int leftovers(const char *prefix)
{
    char cmd[512];
    int st;
    snprintf(cmd, sizeof cmd, "ls -a | grep -c '^%s' || true", prefix);
    char *out = run_cmd(cmd, &st);
    int n = atoi(out);
    free(out);
    return n;
}

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_EQ_U(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

TEST(failed_output)
{
    /* Was: a 32-byte .pftrace and a metadata-only CTF directory. */
    char empty[1024], out[1024];
    copy_path(empty, sizeof empty, "empty.rec");
    write_file(empty, "", 0);
    static const char *const formats[] = { "perfetto", "json", "ftrace",
                                           "ctf" };
    for (size_t i = 0; i < 4; i++) {
        copy_path(out, sizeof out, "failed.out");
        CHECK_EQ_I(convert(formats[i], out, empty), 1);
        CHECK(access(out, F_OK) != 0);
        CHECK_EQ_I(leftovers(".convert-out-failed.out."), 0);
    }
    /* A failure leaves the previous output as it was; a success replaces
     * it, with mode 0600. */
    const char *in = write_stream("e2e-failed.rec");
    char good[1024];
    snprintf(good, sizeof good, "%s", in);
    copy_path(out, sizeof out, "kept.json");
    write_file(out, "previous", 8);
    CHECK_EQ_I(convert("json", out, empty), 1);
    size_t len;
    char *bytes = file_bytes(out, &len);
    CHECK_EQ_U(len, 8);
    CHECK(memcmp(bytes, "previous", 8) == 0);
    CHECK_EQ_I(convert("json", out, good), 0);
    bytes = file_bytes(out, &len);
    CHECK(len > 100 && memcmp(bytes, "{\"traceEvents\"", 14) == 0);
    struct stat st;
    CHECK_EQ_I(stat(out, &st), 0);
    CHECK_EQ_U(st.st_mode & 0777, 0600);
    CHECK_EQ_I(leftovers(".convert-out-kept.json."), 0);
    /* Through a link, the file it names is replaced, the link stays. */
    char link[1024];
    copy_path(link, sizeof link, "kept-link.json");
    CHECK_EQ_I(symlink("convert-out-kept.json", link), 0);
    write_file(out, "previous", 8);
    CHECK_EQ_I(convert("json", link, good), 0);
    CHECK_EQ_I(lstat(link, &st), 0);
    CHECK(S_ISLNK(st.st_mode));
    bytes = file_bytes(out, &len);
    CHECK(len > 100 && memcmp(bytes, "{\"traceEvents\"", 14) == 0);
    /* A device is written in place, never replaced. */
    CHECK_EQ_I(convert("json", "/dev/null", good), 0);
    CHECK_EQ_I(stat("/dev/null", &st), 0);
    CHECK(S_ISCHR(st.st_mode));
}

TEST(ctf_replaced_whole)
{
    const char *in = write_stream("e2e-replaced.rec");
    char good[1024], bad[1024], dir[1024];
    snprintf(good, sizeof good, "%s", in);
    copy_path(bad, sizeof bad, "truncated.rec");
    size_t len;
    char *bytes = file_bytes(good, &len);
    write_file(bad, bytes, len - 5);   /* ends inside an item */
    copy_path(dir, sizeof dir, "ctf-swap");
    CHECK_EQ_I(convert("ctf", dir, good), 0);
    char cmd[2048];
    int st;
    snprintf(cmd, sizeof cmd, "babeltrace2 '%s' | wc -l", dir);
    char *before = run_cmd(cmd, &st);
    CHECK_EQ_S(before, "3\n");
    /* Was: the old trace deleted first, a metadata-only directory left. */
    CHECK_EQ_I(convert("ctf", dir, bad), 1);
    char *after = run_cmd(cmd, &st);
    CHECK_EQ_S(after, "3\n");
    free(after);
    CHECK_EQ_I(leftovers(".convert-out-ctf-swap."), 0);
    /* Converted again: replaced whole (two streams, as before). */
    CHECK_EQ_I(convert("ctf", dir, good), 0);
    snprintf(cmd, sizeof cmd, "ls '%s'", dir);
    after = run_cmd(cmd, &st);
    CHECK_EQ_S(after, "metadata\nstream_0\nstream_1\n");
    free(after);
    free(before);
    struct stat sb;
    snprintf(cmd, sizeof cmd, "%s/stream_0", dir);
    CHECK_EQ_I(stat(cmd, &sb), 0);
    CHECK_EQ_U(sb.st_mode & 0777, 0600);
    CHECK_EQ_I(leftovers(".convert-out-ctf-swap."), 0);
    /* A directory holding something else is not taken for a trace. */
    snprintf(cmd, sizeof cmd, "%s/notes.txt", dir);
    write_file(cmd, "mine", 4);
    CHECK_EQ_I(convert("ctf", dir, good), 1);
    CHECK_EQ_I(access(cmd, F_OK), 0);
}

TEST(output_is_input)
{
    /* Was: the input truncated to the output's first bytes. */
    const char *in = write_stream("e2e-input.rec");
    char path[1024], link[1024], dir[1024], cmd[3000];
    snprintf(path, sizeof path, "%s", in);
    size_t len0;
    file_bytes(path, &len0);
    CHECK_EQ_I(convert("json", path, path), 1);
    copy_path(link, sizeof link, "e2e-link.rec");
    CHECK_EQ_I(symlink(path, link), 0);   /* both in the scratch directory */
    CHECK_EQ_I(convert("perfetto", link, path), 1);
    CHECK_EQ_I(convert("ftrace", path, link), 1);
    size_t len;
    file_bytes(path, &len);
    CHECK_EQ_U(len, len0);
    /* CTF into the directory that holds the input. */
    copy_path(dir, sizeof dir, "ctf-holds-input");
    CHECK_EQ_I(mkdir(dir, 0755), 0);
    char inside[1100];
    snprintf(inside, sizeof inside, "%s/stream_9", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, inside);
    int st;
    free(run_cmd(cmd, &st));
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(convert("ctf", dir, inside), 1);
    file_bytes(inside, &len);
    CHECK_EQ_U(len, len0);
}

/* The same conversion with the input coming through a pipe (read once,
 * in time order). */
static int convert_through_pipe(const char *to, const char *out,
                                const char *in)
{
    int p[2];
    CHECK_EQ_I(pipe(p), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        size_t len;
        char *bytes = file_bytes(in, &len);
        _exit(write(p[1], bytes, len) == (ssize_t)len ? 0 : 1);
    }
    close(p[1]);
    int saved = dup(0);
    CHECK(saved >= 0 && dup2(p[0], 0) == 0);
    close(p[0]);
    int rc = convert(to, out, "-");
    CHECK(dup2(saved, 0) == 0);
    close(saved);
    int status;
    CHECK_EQ_I(waitpid(pid, &status, 0), pid);
    CHECK_EQ_I(status, 0);
    return rc;
}

/* The lines of @a text that are events ("[" first). */
static char *event_lines(const char *text)
{
    char *events = calloc(1, strlen(text) + 1), *to = events;
    CHECK(events != NULL);
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t n = end != NULL ? (size_t)(end - line) + 1 : strlen(line);
        if (line[0] == '[') {
            memcpy(to, line, n);
            to += n;
        }
        line += n;
    }
    return events;
}

/* A file's rings are converted ring by ring (each CTF stream is one
 * ring's): the trace is the one time order gives, chunks of two rings
 * taking turns, a loss in one of them placed between its last event and
 * the loss. */
TEST(ctf_rings_in_turn)
{
    struct fr_vec v;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 2, 1024, 777, 0);
    for (uint32_t turn = 0; turn < 3; turn++)
        for (uint32_t ring = 0; ring < 2; ring++) {
            uint32_t t = 1000 * (2 * turn + ring + 1);
            /* ring 0 overwrote 3 items before its last chunk */
            uint32_t lost = ring == 0 && turn == 2 ? 3 : 0;
            fr_vec_flightrec_chunk(&v, ring, 101 + ring,
                                   ring ? "logger" : "worker", 0,
                                   4 * turn + lost, lost, 0);
            fr_vec_uptime(&v, t, t);
            fr_vec_item(&v, t + 100, FLIGHTREC_USER(1 + ring), turn);
            fr_vec_item(&v, t + 200, FLIGHTREC_USER(1 + ring), 10 + turn);
        }
    const char *in = save_vector(&v, "e2e-turns.rec");
    const char *dir = scratch("e2e-turns");
    CHECK_EQ_I(convert("ctf", dir, in), 0);
    char *all = babeltrace(dir);
    CHECK_EQ_I(count_lines(all, "WARNING: Tracer discarded 3 events between "
                                "[00:00:00.000003200] and "
                                "[00:00:00.000005100]"), 1);
    CHECK_EQ_I(count_lines(all, "WARNING"), 1);
    /* Through a pipe, in time order: the same trace. */
    CHECK_EQ_I(convert_through_pipe("ctf", dir, in), 0);
    char *piped = babeltrace(dir);
    CHECK_EQ_S(all, piped);
    free(piped);
    char *out = event_lines(all);
    free(all);
    char want[4096] = "";
    for (uint32_t turn = 0; turn < 3; turn++)
        for (uint32_t ring = 0; ring < 2; ring++)
            for (uint32_t k = 1; k <= 2; k++) {
                uint32_t t = 1000 * (2 * turn + ring + 1) + 100 * k;
                char line[300];
                snprintf(line, sizeof line,
                         "[%020u] flightrec:(777) USER_%u: { cpu_id = %u, "
                         "vtid = %u, procname = \"%s\" }, { data = 0x%X }\n",
                         t, 1 + ring, ring, 101 + ring,
                         ring ? "logger" : "worker",
                         k == 1 ? turn : 10 + turn);
                strcat(want, line);
            }
    CHECK_EQ_S(out, want);
    free(out);
}

/* A firmware's rings (its tasks, its interrupts: one owner) make one
 * processor's stream: read from a file, in time order all the same (the
 * ring taken first by ring, a thread's, is written once). */
TEST(ctf_task_switches_from_a_file)
{
    struct fr_vec v;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, 1000000000u, 3, 1024, 5, 0);
    fr_vec_flightrec_chunk(&v, 2, 50, "worker", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 1050, FLIGHTREC_USER(1), 3);
    fr_vec_item(&v, 1060, FLIGHTREC_EV_MALLOC_ENTRY, 32);
    fr_vec_item(&v, 1070, FLIGHTREC_EV_MALLOC_EXIT, 0x4000);
    fr_vec_flightrec_chunk(&v, 0, 1, "cpu", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 1100, FLIGHTREC_EV_THREAD_SWITCH_IN, 7);
    fr_vec_item(&v, 1200, FLIGHTREC_EV_THREAD_SWITCH_OUT, 7);
    fr_vec_item(&v, 1200, FLIGHTREC_EV_THREAD_SWITCH_IN, 8);
    fr_vec_item(&v, 1400, FLIGHTREC_EV_THREAD_SWITCH_OUT, 8);
    fr_vec_item(&v, 1400, FLIGHTREC_EV_THREAD_SWITCH_IN, 7);
    fr_vec_flightrec_chunk(&v, 1, 1, "cpu", FLIGHTREC_RING_CONTEXT_SIGNAL,
                           0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 1300, FLIGHTREC_EV_INTERRUPT_ENTRY, 15);
    fr_vec_item(&v, 1350, FLIGHTREC_EV_INTERRUPT_EXIT, 15);
    const char *in = save_vector(&v, "e2e-tasks.rec");
    const char *dir = scratch("e2e-tasks");
    CHECK_EQ_I(convert_through_pipe("ctf", dir, in), 0);
    char *piped = babeltrace(dir);
    CHECK_EQ_I(convert("ctf", dir, in), 0);
    char *out = babeltrace(dir);
    CHECK_EQ_S(out, piped);
    free(piped);
    CHECK_EQ_S(out,
        "[00000000000000001050] flightrec:(5) USER_1: { cpu_id = 2, "
        "vtid = 50, procname = \"worker\" }, { data = 0x3 }\n"
        "[00000000000000001070] flightrec:(5) lttng_ust_libc:malloc: "
        "{ cpu_id = 2, vtid = 50, procname = \"worker\" }, "
        "{ size = 32, ptr = 0x4000 }\n"
        "[00000000000000001200] flightrec sched_switch: { cpu_id = 0 }, "
        "{ prev_comm = \"0x00000007\", prev_tid = 7, prev_prio = 20, "
        "prev_state = 0, next_comm = \"0x00000008\", next_tid = 8, "
        "next_prio = 20 }\n"
        "[00000000000000001300] flightrec irq_handler_entry: "
        "{ cpu_id = 0 }, { irq = 15, name = \"\" }\n"
        "[00000000000000001350] flightrec irq_handler_exit: "
        "{ cpu_id = 0 }, { irq = 15, ret = 1 }\n"
        "[00000000000000001400] flightrec sched_switch: { cpu_id = 0 }, "
        "{ prev_comm = \"0x00000008\", prev_tid = 8, prev_prio = 20, "
        "prev_state = 0, next_comm = \"0x00000007\", next_tid = 7, "
        "next_prio = 20 }\n");
    free(out);
}

TEST_MAIN()
