/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief The session files as the commands that read them (ls, dump,
 * stream, rm, ctl, serve) open and look into them: one way to find and open
 * one, to name a live thread and to know the time-stamp counter's rate.
 */
#ifndef FLIGHTREC_CLI_SESSION_H
#define FLIGHTREC_CLI_SESSION_H

#include <stdint.h>

#include <flightrec/region.h>

#include "../../src/region/session.h"

static inline const struct flightrec_region_header *
cli_region_header(const unsigned char *base)
{
    return (const void *)base;
}

static inline struct flightrec_region_control *
cli_region_control(unsigned char *base)
{
    return (void *)(base + cli_region_header(base)->control_offset);
}

static inline const struct flightrec_region_process *
cli_region_process(const unsigned char *base)
{
    return (const void *)(base + cli_region_header(base)->process_offset);
}

/** Finds the session of @a arg (a pid or a session file,
 * fr_session_locate()) and opens it (fr_session_open()), for changes with
 * @a writable.  0, or -1 after a message (none with @a quiet). */
int cli_session_open(const char *arg, int writable, struct fr_session *s,
                     int quiet);

/** The current name of thread @a tid of live process @a pid, read from
 * /proc (the region keeps the name it had at its first event), as the
 * stream's name words; NULL if it cannot be read. */
const uint32_t *cli_live_thread_name(int32_t pid, int32_t tid,
                                     uint32_t words[4]);

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t cli_monotonic_ns(void);

/** The counter frequency the header @a h gives.  A process killed (or read)
 * before it calibrated its time-stamp counter left 0: this machine's
 * counter is the same one, so it is measured here (20 ms), with a warning
 * when @a say. */
uint64_t cli_counter_frequency(const struct flightrec_region_header *h,
                               int say);

#endif
