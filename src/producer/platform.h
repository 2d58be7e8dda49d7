/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The port seam of the recording runtime: everything it needs from the
 * system, in one place.  port-linux.c implements it for hosted Linux; a
 * firmware port provides the same functions (a static array for the
 * region, the scheduler's task id, no environment).
 *
 * Functions marked "signal-safe" may run in a signal handler or an
 * interrupt; the others run only in thread context.
 */
#ifndef FLIGHTREC_PLATFORM_H
#define FLIGHTREC_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include <flightrec/region.h>

/* Region memory: reserves up to *size bytes (less if that much cannot be
 * had: *size says how much), zeroed, pages committed when first touched.
 * NULL if nothing could be reserved. */
void *flightrec__port_region_reserve(size_t *size);
/* Gives the pages of [at, at + size) back; they read as zero afterwards. */
void flightrec__port_region_discard(void *at, size_t size);
/* Touches [at, at + size) so that recording takes no page fault there. */
void flightrec__port_region_prefault(void *at, size_t size);
#ifndef FLIGHTREC_PORT_FIRMWARE
/* Maps the pages of [at, at + size) writable without writing them (safe
 * while a producer writes there); nothing where the system cannot.
 * Hosted only: the drain calls it for the pages a producer writes next. */
void flightrec__port_region_populate(void *at, size_t size);
#endif
#if defined(FLIGHTREC_PORT_FIRMWARE)
/* Firmware: the bytes of the stream that write() took since start-up
 * (mod 2^32), each counted as it is taken, so that a fault handler's
 * drain can go on from the byte where an interrupted drain's output
 * stopped. */
uint32_t flightrec__port_stream_taken(void);
#endif
/* The unit region parts are placed in, so that a file can back them. */
size_t flightrec__port_page_size(void);

struct flightrec_region_process;
/* Backs [base, base + size) of a reserved region with a session file that
 * other processes of the user can open (before anything is written
 * there), and fills in @process.  0, or -1 (private memory stays) with a
 * line in @message saying why. */
int flightrec__port_region_share(void *base, size_t size,
                                 struct flightrec_region_process *process,
                                 char *message, size_t message_size);
/* Once the region's header is filled in: makes the session file that
 * flightrec__port_region_share() made visible to other processes under
 * its name.  0, or -1 with a line in @message (the rings stay where they
 * are; other processes do not see them). */
int flightrec__port_region_publish(char *message, size_t message_size);
/* After fork() in the child: @process describes the child now (pid and
 * start time, so that its claims and listings are its own). */
void flightrec__port_process_forked(struct flightrec_region_process *process);
/* Extends the backing of a shared region from @from to @to bytes (page
 * multiples): space is reserved up front, so a full file system is a
 * failed call here (-1) and never a SIGBUS later.  0 for private memory. */
int flightrec__port_region_grow(void *base, size_t from, size_t to);
/* Whether the region is backed by a session file. */
int flightrec__port_region_is_shared(void);
/* fork() of a process whose region is shared: before it, the parent takes
 * a private snapshot (zeroed memory of @size bytes that it fills in); the
 * child puts the snapshot in place of the region (its own from then on,
 * without a session file); the parent drops it. */
void *flightrec__port_region_snapshot_begin(size_t size);
/* Copies @n bytes of the live region into the snapshot.  Other threads may
 * be writing their rings' words meanwhile: the child gives those rings up,
 * so what it copies of them does not matter (a race by design). */
void flightrec__port_region_snapshot_copy(void *to, const void *from,
                                          size_t n);
/* In the child: puts the snapshot (NULL: none could be had) in place of
 * [base, base + size) and lets go of the session file.  0, or -1 when the
 * region is not the snapshot: it is then zeroed private memory (the
 * parent's file no longer mapped), and the child must not use it. */
int flightrec__port_region_snapshot_install(void *base, void *snapshot,
                                            size_t size);
void flightrec__port_region_snapshot_drop(void *snapshot, size_t size);

/* The hot page.  With a session file: maps the file's page at @hot_offset
 * over @page (the process's control page, @page_bytes of its own and
 * already copied to the file), so that the hot path reads the file's words;
 * 0, or -1 when it cannot (no session file, or the page is not alone in
 * its pages) and the control words stay private. */
int flightrec__port_hot_share(void *page, size_t page_bytes,
                              size_t hot_offset);
/* Once the region's header is filled in: makes the session file that
 * flightrec__port_region_share() made visible to other processes under
 * its name.  0, or -1 with a line in @message (the rings stay where they
 * are; other processes do not see them). */
int flightrec__port_region_publish(char *message, size_t message_size);
/* After fork() in the child: @page becomes private again, with the same
 * contents (the session file is the parent's). */
void flightrec__port_hot_unshare(void *page);
/* The region's control lock (struct flightrec_region_control, lock):
 * excludes a `flightrec ctl` of another process while the program changes
 * the control words.  Needed only while the hot page is shared.  0, or -1
 * when a holder kept it too long (a stopped `flightrec ctl`). */
int flightrec__port_control_lock(_Atomic flightrec_region_word *lock);
void flightrec__port_control_unlock(_Atomic flightrec_region_word *lock);

/* Identity (signal-safe). */
int32_t flightrec__port_thread_id(void);
int32_t flightrec__port_process_id(void);
/* The calling thread's name, without a file system read (signal-safe);
 * 0 or -1. */
int flightrec__port_self_name(char name[16]);
/* The current name of thread @tid of this process (may read a file);
 * 0 or -1. */
int flightrec__port_thread_name(int32_t tid, char name[16]);

/* Runs @fn(arg) when the calling thread exits; 0 or -1.  Registered once
 * per thread, re-armed by calling it again. */
int flightrec__port_on_thread_exit(void *arg);
void flightrec__port_thread_exit_init(void (*fn)(void *arg));
/* Runs @prepare before fork(), then @parent or @child after it. */
void flightrec__port_at_fork(void (*prepare)(void), void (*parent)(void),
                             void (*child)(void));

/* Lets another thread run (waiting for a lock or for start-up). */
void flightrec__port_yield(void);

/* Environment: NULL where unset (always NULL on firmware). */
const char *flightrec__port_getenv(const char *name);
/* One line for the operator (standard error), signal-safe. */
void flightrec__port_message(const char *text, size_t length);

/* Clocks in nanoseconds, for calibrating the counter (timebase.c). */
uint64_t flightrec__port_monotonic_ns(void);
uint64_t flightrec__port_realtime_ns(void);
/* Sleeps about @ns nanoseconds. */
void flightrec__port_sleep_ns(uint64_t ns);

#endif
