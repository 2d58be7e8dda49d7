/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sessions: a recording process's region as a file in a per-user
 * directory, so that other processes of the same user can list, dump,
 * stream and control it, and read it after the process died.
 *
 *   $XDG_RUNTIME_DIR/flightrec/        (or /dev/shm/flightrec-UID/)
 *       PID-STARTTIME.region           0600, one per process
 *       PID-STARTTIME-N.region         the Nth (2, 3, ...) program the
 *                                      process ran: after an exec the pid
 *                                      and start time are the same
 *
 * The directory is 0700 and must belong to the user; files are created
 * without following a symbolic link and checked to belong to the user.
 */
#ifndef FLIGHTREC_SESSION_H
#define FLIGHTREC_SESSION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <flightrec/region.h>

#define FR_SESSION_SUFFIX ".region"

/* The session directory of the calling user into @path.  With @create it
 * is made (0700) if missing.  Refused, with a message, when it is not a
 * directory of this user with no access for others, or is a symbolic
 * link.  0 or -errno. */
int fr_session_dir(char *path, size_t size, int create, char *message,
                   size_t message_size);

/* Creates the session file of the program now running as process @pid
 * (start time @start_time) in @dir, 0600, O_EXCL, not following a link,
 * under a hidden name (".PID-START.new", which listings skip) until
 * fr_session_publish() names it, once its header is filled: no reader
 * ever finds a session file that is not yet a region.  The hidden path
 * into @path; the descriptor, or -errno (-ENAMETOOLONG: the path does not
 * fit). */
int fr_session_create(char *path, size_t size, const char *dir, int32_t pid,
                      uint64_t start_time);

/* Gives the file fr_session_create() made at @path its session name:
 * "PID-START.region", or, when an earlier program of the same process (it
 * called exec) left that name, the first free "PID-START-N.region"; never
 * replacing a file.  @path becomes the session's path.  0 or -errno. */
int fr_session_publish(char *path, size_t size, const char *dir, int32_t pid,
                       uint64_t start_time);

/* The start time of process @pid (/proc/PID/stat, clock ticks since boot),
 * 0 if there is no such process.  Tells a live process from a dead one
 * whose pid was reused. */
uint64_t fr_process_start_time(int32_t pid);

/* An open session file, mapped. */
struct fr_session {
    char path[512];
    int fd;
    unsigned char *base;
    size_t size;
    int writable;
};

/* Opens the session file @path (without following a symbolic link; it must
 * be a regular file of this user) and maps it, read-only or, with
 * @writable, for a consumer or a control change; the region is checked
 * (region-check.h).  0, or -1 with a message. */
int fr_session_open(struct fr_session *s, const char *path, int writable,
                    char *message, size_t message_size);
/* Maps again if the file grew (new rings); 0 or -1 with a message. */
int fr_session_remap(struct fr_session *s, char *message,
                     size_t message_size);
void fr_session_close(struct fr_session *s);
/* Whether process @pid maps the session file @s (1), not (0: it called
 * exec, so its recording is no longer that file), or -1 if its maps
 * cannot be read. */
int fr_session_mapped_by(const struct fr_session *s, int32_t pid);

/* The session file of process @pid in the session directory: the newest
 * of the live process (its current program's, after an exec), else the
 * newest.  0 or -1 with a message.
 * @arg may also be a path (it contains a '/' or ends in ".region"). */
int fr_session_locate(const char *arg, char *path, size_t size,
                      char *message, size_t message_size);

/* Whether the process that wrote @region (pid and start time) is alive:
 * a pid reused by another process counts as dead. */
int fr_session_alive(const unsigned char *region);

/* Whether the session's process still records into it: alive and still
 * mapping the file (a process that called exec does not, though its pid
 * and start time are the same).  Unreadable maps count as mapped. */
int fr_session_recording(const struct fr_session *s);

/* fr_session_recording() for a loop that asks often: the maps (a costly
 * read) are looked at when @every_ns passed since *@last_maps_ns (the
 * caller's, 0 at first; @now_ns a monotonic time), else only whether the
 * process is alive.  A process that called exec is seen dead within
 * @every_ns, and stays dead (*@last_maps_ns says so). */
int fr_session_recording_every(const struct fr_session *s, uint64_t now_ns,
                               uint64_t *last_maps_ns, uint64_t every_ns);

struct flightrec_region_control;
/* Claims the region's one consumer slot for process @pid (start time
 * @start): 0, or -1 with the live holder's pid in *holder.  The claim of a
 * consumer that died is taken over, so none goes stale. */
int fr_consumer_claim(struct flightrec_region_control *control, int32_t pid,
                      uint64_t start, int32_t *holder);
/* The control lock of a region (struct flightrec_region_control, lock):
 * taken by whoever changes the control words, the program or `flightrec
 * ctl`; a holder that died (its pid gone or reused, or a zombie) loses it.
 * Waits while a live holder has it (a few stores), 2 s at most: then -1,
 * and the holder's pid in *@holder (if not NULL). */
int fr_control_lock(_Atomic flightrec_region_word *lock, int32_t pid,
                    uint64_t start, int32_t *holder);
void fr_control_unlock(_Atomic flightrec_region_word *lock, int32_t pid,
                       uint64_t start);
void fr_consumer_release(struct flightrec_region_control *control,
                         int32_t pid);

#endif
