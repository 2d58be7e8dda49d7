/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief libflightrec-preload: start-up, the recording file and its drain
 * thread, signals that end the program, fork, exec and exit.
 *
 * `flightrec record` starts the program with this library in LD_PRELOAD and
 * two variables: FLIGHTREC_RECORD_FD ("FD:DEV:INO", the file it created for
 * the program) and FLIGHTREC_RECORD_PATH (that file's path).  A thread of
 * ours drains the rings to the file every 10 ms and a last time at exit.
 * Every other process image (a forked child, or the image after an exec)
 * writes its own file, PATH.PID (PATH.PID.N if that exists).
 */
/* _GNU_SOURCE comes from the build; the wrappers define the plain names,
 * not the 64-bit-offset ones the headers would rename them to. */
#undef _FILE_OFFSET_BITS

#include "preload.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(FLIGHTREC_WRAP_BUILD)
/* Linked in, the wrappers also see libc's own start-up (its calls are
 * wrapped too in a static program): recording starts with the constructor,
 * before main(). */
unsigned preload_groups = 0;
/* The groups recorded when FLIGHTREC_GROUPS is not set: flightrec_wrap()
 * defines it for the program it links (cmake/FlightrecWrap.cmake). */
extern unsigned flightrec_wrap_groups;
__attribute__((weak)) unsigned flightrec_wrap_groups = GROUP_ALL;
#define DEFAULT_GROUPS (flightrec_wrap_groups & GROUP_ALL)
#else
unsigned preload_groups = GROUP_ALL;
#define DEFAULT_GROUPS GROUP_ALL
#endif
_Thread_local int preload_busy __attribute__((tls_model("initial-exec")));
static _Thread_local int cached_tid __attribute__((tls_model("initial-exec")));

/* Descriptors of ours, kept above those programs use. */
#define OUR_FD_MIN 900
static int record_fd = -1;
static int wake_fd[2] = { -1, -1 };
static int cached_pid;
static char record_path[4096];

static pthread_mutex_t drain_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_t drain_thread;
static int drain_started;
static volatile sig_atomic_t ending_signal;
/* Set by the process's last drains (exit, _exit): the drain thread writes no
 * more, so that the end of the process never cuts one of its writes. */
static int process_ending;
/* The exit status is recorded once per process: exit() ends in _exit(),
 * which a static program's libc calls through the --wrap wrapper too. */
static int status_recorded;

/* The runtime's pause between the drains of a loop (src/producer/dump.c). */
#pragma GCC visibility push(default)
uint64_t flightrec__drain_pause(uint64_t pause_ns, uint64_t elapsed_ns);
/* flightrec_drain() with thread names up to 10 ms old (the same file). */
int flightrec__drain_paced(int fd);
#pragma GCC visibility pop

DECLARE_REAL(int, close, (int));
DECLARE_REAL(int, dup2, (int, int));
DECLARE_REAL(int, dup3, (int, int, int));
DECLARE_REAL(int, close_range, (unsigned, unsigned, int));
DECLARE_REAL(pid_t, fork, (void));
DECLARE_REAL(void, exit, (int)) __attribute__((noreturn));
DECLARE_REAL(void, _exit, (int)) __attribute__((noreturn));
DECLARE_REAL(void, _Exit, (int)) __attribute__((noreturn));
DECLARE_REAL(int, execve, (const char *, char *const[], char *const[]));
DECLARE_REAL(int, execv, (const char *, char *const[]));
DECLARE_REAL(int, execvp, (const char *, char *const[]));
DECLARE_REAL(int, execvpe, (const char *, char *const[], char *const[]));
#if !defined(FLIGHTREC_WRAP_BUILD)
DECLARE_REAL(int, __libc_start_main, (int (*)(int, char **, char **), int,
                                      char **, void (*)(void), void (*)(void),
                                      void (*)(void), void *));
#endif

static void say(const char *text)
{
    /* Standard error may be closed or redirected: best effort, no stdio. */
    ssize_t r = write(2, text, strlen(text));
    (void)r;
}

#if !defined(FLIGHTREC_WRAP_BUILD)
void *preload_resolve(const char *name)
{
    int saved = preload_busy;
    preload_busy = 1;
    void *fn = dlsym(RTLD_NEXT, name);
    preload_busy = saved;
    if (fn == NULL) {
        say("flightrec preload: no definition of '");
        say(name);
        say("' to wrap\n");
        abort();
    }
    return fn;
}

void *preload_resolve_into(void *slot, const char *name)
{
    void *fn = preload_resolve(name);
    memcpy(slot, &fn, sizeof fn);
    return fn;
}
#endif

int preload_tid(void)
{
    if (cached_tid == 0)
        cached_tid = (int)syscall(SYS_gettid);
    return cached_tid;
}

int preload_owns_fd(int fd)
{
    return fd >= 0 && (fd == record_fd || fd == wake_fd[0] || fd == wake_fd[1]);
}

/* Moves @a fd of ours above OUR_FD_MIN; returns the new number. */
static int move_high(int fd)
{
    if (fd < 0)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, OUR_FD_MIN);
    if (high < 0)
        return fd;
    REAL(close)(fd);
    return high;
}

void preload_vacate_fd(int fd)
{
    if (fd == record_fd) {
        int n = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
        if (n >= 0) {
            REAL(close)(fd);
            record_fd = n;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (fd == wake_fd[i]) {
            int n = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
            if (n >= 0) {
                REAL(close)(fd);
                wake_fd[i] = n;
            }
        }
    }
}

/* The inherited descriptor "FD:DEV:INO" is ours only if it is still the
 * file `record` created and nothing has been written to it: after an exec
 * the number may name another file, or the same file already holding the
 * previous image's stream. */
static int inherited_record_fd(void)
{
    const char *spec = getenv("FLIGHTREC_RECORD_FD");
    if (spec == NULL || *spec == '\0')
        return -1;
    int fd;
    unsigned long long dev, ino;
    if (sscanf(spec, "%d:%llu:%llu", &fd, &dev, &ino) != 3 || fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || (unsigned long long)st.st_dev != dev ||
        (unsigned long long)st.st_ino != ino || st.st_size != 0 ||
        lseek(fd, 0, SEEK_CUR) != 0)
        return -1;
    return fd;
}

/* A file of this process image's own: PATH.PID, else PATH.PID.N. */
static int open_own_file(void)
{
    if (record_path[0] == '\0')
        return -1;
    char name[sizeof record_path + 40];
    for (int n = 0; n < 100; n++) {
        if (n == 0)
            snprintf(name, sizeof name, "%s.%d", record_path, cached_pid);
        else
            snprintf(name, sizeof name, "%s.%d.%d", record_path, cached_pid, n);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                      O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

/*
 * Disk blocks reserved ahead of the drains (fallocate, the file's size
 * unchanged): a write into reserved blocks costs the writing thread about a
 * quarter less CPU time on ext4 than one that extends the file block by
 * block, and the drain thread's time is the program's.  What is still
 * reserved past the end is given back by each last drain (and by the
 * kernel when the file is removed).  Only a file already RESERVE_BYTES
 * long gets a reserve: a process killed outright leaves at most that much
 * reserved past the end (counted by du, not by the file's size), never
 * more than the file holds.  Where fallocate fails (pipes, other file
 * systems) nothing is reserved from then on.
 */
#define RESERVE_BYTES ((off_t)8 << 20)
static off_t reserved_to;
static int reserve_failed;

/* Under drain_mutex. */
static void reserve_ahead(void)
{
    if (reserve_failed)
        return;
    off_t at = lseek(record_fd, 0, SEEK_CUR);
    if (at < 0)
        reserve_failed = 1; /* a pipe: nothing to reserve */
    if (at < RESERVE_BYTES || at + RESERVE_BYTES / 2 <= reserved_to)
        return;
    if (fallocate(record_fd, FALLOC_FL_KEEP_SIZE, at, RESERVE_BYTES) == 0)
        reserved_to = at + RESERVE_BYTES;
    else
        reserve_failed = 1;
}

/* Under drain_mutex: truncating to its own size frees what lies past it.
 * A last drain may run in any of the program's threads: errno is kept. */
static void reserve_give_back(void)
{
    struct stat st;
    if (reserved_to == 0)
        return;
    int saved = errno;
    if (fstat(record_fd, &st) == 0)
        (void)ftruncate(record_fd, st.st_size);
    reserved_to = 0;
    errno = saved;
}

/* @a who: 0 the drain thread, 1 a last drain of the process. */
static void drain_as(int who)
{
    if (record_fd < 0)
        return;
    int saved = preload_busy;
    preload_busy = 1;
    pthread_mutex_lock(&drain_mutex);
    if (who == 1)
        process_ending = 1;
    if (preload_switches_resume(record_fd) != 0) {
        /* The end of a cut switch item must go first: no drain yet. */
        if (who == 1)
            reserve_give_back();
    } else if (who == 1) { /* the names as they are now */
        preload_switches_drain(record_fd, flightrec_drain(record_fd));
        reserve_give_back();
    } else if (!process_ending) {
        reserve_ahead();
        preload_switches_drain(record_fd, flightrec__drain_paced(record_fd));
    }
    pthread_mutex_unlock(&drain_mutex);
    preload_busy = saved;
}

static void drain_now(void)
{
    drain_as(1);
}

void preload_flush(void)
{
    drain_now();
}

/* Ends the program with the signal that asked it to end, after a last
 * drain: the file is complete, the exit status the signal's. */
static void reset_default(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    preload_real_sigaction(sig, &sa, NULL);
}

static void end_by_signal(int sig)
{
    drain_now();
    reset_default(sig);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    kill(getpid(), sig);
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *drain_main(void *arg)
{
    (void)arg;
    preload_busy = 1; /* the drain thread records nothing */
    /* Every 10 ms while the rings fill slowly, down to 0.1 ms when they
     * fill fast: a drain finds its fullest ring about an eighth full, long
     * before the producers overwrite what it has not read.  The first
     * pause is the shortest: a program that records from its first
     * instructions fills a default ring in under 2 ms, and the pause only
     * grows by doubling (7 drains to reach 10 ms when idle). */
    uint64_t pause = 100u * 1000, last = monotonic_ns();
    for (;;) {
        struct pollfd p = { .fd = wake_fd[0], .events = POLLIN };
        struct timespec wait = { 0, (long)pause };
        (void)ppoll(&p, 1, &wait, NULL);
        if (ending_signal != 0) {
            int sig = ending_signal;
            /* From this thread the signal would be blocked; let another
             * thread die of it. */
            drain_as(1);
            reset_default(sig);
            kill(getpid(), sig);
            return NULL;
        }
        uint64_t now = monotonic_ns();
        drain_as(0);
        pause = flightrec__drain_pause(pause, now - last);
        last = now;
    }
}

void preload_end_signal_handler(int sig)
{
    ending_signal = sig;
    int saved = errno;
    char byte = 1;
    ssize_t r = write(wake_fd[1], &byte, 1);
    (void)r;
    errno = saved;
    if (!drain_started)
        end_by_signal(sig);
}

static void start_drain_thread(void)
{
    if (record_fd < 0)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int saved = preload_busy;
    preload_busy = 1;
    drain_started = pthread_create(&drain_thread, NULL, drain_main, NULL) == 0;
    preload_busy = saved;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* SIGINT, SIGTERM and SIGHUP end a program that does not handle them: let
 * them end it through a last drain.  A handler the program installs later
 * replaces ours, and the program then exits its own way (through exit()). */
static void take_end_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (preload_real_sigaction(sigs[i], NULL, &old) != 0 ||
            old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO) != 0)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = preload_end_signal_handler;
        sa.sa_flags = SA_RESTART;
        sigfillset(&sa.sa_mask);
        preload_real_sigaction(sigs[i], &sa, NULL);
    }
}

static int groups_from_text(const char *text, unsigned *out)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        { "threads", GROUP_THREADS }, { "locks", GROUP_LOCKS },
        { "memory", GROUP_MEMORY }, { "io", GROUP_IO },
        { "process", GROUP_PROCESS }, { "signals", GROUP_SIGNALS },
        { "all", GROUP_ALL },
        { "none", 0 },
    };
    unsigned groups = 0;
    const char *p = text;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        for (; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == len &&
                strncmp(names[i].name, p, len) == 0)
                break;
        if (i == sizeof names / sizeof names[0])
            return -1;
        groups |= names[i].bit;
        p += len;
        if (*p == ',')
            p++;
    }
    *out = groups;
    return 0;
}

static void open_recording(void)
{
    const char *path = getenv("FLIGHTREC_RECORD_PATH");
    if (path != NULL && strlen(path) < sizeof record_path)
        strcpy(record_path, path);
    int fd = inherited_record_fd();
    if (fd >= 0) {
        /* The number is written into the environment of children;
         * reusing it must not look like ours to them. */
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    } else {
        fd = open_own_file();
    }
    record_fd = move_high(fd);
    if (record_fd < 0 && (path != NULL || getenv("FLIGHTREC_RECORD_FD")))
        say("flightrec preload: cannot open the recording file; not "
            "recording\n");
    if (pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK) == 0) {
        wake_fd[0] = move_high(wake_fd[0]);
        wake_fd[1] = move_high(wake_fd[1]);
    }
}

static void at_exit_drain(void)
{
    drain_now();
}

__attribute__((constructor)) static void preload_init(void)
{
    preload_busy = 1;
    cached_pid = getpid();
    const char *text = getenv("FLIGHTREC_GROUPS");
    unsigned groups = DEFAULT_GROUPS;
    if (text != NULL && groups_from_text(text, &groups) != 0) {
        say("flightrec preload: FLIGHTREC_GROUPS: unknown group (threads, "
            "locks, memory, io, process, signals, all, none)\n");
        groups = 0;
    }
    open_recording();
#if !defined(FLIGHTREC_WRAP_BUILD)
    if (record_fd < 0)
        groups = 0;
#else
    /* Linked in (--wrap), without `flightrec record`: the wrappers record
     * into the rings all the same, for the program's own drain or dump. */
#endif
    preload_groups = groups;
    /* The calibration wait belongs to start-up, not to the first drain. */
    (void)flightrec_counter_frequency();
    if (record_fd >= 0) {
        atexit(at_exit_drain);
        take_end_signals();
        start_drain_thread();
        /* After the drain thread: it does not inherit the events. */
        pthread_mutex_lock(&drain_mutex);
        (void)preload_switches_start(0);
        pthread_mutex_unlock(&drain_mutex);
    }
    preload_busy = 0;
}

__attribute__((destructor)) static void preload_fini(void)
{
    drain_now();
}

/*=====   fork   =====*/

void preload_before_fork(void)
{
    int saved = preload_busy;
    preload_busy = 1;
    pthread_mutex_lock(&drain_mutex);
    preload_busy = saved;
}

void preload_after_fork_parent(void)
{
    int saved = preload_busy;
    preload_busy = 1;
    pthread_mutex_unlock(&drain_mutex);
    preload_busy = saved;
}

void preload_after_fork_child(void)
{
    preload_busy = 1;
    pthread_mutex_init(&drain_mutex, NULL);
    cached_pid = getpid();
    cached_tid = 0;
    drain_started = 0;
    ending_signal = 0;
    process_ending = 0;
    status_recorded = 0;
    if (record_fd >= 0) {
        REAL(close)(record_fd);
        /* The parent gives back its own file's reserve. */
        reserved_to = 0;
        reserve_failed = 0;
        record_fd = move_high(open_own_file());
        flightrec_drain_reset();
        if (record_fd < 0)
            preload_groups = 0;
    }
    start_drain_thread();
    if (record_fd >= 0) {
        pthread_mutex_lock(&drain_mutex);
        preload_switches_after_fork();
        pthread_mutex_unlock(&drain_mutex);
    }
    preload_busy = 0;
}

pid_t WRAPPER(fork)(void)
{
    int on = preload_on(GROUP_PROCESS);
    if (on)
        rec1(FLIGHTREC_EV_FUNCTION_ENTRY, (uintptr_t)REAL(fork));
    preload_before_fork();
    pid_t pid = REAL(fork)();
    if (pid == 0) {
        preload_after_fork_child();
    } else {
        preload_after_fork_parent();
    }
    if (on)
        rec2(FLIGHTREC_EV_FUNCTION_EXIT, (uintptr_t)REAL(fork),
             FLIGHTREC_EV_RETURN_0, (uintptr_t)(intptr_t)pid);
    return pid;
}

/*=====   exit   =====*/

static void record_exit(int status)
{
    if (!status_recorded && preload_on(GROUP_PROCESS)) {
        status_recorded = 1;
        rec1(FLIGHTREC_EV_FATAL_CODE, (uintptr_t)(unsigned)status);
    }
}

void WRAPPER(exit)(int status)
{
    record_exit(status);
    REAL(exit)(status);
}

/* The last drain of _exit() and _Exit(), unless a drain is under way (the
 * drain thread may hold the lock forever if it was cut short).  The test of
 * the lock is the library's own: not recorded. */
static void drain_unless_draining(void)
{
    int saved = preload_busy;
    preload_busy = 1;
    int idle = pthread_mutex_trylock(&drain_mutex) == 0;
    if (idle)
        pthread_mutex_unlock(&drain_mutex);
    preload_busy = saved;
    if (idle)
        drain_now();
}

/* _exit() skips atexit handlers: drain here.  A vfork child shares our
 * memory and must not touch the recorder. */
void WRAPPER(_exit)(int status)
{
    if (getpid() == cached_pid) {
        record_exit(status);
        drain_unless_draining();
    }
    REAL(_exit)(status);
}

void WRAPPER(_Exit)(int status)
{
    if (getpid() == cached_pid) {
        record_exit(status);
        drain_unless_draining();
    }
    REAL(_Exit)(status);
}

#if !defined(FLIGHTREC_WRAP_BUILD)
/* A program that returns from main() exits through libc's internal exit():
 * wrap main to see its status. */
static int (*program_main)(int, char **, char **);

static int main_wrapper(int argc, char **argv, char **envp)
{
    int status = program_main(argc, argv, envp);
    record_exit(status);
    return status;
}

int __libc_start_main(int (*main_fn)(int, char **, char **), int argc,
                      char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end);

int __libc_start_main(int (*main_fn)(int, char **, char **), int argc,
                      char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end)
{
    program_main = main_fn;
    return REAL(__libc_start_main)(main_wrapper, argc, argv, init, fini,
                                   rtld_fini, stack_end);
}
#endif

/*=====   exec   =====*/

/* Before an exec, everything so far goes to the file: the new image starts
 * a recording of its own.  In a vfork child (another pid, our memory) only
 * the call itself is made. */
static int before_exec(void *fn)
{
    if (getpid() != cached_pid)
        return 0;
    if (preload_on(GROUP_PROCESS))
        rec1(FLIGHTREC_EV_FUNCTION_ENTRY, (uintptr_t)fn);
    drain_now();
    return 1;
}

static void after_failed_exec(void *fn)
{
    int saved = preload_busy;
    preload_busy = 1;
    pthread_mutex_lock(&drain_mutex);
    process_ending = 0; /* the image goes on */
    pthread_mutex_unlock(&drain_mutex);
    preload_busy = saved;
    if (preload_on(GROUP_PROCESS))
        rec3(FLIGHTREC_EV_FUNCTION_EXIT, (uintptr_t)fn, FLIGHTREC_EV_RETURN_0,
             (uintptr_t)-1, FLIGHTREC_EV_ERRNO, (uintptr_t)errno);
}

int WRAPPER(execve)(const char *path, char *const argv[], char *const envp[])
{
    int ours = before_exec((void *)REAL(execve));
    int r = REAL(execve)(path, argv, envp);
    if (ours)
        after_failed_exec((void *)REAL(execve));
    return r;
}

int WRAPPER(execv)(const char *path, char *const argv[])
{
    int ours = before_exec((void *)REAL(execv));
    int r = REAL(execv)(path, argv);
    if (ours)
        after_failed_exec((void *)REAL(execv));
    return r;
}

int WRAPPER(execvp)(const char *file, char *const argv[])
{
    int ours = before_exec((void *)REAL(execvp));
    int r = REAL(execvp)(file, argv);
    if (ours)
        after_failed_exec((void *)REAL(execvp));
    return r;
}

int WRAPPER(execvpe)(const char *file, char *const argv[], char *const envp[])
{
    int ours = before_exec((void *)REAL(execvpe));
    int r = REAL(execvpe)(file, argv, envp);
    if (ours)
        after_failed_exec((void *)REAL(execvpe));
    return r;
}

/* The execl family collects its arguments, then goes through the above. */
#define COLLECT_ARGS(first, ap, argv)                                     \
    size_t argc_ = 1;                                                     \
    va_start(ap, first);                                                  \
    while (va_arg(ap, char *) != NULL)                                    \
        argc_++;                                                          \
    va_end(ap);                                                           \
    char *argv[argc_ + 1];                                                \
    argv[0] = (char *)(first);                                            \
    va_start(ap, first);                                                  \
    for (size_t i_ = 1; i_ <= argc_; i_++)                                \
        argv[i_] = va_arg(ap, char *);

int WRAPPER(execl)(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return WRAPPER(execv)(path, argv);
}

int WRAPPER(execlp)(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return WRAPPER(execvp)(file, argv);
}

int WRAPPER(execle)(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return WRAPPER(execve)(path, argv, envp);
}

/*=====   Descriptors the program must not take from us   =====*/

int WRAPPER(close)(int fd)
{
    if (preload_owns_fd(fd))
        return 0; /* a program closing all descriptors keeps recording */
    int on = preload_on(GROUP_IO);
    if (on)
        rec1(FLIGHTREC_EV_CLOSE_ENTRY, (uintptr_t)fd);
    int r = REAL(close)(fd);
    if (on)
        rec_result(FLIGHTREC_EV_CLOSE_EXIT, r);
    return r;
}

int WRAPPER(dup2)(int oldfd, int newfd)
{
    if (preload_owns_fd(newfd))
        preload_vacate_fd(newfd);
    return REAL(dup2)(oldfd, newfd);
}

int WRAPPER(dup3)(int oldfd, int newfd, int flags)
{
    if (preload_owns_fd(newfd))
        preload_vacate_fd(newfd);
    return REAL(dup3)(oldfd, newfd, flags);
}

/* Closes [first, last] except our descriptors. */
int WRAPPER(close_range)(unsigned first, unsigned last, int flags)
{
    int ours[3] = { record_fd, wake_fd[0], wake_fd[1] };
    unsigned from = first;
    int r = 0;
    for (;;) {
        /* The lowest descriptor of ours in [from, last]. */
        unsigned next = last;
        int found = 0;
        for (int i = 0; i < 3; i++)
            if (ours[i] >= 0 && (unsigned)ours[i] >= from &&
                (unsigned)ours[i] <= next) {
                next = (unsigned)ours[i];
                found = 1;
            }
        if (!found)
            return REAL(close_range)(from, last, flags) == 0 ? r : -1;
        if (next > from && REAL(close_range)(from, next - 1, flags) != 0)
            r = -1;
        if (next == last)
            return r;
        from = next + 1;
    }
}

void WRAPPER(closefrom)(int lowfd)
{
    if (lowfd < 0)
        lowfd = 0;
    (void)WRAPPER(close_range)((unsigned)lowfd, ~0u, 0);
}
