/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The in-process server (flightrec_server_start(), FLIGHTREC_SERVER): a
 * thread of the program that serves its own region with the record
 * server of src/server/ (docs/format.md section 10), for targets where no
 * second process runs.  The thread calls no recording function, and it is
 * the process's one consumer while it runs: flightrec_drain() here and
 * `flightrec stream` outside are refused meanwhile.
 */
#include "platform.h"
#include "runtime.h"

#include "../region/session.h"
#include "../server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_PERIOD_MS 10u
/* At exit a client has this long to take what is queued for it. */
#define EXIT_GRACE_MS 2000u

static pthread_mutex_t server_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fr_server *server;
static pthread_t server_thread;
static unsigned server_period_ms;
static _Atomic int server_stop;
_Atomic int flightrec__server_active;

static int own_refresh(void *ctx, unsigned char **base)
{
    (void)ctx;
    *base = flightrec__region_base;
    return flightrec__region_base != NULL ? 0 : -1;
}

/* The program lives as long as its server is not told to stop. */
static int own_alive(void *ctx)
{
    (void)ctx;
    return !atomic_load(&server_stop);
}

static const uint32_t *own_thread_name(void *ctx, const ring_t *ring,
                                       uint32_t words[4])
{
    (void)ctx;
    char name[16];
    if (flightrec__port_thread_name(
            atomic_load_explicit(&ring->owner.tid, memory_order_relaxed),
            name) != 0)
        return NULL;
    flightrec__pack_name(name, words, FLIGHTREC_REGION_NAME_WORDS);
    return words;
}

/* With both rings of an exited thread read, the pair may be reused. */
static void own_ring_read(void *ctx, ring_t *ring)
{
    (void)ctx;
    if (ring->context == 1 &&
        atomic_load_explicit(&ring->state, memory_order_acquire) ==
            FLIGHTREC_RING_RETIRED)
        flightrec__registry_pair_read(ring_partner(ring));
}

static uint64_t own_frequency(void *ctx)
{
    (void)ctx;
    uint64_t frequency = flightrec_counter_frequency();
    atomic_store_explicit(&region_header()->counter_frequency, frequency,
                          memory_order_relaxed);
    return frequency;
}

static const struct fr_source_ops own_ops = {
    .refresh = own_refresh,
    .alive = own_alive,
    .thread_name = own_thread_name,
    .ring_read = own_ring_read,
    .frequency = own_frequency,
};

static void log_refusal(void *arg, const char *message)
{
    (void)arg;
    char line[500];
    int n = snprintf(line, sizeof(line), "flightrec server: %s\n", message);
    if (n > 0)
        flightrec__port_message(line, (size_t)n < sizeof(line) ? (size_t)n
                                                              : sizeof(line) - 1);
}

static void *serve(void *arg)
{
    (void)arg;
    while (!atomic_load(&server_stop)) {
        fr_server_poll(server, server_period_ms);
        flightrec__drain_enter();
        fr_server_drain(server);
        flightrec__drain_leave();
    }
    flightrec__drain_enter();
    fr_server_finish(server, EXIT_GRACE_MS);
    flightrec__drain_leave();
    return NULL;
}

static int self_claim(int take)
{
    const struct flightrec_region_process *me =
        (const void *)(flightrec__region_base +
                       region_header()->process_offset);
    if (!take) {
        fr_consumer_release(region_control(), me->pid);
        return 0;
    }
    int32_t holder = 0;
    return fr_consumer_claim(region_control(), me->pid, me->start_time,
                             &holder);
}

/* The first line of @path (not empty) into @token; 0, or -1 after a
 * message (a token no one can send would lock every client out). */
static int read_token(const char *path, char *token, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, token, size - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n > 0) {
        token[n] = '\0';
        token[strcspn(token, "\r\n")] = '\0';
    }
    if (n <= 0 || token[0] == '\0') {
        char line[400];
        int len = snprintf(line, sizeof(line),
                           "flightrec: FLIGHTREC_SERVER_TOKEN=%.200s: no token "
                           "in its first line; no server\n",
                           path);
        if (len > 0)
            flightrec__port_message(line, (size_t)len);
        token[0] = '\0';
        return -1;
    }
    return 0;
}

int flightrec_server_start(const char *address, unsigned port,
                           unsigned period_ms)
{
    flightrec__ensure_init();
    if (flightrec__region_base == NULL)
        return -ENOMEM;
    pthread_mutex_lock(&server_lock);
    int rc = 0;
    if (server != NULL) {
        rc = -EALREADY;
        goto out;
    }
    char text[80];
    if (address == NULL)
        address = "127.0.0.1";
    snprintf(text, sizeof(text), "%s", address);
    if (self_claim(1) != 0) {
        rc = -EBUSY; /* flightrec stream or serve outside has the rings */
        goto out;
    }
    /* FLIGHTREC_SERVER_TOKEN=FILE: clients must send its first line, as
     * with `flightrec serve --token FILE`. */
    static char token[256];
    token[0] = '\0';
    const char *token_file = flightrec__port_getenv("FLIGHTREC_SERVER_TOKEN");
    if (token_file != NULL && token_file[0] != '\0' &&
        read_token(token_file, token, sizeof(token)) != 0) {
        self_claim(0);
        rc = -EACCES;
        goto out;
    }
    struct fr_server_options options = {
        .address = text,
        .port = port,
        .token = token[0] != '\0' ? token : NULL,
        .log = log_refusal,
    };
    char message[300];
    if (fr_server_open(&server, &options, message, sizeof(message)) != 0) {
        char line[400];
        int n = snprintf(line, sizeof(line), "flightrec: server: %s\n",
                         message);
        if (n > 0)
            flightrec__port_message(line, (size_t)n);
        server = NULL;
        self_claim(0);
        rc = -EADDRNOTAVAIL;
        goto out;
    }
    const struct flightrec_region_process *me =
        (const void *)(flightrec__region_base +
                       region_header()->process_offset);
    /* Under its own pid: a client may ask for it ("pid PID"). */
    if (fr_server_add(server, me->pid, &own_ops, NULL) != 0) {
        fr_server_close(server);
        server = NULL;
        self_claim(0);
        rc = -ENOMEM;
        goto out;
    }
    static int stop_at_exit;
    if (!stop_at_exit && atexit(flightrec_server_stop) == 0)
        stop_at_exit = 1;
    server_period_ms = period_ms != 0 ? period_ms : DEFAULT_PERIOD_MS;
    atomic_store(&server_stop, 0);
    atomic_store(&flightrec__server_active, 1);
    if (pthread_create(&server_thread, NULL, serve, NULL) != 0) {
        atomic_store(&flightrec__server_active, 0);
        fr_server_close(server);
        server = NULL;
        self_claim(0);
        rc = -EAGAIN;
        goto out;
    }
out:
    pthread_mutex_unlock(&server_lock);
    return rc;
}

unsigned flightrec_server_port(void)
{
    pthread_mutex_lock(&server_lock);
    unsigned port = server != NULL ? fr_server_port(server) : 0;
    pthread_mutex_unlock(&server_lock);
    return port;
}

void flightrec_server_stop(void)
{
    pthread_mutex_lock(&server_lock);
    if (server != NULL) {
        atomic_store(&server_stop, 1);
        pthread_join(server_thread, NULL);
        fr_server_close(server);
        server = NULL;
        self_claim(0);
        atomic_store(&flightrec__server_active, 0);
    }
    pthread_mutex_unlock(&server_lock);
}

void flightrec__server_forget_after_fork(void)
{
    /* The thread did not come along: the child serves nothing. */
    pthread_mutex_init(&server_lock, NULL);
    server = NULL;
    atomic_store(&flightrec__server_active, 0);
}

/* FLIGHTREC_SERVER=ADDR:PORT starts the server with the program. */
__attribute__((constructor)) static void server_from_environment(void)
{
    const char *text = flightrec__port_getenv("FLIGHTREC_SERVER");
    if (text == NULL || text[0] == '\0')
        return;
    char address[80];
    unsigned port;
    if (fr_server_parse_address(text, address, sizeof(address), &port) != 0) {
        char line[200];
        int n = snprintf(line, sizeof(line),
                         "flightrec: FLIGHTREC_SERVER=%.80s: not ADDR:PORT "
                         "with a numeric address; no server\n",
                         text);
        if (n > 0)
            flightrec__port_message(line, (size_t)n);
        return;
    }
    if (flightrec_server_start(address, port, 0) == 0) {
        /* Asked for from outside the program: say where (port 0 is any). */
        char line[200];
        int n = snprintf(line, sizeof(line),
                         strchr(address, ':') ? "flightrec: serving on [%s]:%u\n"
                                              : "flightrec: serving on %s:%u\n",
                         address, flightrec_server_port());
        if (n > 0)
            flightrec__port_message(line, (size_t)n);
    }
}
