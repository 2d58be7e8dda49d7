/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec demo: worker threads that name themselves, contend on mutexes,
 * allocate, and now and then get a signal, all instrumented with the
 * flightrec API.  The main thread streams the recording with
 * flightrec_drain() while they run (exact loss counts), and at the end
 * writes what the rings hold with flightrec_dump() (the post-mortem view).
 *
 *   flightrec-demo [OUTDIR]     writes OUTDIR/demo.rec and OUTDIR/stream.rec
 */
#include <flightrec.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4
#define JOBS 2000
#define EV_JOB FLIGHTREC_USER(0)
#define EV_JOB_DONE FLIGHTREC_USER(1)
#define EV_QUEUE_DEPTH FLIGHTREC_USER(2)

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int queue_depth; /* read by the signal handler */
static _Atomic int workers_done;

/* Instrumented primitives: what an LD_PRELOAD shim will do for programs
 * that are not instrumented by hand. */
static void traced_lock(pthread_mutex_t *m)
{
    flightrec_produce(FLIGHTREC_EV_MUTEX_LOCK_ENTRY, (uintptr_t)m);
    pthread_mutex_lock(m);
    flightrec_produce(FLIGHTREC_EV_MUTEX_LOCK_EXIT, (uintptr_t)m);
}

static void traced_unlock(pthread_mutex_t *m)
{
    flightrec_produce(FLIGHTREC_EV_MUTEX_UNLOCK, (uintptr_t)m);
    pthread_mutex_unlock(m);
}

static void *traced_malloc(size_t size)
{
    flightrec_produce(FLIGHTREC_EV_MALLOC_ENTRY, size);
    void *p = malloc(size);
    flightrec_produce(FLIGHTREC_EV_MALLOC_EXIT, (uintptr_t)p);
    return p;
}

static void traced_free(void *p)
{
    flightrec_produce(FLIGHTREC_EV_FREE_ENTRY, (uintptr_t)p);
    free(p);
    flightrec_produce(FLIGHTREC_EV_FREE_EXIT, 0);
}

/* Signals are the interrupts of user space: entry and exit are recorded,
 * and whatever the handler records lands safely even in the middle of an
 * interrupted record. */
static void on_signal(int signo)
{
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_ENTRY, (uintptr_t)signo);
    flightrec_produce(EV_QUEUE_DEPTH, (uintptr_t)queue_depth);
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_EXIT, (uintptr_t)signo);
}

static void *worker(void *arg)
{
    int index = (int)(uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof(name), "worker-%d", index);
    pthread_setname_np(pthread_self(), name);
    flightrec_produce(FLIGHTREC_EV_THREAD_SET_NAME, (uintptr_t)index);
    unsigned seed = (unsigned)index * 7919u + 1;
    for (int job = 0; job < JOBS; job++) {
        traced_lock(&queue_lock);
        queue_depth++;
        traced_unlock(&queue_lock);

        size_t size = 64 + (size_t)(rand_r(&seed) % 4096);
        struct flightrec_ctx ctx; /* two items, one timestamp */
        flightrec_prepare(&ctx);
        flightrec_add(&ctx, EV_JOB, (uintptr_t)job);
        flightrec_add(&ctx, EV_QUEUE_DEPTH, (uintptr_t)queue_depth);
        flightrec_commit(&ctx);
        char *buffer = traced_malloc(size);
        memset(buffer, index, size);
        if (rand_r(&seed) % 256 == 0) {
            flightrec_produce(FLIGHTREC_EV_SIGNAL_RAISE, SIGUSR1);
            pthread_kill(pthread_self(), SIGUSR1);
        }
        traced_free(buffer);

        traced_lock(&stats_lock);
        queue_depth--;
        traced_unlock(&stats_lock);
        flightrec_produce(EV_JOB_DONE, (uintptr_t)job);
        if (job % 64 == 63) {
            /* Wait for "I/O" now and then, as real workers do. */
            struct timespec ts = { 0, 200000 };
            nanosleep(&ts, NULL);
        }
    }
    workers_done++;
    return NULL;
}

static int open_out(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fprintf(stderr, "flightrec-demo: cannot open '%s': %s\n", path,
                strerror(errno));
    return fd;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "flightrec-demo: cannot create '%s': %s\n", dir,
                strerror(errno));
        return 1;
    }
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = 16384; /* small enough to show the overwrite */
    int rc = flightrec_setup(&config);
    if (rc != 0) {
        fprintf(stderr, "flightrec-demo: %s\n", flightrec_strerror(rc));
        return 1;
    }
    /* Calibrating the cycle counter takes 20 ms after start-up; do it now
     * rather than in the first drain, while the workers already run. */
    (void)flightrec_counter_frequency();
    flightrec_event_set_name(EV_JOB, "job");
    flightrec_event_set_name(EV_JOB_DONE, "job_done");
    flightrec_event_set_name(EV_QUEUE_DEPTH, "queue_depth");
    signal(SIGUSR1, on_signal);
    pthread_setname_np(pthread_self(), "demo-main");

    int stream = open_out(dir, "stream.rec");
    int post_mortem = open_out(dir, "demo.rec");
    if (stream < 0 || post_mortem < 0)
        return 1;

    pthread_t threads[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        flightrec_produce(FLIGHTREC_EV_THREAD_CREATE, (uintptr_t)i);
        pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)i);
    }
    while (workers_done < WORKERS) {
        if ((rc = flightrec_drain(stream)) != 0)
            break;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
    if (rc == 0)
        rc = flightrec_drain(stream);
    if (rc == 0)
        rc = flightrec_dump(post_mortem);
    close(stream);
    close(post_mortem);
    if (rc != 0) {
        fprintf(stderr, "flightrec-demo: writing the recording: %s\n",
                flightrec_strerror(rc));
        return 1;
    }
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    printf("flightrec-demo: %d threads, %llu items recorded in %u rings\n",
           WORKERS, (unsigned long long)stats.produced, stats.rings);
    printf("flightrec-demo: streamed recording:   %s/stream.rec\n", dir);
    printf("flightrec-demo: post-mortem snapshot: %s/demo.rec\n", dir);
    return 0;
}
