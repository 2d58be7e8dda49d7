/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hosted Linux port: time base and counter frequency, thread identity and
 * names, ring memory.  Everything here is async-signal-safe except
 * flightrec__timebase_init(), which runs once at start-up.
 */
#include "ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static struct flightrec_timebase timebase;
static uint64_t monotonic_at_base;      /* CLOCK_MONOTONIC ns at base */
static _Atomic uint64_t frequency_cache;

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if !defined(FLIGHTREC_PORT_COUNTER) && !defined(__x86_64__) && \
    !defined(__i386__) && !defined(__aarch64__)
uint64_t flightrec__counter_fallback(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}
#endif

/* Reads the counter between two monotonic clock reads; returns the clock
 * at the middle.  Taking the closest of a few tries keeps the error of a
 * pair within tens of nanoseconds. */
static uint64_t counter_and_clock(uint64_t *counter)
{
    uint64_t best_width = UINT64_MAX, best_clock = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t before = clock_ns(CLOCK_MONOTONIC);
        uint64_t value = flightrec_counter();
        uint64_t after = clock_ns(CLOCK_MONOTONIC);
        if (after - before < best_width) {
            best_width = after - before;
            best_clock = before + (after - before) / 2;
            *counter = value;
        }
    }
    return best_clock;
}

void flightrec__timebase_init(void)
{
    monotonic_at_base = counter_and_clock(&timebase.base);
    uint64_t realtime = clock_ns(CLOCK_REALTIME);
    uint64_t monotonic = clock_ns(CLOCK_MONOTONIC);
    timebase.realtime_ns = realtime - (monotonic - monotonic_at_base);
}

const struct flightrec_timebase *flightrec__timebase(void)
{
    return &timebase;
}

#if !defined(FLIGHTREC_PORT_COUNTER) && (defined(__x86_64__) || defined(__i386__))
/* Frequency of a counter that does not say it: measured against
 * CLOCK_MONOTONIC over at least 20 ms since start-up (waiting for the
 * rest, once).  The first stream fixes it for the process. */
static uint64_t measure_frequency(void)
{
    const uint64_t min_span = 20000000u;
    uint64_t counter;
    uint64_t now = counter_and_clock(&counter);
    if (now - monotonic_at_base < min_span) {
        uint64_t rest = min_span - (now - monotonic_at_base);
        struct timespec ts = { 0, (long)rest };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        now = counter_and_clock(&counter);
    }
    /* A double keeps 53 bits: far below the measurement's own error. */
    double ticks = (double)(counter - timebase.base);
    double span = (double)(now - monotonic_at_base);
    return (uint64_t)(ticks * 1e9 / span + 0.5);
}
#endif

uint64_t flightrec_counter_frequency(void)
{
    uint64_t cached = atomic_load_explicit(&frequency_cache,
                                           memory_order_relaxed);
    if (cached != 0)
        return cached;
    flightrec__ensure_init();
#if defined(FLIGHTREC_PORT_COUNTER)
    cached = flightrec_port_counter_frequency();
#elif defined(__x86_64__) || defined(__i386__)
    cached = measure_frequency();
#elif defined(__aarch64__)
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(cached));
#else
    cached = 1000000000u;
#endif
    atomic_store_explicit(&frequency_cache, cached, memory_order_relaxed);
    return cached;
}

int32_t flightrec__port_thread_id(void)
{
    return (int32_t)syscall(SYS_gettid);
}

int32_t flightrec__port_process_id(void)
{
    return (int32_t)getpid();
}

/* Formats a decimal number into @p; returns the end. */
static char *put_decimal(char *p, uint32_t value)
{
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

/* open/read/close only: usable from a signal handler. */
int flightrec__port_thread_name(int32_t tid, char name[16])
{
    char path[64] = "/proc/self/task/";
    if (tid <= 0)
        return -1;
    char *p = put_decimal(path + 16, (uint32_t)tid);
    const char *suffix = "/comm";
    while (*suffix)
        *p++ = *suffix++;
    *p = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n;
    do {
        n = read(fd, name, 15);
    } while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return -1;
    if (name[n - 1] == '\n')
        n--;
    name[n] = '\0';
    return 0;
}

void *flightrec__port_alloc(size_t size)
{
    void *memory = mmap(NULL, size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return memory == MAP_FAILED ? NULL : memory;
}

void flightrec__port_free(void *memory, size_t size)
{
    munmap(memory, size);
}
