/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief The signals group: handlers the program installs run inside a
 * trampoline that records INTERRUPT_ENTRY and INTERRUPT_EXIT with the
 * signal number (signals are the interrupts of user space, docs/format.md).
 *
 * sigaction() and signal() install the trampoline in the program's place
 * and report the program's own handler back as the previous one.  The
 * trampoline records even while its thread is inside a wrapper: the
 * producer puts what a handler records in the interrupted thread's signal
 * ring.
 */
/* _GNU_SOURCE comes from the build. */
#undef _FILE_OFFSET_BITS

#include "preload.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

DECLARE_REAL(int, sigaction,
             (int, const struct sigaction *, struct sigaction *));

/* The program's handler and flags per signal, while the trampoline stands
 * in for it. */
static _Atomic uintptr_t program_handler[NSIG];
static _Atomic int program_flags[NSIG];

int preload_real_sigaction(int sig, const struct sigaction *act,
                           struct sigaction *old)
{
    return REAL(sigaction)(sig, act, old);
}

static void record_signal(uint32_t event, int sig)
{
    if ((preload_groups & GROUP_SIGNALS) == 0)
        return;
    int saved = errno;
    flightrec_produce(event, (uintptr_t)sig);
    errno = saved;
}

static void trampoline(int sig, siginfo_t *info, void *context)
{
    record_signal(FLIGHTREC_EV_INTERRUPT_ENTRY, sig);
    uintptr_t handler = atomic_load(&program_handler[sig]);
    int flags = atomic_load(&program_flags[sig]);
    if ((flags & SA_SIGINFO) != 0) {
        void (*fn)(int, siginfo_t *, void *);
        memcpy(&fn, &handler, sizeof fn);
        fn(sig, info, context);
    } else {
        void (*fn)(int);
        memcpy(&fn, &handler, sizeof fn);
        if (fn != SIG_DFL && fn != SIG_IGN)
            fn(sig);
    }
    record_signal(FLIGHTREC_EV_INTERRUPT_EXIT, sig);
}

int WRAPPER(sigaction)(int sig, const struct sigaction *act,
                       struct sigaction *old)
{
    if (sig <= 0 || sig >= NSIG)
        return REAL(sigaction)(sig, act, old);
    uintptr_t previous_handler = atomic_load(&program_handler[sig]);
    int previous_flags = atomic_load(&program_flags[sig]);
    struct sigaction mine;
    const struct sigaction *use = act;
    int wrapped = 0;
    if (act != NULL && (preload_groups & GROUP_SIGNALS) != 0 &&
        act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN) {
        uintptr_t handler;
        if ((act->sa_flags & SA_SIGINFO) != 0)
            memcpy(&handler, &act->sa_sigaction, sizeof handler);
        else
            memcpy(&handler, &act->sa_handler, sizeof handler);
        atomic_store(&program_handler[sig], handler);
        atomic_store(&program_flags[sig], act->sa_flags);
        mine = *act;
        mine.sa_sigaction = trampoline;
        mine.sa_flags |= SA_SIGINFO;
        use = &mine;
        wrapped = 1;
    }
    int r = REAL(sigaction)(sig, use, old);
    if (r != 0 && wrapped) {
        atomic_store(&program_handler[sig], previous_handler);
        atomic_store(&program_flags[sig], previous_flags);
    }
    if (r == 0 && old != NULL) {
        if (old->sa_sigaction == trampoline) {
            /* The program's own handler, as it installed it. */
            old->sa_flags = previous_flags;
            if ((previous_flags & SA_SIGINFO) != 0)
                memcpy(&old->sa_sigaction, &previous_handler,
                       sizeof previous_handler);
            else
                memcpy(&old->sa_handler, &previous_handler,
                       sizeof previous_handler);
        } else if (old->sa_handler == preload_end_signal_handler) {
            /* Ours stands for the default action it ends with. */
            old->sa_handler = SIG_DFL;
            old->sa_flags = 0;
            sigemptyset(&old->sa_mask);
        }
    }
    return r;
}

/* glibc's signal() calls its internal sigaction: it needs a wrapper of its
 * own.  BSD semantics, as glibc's: restart, the signal blocked while its
 * handler runs. */
sighandler_t WRAPPER(signal)(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sig > 0 && sig < NSIG)
        sigaddset(&sa.sa_mask, sig);
    if (WRAPPER(sigaction)(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}
