/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Calls that make a process without running the atfork handlers: _Fork()
 * (glibc 2.34) and clone() without CLONE_VM.  Their child would otherwise
 * write into its parent's rings and recording; the wrappers give it what
 * fork() gives (the runtime's handlers, then the library's): a copy of its
 * own and a file of its own.  syscall(SYS_fork) and syscall(SYS_clone)
 * cannot be told from other system calls and are not covered
 * (docs/record.md).  Preload library only.
 */
#include "preload.h"

#include <sched.h>
#include <stdarg.h>
#include <unistd.h>

/* The runtime's fork handlers, run by hand (src/producer/port-linux.c). */
int flightrec__fork_prepare(void);
void flightrec__fork_parent(int ran);
void flightrec__fork_child(int ran);

DECLARE_REAL(pid_t, _Fork, (void));
DECLARE_REAL(int, clone, (int (*)(void *), void *, int, void *, ...));

pid_t WRAPPER(_Fork)(void)
{
    int on = preload_on(GROUP_PROCESS);
    if (on)
        rec1(FLIGHTREC_EV_FUNCTION_ENTRY, (uintptr_t)REAL(_Fork));
    preload_before_fork();
    int ran = flightrec__fork_prepare();
    pid_t pid = REAL(_Fork)();
    if (pid == 0) {
        flightrec__fork_child(ran);
        preload_after_fork_child();
    } else {
        flightrec__fork_parent(ran);
        preload_after_fork_parent();
    }
    if (on)
        rec2(FLIGHTREC_EV_FUNCTION_EXIT, (uintptr_t)REAL(_Fork),
             FLIGHTREC_EV_RETURN_0, (uintptr_t)(intptr_t)pid);
    return pid;
}

/* The child's start: the handlers, then the program's function.  On the
 * parent's stack, which the child has a copy of (no CLONE_VM). */
struct clone_start {
    int (*fn)(void *);
    void *arg;
    int ran;
};

static int clone_child(void *start)
{
    const struct clone_start *s = start;
    flightrec__fork_child(s->ran);
    preload_after_fork_child();
    return s->fn(s->arg);
}

int WRAPPER(clone)(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    pid_t *parent_tid = va_arg(ap, pid_t *);
    void *tls = va_arg(ap, void *);
    pid_t *child_tid = va_arg(ap, pid_t *);
    va_end(ap);
    if (flags & (CLONE_VM | CLONE_THREAD))
        return REAL(clone)(fn, stack, flags, arg, parent_tid, tls, child_tid);
    preload_before_fork();
    struct clone_start start = { fn, arg, flightrec__fork_prepare() };
    int pid = REAL(clone)(clone_child, stack, flags, &start, parent_tid, tls,
                          child_tid);
    flightrec__fork_parent(start.ran);
    preload_after_fork_parent();
    return pid;
}
