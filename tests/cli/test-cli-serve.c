/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec serve from the clients' side (docs/format.md section 10): a
 * real recording process, the real command, raw loopback sockets in this
 * program, and what each client received decoded by the client library.
 * Bounded in time: every wait has a limit, and the programs stop by
 * themselves.
 */
#include <flightrec.h>
#include <flightrec/client.h>
#include <flightrec/events.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define THREADS 2
#define ITEM_SIZE (4 + sizeof(uintptr_t))

static char scratch[512];

static void use_own_sessions(const char *name)
{
    snprintf(scratch, sizeof(scratch), "%s/serve-%s-%d", CLI_TEST_DIR, name,
             (int)getpid());
    mkdir(scratch, 0700);
    CHECK_EQ_I(setenv("XDG_RUNTIME_DIR", scratch, 1), 0);
    signal(SIGPIPE, SIG_IGN);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*=====   The recording process   =====*/

struct side_log {
    _Atomic uint64_t done[THREADS];
    _Atomic int32_t tid[THREADS];
    _Atomic int started;
    _Atomic int go;         /* the threads may record */
    _Atomic unsigned port;  /* of the in-process server */
    _Atomic int drain_rc;   /* flightrec_drain() while it runs */
};

static struct side_log *side;

struct recorder_args {
    uint64_t events;
    unsigned pause_every;   /* 1 ms pause every so many events */
};

static struct recorder_args rec_args;

static void *recorder(void *arg)
{
    uintptr_t index = (uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof(name), "rec-%u", (unsigned)index);
    pthread_setname_np(pthread_self(), name);
    atomic_store(&side->tid[index], (int32_t)gettid());
    flightrec_produce(FLIGHTREC_USER(100), 0); /* makes the session */
    atomic_fetch_add(&side->started, 1);
    while (!atomic_load(&side->go))
        usleep(1000);
    for (uint64_t i = 0; i < rec_args.events; i++) {
        flightrec_produce(FLIGHTREC_USER(index), (uintptr_t)i);
        atomic_store(&side->done[index], i + 1);
        if (rec_args.pause_every != 0 && (i + 1) % rec_args.pause_every == 0)
            usleep(1000);
    }
    return NULL;
}

/* A process recording @events per thread in discard mode once side->go
 * is set, then exiting; its session exists when this returns. */
static pid_t start_recorder_in(uint64_t events, unsigned pause_every,
                               int server)
{
    side = mmap(NULL, sizeof(*side), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(side != MAP_FAILED);
    memset(side, 0, sizeof(*side));
    rec_args.events = events;
    rec_args.pause_every = pause_every;
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphan if a check fails */
        struct flightrec_config config;
        flightrec_config_init(&config);
        config.items_per_ring = 1u << 17; /* 0.6 s of a stalled server */
        config.mode = FLIGHTREC_MODE_DISCARD;
        if (flightrec_setup(&config) != 0)
            _exit(2);
        if (server) {
            if (flightrec_server_start("127.0.0.1", 0, 10) != 0)
                _exit(3);
            atomic_store(&side->drain_rc, flightrec_drain(-1));
            atomic_store(&side->port, flightrec_server_port());
        }
        pthread_t t[THREADS];
        for (uintptr_t i = 0; i < THREADS; i++)
            pthread_create(&t[i], NULL, recorder, (void *)i);
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
        /* A moment for the server to see the last events before exit. */
        exit(0);
    }
    for (int i = 0; i < 10000 && atomic_load(&side->started) < THREADS; i++)
        usleep(1000);
    CHECK_EQ_I(atomic_load(&side->started), THREADS);
    return child;
}

static pid_t start_recorder(uint64_t events, unsigned pause_every)
{
    return start_recorder_in(events, pause_every, 0);
}

/*=====   The server   =====*/

struct server {
    pid_t pid;
    int err_fd;         /* its standard error */
    unsigned port;
    char err[8192];
    size_t err_len;
};

/* Reads the server's standard error for up to @ms, or until @text shows. */
static int server_wait_for(struct server *s, const char *text, unsigned ms)
{
    uint64_t end = now_ms() + ms;
    while (strstr(s->err, text) == NULL) {
        uint64_t now = now_ms();
        if (now >= end)
            return -1;
        struct pollfd p = { s->err_fd, POLLIN, 0 };
        if (poll(&p, 1, (int)(end - now)) <= 0)
            continue;
        ssize_t n = read(s->err_fd, s->err + s->err_len,
                         sizeof(s->err) - 1 - s->err_len);
        if (n <= 0)
            return -1;
        s->err_len += (size_t)n;
        s->err[s->err_len] = '\0';
    }
    return 0;
}

/* Starts `flightrec serve --listen 127.0.0.1:0 ARGS...` and learns its
 * port. */
static void start_server(struct server *s, const char *const *args)
{
    memset(s, 0, sizeof(*s));
    int fds[2];
    CHECK_EQ_I(pipe2(fds, O_CLOEXEC), 0);
    s->pid = fork();
    CHECK(s->pid >= 0);
    if (s->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(fds[1], 2);
        const char *argv[32] = { "flightrec", "serve", "--listen",
                                 "127.0.0.1:0" };
        size_t n = 4;
        for (size_t i = 0; args[i] != NULL && n < 31; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        execv(FLIGHTREC_BIN, (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    s->err_fd = fds[0];
    CHECK_EQ_I(server_wait_for(s, "listening on 127.0.0.1:", 10000), 0);
    s->port = (unsigned)atoi(strstr(s->err, "listening on 127.0.0.1:") +
                             strlen("listening on 127.0.0.1:"));
    CHECK(s->port != 0);
}

static int server_status(struct server *s, unsigned ms)
{
    int status = -1;
    uint64_t end = now_ms() + ms;
    while (now_ms() < end) {
        pid_t done = waitpid(s->pid, &status, WNOHANG);
        if (done == s->pid)
            break;
        usleep(10000);
    }
    (void)server_wait_for(s, "\x01", 0); /* what it said */
    close(s->err_fd);
    return status;
}

/*=====   Clients   =====*/

static int connect_to(unsigned port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    if (rcvbuf != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK_EQ_I(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

struct received {
    int fd;
    unsigned char *bytes;
    size_t len, cap;
    int closed;
};

static void receive_some(struct received *r)
{
    if (r->len + 65536 > r->cap) {
        r->cap = r->cap ? r->cap * 2 : 1u << 20;
        r->bytes = realloc(r->bytes, r->cap);
        CHECK(r->bytes != NULL);
    }
    ssize_t n = recv(r->fd, r->bytes + r->len, r->cap - r->len, MSG_DONTWAIT);
    if (n > 0)
        r->len += (size_t)n;
    else if (n == 0 || (errno != EAGAIN && errno != EINTR))
        r->closed = 1;
}

/* Reads every client in @r until all closed or @ms passed. */
static void receive_all(struct received *r, size_t n, unsigned ms)
{
    uint64_t end = now_ms() + ms;
    for (;;) {
        struct pollfd p[32];
        size_t open = 0, map[32];
        for (size_t i = 0; i < n; i++)
            if (!r[i].closed) {
                p[open].fd = r[i].fd;
                p[open].events = POLLIN;
                map[open++] = i;
            }
        uint64_t now = now_ms();
        if (open == 0 || now >= end)
            return;
        if (poll(p, open, (int)(end - now)) <= 0)
            continue;
        for (size_t i = 0; i < open; i++)
            if (p[i].revents)
                receive_some(&r[map[i]]);
    }
}

static int ends_with_stream_end(const struct received *r)
{
    if (getenv("SERVE_DEBUG") && r->len >= ITEM_SIZE) {
        uint32_t w;
        memcpy(&w, r->bytes + r->len - ITEM_SIZE, 4);
        fprintf(stderr, "len %zu last id %u\n", r->len, (unsigned)(w & 1023));
    }
    if (r->len < 8 + ITEM_SIZE || (r->len - 8) % ITEM_SIZE != 0)
        return 0;
    uint32_t word;
    memcpy(&word, r->bytes + r->len - ITEM_SIZE, 4);
    return FLIGHTREC_GET_EVENT(word) == FLIGHTREC_EV_STREAM_END;
}

/*=====   Decoding   =====*/

struct per_thread {
    int32_t tid;
    uint64_t events, first, next, lost, torn;
    uint64_t gaps;      /* events skipped in the numbering */
    uint64_t opening;   /* the USER(100) each thread records first */
};

struct decoded {
    struct per_thread t[THREADS];
    uint64_t others;    /* events of threads that are not the recorders */
    int64_t pid;
    int rc;
};

/* Each thread's events in its own numbering: the opening USER(100) is 0,
 * USER(i) with data d is d + 1.  An event may never come twice or out of
 * order; the numbers it skips (gaps, and after the last one) must be
 * exactly the losses the stream reports for the thread (a discard is
 * reported in the chunk after the drops, wherever they fell). */
static int on_record(const struct flightrec_record *rec, void *arg)
{
    struct decoded *d = arg;
    struct per_thread *t = NULL;
    for (int i = 0; i < THREADS; i++)
        if (rec->ring_info != NULL && rec->ring_info->thread_id == d->t[i].tid)
            t = &d->t[i];
    if (t == NULL) {
        d->others += rec->type == FLIGHTREC_RECORD_EVENT;
        return 0;
    }
    if (rec->type == FLIGHTREC_RECORD_LOSS) {
        t->lost += rec->loss_count;
        return 0;
    }
    if (rec->type != FLIGHTREC_RECORD_EVENT)
        return 0;
    uint64_t number;
    if (rec->event == FLIGHTREC_USER(100)) {
        t->opening++;
        number = 0;
    } else if (rec->event == FLIGHTREC_USER((uint32_t)(t - d->t))) {
        if (t->events == 0)
            t->first = rec->data;
        t->events++;
        number = rec->data + 1;
    } else {
        t->torn++;
        return 0;
    }
    if (number < t->next) {
        if (t->torn < 4)
            fprintf(stderr, "thread %d: event %llu after %llu (offset %llu, "
                    "ring %u)\n", (int)(t - d->t),
                    (unsigned long long)number,
                    (unsigned long long)t->next - 1,
                    (unsigned long long)rec->offset, rec->ring);
        t->torn++;
    } else {
        t->gaps += number - t->next;
    }
    t->next = number + 1;
    return 0;
}

static void decode(const unsigned char *bytes, size_t len, struct decoded *d)
{
    memset(d, 0, sizeof(*d));
    for (int i = 0; i < THREADS; i++)
        d->t[i].tid = atomic_load(&side->tid[i]);
    struct flightrec_client_options options = { .on_record = on_record,
                                                .arg = d };
    flightrec_client *client;
    CHECK_EQ_I(flightrec_client_create(&client, &options), 0);
    d->rc = flightrec_client_feed(client, bytes, len);
    if (d->rc == 0)
        d->rc = flightrec_client_finish(client);
    if (d->rc != 0)
        fprintf(stderr, "decoder: %s\n", flightrec_client_message(client));
    d->pid = flightrec_client_info(client)->process_id;
    flightrec_client_destroy(client);
}

/* Every event of every thread, once, in order, and no loss. */
static void check_everything(const struct received *r, uint64_t events,
                             pid_t pid)
{
    CHECK(ends_with_stream_end(r));
    struct decoded d;
    decode(r->bytes, r->len, &d);
    if (getenv("SERVE_SAVE") && (d.t[0].torn || d.t[1].torn)) {
        FILE *f = fopen(getenv("SERVE_SAVE"), "wb");
        fwrite(r->bytes, 1, r->len, f);
        fclose(f);
    }
    CHECK_EQ_I(d.rc, 0);
    CHECK_EQ_I(d.pid, pid);
    CHECK_EQ_U(d.others, 0); /* the server thread recorded nothing */
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ_U(d.t[i].torn, 0);
        CHECK_EQ_U(d.t[i].first, 0);
        CHECK_EQ_U(d.t[i].events, events);
        CHECK_EQ_U(d.t[i].opening, 1);
        CHECK_EQ_U(d.t[i].lost, 0);
    }
}

/* The events received, once and in order, and the rest counted as lost,
 * exactly. */
static void check_exact_losses(const struct received *r, uint64_t events,
                               int has_last, uint64_t *lost_total)
{
    CHECK(ends_with_stream_end(r));
    struct decoded d;
    decode(r->bytes, r->len, &d);
    CHECK_EQ_I(d.rc, 0);
    *lost_total = 0;
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ_U(d.t[i].torn, 0);
        CHECK_EQ_U(d.t[i].opening + d.t[i].events + d.t[i].lost, 1 + events);
        /* What is missing is exactly what is reported lost. */
        CHECK_EQ_U(d.t[i].gaps + (1 + events - d.t[i].next), d.t[i].lost);
        if (has_last)
            CHECK_EQ_U(d.t[i].first + d.t[i].events, events);
        *lost_total += d.t[i].lost;
    }
}

static void send_text(int fd, const char *text)
{
    CHECK_EQ_I(send(fd, text, strlen(text), MSG_NOSIGNAL), (int)strlen(text));
}

/*=====   Cases   =====*/

#define MANY_EVENTS 400000u

/* Eight clients from the start: seven readers (one sends garbage first),
 * one that never reads; one more leaves in the middle of a chunk and one
 * comes late. */
static void eight_clients(unsigned port, pid_t child)
{
    struct received r[9];
    memset(r, 0, sizeof(r));
    for (int i = 0; i < 9; i++)
        r[i].fd = connect_to(port, i == 7 ? 4096 : 0);
    unsigned char garbage[4096];
    srand(7);
    for (size_t i = 0; i < sizeof(garbage); i++)
        garbage[i] = (unsigned char)rand();
    CHECK_EQ_I(send(r[0].fd, garbage, sizeof(garbage), MSG_NOSIGNAL),
               (int)sizeof(garbage));
    atomic_store(&side->go, 1);
    /* The leaver takes a few bytes, not a whole number of items. */
    while (r[8].len < 1001 && !r[8].closed)
        receive_all(&r[8], 1, 50);
    close(r[8].fd);
    r[8].closed = 1;
    /* A late one, when the rings no longer hold the first events. */
    struct received late;
    memset(&late, 0, sizeof(late));
    while (atomic_load(&side->done[0]) < MANY_EVENTS / 2 ||
           atomic_load(&side->done[1]) < MANY_EVENTS / 2)
        receive_all(r, 7, 5);
    late.fd = connect_to(port, 0);
    struct received readers[8];
    memcpy(readers, r, 7 * sizeof(r[0]));
    readers[7] = late;
    receive_all(readers, 8, 60000);
    /* Nobody waited for the stuck client: the readers have the end of the
     * stream, and the stuck one has not read a byte.  It reads now (a
     * program that exits gives it a moment for that). */
    receive_all(&r[7], 1, 30000);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 7; i++) {
        CHECK(readers[i].closed);
        check_everything(&readers[i], MANY_EVENTS, child);
    }
    /* The late one: the events after what the rings had lost when it
     * came, each where the losses before it say (a reader that falls
     * behind on a loaded machine may lose chunks too, counted). */
    uint64_t lost;
    check_exact_losses(&readers[7], MANY_EVENTS, 0, &lost);
    CHECK(lost > 0); /* it came when the first events were long gone */
    struct decoded late_decoded;
    decode(readers[7].bytes, readers[7].len, &late_decoded);
    for (int i = 0; i < THREADS; i++)
        CHECK(late_decoded.t[i].events > 0);
    /* The stuck client: what its queue held, then losses that add up
     * exactly, and the end of the stream. */
    CHECK(r[7].closed);
    check_exact_losses(&r[7], MANY_EVENTS, 0, &lost);
    CHECK(lost > 0);
    /* Bounded memory for it: all it ever got is its queue (4 MiB), the
     * kernel's buffers (1 MiB send buffer, which Linux doubles, and 4 KiB
     * to receive) and the markers, of a 9.6 MB stream. */
    CHECK(r[7].len < (7u << 20));
    CHECK(readers[0].len > (9u << 20));
    struct decoded stuck;
    decode(r[7].bytes, r[7].len, &stuck);
    for (int i = 0; i < THREADS; i++)
        CHECK(stuck.t[i].events > 0); /* its queue's worth */
    for (int i = 0; i < 8; i++) {
        close(readers[i].fd);
        free(readers[i].bytes);
    }
    close(r[7].fd);
    free(r[7].bytes);
    free(r[8].bytes);
}

TEST(eight_clients_one_stuck)
{
    use_own_sessions("eight");
    pid_t child = start_recorder(MANY_EVENTS, 200);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
    struct server srv;
    const char *args[] = { pid_text, NULL };
    start_server(&srv, args);
    eight_clients(srv.port, child);
    CHECK_EQ_I(server_status(&srv, 20000), 0);
}

TEST(in_process_server_eight_clients)
{
    use_own_sessions("inproc");
    pid_t child = start_recorder_in(MANY_EVENTS, 200, 1);
    unsigned port = atomic_load(&side->port);
    CHECK(port != 0);
    /* The server is the process's one consumer: its own drain and
     * flightrec stream outside are refused. */
    CHECK_EQ_I(atomic_load(&side->drain_rc), -EBUSY);
    char cmd[1400], err[1000];
    snprintf(cmd, sizeof(cmd), "%s stream -o '%s/x.rec' %d 2>'%s/err.txt'",
             FLIGHTREC_BIN, scratch, (int)child, scratch);
    CHECK_EQ_I(WEXITSTATUS(system(cmd)), 1);
    snprintf(cmd, sizeof(cmd), "%s/err.txt", scratch);
    FILE *f = fopen(cmd, "r");
    CHECK(f != NULL);
    size_t n = fread(err, 1, sizeof(err) - 1, f);
    err[n] = '\0';
    fclose(f);
    char expect[200];
    snprintf(expect, sizeof(expect),
             "flightrec stream: session of process %d is already consumed by "
             "process %d\n", (int)child, (int)child);
    CHECK_EQ_S(err, expect);
    eight_clients(port, child);
}

/* Sends @request, reads until closed: what came. */
static size_t exchange(unsigned port, const char *request, char *out,
                       size_t size)
{
    struct received r;
    memset(&r, 0, sizeof(r));
    r.fd = connect_to(port, 0);
    if (request != NULL)
        send_text(r.fd, request);
    receive_all(&r, 1, 10000);
    CHECK(r.closed);
    size_t n = r.len < size - 1 ? r.len : size - 1;
    memcpy(out, r.bytes, n);
    out[n] = '\0';
    close(r.fd);
    free(r.bytes);
    return r.len;
}

TEST(token_limit_and_requests)
{
    use_own_sessions("token");
    pid_t child = start_recorder(1000, 0);
    pid_t other = child;
    char token_path[600];
    snprintf(token_path, sizeof(token_path), "%s/token", scratch);
    FILE *f = fopen(token_path, "w");
    CHECK(f != NULL);
    fputs("s3cret-token\nsecond line ignored\n", f);
    fclose(f);
    chmod(token_path, 0600);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
    struct server srv;
    const char *args[] = { "--token", token_path, "--max-clients", "2",
                           pid_text, NULL };
    start_server(&srv, args);
    char out[4096];
    /* Wrong and missing tokens: closed without a byte, and logged. */
    CHECK_EQ_U(exchange(srv.port, "token s3cret-tokeN\n\n", out, sizeof(out)), 0);
    CHECK_EQ_U(exchange(srv.port, "pid 1\n\n", out, sizeof(out)), 0);
    CHECK_EQ_U(exchange(srv.port, "token s3cret-token-longer\n\n", out,
                        sizeof(out)), 0);
    CHECK_EQ_I(server_wait_for(&srv, "missing token: connection closed", 5000), 0);
    CHECK(strstr(srv.err, "flightrec serve: 127.0.0.1:") != NULL);
    CHECK(strstr(srv.err, ": wrong token: connection closed\n") != NULL);
    /* Nothing sent at all: closed when the 2 s are up. */
    uint64_t t0 = now_ms();
    CHECK_EQ_U(exchange(srv.port, NULL, out, sizeof(out)), 0);
    CHECK(now_ms() - t0 >= 1900);
    /* An unknown process. */
    exchange(srv.port, "token s3cret-token\npid 999999999\n\n", out, sizeof(out));
    CHECK_EQ_S(out, "flightrec: no session of that process is served\n");
    /* Two clients in, the third refused with a line. */
    struct received r[2];
    memset(r, 0, sizeof(r));
    char request[64];
    snprintf(request, sizeof(request), "token s3cret-token\npid %d\n\n",
             (int)other);
    for (int i = 0; i < 2; i++) {
        r[i].fd = connect_to(srv.port, 0);
        send_text(r[i].fd, i == 0 ? request : "token s3cret-token\r\n\r\n");
    }
    usleep(300000);
    exchange(srv.port, "token s3cret-token\n\n", out, sizeof(out));
    CHECK_EQ_S(out, "flightrec: too many clients (at most 2)\n");
    CHECK_EQ_I(server_wait_for(&srv, "refused: too many clients (at most 2)",
                               5000), 0);
    atomic_store(&side->go, 1);
    receive_all(r, 2, 30000);
    waitpid(child, NULL, 0);
    for (int i = 0; i < 2; i++) {
        check_everything(&r[i], 1000, child);
        close(r[i].fd);
        free(r[i].bytes);
    }
    CHECK_EQ_I(server_status(&srv, 20000), 0);
}

TEST(several_sessions_need_a_pid)
{
    use_own_sessions("several");
    pid_t first = start_recorder(500, 0);
    struct side_log *first_side = side;
    pid_t second = start_recorder(700, 0);
    char a[16], b[16];
    snprintf(a, sizeof(a), "%d", (int)first);
    snprintf(b, sizeof(b), "%d", (int)second);
    struct server srv;
    const char *args[] = { a, b, NULL };
    start_server(&srv, args);
    char out[4096];
    exchange(srv.port, "\n", out, sizeof(out));
    CHECK_EQ_S(out, "flightrec: several sessions are served: send 'pid PID'\n");
    struct received r;
    memset(&r, 0, sizeof(r));
    r.fd = connect_to(srv.port, 0);
    char request[64];
    snprintf(request, sizeof(request), "pid %d\n\nand then garbage", (int)second);
    send_text(r.fd, request);
    usleep(200000);
    atomic_store(&first_side->go, 1);
    atomic_store(&side->go, 1);
    receive_all(&r, 1, 30000);
    waitpid(first, NULL, 0);
    waitpid(second, NULL, 0);
    check_everything(&r, 700, second);
    close(r.fd);
    free(r.bytes);
    CHECK_EQ_I(server_status(&srv, 20000), 0);
}

TEST(sigterm_ends_streams_cleanly)
{
    use_own_sessions("sigterm");
    pid_t child = start_recorder(UINT64_MAX, 200);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
    struct server srv;
    const char *args[] = { pid_text, NULL };
    start_server(&srv, args);
    struct received r;
    memset(&r, 0, sizeof(r));
    r.fd = connect_to(srv.port, 0);
    atomic_store(&side->go, 1);
    while (r.len < 100000)
        receive_all(&r, 1, 10);
    kill(srv.pid, SIGTERM);
    receive_all(&r, 1, 20000);
    CHECK(r.closed);
    CHECK(ends_with_stream_end(&r));
    struct decoded d;
    decode(r.bytes, r.len, &d);
    CHECK_EQ_I(d.rc, 0);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ_U(d.t[i].torn, 0);
        CHECK_EQ_U(d.t[i].first, 0);
        CHECK_EQ_U(d.t[i].lost, 0);
        CHECK(d.t[i].events > 0);
    }
    CHECK_EQ_I(server_status(&srv, 20000), 0);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(r.fd);
    free(r.bytes);
}

TEST(server_killed_mid_stream)
{
    use_own_sessions("killed");
    pid_t child = start_recorder(UINT64_MAX, 200);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
    struct server srv;
    const char *args[] = { pid_text, NULL };
    start_server(&srv, args);
    struct received r;
    memset(&r, 0, sizeof(r));
    r.fd = connect_to(srv.port, 0);
    atomic_store(&side->go, 1);
    /* 200 KB, and every thread's first events among them: a thread slow
     * to start on a loaded machine is not what the test is about. */
    struct decoded d;
    for (uint64_t end = now_ms() + 20000; now_ms() < end;) {
        receive_all(&r, 1, 10);
        if (r.len < 200000)
            continue;
        decode(r.bytes, r.len, &d);
        int every = 1;
        for (int i = 0; i < THREADS; i++)
            every &= d.t[i].events > 0;
        if (every)
            break;
    }
    kill(srv.pid, SIGKILL);
    receive_all(&r, 1, 20000);
    CHECK(r.closed);
    CHECK(!ends_with_stream_end(&r));
    /* What came decodes, in order, from the first event on; at most the
     * item the kill cut is reported (as a truncation). */
    decode(r.bytes, r.len, &d);
    CHECK(d.rc == 0 || (r.len - 8) % ITEM_SIZE != 0);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ_U(d.t[i].torn, 0);
        CHECK_EQ_U(d.t[i].first, 0);
        CHECK_EQ_U(d.t[i].lost, 0);
        CHECK(d.t[i].events > 0);
    }
    server_status(&srv, 5000);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(r.fd);
    free(r.bytes);
}

TEST(refusals_at_start)
{
    use_own_sessions("refusals");
    char cmd[1400];
    snprintf(cmd, sizeof(cmd),
             "%s serve --listen 127.0.0.1:0 999999999 2>'%s/err.txt'",
             FLIGHTREC_BIN, scratch);
    CHECK_EQ_I(WEXITSTATUS(system(cmd)), 1);
    snprintf(cmd, sizeof(cmd), "%s serve --listen nowhere:1 1 2>/dev/null",
             FLIGHTREC_BIN);
    CHECK_EQ_I(WEXITSTATUS(system(cmd)), 2);
    snprintf(cmd, sizeof(cmd), "%s serve --max-clients 0 1 2>/dev/null",
             FLIGHTREC_BIN);
    CHECK_EQ_I(WEXITSTATUS(system(cmd)), 2);
}

TEST(other_address_warns)
{
    use_own_sessions("anyaddr");
    pid_t child = start_recorder(10, 0);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
    struct server srv;
    /* The last --listen wins: all interfaces, port any. */
    const char *args[] = { "--listen", "0.0.0.0:0", pid_text, NULL };
    memset(&srv, 0, sizeof(srv));
    int fds[2];
    CHECK_EQ_I(pipe2(fds, O_CLOEXEC), 0);
    srv.pid = fork();
    if (srv.pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(fds[1], 2);
        execl(FLIGHTREC_BIN, "flightrec", "serve", args[0], args[1], args[2],
              (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    srv.err_fd = fds[0];
    CHECK_EQ_I(server_wait_for(&srv, "serve: listening on 0.0.0.0:", 10000),
               0);
    CHECK(strstr(srv.err, "flightrec serve: warning: listening on 0.0.0.0: "
                          "other machines can connect and no token is "
                          "required\n") != NULL);
    srv.port = (unsigned)atoi(strstr(srv.err, "serve: listening on 0.0.0.0:") +
                              strlen("serve: listening on 0.0.0.0:"));
    struct received r;
    memset(&r, 0, sizeof(r));
    r.fd = connect_to(srv.port, 0);
    atomic_store(&side->go, 1);
    receive_all(&r, 1, 30000);
    waitpid(child, NULL, 0);
    check_everything(&r, 10, child);
    close(r.fd);
    free(r.bytes);
    CHECK_EQ_I(server_status(&srv, 20000), 0);
}

/* Starts serve-env-target (5000 events when told) with FLIGHTREC_SERVER
 * and, if @token_file, FLIGHTREC_SERVER_TOKEN; its port. */
static unsigned start_env_target(const char *token_file, pid_t *child,
                                 int *go_fd, struct server *srv)
{
    int in[2], err[2];
    CHECK_EQ_I(pipe2(in, O_CLOEXEC), 0);
    CHECK_EQ_I(pipe2(err, O_CLOEXEC), 0);
    *child = fork();
    if (*child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(in[0], 0);
        dup2(err[1], 2);
        setenv("FLIGHTREC_SERVER", "127.0.0.1:0", 1);
        if (token_file != NULL)
            setenv("FLIGHTREC_SERVER_TOKEN", token_file, 1);
        execl(SERVE_ENV_TARGET, "serve-env-target", "5000", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(err[1]);
    memset(srv, 0, sizeof(*srv));
    srv->err_fd = err[0];
    CHECK_EQ_I(server_wait_for(srv, "flightrec: serving on 127.0.0.1:", 10000),
               0);
    *go_fd = in[1];
    return (unsigned)atoi(strstr(srv->err, "serving on 127.0.0.1:") +
                          strlen("serving on 127.0.0.1:"));
}

/* Lets the target record and exit; checks what client @r got: every
 * event of its main thread, in order, and the end of the stream. */
static void env_target_delivers(pid_t child, int go_fd, struct received *r)
{
    usleep(200000);
    CHECK_EQ_I(write(go_fd, "g", 1), 1);
    usleep(200000);
    close(go_fd); /* the program exits: the end of the stream */
    receive_all(r, 1, 30000);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(r->closed);
    CHECK(ends_with_stream_end(r));
    side = mmap(NULL, sizeof(*side), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(side, 0, sizeof(*side));
    atomic_store(&side->tid[0], (int32_t)child);
    struct decoded d;
    decode(r->bytes, r->len, &d);
    CHECK_EQ_I(d.rc, 0);
    CHECK_EQ_I(d.pid, child);
    CHECK_EQ_U(d.t[0].events, 5000);
    /* Numbered from 0 with no opening event: one gap, before the first. */
    CHECK_EQ_U(d.t[0].torn, 0);
    CHECK_EQ_U(d.t[0].gaps, 1);
    CHECK_EQ_U(d.t[0].first, 0);
    CHECK_EQ_U(d.t[0].next, 5000 + 1);
    CHECK_EQ_U(d.t[0].lost, 0);
    CHECK_EQ_U(d.others, 0);
}

TEST(flightrec_server_environment)
{
    use_own_sessions("env");
    pid_t child;
    int go_fd;
    struct server srv;
    unsigned port = start_env_target(NULL, &child, &go_fd, &srv);
    struct received r;
    memset(&r, 0, sizeof(r));
    r.fd = connect_to(port, 0);
    env_target_delivers(child, go_fd, &r);
    close(r.fd);
    free(r.bytes);
    close(srv.err_fd);
}

/* FLIGHTREC_SERVER_TOKEN: the in-process server's token, as serve's. */
TEST(flightrec_server_environment_token)
{
    use_own_sessions("env-token");
    char token_path[600];
    snprintf(token_path, sizeof(token_path), "%s/token", scratch);
    FILE *f = fopen(token_path, "w");
    CHECK(f != NULL);
    fputs("in-process-token\n", f);
    fclose(f);
    chmod(token_path, 0600);
    pid_t child;
    int go_fd;
    struct server srv;
    unsigned port = start_env_target(token_path, &child, &go_fd, &srv);
    char out[4096];
    CHECK_EQ_U(exchange(port, "token in-process-tokeN\n\n", out, sizeof(out)),
               0);
    CHECK_EQ_U(exchange(port, "\n", out, sizeof(out)), 0);
    CHECK_EQ_I(server_wait_for(&srv, ": wrong token: connection closed", 5000),
               0);
    struct received r;
    memset(&r, 0, sizeof(r));
    r.fd = connect_to(port, 0);
    send_text(r.fd, "token in-process-token\n\n");
    env_target_delivers(child, go_fd, &r);
    close(r.fd);
    free(r.bytes);
    close(srv.err_fd);
}

TEST_MAIN()
