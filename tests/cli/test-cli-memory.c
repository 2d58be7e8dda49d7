/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec print, stats and convert on long streams: bounded memory
 * (checked with --memory-limit, the decoder's own count of what it holds),
 * exact order from a file, the same late records from a pipe in print and
 * stats, and late records in convert reported, not silent.
 */
#define _POSIX_C_SOURCE 200809L

#include "stream-vector.h"
#include "test.h"

#include <flightrec/client.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FLIGHTREC_BIN
#error "FLIGHTREC_BIN must name the flightrec program"
#endif
#ifndef CLI_TEST_DIR
#error "CLI_TEST_DIR must name a scratch directory"
#endif

struct run {
    int status;
    char *out;
    size_t out_len;
    char *err;
};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);

    CHECK(f != NULL && buf != NULL);
    for (;;) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n + 1 < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
        CHECK(buf != NULL);
    }
    buf[n] = '\0';
    fclose(f);
    if (len != NULL)
        *len = n;
    return buf;
}

static const char *scratch(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];

    snprintf(p, sizeof paths[0], "%s/memory-%s", CLI_TEST_DIR, name);
    return p;
}

static void write_all(int fd, const unsigned char *p, size_t len)
{
    while (len != 0) {
        ssize_t k = write(fd, p, len);
        CHECK(k > 0);
        p += k;
        len -= (size_t)k;
    }
}

/* Runs flightrec with @a args; standard input is a pipe that a child
 * writes @a pipe_in to (NULL: /dev/null). */
static void run(struct run *r, const struct fr_vec *pipe_in,
                const char *const *args)
{
    char out_path[600], err_path[600];
    const char *argv[16] = { FLIGHTREC_BIN };
    int p[2] = { -1, -1 };
    pid_t writer = -1, pid;
    int st;

    for (size_t i = 0; args[i] != NULL && i < 14; i++)
        argv[i + 1] = args[i];
    snprintf(out_path, sizeof out_path, "%s/memory-out.%ld", CLI_TEST_DIR,
             (long)getpid());
    snprintf(err_path, sizeof err_path, "%s/memory-err.%ld", CLI_TEST_DIR,
             (long)getpid());
    if (pipe_in != NULL) {
        CHECK(pipe(p) == 0);
        writer = fork();
        CHECK(writer >= 0);
        if (writer == 0) {
            close(p[0]);
            write_all(p[1], pipe_in->buf, pipe_in->len);
            _exit(0);
        }
        close(p[1]);
    }
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int in = p[0] >= 0 ? p[0] : open("/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(FLIGHTREC_BIN, (char *const *)argv);
        _exit(127);
    }
    if (p[0] >= 0)
        close(p[0]);
    while (waitpid(pid, &st, 0) < 0)
        CHECK(errno == EINTR);
    if (writer > 0)
        while (waitpid(writer, NULL, 0) < 0)
            CHECK(errno == EINTR);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out = slurp(out_path, &r->out_len);
    r->err = slurp(err_path, NULL);
}

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

static void write_file(const char *path, const struct fr_vec *v)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    CHECK(fd >= 0);
    write_all(fd, v->buf, v->len);
    CHECK(close(fd) == 0);
}

/* Occurrences of @a what; by hand, since a sanitizer's strstr measures the
 * whole remaining text at every call. */
static size_t count(const char *text, const char *what)
{
    size_t n = 0, len = strlen(what);

    for (const char *p = text; *p != '\0'; p++)
        if (*p == what[0] && strncmp(p, what, len) == 0)
            n++;
    return n;
}

/* The first @a what within [p, end), or NULL. */
static const char *find_in(const char *p, const char *end, const char *what)
{
    size_t len = strlen(what);

    for (; p + len <= end; p++)
        if (*p == what[0] && memcmp(p, what, len) == 0)
            return p;
    return NULL;
}

/* The value after "@a key " in stats output. */
static uint64_t stat_value(const char *text, const char *key)
{
    const char *p = strstr(text, key);

    CHECK(p != NULL);
    return strtoull(p + strlen(key), NULL, 10);
}

/* Two threads over 3 s at 1 MHz, drained one after the other: thread 1's
 * records are 0.05 s after thread 0's, 0.1 s apart (31 each). */
static void two_threads_3s(struct fr_vec *v)
{
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(v, 1000000, 2, 1024, 77, 0);
    for (uint32_t r = 0; r < 2; r++) {
        uint64_t t = 1000 + 50000 * r;
        fr_vec_flightrec_chunk(v, r, 100 + r, r ? "beta" : "alpha", 0, 0, 0,
                               0);
        fr_vec_uptime(v, (uint32_t)t & FLIGHTREC_TIME_MASK, t);
        for (uint32_t i = 0; i <= 30; i++, t += 100000)
            fr_vec_item(v, (uint32_t)t & FLIGHTREC_TIME_MASK,
                        FLIGHTREC_USER(r), i);
    }
}

/* On a pipe, print with a 2 s window marks late the 10 records of thread 1
 * before 1.0 s, and stats counts the same 10; by default both derive the
 * window from the stream (2 x 2^21 ticks at 1 MHz, 4.2 s: nothing late in
 * 3 s); from a file nothing is late and times never go back. */
TEST(stats_and_print_agree_on_late)
{
    struct fr_vec v;
    struct run r;
    const char *path = scratch("two.rec");

    two_threads_3s(&v);
    run(&r, &v, (const char *const[]){ "print", "--window=2", "-", NULL });
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_U(count(r.out, "\n"), 62);
    CHECK_EQ_U(count(r.out, " (late)"), 10);
    run_free(&r);
    run(&r, &v, (const char *const[]){ "stats", "--window=2", "-", NULL });
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_U(stat_value(r.out, "\nlate: "), 10);
    CHECK_EQ_U(stat_value(r.out, "\nevents: "), 62);
    run_free(&r);
    run(&r, &v, (const char *const[]){ "print", "-", NULL });
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_U(count(r.out, "\n"), 62);
    CHECK_EQ_U(count(r.out, " (late)"), 0);
    run_free(&r);
    run(&r, &v, (const char *const[]){ "stats", "-", NULL });
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_U(stat_value(r.out, "\nlate: "), 0);
    CHECK_EQ_U(stat_value(r.out, "\nevents: "), 62);
    run_free(&r);
    run(&r, &v, (const char *const[]){ "stats", "--window=0.5", "-", NULL });
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_U(stat_value(r.out, "\nlate: "), 25);
    run_free(&r);
    run(&r, &v, (const char *const[]){ "print", "--window=0.5", "-", NULL });
    CHECK_EQ_U(count(r.out, " (late)"), 25);
    run_free(&r);

    write_file(path, &v);
    run(&r, NULL, (const char *const[]){ "stats", path, NULL });
    CHECK_EQ_U(stat_value(r.out, "\nlate: "), 0);
    run_free(&r);
    run(&r, NULL, (const char *const[]){ "print", path, NULL });
    CHECK_EQ_U(count(r.out, " (late)"), 0);
    CHECK_EQ_U(count(r.out, "\n"), 62);
    /* alternating: 0.000000 alpha, 0.050000 beta, 0.100000 alpha, ... */
    static const char head[] = "0.000000000 [0] 100 alpha USER_0 0x0\n"
                               "0.050000000 [1] 101 beta USER_1 0x0\n"
                               "0.100000000 [0] 100 alpha USER_0 0x1\n";
    CHECK(strncmp(r.out, head, sizeof head - 1) == 0);
    run_free(&r);
    fr_vec_free(&v);
}

/* The ftrace timestamps of the output, in order: none may go back. */
static size_t backward_steps(const char *text, size_t *lines)
{
    double last = -1;
    size_t back = 0;

    *lines = 0;
    for (const char *p = text; *p != '\0';) {
        const char *eol = strchr(p, '\n');
        const char *colon = find_in(p, eol ? eol : p + strlen(p),
                                    ": tracing_mark_write");
        if (p[0] != '#' && colon != NULL) {
            const char *s = colon;
            while (s > p && s[-1] != ' ')
                s--;
            double t = strtod(s, NULL);
            if (t < last)
                back++;
            last = t;
            ++*lines;
        }
        if (eol == NULL)
            break;
        p = eol + 1;
    }
    return back;
}

/* convert of a file is in exact time order (it jumped back from 2.02 s to
 * 0.05 s with a 1 s window); from a pipe the records that came too late
 * for the window are counted in a warning. */
TEST(convert_order)
{
    struct fr_vec v;
    struct run r;
    const char *in = scratch("conv.rec");
    const char *out = scratch("conv.txt");
    size_t lines;
    char *text;

    two_threads_3s(&v);
    write_file(in, &v);
    run(&r, NULL, (const char *const[]){ "convert", "--to", "ftrace", "-o",
                                         out, in, NULL });
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    run_free(&r);
    text = slurp(out, NULL);
    CHECK_EQ_U(backward_steps(text, &lines), 0);
    CHECK_EQ_U(lines, 62);
    free(text);

    run(&r, &v, (const char *const[]){ "convert", "--to", "ftrace", "-o",
                                       out, "-", NULL });
    CHECK_EQ_I(r.status, 0);
    /* window 1 s: beta's 20 records before 2.0 s came after alpha's 3 s */
    CHECK(strstr(r.err, "20 records came more than the merge window after "
                 "later ones and were written out of time order") != NULL);
    run_free(&r);
    text = slurp(out, NULL);
    CHECK(backward_steps(text, &lines) > 0);
    CHECK_EQ_U(lines, 62);
    free(text);
    fr_vec_free(&v);
}

/* 608,000 events of 4 rings (4.9 MB of stream; one pass in exact order
 * would hold 19 MB of records) printed, summarized and converted within a
 * 2 MiB decoder limit, every record there. */
TEST(large_file_in_2_mib)
{
    struct fr_vec v;
    struct run r;
    const char *in = scratch("large.rec");
    const char *out = scratch("large.txt");
    const uint64_t events = 38 * 4 * 4000; /* whole rounds of chunks */
    uint64_t ticks[4] = { 1000, 1001, 1002, 1003 }, n = 0;
    uint32_t pos[4] = { 0 };
    size_t lines;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, 1000000000u, 4, 16384, 1, 0);
    while (n < events) {
        for (uint32_t k = 0; k < 4; k++) {
            fr_vec_flightrec_chunk(&v, k, 10 + k, "w", 0, pos[k], 0, 0);
            fr_vec_uptime(&v, (uint32_t)ticks[k] & FLIGHTREC_TIME_MASK,
                          ticks[k]);
            pos[k] += 2;
            for (int i = 0; i < 4000; i++, n++, pos[k]++) {
                ticks[k] += 3 + (n % 89);
                fr_vec_item(&v, (uint32_t)ticks[k] & FLIGHTREC_TIME_MASK,
                            FLIGHTREC_USER(k), n);
            }
        }
    }
    write_file(in, &v);
    fr_vec_free(&v);

    run(&r, NULL, (const char *const[]){ "print", "--memory-limit=2M", in,
                                         NULL });
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_U(count(r.out, "\n"), events);
    CHECK_EQ_U(count(r.out, " (late)"), 0);
    run_free(&r);
    run(&r, NULL, (const char *const[]){ "stats", "--memory-limit=2M", in,
                                         NULL });
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_U(stat_value(r.out, "\nevents: "), events);
    run_free(&r);
    run(&r, NULL, (const char *const[]){ "convert", "--memory-limit=2M",
                                         "--to", "ftrace", "-o", out, in,
                                         NULL });
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    run_free(&r);
    char *text = slurp(out, NULL);
    CHECK_EQ_U(backward_steps(text, &lines), 0);
    CHECK(lines >= events);
    free(text);
    unlink(out);
    unlink(in);
}

/* Past the limit: exit 1 and a message naming it, not swapping; a bad
 * size is a usage error. */
TEST(memory_limit_stop)
{
    struct fr_vec v;
    struct run r;
    const char *in = scratch("rings.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 64, 1, 0);
    for (uint32_t k = 0; k < 200000; k++)
        fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, k);
    write_file(in, &v);
    fr_vec_free(&v);
    static const char *const cmds[3] = { "print", "stats", "convert" };
    for (int i = 0; i < 3; i++) {
        if (i == 2)
            run(&r, NULL, (const char *const[]){ "convert",
                                                 "--memory-limit=1M", "--to",
                                                 "ftrace", "-o",
                                                 scratch("rings.txt"), in,
                                                 NULL });
        else
            run(&r, NULL, (const char *const[]){ cmds[i],
                                                 "--memory-limit=1M", in,
                                                 NULL });
        CHECK_EQ_I(r.status, 1);
        CHECK(strstr(r.err, "memory limit of 1 MiB reached (") != NULL);
        run_free(&r);
        run(&r, NULL, (const char *const[]){ cmds[i], "--memory-limit=1X",
                                             in, NULL });
        CHECK_EQ_I(r.status, 2);
        CHECK(strstr(r.err, "bad size '1X'") != NULL);
        run_free(&r);
    }
    unlink(in);
}

/* @a v as a console log: text, then the stream in base64 lines of 76
 * digits between the markers, cut into two blocks, then more text. */
static void write_console_log(const char *path, const struct fr_vec *v)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    FILE *f = fopen(path, "w");
    size_t half = v->len / 2;

    CHECK(f != NULL);
    fputs("boot: firmware 1.0\n", f);
    for (int block = 0; block < 2; block++) {
        const unsigned char *p = v->buf + (block ? half : 0);
        size_t n = block ? v->len - half : half, col = 0;
        fputs(FLIGHTREC_CONSOLE_BEGIN "\n", f);
        for (size_t i = 0; i < n; i += 3) {
            uint32_t q = (uint32_t)p[i] << 16;
            size_t k = n - i < 3 ? n - i : 3;
            if (k > 1)
                q |= (uint32_t)p[i + 1] << 8;
            if (k > 2)
                q |= p[i + 2];
            for (size_t d = 0; d < 4; d++)
                fputc(d <= k ? digits[(q >> (18 - 6 * d)) & 63] : '=', f);
            col += 4;
            if (col == 76) {
                fputc('\n', f);
                col = 0;
            }
        }
        if (col != 0)
            fputc('\n', f);
        fputs(FLIGHTREC_CONSOLE_END "\nuart: idle\n", f);
    }
    CHECK_EQ_I(fclose(f), 0);
}

/* A console log in a regular file is not a stream to index: print, stats
 * and convert read it once, as from a pipe; print shows the stream it
 * holds exactly as the stream file itself. */
TEST(console_log_file)
{
    struct fr_vec v;
    struct run want, got;
    const char *rec = scratch("console.rec");
    const char *log = scratch("console.log");
    const char *out = scratch("console.ftrace");
    char *text;
    size_t lines;

    two_threads_3s(&v);
    write_file(rec, &v);
    write_console_log(log, &v);
    run(&want, NULL, (const char *const[]){ "print", rec, NULL });
    CHECK_EQ_I(want.status, 0);
    CHECK_EQ_U(count(want.out, "\n"), 62);
    run(&got, NULL, (const char *const[]){ "print", log, NULL });
    CHECK_EQ_I(got.status, 0);
    CHECK_EQ_S(got.err, "");
    CHECK_EQ_S(got.out, want.out);
    run_free(&got);
    run_free(&want);
    run(&got, NULL, (const char *const[]){ "stats", log, NULL });
    CHECK_EQ_I(got.status, 0);
    CHECK_EQ_U(stat_value(got.out, "\nevents: "), 62);
    CHECK_EQ_U(stat_value(got.out, "\nlate: "), 0);
    run_free(&got);
    /* convert reads a log as a pipe, through its 1 s window: the same 20
     * late records as convert_order's pipe, reported. */
    run(&got, NULL, (const char *const[]){ "convert", "--to", "ftrace", "-o",
                                           out, log, NULL });
    CHECK_EQ_I(got.status, 0);
    CHECK(strstr(got.err, "20 records came more than the merge window after "
                 "later ones and were written out of time order") != NULL);
    run_free(&got);
    text = slurp(out, NULL);
    CHECK(backward_steps(text, &lines) > 0);
    CHECK_EQ_U(lines, 62);
    free(text);
    fr_vec_free(&v);
}

TEST_MAIN()
