/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cost of an idle drain: flightrec_drain() to /dev/null when nothing new
 * was recorded, with 1, 100 and 1,000 live threads (each recorded one event
 * and then waits).  The first drain delivers those events; the next ones
 * are timed one by one.  Each thread count runs in a child process of its
 * own.  Public API only.
 *
 *   bench-drain-idle [--drains N] [THREADS...]   (defaults 31; 1 100 1000)
 */
#include <flightrec.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int ready, released;

static void *live_thread(void *arg)
{
    flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)arg);
    pthread_mutex_lock(&lock);
    ready++;
    pthread_cond_broadcast(&changed);
    while (!released)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static int measure(int threads, int drains)
{
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) {
        perror("bench-drain-idle: /dev/null");
        return 1;
    }
    pthread_t *ids = calloc((size_t)threads, sizeof(*ids));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&ids[i], &attr, live_thread,
                           (void *)(uintptr_t)i) != 0) {
            fprintf(stderr, "bench-drain-idle: thread creation failed\n");
            return 1;
        }
    }
    pthread_attr_destroy(&attr);
    pthread_mutex_lock(&lock);
    while (ready < threads)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);

    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    uint64_t start = bench_now_ns();
    int rc = flightrec_drain(fd); /* delivers the threads' events */
    double first_us = (double)(bench_now_ns() - start) / 1e3;
    double *us = calloc((size_t)drains, sizeof(*us));
    for (int i = 0; i < drains && rc == 0; i++) {
        start = bench_now_ns();
        rc = flightrec_drain(fd);
        us[i] = (double)(bench_now_ns() - start) / 1e3;
    }
    if (rc != 0) {
        fprintf(stderr, "bench-drain-idle: drain failed (%d)\n", rc);
        return 1;
    }
    struct bench_summary s = bench_summarize(us, (size_t)drains);
    printf("%8d %8u %12.1f %12.1f %12.1f %14.1f\n", threads, stats.rings,
           s.median, s.min, s.max, first_us);

    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);
    free(ids);
    free(us);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    int drains = 31;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--drains") == 0) {
        drains = atoi(argv[2]);
        first = 3;
    }
    if (drains < 1) {
        fprintf(stderr, "usage: bench-drain-idle [--drains N] [THREADS...]\n");
        return 2;
    }
    static const int defaults[] = { 1, 100, 1000 };
    int counts = argc > first ? argc - first : 3;
    printf("flightrec idle drain to /dev/null (nothing new recorded), "
           "%d drains each\n\n", drains);
    printf("%8s %8s %12s %12s %12s %14s\n", "threads", "rings", "median us",
           "min us", "max us", "first drain us");
    fflush(stdout);
    for (int i = 0; i < counts; i++) {
        int threads = argc > first ? atoi(argv[first + i]) : defaults[i];
        pid_t pid = fork();
        if (pid == 0) {
            int rc = measure(threads, drains);
            fflush(stdout);
            _exit(rc);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid ||
            !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench-drain-idle: the run with %d threads "
                            "failed\n", threads);
            return 1;
        }
    }
    return 0;
}
