/* SPDX-License-Identifier: BSD-2-Clause */
#define _POSIX_C_SOURCE 200809L

#include "cli-session.h"

#include "cli.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cli_session_open(const char *arg, int writable, struct fr_session *s,
                     int quiet)
{
    char path[512], message[600], safe[700];
    if (fr_session_locate(arg, path, sizeof(path), message,
                          sizeof(message)) == 0 &&
        fr_session_open(s, path, writable, message, sizeof(message)) == 0)
        return 0;
    if (!quiet)
        cli_msg(CLI_ERROR, "%s", cli_escape(safe, sizeof(safe), message));
    return -1;
}

const uint32_t *cli_live_thread_name(int32_t pid, int32_t tid,
                                     uint32_t words[4])
{
    char path[64], name[17];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, name, 16);
    close(fd);
    if (n <= 0)
        return NULL;
    if (name[n - 1] == '\n')
        n--;
    memset(words, 0, 16);
    for (ssize_t i = 0; i < n; i++)
        words[i / 4] |= (uint32_t)(unsigned char)name[i] << (8 * (i % 4));
    return words;
}

uint64_t cli_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cli_counter_frequency(const struct flightrec_region_header *h,
                               int say)
{
    uint64_t frequency = atomic_load(&h->counter_frequency);
#if defined(__x86_64__) || defined(__i386__)
    if (frequency == 0 && h->counter_kind == FLIGHTREC_REGION_COUNTER_TSC) {
        uint64_t t0 = cli_monotonic_ns(), c0 = __builtin_ia32_rdtsc();
        struct timespec pause = { 0, 20 * 1000 * 1000 };
        nanosleep(&pause, NULL);
        uint64_t t1 = cli_monotonic_ns(), c1 = __builtin_ia32_rdtsc();
        frequency = (uint64_t)((double)(c1 - c0) * 1e9 / (double)(t1 - t0));
        if (say)
            cli_msg(CLI_WARN, "the process had not calibrated its counter; "
                              "measured here: %llu Hz",
                    (unsigned long long)frequency);
    }
#else
    (void)say;
#endif
    return frequency;
}
