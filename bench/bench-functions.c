/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The cost of function tracing: N calls of a leaf function
 *   plain    not instrumented
 *   hooks    built with -finstrument-functions, libflightrec-functions
 *            recording FUNCTION_ENTRY/EXIT
 *   produce  the same two events recorded by hand (flightrec_produce)
 * Prints ns per call; bench/callgrind-functions.sh turns runs of two
 * lengths into instructions per call, which a loaded machine does not
 * change.
 * usage: bench-functions plain|hooks|produce N
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <flightrec.h>

volatile int bench_sink;
void bench_leaf_hooks(int i);   /* bench-functions-leaf.c, instrumented */

__attribute__((noinline)) static void leaf_plain(int i)
{
    bench_sink += i;
}

__attribute__((noinline)) static void leaf_produce(int i)
{
    flightrec_produce(FLIGHTREC_EV_FUNCTION_ENTRY, (uintptr_t)leaf_produce);
    bench_sink += i;
    flightrec_produce(FLIGHTREC_EV_FUNCTION_EXIT, (uintptr_t)leaf_produce);
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = strtol(argv[2], NULL, 10);
    void (*leaf)(int) = strcmp(argv[1], "plain") == 0     ? leaf_plain
                        : strcmp(argv[1], "hooks") == 0   ? bench_leaf_hooks
                        : strcmp(argv[1], "produce") == 0 ? leaf_produce
                                                          : NULL;
    if (leaf == NULL || n <= 0)
        return 2;
    leaf(0); /* the thread's ring is set up outside the loop */
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        leaf((int)i);
    double t1 = now_ns();
    printf("%s: %.2f ns per call\n", argv[1], (t1 - t0) / (double)n);
    return 0;
}
