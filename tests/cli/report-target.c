/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program to run under `flightrec record` for the report's tests.  It
 * makes a mutex contended on purpose, leaks known blocks and waits in
 * poll(), measures each with CLOCK_MONOTONIC around the call, and prints
 * what it measured:
 *
 *   lock 0xADDRESS        the contended mutex
 *   waited NS             the second thread's pthread_mutex_lock
 *   held NS               main's hold, lock returned to unlock called
 *   polled NS             poll(NULL, 0, 15)
 *   leak SIZE COUNT       blocks never freed
 *
 * With the argument "wait" it then prints "pid N" and "ready" and waits
 * for its standard input to end, so that a test can read its session.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER;
static atomic_int about_to_lock;
static uint64_t waited_ns;
static void *volatile sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void *contender(void *arg)
{
    (void)arg;
    atomic_store(&about_to_lock, 1);
    uint64_t before = now_ns();
    pthread_mutex_lock(&contended);
    waited_ns = now_ns() - before;
    sleep_ms(2);
    pthread_mutex_unlock(&contended);
    return NULL;
}

int main(int argc, char **argv)
{
    static char out[1 << 12];
    pthread_t t;

    setvbuf(stdout, out, _IOFBF, sizeof out);
    pthread_mutex_lock(&contended);
    uint64_t locked = now_ns();
    if (pthread_create(&t, NULL, contender, NULL) != 0)
        return 1;
    while (!atomic_load(&about_to_lock))
        sleep_ms(1);
    sleep_ms(20);
    uint64_t held = now_ns() - locked;
    pthread_mutex_unlock(&contended);
    pthread_join(t, NULL);

    for (int i = 0; i < 3; i++)
        sink = malloc(1000);
    sink = calloc(7, 111);
    for (int i = 0; i < 10; i++) {
        void *p = malloc(64 + (size_t)i);
        sink = p;
        free(p);
    }

    uint64_t before = now_ns();
    poll(NULL, 0, 15);
    uint64_t polled = now_ns() - before;

    printf("lock %p\nwaited %llu\nheld %llu\npolled %llu\n"
           "leak 1000 3\nleak 777 1\n", (void *)&contended,
           (unsigned long long)waited_ns, (unsigned long long)held,
           (unsigned long long)polled);
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        char c;
        printf("pid %ld\nready\n", (long)getpid());
        fflush(stdout);
        while (read(0, &c, 1) > 0)
            ;
    }
    return 0;
}
