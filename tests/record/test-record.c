/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `flightrec record` end to end: the real flightrec binary runs
 * record-target with the real preload library; the recordings are decoded
 * with the client library (and once with `flightrec print`) and compared,
 * event by event, with what record-target says it did.
 */
#include "decode-file.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <flightrec/client.h>
#include <flightrec/events.h>
#include <flightrec/format.h>

static char scratch[4096];

/* Runs `flightrec record ARGS...` with stdout to @a out_path, and stderr
 * to @a err_path unless it is NULL; returns the wait status.  With
 * @a signal_after_ready, waits for the line "ready" on stdout, then sends
 * that signal to record. */
static int run_record_err(const char *out_path, const char *err_path,
                          int signal_after_ready, const char *const *args)
{
    char *argv[32];
    size_t n = 0;
    argv[n++] = (char *)FLIGHTREC_BIN;
    argv[n++] = (char *)"record";
    for (; *args != NULL && n < 31; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        close(pipefd[1]);
        if (err_path != NULL) {
            int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (err < 0 || dup2(err, 2) < 0)
                _exit(125);
        }
        execv(argv[0], argv);
        _exit(126);
    }
    close(pipefd[1]);
    FILE *out = fopen(out_path, "w");
    CHECK(out != NULL);
    char buf[4096];
    ssize_t got;
    int signalled = 0;
    char tail[8] = "";
    while ((got = read(pipefd[0], buf, sizeof buf)) > 0) {
        fwrite(buf, 1, (size_t)got, out);
        fflush(out);
        for (ssize_t i = 0; i < got; i++) {
            memmove(tail, tail + 1, 5);
            tail[5] = buf[i];
            tail[6] = '\0';
        }
        if (signal_after_ready && !signalled && strstr(tail, "ready\n")) {
            kill(pid, signal_after_ready);
            signalled = 1;
        }
    }
    close(pipefd[0]);
    fclose(out);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    return status;
}

static int run_record(const char *out_path, int signal_after_ready,
                      const char *const *args)
{
    return run_record_err(out_path, NULL, signal_after_ready, args);
}

/*=====   Decoding   =====*/

struct ev {
    int64_t tid;
    uint32_t event;
    uint64_t data;
    uint64_t time_ns;
};

struct recording {
    struct ev *evs;
    size_t count, cap;
    int64_t pid;
    int rc;
    char thread_names[8][2][64]; /* tid, name pairs (as text) */
    size_t names;
};

static int collect(const struct flightrec_record *r, void *arg)
{
    struct recording *rec = arg;
    /* Processor rings (context switches) are checked on their own. */
    if (r->type != FLIGHTREC_RECORD_EVENT ||
        r->ring_info->context == FLIGHTREC_RING_CONTEXT_CPU)
        return 0;
    if (rec->count == rec->cap) {
        rec->cap = rec->cap ? rec->cap * 2 : 256;
        rec->evs = realloc(rec->evs, rec->cap * sizeof *rec->evs);
        CHECK(rec->evs != NULL);
    }
    rec->evs[rec->count++] = (struct ev){ r->ring_info->thread_id, r->event,
                                          r->data, r->time_ns };
    return 0;
}

static void rec_free(struct recording *rec)
{
    free(rec->evs);
    rec->evs = NULL;
}

static void decode(const char *path, struct recording *rec)
{
    memset(rec, 0, sizeof *rec);
    flightrec_client *c = decode_file(path, collect, rec, &rec->rc);
    rec->pid = flightrec_client_info(c)->process_id;
    for (size_t i = 0; i < flightrec_client_ring_count(c) && rec->names < 8;
         i++) {
        const struct flightrec_ring_info *ri = flightrec_client_ring(c, i);
        snprintf(rec->thread_names[rec->names][0], 64, "%lld",
                 (long long)ri->thread_id);
        snprintf(rec->thread_names[rec->names][1], 64, "%s", ri->thread_name);
        rec->names++;
    }
    flightrec_client_destroy(c);
}

static const char *ring_name(const struct recording *rec, int64_t tid)
{
    char t[64];
    snprintf(t, sizeof t, "%lld", (long long)tid);
    for (size_t i = 0; i < rec->names; i++)
        if (strcmp(rec->thread_names[i][0], t) == 0)
            return rec->thread_names[i][1];
    return NULL;
}

/* Event id by name (events.h names without FLIGHTREC_EV_). */
static uint32_t event_id(const char *name)
{
    static const struct { const char *name; uint32_t id; } ids[] = {
#define E(n) { #n, FLIGHTREC_EV_##n }
        E(OPEN_ENTRY), E(OPEN_EXIT), E(CLOSE_ENTRY), E(CLOSE_EXIT),
        E(READ_ENTRY), E(READ_EXIT), E(WRITE_ENTRY), E(WRITE_EXIT),
        E(READV_ENTRY), E(READV_EXIT), E(WRITEV_ENTRY), E(WRITEV_EXIT),
        E(SOCKET_ENTRY), E(SOCKET_EXIT), E(CONNECT_ENTRY), E(CONNECT_EXIT),
        E(ACCEPT_ENTRY), E(ACCEPT_EXIT), E(SEND_ENTRY), E(SEND_EXIT),
        E(SENDTO_ENTRY), E(SENDTO_EXIT), E(SENDMSG_ENTRY), E(SENDMSG_EXIT),
        E(RECV_ENTRY), E(RECV_EXIT), E(RECVFROM_ENTRY), E(RECVFROM_EXIT),
        E(RECVMSG_ENTRY), E(RECVMSG_EXIT), E(POLL_ENTRY), E(POLL_EXIT),
        E(SELECT_ENTRY), E(SELECT_EXIT), E(KEVENT_ENTRY), E(KEVENT_EXIT),
        E(ARG_1), E(ARG_2), E(ARG_3), E(ARG_4), E(RETURN_0), E(ERRNO),
        E(MALLOC_ENTRY), E(MALLOC_EXIT), E(CALLOC_ENTRY), E(CALLOC_EXIT),
        E(REALLOC_ENTRY), E(REALLOC_EXIT), E(FREE_ENTRY), E(FREE_EXIT),
        E(POSIX_MEMALIGN_ENTRY), E(POSIX_MEMALIGN_EXIT),
        E(ALIGNED_ALLOC_ENTRY), E(ALIGNED_ALLOC_EXIT), E(MMAP_ENTRY),
        E(MMAP_EXIT), E(PAGE_FREE), E(MUTEX_LOCK_ENTRY), E(MUTEX_LOCK_EXIT),
        E(MUTEX_UNLOCK), E(MUTEX_TRYLOCK_FAIL), E(THREAD_RESOURCE_OBTAIN),
        E(THREAD_RESOURCE_RELEASE), E(RTEMS_SEMAPHORE_OBTAIN),
        E(RTEMS_SEMAPHORE_RELEASE), E(THREAD_QUEUE_ENQUEUE),
        E(THREAD_QUEUE_EXTRACT), E(THREAD_QUEUE_SURRENDER),
        E(THREAD_QUEUE_SURRENDER_STICKY), E(THREAD_CREATE), E(THREAD_START),
        E(THREAD_EXIT), E(THREAD_SET_NAME), E(FATAL_CODE),
        E(FUNCTION_ENTRY), E(FUNCTION_EXIT), E(ISR_LOCK_ACQUIRE_ENTRY),
        E(ISR_LOCK_ACQUIRE_EXIT), E(ISR_LOCK_RELEASE), E(INTERRUPT_ENTRY),
        E(INTERRUPT_EXIT), E(RTEMS_BARRIER_CREATE), E(RTEMS_BARRIER_DELETE),
        E(RTEMS_BARRIER_WAIT), E(RTEMS_BARRIER_RELEASE),
#undef E
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (strcmp(ids[i].name, name) == 0)
            return ids[i].id;
    TEST_FAIL("unknown event name '%s' in the expectations", name);
}

/* What record-target printed. */
struct expected {
    char thread[64];
    uint32_t event;
    uint64_t data;
};

struct target_output {
    struct expected *lines;
    size_t count;
    int64_t tid_main, tid_t1, pid, child, leak;
    int ready;
};

static void target_free(struct target_output *t)
{
    free(t->lines);
    t->lines = NULL;
}

static void read_target_output(const char *path, struct target_output *t)
{
    memset(t, 0, sizeof *t);
    t->tid_main = t->tid_t1 = t->pid = t->child = t->leak = -1;
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[256];
    size_t cap = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char a[64], b[64], c[64];
        long long v;
        if (sscanf(line, "tid %63s %lld", a, &v) == 2) {
            if (strcmp(a, "main") == 0)
                t->tid_main = v;
            else
                t->tid_t1 = v;
        } else if (sscanf(line, "pid %lld", &v) == 1) {
            t->pid = v;
        } else if (sscanf(line, "child %lld", &v) == 1) {
            t->child = v;
        } else if (sscanf(line, "leak %lld", &v) == 1) {
            t->leak = v;
        } else if (strcmp(line, "ready\n") == 0) {
            t->ready = 1;
        } else if (sscanf(line, "%63s %63s %63s", a, b, c) == 3) {
            if (t->count == cap) {
                cap = cap ? cap * 2 : 64;
                t->lines = realloc(t->lines, cap * sizeof *t->lines);
                CHECK(t->lines != NULL);
            }
            struct expected *e = &t->lines[t->count++];
            snprintf(e->thread, sizeof e->thread, "%s", a);
            e->event = event_id(b);
            e->data = strtoull(c, NULL, 16);
        } else {
            TEST_FAIL("unexpected line from record-target: %s", line);
        }
    }
    fclose(f);
}

/* The events of thread @a tid equal the expectations of @a thread, in
 * order, and nothing else. */
static void check_thread(const struct recording *rec,
                         const struct target_output *t, const char *thread,
                         int64_t tid)
{
    size_t j = 0;
    for (size_t i = 0; i < rec->count; i++) {
        if (rec->evs[i].tid != tid)
            continue;
        /* The loaded objects the preload library records (for symbol
         * names) are not the program's calls; tests/functions checks
         * them. */
        if (rec->evs[i].event >= FLIGHTREC_EV_OBJECT_LOAD &&
            rec->evs[i].event <= FLIGHTREC_EV_OBJECT_BUILD_ID)
            continue;
        while (j < t->count && strcmp(t->lines[j].thread, thread) != 0)
            j++;
        if (j == t->count)
            TEST_FAIL("%s: extra event %u data 0x%llx (event %zu)", thread,
                      rec->evs[i].event,
                      (unsigned long long)rec->evs[i].data, i);
        if (rec->evs[i].event != t->lines[j].event ||
            rec->evs[i].data != t->lines[j].data)
            TEST_FAIL("%s: expectation %zu: event %u data 0x%llx, recorded "
                      "event %u data 0x%llx", thread, j, t->lines[j].event,
                      (unsigned long long)t->lines[j].data, rec->evs[i].event,
                      (unsigned long long)rec->evs[i].data);
        j++;
    }
    while (j < t->count && strcmp(t->lines[j].thread, thread) != 0)
        j++;
    if (j != t->count)
        TEST_FAIL("%s: expectation %zu (event %u) not recorded", thread, j,
                  t->lines[j].event);
}

/* Runs @a program (record-target, or record-wrap-target: the same program
 * linked statically with the --wrap wrappers) in @a mode under record. */
static void record_program(const char *program, const char *name,
                           const char *groups, const char *mode,
                           const char *arg, struct recording *rec,
                           struct target_output *t, int expect_status)
{
    char rec_path[4200], out_path[4200];
    snprintf(rec_path, sizeof rec_path, "%s/%s.rec", scratch, name);
    snprintf(out_path, sizeof out_path, "%s/%s.out", scratch, name);
    const char *args[] = { "-f", "-o", rec_path, "--events", groups, "--",
                           program, mode, arg, NULL };
    int status = run_record(out_path, 0, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), expect_status);
    decode(rec_path, rec);
    CHECK_EQ_I(rec->rc, 0);
    read_target_output(out_path, t);
}

static void record_mode(const char *name, const char *groups,
                        const char *mode, const char *arg,
                        struct recording *rec, struct target_output *t,
                        int expect_status)
{
    record_program(RECORD_TARGET, name, groups, mode, arg, rec, t,
                   expect_status);
}

/*=====   Cases   =====*/

TEST(io)
{
    struct recording rec;
    struct target_output t;
    record_mode("io", "io", "io", scratch, &rec, &t, 0);
    CHECK_EQ_U(t.count, 71);
    check_thread(&rec, &t, "main", rec.pid);
    rec_free(&rec);
    target_free(&t);
}

/* A fortified program's entry points (__open_2, __read_chk, ...) are
 * recorded as the calls they stand for, once each; so are ppoll and
 * epoll_pwait. */
static void check_fortified(const char *program, const char *name)
{
    struct recording rec;
    struct target_output t;
    record_program(program, name, "io", "fortified", NULL, &rec, &t, 0);
    CHECK_EQ_U(t.count, 40);
    check_thread(&rec, &t, "main", rec.pid);
    rec_free(&rec);
    target_free(&t);
}

TEST(io_fortified)
{
    check_fortified(RECORD_TARGET, "fortified");
}

/* How many @a entry events of thread @a tid have the same time as the next
 * @a exit event of that thread: the call was one record. */
static size_t one_record_calls(const struct recording *rec, int64_t tid,
                               uint32_t entry, uint32_t exit_event)
{
    size_t n = 0;
    for (size_t i = 0; i < rec->count; i++) {
        if (rec->evs[i].tid != tid || rec->evs[i].event != entry)
            continue;
        for (size_t k = i + 1; k < rec->count; k++) {
            if (rec->evs[k].tid != tid || rec->evs[k].event != exit_event)
                continue;
            n += rec->evs[k].time_ns == rec->evs[i].time_ns;
            break;
        }
    }
    return n;
}

/* How many @a event items thread @a tid recorded. */
static size_t event_count(const struct recording *rec, int64_t tid,
                          uint32_t event)
{
    size_t n = 0;
    for (size_t i = 0; i < rec->count; i++)
        n += rec->evs[i].tid == tid && rec->evs[i].event == event;
    return n;
}

TEST(memory)
{
    struct recording rec;
    struct target_output t;
    record_mode("memory", "memory", "memory", NULL, &rec, &t, 0);
    check_thread(&rec, &t, "main", rec.pid);
    /* Allocations are one record after the call, free() one item before
     * it (docs/record.md); realloc() stays two. */
    CHECK_EQ_U(one_record_calls(&rec, rec.pid, FLIGHTREC_EV_MALLOC_ENTRY,
                                FLIGHTREC_EV_MALLOC_EXIT), 1);
    CHECK_EQ_U(one_record_calls(&rec, rec.pid, FLIGHTREC_EV_CALLOC_ENTRY,
                                FLIGHTREC_EV_CALLOC_EXIT), 1);
    CHECK_EQ_U(event_count(&rec, rec.pid, FLIGHTREC_EV_FREE_ENTRY), 2);
    CHECK_EQ_U(event_count(&rec, rec.pid, FLIGHTREC_EV_FREE_EXIT), 0);
    CHECK_EQ_U(one_record_calls(&rec, rec.pid,
                                FLIGHTREC_EV_POSIX_MEMALIGN_ENTRY,
                                FLIGHTREC_EV_POSIX_MEMALIGN_EXIT), 1);
    CHECK_EQ_U(one_record_calls(&rec, rec.pid,
                                FLIGHTREC_EV_ALIGNED_ALLOC_ENTRY,
                                FLIGHTREC_EV_ALIGNED_ALLOC_EXIT), 1);
    rec_free(&rec);
    target_free(&t);
}

/* Handlers run between INTERRUPT_ENTRY and INTERRUPT_EXIT; what they
 * call is recorded in between; the program sees its own handlers. */
TEST(signals)
{
    struct recording rec;
    struct target_output t;
    record_mode("signals", "signals,memory", "signals", NULL, &rec, &t, 0);
    CHECK_EQ_U(t.count, 7);
    check_thread(&rec, &t, "main", rec.pid);
    rec_free(&rec);
    target_free(&t);
}

/* Heap at exit from the recording alone: what record-target leaked. */
TEST(heap_at_exit)
{
    struct recording rec;
    struct target_output t;
    record_mode("heap", "memory", "memory", NULL, &rec, &t, 0);
    struct { uint64_t ptr, size; } live[256];
    size_t n = 0;
    uint64_t pending_size = 0;
    for (size_t i = 0; i < rec.count; i++) {
        const struct ev *e = &rec.evs[i];
        switch (e->event) {
        case FLIGHTREC_EV_MALLOC_ENTRY:
            pending_size = e->data;
            break;
        case FLIGHTREC_EV_CALLOC_ENTRY:
            pending_size = e->data * rec.evs[i + 1].data;
            break;
        case FLIGHTREC_EV_REALLOC_ENTRY:
        case FLIGHTREC_EV_FREE_ENTRY:
            for (size_t k = 0; k < n; k++)
                if (live[k].ptr == e->data && e->data != 0)
                    live[k] = live[--n];
            if (e->event == FLIGHTREC_EV_REALLOC_ENTRY)
                pending_size = rec.evs[i + 1].data;
            break;
        case FLIGHTREC_EV_ALIGNED_ALLOC_ENTRY:
        case FLIGHTREC_EV_POSIX_MEMALIGN_ENTRY:
            pending_size = rec.evs[i + 1].data;
            break;
        case FLIGHTREC_EV_MALLOC_EXIT:
        case FLIGHTREC_EV_CALLOC_EXIT:
        case FLIGHTREC_EV_REALLOC_EXIT:
        case FLIGHTREC_EV_ALIGNED_ALLOC_EXIT:
        case FLIGHTREC_EV_POSIX_MEMALIGN_EXIT:
            if (e->data != 0) {
                CHECK(n < 256);
                live[n].ptr = e->data;
                live[n++].size = pending_size;
            }
            break;
        default:
            break;
        }
    }
    uint64_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += live[k].size;
    CHECK_EQ_U(total, t.leak);
    CHECK_EQ_U(n, 2);
    rec_free(&rec);
    target_free(&t);
}

TEST(locks)
{
    struct recording rec;
    struct target_output t;
    record_mode("locks", "locks,threads", "locks", NULL, &rec, &t, 0);
    CHECK_EQ_I(t.tid_main, rec.pid);
    check_thread(&rec, &t, "main", t.tid_main);
    check_thread(&rec, &t, "t1", t.tid_t1);
    CHECK_EQ_S(ring_name(&rec, t.tid_t1), "contender");

    /* The contended mutex: main holds it while t1 waits, t1 acquires it
     * after main's release; t1 waited at least main's 20 ms. */
    uint64_t main_acquired = 0, main_released = 0;
    uint64_t t1_attempt = 0, t1_acquired = 0;
    for (size_t i = 0; i < rec.count; i++) {
        const struct ev *e = &rec.evs[i];
        if (e->tid == t.tid_main && e->event == FLIGHTREC_EV_MUTEX_LOCK_EXIT &&
            main_acquired == 0)
            main_acquired = e->time_ns;
        if (e->tid == t.tid_main && e->event == FLIGHTREC_EV_MUTEX_UNLOCK &&
            main_released == 0)
            main_released = e->time_ns;
        if (e->tid == t.tid_t1 && e->event == FLIGHTREC_EV_MUTEX_LOCK_ENTRY)
            t1_attempt = e->time_ns;
        if (e->tid == t.tid_t1 && e->event == FLIGHTREC_EV_MUTEX_LOCK_EXIT)
            t1_acquired = e->time_ns;
    }
    /* Uncontended, main's lock was one record: the attempt at the time of
     * the acquisition (no wait); the rwlock's read and write locks too. */
    uint64_t main_attempt = 0;
    for (size_t i = 0; i < rec.count && main_attempt == 0; i++)
        if (rec.evs[i].tid == t.tid_main &&
            rec.evs[i].event == FLIGHTREC_EV_MUTEX_LOCK_ENTRY)
            main_attempt = rec.evs[i].time_ns;
    CHECK(main_attempt != 0);
    CHECK_EQ_U(main_attempt, main_acquired);
    CHECK_EQ_U(one_record_calls(&rec, t.tid_main,
                                FLIGHTREC_EV_MUTEX_LOCK_ENTRY,
                                FLIGHTREC_EV_THREAD_RESOURCE_OBTAIN), 1);
    CHECK(main_acquired < t1_attempt);
    CHECK(t1_attempt < main_released);
    CHECK(main_released <= t1_acquired);
    CHECK(t1_acquired - t1_attempt >= 20000000u);
    CHECK(main_released - main_acquired >= 20000000u);
    rec_free(&rec);
    target_free(&t);
}

/* Each thread's arrival at a barrier and its way out, with the result:
 * one thread of each round is the serial one. */
/* The index of the first FATAL_CODE (the exit status) of @a rec; the test
 * fails if there is none.  In a static --wrap program, libgcc's frame
 * deregistration takes a mutex of its own after it, at exit. */
static size_t exit_status_at(const struct recording *rec)
{
    size_t end = 0;
    while (end < rec->count && rec->evs[end].event != FLIGHTREC_EV_FATAL_CODE)
        end++;
    CHECK(end < rec->count);
    return end;
}

/* @a groups with "process" (the --wrap build): only what comes before the
 * exit status is the program's. */
static void check_barrier(const char *program, const char *name,
                          const char *groups)
{
    struct recording rec;
    struct target_output t;
    record_program(program, name, groups, "barrier", NULL, &rec, &t, 0);
    if (strstr(groups, "process") != NULL)
        rec.count = exit_status_at(&rec);
    CHECK_EQ_U(t.count, 22);
    check_thread(&rec, &t, "main", t.tid_main);
    check_thread(&rec, &t, "t1", t.tid_t1);
    int serial = 0;
    for (size_t i = 0; i < t.count; i++)
        serial += t.lines[i].event == FLIGHTREC_EV_RETURN_0 &&
                  t.lines[i].data == (uint64_t)(int64_t)
                                         PTHREAD_BARRIER_SERIAL_THREAD;
    CHECK_EQ_I(serial, 3);
    rec_free(&rec);
    target_free(&t);
}

TEST(barrier)
{
    check_barrier(RECORD_TARGET, "barrier", "locks");
}

/* `flightrec print` shows the same thing as text. */
TEST(print_shows_calls)
{
    struct recording rec;
    struct target_output t;
    record_mode("print", "memory", "memory", NULL, &rec, &t, 0);
    char rec_path[4200], out_path[4200], cmd[9000];
    snprintf(rec_path, sizeof rec_path, "%s/print.rec", scratch);
    snprintf(out_path, sizeof out_path, "%s/print.txt", scratch);
    snprintf(cmd, sizeof cmd, "'%s' print '%s' > '%s'", FLIGHTREC_BIN,
             rec_path, out_path);
    CHECK(system(cmd) == 0);
    FILE *f = fopen(out_path, "r");
    CHECK(f != NULL);
    char line[512];
    size_t j = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        /* time [ring] tid name EVENT DATA */
        char ev_name[64], data[64];
        unsigned long ring;
        if (sscanf(line, "%*s [%lu] %*s %*s %63s %63s", &ring, ev_name,
                   data) != 3)
            continue;
        if (ring >= FLIGHTREC_CPU_RING_BASE)
            continue; /* context switches, not the program's calls */
        CHECK(j < t.count);
        CHECK_EQ_U(event_id(ev_name), t.lines[j].event);
        CHECK_EQ_U(strtoull(data, NULL, 16), t.lines[j].data);
        j++;
    }
    fclose(f);
    CHECK_EQ_U(j, t.count);
    rec_free(&rec);
    target_free(&t);
}

TEST(exit_status)
{
    char rec_path[4200], out_path[4200];
    snprintf(rec_path, sizeof rec_path, "%s/exit.rec", scratch);
    snprintf(out_path, sizeof out_path, "%s/exit.out", scratch);
    const char *args[] = { "-f", "-o", rec_path, "--events", "process", "--",
                           RECORD_TARGET, "exit", "7", NULL };
    int status = run_record(out_path, 0, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 7);
    struct recording rec;
    decode(rec_path, &rec);
    CHECK_EQ_I(rec.rc, 0);
    CHECK_EQ_U(rec.count, 1);
    CHECK_EQ_U(rec.evs[0].event, FLIGHTREC_EV_FATAL_CODE);
    CHECK_EQ_U(rec.evs[0].data, 7);
    rec_free(&rec);

    const char *args2[] = { "-f", "-o", rec_path, "--events", "process", "--",
                            RECORD_TARGET, "return", "5", NULL };
    status = run_record(out_path, 0, args2);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 5);
    decode(rec_path, &rec);
    CHECK_EQ_I(rec.rc, 0);
    CHECK_EQ_U(rec.count, 1);
    CHECK_EQ_U(rec.evs[0].event, FLIGHTREC_EV_FATAL_CODE);
    CHECK_EQ_U(rec.evs[0].data, 5);
    rec_free(&rec);
}

/* Ended by SIGINT sent to record: status 130, a complete file. */
TEST(sigint)
{
    char rec_path[4200], out_path[4200];
    snprintf(rec_path, sizeof rec_path, "%s/sigint.rec", scratch);
    snprintf(out_path, sizeof out_path, "%s/sigint.out", scratch);
    const char *args[] = { "-f", "-o", rec_path, "--events", "memory", "--",
                           RECORD_TARGET, "signal", NULL };
    int status = run_record(out_path, SIGINT, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 128 + SIGINT);
    struct recording rec;
    decode(rec_path, &rec);
    CHECK_EQ_I(rec.rc, 0);
    int found = 0;
    for (size_t i = 0; i < rec.count; i++)
        if (rec.evs[i].event == FLIGHTREC_EV_MALLOC_ENTRY &&
            rec.evs[i].data == 12345)
            found = 1;
    CHECK(found);
    rec_free(&rec);
}

/* A forked child writes FILE.PID; the parent's file has its own events. */
/* A forked child writes FILE.PID; each process has its own calls. */
/* @mode: the target's way of forking ("fork", "_Fork", "clone"); the
 * parent records the fork's result except for clone() (not wrapped as a
 * call). */
static void check_fork_child_file(const char *program, const char *name,
                                  const char *mode)
{
    char rec_path[4200], out_path[4200], child_path[4300];
    snprintf(rec_path, sizeof rec_path, "%s/%s.rec", scratch, name);
    snprintf(out_path, sizeof out_path, "%s/%s.out", scratch, name);
    const char *args[] = { "-f", "-o", rec_path, "--events", "memory,process",
                           "--", program, mode, NULL };
    int status = run_record(out_path, 0, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    struct target_output t;
    read_target_output(out_path, &t);
    CHECK_EQ_I(t.child, 4);
    snprintf(child_path, sizeof child_path, "%s.%lld", rec_path,
             (long long)t.pid);
    struct stat st;
    CHECK(stat(child_path, &st) == 0);
    CHECK_EQ_U(st.st_mode & 0777, 0600);

    struct recording parent, child;
    decode(rec_path, &parent);
    decode(child_path, &child);
    CHECK_EQ_I(parent.rc, 0);
    CHECK_EQ_I(child.rc, 0);
    CHECK_EQ_I(child.pid, t.pid);
    int p111 = 0, p222 = 0, c111 = 0, c222 = 0, fork_result = 0, c_exit = 0;
    for (size_t i = 0; i < parent.count; i++) {
        p111 += parent.evs[i].event == FLIGHTREC_EV_MALLOC_ENTRY &&
                parent.evs[i].data == 111;
        p222 += parent.evs[i].event == FLIGHTREC_EV_MALLOC_ENTRY &&
                parent.evs[i].data == 222;
        fork_result += parent.evs[i].event == FLIGHTREC_EV_RETURN_0 &&
                       parent.evs[i].data == (uint64_t)t.pid;
    }
    for (size_t i = 0; i < child.count; i++) {
        c111 += child.evs[i].event == FLIGHTREC_EV_MALLOC_ENTRY &&
                child.evs[i].data == 111;
        c222 += child.evs[i].event == FLIGHTREC_EV_MALLOC_ENTRY &&
                child.evs[i].data == 222;
        c_exit += child.evs[i].event == FLIGHTREC_EV_FATAL_CODE &&
                  child.evs[i].data == 4;
    }
    CHECK_EQ_I(p111, 1);
    CHECK_EQ_I(p222, 0);
    CHECK_EQ_I(c111, 0);
    CHECK_EQ_I(c222, 1);
    CHECK_EQ_I(fork_result, strcmp(mode, "clone") != 0);
    CHECK_EQ_I(c_exit, 1);
    unlink(child_path);
    rec_free(&parent);
    rec_free(&child);
    target_free(&t);
}

TEST(fork_child_file)
{
    check_fork_child_file(RECORD_TARGET, "fork", "fork");
}

/* _Fork() and clone() without CLONE_VM run no atfork handlers: the
 * library's wrappers give their child what fork() gives. */
TEST(underscore_fork_child_file)
{
    check_fork_child_file(RECORD_TARGET, "_Fork", "_Fork");
}

TEST(clone_child_file)
{
    check_fork_child_file(RECORD_TARGET, "clone", "clone");
}

/* The image after an exec writes FILE.PID; the first image's file ends with
 * the exec call. */
TEST(exec_image_file)
{
    char rec_path[4200], out_path[4200], next_path[4300];
    snprintf(rec_path, sizeof rec_path, "%s/exec.rec", scratch);
    snprintf(out_path, sizeof out_path, "%s/exec.out", scratch);
    const char *args[] = { "-f", "-o", rec_path, "--events", "memory,process",
                           "--", RECORD_TARGET, "exec", NULL };
    int status = run_record(out_path, 0, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 9);
    struct recording first, next;
    decode(rec_path, &first);
    CHECK_EQ_I(first.rc, 0);
    snprintf(next_path, sizeof next_path, "%s.%lld", rec_path,
             (long long)first.pid);
    decode(next_path, &next);
    CHECK_EQ_I(next.rc, 0);
    CHECK_EQ_I(next.pid, first.pid);
    int m444 = 0, exec_entry = 0, fatal = 0;
    for (size_t i = 0; i < first.count; i++) {
        m444 += first.evs[i].event == FLIGHTREC_EV_MALLOC_ENTRY &&
                first.evs[i].data == 444;
        exec_entry += first.evs[i].event == FLIGHTREC_EV_FUNCTION_ENTRY;
        fatal += first.evs[i].event == FLIGHTREC_EV_FATAL_CODE;
    }
    CHECK_EQ_I(m444, 1);
    CHECK_EQ_I(exec_entry, 1);
    CHECK_EQ_I(fatal, 0);
    /* The last event of the first image is the exec. */
    CHECK_EQ_U(first.evs[first.count - 1].event, FLIGHTREC_EV_FUNCTION_ENTRY);
    CHECK_EQ_U(next.evs[next.count - 1].event, FLIGHTREC_EV_FATAL_CODE);
    CHECK_EQ_U(next.evs[next.count - 1].data, 9);
    for (size_t i = 0; i < next.count; i++)
        CHECK(!(next.evs[i].event == FLIGHTREC_EV_MALLOC_ENTRY &&
                next.evs[i].data == 444));
    rec_free(&first);
    rec_free(&next);
    unlink(next_path);
}

/* A failed exec is recorded with its errno, and recording goes on. */
TEST(exec_failure)
{
    struct recording rec;
    struct target_output t;
    record_mode("execfail", "memory,process", "execfail", NULL, &rec, &t, 0);
    static const uint32_t want[] = {
        FLIGHTREC_EV_FUNCTION_ENTRY, FLIGHTREC_EV_FUNCTION_EXIT,
        FLIGHTREC_EV_RETURN_0, FLIGHTREC_EV_ERRNO, FLIGHTREC_EV_MALLOC_ENTRY,
        FLIGHTREC_EV_MALLOC_EXIT, FLIGHTREC_EV_FREE_ENTRY,
        FLIGHTREC_EV_FATAL_CODE,
    };
    size_t n = sizeof want / sizeof want[0];
    CHECK(rec.count >= n);
    const struct ev *tail = rec.evs + rec.count - n;
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_U(tail[i].event, want[i]);
    CHECK_EQ_U(tail[2].data, UINT64_MAX);
    CHECK_EQ_U(tail[3].data, ENOENT);
    CHECK_EQ_U(tail[4].data, 555);
    CHECK_EQ_U(tail[6].data, tail[5].data); /* the block malloc returned */
    CHECK_EQ_U(tail[7].data, 0);
    rec_free(&rec);
    target_free(&t);
}

/* A program that closes every descriptor still leaves its recording. */
TEST(close_all_fds)
{
    struct recording rec;
    struct target_output t;
    record_mode("closeall", "memory", "closeall", NULL, &rec, &t, 0);
    int found = 0;
    for (size_t i = 0; i < rec.count; i++)
        found += rec.evs[i].event == FLIGHTREC_EV_MALLOC_ENTRY &&
                 rec.evs[i].data == 333;
    CHECK_EQ_I(found, 1);
    rec_free(&rec);
    target_free(&t);
}

/* The output file: created 0600, an existing one refused without -f. */
TEST(output_file)
{
    char rec_path[4200], out_path[4200];
    snprintf(rec_path, sizeof rec_path, "%s/exists.rec", scratch);
    snprintf(out_path, sizeof out_path, "%s/exists.out", scratch);
    unlink(rec_path);
    const char *args[] = { "-o", rec_path, "--events", "none", "--",
                           RECORD_TARGET, "return", "0", NULL };
    int status = run_record(out_path, 0, args);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    CHECK(stat(rec_path, &st) == 0);
    CHECK_EQ_U(st.st_mode & 0777, 0600);
    off_t size = st.st_size;
    status = run_record(out_path, 0, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 1);
    CHECK(stat(rec_path, &st) == 0);
    CHECK_EQ_I(st.st_size, size);
}

/* Before any case runs. */
__attribute__((constructor)) static void setup(void)
{
    snprintf(scratch, sizeof scratch, "%s", RECORD_TEST_DIR);
    mkdir(scratch, 0700);
    /* The recorded programs' session files (those of killed programs
     * stay) go here, not among the user's own sessions. */
    char sessions[4200];
    snprintf(sessions, sizeof sessions, "%s/sessions", scratch);
    mkdir(sessions, 0700);
    setenv("XDG_RUNTIME_DIR", sessions, 1);
}

/*=====   Losses said at the end   =====*/

struct loss_totals {
    uint64_t events, overflow, discard, missing;
};

static int count_record(const struct flightrec_record *r, void *arg)
{
    (void)r;
    (void)arg;
    return 0;
}

static struct loss_totals totals_of(const char *path)
{
    int rc;
    flightrec_client *c = decode_file(path, count_record, NULL, &rc);
    CHECK_EQ_I(rc, 0);
    struct flightrec_client_totals t;
    flightrec_client_totals(c, &t);
    flightrec_client_destroy(c);
    struct loss_totals l = { t.events, t.overflow, t.discard, t.missing };
    return l;
}

static char *read_text(const char *path)
{
    static char text[8192];
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* 100,000 lock and unlock pairs through rings of 16 items: the drain
 * cannot keep up.  record says, as its last words, how many of the
 * program's 300,000 events the file lacks and why, the figures
 * `flightrec stats` finds in it; in flight mode overwritten, in discard
 * mode dropped. */
TEST(losses_said_at_the_end)
{
    static const char *const modes[] = { "flight", "discard" };
    for (int m = 0; m < 2; m++) {
        char rec_path[4200], out_path[4200], err_path[4200];
        snprintf(rec_path, sizeof rec_path, "%s/flood-%s.rec", scratch,
                 modes[m]);
        snprintf(out_path, sizeof out_path, "%s/flood.out", scratch);
        snprintf(err_path, sizeof err_path, "%s/flood.err", scratch);
        const char *args[] = { "-f", "-o", rec_path, "--items", "16",
                               "--mode", modes[m], "--events", "locks",
                               "--no-switches", "--", RECORD_TARGET, "flood",
                               "100000", NULL };
        int status = run_record_err(out_path, err_path, 0, args);
        CHECK(WIFEXITED(status));
        CHECK_EQ_I(WEXITSTATUS(status), 0);
        struct loss_totals l = totals_of(rec_path);
        uint64_t lost = m == 0 ? l.overflow : l.discard;
        CHECK(lost > 0);
        CHECK_EQ_U(m == 0 ? l.discard : l.overflow, 0);
        CHECK_EQ_U(l.missing, 0);
        CHECK_EQ_U(l.events + lost, 300000);
        char want[8192];
        snprintf(want, sizeof want,
                 "flightrec record: '%s': %llu of 300000 events lost "
                 "(%llu %s); larger rings lose less (--items 64)\n",
                 rec_path, (unsigned long long)lost, (unsigned long long)lost,
                 m == 0 ? "overwritten before they were written out"
                        : "dropped by full rings (discard mode)");
        CHECK_EQ_S(read_text(err_path), want);
        unlink(rec_path);
    }
}

/* A forked child's file is read back too, and named as the user named
 * the recording; the parent, which lost nothing, goes unmentioned. */
TEST(losses_said_for_child_files)
{
    char rec_path[4200], out_path[4200], err_path[4200], child_path[4300];
    snprintf(rec_path, sizeof rec_path, "%s/flood-fork.rec", scratch);
    snprintf(out_path, sizeof out_path, "%s/flood-fork.out", scratch);
    snprintf(err_path, sizeof err_path, "%s/flood-fork.err", scratch);
    const char *args[] = { "-f", "-o", rec_path, "--items", "16", "--events",
                           "locks", "--no-switches", "--", RECORD_TARGET,
                           "flood", "100000", "fork", NULL };
    int status = run_record_err(out_path, err_path, 0, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    struct target_output t;
    read_target_output(out_path, &t);
    snprintf(child_path, sizeof child_path, "%s.%lld", rec_path,
             (long long)t.pid);
    struct loss_totals parent = totals_of(rec_path);
    struct loss_totals child = totals_of(child_path);
    CHECK_EQ_U(parent.events + parent.overflow, 0);
    CHECK(child.overflow > 0);
    CHECK_EQ_U(child.events + child.overflow, 300000);
    char want[8192];
    snprintf(want, sizeof want,
             "flightrec record: '%s': %llu of 300000 events lost "
             "(%llu overwritten before they were written out); larger "
             "rings lose less (--items 64)\n",
             child_path, (unsigned long long)child.overflow,
             (unsigned long long)child.overflow);
    CHECK_EQ_S(read_text(err_path), want);
    unlink(child_path);
    unlink(rec_path);
    target_free(&t);
}

/* A child still running when the program ends writes its file on: it is
 * not read back (it would show a cut file), and nothing is said of it. */
TEST(running_child_file_not_read)
{
    char rec_path[4200], out_path[4200], err_path[4200], child_path[4300];
    snprintf(rec_path, sizeof rec_path, "%s/linger.rec", scratch);
    snprintf(out_path, sizeof out_path, "%s/linger.out", scratch);
    snprintf(err_path, sizeof err_path, "%s/linger.err", scratch);
    const char *args[] = { "-f", "-o", rec_path, "--items", "16", "--events",
                           "locks", "--no-switches", "--", RECORD_TARGET,
                           "linger", NULL };
    int status = run_record_err(out_path, err_path, 0, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    CHECK_EQ_S(read_text(err_path), "");
    struct target_output t;
    read_target_output(out_path, &t);
    CHECK(t.pid > 0);
    /* The child is not ours to wait for: it ends within a second. */
    for (int i = 0; i < 500 && kill((pid_t)t.pid, 0) == 0; i++) {
        struct timespec pause_ = { 0, 10 * 1000 * 1000 };
        nanosleep(&pause_, NULL);
    }
    CHECK(kill((pid_t)t.pid, 0) != 0);
    snprintf(child_path, sizeof child_path, "%s.%lld", rec_path,
             (long long)t.pid);
    struct loss_totals child = totals_of(child_path);
    CHECK(child.overflow > 0);
    CHECK_EQ_U(child.events + child.overflow, 300000);
    unlink(child_path);
    unlink(rec_path);
    target_free(&t);
}

/* Rings that hold everything: nothing to say. */
TEST(no_losses_nothing_said)
{
    char rec_path[4200], out_path[4200], err_path[4200];
    snprintf(rec_path, sizeof rec_path, "%s/calm.rec", scratch);
    snprintf(out_path, sizeof out_path, "%s/calm.out", scratch);
    snprintf(err_path, sizeof err_path, "%s/calm.err", scratch);
    const char *args[] = { "-f", "-o", rec_path, "--items", "65536",
                           "--events", "locks", "--no-switches", "--",
                           RECORD_TARGET, "flood", "1000", NULL };
    int status = run_record_err(out_path, err_path, 0, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    struct loss_totals l = totals_of(rec_path);
    CHECK_EQ_U(l.events, 3000);
    CHECK_EQ_U(l.overflow + l.discard + l.missing, 0);
    CHECK_EQ_S(read_text(err_path), "");
    unlink(rec_path);
}

TEST_MAIN()

/*=====   The --wrap build: a static program   =====*/

/* record-wrap-target is record-target linked with -static and
 * flightrec_wrap(): LD_PRELOAD cannot reach it; the recording must hold
 * the same events. */
TEST(wrap_io)
{
    struct recording rec;
    struct target_output t;
    record_program(RECORD_WRAP_TARGET, "wrap-io", "io", "io", scratch, &rec,
                   &t, 0);
    CHECK_EQ_U(t.count, 71);
    check_thread(&rec, &t, "main", rec.pid);
    rec_free(&rec);
    target_free(&t);
}

TEST(wrap_io_fortified)
{
    check_fortified(RECORD_WRAP_TARGET, "wrap-fortified");
}

TEST(wrap_barrier)
{
    check_barrier(RECORD_WRAP_TARGET, "wrap-barrier", "locks,process");
}

TEST(wrap_memory)
{
    struct recording rec;
    struct target_output t;
    record_program(RECORD_WRAP_TARGET, "wrap-memory", "memory", "memory",
                   NULL, &rec, &t, 0);
    check_thread(&rec, &t, "main", rec.pid);
    CHECK_EQ_U(t.count, 22);
    CHECK_EQ_U(one_record_calls(&rec, rec.pid, FLIGHTREC_EV_MALLOC_ENTRY,
                                FLIGHTREC_EV_MALLOC_EXIT), 1);
    CHECK_EQ_U(event_count(&rec, rec.pid, FLIGHTREC_EV_FREE_ENTRY), 2);
    CHECK_EQ_U(event_count(&rec, rec.pid, FLIGHTREC_EV_FREE_EXIT), 0);
    rec_free(&rec);
    target_free(&t);
}

TEST(wrap_locks)
{
    struct recording rec;
    struct target_output t;
    record_program(RECORD_WRAP_TARGET, "wrap-locks", "locks,threads,process",
                   "locks", NULL, &rec, &t, 0);
    /* After the exit status come the calls of exit handlers and destructors
     * (exit_status_at()).  The program's calls are those before. */
    size_t end = exit_status_at(&rec);
    CHECK_EQ_U(rec.evs[end].data, 0);
    rec.count = end;
    CHECK_EQ_I(t.tid_main, rec.pid);
    check_thread(&rec, &t, "main", t.tid_main);
    check_thread(&rec, &t, "t1", t.tid_t1);
    CHECK_EQ_S(ring_name(&rec, t.tid_t1), "contender");
    rec_free(&rec);
    target_free(&t);
}

TEST(wrap_signals)
{
    struct recording rec;
    struct target_output t;
    record_program(RECORD_WRAP_TARGET, "wrap-signals", "signals,memory",
                   "signals", NULL, &rec, &t, 0);
    CHECK_EQ_U(t.count, 7);
    check_thread(&rec, &t, "main", rec.pid);
    rec_free(&rec);
    target_free(&t);
}

/* exit() and a return from main() (libc's own exit() call, wrapped in a
 * static program): one FATAL_CODE with the status.  With locks on, what
 * follows it is the exit handlers' own locking (libgcc's lock of its frame
 * tables: one mutex), never the library's test of its drain lock. */
TEST(wrap_exit_status)
{
    struct recording locks;
    struct target_output lt;
    record_program(RECORD_WRAP_TARGET, "wrap-exit-locks", "process,locks",
                   "exit", "3", &locks, &lt, 3);
    CHECK(locks.count >= 1);
    CHECK_EQ_U(locks.evs[0].event, FLIGHTREC_EV_FATAL_CODE);
    for (size_t i = 1; i < locks.count; i++)
        CHECK_EQ_U(locks.evs[i].data, locks.evs[1].data);
    rec_free(&locks);
    target_free(&lt);

    const char *modes[][2] = { { "exit", "7" }, { "return", "5" } };
    for (size_t i = 0; i < 2; i++) {
        struct recording rec;
        struct target_output t;
        record_program(RECORD_WRAP_TARGET, "wrap-exit", "process",
                       modes[i][0], modes[i][1], &rec, &t,
                       atoi(modes[i][1]));
        CHECK_EQ_U(rec.count, 1);
        CHECK_EQ_U(rec.evs[0].event, FLIGHTREC_EV_FATAL_CODE);
        CHECK_EQ_U(rec.evs[0].data, (uint64_t)atoi(modes[i][1]));
        rec_free(&rec);
        target_free(&t);
    }
}

TEST(wrap_fork_child_file)
{
    check_fork_child_file(RECORD_WRAP_TARGET, "wrap-fork", "fork");
}

/* A shell that execs: the program after the exec records into a session
 * of its own, and nothing is said (before: "cannot create
 * ...region: File exists", the pid and start time being the same). */
TEST(exec_gets_a_session_of_its_own)
{
    char dir[4200], rec_path[4300], err_path[4300], cmd[13000];
    snprintf(dir, sizeof dir, "%s/exec-session", scratch);
    mkdir(dir, 0700);
    snprintf(rec_path, sizeof rec_path, "%s/sh.rec", dir);
    snprintf(err_path, sizeof err_path, "%s/sh.err", dir);
    snprintf(cmd, sizeof cmd,
             "XDG_RUNTIME_DIR='%s' %s record -f -o '%s' -- sh -c "
             "'exec /bin/true' 2>'%s'",
             dir, FLIGHTREC_BIN, rec_path, err_path);
    int status = system(cmd);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    FILE *f = fopen(err_path, "r");
    CHECK(f != NULL);
    char err[1024];
    size_t n = fread(err, 1, sizeof err - 1, f);
    err[n] = '\0';
    fclose(f);
    CHECK_EQ_S(err, "");
    /* Both images' recordings are complete. */
    struct recording first, next;
    decode(rec_path, &first);
    CHECK_EQ_I(first.rc, 0);
    char next_path[4400];
    snprintf(next_path, sizeof next_path, "%s.%lld", rec_path,
             (long long)first.pid);
    decode(next_path, &next);
    CHECK_EQ_I(next.rc, 0);
    CHECK_EQ_I(next.pid, first.pid);
    rec_free(&first);
    rec_free(&next);
}
