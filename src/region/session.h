/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sessions: a recording process's region as a file in a per-user
 * directory, so that other processes of the same user can list, dump,
 * stream and control it, and read it after the process died.
 *
 *   $XDG_RUNTIME_DIR/flightrec/        (or /dev/shm/flightrec-UID/)
 *       PID-STARTTIME.region           0600, one per process
 *
 * The directory is 0700 and must belong to the user; files are created
 * without following a symbolic link and checked to belong to the user.
 */
#ifndef FLIGHTREC_SESSION_H
#define FLIGHTREC_SESSION_H

#include <stddef.h>
#include <stdint.h>

#define FR_SESSION_SUFFIX ".region"

/* The session directory of the calling user into @path.  With @create it
 * is made (0700) if missing.  Refused, with a message, when it is not a
 * directory of this user with no access for others, or is a symbolic
 * link.  0 or -errno. */
int fr_session_dir(char *path, size_t size, int create, char *message,
                   size_t message_size);

/* "DIR/PID-START.region" into @out; 0, or -1 if it does not fit. */
int fr_session_path(char *out, size_t size, const char *dir, int32_t pid,
                    uint64_t start_time);

/* The start time of process @pid (/proc/PID/stat, clock ticks since boot),
 * 0 if there is no such process.  Tells a live process from a dead one
 * whose pid was reused. */
uint64_t fr_process_start_time(int32_t pid);

#endif
