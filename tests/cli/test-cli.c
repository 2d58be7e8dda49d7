/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flightrec command, end to end: builds streams with stream-vector,
 * writes them to the build directory, runs the built program and checks its
 * exact stdout, stderr and exit status.
 *
 * Covers: global options and help, the SYNOPSIS of each subcommand against
 * docs/flightrec.1.md, print (text, --csv, --wall, --event, --thread,
 * --from/--to, losses, untimed records, stdin, all four formats), stats, and
 * bad input (bad magic, unknown format, unsupported version, truncation,
 * missing file, unknown option).
 */
#define _POSIX_C_SOURCE 200809L

#include "stream-vector.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
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

struct run {
    int status;  /* exit status, or 128 + signal */
    char *out;
    char *err;
};

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);

    CHECK(f != NULL && buf != NULL);
    for (;;) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (len + 1 < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
        CHECK(buf != NULL);
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

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
static void run_with_stdin(struct run *r, const char *stdin_path,
                           const char *const *args)
{
    char out_path[600], err_path[600];
    const char *argv[32];
    size_t n = 0;

    snprintf(out_path, sizeof out_path, "%s/out.%ld", CLI_TEST_DIR,
             (long)getpid());
    snprintf(err_path, sizeof err_path, "%s/err.%ld", CLI_TEST_DIR,
             (long)getpid());
    argv[n++] = FLIGHTREC_BIN;
    for (; args[n - 1] != NULL && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;

    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
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
    int st;
    while (waitpid(pid, &st, 0) < 0)
        CHECK(errno == EINTR);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out = read_file(out_path);
    r->err = read_file(err_path);
    unlink(out_path);
    unlink(err_path);
}

#define RUN(r, ...) \
    do { \
        const char *const args_[] = { __VA_ARGS__, NULL }; \
        run_with_stdin((r), NULL, args_); \
    } while (0)

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

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

/*=====   Global options and help   =====*/

TEST(help)
{
    struct run r;

    RUN(&r, "--help");
    CHECK(starts_with(r.out, "usage: flightrec [--version] [--help]"));
    CHECK(strstr(r.out, "\n   print ") != NULL);
    CHECK(strstr(r.out, "\n   stats ") != NULL);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    run_free(&r);

    RUN(&r, "help");
    CHECK(starts_with(r.out, "usage: flightrec [--version] [--help]"));
    CHECK_EQ_I(r.status, 0);
    run_free(&r);

    static const char *const cmds[] = { "print", "stats" };
    for (size_t i = 0; i < 2; i++) {
        struct run a, b, c;
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
    struct run r;

    RUN(&r, "--version");
    CHECK_RUN(&r, 0, "flightrec " FLIGHTREC_VERSION_STRING "\n", "");
    run_free(&r);
}

TEST(usage_errors)
{
    struct run r;

    RUN(&r, "bogus");
    CHECK_RUN(&r, 2, "", "flightrec: 'bogus' is not a flightrec command, "
              "see 'flightrec --help'\n");
    run_free(&r);

    RUN(&r, "--bogus");
    CHECK_EQ_I(r.status, 2);
    CHECK(starts_with(r.err, "flightrec: unknown option '--bogus'\n"
                             "usage: flightrec "));
    run_free(&r);

    {
        const char *const none[] = { NULL };
        run_with_stdin(&r, NULL, none);
        CHECK_EQ_I(r.status, 2);
        CHECK(starts_with(r.err, "usage: flightrec "));
        CHECK_EQ_S(r.out, "");
        run_free(&r);
    }

    RUN(&r, "print", "--bogus", "x.rec");
    CHECK_EQ_I(r.status, 2);
    CHECK_EQ_S(r.out, "");
    CHECK(starts_with(r.err, "flightrec print: unknown option '--bogus'\n"
                             "usage: flightrec print "));
    run_free(&r);

    RUN(&r, "print", "-x");
    CHECK_EQ_I(r.status, 2);
    CHECK(starts_with(r.err, "flightrec print: unknown option '-x'\n"));
    run_free(&r);

    RUN(&r, "print", "--event");
    CHECK_EQ_I(r.status, 2);
    CHECK(starts_with(r.err,
                      "flightrec print: option '--event' needs a value\n"));
    run_free(&r);

    RUN(&r, "print", "--from=1.x");
    CHECK_EQ_I(r.status, 2);
    CHECK(starts_with(r.err, "flightrec print: bad time '1.x' (seconds, "
                             "e.g. 1.5)\n"));
    run_free(&r);

    RUN(&r, "print", "--from=2", "--to=1");
    CHECK_EQ_I(r.status, 2);
    CHECK(starts_with(r.err, "flightrec print: --from is after --to\n"));
    run_free(&r);

    RUN(&r, "print", "--event=2000");
    CHECK_EQ_I(r.status, 2);
    CHECK(starts_with(r.err, "flightrec print: bad event list '2000'\n"));
    run_free(&r);

    RUN(&r, "print", "a", "b");
    CHECK_EQ_I(r.status, 2);
    CHECK(starts_with(r.err, "flightrec print: too many arguments\n"));
    run_free(&r);

    RUN(&r, "stats", "--csv");
    CHECK_EQ_I(r.status, 2);
    CHECK(starts_with(r.err, "flightrec stats: unknown option '--csv'\n"
                             "usage: flightrec stats "));
    run_free(&r);
}

/* Each subcommand's SYNOPSIS (its usage line) appears in the man source. */
TEST(synopsis)
{
    static const char *const cmds[] = {
        "print", "stats",
#ifdef FLIGHTREC_HAVE_CONVERT
        "convert",
#endif
#ifdef FLIGHTREC_HAVE_RECORD
        "record",
#endif
    };
    char *man = read_file(FLIGHTREC_MAN_MD);

    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        struct run r;
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
    struct run r;
    const char *path = basic_file("print_text.rec", FLIGHTREC_FORMAT_LE_64);

    RUN(&r, "print", path);
    CHECK_RUN(&r, 0, basic_text, "");
    run_free(&r);
}

TEST(print_formats)
{
    static const uint32_t formats[] = {
        FLIGHTREC_FORMAT_LE_32, FLIGHTREC_FORMAT_LE_64,
        FLIGHTREC_FORMAT_BE_32, FLIGHTREC_FORMAT_BE_64,
    };
    for (size_t i = 0; i < 4; i++) {
        struct run r;
        char name[64];
        snprintf(name, sizeof name, "print_formats_%zu.rec", i);
        const char *path = basic_file(name, formats[i]);
        RUN(&r, "print", path);
        CHECK_RUN(&r, 0, basic_text, "");
        run_free(&r);
    }
}

TEST(print_stdin)
{
    struct run r;
    const char *path = basic_file("print_stdin.rec", FLIGHTREC_FORMAT_LE_64);
    const char *const dash[] = { "print", "-", NULL };
    const char *const none[] = { "print", NULL };
    const char *const window[] = { "print", "--window=0.5", NULL };

    run_with_stdin(&r, path, dash);
    CHECK_RUN(&r, 0, basic_text, "");
    run_free(&r);
    run_with_stdin(&r, path, none);
    CHECK_RUN(&r, 0, basic_text, "");
    run_free(&r);
    run_with_stdin(&r, path, window);
    CHECK_RUN(&r, 0, basic_text, "");
    run_free(&r);
}

TEST(print_csv)
{
    struct run r;
    const char *path = basic_file("print_csv.rec", FLIGHTREC_FORMAT_LE_32);

    RUN(&r, "print", "--csv", path);
    CHECK_RUN(&r, 0,
              "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
              "count,flags\n"
              "0,0,100,request,512,0x2a,main,event,1,\n"
              "1000,1,101,USER_1,513,0x7,worker,event,1,\n"
              "1500,1,101,request,512,0xdeadbeef,worker,event,1,\n"
              "2500,0,100,MALLOC_ENTRY,108,0x40,main,event,1,\n",
              "");
    run_free(&r);
}

/* Names with commas and quotes are quoted, quotes doubled. */
TEST(print_csv_quoting)
{
    struct fr_vec v;
    struct run r;
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

    RUN(&r, "print", "--csv", path);
    CHECK_RUN(&r, 0,
              "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
              "count,flags\n"
              "0,0,7,\"say \"\"hi\"\", twice\",515,0x1,\"a,b\",event,1,\n",
              "");
    run_free(&r);
    RUN(&r, "print", path);
    CHECK_RUN(&r, 0, "0.000000000 [0] 7 a,b say \"hi\", twice 0x1\n", "");
    run_free(&r);
    RUN(&r, "print", "--event=say \"hi\"", "--event=515", path);
    CHECK_RUN(&r, 0, "0.000000000 [0] 7 a,b say \"hi\", twice 0x1\n", "");
    run_free(&r);
}

/* Data words of every hex width, in 64-bit and 32-bit formats. */
TEST(print_hex)
{
    static const uint64_t data[] = {
        0, 0xf, 0x10, 0xabcdef, 0x80000000u, 0x123456789, 0xfedcba9876543210u,
        UINT64_MAX,
    };
    static const char *const want[] = {
        "0x0", "0xf", "0x10", "0xabcdef", "0x80000000", "0x123456789",
        "0xfedcba9876543210", "0xffffffffffffffff",
    };
    for (int f = 0; f < 2; f++) {
        struct fr_vec v;
        struct run r;
        char expect[2048] = "", line[128];
        const char *path = scratch(f ? "print_hex32.rec" : "print_hex64.rec");

        fr_vec_init(&v, f ? FLIGHTREC_FORMAT_BE_32 : FLIGHTREC_FORMAT_LE_64);
        fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
        fr_vec_flightrec_chunk(&v, 0, 7, "t", 0, 0, 0, 0);
        fr_vec_uptime(&v, 10, 10);
        for (size_t i = 0; i < 8; i++) {
            fr_vec_item(&v, 20 + (uint32_t)i, FLIGHTREC_USER(0), data[i]);
            uint64_t d = f ? (uint32_t)data[i] : data[i];
            snprintf(line, sizeof line, "0.%09zu [0] 7 t USER_0 0x%llx\n", i,
                     (unsigned long long)d);
            strcat(expect, line);
        }
        write_vec(path, &v, v.len);
        fr_vec_free(&v);
        RUN(&r, "print", path);
        CHECK_RUN(&r, 0, expect, "");
        if (!f)
            for (size_t i = 0; i < 8; i++)
                CHECK(strstr(r.out, want[i]) != NULL);
        run_free(&r);
    }
}

TEST(print_wall)
{
    struct run r;
    const char *path = basic_file("print_wall.rec", FLIGHTREC_FORMAT_BE_64);

    RUN(&r, "print", "--wall", path);
    CHECK_RUN(&r, 0,
              "2023-11-14T22:13:20.000001500Z [0] 100 main request 0x2a\n"
              "2023-11-14T22:13:20.000002500Z [1] 101 worker USER_1 0x7\n"
              "2023-11-14T22:13:20.000003000Z [1] 101 worker request "
              "0xdeadbeef\n"
              "2023-11-14T22:13:20.000004000Z [0] 100 main MALLOC_ENTRY "
              "0x40\n",
              "");
    run_free(&r);

    RUN(&r, "print", "--wall", "--csv", "--event=USER_1", path);
    CHECK_RUN(&r, 0,
              "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
              "count,flags\n"
              "1700000000000002500,1,101,USER_1,513,0x7,worker,event,1,\n",
              "");
    run_free(&r);
}

/* A stream without REALTIME items: --wall is an error, exit 1. */
TEST(print_wall_missing)
{
    struct fr_vec v;
    struct run r;
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

    char err[700];
    snprintf(err, sizeof err, "flightrec print: %s: --wall: the stream has "
             "no realtime reference\n", path);
    RUN(&r, "print", "--wall", path);
    CHECK_RUN(&r, 1, "", err);
    run_free(&r);
    RUN(&r, "print", path);
    CHECK_RUN(&r, 0, "0.000000000 [0] 7 t USER_0 0x1\n", "");
    run_free(&r);
}

TEST(print_event_filter)
{
    struct run r;
    const char *path = basic_file("print_event_filter.rec",
                                  FLIGHTREC_FORMAT_LE_64);

    RUN(&r, "print", "--event=request", path);
    CHECK_RUN(&r, 0,
              "0.000000000 [0] 100 main request 0x2a\n"
              "0.000001500 [1] 101 worker request 0xdeadbeef\n",
              "");
    run_free(&r);
    RUN(&r, "print", "--event=108,513", path);
    CHECK_RUN(&r, 0,
              "0.000001000 [1] 101 worker USER_1 0x7\n"
              "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n",
              "");
    run_free(&r);
    RUN(&r, "print", "--event=MALLOC_ENTRY", "--event=USER_1", path);
    CHECK_RUN(&r, 0,
              "0.000001000 [1] 101 worker USER_1 0x7\n"
              "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n",
              "");
    run_free(&r);
    RUN(&r, "print", "--event=NO_SUCH_EVENT", path);
    CHECK_RUN(&r, 0, "", "");
    run_free(&r);
}

TEST(print_thread_filter)
{
    struct run r;
    const char *path = basic_file("print_thread_filter.rec",
                                  FLIGHTREC_FORMAT_LE_64);

    RUN(&r, "print", "--thread=worker", path);
    CHECK_RUN(&r, 0,
              "0.000001000 [1] 101 worker USER_1 0x7\n"
              "0.000001500 [1] 101 worker request 0xdeadbeef\n",
              "");
    run_free(&r);
    RUN(&r, "print", "--thread=100", path);
    CHECK_RUN(&r, 0,
              "0.000000000 [0] 100 main request 0x2a\n"
              "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n",
              "");
    run_free(&r);
    RUN(&r, "print", "--thread=100", "--thread=worker", path);
    CHECK_RUN(&r, 0, basic_text, "");
    run_free(&r);
    RUN(&r, "print", "--thread=main", "--event=request", path);
    CHECK_RUN(&r, 0, "0.000000000 [0] 100 main request 0x2a\n", "");
    run_free(&r);
}

TEST(print_time_filter)
{
    struct run r;
    const char *path = basic_file("print_time_filter.rec",
                                  FLIGHTREC_FORMAT_LE_64);

    RUN(&r, "print", "--from=0.000001", "--to=0.0000015", path);
    CHECK_RUN(&r, 0,
              "0.000001000 [1] 101 worker USER_1 0x7\n"
              "0.000001500 [1] 101 worker request 0xdeadbeef\n",
              "");
    run_free(&r);
    RUN(&r, "print", "--from=0.000001001", path);
    CHECK_RUN(&r, 0,
              "0.000001500 [1] 101 worker request 0xdeadbeef\n"
              "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n",
              "");
    run_free(&r);
    RUN(&r, "print", "--to=0", path);
    CHECK_RUN(&r, 0, "0.000000000 [0] 100 main request 0x2a\n", "");
    run_free(&r);
    RUN(&r, "print", "--from=1", path);
    CHECK_RUN(&r, 0, "", "");
    run_free(&r);
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
    struct run r;
    const char *path = loss_file("print_losses.rec");

    RUN(&r, "print", path);
    CHECK_RUN(&r, 0,
              "0.000000000 [0] 100 main USER_0 0x1\n"
              "0.000004000 [0] 100 main LOST 12 items (overflow)\n"
              "0.000004000 [0] 100 main USER_0 0x2\n"
              "0.000008000 [0] 100 main LOST 3 items (discard)\n"
              "0.000008000 [0] 100 main USER_0 0x3\n",
              "");
    run_free(&r);
    RUN(&r, "print", "--csv", path);
    CHECK_RUN(&r, 0,
              "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
              "count,flags\n"
              "0,0,100,USER_0,512,0x1,main,event,1,\n"
              "4000,0,100,LOST,,,main,overflow,12,\n"
              "4000,0,100,USER_0,512,0x2,main,event,1,\n"
              "8000,0,100,LOST,,,main,discard,3,\n"
              "8000,0,100,USER_0,512,0x3,main,event,1,\n",
              "");
    run_free(&r);
}

/* Items no uptime pair ever reaches are printed marked untimed. */
TEST(print_untimed)
{
    struct fr_vec v;
    struct run r;
    const char *path = scratch("print_untimed.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    fr_vec_item(&v, 1100, FLIGHTREC_USER(0), 1);
    fr_vec_item(&v, 1200, FLIGHTREC_USER(1), 2);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);

    RUN(&r, "print", path);
    CHECK_RUN(&r, 0,
              "untimed [0] 100 main USER_0 0x1\n"
              "untimed [0] 100 main USER_1 0x2\n",
              "");
    run_free(&r);
    RUN(&r, "print", "--csv", path);
    CHECK_RUN(&r, 0,
              "time_ns,ring,thread,event,event_id,data,thread_name,kind,"
              "count,flags\n"
              ",0,100,USER_0,512,0x1,main,event,1,untimed\n"
              ",0,100,USER_1,513,0x2,main,event,1,untimed\n",
              "");
    run_free(&r);
    /* A time range selects timed records only. */
    RUN(&r, "print", "--from=0", path);
    CHECK_RUN(&r, 0, "", "");
    run_free(&r);
}

/*=====   Bad input   =====*/

/* Runs "print FILE" and "stats FILE" on bad input: exit 1 and a message
 * "flightrec CMD: FILE: byte N..." naming the byte offset. */
static void check_bad(const char *path, const char *want_out,
                      const char *want_msg)
{
    struct run r;
    char prefix[800];

    RUN(&r, "print", path);
    snprintf(prefix, sizeof prefix, "flightrec print: %s: %s", path,
             want_msg);
    CHECK_EQ_S(r.out, want_out);
    if (!starts_with(r.err, prefix))
        TEST_FAIL("stderr '%s' does not start with '%s'", r.err, prefix);
    CHECK(strchr(r.err, '\n') == r.err + strlen(r.err) - 1);
    CHECK_EQ_I(r.status, 1);
    run_free(&r);

    RUN(&r, "stats", path);
    snprintf(prefix, sizeof prefix, "flightrec stats: %s: %s", path,
             want_msg);
    CHECK(starts_with(r.out, "stream: "));
    if (!starts_with(r.err, prefix))
        TEST_FAIL("stderr '%s' does not start with '%s'", r.err, prefix);
    CHECK_EQ_I(r.status, 1);
    run_free(&r);
}

TEST(bad_magic)
{
    struct fr_vec v;
    const char *path = scratch("bad_magic.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    v.buf[4] ^= 0xff;
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 42, REALTIME);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    check_bad(path, "", "byte 4: bad magic");
}

TEST(bad_format)
{
    struct fr_vec v;
    const char *path = scratch("bad_format.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    memset(v.buf, 0x55, 4);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    check_bad(path, "", "byte 0: unknown format");
}

TEST(bad_version)
{
    struct fr_vec v;
    const char *path = scratch("bad_version.rec");

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_item(&v, 0, FLIGHTREC_EV_VERSION, FLIGHTREC_STREAM_VERSION + 1);
    write_vec(path, &v, v.len);
    fr_vec_free(&v);
    check_bad(path, "", "byte 8: unsupported");
}

/* Cut inside the last item: the records before it are printed. */
TEST(truncated)
{
    struct fr_vec v;
    const char *path = scratch("truncated.rec");

    basic_stream(&v, FLIGHTREC_FORMAT_LE_64);
    size_t last = v.len - 12;
    write_vec(path, &v, v.len - 5);
    fr_vec_free(&v);

    char msg[64];
    snprintf(msg, sizeof msg, "byte %zu: ", last);
    check_bad(path,
              "0.000000000 [0] 100 main request 0x2a\n"
              "0.000001000 [1] 101 worker USER_1 0x7\n"
              "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n",
              msg);
}

TEST(missing_file)
{
    struct run r;
    char err[700];
    const char *path = scratch("no-such-file.rec");

    RUN(&r, "print", path);
    snprintf(err, sizeof err, "flightrec print: cannot open '%s': No such "
             "file or directory\n", path);
    CHECK_RUN(&r, 1, "", err);
    run_free(&r);
    RUN(&r, "stats", path);
    snprintf(err, sizeof err, "flightrec stats: cannot open '%s': No such "
             "file or directory\n", path);
    CHECK_RUN(&r, 1, "", err);
    run_free(&r);
}

/*=====   stats   =====*/

TEST(stats)
{
    struct run r;
    const char *path = basic_file("stats.rec", FLIGHTREC_FORMAT_LE_64);

    RUN(&r, "stats", path);
    CHECK_RUN(&r, 0,
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
              "          0        101  worker\n",
              "");
    run_free(&r);
}

TEST(stats_losses)
{
    struct run r;
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

TEST_MAIN(TEST_ENTRY(help), TEST_ENTRY(version), TEST_ENTRY(usage_errors),
          TEST_ENTRY(synopsis), TEST_ENTRY(print_text),
          TEST_ENTRY(print_formats), TEST_ENTRY(print_stdin),
          TEST_ENTRY(print_csv), TEST_ENTRY(print_csv_quoting),
          TEST_ENTRY(print_hex),
          TEST_ENTRY(print_wall), TEST_ENTRY(print_wall_missing),
          TEST_ENTRY(print_event_filter), TEST_ENTRY(print_thread_filter),
          TEST_ENTRY(print_time_filter), TEST_ENTRY(print_losses),
          TEST_ENTRY(print_untimed), TEST_ENTRY(bad_magic),
          TEST_ENTRY(bad_format), TEST_ENTRY(bad_version),
          TEST_ENTRY(truncated), TEST_ENTRY(missing_file), TEST_ENTRY(stats),
          TEST_ENTRY(stats_losses))
