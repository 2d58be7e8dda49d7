/* SPDX-License-Identifier: BSD-2-Clause */
/* Small helpers shared by the producer benchmarks: a monotonic clock and
 * median / min / max of repeated measurements. */
#ifndef FLIGHTREC_BENCH_UTIL_H
#define FLIGHTREC_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int bench_compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct bench_summary {
    double median, min, max;
};

/* Sorts @v in place. */
static inline struct bench_summary bench_summarize(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), bench_compare);
    struct bench_summary s = { v[n / 2], v[0], v[n - 1] };
    if (n % 2 == 0)
        s.median = (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

#endif
