/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flightrec command, end to end: builds streams with stream-vector,
 * writes them to the build directory, runs the built program and checks its
 * exact stdout, stderr and exit status.
 *
 * Covers: global options and help, the SYNOPSIS of each subcommand against
 * docs/flightrec.1.md, print (text, --csv, --json, --wall, --event and
 * --thread with globs and warnings, --from/--to, losses, untimed records,
 * stdin, live output on a pipe, renamed events, escaped names, all four
 * formats), stats (text and --json), saturated counters and times, and bad
 * input (bad magic, unknown format, unsupported version, truncation, missing
 * file, unknown option).
 *
 * Most cases are rows of tables (struct cli_case): arguments, exit status,
 * exact stdout and stderr, "{}" standing for the input file.
 */
#define _POSIX_C_SOURCE 200809L

#include "spawn.h"
#include "stream-vector.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FLIGHTREC_BIN
#error "FLIGHTREC_BIN must name the flightrec program"
#endif
#ifndef CLI_TEST_DIR
#error "CLI_TEST_DIR must name a scratch directory"
#endif
#ifndef FLIGHTREC_MAN_MD
#error "FLIGHTREC_MAN_MD must name docs/flightrec.1.md"
#endif

/*=====   Running the program   =====*/

/* The whole of a file (spawn.h). */
#define read_file spawn_slurp

static const char *scratch(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];

    snprintf(p, sizeof paths[0], "%s/%s", CLI_TEST_DIR, name);
    return p;
}

static void write_vec(const char *path, const struct fr_vec *v, size_t len)
{
    FILE *f = fopen(path, "wb");

    CHECK(f != NULL);
    CHECK(fwrite(v->buf, 1, len, f) == len);
    CHECK(fclose(f) == 0);
}

/* Runs flightrec with args (NULL-terminated), stdin from stdin_path (or
 * /dev/null). */
static void run_with_stdin(struct spawn_run *r, const char *stdin_path,
                           const char *const *args)
{
    const char *argv[32];
    size_t n = 0;

    argv[n++] = FLIGHTREC_BIN;
    for (; args[n - 1] != NULL && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    spawn_run(r, CLI_TEST_DIR, stdin_path, argv);
}

#define RUN(r, ...) \
    do { \
        const char *const args_[] = { __VA_ARGS__, NULL }; \
        run_with_stdin((r), NULL, args_); \
    } while (0)

#define run_free spawn_run_free

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*=====   Streams   =====*/

#define REALTIME 1700000000000000000ull /* 2023-11-14T22:13:20Z */

/*
 * Two rings, 1 GHz (ns = ticks).  Ring 0 (tid 100 "main"): uptime pair at
 * 1000, items at 1500 (USER_0 named "request") and 4000 (MALLOC_ENTRY).
 * Ring 1 (tid 101 "worker"): uptime pair at 2000, items at 2500 (USER_1)
 * and 3000 ("request").
 */
static void basic_stream(struct fr_vec *v, uint32_t format)
{
    fr_vec_init(v, format);
    fr_vec_flightrec_header(v, 1000000000u, 2, 1024, 42, REALTIME);
    fr_vec_name(v, FLIGHTREC_EV_EVENT_NAME_ID, FLIGHTREC_USER(0),
                FLIGHTREC_EV_EVENT_NAME, "request", 8);
    fr_vec_flightrec_chunk(v, 0, 100, "main", 0, 0, 0, 0);
    fr_vec_uptime(v, 1000, 1000);
    fr_vec_item(v, 1500, FLIGHTREC_USER(0), 0x2a);
    fr_vec_item(v, 4000, FLIGHTREC_EV_MALLOC_ENTRY, 64);
    fr_vec_flightrec_chunk(v, 1, 101, "worker", 0, 0, 0, 0);
    fr_vec_uptime(v, 2000, 2000);
    fr_vec_item(v, 2500, FLIGHTREC_USER(1), 7);
    fr_vec_item(v, 3000, FLIGHTREC_USER(0), 0xdeadbeef);
}

static const char basic_text[] =
    "0.000000000 [0] 100 main request 0x2a\n"
    "0.000001000 [1] 101 worker USER_1 0x7\n"
    "0.000001500 [1] 101 worker request 0xdeadbeef\n"
    "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n";


static const char *basic_file(const char *name, uint32_t format)
{
    struct fr_vec v;
    const char *path = scratch(name);

    basic_stream(&v, format);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    return path;
}

#define CHECK_RUN(r, status_, out_, err_) \
    do { \
        CHECK_EQ_S((r)->out, (out_)); \
        CHECK_EQ_S((r)->err, (err_)); \
        CHECK_EQ_I((r)->status, (status_)); \
    } while (0)


/*=====   Tables of runs   =====*/

/* One run and what it must give.  In args, out and err, "{}" stands for the
 * case's input file. */
struct cli_case {
    const char *args[10];
    int status;
    const char *out;  /* exact */
    const char *err;  /* exact; with err_prefix, how stderr begins */
    int err_prefix;
    int on_stdin;     /* the input file on standard input, not in args */
};

/* A copy of tmpl with every "{}" replaced by path. */
static char *subst(const char *tmpl, const char *path)
{
    size_t cap = strlen(tmpl) + 1, n = 0;
    char *out;

    for (const char *t = strstr(tmpl, "{}"); t; t = strstr(t + 2, "{}"))
        cap += strlen(path);
    out = malloc(cap);
    CHECK(out != NULL);
    for (const char *t = tmpl; *t;) {
        if (t[0] == '{' && t[1] == '}') {
            memcpy(out + n, path, strlen(path));
            n += strlen(path);
            t += 2;
        } else {
            out[n++] = *t++;
        }
    }
    out[n] = '\0';
    return out;
}

static void run_case(const struct cli_case *c, const char *path, size_t row)
{
    char *args[11];
    size_t n = 0;
    struct spawn_run r;

    for (; n < 10 && c->args[n] != NULL; n++)
        args[n] = subst(c->args[n], path ? path : "");
    args[n] = NULL;
    run_with_stdin(&r, c->on_stdin ? path : NULL, (const char *const *)args);
    char *out = subst(c->out, path ? path : "");
    char *err = subst(c->err, path ? path : "");
    if (strcmp(r.out, out) != 0)
        TEST_FAIL("row %zu (%s %s): stdout\n'%s'\nwanted\n'%s'", row, args[0],
                  n > 1 ? args[1] : "", r.out, out);
    if (c->err_prefix ? !starts_with(r.err, err) : strcmp(r.err, err) != 0)
        TEST_FAIL("row %zu (%s %s): stderr\n'%s'\nwanted%s\n'%s'", row,
                  args[0], n > 1 ? args[1] : "", r.err,
                  c->err_prefix ? " to begin with" : "", err);
    if (r.status != c->status)
        TEST_FAIL("row %zu (%s %s): status %d, wanted %d", row, args[0],
                  n > 1 ? args[1] : "", r.status, c->status);
    for (size_t i = 0; i < n; i++)
        free(args[i]);
    free(out);
    free(err);
    run_free(&r);
}

#define RUN_TABLE(cases, path) \
    do { \
        for (size_t row_ = 0; row_ < sizeof(cases) / sizeof((cases)[0]); \
             row_++) \
            run_case(&(cases)[row_], (path), row_); \
    } while (0)

/* Runs flightrec with the bytes on a pipe as standard input. */
static void run_piped(struct spawn_run *r, const void *data, size_t len,
                      const char *const *args)
{
    char path[600];
    int fds[2];

    /* Through a child that writes the bytes: the program sees a pipe, not
     * a regular file. */
    snprintf(path, sizeof path, "%s/piped.%ld", CLI_TEST_DIR, (long)getpid());
    CHECK(pipe(fds) == 0);
    pid_t writer = fork();
    CHECK(writer >= 0);
    if (writer == 0) {
        close(fds[0]);
        const char *p = data;
        while (len > 0) {
            ssize_t k = write(fds[1], p, len);
            if (k <= 0)
                _exit(1);
            p += k;
            len -= (size_t)k;
        }
        _exit(0);
    }
    close(fds[1]);
    /* /dev/fd/N is the pipe: run_with_stdin opens it as standard input. */
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    run_with_stdin(r, path, args);
    close(fds[0]);
    int st;
    CHECK(waitpid(writer, &st, 0) == writer);
}

#define RUN_PIPED(r, vec, ...) \
    do { \
        const char *const args_[] = { __VA_ARGS__, NULL }; \
        run_piped((r), (vec)->buf, (vec)->len, args_); \
    } while (0)

/* Checks a file is valid JSON lines (or one JSON document) with python3's
 * own reader and returns the number of lines. */
static int json_lines(const char *text)
{
    char path[600];
    FILE *f;

    /* Per process: cases run in parallel. */
    snprintf(path, sizeof path, "%s/json-check.%ld", CLI_TEST_DIR,
             (long)getpid());
    f = fopen(path, "wb");
    char cmd[1200];

    CHECK(f != NULL);
    CHECK(fwrite(text, 1, strlen(text), f) == strlen(text));
    CHECK(fclose(f) == 0);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json, sys\n"
             "n = 0\n"
             "for line in open(sys.argv[1], encoding=\"utf-8\"):\n"
             "    json.loads(line); n += 1\n"
             "sys.exit(100 + n)' %s", path);
    int st = system(cmd);
    unlink(path);
    CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) >= 100);
    return WEXITSTATUS(st) - 100;
}

/*=====   Global options and help   =====*/

TEST(help)
{
    struct spawn_run r;

    RUN(&r, "--help");
    CHECK(starts_with(r.out, "usage: flightrec [--version] [--help]"));
    CHECK(strstr(r.out, "\n   print ") != NULL);
    CHECK(strstr(r.out, "\n   stats ") != NULL);
    CHECK(strstr(r.out, "\n   convert ") != NULL);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    run_free(&r);

    RUN(&r, "help");
    CHECK(starts_with(r.out, "usage: flightrec [--version] [--help]"));
    CHECK_EQ_I(r.status, 0);
    run_free(&r);

    static const char *const cmds[] = { "print", "stats", "convert" };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        struct spawn_run a, b, c;
        char want[64];
        RUN(&a, "help", cmds[i]);
        RUN(&b, cmds[i], "--help");
        RUN(&c, cmds[i], "-h");
        snprintf(want, sizeof want, "usage: flightrec %s ", cmds[i]);
        CHECK(starts_with(a.out, want));
        CHECK_EQ_S(a.out, b.out);
        CHECK_EQ_S(a.out, c.out);
        CHECK_EQ_I(a.status + b.status + c.status, 0);
        CHECK_EQ_S(a.err, "");
        run_free(&a);
        run_free(&b);
        run_free(&c);
    }
}

TEST(version)
{
    static const struct cli_case cases[] = {
        { { "--version" }, 0, "flightrec " FLIGHTREC_VERSION_STRING "\n", "",
          0, 0 },
    };
    RUN_TABLE(cases, NULL);
}

TEST(usage_errors)
{
    static const struct cli_case cases[] = {
        { { "bogus" }, 2, "", "flightrec: 'bogus' is not a flightrec "
          "command, see 'flightrec --help'\n", 0, 0 },
        { { "--bogus" }, 2, "", "flightrec: unknown option '--bogus'\n"
          "usage: flightrec ", 1, 0 },
        { { "print", "--bogus", "x.rec" }, 2, "", "flightrec print: unknown "
          "option '--bogus'\nusage: flightrec print ", 1, 0 },
        { { "print", "-x" }, 2, "", "flightrec print: unknown option '-x'\n",
          1, 0 },
        { { "print", "--event" }, 2, "", "flightrec print: option '--event' "
          "needs a value\n", 1, 0 },
        { { "print", "--from=1.x" }, 2, "", "flightrec print: bad time '1.x' "
          "(seconds, e.g. 1.5)\n", 1, 0 },
        { { "print", "--from=2", "--to=1" }, 2, "", "flightrec print: --from "
          "is after --to\n", 1, 0 },
        { { "print", "--event=2000" }, 2, "", "flightrec print: bad event "
          "list '2000'\n", 1, 0 },
        { { "print", "--event=a,,b" }, 2, "", "flightrec print: bad event "
          "list 'a,,b'\n", 1, 0 },
        { { "print", "--event=99999999999999999999" }, 2, "",
          "flightrec print: bad event list '99999999999999999999'\n", 1, 0 },
        { { "print", "--thread=" }, 2, "", "flightrec print: bad thread ''\n",
          1, 0 },
        { { "print", "--csv", "--json" }, 2, "", "flightrec print: --csv and "
          "--json exclude each other\n", 1, 0 },
        { { "print", "a", "b" }, 2, "", "flightrec print: too many "
          "arguments\n", 1, 0 },
        { { "stats", "--csv" }, 2, "", "flightrec stats: unknown option "
          "'--csv'\nusage: flightrec stats ", 1, 0 },
        { { "stats", "a", "b" }, 2, "", "flightrec stats: too many "
          "arguments\n", 1, 0 },
    };
    struct spawn_run r;
    const char *const none[] = { NULL };

    RUN_TABLE(cases, NULL);
    run_with_stdin(&r, NULL, none);
    CHECK_EQ_I(r.status, 2);
    CHECK(starts_with(r.err, "usage: flightrec "));
    CHECK_EQ_S(r.out, "");
    run_free(&r);
}

/* Each subcommand's SYNOPSIS (its usage line) appears in the man source. */
TEST(synopsis)
{
    static const char *const cmds[] = {
        "print", "stats", "report", "convert",
#ifdef FLIGHTREC_HAVE_RECORD
        "record",
#endif
        "ls", "dump", "stream", "ctl", "connect", "serve", "rm",
    };
    char *man = read_file(FLIGHTREC_MAN_MD);

    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        struct spawn_run r;
        RUN(&r, cmds[i], "--help");
        CHECK_EQ_I(r.status, 0);
        CHECK(starts_with(r.out, "usage: "));
        char *line = r.out + strlen("usage: ");
        char *nl = strchr(line, '\n');
        CHECK(nl != NULL);
        *nl = '\0';
        if (strstr(man, line) == NULL)
            TEST_FAIL("SYNOPSIS '%s' is not in %s", line, FLIGHTREC_MAN_MD);
        run_free(&r);
    }
    free(man);
}

/*=====   print   =====*/

TEST(print_text)
{
    static const struct cli_case cases[] = {
        { { "print", "{}" }, 0, basic_text, "", 0, 0 },
        { { "print", "-" }, 0, basic_text, "", 0, 1 },
        { { "print" }, 0, basic_text, "", 0, 1 },
        { { "print", "--window=0.5" }, 0, basic_text, "", 0, 1 },
    };
    RUN_TABLE(cases, basic_file("print_text.rec", FLIGHTREC_FORMAT_LE_64));
}

TEST(print_formats)
{
    static const uint32_t formats[] = {
        FLIGHTREC_FORMAT_LE_32, FLIGHTREC_FORMAT_LE_64,
        FLIGHTREC_FORMAT_BE_32, FLIGHTREC_FORMAT_BE_64,
    };
    static const struct cli_case cases[] = {
        { { "print", "{}" }, 0, basic_text, "", 0, 0 },
    };
    for (size_t i = 0; i < 4; i++) {
        char name[64];
        snprintf(name, sizeof name, "print_formats_%zu.rec", i);
        RUN_TABLE(cases, basic_file(name, formats[i]));
    }
}

TEST(print_csv)
{
    static const struct cli_case cases[] = {
        { { "print", "--csv", "{}" }, 0,
          "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
          "count,flags,function\n"
          "0,0,100,request,512,0x2a,main,event,1,,\n"
          "1000,1,101,USER_1,513,0x7,worker,event,1,,\n"
          "1500,1,101,request,512,0xdeadbeef,worker,event,1,,\n"
          "2500,0,100,MALLOC_ENTRY,108,0x40,main,event,1,,\n", "", 0, 0 },
    };
    RUN_TABLE(cases, basic_file("print_csv.rec", FLIGHTREC_FORMAT_LE_32));
}

/* Names with commas and quotes are quoted, quotes doubled. */
TEST(print_csv_quoting)
{
    static const struct cli_case cases[] = {
        { { "print", "--csv", "{}" }, 0,
          "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
          "count,flags,function\n"
          "0,0,7,\"say \"\"hi\"\", twice\",515,0x1,\"a,b\",event,1,,\n", "", 0,
          0 },
        { { "print", "{}" }, 0, "0.000000000 [0] 7 a,b say \"hi\", twice 0x1\n",
          "", 0, 0 },
        /* A comma separates terms: two terms, neither matches. */
        { { "print", "--event=say \"hi\", twice", "{}" }, 0, "",
          "flightrec print: --event 'say \"hi\"' matched no event; did you "
          "mean 'say \"hi\"*'?\n"
          "flightrec print: --event ' twice' matched no event\n", 0, 0 },
        { { "print", "--event=say \"hi\"*", "--event=515", "{}" }, 0,
          "0.000000000 [0] 7 a,b say \"hi\", twice 0x1\n", "", 0, 0 },
    };
    struct fr_vec v;
    const char *path = scratch("print_csv_quoting.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
    fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, FLIGHTREC_USER(3),
                FLIGHTREC_EV_EVENT_NAME, "say \"hi\", twice", 24);
    fr_vec_flightrec_chunk(&v, 0, 7, "a,b", 0, 0, 0, 0);
    fr_vec_uptime(&v, 10, 10);
    fr_vec_item(&v, 20, FLIGHTREC_USER(3), 1);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    RUN_TABLE(cases, path);
}

/* Data words of every hex width, in 64-bit and 32-bit formats. */
TEST(print_hex)
{
    static const uint64_t data[] = {
        0, 0xf, 0x10, 0xabcdef, 0x80000000u, 0x123456789, 0xfedcba9876543210u,
        UINT64_MAX,
    };
    static const char *const want64[] = {
        "0x0", "0xf", "0x10", "0xabcdef", "0x80000000", "0x123456789",
        "0xfedcba9876543210", "0xffffffffffffffff",
    };
    static const char *const want32[] = {
        "0x0", "0xf", "0x10", "0xabcdef", "0x80000000", "0x23456789",
        "0x76543210", "0xffffffff",
    };
    for (int f = 0; f < 2; f++) {
        struct fr_vec v;
        struct spawn_run r;
        char expect[2048] = "", line[128];
        const char *path = scratch(f ? "print_hex32.rec" : "print_hex64.rec");

        fr_vec_init(&v, f ? FLIGHTREC_FORMAT_BE_32 : FLIGHTREC_FORMAT_LE_64);
        fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
        fr_vec_flightrec_chunk(&v, 0, 7, "t", 0, 0, 0, 0);
        fr_vec_uptime(&v, 10, 10);
        for (size_t i = 0; i < 8; i++) {
            fr_vec_item(&v, 20 + (uint32_t)i, FLIGHTREC_USER(0), data[i]);
            snprintf(line, sizeof line, "0.%09zu [0] 7 t USER_0 %s\n", i,
                     f ? want32[i] : want64[i]);
            strcat(expect, line);
        }
        write_vec(path, &v, v.len);
        fr_vec_free(&v);
        RUN(&r, "print", path);
        CHECK_RUN(&r, 0, expect, "");
        run_free(&r);
    }
}

TEST(print_wall)
{
    static const struct cli_case cases[] = {
        { { "print", "--wall", "{}" }, 0,
          "2023-11-14T22:13:20.000001500Z [0] 100 main request 0x2a\n"
          "2023-11-14T22:13:20.000002500Z [1] 101 worker USER_1 0x7\n"
          "2023-11-14T22:13:20.000003000Z [1] 101 worker request "
          "0xdeadbeef\n"
          "2023-11-14T22:13:20.000004000Z [0] 100 main MALLOC_ENTRY "
          "0x40\n", "", 0, 0 },
        { { "print", "--wall", "--csv", "--event=USER_1", "{}" }, 0,
          "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
          "count,flags,function\n"
          "1700000000000002500,1,101,USER_1,513,0x7,worker,event,1,,\n", "", 0,
          0 },
    };
    RUN_TABLE(cases, basic_file("print_wall.rec", FLIGHTREC_FORMAT_BE_64));
}

/* A stream without REALTIME items: --wall is an error, exit 1. */
TEST(print_wall_missing)
{
    static const struct cli_case cases[] = {
        { { "print", "--wall", "{}" }, 1, "", "flightrec print: {}: --wall: "
          "the stream has no realtime reference\n", 0, 0 },
        { { "print", "{}" }, 0, "0.000000000 [0] 7 t USER_0 0x1\n", "", 0, 0 },
    };
    struct fr_vec v;
    const char *path = scratch("print_wall_missing.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_item(&v, 0, FLIGHTREC_EV_VERSION, FLIGHTREC_STREAM_VERSION);
    fr_vec_item(&v, 0, FLIGHTREC_EV_RING_COUNT, 1);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PER_CPU_COUNT, 1024);
    fr_vec_item(&v, 0, FLIGHTREC_EV_FREQUENCY, 1000000000u);
    fr_vec_flightrec_chunk(&v, 0, 7, "t", 0, 0, 0, 0);
    fr_vec_uptime(&v, 10, 10);
    fr_vec_item(&v, 20, FLIGHTREC_USER(0), 1);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    RUN_TABLE(cases, path);
}

/* Names, ids and globs; a term that matches nothing is reported at the end
 * with the nearest name of the stream. */
TEST(print_event_filter)
{
    static const struct cli_case cases[] = {
        { { "print", "--event=request", "{}" }, 0,
          "0.000000000 [0] 100 main request 0x2a\n"
          "0.000001500 [1] 101 worker request 0xdeadbeef\n", "", 0, 0 },
        { { "print", "--event=108,513", "{}" }, 0,
          "0.000001000 [1] 101 worker USER_1 0x7\n"
          "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n", "", 0, 0 },
        { { "print", "--event=MALLOC_ENTRY", "--event=USER_1", "{}" }, 0,
          "0.000001000 [1] 101 worker USER_1 0x7\n"
          "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n", "", 0, 0 },
        { { "print", "--event=MALLOC_*", "{}" }, 0,
          "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n", "", 0, 0 },
        { { "print", "--event=*e?t", "{}" }, 0,
          "0.000000000 [0] 100 main request 0x2a\n"
          "0.000001500 [1] 101 worker request 0xdeadbeef\n", "", 0, 0 },
        { { "print", "--event=USER_[0-9]", "{}" }, 0,
          "0.000001000 [1] 101 worker USER_1 0x7\n", "", 0, 0 },
        { { "print", "--event=NO_SUCH_EVENT", "{}" }, 0, "",
          "flightrec print: --event 'NO_SUCH_EVENT' matched no event\n", 0,
          0 },
        { { "print", "--event=reqest,MALOC_ENTRY", "{}" }, 0, "",
          "flightrec print: --event 'reqest' matched no event; did you mean "
          "'request'?\n"
          "flightrec print: --event 'MALOC_ENTRY' matched no event; did you "
          "mean 'MALLOC_ENTRY'?\n", 0, 0 },
        { { "print", "--event=malloc_entry", "{}" }, 0, "",
          "flightrec print: --event 'malloc_entry' matched no event; did you "
          "mean 'MALLOC_ENTRY'?\n", 0, 0 },
        { { "print", "--event=USER", "{}" }, 0, "",
          "flightrec print: --event 'USER' matched no event; did you mean "
          "'USER*'?\n", 0, 0 },
        { { "print", "--event=FREE_*,600", "{}" }, 0, "",
          "flightrec print: --event 'FREE_*' matched no event\n"
          "flightrec print: --event '600' matched no event\n", 0, 0 },
        /* -q hides the warnings, not the records. */
        { { "-q", "print", "--event=request,nothing", "{}" }, 0,
          "0.000000000 [0] 100 main request 0x2a\n"
          "0.000001500 [1] 101 worker request 0xdeadbeef\n", "", 0, 0 },
        /* Outside --from/--to still counts as a match. */
        { { "print", "--event=request", "--from=0.000002", "{}" }, 0, "", "",
          0, 0 },
    };
    RUN_TABLE(cases, basic_file("print_event_filter.rec",
                                FLIGHTREC_FORMAT_LE_64));
}

TEST(print_thread_filter)
{
    static const struct cli_case cases[] = {
        { { "print", "--thread=worker", "{}" }, 0,
          "0.000001000 [1] 101 worker USER_1 0x7\n"
          "0.000001500 [1] 101 worker request 0xdeadbeef\n", "", 0, 0 },
        { { "print", "--thread=100", "{}" }, 0,
          "0.000000000 [0] 100 main request 0x2a\n"
          "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n", "", 0, 0 },
        { { "print", "--thread=100", "--thread=worker", "{}" }, 0, basic_text,
          "", 0, 0 },
        { { "print", "--thread=main", "--event=request", "{}" }, 0,
          "0.000000000 [0] 100 main request 0x2a\n", "", 0, 0 },
        { { "print", "--thread=w*", "{}" }, 0,
          "0.000001000 [1] 101 worker USER_1 0x7\n"
          "0.000001500 [1] 101 worker request 0xdeadbeef\n", "", 0, 0 },
        { { "print", "--thread=?ai?", "{}" }, 0,
          "0.000000000 [0] 100 main request 0x2a\n"
          "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n", "", 0, 0 },
        { { "print", "--thread=work", "{}" }, 0, "",
          "flightrec print: --thread 'work' matched no thread; did you mean "
          "'work*'?\n", 0, 0 },
        { { "print", "--thread=wroker", "{}" }, 0, "",
          "flightrec print: --thread 'wroker' matched no thread; did you mean "
          "'worker'?\n", 0, 0 },
        { { "print", "--thread=102", "--thread=x*", "{}" }, 0, "",
          "flightrec print: --thread '102' matched no thread\n"
          "flightrec print: --thread 'x*' matched no thread\n", 0, 0 },
    };
    RUN_TABLE(cases, basic_file("print_thread_filter.rec",
                                FLIGHTREC_FORMAT_LE_64));
}

TEST(print_time_filter)
{
    static const struct cli_case cases[] = {
        { { "print", "--from=0.000001", "--to=0.0000015", "{}" }, 0,
          "0.000001000 [1] 101 worker USER_1 0x7\n"
          "0.000001500 [1] 101 worker request 0xdeadbeef\n", "", 0, 0 },
        { { "print", "--from=0.000001001", "{}" }, 0,
          "0.000001500 [1] 101 worker request 0xdeadbeef\n"
          "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n", "", 0, 0 },
        { { "print", "--to=0", "{}" }, 0,
          "0.000000000 [0] 100 main request 0x2a\n", "", 0, 0 },
        { { "print", "--from=1", "{}" }, 0, "", "", 0, 0 },
    };
    RUN_TABLE(cases, basic_file("print_time_filter.rec",
                                FLIGHTREC_FORMAT_LE_64));
}

/*
 * One ring, three chunks: the second reports 12 items overwritten, the
 * third 3 items discarded.  Loss records print as their own lines / rows.
 */
static const char *loss_file(const char *name)
{
    struct fr_vec v;
    const char *path = scratch(name);

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 1100, FLIGHTREC_USER(0), 1);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 15, 12, 0);
    fr_vec_uptime(&v, 5000, 5000);
    fr_vec_item(&v, 5100, FLIGHTREC_USER(0), 2);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 18, 0, 3);
    fr_vec_uptime(&v, 9000, 9000);
    fr_vec_item(&v, 9100, FLIGHTREC_USER(0), 3);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    return path;
}

TEST(print_losses)
{
    static const struct cli_case cases[] = {
        { { "print", "{}" }, 0,
          "0.000000000 [0] 100 main USER_0 0x1\n"
          "0.000004000 [0] 100 main LOST 12 items (overflow)\n"
          "0.000004000 [0] 100 main USER_0 0x2\n"
          "0.000008000 [0] 100 main LOST 3 items (discard)\n"
          "0.000008000 [0] 100 main USER_0 0x3\n", "", 0, 0 },
        { { "print", "--csv", "{}" }, 0,
          "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
          "count,flags,function\n"
          "0,0,100,USER_0,512,0x1,main,event,1,,\n"
          "4000,0,100,LOST,,,main,overflow,12,,\n"
          "4000,0,100,USER_0,512,0x2,main,event,1,,\n"
          "8000,0,100,LOST,,,main,discard,3,,\n"
          "8000,0,100,USER_0,512,0x3,main,event,1,,\n", "", 0, 0 },
        { { "print", "--json", "{}" }, 0,
          "{\"time_ns\":0,\"ring\":0,\"thread\":100,\"thread_name\":\"main\","
          "\"event\":\"USER_0\",\"event_id\":512,\"data\":\"0x1\","
          "\"kind\":\"event\",\"count\":1,\"flags\":[]}\n"
          "{\"time_ns\":4000,\"ring\":0,\"thread\":100,\"thread_name\":"
          "\"main\",\"event\":null,\"event_id\":null,\"data\":null,"
          "\"kind\":\"overflow\",\"count\":12,\"flags\":[]}\n"
          "{\"time_ns\":4000,\"ring\":0,\"thread\":100,\"thread_name\":"
          "\"main\",\"event\":\"USER_0\",\"event_id\":512,\"data\":\"0x2\","
          "\"kind\":\"event\",\"count\":1,\"flags\":[]}\n"
          "{\"time_ns\":8000,\"ring\":0,\"thread\":100,\"thread_name\":"
          "\"main\",\"event\":null,\"event_id\":null,\"data\":null,"
          "\"kind\":\"discard\",\"count\":3,\"flags\":[]}\n"
          "{\"time_ns\":8000,\"ring\":0,\"thread\":100,\"thread_name\":"
          "\"main\",\"event\":\"USER_0\",\"event_id\":512,\"data\":\"0x3\","
          "\"kind\":\"event\",\"count\":1,\"flags\":[]}\n", "", 0, 0 },
    };
    RUN_TABLE(cases, loss_file("print_losses.rec"));
}

/* Items no uptime pair ever reaches are printed marked untimed. */
TEST(print_untimed)
{
    static const struct cli_case cases[] = {
        { { "print", "{}" }, 0,
          "untimed [0] 100 main USER_0 0x1\n"
          "untimed [0] 100 main USER_1 0x2\n", "", 0, 0 },
        { { "print", "--csv", "{}" }, 0,
          "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
          "count,flags,function\n"
          ",0,100,USER_0,512,0x1,main,event,1,untimed,\n"
          ",0,100,USER_1,513,0x2,main,event,1,untimed,\n", "", 0, 0 },
        { { "print", "--json", "--event=USER_1", "{}" }, 0,
          "{\"time_ns\":null,\"ring\":0,\"thread\":100,\"thread_name\":"
          "\"main\",\"event\":\"USER_1\",\"event_id\":513,\"data\":\"0x2\","
          "\"kind\":\"event\",\"count\":1,\"flags\":[\"untimed\"]}\n", "", 0,
          0 },
        /* A time range selects timed records only. */
        { { "print", "--from=0", "{}" }, 0, "", "", 0, 0 },
    };
    struct fr_vec v;
    const char *path = scratch("print_untimed.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    fr_vec_item(&v, 1100, FLIGHTREC_USER(0), 1);
    fr_vec_item(&v, 1200, FLIGHTREC_USER(1), 2);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    RUN_TABLE(cases, path);
}

/* print --json: one object per line, read back by python3's json. */
TEST(print_json)
{
    static const struct cli_case cases[] = {
        { { "print", "--json", "--thread=worker", "{}" }, 0,
          "{\"time_ns\":1000,\"ring\":1,\"thread\":101,\"thread_name\":"
          "\"worker\",\"event\":\"USER_1\",\"event_id\":513,\"data\":\"0x7\","
          "\"kind\":\"event\",\"count\":1,\"flags\":[]}\n"
          "{\"time_ns\":1500,\"ring\":1,\"thread\":101,\"thread_name\":"
          "\"worker\",\"event\":\"request\",\"event_id\":512,\"data\":"
          "\"0xdeadbeef\",\"kind\":\"event\",\"count\":1,\"flags\":[]}\n", "",
          0, 0 },
        { { "print", "--json", "--wall", "--event=MALLOC_ENTRY", "{}" }, 0,
          "{\"time_ns\":1700000000000004000,\"ring\":0,\"thread\":100,"
          "\"thread_name\":\"main\",\"event\":\"MALLOC_ENTRY\",\"event_id\":"
          "108,\"data\":\"0x40\",\"kind\":\"event\",\"count\":1,\"flags\":"
          "[]}\n", "", 0, 0 },
    };
    const char *path = basic_file("print_json.rec", FLIGHTREC_FORMAT_BE_32);
    struct spawn_run r;

    RUN_TABLE(cases, path);
    RUN(&r, "print", "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_I(json_lines(r.out), 4);
    run_free(&r);
}

/*=====   Live output, renamed events, escaped names   =====*/

/* Reads from fd until buf holds want (or EOF, or 60 s without a byte). */
static void read_until(int fd, char *buf, size_t cap, size_t *len,
                       const char *want)
{
    while (want == NULL || strstr(buf, want) == NULL) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int n = poll(&pfd, 1, 60000);
        if (n == 0)
            TEST_FAIL("no output within 60 s; have '%s', want '%s'", buf,
                      want ? want : "(EOF)");
        CHECK(n == 1 || errno == EINTR);
        if (n != 1)
            continue;
        ssize_t k = read(fd, buf + *len, cap - 1 - *len);
        CHECK(k >= 0);
        if (k == 0) {
            if (want != NULL)
                TEST_FAIL("EOF before '%s'; have '%s'", want, buf);
            return;
        }
        *len += (size_t)k;
        buf[*len] = '\0';
    }
}

static void write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        CHECK(k > 0);
        p += k;
        n -= (size_t)k;
    }
}

/*
 * A producer that writes part of a stream, then waits: the records that
 * can be ordered must reach print's output before the producer goes on
 * (print flushes when its input pauses, not only when its buffer fills or
 * the stream ends).
 */
TEST(print_live_pipe)
{
    struct fr_vec v;
    int in[2], out[2];
    char buf[4096] = "";
    size_t len = 0;
    const char *err_path = scratch("print_live_pipe.err");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 2000, FLIGHTREC_USER(0), 1);
    /* 1 us later than the first: with --window=0.000001 it releases it. */
    fr_vec_item(&v, 3000, FLIGHTREC_USER(0), 2);
    size_t part1 = v.len;
    fr_vec_item(&v, 10000, FLIGHTREC_USER(0), 3);

    CHECK(pipe(in) == 0 && pipe(out) == 0);
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (err < 0)
            _exit(126);
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err, 2);
        close(in[1]);
        close(out[0]);
        execl(FLIGHTREC_BIN, FLIGHTREC_BIN, "print", "--window=0.000001", "-",
              (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    write_all(in[1], v.buf, part1);
    /* The producer pauses here, its pipe open, until the line is seen. */
    read_until(out[0], buf, sizeof buf, &len,
               "0.000000000 [0] 100 main USER_0 0x1\n");
    CHECK_EQ_S(buf, "0.000000000 [0] 100 main USER_0 0x1\n");
    write_all(in[1], v.buf + part1, v.len - part1);
    close(in[1]);
    read_until(out[0], buf, sizeof buf, &len, NULL);
    close(out[0]);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_EQ_S(buf, "0.000000000 [0] 100 main USER_0 0x1\n"
                    "0.000001000 [0] 100 main USER_0 0x2\n"
                    "0.000008000 [0] 100 main USER_0 0x3\n");
    char *err = read_file(err_path);
    CHECK_EQ_S(err, "");
    free(err);
    fr_vec_free(&v);
}

/*
 * The stream renames USER_3 from "old" to "new" between records, read from
 * a pipe: the names printed and matched follow the rename (the decoder
 * rewrites the name in place, so a cache keyed on its pointer would not).
 */
TEST(print_renamed_event)
{
    struct fr_vec v;
    struct spawn_run r;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
    fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, FLIGHTREC_USER(3),
                FLIGHTREC_EV_EVENT_NAME, "old", 8);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 2000, FLIGHTREC_USER(3), 1);
    fr_vec_item(&v, 3000, FLIGHTREC_USER(3), 2);
    fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, FLIGHTREC_USER(3),
                FLIGHTREC_EV_EVENT_NAME, "new", 8);
    /* Names are header items: the ring goes on in a new chunk. */
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 4, 0, 0);
    fr_vec_item(&v, 4000, FLIGHTREC_USER(3), 3);

    RUN_PIPED(&r, &v, "print", "--window=0.000001", "-");
    CHECK_RUN(&r, 0,
              "0.000000000 [0] 100 main old 0x1\n"
              "0.000001000 [0] 100 main new 0x2\n"
              "0.000002000 [0] 100 main new 0x3\n", "");
    run_free(&r);
    RUN_PIPED(&r, &v, "print", "--window=0.000001", "--event=new", "-");
    CHECK_RUN(&r, 0,
              "0.000001000 [0] 100 main new 0x2\n"
              "0.000002000 [0] 100 main new 0x3\n", "");
    run_free(&r);
    RUN_PIPED(&r, &v, "print", "--window=0.000001", "--event=old", "-");
    CHECK_RUN(&r, 0, "0.000000000 [0] 100 main old 0x1\n", "");
    run_free(&r);
    RUN_PIPED(&r, &v, "print", "--window=0.000001", "--csv", "-");
    CHECK_RUN(&r, 0,
              "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
              "count,flags,function\n"
              "0,0,100,old,515,0x1,main,event,1,,\n"
              "1000,0,100,new,515,0x2,main,event,1,,\n"
              "2000,0,100,new,515,0x3,main,event,1,,\n", "");
    run_free(&r);
    fr_vec_free(&v);
}

/*
 * Names carrying ESC sequences, a newline, a C1 control (U+009B, CSI), a
 * byte that is not UTF-8 and a backslash reach neither the terminal nor a
 * JSON reader raw; UTF-8 text ("é") is kept.
 */
static const char *hostile_file(void)
{
    struct fr_vec v;
    const char *path = scratch("hostile.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
    fr_vec_name(&v, FLIGHTREC_EV_EVENT_NAME_ID, FLIGHTREC_USER(1),
                FLIGHTREC_EV_EVENT_NAME, "a\nb\x1b[2J\\\xc2\x9b\xff\xc3\xa9",
                16);
    fr_vec_flightrec_chunk(&v, 0, 7, "\x1b]0;pwned\x07\r", 0, 0, 0, 0);
    fr_vec_uptime(&v, 10, 10);
    fr_vec_item(&v, 20, FLIGHTREC_USER(1), 1);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    return path;
}

TEST(print_escapes_names)
{
    static const struct cli_case cases[] = {
        { { "print", "{}" }, 0,
          "0.000000000 [0] 7 \\e]0;pwned\\x07\\r "
          "a\\nb\\e[2J\\\\\\xc2\\x9b\\xff\xc3\xa9 0x1\n", "", 0, 0 },
        { { "print", "--json", "{}" }, 0,
          "{\"time_ns\":0,\"ring\":0,\"thread\":7,\"thread_name\":"
          "\"\\u001b]0;pwned\\u0007\\u000d\",\"event\":"
          "\"a\\nb\\u001b[2J\\\\\\u009b\\ufffd\xc3\xa9\",\"event_id\":513,"
          "\"data\":\"0x1\",\"kind\":\"event\",\"count\":1,\"flags\":[]}\n",
          "", 0, 0 },
        /* Patterns and suggestions in messages are escaped too. */
        { { "print", "--event=a\nb\x1b", "{}" }, 0, "",
          "flightrec print: --event 'a\\nb\\e' matched no event; did you "
          "mean 'a\\nb\\e*'?\n", 0, 0 },
        { { "print", "--thread=\x1b]0;pwned*", "--event=a?b*", "{}" }, 0,
          "0.000000000 [0] 7 \\e]0;pwned\\x07\\r "
          "a\\nb\\e[2J\\\\\\xc2\\x9b\\xff\xc3\xa9 0x1\n", "", 0, 0 },
    };
    const char *path = hostile_file();
    struct spawn_run r;

    RUN_TABLE(cases, path);
    RUN(&r, "print", "--json", path);
    CHECK_EQ_I(json_lines(r.out), 1);
    run_free(&r);
}

TEST(stats_escapes_names)
{
    struct spawn_run r;

    RUN(&r, "stats", hostile_file());
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    CHECK(strstr(r.out, "\n           1              -   513  "
                        "a\\nb\\e[2J\\\\\\xc2\\x9b\\xff\xc3\xa9\n") != NULL);
    CHECK(strstr(r.out, "\n           1              -          7  "
                        "\\e]0;pwned\\x07\\r\n") != NULL);
    CHECK(strstr(r.out, "          0          7  \\e]0;pwned\\x07\\r\n") !=
          NULL);
    for (const char *c = r.out; *c; c++)
        CHECK(*c == '\n' || (unsigned char)*c >= 0x20);
    CHECK(strchr(r.out, 0x1b) == NULL && strchr(r.out, 0x7f) == NULL);
    run_free(&r);
}

/*=====   Saturated counters and times   =====*/

/* Two chunks each report 2^63 overwritten items: 2^64 does not fit. */
TEST(loss_counts_saturate)
{
    struct fr_vec v;
    struct spawn_run r;
    const char *path = scratch("loss_saturate.rec");
    const uint64_t half = UINT64_C(1) << 63;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 1100, FLIGHTREC_USER(0), 1);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 3, half, 0);
    fr_vec_uptime(&v, 5000, 5000);
    fr_vec_item(&v, 5100, FLIGHTREC_USER(0), 2);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 6, half, 0);
    fr_vec_uptime(&v, 9000, 9000);
    fr_vec_item(&v, 9100, FLIGHTREC_USER(0), 3);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);

    RUN(&r, "print", "--event=LOST*", path);
    CHECK_RUN(&r, 0,
              "0.000004000 [0] 100 main LOST 9223372036854775808 items "
              "(overflow)\n"
              "0.000008000 [0] 100 main LOST 9223372036854775808 items "
              "(overflow)\n",
              "flightrec print: --event 'LOST*' matched no event\n");
    run_free(&r);
    RUN(&r, "stats", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "flightrec stats: loss counts reached 2^64 - 1 and "
               "stopped there (saturated): the stream reports more lost "
               "items than that\n");
    CHECK(strstr(r.out, "\nlost: overflow 18446744073709551615 (saturated), "
                        "discard 0, missing 0\n") != NULL);
    CHECK(strstr(r.out, "\n    0  thread            3 "
                        "18446744073709551615          0          0"
                        "          0        100  main\n") != NULL);
    run_free(&r);
    RUN(&r, "stats", "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK(strstr(r.out, "\"lost\":{\"overflow\":18446744073709551615,"
                        "\"discard\":0,\"missing\":0},\"saturated\":true")
          != NULL);
    CHECK_EQ_I(json_lines(r.out), 1);
    run_free(&r);
}

/* A realtime reference 3 us before 2^64 ns (the first record at 2 us):
 * the records at 5 and 9 us cannot be shown; they saturate and print says
 * so. */
TEST(wall_time_saturates)
{
    struct fr_vec v;
    struct spawn_run r;
    const char *path = scratch("wall_saturate.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42,
                            UINT64_MAX - 2999);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 2000, FLIGHTREC_USER(0), 1);
    fr_vec_item(&v, 5000, FLIGHTREC_USER(0), 2);
    fr_vec_item(&v, 9000, FLIGHTREC_USER(0), 3);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);

    RUN(&r, "print", "--wall", path);
    CHECK_RUN(&r, 0,
              "2554-07-21T23:34:33.709550616Z [0] 100 main USER_0 0x1\n"
              "2554-07-21T23:34:33.709551615Z [0] 100 main USER_0 0x2\n"
              "2554-07-21T23:34:33.709551615Z [0] 100 main USER_0 0x3\n",
              "flightrec print: --wall: 2 records are later than 2^64 ns "
              "after 1970; their times are shown as "
              "2554-07-21T23:34:33.709551615Z\n");
    run_free(&r);
    RUN(&r, "print", "--wall", "--csv", path);
    CHECK_EQ_S(r.out, "time_ns,ring,thread,event,event_id,data,thread_name,"
               "kind,count,flags,function\n"
               "18446744073709550616,0,100,USER_0,512,0x1,main,event,1,,\n"
               "18446744073709551615,0,100,USER_0,512,0x2,main,event,1,,\n"
               "18446744073709551615,0,100,USER_0,512,0x3,main,event,1,,\n");
    run_free(&r);
}

/*=====   Bad input   =====*/

static void bad_magic_stream(struct fr_vec *v)
{
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_64);
    v->buf[4] ^= 0xff;
    fr_vec_flightrec_header(v, 1000000000u, 1, 1024, 42, REALTIME);
}

static void bad_format_stream(struct fr_vec *v)
{
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_64);
    memset(v->buf, 0x55, 4);
}

static void bad_version_stream(struct fr_vec *v)
{
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_item(v, 0, FLIGHTREC_EV_VERSION, FLIGHTREC_STREAM_VERSION + 1);
}

/* Cut 5 bytes into the last item (12 bytes): the records before it are
 * printed. */
static void truncated_stream(struct fr_vec *v)
{
    basic_stream(v, FLIGHTREC_FORMAT_LE_64);
    v->len -= 5;
}

/*
 * Bad input: "print FILE" gives what was decoded before the problem, and
 * both print and stats exit 1 with one line "flightrec CMD: FILE: byte N:
 * ..." naming the byte offset.
 */
TEST(bad_input)
{
    static const struct {
        const char *name;
        void (*build)(struct fr_vec *v);
        const char *out;
        const char *msg;
    } cases[] = {
        { "bad_magic", bad_magic_stream, "", "byte 4: bad magic" },
        { "bad_format", bad_format_stream, "", "byte 0: unknown format" },
        { "bad_version", bad_version_stream, "", "byte 8: unsupported" },
        { "truncated", truncated_stream,
          "0.000000000 [0] 100 main request 0x2a\n"
          "0.000001000 [1] 101 worker USER_1 0x7\n"
          "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n", "byte 344: " },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fr_vec v;
        char name[64], prefix[800];
        snprintf(name, sizeof name, "%s.rec", cases[i].name);
        const char *path = scratch(name);
        cases[i].build(&v);
        write_vec(path, &v, v.len);
        fr_vec_free(&v);
        for (int cmd = 0; cmd < 2; cmd++) {
            const char *c = cmd ? "stats" : "print";
            struct spawn_run r;
            RUN(&r, c, path);
            snprintf(prefix, sizeof prefix, "flightrec %s: %s: %s", c, path,
                     cases[i].msg);
            if (cmd)
                CHECK(starts_with(r.out, "stream: "));
            else
                CHECK_EQ_S(r.out, cases[i].out);
            if (!starts_with(r.err, prefix))
                TEST_FAIL("%s: stderr '%s' does not start with '%s'",
                          cases[i].name, r.err, prefix);
            CHECK(strchr(r.err, '\n') == r.err + strlen(r.err) - 1);
            CHECK_EQ_I(r.status, 1);
            run_free(&r);
        }
    }
}

TEST(missing_file)
{
    static const struct cli_case cases[] = {
        { { "print", "{}" }, 1, "", "flightrec print: cannot open '{}': No "
          "such file or directory\n", 0, 0 },
        { { "stats", "{}" }, 1, "", "flightrec stats: cannot open '{}': No "
          "such file or directory\n", 0, 0 },
        { { "print", "--json", "{}" }, 1, "", "flightrec print: cannot open "
          "'{}': No such file or directory\n", 0, 0 },
    };
    RUN_TABLE(cases, scratch("no-such-file.rec"));
}

/*=====   stats   =====*/

static const char stats_text[] =
    "stream: flightrec, version 0x46520001, format le64\n"
    "frequency: 1000000000 Hz\n"
    "rings in header: 2\n"
    "items per ring: 1024\n"
    "process id: 42\n"
    "realtime at uptime 0: 2023-11-14T22:13:20.000000000Z\n"
    "first record: 0.000001500 s\n"
    "last record: 0.000004000 s\n"
    "duration: 0.000002500 s\n"
    "bytes: 356\n"
    "events: 4 (1600000.0/s)\n"
    "untimed: 0\n"
    "late: 0\n"
    "lost: overflow 0, discard 0, missing 0\n"
    "\n"
    "events by type: 3\n"
    "       count         rate/s    id  event\n"
    "           2       800000.0   512  request\n"
    "           1       400000.0   108  MALLOC_ENTRY\n"
    "           1       400000.0   513  USER_1\n"
    "\n"
    "threads: 2\n"
    "      events         rate/s        tid  name\n"
    "           2       800000.0        100  main\n"
    "           2       800000.0        101  worker\n"
    "\n"
    "rings: 2\n"
    " ring context       events   overflow    discard    missing"
    "    untimed        tid  name\n"
    "    0  thread            2          0          0          0"
    "          0        100  main\n"
    "    1  thread            2          0          0          0"
    "          0        101  worker\n";

static const char stats_json[] =
    "{\"stream\":{\"kind\":\"flightrec\",\"version\":1179779073,"
    "\"format\":\"le64\",\"frequency\":1000000000,\"ring_count\":2,"
    "\"items_per_ring\":1024,\"process_id\":42,\"realtime_at_zero\":"
    "\"2023-11-14T22:13:20.000000000Z\",\"arch\":\"\",\"bsp\":\"\","
    "\"tools\":\"\"},\"first_ns\":1500,\"last_ns\":4000,\"duration_ns\":2500,"
    "\"bytes\":356,\"events\":4,\"untimed\":0,\"late\":0,\"lost\":"
    "{\"overflow\":0,\"discard\":0,\"missing\":0},\"saturated\":false,"
    "\"events_by_type\":[{\"id\":512,\"event\":\"request\",\"count\":2},"
    "{\"id\":108,\"event\":\"MALLOC_ENTRY\",\"count\":1},{\"id\":513,"
    "\"event\":\"USER_1\",\"count\":1}],\"threads\":[{\"tid\":100,\"name\":"
    "\"main\",\"events\":2},{\"tid\":101,\"name\":\"worker\",\"events\":2}],"
    "\"rings\":[{\"ring\":0,\"context\":\"thread\",\"events\":2,\"overflow\":0,"
    "\"discard\":0,\"missing\":0,\"untimed\":0,\"tid\":100,\"name\":\"main\"},"
    "{\"ring\":1,\"context\":\"thread\",\"events\":2,\"overflow\":0,"
    "\"discard\":0,\"missing\":0,\"untimed\":0,\"tid\":101,\"name\":"
    "\"worker\"}]}\n";

TEST(stats)
{
    static const struct cli_case cases[] = {
        { { "stats", "{}" }, 0, stats_text, "", 0, 0 },
        { { "stats" }, 0, stats_text, "", 0, 1 },
        { { "stats", "--json", "{}" }, 0, stats_json, "", 0, 0 },
        { { "stats", "--json", "-" }, 0, stats_json, "", 0, 1 },
    };
    RUN_TABLE(cases, basic_file("stats.rec", FLIGHTREC_FORMAT_LE_64));
    CHECK_EQ_I(json_lines(stats_json), 1);
}

/* Rings that held nothing (their chunks are PROCESSOR items alone) are
 * listed each with its own id, next to one that held an event. */
TEST(stats_empty_rings)
{
    struct fr_vec v;
    struct spawn_run r;
    const char *path = scratch("empty-rings.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, 1000000000u, 4, 1024, 42, REALTIME);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, 9);
    fr_vec_flightrec_chunk(&v, 3, 42, "worker", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 1000);
    fr_vec_item(&v, 5, FLIGHTREC_USER(1), 1);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, 7);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, 1);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    RUN(&r, "stats", path);
    CHECK_EQ_I(r.status, 0);
    CHECK(strstr(r.out,
                 "\nrings: 4\n"
                 " ring context       events   overflow    discard    "
                 "missing    untimed        tid  name\n"
                 "    1  thread            0          0          0  "
                 "        0          0          -  -\n"
                 "    3  thread            1          0          0  "
                 "        0          0         42  worker\n"
                 "    7  thread            0          0          0  "
                 "        0          0          -  -\n"
                 "    9  thread            0          0          0  "
                 "        0          0          -  -\n") != NULL);
    run_free(&r);
    RUN(&r, "stats", "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK(strstr(r.out, "\"rings\":[{\"ring\":1,\"context\":\"thread\","
                        "\"events\":0,") != NULL);
    CHECK(strstr(r.out, "{\"ring\":7,\"context\":\"thread\",\"events\":0,")
          != NULL);
    CHECK(strstr(r.out, "{\"ring\":9,\"context\":\"thread\",\"events\":0,")
          != NULL);
    run_free(&r);
}

TEST(stats_losses)
{
    struct spawn_run r;
    const char *path = loss_file("stats_losses.rec");
    const char *const args[] = { "stats", NULL };

    run_with_stdin(&r, path, args);
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    CHECK(strstr(r.out, "\nevents: 3 (375000.0/s)\n") != NULL);
    CHECK(strstr(r.out, "\nlost: overflow 12, discard 3, missing 0\n") !=
          NULL);
    CHECK(strstr(r.out, "\n    0  thread            3         12          3"
                        "          0          0        100  main\n") != NULL);
    run_free(&r);
}

TEST_MAIN()
