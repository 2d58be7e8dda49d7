/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The record server's costs, in one run:
 *
 *  1. the producers' cost per event with the in-process server and eight
 *     clients (one never reads) against no server, alternating trials;
 *  2. events through `flightrec serve` to one loopback client against
 *     `flightrec stream PID` to a file, discard mode, producers paced at
 *     several rates: delivered and lost at each (zero loss is the goal).
 *
 * usage: bench-serve FLIGHTREC_BIN
 */
#include <flightrec.h>
#include <flightrec/client.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

#define PRODUCERS 2
#define COST_EVENTS 4000000u
#define TRIALS 5
#define CLIENTS 8

static _Atomic int clients_run;

static void *client(void *arg)
{
    unsigned port = (unsigned)(uintptr_t)arg >> 1;
    int stuck = (int)((uintptr_t)arg & 1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        return NULL;
    static char sink[1 << 16];
    while (atomic_load(&clients_run)) {
        if (stuck) {
            usleep(10000);
            continue;
        }
        if (recv(fd, sink, sizeof(sink), 0) <= 0)
            break;
    }
    close(fd);
    return NULL;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double producer_ns[PRODUCERS];

/* The producer's own CPU time per event: what the server costs it, not
 * the time the server's and the clients' threads take from it on a
 * machine with few cores. */
static void *producer(void *arg)
{
    uintptr_t index = (uintptr_t)arg;
    flightrec_produce(FLIGHTREC_USER(index), 0); /* attached */
    uint64_t t0 = thread_cpu_ns();
    for (uint32_t i = 0; i < COST_EVENTS; i++)
        flightrec_produce(FLIGHTREC_USER(index), i);
    producer_ns[index] = (double)(thread_cpu_ns() - t0) / COST_EVENTS;
    return NULL;
}

static double produce_trial(void)
{
    pthread_t t[PRODUCERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        pthread_create(&t[i], NULL, producer, (void *)i);
    double sum = 0;
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(t[i], NULL);
        sum += producer_ns[i];
    }
    return sum / PRODUCERS;
}

static void producer_cost(void)
{
    double none[TRIALS], served[TRIALS];
    for (int trial = 0; trial < TRIALS; trial++) {
        none[trial] = produce_trial();
        if (flightrec_server_start("127.0.0.1", 0, 10) != 0) {
            fprintf(stderr, "bench-serve: no server\n");
            exit(1);
        }
        unsigned port = flightrec_server_port();
        atomic_store(&clients_run, 1);
        pthread_t c[CLIENTS];
        for (uintptr_t i = 0; i < CLIENTS; i++)
            pthread_create(&c[i], NULL, client,
                           (void *)(uintptr_t)(port << 1 | (i == 0)));
        usleep(100000);
        served[trial] = produce_trial();
        atomic_store(&clients_run, 0);
        flightrec_server_stop();
        for (int i = 0; i < CLIENTS; i++)
            pthread_join(c[i], NULL);
    }
    struct bench_summary a = bench_summarize(none, TRIALS);
    struct bench_summary b = bench_summarize(served, TRIALS);
    printf("producer cost (thread CPU time), %d threads x %u events, flight "
           "mode, median of %d (min..max):\n", PRODUCERS, COST_EVENTS, TRIALS);
    printf("  no server                  %6.2f ns/event (%.2f..%.2f)\n",
           a.median, a.min, a.max);
    printf("  server, 8 clients, 1 stuck %6.2f ns/event (%.2f..%.2f)\n",
           b.median, b.min, b.max);
    printf("  ratio                      %6.3f\n\n", b.median / a.median);
}

/*=====   Throughput: serve against stream   =====*/

static int on_record(const struct flightrec_record *rec, void *arg)
{
    (void)rec;
    (void)arg;
    return 0;
}

/* Events delivered and lost in file @path. */
static void count(const char *path, uint64_t *events, uint64_t *lost)
{
    struct flightrec_client_options o = { .on_record = on_record };
    flightrec_client *c;
    *events = *lost = 0;
    if (flightrec_client_create(&c, &o) != 0)
        return;
    FILE *f = fopen(path, "rb");
    if (f != NULL) {
        (void)flightrec_client_read_fd(c, fileno(f));
        fclose(f);
    }
    struct flightrec_client_totals t;
    flightrec_client_totals(c, &t);
    *events = t.events;
    *lost = t.overflow + t.discard + t.missing;
    flightrec_client_destroy(c);
}

static _Atomic int go;

/* A child recording @rate events/s per thread (two threads) for 1 s, in
 * discard mode with default rings, once told to start (SIGUSR1). */
static void on_go(int sig)
{
    (void)sig;
    atomic_store(&go, 1);
}

static uint64_t child_rate;

static void *paced(void *arg)
{
    uintptr_t index = (uintptr_t)arg;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < child_rate; i++) {
        flightrec_produce(FLIGHTREC_USER(index), (uintptr_t)i);
        if ((i & 255) == 255)
            while (bench_now_ns() - t0 < i * 1000000000u / child_rate)
                ;
    }
    return NULL;
}

static pid_t start_child(uint64_t rate)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct flightrec_config config;
        flightrec_config_init(&config);
        config.mode = FLIGHTREC_MODE_DISCARD;
        flightrec_setup(&config);
        signal(SIGUSR1, on_go);
        flightrec_produce(FLIGHTREC_USER(9), 0); /* the session */
        while (!atomic_load(&go))
            usleep(1000);
        child_rate = rate;
        pthread_t t[PRODUCERS];
        for (uintptr_t i = 0; i < PRODUCERS; i++)
            pthread_create(&t[i], NULL, paced, (void *)i);
        for (int i = 0; i < PRODUCERS; i++)
            pthread_join(t[i], NULL);
        usleep(100000);
        _exit(0);
    }
    usleep(200000);
    return pid;
}

static void throughput(const char *bin)
{
    static const uint64_t rates[] = { 1000000, 2000000, 5000000, 10000000 };
    char dir[] = "/tmp/bench-serve-XXXXXX";
    if (mkdtemp(dir) == NULL)
        return;
    setenv("XDG_RUNTIME_DIR", dir, 1);
    printf("throughput, %d threads, discard mode, default rings, 1 s each:\n",
           PRODUCERS);
    printf("  %-12s %-22s %-22s\n", "rate/thread", "stream: events lost",
           "serve: events lost");
    for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
        uint64_t results[2][2];
        for (int way = 0; way < 2; way++) {
            char out[600], cmd[1400];
            snprintf(out, sizeof(out), "%s/out-%d.rec", dir, way);
            unlink(out);
            pid_t child = start_child(rates[r]);
            if (way == 0) {
                snprintf(cmd, sizeof(cmd), "%s stream -o %s %d &", bin, out,
                         (int)child);
            } else {
                /* One loopback client through nc-free bash: /dev/tcp. */
                snprintf(cmd, sizeof(cmd),
                         "%s -q serve --listen 127.0.0.1:6799 %d & sleep 0.3; "
                         "bash -c 'cat </dev/tcp/127.0.0.1/6799 >%s' &",
                         bin, (int)child, out);
            }
            if (system(cmd) != 0)
                return;
            usleep(500000);
            kill(child, SIGUSR1);
            waitpid(child, NULL, 0);
            sleep(1); /* the consumers end with the process */
            system("sleep 0.5");
            count(out, &results[way][0], &results[way][1]);
        }
        printf("  %-12llu %10llu %10llu %10llu %10llu\n",
               (unsigned long long)rates[r],
               (unsigned long long)results[0][0],
               (unsigned long long)results[0][1],
               (unsigned long long)results[1][0],
               (unsigned long long)results[1][1]);
    }
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc > 1)
        throughput(argv[1]);
    producer_cost();
    return 0;
}
