/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Races found in review of the ring region runtime, each a case that
 * failed before its fix: losses of owners of reused rings, a drain copying
 * a ring its new owner refills, a thread's exit racing a drain, fork inside
 * a first record, a refused first drain, a program recording the
 * recorder's own ids.
 */
#include "producer-test.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int32_t gettid_now(void)
{
    return (int32_t)syscall(SYS_gettid);
}

static void setup_retained(uint32_t items, int mode, uint32_t retained)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = items;
    config.mode = mode;
    config.retained_rings = retained;
    CHECK_EQ_I(flightrec_setup(&config), 0);
}

struct phase_worker {
    int first, second;          /* events before / after the go signal */
    sem_t ready, go;
    int32_t tid;
};

static void *phase_thread(void *p)
{
    struct phase_worker *w = p;
    w->tid = gettid_now();
    for (int i = 0; i < w->first; i++)
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    sem_post(&w->ready);
    sem_wait(&w->go);
    for (int i = 0; i < w->second; i++)
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)(w->first + i));
    return NULL;
}

/* Runs a thread: @first events, (drain if @drain_between), @second events,
 * exit.  Returns its tid. */
static int32_t run_worker(int first, int second, int fd, int drain_between)
{
    struct phase_worker w = { .first = first, .second = second };
    sem_init(&w.ready, 0, 0);
    sem_init(&w.go, 0, 0);
    pthread_t t;
    CHECK_EQ_I(pthread_create(&t, NULL, phase_thread, &w), 0);
    sem_wait(&w.ready);
    if (drain_between)
        CHECK_EQ_I(flightrec_drain(fd), 0);
    sem_post(&w.go);
    CHECK_EQ_I(pthread_join(t, NULL), 0);
    return w.tid;
}

/* Everything each tid recorded is delivered or reported lost. */
static uint64_t accounted_for(const struct sp_stream *s, int32_t tid)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->chunk_count; i++) {
        const struct sp_chunk *c = &s->chunks[i];
        if (c->tid != tid || c->context != 0)
            continue;
        n += c->overflow;
        for (size_t j = 0; j < c->count; j++)
            n += c->items[j].event == FLIGHTREC_USER(1);
    }
    return n;
}

/* A ring reused twice between two drains: A's unread events vanish (only
 * the last previous owner is kept). */
TEST(reused_twice_between_drains)
{
    setup_retained(64, FLIGHTREC_MODE_FLIGHT, 0);
    FILE *file = tmpfile();
    int fd = fileno(file);
    int32_t a = run_worker(5, 10, fd, 1);   /* 5 drained, 10 unread */
    int32_t b = run_worker(7, 0, fd, 0);    /* takes A's retired pair */
    int32_t c = run_worker(3, 0, fd, 0);    /* takes B's retired pair */
    CHECK_EQ_I(flightrec_drain(fd), 0);
    struct sp_stream s;
    parse_file(&s, file);
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    CHECK_EQ_U(accounted_for(&s, b), 7);
    CHECK_EQ_U(accounted_for(&s, c), 3);
    /* A's 5 drained; its 10 unread events are counted, though no longer
     * under its identity (only one previous owner is kept). */
    CHECK_EQ_U(accounted_for(&s, a), 5);
    CHECK_EQ_U(stats.lost_without_ring, 10);
    sp_free(&s);
}

/* A ring reused before any drain read it: the first owner's events are
 * neither delivered nor reported lost (reader_generation == 0). */
TEST(reused_before_first_drain)
{
    setup_retained(64, FLIGHTREC_MODE_FLIGHT, 0);
    FILE *file = tmpfile();
    int fd = fileno(file);
    CHECK_EQ_I(flightrec_drain(fd), 0);     /* the stream has started */
    int32_t a = run_worker(10, 0, fd, 0);
    int32_t b = run_worker(4, 0, fd, 0);    /* takes A's retired pair */
    CHECK_EQ_I(flightrec_drain(fd), 0);
    struct sp_stream s;
    parse_file(&s, file);
    fprintf(stderr, "A %" PRIu64 " of 10, B %" PRIu64 " of 4\n",
            accounted_for(&s, a), accounted_for(&s, b));
    CHECK_EQ_U(accounted_for(&s, b), 4);
    CHECK_EQ_U(accounted_for(&s, a), 10);
    sp_free(&s);
}

/*=====   Discard mode: a drain copying a retired ring that is reused   =====*/

#define BIG_RING 65536u
static _Atomic int copy_go, fill_done;

static void *fill_thread(void *p)
{
    uintptr_t tag = (uintptr_t)p << 32;
    while (!atomic_load(&copy_go))
        sched_yield();
    for (uintptr_t i = 0; i < BIG_RING; i++)
        flightrec_produce(FLIGHTREC_USER(1), tag | i);
    atomic_store(&fill_done, 1);
    return NULL;
}

static void *first_owner(void *p)
{
    uintptr_t tag = (uintptr_t)p << 32;
    for (uintptr_t i = 0; i < BIG_RING; i++)
        flightrec_produce(FLIGHTREC_USER(1), tag | i);
    return NULL;
}

/* Reads the drain's pipe; once the drain is blocked in its first write
 * (in the middle of copying A's ring), lets B run to its end. */
struct pipe_reader {
    int fd;
    unsigned char *bytes;
    size_t len, cap;
};

static void *pipe_reader_thread(void *p)
{
    struct pipe_reader *r = p;
    for (;;) {
        if (r->len == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 1 << 20;
            r->bytes = realloc(r->bytes, r->cap);
        }
        ssize_t n = read(r->fd, r->bytes + r->len, r->cap - r->len);
        if (n <= 0)
            break;
        if (r->len == 0) {
            atomic_store(&copy_go, 1);
            while (!atomic_load(&fill_done))
                sched_yield();
        }
        r->len += (size_t)n;
    }
    return NULL;
}

static int foreign_items(const struct sp_stream *s)
{
    int bad = 0;
    for (size_t i = 0; i < s->chunk_count; i++) {
        const struct sp_chunk *c = &s->chunks[i];
        uint64_t tag = 0, foreign = 0;
        for (size_t j = 0; j < c->count; j++) {
            if (c->items[j].event != FLIGHTREC_USER(1))
                continue;
            uint64_t t = c->items[j].data >> 32;
            if (tag == 0)
                tag = t;
            foreign += t != tag;
        }
        if (foreign != 0) {
            fprintf(stderr, "chunk %zu (tid %" PRId64 ", %zu items) holds %"
                    PRIu64 " items of another owner\n", i, c->tid, c->count,
                    foreign);
            bad++;
        }
    }
    return bad;
}

static void reuse_during_copy(int mode)
{
    setup_retained(BIG_RING, mode, 0);
    int pipe_fds[2];
    CHECK_EQ_I(pipe(pipe_fds), 0);
    struct pipe_reader reader = { .fd = pipe_fds[0] };
    pthread_t a, b, r;
    /* A fills its ring and exits: retired, unread. */
    CHECK_EQ_I(pthread_create(&a, NULL, first_owner, (void *)1), 0);
    CHECK_EQ_I(pthread_join(a, NULL), 0);
    /* B takes A's pair (retained 0) while the drain copies A's items. */
    CHECK_EQ_I(pthread_create(&b, NULL, fill_thread, (void *)2), 0);
    CHECK_EQ_I(pthread_create(&r, NULL, pipe_reader_thread, &reader), 0);
    CHECK_EQ_I(flightrec_drain(pipe_fds[1]), 0);
    CHECK_EQ_I(pthread_join(b, NULL), 0);
    CHECK_EQ_I(flightrec_drain(pipe_fds[1]), 0);
    close(pipe_fds[1]);
    CHECK_EQ_I(pthread_join(r, NULL), 0);
    struct sp_stream s;
    sp_parse(&s, reader.bytes, reader.len);
    free(reader.bytes);
    int bad = foreign_items(&s);
    sp_free(&s);
    CHECK_EQ_I(bad, 0);
}

TEST(discard_reuse_during_copy) { reuse_during_copy(FLIGHTREC_MODE_DISCARD); }
TEST(flight_reuse_during_copy) { reuse_during_copy(FLIGHTREC_MODE_FLIGHT); }

/*=====   A thread's exit racing a drain (TSan)   =====*/

static void *short_writer(void *p)
{
    (void)p;
    for (int i = 0; i < 50; i++)
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    return NULL;
}

static _Atomic int exits_done;

static void *drainer(void *p)
{
    int fd = *(int *)p;
    while (!atomic_load(&exits_done))
        CHECK_EQ_I(flightrec_drain(fd), 0);
    return NULL;
}

TEST(exit_races_drain)
{
    setup_retained(64, FLIGHTREC_MODE_FLIGHT, 4);
    FILE *file = tmpfile();
    int fd = fileno(file);
    pthread_t r;
    CHECK_EQ_I(pthread_create(&r, NULL, drainer, &fd), 0);
    for (int i = 0; i < 300; i++) {
        pthread_t t;
        CHECK_EQ_I(pthread_create(&t, NULL, short_writer, NULL), 0);
        CHECK_EQ_I(pthread_join(t, NULL), 0);
    }
    atomic_store(&exits_done, 1);
    CHECK_EQ_I(pthread_join(r, NULL), 0);
    fclose(file);
}

/*=====   fork() inside a record whose sync pair is pending   =====*/

TEST(fork_inside_first_record)
{
    FILE *file = tmpfile();
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);    /* first event: attach, sync pair pending */
    flightrec_add(&ctx, FLIGHTREC_USER(3), 3);
    pid_t child = fork();       /* as a signal handler might, mid-record */
    if (child == 0) {
        flightrec_add(&ctx, FLIGHTREC_USER(4), 4);
        flightrec_commit(&ctx);
        _exit(flightrec_dump(fileno(file)) == 0 ? 0 : 1);
    }
    flightrec_commit(&ctx);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct sp_stream s;
    parse_file(&s, file);
    const struct sp_chunk *c = chunk_of(&s, 0);
    CHECK(c != NULL);
    struct sp_item items[8];
    CHECK_EQ_U(user_items(&s, 0, items, 8), 2);
    fprintf(stderr, "child's chunk: position %u overflow %" PRIu64 "\n",
            c->position, c->overflow);
    /* Nothing of the child's own record was lost. */
    CHECK_EQ_U(c->overflow, 0);
    CHECK_EQ_U(c->position, 0);
    sp_free(&s);
}

/*=====   A drain whose whole output was refused (EAGAIN)   =====*/

TEST(refused_first_drain_loses_header)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    int fds[2];
    CHECK_EQ_I(pipe(fds), 0);
    CHECK_EQ_I(fcntl(fds[1], F_SETFL, O_NONBLOCK), 0);
    char junk[4096];
    memset(junk, 0, sizeof(junk));
    while (write(fds[1], junk, sizeof(junk)) > 0)
        ;
    CHECK(flightrec_drain(fds[1]) != 0);    /* pipe full: EAGAIN */
    /* The reader empties the pipe; the next drain goes through. */
    CHECK_EQ_I(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
    while (read(fds[0], junk, sizeof(junk)) > 0)
        ;
    flightrec_produce(FLIGHTREC_USER(1), 2);
    CHECK_EQ_I(flightrec_drain(fds[1]), 0);
    uint32_t start[2] = { 0, 0 };
    CHECK(read(fds[0], start, sizeof(start)) == (ssize_t)sizeof(start));
    fprintf(stderr, "stream on the pipe begins %08x %08x\n", start[0],
            start[1]);
    /* What the pipe's reader gets must be a stream: format word, magic,
     * then the header facts (version first). */
    CHECK_EQ_U(start[1], FLIGHTREC_MAGIC);
    uint32_t first_item[3] = { 0, 0, 0 };
    CHECK(read(fds[0], first_item, sizeof(first_item)) ==
          (ssize_t)sizeof(first_item));
    fprintf(stderr, "first item: event %u data %u\n",
            FLIGHTREC_GET_EVENT(first_item[0]), first_item[1]);
    CHECK_EQ_U(FLIGHTREC_GET_EVENT(first_item[0]), FLIGHTREC_EV_VERSION);
}

/*=====   The program records an event with a recorder item's id   =====*/

TEST(program_records_uptime_id)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    flightrec_produce(FLIGHTREC_EV_UPTIME_LOW, 7);  /* the API takes it */
    flightrec_produce(FLIGHTREC_USER(1), 2);
    struct sp_stream s;
    capture(&s, 1);
    const struct sp_chunk *c = chunk_of(&s, 0);
    CHECK(c != NULL);
    fprintf(stderr, "chunk: position %u overflow %" PRIu64 " items %zu\n",
            c->position, c->overflow, c->count);
    CHECK_EQ_U(c->overflow, 0);     /* nothing was lost */
    sp_free(&s);
}

TEST_MAIN()
