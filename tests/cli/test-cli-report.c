/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec report, end to end: recordings with known contents (built item
 * by item with stream-vector at 1 GHz, so that a tick is a nanosecond, and
 * one recorded from a real program with `flightrec record`), the real
 * command, and exact figures: in the text, in the JSON (read back by
 * python3's json), and in the HTML page as headless Chromium renders it.
 */
#define _POSIX_C_SOURCE 200809L

#include "spawn.h"
#include "stream-vector.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <flightrec/events.h>

#ifndef FLIGHTREC_BIN
#error "FLIGHTREC_BIN must name the flightrec program"
#endif
#ifndef CLI_TEST_DIR
#error "CLI_TEST_DIR must name a scratch directory"
#endif

/*=====   Running   =====*/

/* The whole of a file (spawn.h). */
#define slurp spawn_slurp

static void scratch_into(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/report-%ld-%s", CLI_TEST_DIR, (long)getpid(),
             name);
}

/* A path in the scratch directory, valid for the next 31 calls. */
static const char *scratch(const char *name)
{
    static char paths[32][600];
    static int next;
    char *p = paths[next++ % 32];

    scratch_into(p, sizeof paths[0], name);
    return p;
}

/* Runs argv[0] with the other arguments; stdin from @a in (or
 * /dev/null). */
static void run_argv(struct spawn_run *r, const char *in,
                     const char *const *argv)
{
    spawn_run(r, CLI_TEST_DIR, in, argv);
}

#define REPORT(r, ...) \
    do { \
        const char *const argv_[] = { FLIGHTREC_BIN, "report", __VA_ARGS__, \
                                      NULL }; \
        run_argv((r), NULL, argv_); \
    } while (0)

#define run_free spawn_run_free

static void write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");

    CHECK(f != NULL);
    CHECK(fwrite(buf, 1, len, f) == len);
    CHECK(fclose(f) == 0);
}

/* Evaluates the Python expression @a expr over the JSON document @a json
 * (as d) with python3's own json module; returns what it prints. */
static char *py_json(const char *json, const char *expr)
{
    char doc[700], script[700];
    scratch_into(doc, sizeof doc, "doc.json");
    scratch_into(script, sizeof script, "check.py");
    FILE *f = fopen(script, "w");

    write_file(doc, json, strlen(json));
    CHECK(f != NULL);
    fprintf(f, "import json, sys\n"
               "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
               "print(%s)\n", expr);
    CHECK(fclose(f) == 0);
    const char *const argv[] = { "python3", script, doc, NULL };
    struct spawn_run r;
    run_argv(&r, NULL, argv);
    if (r.status != 0)
        TEST_FAIL("python3 failed on %s: %s", expr, r.err);
    size_t n = strlen(r.out);
    if (n > 0 && r.out[n - 1] == '\n')
        r.out[n - 1] = '\0';
    free(r.err);
    unlink(doc);
    unlink(script);
    return r.out;
}

#define CHECK_PY(json, expr, want) \
    do { \
        char *got_ = py_json((json), (expr)); \
        if (strcmp(got_, (want)) != 0) \
            TEST_FAIL("%s: got '%s', want '%s'", (expr), got_, (want)); \
        free(got_); \
    } while (0)

static int contains(const char *s, const char *part)
{
    return strstr(s, part) != NULL;
}

#define CHECK_HAS(s, part) \
    do { \
        if (!contains((s), (part))) \
            TEST_FAIL("'%s' not found in:\n%s", (part), (s)); \
    } while (0)

/*=====   Recordings with known contents   =====*/

#define MASK22 ((1u << 22) - 1u)

/* An item at absolute time @a t (ns at 1 GHz), after an uptime pair so
 * that any time works. */
static void at(struct fr_vec *v, uint64_t t, uint32_t event, uint64_t data)
{
    fr_vec_uptime(v, (uint32_t)(t & MASK22), t);
    fr_vec_item(v, (uint32_t)(t & MASK22), event, data);
}

/* A further item with the same time as the previous one (ARG_n, ERRNO). */
static void same(struct fr_vec *v, uint64_t t, uint32_t event, uint64_t data)
{
    fr_vec_item(v, (uint32_t)(t & MASK22), event, data);
}

static void start(struct fr_vec *v, uint32_t rings)
{
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(v, 1000000000u, rings, 1024, 42,
                            1700000000000000000ull);
}

static const char *save(struct fr_vec *v, const char *name)
{
    const char *path = scratch(name);
    write_file(path, v->buf, v->len);
    fr_vec_free(v);
    return path;
}

#define LOCK_A 0x1000u

/*
 * One mutex, two threads.  alpha (100) waits 10 ns and 5 ns and holds
 * 4,990 ns and 9,995 ns; beta (101) waits 3,020 ns (contended) and holds
 * 2,000 ns, fails a trylock, then takes it with a trylock (no wait) and
 * holds 1,000 ns.
 */
static const char *lock_file(void)
{
    struct fr_vec v;

    start(&v, 2);
    fr_vec_flightrec_chunk(&v, 0, 100, "alpha", 0, 0, 0, 0);
    at(&v, 10000, FLIGHTREC_EV_MUTEX_LOCK_ENTRY, LOCK_A);
    at(&v, 10010, FLIGHTREC_EV_MUTEX_LOCK_EXIT, LOCK_A);
    at(&v, 15000, FLIGHTREC_EV_MUTEX_UNLOCK, LOCK_A);
    at(&v, 20000, FLIGHTREC_EV_MUTEX_LOCK_ENTRY, LOCK_A);
    at(&v, 20005, FLIGHTREC_EV_MUTEX_LOCK_EXIT, LOCK_A);
    at(&v, 30000, FLIGHTREC_EV_MUTEX_UNLOCK, LOCK_A);
    fr_vec_flightrec_chunk(&v, 1, 101, "beta", 0, 0, 0, 0);
    at(&v, 12000, FLIGHTREC_EV_MUTEX_LOCK_ENTRY, LOCK_A);
    at(&v, 15020, FLIGHTREC_EV_MUTEX_LOCK_EXIT, LOCK_A);
    at(&v, 17020, FLIGHTREC_EV_MUTEX_UNLOCK, LOCK_A);
    at(&v, 25000, FLIGHTREC_EV_MUTEX_TRYLOCK_FAIL, LOCK_A);
    at(&v, 40000, FLIGHTREC_EV_MUTEX_LOCK_EXIT, LOCK_A);
    at(&v, 41000, FLIGHTREC_EV_MUTEX_UNLOCK, LOCK_A);
    return save(&v, "locks.rec");
}

TEST(locks_exact)
{
    const char *path = lock_file();
    struct spawn_run r;

    REPORT(&r, "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    CHECK_PY(r.out, "len(d['locks'])", "1");
    CHECK_PY(r.out, "d['contended_threshold_ns']", "1000");
    CHECK_PY(r.out, "[d['locks'][0][k] for k in ('address', 'kind', "
             "'acquisitions', 'contended', 'trylock_failures', 'unwaited')]",
             "['0x1000', 'mutex', 4, 2, 1, 1]");
    CHECK_PY(r.out, "d['locks'][0]['contended_share']", "0.4");
    CHECK_PY(r.out, "[d['locks'][0]['wait_ns'][k] for k in ('count', "
             "'total', 'min', 'p50', 'p99', 'max', 'exact')]",
             "[3, 3035, 5, 10, 3020, 3020, True]");
    CHECK_PY(r.out, "[d['locks'][0]['hold_ns'][k] for k in ('count', "
             "'total', 'min', 'p50', 'p99', 'max')]",
             "[4, 17985, 1000, 2000, 9995, 9995]");
    CHECK_PY(r.out, "[(t['tid'], t['name'], t['acquisitions'], "
             "t['contended'], t['wait_ns'], t['hold_ns']) for t in "
             "d['locks'][0]['threads']]",
             "[(100, 'alpha', 2, 0, 15, 14985), "
             "(101, 'beta', 2, 2, 3020, 3000)]");
    /* Histogram over powers of two: 5 in [4, 8), 10 in [8, 16), 3,020 in
     * [2048, 4096). */
    CHECK_PY(r.out, "d['locks'][0]['wait_ns']['histogram']",
             "[[4, 1], [8, 1], [2048, 1]]");
    CHECK_PY(r.out, "(d['lossy'], d['lower_bounds'], d['uncertain'], "
             "d['error'])", "(False, [], [], None)");
    run_free(&r);

    /* The same figures as text, aligned, with units. */
    REPORT(&r, path);
    CHECK_EQ_I(r.status, 0);
    CHECK_HAS(r.out, "locks: 1 (contended: a wait over 1.00 \xc2\xb5s, or a "
              "failed trylock)\n");
    CHECK_HAS(r.out, "\naddress           kind                acquired "
              "contended  share  wait total   wait p50   wait p99   wait max  "
              "hold total   hold p50   hold p99   hold max  threads\n"
              "0x1000            mutex                      4         2  "
              "40.0%     3.04 \xc2\xb5s      10 ns    3.02 \xc2\xb5s    "
              "3.02 \xc2\xb5s    17.98 \xc2\xb5s    2.00 \xc2\xb5s    "
              "9.99 \xc2\xb5s    9.99 \xc2\xb5s  100 (alpha), "
              "101 (beta)\n");
    CHECK(!contains(r.out, "LOSSY"));
    run_free(&r);

    /* The threshold is the user's: at 10 ns beta's wait and alpha's first
     * (10 ns is not over 10 ns) give 2 + 1 failure. */
    REPORT(&r, "--json", "--contended=0.000000009", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_PY(r.out, "(d['locks'][0]['contended'], "
             "d['contended_threshold_ns'])", "(3, 9)");
    run_free(&r);
}

#define BARRIER_B 0x2000u

/*
 * A barrier of two threads, as `flightrec record` records
 * pthread_barrier_wait: alpha (100) arrives first in both rounds and waits
 * 4,000 and 3,000 ns; beta (101) waits 10 and 20 ns.  Nobody holds a
 * barrier.
 */
TEST(barrier_exact)
{
    struct fr_vec v;

    start(&v, 2);
    fr_vec_flightrec_chunk(&v, 0, 100, "alpha", 0, 0, 0, 0);
    at(&v, 1000, FLIGHTREC_EV_RTEMS_BARRIER_WAIT, BARRIER_B);
    at(&v, 5000, FLIGHTREC_EV_RTEMS_BARRIER_RELEASE, BARRIER_B);
    same(&v, 5000, FLIGHTREC_EV_RETURN_0, UINT64_MAX);
    at(&v, 6000, FLIGHTREC_EV_RTEMS_BARRIER_WAIT, BARRIER_B);
    at(&v, 9000, FLIGHTREC_EV_RTEMS_BARRIER_RELEASE, BARRIER_B);
    same(&v, 9000, FLIGHTREC_EV_RETURN_0, 0);
    fr_vec_flightrec_chunk(&v, 1, 101, "beta", 0, 0, 0, 0);
    at(&v, 4990, FLIGHTREC_EV_RTEMS_BARRIER_WAIT, BARRIER_B);
    at(&v, 5000, FLIGHTREC_EV_RTEMS_BARRIER_RELEASE, BARRIER_B);
    same(&v, 5000, FLIGHTREC_EV_RETURN_0, 0);
    at(&v, 8980, FLIGHTREC_EV_RTEMS_BARRIER_WAIT, BARRIER_B);
    at(&v, 9000, FLIGHTREC_EV_RTEMS_BARRIER_RELEASE, BARRIER_B);
    same(&v, 9000, FLIGHTREC_EV_RETURN_0, UINT64_MAX);
    const char *path = save(&v, "barrier.rec");
    struct spawn_run r;

    REPORT(&r, "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    CHECK_PY(r.out, "[d['locks'][0][k] for k in ('address', 'kind', "
             "'acquisitions', 'contended', 'trylock_failures', 'unwaited')]",
             "['0x2000', 'barrier', 4, 2, 0, 0]");
    CHECK_PY(r.out, "[d['locks'][0]['wait_ns'][k] for k in ('count', "
             "'total', 'min', 'max')]", "[4, 7030, 10, 4000]");
    CHECK_PY(r.out, "d['locks'][0]['hold_ns']['count']", "0");
    CHECK_PY(r.out, "[(t['tid'], t['acquisitions'], t['contended'], "
             "t['wait_ns'], t['hold_ns']) for t in "
             "d['locks'][0]['threads']]",
             "[(100, 2, 2, 7000, 0), (101, 2, 0, 30, 0)]");
    run_free(&r);
}

/* From a pipe the records arrive through the merge window: the same
 * figures as from the file. */
TEST(locks_from_pipe)
{
    const char *path = lock_file();
    char cmd[1500];
    struct spawn_run file, pipe;

    REPORT(&file, "--json", path);
    CHECK_EQ_I(file.status, 0);
    snprintf(cmd, sizeof cmd, "cat '%s' | '%s' report --json -", path,
             FLIGHTREC_BIN);
    const char *const argv[] = { "/bin/sh", "-c", cmd, NULL };
    run_argv(&pipe, NULL, argv);
    CHECK_EQ_I(pipe.status, 0);
    CHECK_EQ_S(pipe.err, "");
    /* Only the input's name differs. */
    CHECK_PY(pipe.out, "d['input']", "<stdin>");
    char *a = py_json(file.out, "{k: v for k, v in d.items() if k != "
                      "'input'}");
    char *b = py_json(pipe.out, "{k: v for k, v in d.items() if k != "
                      "'input'}");
    CHECK_EQ_S(a, b);
    free(a);
    free(b);
    run_free(&file);
    run_free(&pipe);
}

/*
 * Allocations of every kind on one thread; what is left at the end is
 * calloc(4, 25), the realloc'd block (300) and posix_memalign's 512.
 */
static const char *heap_file(void)
{
    struct fr_vec v;

    start(&v, 1);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    at(&v, 1000, FLIGHTREC_EV_MALLOC_ENTRY, 100);
    at(&v, 1010, FLIGHTREC_EV_MALLOC_EXIT, 0xa000);
    at(&v, 1100, FLIGHTREC_EV_MALLOC_ENTRY, 100);
    at(&v, 1110, FLIGHTREC_EV_MALLOC_EXIT, 0xb000);
    at(&v, 1200, FLIGHTREC_EV_CALLOC_ENTRY, 4);
    same(&v, 1200, FLIGHTREC_EV_ARG_1, 25);
    at(&v, 1210, FLIGHTREC_EV_CALLOC_EXIT, 0xc000);
    at(&v, 1300, FLIGHTREC_EV_REALLOC_ENTRY, 0xa000);
    same(&v, 1300, FLIGHTREC_EV_ARG_1, 300);
    at(&v, 1310, FLIGHTREC_EV_REALLOC_EXIT, 0xd000);
    at(&v, 1400, FLIGHTREC_EV_FREE_ENTRY, 0xb000);
    at(&v, 1401, FLIGHTREC_EV_FREE_EXIT, 0);
    at(&v, 1500, FLIGHTREC_EV_POSIX_MEMALIGN_ENTRY, 64);
    same(&v, 1500, FLIGHTREC_EV_ARG_2, 512);
    at(&v, 1510, FLIGHTREC_EV_POSIX_MEMALIGN_EXIT, 0xe000);
    same(&v, 1510, FLIGHTREC_EV_RETURN_0, 0);
    at(&v, 1600, FLIGHTREC_EV_ALIGNED_ALLOC_ENTRY, 32);
    same(&v, 1600, FLIGHTREC_EV_ARG_1, 64);
    at(&v, 1610, FLIGHTREC_EV_ALIGNED_ALLOC_EXIT, 0xf000);
    at(&v, 1700, FLIGHTREC_EV_FREE_ENTRY, 0xf000);
    at(&v, 1800, FLIGHTREC_EV_MMAP_ENTRY, 8192);
    same(&v, 1800, FLIGHTREC_EV_ARG_4, UINT64_MAX);
    at(&v, 1810, FLIGHTREC_EV_MMAP_EXIT, 0x100000);
    at(&v, 1900, FLIGHTREC_EV_MMAP_ENTRY, 4096);
    same(&v, 1900, FLIGHTREC_EV_ARG_4, 3);
    at(&v, 1910, FLIGHTREC_EV_MMAP_EXIT, 0x200000);
    at(&v, 2000, FLIGHTREC_EV_PAGE_FREE, 0x100000);
    same(&v, 2000, FLIGHTREC_EV_ARG_1, 8192);
    at(&v, 2100, FLIGHTREC_EV_FREE_ENTRY, 0x9999);
    at(&v, 2200, FLIGHTREC_EV_MALLOC_ENTRY, 50);
    at(&v, 2210, FLIGHTREC_EV_MALLOC_EXIT, 0);
    return save(&v, "heap.rec");
}

TEST(heap_exact)
{
    const char *path = heap_file();
    struct spawn_run r;

    REPORT(&r, "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    CHECK_PY(r.out, "[d['heap'][k] for k in ('in_use_bytes', "
             "'live_allocations', 'peak_bytes', 'peak_ns', 'frees', "
             "'unknown_frees', 'failed', 'file_mappings')]",
             "[912, 3, 9104, 1810, 4, 1, 1, 1]");
    CHECK_PY(r.out, "d['heap']['calls']",
             "{'malloc': 3, 'calloc': 1, 'realloc': 1, 'posix_memalign': 1, "
             "'aligned_alloc': 1, 'mmap': 2}");
    CHECK_PY(r.out, "d['heap']['live_by_size']",
             "[{'size': 512, 'count': 1, 'bytes': 512}, "
             "{'size': 300, 'count': 1, 'bytes': 300}, "
             "{'size': 100, 'count': 1, 'bytes': 100}]");
    CHECK_PY(r.out, "d['heap']['live_by_call']",
             "[{'call': 'calloc', 'count': 1, 'bytes': 100}, "
             "{'call': 'realloc', 'count': 1, 'bytes': 300}, "
             "{'call': 'posix_memalign', 'count': 1, 'bytes': 512}]");
    /* Samples: the largest value of each interval and the last; the first
     * is the first allocation, the last the end value. */
    CHECK_PY(r.out, "d['heap']['samples']['points'][0][1:]", "[100, 100]");
    CHECK_PY(r.out, "d['heap']['samples']['points'][-1][2]", "912");
    CHECK_PY(r.out, "max(p[1] for p in d['heap']['samples']['points'])",
             "9104");
    run_free(&r);

    REPORT(&r, path);
    CHECK_EQ_I(r.status, 0);
    CHECK_HAS(r.out, "heap: in use at end 912 B in 3 allocations; peak "
              "8.9 KiB at 0.000001810 s\n");
    CHECK_HAS(r.out, "  still allocated, by size:\n"
              "          size     count       bytes\n"
              "           512         1       512 B\n"
              "           300         1       300 B\n"
              "           100         1       100 B\n");
    run_free(&r);
}

/* Leaks of one size many times over: grouped by size, counted. */
TEST(heap_leak_by_count)
{
    struct fr_vec v;
    struct spawn_run r;

    start(&v, 1);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    for (unsigned i = 0; i < 40; i++) {
        uint64_t t = 1000 + 100 * (uint64_t)i;
        at(&v, t, FLIGHTREC_EV_MALLOC_ENTRY, i % 4 == 0 ? 48 : 16);
        at(&v, t + 10, FLIGHTREC_EV_MALLOC_EXIT, 0x10000 + 0x100 * i);
        if (i % 2 == 1)
            at(&v, t + 20, FLIGHTREC_EV_FREE_ENTRY, 0x10000 + 0x100 * i);
    }
    const char *path = save(&v, "leak.rec");
    /* Even i stay: 10 of 48 bytes (i % 4 == 0), 10 of 16. */
    REPORT(&r, "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_PY(r.out, "d['heap']['live_by_size']",
             "[{'size': 48, 'count': 10, 'bytes': 480}, "
             "{'size': 16, 'count': 10, 'bytes': 160}]");
    CHECK_PY(r.out, "(d['heap']['in_use_bytes'], "
             "d['heap']['live_allocations'], d['heap']['frees'])",
             "(640, 20, 20)");
    run_free(&r);
}

/* Calls with known latencies, per call and per fd. */
static const char *io_file(void)
{
    struct fr_vec v;

    start(&v, 1);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    at(&v, 1000, FLIGHTREC_EV_READ_ENTRY, 3);
    same(&v, 1000, FLIGHTREC_EV_ARG_2, 100);
    at(&v, 1500, FLIGHTREC_EV_READ_EXIT, 100);
    at(&v, 2000, FLIGHTREC_EV_READ_ENTRY, 3);
    at(&v, 4000, FLIGHTREC_EV_READ_EXIT, 50);
    at(&v, 5000, FLIGHTREC_EV_READ_ENTRY, 4);
    at(&v, 5300, FLIGHTREC_EV_READ_EXIT, UINT64_MAX);
    same(&v, 5300, FLIGHTREC_EV_ERRNO, 9);
    at(&v, 6000, FLIGHTREC_EV_WRITE_ENTRY, 1);
    at(&v, 7000, FLIGHTREC_EV_WRITE_EXIT, 10);
    at(&v, 8000, FLIGHTREC_EV_OPEN_ENTRY, 0);
    at(&v, 8700, FLIGHTREC_EV_OPEN_EXIT, 5);
    at(&v, 9000, FLIGHTREC_EV_POLL_ENTRY, 2);
    at(&v, 19000, FLIGHTREC_EV_POLL_EXIT, 1);
    /* An exit whose entry the trace does not have. */
    at(&v, 20000, FLIGHTREC_EV_CLOSE_EXIT, 0);
    return save(&v, "io.rec");
}

TEST(io_exact)
{
    const char *path = io_file();
    struct spawn_run r;

    REPORT(&r, "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_PY(r.out, "[c['call'] for c in d['calls']]",
             "['poll', 'read', 'write', 'open']");
    CHECK_PY(r.out, "[(c['latency_ns']['count'], c['latency_ns']['total'], "
             "c['latency_ns']['min'], c['latency_ns']['p50'], "
             "c['latency_ns']['p99'], c['latency_ns']['max'], c['errors'], "
             "c['bytes']) for c in d['calls']]",
             "[(1, 10000, 10000, 10000, 10000, 10000, 0, 0), "
             "(3, 2800, 300, 500, 2000, 2000, 1, 150), "
             "(1, 1000, 1000, 1000, 1000, 1000, 0, 10), "
             "(1, 700, 700, 700, 700, 700, 0, 0)]");
    CHECK_PY(r.out, "[(f['fd'], f['latency_ns']['count'], "
             "f['latency_ns']['total'], f['errors'], f['bytes']) for f in "
             "d['calls'][1]['fds']]", "[(3, 2, 2500, 0, 150), "
             "(4, 1, 300, 1, 0)]");
    CHECK_PY(r.out, "(d['calls'][0]['fds'], d['calls'][3]['fds'][0]['fd'])",
             "([], 5)");
    CHECK_PY(r.out, "d['unpaired']", "{'exits': 1, 'calls': 0, "
             "'span_ends': 0, 'spans_too_deep': 0}");
    run_free(&r);

    REPORT(&r, path);
    CHECK_EQ_I(r.status, 0);
    CHECK_HAS(r.out, "\ncalls: 4\n"
              "call            fd     count  errors       bytes  time total"
              "   time p50   time p99   time max\n"
              "poll           all         1       0           -    10.00 "
              "\xc2\xb5s   10.00 \xc2\xb5s   10.00 \xc2\xb5s   10.00 "
              "\xc2\xb5s\n"
              "read           all         3       1       150 B     2.80 "
              "\xc2\xb5s     500 ns    2.00 \xc2\xb5s    2.00 \xc2\xb5s\n"
              "                 3         2       0       150 B     2.50 "
              "\xc2\xb5s     500 ns    2.00 \xc2\xb5s    2.00 \xc2\xb5s\n"
              "                 4         1       1         0 B      300 ns"
              "     300 ns     300 ns     300 ns\n"
              "write          all         1       0        10 B     1.00 "
              "\xc2\xb5s    1.00 \xc2\xb5s    1.00 \xc2\xb5s    1.00 "
              "\xc2\xb5s\n");
    run_free(&r);
}

/*
 * A lossy trace: alpha's chunk ends inside a lock wait, the next chunk
 * says 7 items were overwritten.  The wait is cut (not measured), and the
 * report says first that the trace is lossy.
 */
TEST(lossy_trace)
{
    struct fr_vec v;
    struct spawn_run r;

    start(&v, 1);
    fr_vec_flightrec_chunk(&v, 0, 100, "alpha", 0, 0, 0, 0);
    at(&v, 1000, FLIGHTREC_EV_MUTEX_LOCK_ENTRY, LOCK_A);
    at(&v, 1100, FLIGHTREC_EV_READ_ENTRY, 3);
    fr_vec_flightrec_chunk(&v, 0, 100, "alpha", 0, 9, 7, 0);
    at(&v, 5000, FLIGHTREC_EV_MUTEX_LOCK_EXIT, LOCK_A);
    at(&v, 6000, FLIGHTREC_EV_MUTEX_UNLOCK, LOCK_A);
    at(&v, 6500, FLIGHTREC_EV_READ_EXIT, 10);
    const char *path = save(&v, "lossy.rec");

    REPORT(&r, path);
    CHECK_EQ_I(r.status, 0);
    CHECK_HAS(r.out, "flightrec report: ");
    const char *second = strchr(r.out, '\n');
    CHECK(second != NULL);
    if (strncmp(second + 1, "LOSSY TRACE: 7 items lost (overflow 7, discard "
                "0, missing 0) on 1 ring.\n  Counts and totals below are "
                "lower bounds;", 103) != 0)
        TEST_FAIL("no loss warning at the top:\n%s", r.out);
    run_free(&r);

    REPORT(&r, "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_PY(r.out, "(d['lossy'], d['lost']['overflow'], "
             "d['lost']['rings'])", "(True, 7, [{'ring': 0, 'context': 0, "
             "'tid': 100, 'overflow': 7, 'discard': 0, 'missing': 0}])");
    CHECK_PY(r.out, "(d['lower_bounds'], d['uncertain'])",
             "(['locks', 'calls', 'threads', 'spans'], ['heap'])");
    /* The wait across the loss is not measured; the hold after it is. */
    CHECK_PY(r.out, "[d['locks'][0][k] for k in ('acquisitions', "
             "'unwaited')] + [d['locks'][0]['wait_ns']['count'], "
             "d['locks'][0]['hold_ns']['total']]", "[1, 1, 0, 1000]");
    CHECK_PY(r.out, "(d['calls'], d['unpaired']['calls'], "
             "d['unpaired']['exits'])", "([], 1, 1)");
    run_free(&r);
}

/* Spans from FUNCTION_ENTRY / FUNCTION_EXIT, nested. */
TEST(spans_nested)
{
    struct fr_vec v;
    struct spawn_run r;

    start(&v, 1);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    at(&v, 1000, FLIGHTREC_EV_FUNCTION_ENTRY, 0x1000);
    at(&v, 1200, FLIGHTREC_EV_FUNCTION_ENTRY, 0x2000);
    at(&v, 1500, FLIGHTREC_EV_FUNCTION_EXIT, 0x2000);
    at(&v, 2000, FLIGHTREC_EV_FUNCTION_EXIT, 0x1000);
    at(&v, 3000, FLIGHTREC_EV_FUNCTION_ENTRY, 0x2000);
    at(&v, 3100, FLIGHTREC_EV_FUNCTION_EXIT, 0x2000);
    at(&v, 3200, FLIGHTREC_EV_FUNCTION_EXIT, 0x3000);
    const char *path = save(&v, "spans.rec");

    REPORT(&r, "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_PY(r.out, "[(s['name'], s['duration_ns']['count'], "
             "s['duration_ns']['total'], s['duration_ns']['p50'], "
             "s['duration_ns']['max']) for s in d['spans']]",
             "[('function 0x1000', 1, 1000, 1000, 1000), "
             "('function 0x2000', 2, 400, 100, 300)]");
    CHECK_PY(r.out, "d['unpaired']['span_ends']", "1");
    run_free(&r);
}

/* CPU time and switches of a thread whose switches were recorded. */
TEST(threads_cpu)
{
    struct fr_vec v;
    struct spawn_run r;

    start(&v, 2);
    fr_vec_flightrec_chunk(&v, 0, 100, "busy", 0, 0, 0, 0);
    at(&v, 1000, FLIGHTREC_EV_THREAD_SWITCH_IN, 1);
    at(&v, 3000, FLIGHTREC_EV_THREAD_SWITCH_OUT, 1);
    at(&v, 5000, FLIGHTREC_EV_THREAD_SWITCH_IN, 0);
    at(&v, 5500, FLIGHTREC_EV_THREAD_SWITCH_OUT, 0);
    fr_vec_flightrec_chunk(&v, 1, 101, "idle", 0, 0, 0, 0);
    at(&v, 2000, FLIGHTREC_USER(0), 1);
    at(&v, 2500, FLIGHTREC_USER(0), 2);
    at(&v, 9000, FLIGHTREC_USER(0), 3);
    const char *path = save(&v, "cpu.rec");

    REPORT(&r, "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_PY(r.out, "[(t['tid'], t['name'], t['events'], t['first_ns'], "
             "t['last_ns'], t['switches'], t['cpu_ns']) for t in "
             "d['threads']]", "[(100, 'busy', 4, 1000, 5500, 2, 2500), "
             "(101, 'idle', 3, 2000, 9000, 0, 0)]");
    run_free(&r);
    REPORT(&r, path);
    CHECK_HAS(r.out, "\nthreads: 2\n"
              "       tid  name                events      first s       "
              "last s  switches        cpu\n"
              "       100  busy                     4  0.000001000  "
              "0.000005500         2    2.50 \xc2\xb5s\n");
    run_free(&r);
}

/* Names from the stream reach neither the terminal nor the page raw. */
TEST(names_escaped)
{
    struct fr_vec v;
    struct spawn_run r;

    start(&v, 1);
    fr_vec_flightrec_chunk(&v, 0, 100, "<b>\x1b[31mx&", 0, 0, 0, 0);
    at(&v, 1000, FLIGHTREC_EV_MUTEX_LOCK_ENTRY, LOCK_A);
    at(&v, 1010, FLIGHTREC_EV_MUTEX_LOCK_EXIT, LOCK_A);
    const char *path = save(&v, "names.rec");
    const char *html = scratch("names.html");

    REPORT(&r, "--html", html, path);
    CHECK_EQ_I(r.status, 0);
    CHECK(!contains(r.out, "\x1b"));
    CHECK_HAS(r.out, "100 (<b>\\e[31mx&)\n");
    run_free(&r);
    char *page = slurp(html);
    CHECK(!contains(page, "\x1b"));
    CHECK(!contains(page, "<b>\\e"));
    CHECK_HAS(page, "100 (&lt;b&gt;\\e[31mx&amp;)");
    free(page);
    unlink(html);
}

/*
 * An RTEMS 5 stream (version 9, its own numbering), one CPU at 1 MHz: the
 * switches name the threads, the CPU is the ring.  UI1 runs 200-500 us and
 * 700 us to the last record (1,100 us), WRK1 500-700 us.
 */
TEST(rtems_cpu_time)
{
    struct fr_rtems_table t;
    struct fr_vec v;
    struct spawn_run r;
    char table[600];
    static const struct {
        uint32_t id;
        const char *name;
    } threads[] = { { 0x09010001, "IDLE" }, { 0x0a010001, "UI1" },
                    { 0x0a010002, "WRK1" } };

    snprintf(table, sizeof table, "%s/events-rtems-v9.tsv",
             FLIGHTREC_RTEMS_DATA_DIR);
    fr_rtems_table_load(&t, table);
    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_32);
    fr_vec_item(&v, 0, fr_rtems_id(&t, "VERSION"), 9);
    fr_vec_item(&v, 0, fr_rtems_id(&t, "PROCESSOR_MAXIMUM"), 0);
    fr_vec_item(&v, 0, fr_rtems_id(&t, "PER_CPU_COUNT"), 64);
    fr_vec_item(&v, 0, fr_rtems_id(&t, "FREQUENCY"), 1000000);
    for (size_t i = 0; i < 3; i++) {
        fr_vec_item(&v, 0, fr_rtems_id(&t, "THREAD_ID"), threads[i].id);
        fr_vec_packed(&v, 0, fr_rtems_id(&t, "THREAD_NAME"), threads[i].name,
                      strlen(threads[i].name));
    }
    fr_vec_item(&v, 0, fr_rtems_id(&t, "PROCESSOR"), 0);
    fr_vec_item(&v, 0, fr_rtems_id(&t, "PER_CPU_TAIL"), 0);
    fr_vec_item(&v, 0, fr_rtems_id(&t, "PER_CPU_HEAD"), 11);
    fr_vec_item(&v, 100, fr_rtems_id(&t, "UPTIME_LOW"), 0);
    fr_vec_item(&v, 100, fr_rtems_id(&t, "UPTIME_HIGH"), 1);
    uint32_t out = fr_rtems_id(&t, "THREAD_SWITCH_OUT");
    uint32_t in = fr_rtems_id(&t, "THREAD_SWITCH_IN");
    fr_vec_item(&v, 200, out, threads[0].id);
    fr_vec_item(&v, 200, in, threads[1].id);
    fr_vec_item(&v, 500, out, threads[1].id);
    fr_vec_item(&v, 500, in, threads[2].id);
    fr_vec_item(&v, 700, out, threads[2].id);
    fr_vec_item(&v, 700, in, threads[1].id);
    fr_vec_item(&v, 1100, 512, 1);
    fr_rtems_table_free(&t);
    const char *path = save(&v, "rtems.rec");

    REPORT(&r, "--json", path);
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    CHECK_PY(r.out, "[(t['name'], t['switches'], t['cpu_ns']) for t in "
             "d['threads'] if t['name'] in ('UI1', 'WRK1')]",
             "[('UI1', 2, 700000), ('WRK1', 1, 200000)]");
    CHECK_PY(r.out, "d['stream']['kind']", "rtems");
    run_free(&r);
}

/*=====   Bad input, output files   =====*/

TEST(truncated_input)
{
    struct fr_vec v;
    struct spawn_run r;

    start(&v, 1);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    at(&v, 1000, FLIGHTREC_EV_READ_ENTRY, 3);
    at(&v, 1400, FLIGHTREC_EV_READ_EXIT, 1);
    at(&v, 2000, FLIGHTREC_EV_READ_ENTRY, 3);
    v.len -= 5; /* ends inside the last item */
    const char *path = save(&v, "trunc.rec");
    const char *html = scratch("trunc.html");

    REPORT(&r, "--json", "--html", html, path);
    CHECK_EQ_I(r.status, 1);
    CHECK_HAS(r.err, "flightrec report: ");
    CHECK_HAS(r.err, "stream ends inside an item");
    /* What came before the error is reported, and says so. */
    CHECK_PY(r.out, "(d['calls'][0]['call'], "
             "d['calls'][0]['latency_ns']['total'])", "('read', 400)");
    CHECK_PY(r.out, "'stream ends inside an item' in d['error']", "True");
    char *page = slurp(html);
    CHECK_HAS(page, "id=input-error");
    free(page);
    unlink(html);
    run_free(&r);

    REPORT(&r, scratch("does-not-exist.rec"));
    CHECK_EQ_I(r.status, 1);
    CHECK_HAS(r.err, "flightrec report: cannot open '");
    CHECK_EQ_S(r.out, "");
    run_free(&r);

    REPORT(&r, "--contended=x", path);
    CHECK_EQ_I(r.status, 2);
    CHECK_HAS(r.err, "flightrec report: bad time 'x'");
    run_free(&r);
}

TEST(html_file)
{
    const char *path = lock_file();
    const char *html = scratch("out.html");
    char missing[700];
    struct stat st;
    struct spawn_run r;

    /* An existing file is replaced, with mode 0600. */
    write_file(html, "old", 3);
    CHECK(chmod(html, 0644) == 0);
    REPORT(&r, "--html", html, path);
    CHECK_EQ_I(r.status, 0);
    run_free(&r);
    CHECK(stat(html, &st) == 0);
    CHECK_EQ_U(st.st_mode & 0777, 0600);
    char *page = slurp(html);
    CHECK(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    CHECK_HAS(page, "</body></html>\n");
    /* Self-contained: nothing loads from elsewhere. */
    CHECK(!contains(page, "<script"));
    CHECK(!contains(page, "src="));
    CHECK(!contains(page, "href="));
    CHECK(!contains(page, "url("));
    free(page);
    unlink(html);

    /* A page that cannot be written: a message, status 1, no file and no
     * temporary file left. */
    snprintf(missing, sizeof missing, "%s", scratch("no-such-dir/x.html"));
    REPORT(&r, "--html", missing, path);
    CHECK_EQ_I(r.status, 1);
    CHECK_HAS(r.err, "flightrec report: cannot write '");
    run_free(&r);
    CHECK(access(missing, F_OK) != 0);

    /* A write that fails (a full device, written in place) is an error. */
    REPORT(&r, "--html", "/dev/full", path);
    CHECK_EQ_I(r.status, 1);
    CHECK_HAS(r.err, "flightrec report: cannot write '/dev/full': No space "
              "left on device\n");
    run_free(&r);

    /* An empty name is refused before anything is read. */
    REPORT(&r, "--html", "", path);
    CHECK_EQ_I(r.status, 2);
    CHECK_HAS(r.err, "--html needs a file name");
    run_free(&r);
}

/*=====   In a browser   =====*/

/* Headless Chromium loads the page from a file with no network: no
 * console message (the page's own CSP refuses anything not inline, and
 * Chromium logs such a refusal as a console error), and the DOM holds the
 * known figures. */
/* Loads @a html in headless Chromium: its DOM on r->out, its log on
 * r->err. */
static void chromium_load(struct spawn_run *r, const char *html)
{
    char url[800], profile[700], flag_profile[760];

    snprintf(url, sizeof url, "file://%s", html);
    scratch_into(profile, sizeof profile, "chromium-profile");
    snprintf(flag_profile, sizeof flag_profile, "--user-data-dir=%s",
             profile);
    const char *const argv[] = {
        "chromium", "--headless", "--no-sandbox", "--disable-gpu",
        "--no-first-run", "--disable-extensions", "--enable-logging=stderr",
        "--v=0", "--virtual-time-budget=2000", flag_profile, "--dump-dom",
        url, NULL,
    };
    if (access("/usr/bin/chromium", X_OK) != 0)
        TEST_FAIL("chromium is not installed (Debian package 'chromium'; "
                  "scripts/install-deps.sh test installs it)");
    run_argv(r, NULL, argv);
    struct spawn_run rm;
    const char *const rm_argv[] = { "rm", "-rf", profile, NULL };
    run_argv(&rm, NULL, rm_argv);
    run_free(&rm);
    if (r->status != 0)
        TEST_FAIL("chromium exited with %d: %s", r->status, r->err);
}

static int console_messages(const char *log)
{
    return contains(log, "CONSOLE") || contains(log, "Refused") ||
           contains(log, "Uncaught");
}

static void chromium_check(const char *html, const char *const *want,
                           size_t nwant)
{
    struct spawn_run r;

    chromium_load(&r, html);
    if (console_messages(r.err))
        TEST_FAIL("console messages loading %s:\n%s", html, r.err);
    /* The DOM as the browser built it: all of it arrived. */
    CHECK_HAS(r.out, "</table>");
    for (size_t i = 0; i < nwant; i++)
        CHECK_HAS(r.out, want[i]);
    run_free(&r);
}

/* The console check sees what it must: a page under the report's policy
 * that loads an image from elsewhere is refused, and says so. */
TEST(chromium_sees_console_errors)
{
    const char *html = scratch("refused.html");
    static const char page[] =
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-"
        "Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'"
        "\"></head><body><img src=\"http://127.0.0.1:9/x.png\"><p>x</p>"
        "</body></html>";
    struct spawn_run r;

    write_file(html, page, strlen(page));
    chromium_load(&r, html);
    CHECK(console_messages(r.err));
    run_free(&r);
    unlink(html);
}

TEST(html_in_chromium)
{
    const char *locks = lock_file();
    const char *heap = heap_file();
    const char *io = io_file();
    const char *html = scratch("chromium.html");
    struct spawn_run r;

    REPORT(&r, "--html", html, locks);
    CHECK_EQ_I(r.status, 0);
    run_free(&r);
    static const char *const lock_figures[] = {
        ("<td>0x1000</td><td>mutex</td><td class=\"n\">4</td>"
         "<td class=\"n\">2</td><td class=\"n\">40.0%</td>"),
        "data-ns=\"3035\"", "data-ns=\"10\"", "data-ns=\"3020\"",
        "data-ns=\"17985\"", "data-ns=\"2000\"", "data-ns=\"9995\"",
        "100 (alpha), 101 (beta)", "lock wait: 0x1000", "<svg",
        "id=\"timeline\"",
    };
    chromium_check(html, lock_figures,
                   sizeof lock_figures / sizeof lock_figures[0]);

    REPORT(&r, "--html", html, heap);
    CHECK_EQ_I(r.status, 0);
    run_free(&r);
    static const char *const heap_figures[] = {
        ("In use at the end: <b>912 B</b> (912 bytes) in 3 allocations; "
         "peak 8.9 KiB (9104 bytes)"),
        ("<tr><td class=\"n\">512</td><td class=\"n\">1</td>"
         "<td class=\"n\">512</td></tr>"),
        "<tr><td>realloc</td><td class=\"n\">1</td><td class=\"n\">300</td>",
        "id=\"heap-chart\"",
    };
    chromium_check(html, heap_figures,
                   sizeof heap_figures / sizeof heap_figures[0]);

    REPORT(&r, "--html", html, io);
    CHECK_EQ_I(r.status, 0);
    run_free(&r);
    static const char *const io_figures[] = {
        ("<tr><td>read</td><td>all</td><td class=\"n\">3</td>"
         "<td class=\"n\">1</td><td class=\"n\">150</td>"
         "<td class=\"n\" data-ns=\"2800\">"),
        ("<td class=\"n\">4</td><td class=\"n\">1</td>"
         "<td class=\"n\">1</td>"),
        "call time: poll",
    };
    chromium_check(html, io_figures,
                   sizeof io_figures / sizeof io_figures[0]);
    unlink(html);
}

/*=====   Memory   =====*/

/* One lock taken and released @a n times by each of two threads, and @a n
 * reads on one fd: a long stream whose report needs no more state than a
 * short one. */
static void long_file(const char *path, unsigned n)
{
    struct fr_vec v;

    start(&v, 2);
    for (uint32_t ring = 0; ring < 2; ring++) {
        fr_vec_flightrec_chunk(&v, ring, 100 + ring, ring ? "b" : "a", 0, 0,
                               0, 0);
        uint64_t t = 1000 + ring * 50, last_sync = 0;
        for (unsigned i = 0; i < n; i++, t += 400) {
            if (i == 0 || t - last_sync > (1u << 20)) {
                fr_vec_uptime(&v, (uint32_t)(t & MASK22), t);
                last_sync = t;
            }
            uint32_t t22 = (uint32_t)(t & MASK22);
            fr_vec_item(&v, t22, FLIGHTREC_EV_MUTEX_LOCK_ENTRY, LOCK_A);
            fr_vec_item(&v, (t22 + 10 + i % 7) & MASK22,
                        FLIGHTREC_EV_MUTEX_LOCK_EXIT, LOCK_A);
            fr_vec_item(&v, (t22 + 40) & MASK22, FLIGHTREC_EV_MUTEX_UNLOCK,
                        LOCK_A);
            fr_vec_item(&v, (t22 + 100) & MASK22, FLIGHTREC_EV_READ_ENTRY,
                        3);
            fr_vec_item(&v, (t22 + 150 + i % 100) & MASK22,
                        FLIGHTREC_EV_READ_EXIT, 8);
        }
    }
    write_file(path, v.buf, v.len);
    fr_vec_free(&v);
}

/* long_file() in a child process: the peak memory of this one (which a
 * child inherits as its own peak across exec on Linux) stays small. */
static const char *long_file_apart(const char *name, unsigned n)
{
    const char *path = scratch(name);
    int st;
    pid_t pid = fork();

    CHECK(pid >= 0);
    if (pid == 0) {
        long_file(path, n);
        _exit(0);
    }
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    return path;
}

/* The most memory (KiB) a report of @a path used, and its JSON. */
static long report_maxrss(const char *path, struct spawn_run *r)
{
    char out_path[700];
    struct rusage ru;
    int st;

    scratch_into(out_path, sizeof out_path, "rss-out");
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0)
            _exit(126);
        dup2(o, 1);
        execl(FLIGHTREC_BIN, FLIGHTREC_BIN, "report", "--json", path,
              (char *)NULL);
        _exit(127);
    }
    CHECK(wait4(pid, &st, 0, &ru) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    r->out = slurp(out_path);
    r->err = NULL;
    unlink(out_path);
    return ru.ru_maxrss;
}

TEST(memory_bounded)
{
    struct spawn_run a, b;
    const char *short_path = long_file_apart("long-1.rec", 20000);
    long small = report_maxrss(short_path, &a);
    unlink(short_path);
    const char *long_path = long_file_apart("long-8.rec", 160000);
    long large = report_maxrss(long_path, &b);
    unlink(long_path);

    /* 8 times the records (1.6 million against 200,000): the same
     * state, give or take the allocator's slack. */
    if (large > small + 1024)
        TEST_FAIL("report used %ld KiB on 8x the records, %ld KiB on 1x",
                  large, small);
    CHECK_PY(b.out, "(d['locks'][0]['acquisitions'], "
             "d['locks'][0]['wait_ns']['exact'], "
             "d['calls'][0]['latency_ns']['count'])",
             "(320000, False, 320000)");
    /* Past 1024 values the quantiles come from the folded histogram:
     * waits are 10..16 ns (exact there), reads 50..149 ns. */
    CHECK_PY(b.out, "[d['locks'][0]['wait_ns'][k] for k in ('min', 'p50', "
             "'p99', 'max')]", "[10, 13, 16, 16]");
    CHECK_PY(b.out, "(lambda s: (s['min'], s['max'], abs(s['p50'] - 99) "
             "<= 1, abs(s['p99'] - 148) <= 1))(d['calls'][0]['latency_ns'])",
             "(50, 149, True, True)");
    /* Totals stay exact: 2 x sum(10 + i % 7 for i < 20000). */
    CHECK_PY(a.out, "d['locks'][0]['wait_ns']['total']", "519994");
    free(a.out);
    free(b.out);
}

/*=====   A real program under flightrec record   =====*/

#ifdef REPORT_TARGET
/* How far the recorder's counter and CLOCK_MONOTONIC may disagree over
 * @a ns: 1 us, plus 0.1 % for the counter's calibrated frequency. */
static uint64_t slack(uint64_t ns)
{
    return 1000u + ns / 1000u;
}

/* A value "NAME N" from the program's own output. */
static uint64_t measured(const char *out, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *value = NULL;
    if (strncmp(out, key + 1, strlen(key) - 1) == 0)
        value = out + strlen(key) - 1;
    else if (strstr(out, key) != NULL)
        value = strstr(out, key) + strlen(key);
    if (value == NULL)
        TEST_FAIL("no '%s' in the program's output:\n%s", name, out);
    return strtoull(value, NULL, 0);
}

/*
 * report-target holds a mutex 20 ms while a second thread waits for it,
 * leaks 3 x 1000 and 1 x 777 bytes, and polls 15 ms; it measures each
 * around the call.  The report's figures are those of the recorded events
 * to the nanosecond (recomputed by python3 from `flightrec print --json`),
 * and lie within what the program measured around its calls (give or take
 * slack()).
 */
TEST(recorded_program)
{
    const char *rec = scratch("target.rec");
    struct spawn_run prog, rep, print;

    unlink(rec);
    const char *const argv[] = { FLIGHTREC_BIN, "record", "-o", rec, "--",
                                 REPORT_TARGET, NULL };
    run_argv(&prog, NULL, argv);
    CHECK_EQ_I(prog.status, 0);
    uint64_t lock = measured(prog.out, "lock");
    uint64_t waited = measured(prog.out, "waited");
    uint64_t held = measured(prog.out, "held");
    uint64_t polled = measured(prog.out, "polled");

    REPORT(&rep, "--json", rec);
    CHECK_EQ_I(rep.status, 0);
    CHECK_EQ_S(rep.err, "");
    const char *const pargv[] = { FLIGHTREC_BIN, "print", "--json", rec,
                                  NULL };
    run_argv(&print, NULL, pargv);
    CHECK_EQ_I(print.status, 0);
    char events[700], expr[4096];
    scratch_into(events, sizeof events, "target-events.json");
    write_file(events, print.out, strlen(print.out));

    /* The waits and holds of the lock, from the records themselves. */
    snprintf(expr, sizeof expr,
             "(lambda recs, lk: (lambda waits, holds: "
             "(sorted(waits), sum(w > 1000 for w in waits), sum(holds), "
             "max(holds)))("
             "[b['time_ns'] - a['time_ns'] for i, a in enumerate(recs) "
             "if a['event'] == 'MUTEX_LOCK_ENTRY' and a['data'] == lk "
             "for b in [next(b for b in recs[i + 1:] if b['thread'] == "
             "a['thread'] and b['event'] == 'MUTEX_LOCK_EXIT' and "
             "b['data'] == lk)]], "
             "[u['time_ns'] - x['time_ns'] for i, x in enumerate(recs) "
             "if x['event'] == 'MUTEX_LOCK_EXIT' and x['data'] == lk "
             "for u in [next(u for u in recs[i + 1:] if u['thread'] == "
             "x['thread'] and u['event'] == 'MUTEX_UNLOCK' and u['data'] == "
             "lk)]]))([json.loads(l) for l in open('%s')], '0x%llx')",
             events, (unsigned long long)lock);
    char *want = py_json("{}", expr);
    snprintf(expr, sizeof expr,
             "[(sorted([l['wait_ns']['min'], l['wait_ns']['max']] if "
             "l['wait_ns']['count'] == 2 else [l['wait_ns']['max']]), "
             "l['contended'], l['hold_ns']['total'], l['hold_ns']['max']) "
             "for l in "
             "d['locks'] if l['address'] == '0x%llx'][0]",
             (unsigned long long)lock);
    char *got = py_json(rep.out, expr);
    /* One line each way: (waits, contended, hold total, hold max).  Both
     * waits are there: main's own first lock is not free either (the
     * wrapper finds the real function on its first call). */
    CHECK_EQ_S(got, want);
    free(got);
    free(want);

    snprintf(expr, sizeof expr, "[(l['acquisitions'], l['contended'], "
             "l['wait_ns']['max'], l['hold_ns']['max']) for l in d['locks'] "
             "if l['address'] == '0x%llx'][0]", (unsigned long long)lock);
    got = py_json(rep.out, expr);
    unsigned long long acq, cont, wait_max, hold_max;
    CHECK(sscanf(got, "(%llu, %llu, %llu, %llu)", &acq, &cont, &wait_max,
                 &hold_max) == 4);
    free(got);
    CHECK_EQ_U(acq, 2);
    CHECK(cont >= 1);
    /* Inside what the program measured around its calls. */
    if (wait_max > waited + slack(waited) || wait_max < 19000000u)
        TEST_FAIL("report wait %llu ns, program measured %llu ns", wait_max,
                  (unsigned long long)waited);
    if (hold_max + slack(held) < held || hold_max > held + 5000000u)
        TEST_FAIL("report hold %llu ns, program measured %llu ns", hold_max,
                  (unsigned long long)held);

    /* The leaks, by size and count. */
    CHECK_PY(rep.out, "sorted((r['size'], r['count'], r['bytes']) for r in "
             "d['heap']['live_by_size'] if r['size'] in (777, 1000))",
             "[(777, 1, 777), (1000, 3, 3000)]");
    /* The poll: one call, inside the program's measurement. */
    got = py_json(rep.out, "[c['latency_ns']['max'] for c in d['calls'] "
                  "if c['call'] == 'poll'][0]");
    uint64_t poll_ns = strtoull(got, NULL, 10);
    free(got);
    if (poll_ns > polled + slack(polled) || poll_ns < 15000000u)
        TEST_FAIL("report poll %llu ns, program measured %llu ns",
                  (unsigned long long)poll_ns, (unsigned long long)polled);
    unlink(events);
    unlink(rec);
    run_free(&prog);
    run_free(&rep);
    run_free(&print);
}

/* A live process, named by its pid: the report reads its session. */
TEST(live_session_pid)
{
    const char *rec = scratch("live.rec");
    int in[2], out[2];
    char buf[4096];
    size_t len = 0;

    unlink(rec);
    CHECK(pipe(in) == 0 && pipe(out) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(FLIGHTREC_BIN, FLIGHTREC_BIN, "record", "-o", rec, "--",
              REPORT_TARGET, "wait", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    while (len + 1 < sizeof buf) {
        ssize_t n = read(out[0], buf + len, sizeof buf - 1 - len);
        CHECK(n > 0);
        len += (size_t)n;
        buf[len] = '\0';
        if (strstr(buf, "ready\n") != NULL)
            break;
    }
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "%llu",
             (unsigned long long)measured(buf, "pid"));
    uint64_t lock = measured(buf, "lock");
    struct spawn_run r;
    REPORT(&r, "--json", pid_text);
    close(in[1]); /* the program ends */
    close(out[0]);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK_EQ_I(r.status, 0);
    CHECK_EQ_S(r.err, "");
    CHECK_PY(r.out, "d['input']", pid_text);
    char expr[300];
    snprintf(expr, sizeof expr, "[l['acquisitions'] for l in d['locks'] if "
             "l['address'] == '0x%llx']", (unsigned long long)lock);
    CHECK_PY(r.out, expr, "[2]");
    CHECK_PY(r.out, "sorted((r['size'], r['count']) for r in "
             "d['heap']['live_by_size'] if r['size'] in (777, 1000))",
             "[(777, 1), (1000, 3)]");
    run_free(&r);
    unlink(rec);
}
#endif

TEST_MAIN()
