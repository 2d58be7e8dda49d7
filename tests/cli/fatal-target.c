/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program test-cli-fatal crashes: two threads record numbered events
 * (worker-0: USER_0 with 0..499, worker-1: USER_1 with 0..4999), then the
 * main thread, which records nothing itself, dies the way it is told:
 *
 *   fatal-target segv            a write to NULL + 0x40
 *   fatal-target abort           abort()
 *   fatal-target api TARGET      flightrec_fatal_dump_enable(TARGET), segv
 *   fatal-target disabled        enables "stderr", disables (NULL), segv
 *   fatal-target previous-siginfo   an SA_SIGINFO SIGSEGV handler first
 *   fatal-target previous-resethand a plain SA_RESETHAND handler first
 *   fatal-target fault-in-previous  a previous handler that faults again
 *   fatal-target abort-siginfo-default  SIGABRT's default set with
 *                                SA_SIGINFO first, then abort()
 *   fatal-target ignored-fault   SIGSEGV ignored first, then a fault
 *   fatal-target ignored-sent    SIGSEGV ignored first, then raise(SIGSEGV)
 *   fatal-target kill-new-thread  threads that start, record once and
 *                                exit; SIGSEGV sent to the last one as it
 *                                starts (maybe while it takes its rings)
 *   fatal-target crash-together  two more threads fault at the same moment
 *   fatal-target exit            records, then exits normally
 *   fatal-target hold TARGET     enables, says "ready", exits when its
 *                                standard input closes
 *   fatal-target enable TARGET   prints what enabling returns, exits
 *
 * FLIGHTREC_FATAL comes from the environment the test gives it.  Text goes
 * to standard error around the dump, one line without its end.
 */
#include <flightrec.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The sanitizers' own fatal-signal handlers end the process with exit
 * status 1 instead of the signal; this program is about its own handlers
 * and the default action, so it keeps theirs out (memory errors are still
 * caught). */
#define SANITIZER_SIGNAL_OPTIONS \
    "handle_segv=0:handle_sigbus=0:handle_sigill=0:handle_sigfpe=0:" \
    "handle_abort=0"
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return SANITIZER_SIGNAL_OPTIONS; }
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return SANITIZER_SIGNAL_OPTIONS; }
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return SANITIZER_SIGNAL_OPTIONS; }

#define FAULT_OFFSET 0x40u

static const uint64_t events_of[2] = { 500, 5000 };
static _Atomic int finished;
static int hold_pipe[2];

static void *worker(void *arg)
{
    uintptr_t index = (uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof(name), "worker-%u", (unsigned)index);
    pthread_setname_np(pthread_self(), name);
    for (uint64_t i = 0; i < events_of[index]; i++)
        flightrec_produce(FLIGHTREC_USER(index), (uintptr_t)i);
    atomic_fetch_add(&finished, 1);
    char c;
    /* Alive (its rings live) until the process ends. */
    while (read(hold_pipe[0], &c, 1) != 0)
        ;
    return NULL;
}

static void start_workers(void)
{
    if (pipe(hold_pipe) != 0)
        exit(3);
    pthread_t t;
    for (uintptr_t i = 0; i < 2; i++)
        if (pthread_create(&t, NULL, worker, (void *)i) != 0)
            exit(3);
    while (atomic_load(&finished) < 2)
        usleep(1000);
}

static _Atomic unsigned thread_starts;

/* ThreadSanitizer takes every fatal signal for a synchronous one and runs
 * the handler at once, even inside its own runtime; a signal sent while the
 * thread is in there (starting, or in an interceptor) deadlocks the
 * runtime, whatever the handler does.  Under it the signal is sent only
 * once the thread spins in plain code. */
#if defined(__SANITIZE_THREAD__)
#define SEND_ONLY_TO_PLAIN_CODE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SEND_ONLY_TO_PLAIN_CODE 1
#endif
#endif
static volatile int spinning;

static void *record_once(void *arg)
{
    flightrec_produce(FLIGHTREC_USER(2), (uintptr_t)arg);
    /* The last one stays for its signal. */
    if ((uintptr_t)arg + 1 == atomic_load(&thread_starts)) {
        spinning = 1;
        for (;;)
            __asm__ __volatile__("" ::: "memory");
    }
    return NULL;
}

/* Threads whose first event attaches their rings under the registry lock;
 * the last gets SIGSEGV at once, wherever it is: before its first event,
 * while taking the lock, inside it, or after. */
static void kill_new_thread(unsigned seed)
{
    pthread_t t;
    unsigned starts = 20 + seed % 20;
    atomic_store(&thread_starts, starts);
    for (uintptr_t i = 0; i < starts; i++) {
        if (pthread_create(&t, NULL, record_once, (void *)i) != 0)
            exit(3);
        if (i + 1 < starts) {
            pthread_join(t, NULL);
            continue;
        }
#ifdef SEND_ONLY_TO_PLAIN_CODE
        while (!spinning)
            usleep(1000);
#endif
        for (unsigned spin = 0; spin < seed % 2000; spin++)
            __asm__ __volatile__("" ::: "memory");
        pthread_kill(t, SIGSEGV);
    }
    sleep(20);
    exit(4); /* not reached: the process dies of SIGSEGV */
}

/* A store to the NULL page: NULL + 0x40, so that the fault address the
 * dump reports is one the test can tell from 0. */
static void write_to_null(void)
{
    volatile uintptr_t null_base = 0;
    volatile int *target = (volatile int *)(null_base + FAULT_OFFSET);
    *target = 1;
}

static _Atomic int go;

static void *fault_at_go(void *arg)
{
    (void)arg;
    atomic_fetch_add(&finished, 1);
    while (!atomic_load(&go))
        ;
    write_to_null();
    return NULL;
}

/* Two threads fault together: one dump, one death. */
static void crash_together(void)
{
    pthread_t t;
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t, NULL, fault_at_go, NULL) != 0)
            exit(3);
    while (atomic_load(&finished) < 4)
        usleep(1000);
    atomic_store(&go, 1);
    sleep(20);
    exit(4); /* not reached */
}

static void say(const char *text)
{
    (void)!write(STDERR_FILENO, text, strlen(text));
}

static void crash(const char *how)
{
    say("the program's last line, without its end");
    if (strncmp(how, "abort", 5) == 0)
        abort();
    write_to_null();
    say("\nstill alive after the fault\n");
    exit(4);
}

static void on_segv_siginfo(int signo, siginfo_t *info, void *context)
{
    (void)context;
    char line[80];
    int n = snprintf(line, sizeof(line),
                     "previous SA_SIGINFO handler: signal %d at %p\n", signo,
                     info->si_addr);
    (void)!write(STDERR_FILENO, line, (size_t)n);
    /* A crash reporter's usual end: the default action, then return to
     * the faulting instruction. */
    signal(signo, SIG_DFL);
}

static void on_segv_plain(int signo)
{
    static const char text[] = "previous plain handler ran\n";
    (void)signo;
    (void)!write(STDERR_FILENO, text, sizeof(text) - 1);
}

static void on_segv_faulting(int signo)
{
    static const char text[] = "previous handler faults too\n";
    (void)signo;
    (void)!write(STDERR_FILENO, text, sizeof(text) - 1);
    write_to_null();
}

static void install(int signo, int flags, void (*handler)(int),
                    void (*action)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags;
    if (action != NULL)
        sa.sa_sigaction = action;
    else
        sa.sa_handler = handler;
    if (sigaction(signo, &sa, NULL) != 0)
        exit(3);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    const char *target = argc > 2 ? argv[2] : NULL;
    /* Handlers installed before the runtime starts (FLIGHTREC_FATAL is
     * read at the first event): they are what it chains to. */
    if (strcmp(mode, "previous-siginfo") == 0)
        install(SIGSEGV, SA_SIGINFO, NULL, on_segv_siginfo);
    else if (strcmp(mode, "previous-resethand") == 0)
        install(SIGSEGV, SA_RESETHAND, on_segv_plain, NULL);
    else if (strcmp(mode, "fault-in-previous") == 0)
        install(SIGSEGV, 0, on_segv_faulting, NULL);
    else if (strncmp(mode, "ignored-", 8) == 0)
        install(SIGSEGV, 0, SIG_IGN, NULL);
    else if (strcmp(mode, "abort-siginfo-default") == 0)
        install(SIGABRT, SA_SIGINFO, SIG_DFL, NULL); /* allowed */
    if (strcmp(mode, "enable") == 0 || strcmp(mode, "hold") == 0) {
        int rc = flightrec_fatal_dump_enable(target);
        printf("enable: %d\n", rc);
        fflush(stdout);
        if (strcmp(mode, "hold") == 0) {
            char c;
            while (read(STDIN_FILENO, &c, 1) > 0)
                ;
        }
        return 0;
    }
    if (strcmp(mode, "api") == 0 || strcmp(mode, "disabled") == 0) {
        int rc = flightrec_fatal_dump_enable(
            strcmp(mode, "api") == 0 ? target : "stderr");
        if (rc == 0 && strcmp(mode, "disabled") == 0)
            rc = flightrec_fatal_dump_enable(NULL);
        if (rc != 0) {
            fprintf(stderr, "enable: %d\n", rc);
            return 5;
        }
    }
    start_workers();
    if (strcmp(mode, "exit") == 0)
        exit(0);
    if (strcmp(mode, "crash-together") == 0)
        crash_together();
    if (strcmp(mode, "kill-new-thread") == 0)
        kill_new_thread(target != NULL ? (unsigned)atoi(target) : 0);
    if (strcmp(mode, "ignored-sent") == 0) {
        raise(SIGSEGV);
        say("still running after the ignored signal\n");
        return 0;
    }
    crash(mode);
    return 0;
}
