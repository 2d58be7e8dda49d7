/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec connect against servers played by this program on loopback:
 * an RTEMS record server (versions 9 and 10, streams built from the
 * version tables, pushed in pieces with pauses, nothing read from the
 * client), and flightrec servers that end the stream (STREAM_END), die
 * mid-item, refuse, check the token and pid lines, or die and come back
 * (--reconnect).  Each case runs the real flightrec program and checks its
 * exact exit status, messages, the saved bytes and what flightrec print
 * makes of them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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
#ifndef FLIGHTREC_RTEMS_DATA_DIR
#error "FLIGHTREC_RTEMS_DATA_DIR must name data/rtems-record"
#endif

/*=====   Files   =====*/

struct bytes {
    unsigned char *buf;
    size_t len;
};

static struct bytes slurp(const char *path)
{
    struct bytes b = { NULL, 0 };
    size_t cap = 4096;
    FILE *f = fopen(path, "rb");

    if (f == NULL)
        TEST_FAIL("cannot open %s: %s", path, strerror(errno));
    b.buf = malloc(cap);
    CHECK(b.buf != NULL);
    for (;;) {
        size_t n = fread(b.buf + b.len, 1, cap - b.len - 1, f);
        b.len += n;
        if (b.len + 1 < cap)
            break;
        cap *= 2;
        b.buf = realloc(b.buf, cap);
        CHECK(b.buf != NULL);
    }
    b.buf[b.len] = '\0';
    fclose(f);
    return b;
}

/* A scratch path of this case's own (ctest runs cases in parallel). */
static const char *scratch(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];

    snprintf(p, sizeof paths[0], "%s/connect.%ld.%s", CLI_TEST_DIR,
             (long)getpid(), name);
    return p;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

    CHECK(fd >= 0);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    CHECK(close(fd) == 0);
    CHECK(chmod(path, mode) == 0);
}

static void check_file_bytes(const char *path, const struct fr_vec *want,
                             size_t len)
{
    struct bytes got = slurp(path);

    CHECK_EQ_U(got.len, len);
    CHECK_EQ_MEM(got.buf, want->buf, len);
    free(got.buf);
}

static int exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

/*=====   The flightrec program   =====*/

struct proc {
    pid_t pid;
    char out[600];
    char err[600];
};

/* Runs flightrec with @a args; its stderr goes to @a err_fd if >= 0. */
static void spawn_err(struct proc *p, const char *const *args, int err_fd)
{
    const char *argv[32];
    size_t n = 0;

    /* Not scratch(): its few buffers are the callers' paths. */
    snprintf(p->out, sizeof p->out, "%s/connect.%ld.stdout", CLI_TEST_DIR,
             (long)getpid());
    snprintf(p->err, sizeof p->err, "%s/connect.%ld.stderr", CLI_TEST_DIR,
             (long)getpid());
    argv[n++] = FLIGHTREC_BIN;
    for (; args[n - 1] != NULL && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    if (err_fd >= 0)
        write_text(p->err, "", 0644); /* what reap() reads: nothing */
    p->pid = fork();
    CHECK(p->pid >= 0);
    if (p->pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open(p->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = err_fd >= 0 ? err_fd
                              : open(p->err, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
        if (in < 0 || out < 0 || err < 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(FLIGHTREC_BIN, (char *const *)argv);
        _exit(127);
    }
}

static void spawn(struct proc *p, const char *const *args)
{
    spawn_err(p, args, -1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

struct result {
    int status; /* exit status, or 128 + signal */
    char *out;
    char *err;
};

/* Waits for the program (at most 60 s: a hung connect fails the case). */
static void reap(struct proc *p, struct result *r)
{
    uint64_t give_up = now_ns() + 60ull * 1000000000u;
    int st;

    for (;;) {
        pid_t w = waitpid(p->pid, &st, WNOHANG);
        if (w == p->pid)
            break;
        CHECK(w == 0 || (w < 0 && errno == EINTR));
        if (now_ns() > give_up) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &st, 0);
            TEST_FAIL("flightrec did not end within 60 s");
        }
        sleep_ms(5);
    }
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    struct bytes out = slurp(p->out), err = slurp(p->err);
    r->out = (char *)out.buf;
    r->err = (char *)err.buf;
    unlink(p->out);
    unlink(p->err);
}

static void run(struct result *r, const char *const *args)
{
    struct proc p;

    spawn(&p, args);
    reap(&p, r);
}

#define RUN(r, ...) \
    do { \
        const char *const args_[] = { __VA_ARGS__, NULL }; \
        run((r), args_); \
    } while (0)

static void result_free(struct result *r)
{
    free(r->out);
    free(r->err);
}

/* `flightrec print PATH`: exit 0, nothing on stderr; its stdout. */
static char *print_file(const char *path)
{
    struct result r;

    RUN(&r, "print", path);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    free(r.err);
    return r.out;
}

/* Waits until @a path holds @a size bytes (the program saved them). */
static void wait_for_size(const char *path, size_t size)
{
    uint64_t give_up = now_ns() + 30ull * 1000000000u;
    struct stat st;

    while (stat(path, &st) != 0 || (size_t)st.st_size < size) {
        if (now_ns() > give_up)
            TEST_FAIL("%s did not reach %zu bytes", path, size);
        sleep_ms(5);
    }
    CHECK_EQ_U(st.st_size, size);
}

/*=====   Servers played here   =====*/

struct server {
    pid_t pid;
    int port;
    int report; /* what the server tells the case (read end) */
    char address[64];
};

typedef void (*serve_fn)(int listen_fd, int report_fd, const void *arg);

static int listen_loopback(int family, int *port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage ss;
    socklen_t len;

    if (fd < 0)
        return -1;
    memset(&ss, 0, sizeof ss);
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4) != 0) {
        close(fd);
        return -1;
    }
    len = sizeof ss;
    CHECK(getsockname(fd, (struct sockaddr *)&ss, &len) == 0);
    *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

/* Forks a server process that runs @a fn on a loopback listening socket
 * (at most 30 s, then SIGALRM ends it). */
static void server_start_on(struct server *s, int listen_fd, int family,
                            serve_fn fn, const void *arg)
{
    int pipefd[2];

    snprintf(s->address, sizeof s->address,
             family == AF_INET ? "127.0.0.1:%d" : "[::1]:%d", s->port);
    CHECK(pipe2(pipefd, O_CLOEXEC) == 0);
    fflush(NULL);
    s->pid = fork();
    CHECK(s->pid >= 0);
    if (s->pid == 0) {
        close(pipefd[0]);
        signal(SIGPIPE, SIG_IGN);
        alarm(30);
        fn(listen_fd, pipefd[1], arg);
        _exit(0);
    }
    /* The case keeps no copy: once the server is gone, connecting is
     * refused. */
    close(listen_fd);
    close(pipefd[1]);
    s->report = pipefd[0];
}

static void server_start(struct server *s, serve_fn fn, const void *arg)
{
    int fd = listen_loopback(AF_INET, &s->port);

    CHECK(fd >= 0);
    server_start_on(s, fd, AF_INET, fn, arg);
}

/* Waits for the server; returns its report (what it wrote to the pipe). */
static struct bytes server_end(struct server *s, int expect_signal)
{
    struct bytes b = { malloc(8192), 0 };
    int st;

    CHECK(b.buf != NULL);
    for (;;) {
        ssize_t n = read(s->report, b.buf + b.len, 8191 - b.len);
        if (n < 0 && errno == EINTR)
            continue;
        CHECK(n >= 0);
        if (n == 0 || b.len + (size_t)n == 8191) {
            b.len += (size_t)n;
            break;
        }
        b.len += (size_t)n;
    }
    b.buf[b.len] = '\0';
    close(s->report);
    CHECK(waitpid(s->pid, &st, 0) == s->pid);
    if (expect_signal != 0) {
        CHECK(WIFSIGNALED(st));
        CHECK_EQ_I(WTERMSIG(st), expect_signal);
    } else {
        if (!WIFEXITED(st))
            TEST_FAIL("the server died of signal %d", WTERMSIG(st));
        CHECK_EQ_I(WEXITSTATUS(st), 0);
    }
    return b;
}

/* In a server process: failures end it with a status the case checks. */
static void must(int ok, int code)
{
    if (!ok)
        _exit(code);
}

static int accept_one(int listen_fd)
{
    int c = accept(listen_fd, NULL, NULL);

    must(c >= 0, 10);
    return c;
}

static int send_all(int fd, const void *bytes, size_t n)
{
    const unsigned char *p = bytes;

    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Sends @a n bytes in @a pieces pieces cut at odd places (inside items),
 * pausing between them, as a server that drains its rings now and then. */
static void push(int c, const unsigned char *b, size_t n, size_t pieces,
                 unsigned pause_ms)
{
    size_t at = 0;

    for (size_t i = 1; i <= pieces; i++) {
        size_t end = i == pieces ? n : n * i / pieces + 3;
        if (end > n)
            end = n;
        if (end <= at)
            continue;
        must(send_all(c, b + at, end - at) == 0, 11);
        at = end;
        if (i < pieces)
            sleep_ms(pause_ms);
    }
}

/* Reads until the client leaves; how many bytes it sent. */
static size_t until_client_leaves(int c)
{
    unsigned char buf[4096];
    size_t total = 0;

    for (;;) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return total;
        total += (size_t)n;
    }
}

static void report(int report_fd, const void *bytes, size_t n)
{
    must(write(report_fd, bytes, n) == (ssize_t)n, 12);
}

/* An RTEMS record server: pushes the stream as soon as a client connects,
 * reads nothing, streams until the client leaves.  Reports how many bytes
 * the client sent ("0"). */
static void serve_rtems(int listen_fd, int report_fd, const void *arg)
{
    const struct fr_vec *v = arg;
    int c = accept_one(listen_fd);
    char text[32];

    push(c, v->buf, v->len, 5, 40);
    snprintf(text, sizeof text, "%zu", until_client_leaves(c));
    report(report_fd, text, strlen(text));
    close(c);
}

/* A flightrec server: the stream in pieces, then STREAM_END, then close. */
static void serve_flightrec(int listen_fd, int report_fd, const void *arg)
{
    const struct fr_vec *v = arg; /* ends with STREAM_END */
    int c = accept_one(listen_fd);

    (void)report_fd;
    push(c, v->buf, v->len, 4, 30);
    close(c);
}

/*=====   Streams   =====*/

static void load_table(struct fr_rtems_table *t, const char *file)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", FLIGHTREC_RTEMS_DATA_DIR, file);
    fr_rtems_table_load(t, path);
}

#define IDLE_ID 0x09010001u /* 151060481 */
#define TASK1_ID 0x0a010001u /* 167837697 */
#define TASK2_ID 0x0a010002u /* 167837698 */

static void thread_table(struct fr_vec *v, const struct fr_rtems_table *t,
                         const char *name1, const char *name2)
{
    static const uint32_t ids[3] = { IDLE_ID, TASK1_ID, TASK2_ID };
    const char *names[3] = { "IDLE", name1, name2 };

    for (size_t i = 0; i < 3; i++) {
        fr_vec_item(v, 0, fr_rtems_id(t, "THREAD_ID"), ids[i]);
        fr_vec_packed(v, 0, fr_rtems_id(t, "THREAD_NAME"), names[i],
                      strlen(names[i]));
    }
}

/*
 * RTEMS 5 (record format version 9), SPARC-like: big-endian 32-bit,
 * 1 MHz, 2 CPUs.  Two drains of both CPUs, framed by PER_CPU_TAIL/HEAD
 * without loss.  CPU 0: uptime 2 s at field 1000, IDLE -> UI1 at 1500,
 * USER_0 at 2000, then USER_0 at 3000 and USER_2 at 3500.  CPU 1: uptime
 * 2 s at 1200, WRK1 in at 1700, USER_1 at 2100, then USER_1 at 3200 and
 * WRK1 out at 4000.
 */
static void rtems_v9_stream(struct fr_vec *v)
{
    struct fr_rtems_table t;

    load_table(&t, "events-rtems-v9.tsv");
    fr_vec_init(v, FLIGHTREC_FORMAT_BE_32);
    fr_vec_item(v, 0, fr_rtems_id(&t, "VERSION"), 9);
    fr_vec_item(v, 0, fr_rtems_id(&t, "PROCESSOR_MAXIMUM"), 1);
    fr_vec_item(v, 0, fr_rtems_id(&t, "PER_CPU_COUNT"), 64);
    fr_vec_item(v, 0, fr_rtems_id(&t, "FREQUENCY"), 1000000);
    fr_vec_packed(v, 0, fr_rtems_id(&t, "BSP"), "leon3", 5);
    thread_table(v, &t, "UI1", "WRK1");
    uint32_t proc = fr_rtems_id(&t, "PROCESSOR");
    uint32_t tail = fr_rtems_id(&t, "PER_CPU_TAIL");
    uint32_t head = fr_rtems_id(&t, "PER_CPU_HEAD");
    uint32_t low = fr_rtems_id(&t, "UPTIME_LOW");
    uint32_t high = fr_rtems_id(&t, "UPTIME_HIGH");
    uint32_t out = fr_rtems_id(&t, "THREAD_SWITCH_OUT");
    uint32_t in = fr_rtems_id(&t, "THREAD_SWITCH_IN");

    fr_vec_item(v, 0, proc, 0);
    fr_vec_item(v, 0, tail, 0);
    fr_vec_item(v, 0, head, 5);
    fr_vec_item(v, 1000, low, 0);
    fr_vec_item(v, 1000, high, 2);
    fr_vec_item(v, 1500, out, IDLE_ID);
    fr_vec_item(v, 1500, in, TASK1_ID);
    fr_vec_item(v, 2000, FLIGHTREC_USER(0), 0x100);
    fr_vec_item(v, 0, proc, 1);
    fr_vec_item(v, 0, tail, 0);
    fr_vec_item(v, 0, head, 4);
    fr_vec_item(v, 1200, low, 0);
    fr_vec_item(v, 1200, high, 2);
    fr_vec_item(v, 1700, in, TASK2_ID);
    fr_vec_item(v, 2100, FLIGHTREC_USER(1), 0x200);
    fr_vec_item(v, 0, proc, 0);
    fr_vec_item(v, 0, tail, 5);
    fr_vec_item(v, 0, head, 7);
    fr_vec_item(v, 3000, FLIGHTREC_USER(0), 0x101);
    fr_vec_item(v, 3500, FLIGHTREC_USER(2), 0x102);
    fr_vec_item(v, 0, proc, 1);
    fr_vec_item(v, 0, tail, 4);
    fr_vec_item(v, 0, head, 6);
    fr_vec_item(v, 3200, FLIGHTREC_USER(1), 0x201);
    fr_vec_item(v, 4000, out, TASK2_ID);
    fr_rtems_table_free(&t);
}

/* Times from 2.0005 s, the first switch; equal times in ring order. */
static const char rtems_v9_text[] =
    "0.000000000 [0] 151060481 IDLE THREAD_SWITCH_OUT 0x9010001\n"
    "0.000000000 [0] 167837697 UI1 THREAD_SWITCH_IN 0xa010001\n"
    "0.000000000 [1] 167837698 WRK1 THREAD_SWITCH_IN 0xa010002\n"
    "0.000400000 [1] 167837698 WRK1 USER_1 0x200\n"
    "0.000500000 [0] 167837697 UI1 USER_0 0x100\n"
    "0.001500000 [0] 167837697 UI1 USER_0 0x101\n"
    "0.001500000 [1] 167837698 WRK1 USER_1 0x201\n"
    "0.002000000 [0] 167837697 UI1 USER_2 0x102\n"
    "0.002300000 [1] 167837698 WRK1 THREAD_SWITCH_OUT 0xa010002\n";

/*
 * RTEMS 6 (version 10), aarch64-like: little-endian 64-bit (12-byte
 * items), 10 MHz, 2 CPUs.  CPU 0: uptime 5.5 s at field 100, IDLE -> MAIN
 * at 200, USER_5 at 300; later 3 items overwritten (PER_CPU_OVERFLOW), a
 * new uptime pair of 6 s, MAIN -> IDLE 10 ticks after it, USER_5 10 ticks
 * later.  CPU 1: uptime 5.5 s at field 50, NET in at 150, USER_6 at 450
 * and at 900.
 */
static void rtems_v10_stream(struct fr_vec *v)
{
    struct fr_rtems_table t;
    const uint32_t later = (100 + 5000000) & FLIGHTREC_TIME_MASK;

    load_table(&t, "events-rtems-v10.tsv");
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_item(v, 0, fr_rtems_id(&t, "VERSION"), 10);
    fr_vec_item(v, 0, fr_rtems_id(&t, "PROCESSOR_MAXIMUM"), 1);
    fr_vec_item(v, 0, fr_rtems_id(&t, "PER_CPU_COUNT"), 128);
    fr_vec_item(v, 0, fr_rtems_id(&t, "FREQUENCY"), 10000000);
    fr_vec_packed(v, 0, fr_rtems_id(&t, "ARCH"), "aarch64", 7);
    fr_vec_packed(v, 0, fr_rtems_id(&t, "BSP"), "zynqmp", 6);
    thread_table(v, &t, "MAIN", "NET");
    uint32_t proc = fr_rtems_id(&t, "PROCESSOR");
    uint32_t overflow = fr_rtems_id(&t, "PER_CPU_OVERFLOW");
    uint32_t low = fr_rtems_id(&t, "UPTIME_LOW");
    uint32_t high = fr_rtems_id(&t, "UPTIME_HIGH");
    uint32_t out = fr_rtems_id(&t, "THREAD_SWITCH_OUT");
    uint32_t in = fr_rtems_id(&t, "THREAD_SWITCH_IN");

    fr_vec_item(v, 0, proc, 0);
    fr_vec_item(v, 100, low, 0x80000000u);
    fr_vec_item(v, 100, high, 5);
    fr_vec_item(v, 200, out, IDLE_ID);
    fr_vec_item(v, 200, in, TASK1_ID);
    fr_vec_item(v, 300, FLIGHTREC_USER(5), 0xabc);
    fr_vec_item(v, 0, proc, 1);
    fr_vec_item(v, 50, low, 0x80000000u);
    fr_vec_item(v, 50, high, 5);
    fr_vec_item(v, 150, in, TASK2_ID);
    fr_vec_item(v, 450, FLIGHTREC_USER(6), 0xdef);
    fr_vec_item(v, 0, proc, 0);
    fr_vec_item(v, 0, overflow, 3);
    fr_vec_item(v, later, low, 0);
    fr_vec_item(v, later, high, 6);
    fr_vec_item(v, later + 10, out, TASK1_ID);
    fr_vec_item(v, later + 10, in, IDLE_ID);
    fr_vec_item(v, later + 20, FLIGHTREC_USER(5), 0x1);
    fr_vec_item(v, 0, proc, 1);
    fr_vec_item(v, 900, FLIGHTREC_USER(6), 0x2);
    fr_rtems_table_free(&t);
}

/* Times from 5.50001 s; 100 ns per tick; the loss is shown at the time
 * of the first item after it. */
static const char rtems_v10_text[] =
    "0.000000000 [0] 151060481 IDLE THREAD_SWITCH_OUT 0x9010001\n"
    "0.000000000 [0] 167837697 MAIN THREAD_SWITCH_IN 0xa010001\n"
    "0.000000000 [1] 167837698 NET THREAD_SWITCH_IN 0xa010002\n"
    "0.000010000 [0] 167837697 MAIN USER_5 0xabc\n"
    "0.000030000 [1] 167837698 NET USER_6 0xdef\n"
    "0.000075000 [1] 167837698 NET USER_6 0x2\n"
    "0.499991000 [0] - - LOST 3 items (overflow)\n"
    "0.499991000 [0] 167837697 MAIN THREAD_SWITCH_OUT 0xa010001\n"
    "0.499991000 [0] 151060481 IDLE THREAD_SWITCH_IN 0x9010001\n"
    "0.499992000 [0] 151060481 IDLE USER_5 0x1\n";

/* The overflow of CPU 0, as convert reports it. */
static const char v10_convert_warning[] =
    "flightrec convert: 3 items were lost in the recording (marked in the "
    "output)\n";

#define REALTIME 1700000000000000000ull

/*
 * A flightrec stream (format version 1 numbering of positions: every item
 * counts), little-endian 64-bit, 1 GHz: ring 0 (tid 100 "main") and ring 1
 * (tid 101 "worker"), USER_0 named "request", then a second chunk of
 * ring 0.  With @a end, STREAM_END closes it.
 */
static void flightrec_stream(struct fr_vec *v, int end)
{
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(v, 1000000000u, 2, 1024, 4242, REALTIME);
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
    fr_vec_flightrec_chunk(v, 0, 100, "main", 0, 4, 0, 0);
    fr_vec_item(v, 4500, FLIGHTREC_EV_FREE_ENTRY, 0x1000);
    if (end)
        fr_vec_item(v, 0, FLIGHTREC_EV_STREAM_END, 0);
}

static const char flightrec_text[] =
    "0.000000000 [0] 100 main request 0x2a\n"
    "0.000001000 [1] 101 worker USER_1 0x7\n"
    "0.000001500 [1] 101 worker request 0xdeadbeef\n"
    "0.000002500 [0] 100 main MALLOC_ENTRY 0x40\n"
    "0.000003000 [0] 100 main FREE_ENTRY 0x1000\n";

/*=====   RTEMS record servers   =====*/

/* connect saves an RTEMS server's stream byte for byte until Ctrl-C or
 * SIGTERM (@a stop_signal), sends it nothing, and print and convert read
 * the file: print exactly. */
static void rtems_case(struct fr_vec *v, const char *text, int live_print,
                       const char *convert_warning, int stop_signal)
{
    struct server s;
    struct proc p;
    struct result r;
    const char *path = scratch("rtems.rec");

    unlink(path);
    server_start(&s, serve_rtems, v);
    const char *const args[] = { "connect", s.address, "-o", path,
                                 live_print ? "--print" : NULL, NULL };
    spawn(&p, args);
    wait_for_size(path, v->len);
    CHECK(kill(p.pid, stop_signal) == 0);
    reap(&p, &r);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.out, live_print ? text : "");
    struct bytes sent = server_end(&s, 0);
    CHECK_EQ_S((char *)sent.buf, "0");
    free(sent.buf);
    check_file_bytes(path, v, v->len);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    CHECK_EQ_U(st.st_mode & 07777, 0600);
    char *printed = print_file(path);
    CHECK_EQ_S(printed, text);
    free(printed);
    result_free(&r);
    /* convert reads it too, in every format. */
    static const char *const formats[] = { "json", "perfetto", "ftrace",
                                           "ctf" };
    for (size_t i = 0; i < 4; i++) {
        char converted[600];
        snprintf(converted, sizeof converted, "%s.%s", path, formats[i]);
        RUN(&r, "convert", "--to", formats[i], "-o", converted, path);
        CHECK_EQ_S(r.err, convert_warning);
        CHECK_EQ_I(r.status, 0);
        CHECK(exists(converted));
        result_free(&r);
        char rm[700];
        snprintf(rm, sizeof rm, "rm -rf '%s'", converted);
        CHECK(system(rm) == 0);
    }
    unlink(path);
}

TEST(rtems_v9)
{
    struct fr_vec v;

    rtems_v9_stream(&v);
    rtems_case(&v, rtems_v9_text, 0, "", SIGINT);
    fr_vec_free(&v);
}

TEST(rtems_v10)
{
    struct fr_vec v;

    rtems_v10_stream(&v);
    rtems_case(&v, rtems_v10_text, 0, v10_convert_warning, SIGTERM);
    fr_vec_free(&v);
}

/* --print shows what print of the saved file shows. */
TEST(rtems_v10_print)
{
    struct fr_vec v;

    rtems_v10_stream(&v);
    rtems_case(&v, rtems_v10_text, 1, v10_convert_warning, SIGINT);
    fr_vec_free(&v);
}

/* An RTEMS server that streams until the client leaves: --duration ends
 * the recording with a complete file. */
static void serve_rtems_forever(int listen_fd, int report_fd, const void *arg)
{
    struct fr_vec v;
    int c = accept_one(listen_fd);

    (void)arg;
    (void)report_fd;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_item(&v, 0, FLIGHTREC_EV_VERSION, 10);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR_MAXIMUM, 0);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PER_CPU_COUNT, 64);
    fr_vec_item(&v, 0, FLIGHTREC_EV_FREQUENCY, 1000000);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, 0);
    fr_vec_uptime(&v, 0, 1ull << 32);
    must(send_all(c, v.buf, v.len) == 0, 11);
    /* One item every 10 ms, each cut in two, for at most 20 s. */
    for (uint32_t i = 1; i <= 2000; i++) {
        unsigned char item[8];
        uint32_t word = FLIGHTREC_TIME_EVENT(i * 1000, FLIGHTREC_USER(0));
        for (int b = 0; b < 4; b++) {
            item[b] = (unsigned char)(word >> (8 * b));
            item[4 + b] = (unsigned char)(i >> (8 * b));
        }
        if (send_all(c, item, 3) != 0)
            break;
        sleep_ms(5);
        if (send_all(c, item + 3, 5) != 0)
            break;
        sleep_ms(5);
    }
    fr_vec_free(&v);
    close(c);
}

TEST(duration)
{
    struct server s;
    struct result r;
    const char *path = scratch("duration.rec");

    unlink(path);
    server_start(&s, serve_rtems_forever, NULL);
    uint64_t t0 = now_ns();
    RUN(&r, "connect", "--duration", "0.5", "-o", path, s.address);
    uint64_t elapsed = now_ns() - t0;
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_S(r.out, "");
    CHECK_EQ_I(r.status, 0);
    CHECK(elapsed >= 500000000u);
    free(server_end(&s, 0).buf);
    /* Whole items only: header and sync (7 items), then USER_0 k with
     * data k, in order. */
    struct bytes saved = slurp(path);
    CHECK_EQ_U((saved.len - 8) % 8, 0);
    size_t events = (saved.len - 8) / 8 - 7;
    CHECK(events >= 1);
    free(saved.buf);
    char *printed = print_file(path);
    size_t lines = 0;
    for (char *line = strtok(printed, "\n"); line != NULL;
         line = strtok(NULL, "\n")) {
        char want[64];
        lines++;
        snprintf(want, sizeof want, "0.%09zu [0] - - USER_0 0x%zx",
                 (lines - 1) * 1000000, lines);
        CHECK_EQ_S(line, want);
    }
    CHECK_EQ_U(lines, events);
    free(printed);
    result_free(&r);
    unlink(path);
}

/*=====   flightrec servers   =====*/

TEST(end_of_stream)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    const char *path = scratch("end.rec");

    unlink(path);
    flightrec_stream(&v, 1);
    server_start(&s, serve_flightrec, &v);
    RUN(&r, "connect", s.address, "-o", path);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_S(r.out, "");
    CHECK_EQ_I(r.status, 0);
    free(server_end(&s, 0).buf);
    check_file_bytes(path, &v, v.len);
    char *printed = print_file(path);
    CHECK_EQ_S(printed, flightrec_text);
    free(printed);
    result_free(&r);
    unlink(path);
    fr_vec_free(&v);
}

/* --print writes what `flightrec print` of the saved file writes. */
TEST(print_live)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    const char *path = scratch("print.rec");

    unlink(path);
    flightrec_stream(&v, 1);
    server_start(&s, serve_flightrec, &v);
    RUN(&r, "connect", "--print", s.address, "-o", path);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    free(server_end(&s, 0).buf);
    CHECK_EQ_S(r.out, flightrec_text);
    char *printed = print_file(path);
    CHECK_EQ_S(r.out, printed);
    free(printed);
    check_file_bytes(path, &v, v.len);
    result_free(&r);
    unlink(path);
    fr_vec_free(&v);
}

/* Without -o: HOST-PORT.rec in the current directory. */
TEST(default_name)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    char path[700], cwd[600];

    flightrec_stream(&v, 1);
    server_start(&s, serve_flightrec, &v);
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    /* The child inherits the directory: connect runs in the scratch. */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/connect.%ld.dir", CLI_TEST_DIR,
             (long)getpid());
    mkdir(dir, 0700);
    CHECK(chdir(dir) == 0);
    RUN(&r, "connect", s.address);
    CHECK(chdir(cwd) == 0);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    free(server_end(&s, 0).buf);
    snprintf(path, sizeof path, "%s/127.0.0.1-%d.rec", dir, s.port);
    check_file_bytes(path, &v, v.len);
    unlink(path);
    rmdir(dir);
    result_free(&r);
    fr_vec_free(&v);
}

/* Dies after 5 bytes of an item: the file ends at the last whole item and
 * decodes; the message says the target died; exit status 3. */
static void serve_then_die(int listen_fd, int report_fd, const void *arg)
{
    const struct fr_vec *v = arg; /* no STREAM_END */
    int c = accept_one(listen_fd);
    unsigned char half[5] = { 0x88, 0x13, 0x00, 0x00, 0x2a };

    (void)report_fd;
    push(c, v->buf, v->len, 3, 30);
    must(send_all(c, half, sizeof half) == 0, 11);
    sleep_ms(50);
    kill(getpid(), SIGKILL);
}

TEST(target_dies_mid_item)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    char want[1024];
    const char *path = scratch("died.rec");

    unlink(path);
    flightrec_stream(&v, 0);
    server_start(&s, serve_then_die, &v);
    RUN(&r, "connect", s.address, "-o", path);
    snprintf(want, sizeof want,
             "flightrec connect: %s: the target died: the connection closed "
             "without an end of stream; '%s' holds the %zu bytes received up "
             "to the last whole item (the 5 bytes of an incomplete item are "
             "left out)\n", s.address, path, v.len);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_S(r.out, "");
    CHECK_EQ_I(r.status, 3);
    free(server_end(&s, SIGKILL).buf);
    check_file_bytes(path, &v, v.len);
    char *printed = print_file(path);
    CHECK_EQ_S(printed, flightrec_text);
    free(printed);
    result_free(&r);
    unlink(path);
    fr_vec_free(&v);
}

/* Resets the connection (RST) after the stream and part of an item: the
 * bytes before it are still received and saved. */
static void serve_then_reset(int listen_fd, int report_fd, const void *arg)
{
    const struct fr_vec *v = arg; /* no STREAM_END */
    int c = accept_one(listen_fd);
    unsigned char part[7] = { 0x88, 0x13, 0x00, 0x00, 0x2a, 0, 0 };
    struct linger reset = { 1, 0 };

    (void)report_fd;
    push(c, v->buf, v->len, 3, 30);
    must(send_all(c, part, sizeof part) == 0, 11);
    must(setsockopt(c, SOL_SOCKET, SO_LINGER, &reset, sizeof reset) == 0, 13);
    close(c);
}

TEST(connection_reset)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    char want[1024];
    const char *path = scratch("reset.rec");

    unlink(path);
    flightrec_stream(&v, 0);
    server_start(&s, serve_then_reset, &v);
    RUN(&r, "connect", s.address, "-o", path);
    snprintf(want, sizeof want,
             "flightrec connect: %s: the target died: the connection failed "
             "(Connection reset by peer) without an end of stream; '%s' holds "
             "the %zu bytes received up to the last whole item (the 7 bytes "
             "of an incomplete item are left out)\n", s.address, path, v.len);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 3);
    free(server_end(&s, 0).buf);
    check_file_bytes(path, &v, v.len);
    result_free(&r);
    unlink(path);
    fr_vec_free(&v);
}

static void serve_line(int listen_fd, int report_fd, const void *arg)
{
    int c = accept_one(listen_fd);

    (void)report_fd;
    must(send_all(c, arg, strlen(arg)) == 0, 11);
    close(c);
}

/* A refusal line is shown escaped; nothing is saved; exit status 1. */
TEST(refused)
{
    struct server s;
    struct result r;
    char want[512];
    const char *path = scratch("refused.rec");

    unlink(path);
    server_start(&s, serve_line, "flightrec: wrong token \033]0;owned\007\n");
    RUN(&r, "connect", s.address, "-o", path);
    snprintf(want, sizeof want, "flightrec connect: %s refused the "
             "connection: flightrec: wrong token \\e]0;owned\\x07\n",
             s.address);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_S(r.out, "");
    CHECK_EQ_I(r.status, 1);
    free(server_end(&s, 0).buf);
    CHECK(!exists(path));
    result_free(&r);
}

/* Neither an end of stream nor a refusal is retried by --reconnect. */
TEST(reconnect_stops_at_an_end_or_a_refusal)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    char want[512];
    const char *path = scratch("once.rec");

    unlink(path);
    flightrec_stream(&v, 1);
    server_start(&s, serve_flightrec, &v);
    RUN(&r, "connect", "--reconnect", s.address, "-o", path);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    free(server_end(&s, 0).buf);
    check_file_bytes(path, &v, v.len);
    CHECK(!exists(scratch("once.rec.2")));
    result_free(&r);
    unlink(path);

    server_start(&s, serve_line, "flightrec: too many clients (8)\n");
    RUN(&r, "connect", "--reconnect", s.address, "-o", path);
    snprintf(want, sizeof want, "flightrec connect: %s refused the "
             "connection: flightrec: too many clients (8)\n", s.address);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 1);
    free(server_end(&s, 0).buf);
    CHECK(!exists(path));
    result_free(&r);
    fr_vec_free(&v);
}

/* Closed at once (what a flightrec server does on a wrong token): no
 * file, exit status 1, a hint. */
TEST(closed_without_a_byte)
{
    struct server s;
    struct result r;
    char want[512];
    const char *path = scratch("closed.rec");

    unlink(path);
    server_start(&s, serve_line, "");
    RUN(&r, "connect", s.address, "-o", path);
    snprintf(want, sizeof want, "flightrec connect: %s closed the connection "
             "without sending anything (a flightrec server does so when the "
             "token is wrong or missing)\n", s.address);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 1);
    free(server_end(&s, 0).buf);
    CHECK(!exists(path));
    result_free(&r);
}

TEST(not_a_stream)
{
    struct server s;
    struct result r;
    char want[512];
    const char *path = scratch("http.rec");

    unlink(path);
    server_start(&s, serve_line, "HTTP/1.1 400 Bad Request\r\n\r\n");
    RUN(&r, "connect", s.address, "-o", path);
    snprintf(want, sizeof want, "flightrec connect: %s: not a record stream "
             "(it begins with 'HTTP/1.1 400 Bad')\n", s.address);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 1);
    free(server_end(&s, 0).buf);
    CHECK(!exists(path));
    result_free(&r);
}

TEST(nothing_listening)
{
    struct result r;
    char address[64], want[256];
    int port;
    int fd = listen_loopback(AF_INET, &port);

    CHECK(fd >= 0);
    close(fd);
    snprintf(address, sizeof address, "127.0.0.1:%d", port);
    RUN(&r, "connect", address, "-o", scratch("none.rec"));
    snprintf(want, sizeof want, "flightrec connect: cannot connect to %s: "
             "Connection refused\n", address);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 1);
    CHECK(!exists(scratch("none.rec")));
    result_free(&r);
}

/* Sends @a arg's bytes (a stream start and an invalid item) at once,
 * then waits for the client to leave. */
static void serve_and_wait(int listen_fd, int report_fd, const void *arg)
{
    const struct fr_vec *v = arg;
    int c = accept_one(listen_fd);

    (void)report_fd;
    must(send_all(c, v->buf, v->len) == 0, 11);
    until_client_leaves(c);
    close(c);
}

/* A stream the decoder rejects: the message names the byte, the file
 * holds what came; exit status 1. */
TEST(invalid_stream)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    char want[1024];
    const char *path = scratch("invalid.rec");

    unlink(path);
    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_64);
    fr_vec_item(&v, 0, FLIGHTREC_EV_VERSION, 99);
    server_start(&s, serve_and_wait, &v);
    RUN(&r, "connect", s.address, "-o", path, "--print");
    snprintf(want, sizeof want, "flightrec connect: %s: byte 8: unsupported "
             "stream version 99 (saved in '%s')\n", s.address, path);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_S(r.out, "");
    CHECK_EQ_I(r.status, 1);
    free(server_end(&s, 0).buf);
    check_file_bytes(path, &v, v.len);
    result_free(&r);
    unlink(path);
    fr_vec_free(&v);
}

/* A name: every address it resolves to is tried ("localhost" may give ::1
 * first, where nothing listens). */
TEST(hostname)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    char address[64];
    const char *path = scratch("localhost.rec");

    unlink(path);
    flightrec_stream(&v, 1);
    server_start(&s, serve_flightrec, &v);
    snprintf(address, sizeof address, "localhost:%d", s.port);
    RUN(&r, "connect", address, "-o", path);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    free(server_end(&s, 0).buf);
    check_file_bytes(path, &v, v.len);
    result_free(&r);
    unlink(path);
    fr_vec_free(&v);
}

/* A server that sends nothing (it waits for a token never given): the
 * duration ends the command; nothing was saved, exit status 1. */
static void serve_silence(int listen_fd, int report_fd, const void *arg)
{
    int c = accept_one(listen_fd);
    char text[32];

    (void)arg;
    snprintf(text, sizeof text, "%zu", until_client_leaves(c));
    report(report_fd, text, strlen(text));
    close(c);
}

TEST(stopped_before_a_stream)
{
    struct server s;
    struct result r;
    char want[256];
    const char *path = scratch("silent.rec");

    unlink(path);
    server_start(&s, serve_silence, NULL);
    RUN(&r, "connect", s.address, "--duration", "0.3", "-o", path);
    snprintf(want, sizeof want, "flightrec connect: stopped before %s sent "
             "a stream: nothing was saved\n", s.address);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 1);
    struct bytes sent = server_end(&s, 0);
    CHECK_EQ_S((char *)sent.buf, "0");
    free(sent.buf);
    CHECK(!exists(path));
    result_free(&r);
}

/* Nothing listens: --reconnect retries after 0.25 s, then 0.5 s, ...;
 * --duration ends the retries. */
TEST(reconnect_backoff)
{
    struct result r;
    char address[64], want[1024];
    int port;
    int fd = listen_loopback(AF_INET, &port);

    CHECK(fd >= 0);
    close(fd);
    snprintf(address, sizeof address, "127.0.0.1:%d", port);
    RUN(&r, "connect", "--reconnect", "--duration", "0.6", address, "-o",
        scratch("never.rec"));
    snprintf(want, sizeof want,
             "flightrec connect: cannot connect to %s: Connection refused\n"
             "flightrec connect: reconnecting to %s in 0.25 s (attempt 1 of "
             "20)\n"
             "flightrec connect: cannot connect to %s: Connection refused\n"
             "flightrec connect: reconnecting to %s in 0.50 s (attempt 2 of "
             "20)\n"
             "flightrec connect: stopped before %s sent a stream: nothing was "
             "saved\n", address, address, address, address, address);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 1);
    CHECK(!exists(scratch("never.rec")));
    result_free(&r);
}

/* The server gets exactly "token X\npid N\n\n", then streams. */
static void serve_hello(int listen_fd, int report_fd, const void *arg)
{
    const struct fr_vec *v = arg;
    int c = accept_one(listen_fd);
    char hello[4096];
    size_t len = 0;

    while (len < sizeof hello &&
           !(len >= 2 && hello[len - 1] == '\n' && hello[len - 2] == '\n')) {
        ssize_t n = read(c, hello + len, sizeof hello - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    report(report_fd, hello, len);
    push(c, v->buf, v->len, 2, 10);
    close(c);
}

TEST(token_and_pid)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    const char *path = scratch("token.rec");
    const char *token = scratch("token");

    unlink(path);
    write_text(token, "s3cret-token\nthe rest is not sent\n", 0600);
    flightrec_stream(&v, 1);
    server_start(&s, serve_hello, &v);
    RUN(&r, "connect", s.address, "--token", token, "--pid", "4242", "-o",
        path);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    struct bytes hello = server_end(&s, 0);
    CHECK_EQ_S((char *)hello.buf, "token s3cret-token\npid 4242\n\n");
    free(hello.buf);
    check_file_bytes(path, &v, v.len);
    result_free(&r);
    unlink(path);
    unlink(token);
    fr_vec_free(&v);
}

/* Dies without STREAM_END, comes back: the second connection writes
 * FILE.2 and ends the command cleanly. */
static void serve_twice(int listen_fd, int report_fd, const void *arg)
{
    const struct fr_vec *v = arg; /* [0] without, [1] with STREAM_END */
    int c = accept_one(listen_fd);

    (void)report_fd;
    push(c, v[0].buf, v[0].len, 2, 10);
    close(c);
    c = accept_one(listen_fd);
    push(c, v[1].buf, v[1].len, 2, 10);
    close(c);
}

TEST(reconnect)
{
    struct fr_vec v[2];
    struct server s;
    struct result r;
    char want[1024], second[600];
    const char *path = scratch("segments.rec");

    snprintf(second, sizeof second, "%s.2", path);
    unlink(path);
    unlink(second);
    flightrec_stream(&v[0], 0);
    flightrec_stream(&v[1], 1);
    server_start(&s, serve_twice, v);
    RUN(&r, "connect", "--reconnect", s.address, "-o", path);
    snprintf(want, sizeof want,
             "flightrec connect: %s: the target died: the connection closed "
             "without an end of stream; '%s' holds the %zu bytes received up "
             "to the last whole item\n"
             "flightrec connect: reconnecting to %s in 0.25 s (attempt 1 of "
             "20)\n", s.address, path, v[0].len, s.address);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 0);
    free(server_end(&s, 0).buf);
    check_file_bytes(path, &v[0], v[0].len);
    check_file_bytes(second, &v[1], v[1].len);
    char *printed = print_file(second);
    CHECK_EQ_S(printed, flightrec_text);
    free(printed);
    result_free(&r);
    unlink(path);
    unlink(second);
    fr_vec_free(&v[0]);
    fr_vec_free(&v[1]);
}

/* An existing FILE is refused before connecting and stays as it was; -f
 * overwrites it (mode 0600) but never through a symbolic link. */
TEST(existing_output)
{
    struct result r;
    char address[64], want[1024];
    const char *path = scratch("precious.rec");
    const char *link_path = scratch("link.rec");
    int port;
    int fd = listen_loopback(AF_INET, &port);

    CHECK(fd >= 0);
    snprintf(address, sizeof address, "127.0.0.1:%d", port);
    write_text(path, "precious\n", 0644);
    RUN(&r, "connect", address, "-o", path);
    snprintf(want, sizeof want, "flightrec connect: '%s' exists (use -f to "
             "overwrite it)\n", path);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 1);
    result_free(&r);
    struct bytes kept = slurp(path);
    CHECK_EQ_S((char *)kept.buf, "precious\n");
    free(kept.buf);

    unlink(link_path);
    CHECK(symlink(path, link_path) == 0);
    RUN(&r, "connect", address, "-f", "-o", link_path);
    snprintf(want, sizeof want, "flightrec connect: '%s' is a symbolic "
             "link: not followed\n", link_path);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 1);
    result_free(&r);
    kept = slurp(path);
    CHECK_EQ_S((char *)kept.buf, "precious\n");
    free(kept.buf);
    /* Neither run connected. */
    int flags = fcntl(fd, F_GETFL);
    CHECK(fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0);
    CHECK(accept(fd, NULL, NULL) < 0 && errno == EAGAIN);
    close(fd);
    unlink(link_path);

    struct fr_vec v;
    struct server s;
    flightrec_stream(&v, 1);
    server_start(&s, serve_flightrec, &v);
    RUN(&r, "connect", s.address, "-f", "-o", path);
    CHECK_EQ_S(r.err, "");
    CHECK_EQ_I(r.status, 0);
    free(server_end(&s, 0).buf);
    check_file_bytes(path, &v, v.len);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    CHECK_EQ_U(st.st_mode & 07777, 0600);
    result_free(&r);
    unlink(path);
    fr_vec_free(&v);
}

/* IPv6 loopback, [::1]:PORT.  A machine without IPv6 on its loopback must
 * get a clear error instead. */
TEST(ipv6)
{
    struct fr_vec v;
    struct server s;
    struct result r;
    const char *path = scratch("v6.rec");
    int fd = listen_loopback(AF_INET6, &s.port);

    unlink(path);
    flightrec_stream(&v, 1);
    if (fd < 0) {
        char want[256];
        RUN(&r, "connect", "[::1]:9", "-o", path);
        snprintf(want, sizeof want, "flightrec connect: cannot connect to "
                 "[::1]:9: ");
        CHECK(strncmp(r.err, want, strlen(want)) == 0);
        CHECK_EQ_I(r.status, 1);
    } else {
        server_start_on(&s, fd, AF_INET6, serve_flightrec, &v);
        RUN(&r, "connect", s.address, "-o", path);
        CHECK_EQ_S(r.err, "");
        CHECK_EQ_I(r.status, 0);
        free(server_end(&s, 0).buf);
        check_file_bytes(path, &v, v.len);
    }
    result_free(&r);
    unlink(path);
    fr_vec_free(&v);
}

/* Everything the program writes to the terminal @a master until it ends. */
static char *read_terminal(int master, struct proc *p, struct result *r)
{
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);

    CHECK(text != NULL);
    for (;;) {
        struct pollfd pfd = { .fd = master, .events = POLLIN };
        if (poll(&pfd, 1, 100) > 0) {
            ssize_t n = read(master, text + len, cap - 1 - len);
            if (n > 0) {
                len += (size_t)n;
                CHECK(len < cap - 1);
                continue;
            }
            /* EIO: the program's side of the terminal is closed. */
            break;
        }
        if (waitpid(p->pid, NULL, WNOHANG) != 0)
            break;
    }
    text[len] = '\0';
    reap(p, r);
    return text;
}

/* On a terminal: a status line while receiving, cleared, then a summary;
 * -q shows neither. */
TEST(status_line)
{
    struct fr_vec v;
    const char *path = scratch("status.rec");

    flightrec_stream(&v, 1);
    for (int quiet = 0; quiet < 2; quiet++) {
        struct server s;
        struct proc p;
        struct result r;
        char want[1024];
        unlink(path);
        int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        CHECK(master >= 0);
        CHECK(grantpt(master) == 0 && unlockpt(master) == 0);
        int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
        CHECK(slave >= 0);
        server_start(&s, serve_flightrec, &v);
        const char *const loud[] = { "connect", s.address, "-o", path, NULL };
        const char *const hushed[] = { "-q", "connect", s.address, "-o",
                                       path, NULL };
        spawn_err(&p, quiet ? hushed : loud, slave);
        close(slave);
        char *seen = read_terminal(master, &p, &r);
        close(master);
        CHECK_EQ_I(r.status, 0);
        free(server_end(&s, 0).buf);
        check_file_bytes(path, &v, v.len);
        if (quiet) {
            CHECK_EQ_S(seen, "");
        } else {
            /* The terminal turns "\n" into "\r\n". */
            snprintf(want, sizeof want, "\r%s: ", s.address);
            CHECK(strncmp(seen, want, strlen(want)) == 0);
            CHECK(strstr(seen, " events, ") != NULL);
            CHECK(strstr(seen, " events, -/s, lost 0, 0.0 s\033[K") != NULL);
            snprintf(want, sizeof want, "\r\033[Kflightrec connect: '%s': "
                     "5 events, %zu bytes from %s (end of stream)\r\n", path,
                     v.len, s.address);
            size_t n = strlen(seen), w = strlen(want);
            CHECK(n > w);
            CHECK_EQ_S(seen + n - w, want);
        }
        free(seen);
        result_free(&r);
    }
    unlink(path);
    fr_vec_free(&v);
}

/* HOST alone connects to the port flightrec serve listens on by default
 * (6725).  The server listens on a loopback address of its own
 * (127.N.7.25, N from the process id) so that no real server on
 * 127.0.0.1:6725 can answer instead. */
TEST(default_port)
{
    struct server s;
    struct result r;
    char host[32], want[512];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    struct sockaddr_in a;

    CHECK(fd >= 0);
    CHECK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0);
    snprintf(host, sizeof host, "127.%d.7.25", (int)(getpid() % 200) + 20);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(6725);
    CHECK(inet_pton(AF_INET, host, &a.sin_addr) == 1);
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(fd, 4) == 0);
    s.port = 6725;
    server_start_on(&s, fd, AF_INET, serve_line, "");
    RUN(&r, "connect", host, "-o", scratch("default-port.rec"));
    snprintf(want, sizeof want, "flightrec connect: %s:6725 closed the "
             "connection without sending anything (a flightrec server does "
             "so when the token is wrong or missing)\n", host);
    CHECK_EQ_S(r.err, want);
    CHECK_EQ_I(r.status, 1);
    free(server_end(&s, 0).buf);
    result_free(&r);
    /* [IPV6] alone is the same (parsed only: ::1 may be absent). */
    RUN(&r, "connect", "[::1]", "-o", "-");
    CHECK(strncmp(r.err, "flightrec connect: -o -:", 24) == 0);
    CHECK_EQ_I(r.status, 2);
    result_free(&r);
}

TEST(usage)
{
    static const char *const bad[][3] = {
        { "localhost:0", NULL, NULL },
        { "localhost:65536", NULL, NULL },
        { "::1:80", NULL, NULL },
        { "[::1]80", NULL, NULL },
        { ":80", NULL, NULL },
    };
    struct result r;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[256];
        RUN(&r, "connect", bad[i][0]);
        snprintf(want, sizeof want, "flightrec connect: bad address '%s' "
                 "(HOST[:PORT], [IPV6][:PORT], a port from 1 to 65535)\n"
                 "usage: flightrec connect ", bad[i][0]);
        CHECK(strncmp(r.err, want, strlen(want)) == 0);
        CHECK_EQ_I(r.status, 2);
        result_free(&r);
    }
    RUN(&r, "connect", "127.0.0.1:9", "--duration", "0");
    CHECK(strncmp(r.err, "flightrec connect: bad duration '0'", 35) == 0);
    CHECK_EQ_I(r.status, 2);
    result_free(&r);
    RUN(&r, "connect", "127.0.0.1:9", "--pid", "x");
    CHECK(strncmp(r.err, "flightrec connect: bad process id 'x'", 37) == 0);
    CHECK_EQ_I(r.status, 2);
    result_free(&r);
    RUN(&r, "connect");
    CHECK(strncmp(r.err, "flightrec connect: no HOST\n", 27) == 0);
    CHECK_EQ_I(r.status, 2);
    result_free(&r);
    RUN(&r, "connect", "127.0.0.1:9", "-o", "-");
    CHECK(strncmp(r.err, "flightrec connect: -o -: connect writes a file "
                  "(--print shows the records)\n", 72) == 0);
    CHECK_EQ_I(r.status, 2);
    result_free(&r);
}

TEST_MAIN()
