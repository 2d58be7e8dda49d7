/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Internals shared by the files of libflightrec-preload: the group
 * switches, the re-entry guard, the recording helpers and the real
 * functions found with dlsym(RTLD_NEXT).
 */
#ifndef FLIGHTREC_PRELOAD_H
#define FLIGHTREC_PRELOAD_H

#include <errno.h>
#include <stdint.h>

#include <flightrec.h>

/* The library exports the wrapped names only (it is built with default
 * visibility so that they interpose); its own functions stay inside. */
#pragma GCC visibility push(hidden)

/** Event groups, switched by FLIGHTREC_GROUPS (see docs/record.md). */
enum {
    GROUP_THREADS = 1u << 0,
    GROUP_LOCKS = 1u << 1,
    GROUP_MEMORY = 1u << 2,
    GROUP_IO = 1u << 3,
    GROUP_PROCESS = 1u << 4,
    GROUP_SIGNALS = 1u << 5,
    GROUP_ALL = (1u << 6) - 1
};

/** Groups in force; until the constructor has read the environment, all
 * (preload) or none (--wrap: libc's own start-up is not the program's). */
extern unsigned preload_groups;

/** Set while this thread runs the recorder (a wrapper's own bookkeeping, the
 * producer's slow paths, the drain thread): calls made then go straight to
 * the real functions, so that recording never recurses into itself. */
extern _Thread_local int preload_busy __attribute__((tls_model("initial-exec")));

/** Whether a wrapper of @a group records: the group is on and this thread is
 * not inside the recorder. */
static inline int preload_on(unsigned group)
{
    return (preload_groups & group) != 0 && !preload_busy;
}

/* Records keep errno: the producer's slow paths preserve it themselves
 * (they may make system calls), its fast paths make none. */
static inline void rec1(uint32_t event, uintptr_t data)
{
    preload_busy = 1;
    flightrec_produce(event, data);
    preload_busy = 0;
}

static inline void rec2(uint32_t e0, uintptr_t d0, uint32_t e1, uintptr_t d1)
{
    preload_busy = 1;
    flightrec_produce_2(e0, d0, e1, d1);
    preload_busy = 0;
}

static inline void rec3(uint32_t e0, uintptr_t d0, uint32_t e1, uintptr_t d1,
                        uint32_t e2, uintptr_t d2)
{
    struct flightrec_item_in items[3] = {
        { e0, d0 }, { e1, d1 }, { e2, d2 }
    };
    preload_busy = 1;
    flightrec_produce_n(items, 3);
    preload_busy = 0;
}

/** The exit event of a call returning @a result: the result, and ERRNO
 * with the same time when the call failed (result -1). */
static inline void rec_result(uint32_t event, long result)
{
    if (result == -1)
        rec2(event, (uintptr_t)result, FLIGHTREC_EV_ERRNO, (uintptr_t)errno);
    else
        rec1(event, (uintptr_t)result);
}

static inline void rec4(uint32_t e0, uintptr_t d0, uint32_t e1, uintptr_t d1,
                        uint32_t e2, uintptr_t d2, uint32_t e3, uintptr_t d3)
{
    struct flightrec_item_in items[4] = {
        { e0, d0 }, { e1, d1 }, { e2, d2 }, { e3, d3 }
    };
    preload_busy = 1;
    flightrec_produce_n(items, 4);
    preload_busy = 0;
}

/*
 * One source, two builds.  The preload library (LD_PRELOAD) defines the
 * functions under their own names and calls the next definition, found with
 * dlsym(RTLD_NEXT).  The --wrap library (FLIGHTREC_WRAP_BUILD, linked with
 * -Wl,--wrap=NAME, docs/record.md) defines __wrap_NAME and calls
 * __real_NAME, which the linker binds to the real function.
 *
 * WRAPPER(name) is the name a wrapper is defined under, REAL(name) the
 * function it hides, DECLARE_REAL(type, name, params) declares the latter.
 */
#if defined(FLIGHTREC_WRAP_BUILD)
/* The __wrap_ definitions have no prototypes anywhere: the linker is
 * their only caller. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#define WRAPPER(name) __wrap_##name
#define WRAPPER_STRING(name) "__wrap_" #name
#define DECLARE_REAL(type, name, params) type __real_##name params
#define REAL(name) __real_##name
#else
#define WRAPPER(name) name
#define WRAPPER_STRING(name) #name
#define DECLARE_REAL(type, name, params) static type(*real_##name) params

/** Looks up the next definition of @a name (the one the wrapper hides);
 * aborts with a message when there is none. */
void *preload_resolve(const char *name);

/** Resolves @a name into *@a slot (a function pointer) and returns it. */
void *preload_resolve_into(void *slot, const char *name);

#define REAL(name) \
    (real_##name != NULL ? real_##name \
     : (__typeof__(real_##name))preload_resolve_into(&real_##name, #name))
#endif

/** This thread's kernel thread id (cached). */
int preload_tid(void);

/** Whether @a fd is one the recorder writes or waits on: the program's
 * close() and dup2() leave it alone. */
int preload_owns_fd(int fd);

/** Moves the recorder's descriptors out of the way of dup2(x, @a fd). */
void preload_vacate_fd(int fd);

/** The real sigaction(), past the signals group's wrapper. */
struct sigaction;
int preload_real_sigaction(int sig, const struct sigaction *act,
                           struct sigaction *old);

/** The handler of SIGINT, SIGTERM and SIGHUP while the program leaves them
 * at their default action (a last drain, then that action). */
void preload_end_signal_handler(int sig);

/** Writes everything recorded so far to the recording (exit, exec). */
void preload_flush(void);

/** Called in the child of fork(): a file of its own, a drain thread. */
void preload_after_fork_child(void);
/** Around fork() in the parent: no drain is in progress while it forks. */
void preload_before_fork(void);
void preload_after_fork_parent(void);

/** Context switches from perf (switches.c).  Opens one event per CPU on
 * this process unless FLIGHTREC_SWITCHES=0; says once on stderr, unless
 * @a quiet, why it cannot.  Returns 1 when recording switches. */
int preload_switches_start(int quiet);
/** Writes the switches since the last call to @a fd as processor-ring
 * chunks, after a drain of the rings that returned @a drained (nothing is
 * written unless it is 0: the stream header must come first). */
void preload_switches_drain(int fd, int drained);
/** In the child of fork(): the child's own events. */
void preload_switches_after_fork(void);
/** Writes to @a fd what a failed write of the switches left (the end of an
 * item it cut goes before anything else); 0, or -1 if it still cannot. */
int preload_switches_resume(int fd);

#pragma GCC visibility pop

#endif
