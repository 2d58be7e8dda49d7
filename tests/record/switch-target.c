/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program test-record-switches runs under `flightrec record`: two
 * threads, thread K pinned to CPU K (modulo the CPUs there are), each
 * sleeping SLEEPS times in poll() (a wrapped call: POLL_ENTRY / POLL_EXIT
 * bracket every sleep).  After pinning, each thread calls close(-1), a
 * wrapped call that marks in its ring the moment it runs on its CPU.
 * Prints "thread K TID CPU" for each thread, then "sleeps N".
 *
 *   switch-target [SLEEPS]
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 2

static int sleeps = 5;

struct worker {
    int index;
    int cpu;
    long tid;
    int pinned;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    w->tid = (long)syscall(SYS_gettid);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    w->pinned = sched_setaffinity(0, sizeof set, &set) == 0;
    (void)close(-1); /* the mark: from here on, on w->cpu */
    for (int i = 0; i < sleeps; i++)
        (void)poll(NULL, 0, 3);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        sleeps = atoi(argv[1]);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    struct worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (struct worker){ .index = i, .cpu = (int)(i % cpus) };
        if (pthread_create(&threads[i], NULL, work, &workers[i]) != 0)
            return 2;
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        if (!workers[i].pinned)
            return 3;
        printf("thread %d %ld %d\n", i, workers[i].tid, workers[i].cpu);
    }
    printf("sleeps %d\n", sleeps);
    return 0;
}
