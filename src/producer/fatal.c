/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fatal-signal dump (docs/recording.md, "Post-mortem"): for a program
 * without a session file, as RTEMS dumps its rings on a fatal error.  On
 * SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT the handler records the signal
 * and the fault address as one record, writes the rings once (to a file
 * opened in advance, or to standard error as base64 between the console
 * markers of docs/format.md section 9), then hands the signal on to the
 * handler that was there before, or to the default action.
 *
 * Everything the handler does is async-signal-safe: write(), open() of a
 * thread's /proc name, sigaction(), raise(), nanosleep(); the stream goes
 * through the dump's own writer into static buffers.  It takes no lock:
 * the one lock a record may need, the registry's (a thread's first event
 * attaches its rings), is only tried: a thread without rings whose crash
 * finds it held (maybe by itself, crashing inside it) dumps without its
 * fatal record rather than wait.
 */
#include "platform.h"
#include "runtime.h"

#include "../region/stream-writer.h"

#include <flightrec/client.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
                                     SIGABRT };
#define FATAL_SIGNAL_COUNT (sizeof(fatal_signals) / sizeof(fatal_signals[0]))

/* Base64 lines of 76 characters (57 bytes), written whole in batches of at
 * most PIPE_BUF bytes: a pipe never interleaves another writer's text
 * inside them. */
#define LINE_CHARS 76u
#define BATCH_LINES (4096u / (LINE_CHARS + 1))

/* Where the dump goes: nothing, a file, or standard error. */
enum { TARGET_NONE = 0, TARGET_FILE = 1, TARGET_CONSOLE = 2 };

/* The dump: 0 armed, 1 being written, 2 written (once per process). */
enum { DUMP_ARMED = 0, DUMP_WRITING = 1, DUMP_DONE = 2 };

static flightrec__mutex_t fatal_lock = FLIGHTREC__MUTEX_INITIALIZER;
static _Atomic int fatal_target;
static _Atomic int fatal_fd = -1;
static _Atomic int dump_state;
/* This thread is writing the dump: a fault in it gets no second try. */
static FLIGHTREC__THREAD_LOCAL volatile sig_atomic_t dumping_here;

/* The file target: removed at a normal exit if nothing was written. */
static char file_path[PATH_MAX];
static pid_t file_owner;
static dev_t file_dev;
static ino_t file_ino;
static int exit_hook_registered;

/* The dispositions found when the handler was installed, and whether it is
 * installed (per signal). */
static struct sigaction previous[FATAL_SIGNAL_COUNT];
static int installed[FATAL_SIGNAL_COUNT];

/* The stream writer's buffer and the console encoder's: static, so the
 * handler needs no stack beyond a few hundred bytes. */
static unsigned char stream_buffer[32u << 10];

struct console_encoder {
    int fd;
    int error;                      /* first write failure, -errno */
    unsigned char group[3];         /* bytes of an unfinished group */
    size_t group_len;
    size_t line_len;                /* characters on the current line */
    size_t out_len;
    char out[BATCH_LINES * (LINE_CHARS + 1)];
};
static struct console_encoder console;

/*=====   Signal-safe output   =====*/

/* Writes all of @n bytes; 0 or -errno. */
static int write_all(int fd, const void *bytes, size_t n)
{
    const char *p = bytes;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static char *put_text(char *p, const char *text)
{
    while (*text != '\0')
        *p++ = *text++;
    return p;
}

static char *put_unsigned(char *p, uintmax_t value, unsigned base)
{
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = "0123456789abcdef"[value % base];
        value /= base;
    } while (value != 0);
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

static const char *signal_name(int signo)
{
    switch (signo) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
    }
}

/* The line for the operator before the dump. */
static void say_dumping(int signo, uintptr_t address, int to_file)
{
    char line[PATH_MAX + 128];
    /* A new line first: the program's last line may lack its end, and a
     * marker counts only as a line of its own. */
    char *p = put_text(line, "\nflightrec: fatal ");
    p = put_text(p, signal_name(signo));
    p = put_text(p, " (");
    p = put_unsigned(p, (unsigned)signo, 10);
    p = put_text(p, ") at 0x");
    p = put_unsigned(p, address, 16);
    if (to_file) {
        p = put_text(p, ": writing the rings to ");
        size_t room = (size_t)(line + sizeof(line) - 2 - p);
        size_t len = strnlen(file_path, room);
        memcpy(p, file_path, len);
        p += len;
    } else {
        p = put_text(p, ": the rings follow");
    }
    *p++ = '\n';
    (void)write_all(STDERR_FILENO, line, (size_t)(p - line));
}

/*=====   The console encoder (a sink's write function)   =====*/

static char base64_digit(unsigned value)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    return digits[value & 63u];
}

static void console_flush(struct console_encoder *c)
{
    if (c->out_len != 0 && c->error == 0)
        c->error = write_all(c->fd, c->out, c->out_len);
    c->out_len = 0;
}

static void console_char(struct console_encoder *c, char ch)
{
    c->out[c->out_len++] = ch;
    if (++c->line_len == LINE_CHARS) {
        c->out[c->out_len++] = '\n';
        c->line_len = 0;
        if (c->out_len == sizeof(c->out))
            console_flush(c);
    }
}

/* Encodes the group of @n bytes (1..3), padded when short. */
static void console_group(struct console_encoder *c, size_t n)
{
    uint32_t bits = (uint32_t)c->group[0] << 16 |
                    (uint32_t)(n > 1 ? c->group[1] : 0) << 8 |
                    (uint32_t)(n > 2 ? c->group[2] : 0);
    console_char(c, base64_digit(bits >> 18));
    console_char(c, base64_digit(bits >> 12));
    console_char(c, n > 1 ? base64_digit(bits >> 6) : '=');
    console_char(c, n > 2 ? base64_digit(bits) : '=');
    c->group_len = 0;
}

static ssize_t console_write(void *target, const void *bytes, size_t n)
{
    struct console_encoder *c = target;
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++) {
        c->group[c->group_len++] = p[i];
        if (c->group_len == 3)
            console_group(c, 3);
    }
    if (c->error != 0)
        return c->error;
    return (ssize_t)n;
}

static int console_begin(struct console_encoder *c, int fd)
{
    memset(c, 0, offsetof(struct console_encoder, out));
    c->fd = fd;
    static const char begin[] = FLIGHTREC_CONSOLE_BEGIN "\n";
    return write_all(fd, begin, sizeof(begin) - 1);
}

static int console_end(struct console_encoder *c)
{
    if (c->group_len != 0)
        console_group(c, c->group_len);
    if (c->line_len != 0) {
        c->out[c->out_len++] = '\n';
        c->line_len = 0;
    }
    console_flush(c);
    static const char end[] = FLIGHTREC_CONSOLE_END "\n";
    int rc = write_all(c->fd, end, sizeof(end) - 1);
    return c->error != 0 ? c->error : rc;
}

/*=====   The handler   =====*/

static int signal_index(int signo)
{
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++)
        if (fatal_signals[i] == signo)
            return (int)i;
    return -1;
}

/* A fault the kernel raised (not kill(), raise() or abort()). */
static int raised_by_fault(const siginfo_t *info)
{
    return info != NULL && info->si_code > 0;
}

/* The default action, as if no handler had been there: the process dies
 * of @signo (with a core where the system makes one).  The signal is
 * blocked while its handler runs, so the raised one arrives as the handler
 * returns; a fault's instruction would raise it again anyway. */
static void die_by_default(int signo)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    (void)sigaction(signo, &dfl, NULL);
    (void)raise(signo);
}

/* Records the fatal record in the calling thread's ring.  A thread without
 * rings attaches them here only if the registry lock is free: its holder
 * may be this very thread, crashed inside it, or another thread waiting in
 * this handler for this dump. */
static void record_fatal(int signo, const siginfo_t *info)
{
    if (flightrec__self_ring() == NULL && flightrec__registry_busy())
        return;
    uintptr_t address =
        raised_by_fault(info) ? (uintptr_t)info->si_addr : 0;
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_EV_FATAL_SIGNAL, (uintptr_t)signo);
    flightrec_add(&ctx, FLIGHTREC_EV_FATAL_ADDRESS, address);
    flightrec_commit(&ctx);
}

static void write_dump(int signo, const siginfo_t *info)
{
    int target = atomic_load_explicit(&fatal_target, memory_order_acquire);
    int fd = atomic_load_explicit(&fatal_fd, memory_order_relaxed);
    if (target == TARGET_NONE || flightrec__region_base == NULL ||
        flightrec__try_init() != 0)
        return;
    record_fatal(signo, info);
    uintptr_t address =
        raised_by_fault(info) ? (uintptr_t)info->si_addr : 0;
    say_dumping(signo, address, target == TARGET_FILE);
    struct frw_sink sink;
    if (target == TARGET_FILE) {
        int out = fd;
        frw_sink_init_fd(&sink, &out, stream_buffer, sizeof(stream_buffer));
        (void)flightrec__dump_to(&sink);
        return;
    }
    if (console_begin(&console, STDERR_FILENO) != 0)
        return;
    frw_sink_init(&sink, console_write, &console, stream_buffer,
                  sizeof(stream_buffer));
    (void)flightrec__dump_to(&sink);
    (void)console_end(&console);
}

/* Whether the previous disposition would have ignored this signal: a
 * SIG_IGN signal that another process or the program sent.  A fault is
 * never ignored (the kernel kills the process), nor is abort(). */
static int would_be_ignored(const struct sigaction *prev, int signo,
                            const siginfo_t *info)
{
    return prev->sa_handler == SIG_IGN && !raised_by_fault(info) &&
           signo != SIGABRT;
}

/* Hands the signal to what was there before, as the kernel would have.
 * SIG_DFL and SIG_IGN are told by the handler's value, whatever the flags
 * (SA_SIGINFO with SIG_DFL is allowed). */
static void chain(const struct sigaction *prev, int signo, siginfo_t *info,
                  void *context)
{
    if (prev->sa_handler == SIG_DFL) {
        die_by_default(signo);
        return;
    }
    if (prev->sa_handler == SIG_IGN) {
        /* A fault cannot be ignored: the kernel kills the process.  A sent
         * SIGABRT returns to abort(), which then dies of it. */
        if (raised_by_fault(info))
            die_by_default(signo);
        return;
    }
    if (prev->sa_flags & SA_SIGINFO)
        prev->sa_sigaction(signo, info, context);
    else
        prev->sa_handler(signo);
}

static void on_fatal(int signo, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    int index = signal_index(signo);
    if (index < 0 || dumping_here) {
        /* A fault inside the dump: no second try. */
        die_by_default(signo);
        errno = saved_errno;
        return;
    }
    const struct sigaction *prev = &previous[index];
    if (!would_be_ignored(prev, signo, info)) {
        int expected = DUMP_ARMED;
        if (atomic_compare_exchange_strong_explicit(
                &dump_state, &expected, DUMP_WRITING, memory_order_acq_rel,
                memory_order_acquire)) {
            dumping_here = 1;
            write_dump(signo, info);
            dumping_here = 0;
            atomic_store_explicit(&dump_state, DUMP_DONE,
                                  memory_order_release);
        } else {
            /* Another thread is dumping: its end kills the process.  Wait
             * a bounded time (10 s), should it never end. */
            for (int i = 0; i < 10000 &&
                            atomic_load_explicit(&dump_state,
                                                 memory_order_acquire) ==
                                DUMP_WRITING;
                 i++)
                flightrec__port_sleep_ns(1000000u);
        }
    }
    /* The kernel removes a handler installed with SA_RESETHAND as it
     * delivers the signal to it: so do we. */
    if (prev->sa_flags & SA_RESETHAND) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        (void)sigaction(signo, &dfl, NULL);
    }
    errno = saved_errno;
    chain(prev, signo, info, context);
}

/*=====   Enabling   =====*/

static int is_ours(const struct sigaction *action)
{
    return (action->sa_flags & SA_SIGINFO) && action->sa_sigaction == on_fatal;
}

static int handler_is_current(int signo)
{
    struct sigaction now;
    return sigaction(signo, NULL, &now) == 0 && is_ours(&now);
}

static int install_handlers(void)
{
    struct sigaction mine;
    memset(&mine, 0, sizeof(mine));
    mine.sa_sigaction = on_fatal;
    mine.sa_flags = SA_SIGINFO | SA_ONSTACK;
    /* Every fatal signal waits while one is handled (a fault inside the
     * dump then gets the default action from the kernel), and so does
     * SIGPIPE: a closed standard error must not kill the process with
     * another signal than its own. */
    sigemptyset(&mine.sa_mask);
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++)
        sigaddset(&mine.sa_mask, fatal_signals[i]);
    sigaddset(&mine.sa_mask, SIGPIPE);
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++) {
        int signo = fatal_signals[i];
        struct sigaction now;
        if (sigaction(signo, NULL, &now) != 0)
            return -errno;
        if (is_ours(&now))
            continue; /* keep what it chains to */
        /* Installed before and replaced since: the new handler may chain
         * to this one, which must then not chain back to it (a loop);
         * the chain found at the first installation stays. */
        if (!installed[i] || now.sa_handler == SIG_DFL ||
            now.sa_handler == SIG_IGN)
            previous[i] = now;
        if (sigaction(signo, &mine, NULL) != 0)
            return -errno;
        installed[i] = 1;
    }
    return 0;
}

/* Gives back the dispositions where the handler is still the current one;
 * where a later handler chains to it, it stays and passes signals on. */
static void remove_handlers(void)
{
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++) {
        if (!installed[i] || !handler_is_current(fatal_signals[i]))
            continue;
        (void)sigaction(fatal_signals[i], &previous[i], NULL);
        installed[i] = 0;
    }
}

/* Closes the file target; removes it if this process made it and nothing
 * was written to it. */
static void close_file(void)
{
    int fd = atomic_exchange_explicit(&fatal_fd, -1, memory_order_acq_rel);
    if (fd < 0)
        return;
    struct stat st, at_path;
    if (getpid() == file_owner && fstat(fd, &st) == 0 && st.st_size == 0 &&
        lstat(file_path, &at_path) == 0 && at_path.st_dev == file_dev &&
        at_path.st_ino == file_ino)
        (void)unlink(file_path);
    close(fd);
    file_path[0] = '\0';
}

static void at_exit(void)
{
    flightrec__mutex_lock(&fatal_lock);
    if (atomic_load_explicit(&fatal_target, memory_order_relaxed) ==
        TARGET_FILE)
        close_file();
    flightrec__mutex_unlock(&fatal_lock);
}

/* Creates the file target: a new file (never one that exists, never
 * through a symbolic link), 0600, kept open until the crash. */
static int open_file(const char *path)
{
    if (strlen(path) >= sizeof(file_path))
        return -ENAMETOOLONG;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
    if (fd < 0) {
        int error = errno;
        struct stat st;
        /* O_EXCL refuses a symbolic link as it refuses any name that
         * exists: say which it was. */
        if (error == EEXIST && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            error = ELOOP;
        return -error;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int error = errno;
        close(fd);
        unlink(path);
        return -error;
    }
    /* The mode asked for, whatever the umask. */
    (void)fchmod(fd, 0600);
    memcpy(file_path, path, strlen(path) + 1);
    file_dev = st.st_dev;
    file_ino = st.st_ino;
    file_owner = getpid();
    atomic_store_explicit(&fatal_fd, fd, memory_order_release);
    return 0;
}

/* Sets the target (under the lock): NULL disables. */
static int enable_locked(const char *target)
{
    atomic_store_explicit(&fatal_target, TARGET_NONE, memory_order_release);
    /* A dump under way in another thread keeps its descriptor: closed
     * now, its number could be reused by a file the dump would then
     * overwrite.  The dump ends by killing the process, as a rule. */
    while (atomic_load_explicit(&dump_state, memory_order_acquire) ==
           DUMP_WRITING)
        flightrec__port_sleep_ns(1000000u);
    close_file();
    if (target == NULL) {
        remove_handlers();
        return 0;
    }
    int kind = strcmp(target, "stderr") == 0 ? TARGET_CONSOLE : TARGET_FILE;
    int rc = kind == TARGET_FILE ? open_file(target) : 0;
    if (rc == 0 && kind == TARGET_FILE && !exit_hook_registered &&
        atexit(at_exit) == 0)
        exit_hook_registered = 1;
    if (rc == 0)
        rc = install_handlers();
    if (rc != 0) {
        close_file();
        remove_handlers();
        return rc;
    }
    atomic_store_explicit(&dump_state, DUMP_ARMED, memory_order_relaxed);
    atomic_store_explicit(&fatal_target, kind, memory_order_release);
    return 0;
}

int flightrec_fatal_dump_enable(const char *target)
{
    if (target != NULL && target[0] == '\0')
        return -EINVAL;
    /* Start-up first: the handler never has to start the runtime. */
    flightrec__ensure_init();
    if (target != NULL && flightrec__region_base == NULL)
        return -ENOMEM; /* no rings to dump */
    flightrec__mutex_lock(&fatal_lock);
    int rc = enable_locked(target);
    flightrec__mutex_unlock(&fatal_lock);
    return rc;
}

void flightrec__fatal_from_env(void)
{
    const char *target = flightrec__port_getenv("FLIGHTREC_FATAL");
    if (target == NULL || target[0] == '\0')
        return;
    flightrec__mutex_lock(&fatal_lock);
    int rc = enable_locked(target);
    flightrec__mutex_unlock(&fatal_lock);
    if (rc != 0) {
        char message[200], line[260];
        flightrec__refusal(message, sizeof(message), "FLIGHTREC_FATAL",
                           target, strerror(-rc));
        int n = snprintf(line, sizeof(line),
                         "flightrec: %s; no fatal-signal dump\n", message);
        if (n > 0)
            flightrec__port_message(line, (size_t)n < sizeof(line)
                                              ? (size_t)n
                                              : sizeof(line) - 1);
    }
}
