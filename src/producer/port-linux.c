/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hosted Linux port (platform.h): region memory from anonymous
 * mappings, thread identity from the kernel, the environment, clocks.
 */
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void *flightrec__port_region_reserve(size_t *size)
{
    /* Address space only: pages are committed when a ring is first
     * written (or prefaulted), and never more than the rings in use. */
    for (size_t want = *size; want >= ((size_t)16 << 20); want /= 2) {
        void *memory = mmap(NULL, want, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (memory != MAP_FAILED) {
            *size = want;
            return memory;
        }
    }
    return NULL;
}

void flightrec__port_region_discard(void *at, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)at + (uintptr_t)page - 1) &
                      ~((uintptr_t)page - 1);
    uintptr_t last = ((uintptr_t)at + size) & ~((uintptr_t)page - 1);
    if (last > first)
        (void)madvise((void *)first, last - first, MADV_DONTNEED);
}

void flightrec__port_region_prefault(void *at, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    volatile unsigned char *p = at;
    for (size_t i = 0; i < size; i += (size_t)page)
        p[i] = p[i];
}

int32_t flightrec__port_thread_id(void)
{
    return (int32_t)syscall(SYS_gettid);
}

int32_t flightrec__port_process_id(void)
{
    return (int32_t)getpid();
}

int flightrec__port_self_name(char name[16])
{
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
        return -1;
    name[15] = '\0';
    return 0;
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

static pthread_key_t exit_key;

void flightrec__port_thread_exit_init(void (*fn)(void *arg))
{
    (void)pthread_key_create(&exit_key, fn);
}

int flightrec__port_on_thread_exit(void *arg)
{
    /* Any non-NULL value: the destructor runs at thread exit. */
    return pthread_setspecific(exit_key, arg) == 0 ? 0 : -1;
}

void flightrec__port_at_fork_child(void (*fn)(void))
{
    (void)pthread_atfork(NULL, NULL, fn);
}

void flightrec__port_yield(void)
{
    sched_yield();
}

const char *flightrec__port_getenv(const char *name)
{
    return getenv(name);
}

void flightrec__port_message(const char *text, size_t length)
{
    (void)!write(STDERR_FILENO, text, length);
}

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t flightrec__port_monotonic_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

uint64_t flightrec__port_realtime_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

void flightrec__port_sleep_ns(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000u),
                           (long)(ns % 1000000000u) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}
