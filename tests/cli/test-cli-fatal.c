/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fatal-signal dump from the user's side: a real program (fatal-target)
 * records from two threads and crashes; what it leaves — its captured
 * standard error with text around the dump, or the dump file — is read by
 * the real `flightrec print`, and the process must have died of its own
 * signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define BEGIN_MARKER "-----BEGIN FLIGHTREC STREAM-----"
#define END_MARKER "-----END FLIGHTREC STREAM-----"
#define FAULT_ADDRESS 0x40u
#define RING_ITEMS 1024u

static char scratch[512];

static void use_scratch(const char *name)
{
    snprintf(scratch, sizeof(scratch), "%s/fatal-%s-%d", CLI_TEST_DIR, name,
             (int)getpid());
    mkdir(scratch, 0700);
}

static void scratch_path(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", scratch, name);
}

static size_t read_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return n;
}

static void append_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    CHECK(fd >= 0);
    CHECK_EQ_I(write(fd, text, strlen(text)), (int64_t)strlen(text));
    close(fd);
}

/* How a run of fatal-target ended, and its standard output. */
struct run_result {
    pid_t pid;
    int status;
    char out[256];
};

/* Runs fatal-target MODE [ARG] with FLIGHTREC_FATAL=@fatal (NULL: unset),
 * its standard error appended to @log, and waits for it. */
static void run_target(struct run_result *r, const char *fatal,
                       const char *log, const char *mode, const char *arg)
{
    char out_path[600];
    scratch_path(out_path, sizeof(out_path), "target-out.txt");
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        int err = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        if (err < 0 || out < 0 || in < 0)
            _exit(120);
        dup2(in, STDIN_FILENO);
        dup2(out, STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        setenv("FLIGHTREC_SHM", "0", 1); /* no session file */
        setenv("FLIGHTREC_ITEMS", "1024", 1);
        if (fatal != NULL)
            setenv("FLIGHTREC_FATAL", fatal, 1);
        else
            unsetenv("FLIGHTREC_FATAL");
        execl(FATAL_TARGET, "fatal-target", mode, arg, (char *)NULL);
        _exit(121);
    }
    r->pid = child;
    CHECK_EQ_I(waitpid(child, &r->status, 0), child);
    read_file(out_path, r->out, sizeof(r->out));
}

static void check_died_of(const struct run_result *r, int signo)
{
    if (!WIFSIGNALED(r->status))
        TEST_FAIL("fatal-target did not die of a signal: status 0x%x",
                  r->status);
    CHECK_EQ_I(WTERMSIG(r->status), signo);
}

/*=====   What flightrec print shows   =====*/

struct worker_view {
    uint64_t events, first, last, lost;
    uint64_t torn;      /* out of order, or on the wrong thread */
};

struct dump_view {
    struct worker_view worker[2];
    uint64_t fatal_records;     /* FATAL_SIGNAL items */
    uint64_t signal, address;
    int fatal_paired;           /* ADDRESS right after SIGNAL, same time,
                                   ring and thread */
    char fatal_thread[64];
    int64_t fatal_tid;
    uint64_t other_lost;        /* losses outside the workers' rings */
};

/* Splits a CSV line (no quoted fields here) into @fields. */
static int split_csv(char *line, char **fields, int max)
{
    int n = 0;
    fields[n++] = line;
    for (char *p = line; *p != '\0' && n < max; p++)
        if (*p == ',') {
            *p = '\0';
            fields[n++] = p + 1;
        }
    return n;
}

/* Runs `flightrec print --csv INPUT` and reads what it shows. */
static void print_dump(const char *input, struct dump_view *v)
{
    char cmd[2048], out_path[600], err_path[600];
    scratch_path(out_path, sizeof(out_path), "print.csv");
    scratch_path(err_path, sizeof(err_path), "print.err");
    snprintf(cmd, sizeof(cmd), "%s print --csv '%s' >'%s' 2>'%s'",
             FLIGHTREC_BIN, input, out_path, err_path);
    int status = system(cmd);
    char err[4096];
    read_file(err_path, err, sizeof(err));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        TEST_FAIL("flightrec print %s: status 0x%x: %s", input, status, err);
    CHECK_EQ_S(err, "");
    static char csv[1 << 20];
    read_file(out_path, csv, sizeof(csv));
    memset(v, 0, sizeof(*v));
    char previous_time[32] = "", previous_ring[16] = "";
    int previous_was_signal = 0;
    char *save = NULL;
    int header = 1;
    for (char *line = strtok_r(csv, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (header) {
            CHECK_EQ_S(line, "time_ns,ring,thread,event,event_id,data,"
                             "thread_name,kind,count,flags,function");
            header = 0;
            continue;
        }
        char *f[11];
        CHECK_EQ_I(split_csv(line, f, 11), 11);
        const char *event = f[3], *name = f[6];
        if (strcmp(event, "LOST") == 0) {
            uint64_t count = strtoull(f[8], NULL, 10);
            if (strcmp(name, "worker-0") == 0)
                v->worker[0].lost += count;
            else if (strcmp(name, "worker-1") == 0)
                v->worker[1].lost += count;
            else
                v->other_lost += count;
            previous_was_signal = 0;
            continue;
        }
        uint64_t data = strtoull(f[5], NULL, 16);
        for (int i = 0; i < 2; i++) {
            char user[16], worker[16];
            snprintf(user, sizeof(user), "USER_%d", i);
            snprintf(worker, sizeof(worker), "worker-%d", i);
            if (strcmp(event, user) != 0)
                continue;
            struct worker_view *w = &v->worker[i];
            if (strcmp(name, worker) != 0 ||
                (w->events > 0 && data != w->last + 1))
                w->torn++;
            if (w->events == 0)
                w->first = data;
            w->last = data;
            w->events++;
        }
        if (strcmp(event, "FATAL_SIGNAL") == 0) {
            v->fatal_records++;
            v->signal = data;
            snprintf(v->fatal_thread, sizeof(v->fatal_thread), "%s", name);
            v->fatal_tid = strtoll(f[2], NULL, 10);
        }
        if (strcmp(event, "FATAL_ADDRESS") == 0) {
            v->address = data;
            v->fatal_paired = previous_was_signal &&
                              strcmp(previous_time, f[0]) == 0 &&
                              strcmp(previous_ring, f[1]) == 0 &&
                              strcmp(v->fatal_thread, name) == 0;
        }
        previous_was_signal = strcmp(event, "FATAL_SIGNAL") == 0;
        snprintf(previous_time, sizeof(previous_time), "%s", f[0]);
        snprintf(previous_ring, sizeof(previous_ring), "%s", f[1]);
    }
    CHECK(!header);
}

/* The workers' events as fatal-target recorded them: worker-0 all of its
 * 500, worker-1 the newest of its 5000 (its ring of 1024 items overflowed),
 * each in order and the rest reported lost; and one fatal record. */
static void check_dump(const struct dump_view *v, int signo,
                       uint64_t address, pid_t pid)
{
    CHECK_EQ_U(v->worker[0].torn, 0);
    CHECK_EQ_U(v->worker[0].events, 500);
    CHECK_EQ_U(v->worker[0].first, 0);
    CHECK_EQ_U(v->worker[0].last, 499);
    CHECK_EQ_U(v->worker[0].lost, 0);
    CHECK_EQ_U(v->worker[1].torn, 0);
    CHECK_EQ_U(v->worker[1].last, 4999);
    CHECK_EQ_U(v->worker[1].events + v->worker[1].lost, 5000);
    CHECK_EQ_U(v->worker[1].first, v->worker[1].lost);
    /* A full ring, but for the recorder's own uptime items and the
     * writer's margin. */
    CHECK(v->worker[1].events > RING_ITEMS - 32 &&
          v->worker[1].events <= RING_ITEMS);
    CHECK_EQ_U(v->other_lost, 0);
    CHECK_EQ_U(v->fatal_records, 1);
    CHECK_EQ_U(v->signal, (uint64_t)signo);
    CHECK_EQ_U(v->address, address);
    CHECK(v->fatal_paired);
    /* The main thread crashed: its thread id is the process id. */
    CHECK_EQ_I(v->fatal_tid, pid);
    CHECK_EQ_S(v->fatal_thread, "fatal-target");
}

static size_t count_of(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

/* A console log around a crash: the test's own text before and after the
 * program's standard error. */
static void crash_into_log(struct run_result *r, const char *fatal,
                           const char *mode, const char *arg, char *log,
                           size_t log_size)
{
    scratch_path(log, log_size, "console.log");
    unlink(log);
    append_text(log, "boot: console up\nsome other line\n");
    run_target(r, fatal, log, mode, arg);
    append_text(log, "after the crash: the supervisor restarts it\n");
}

static void check_console_log(const char *log, const char *expected_line)
{
    static char text[1 << 22];
    read_file(log, text, sizeof(text));
    CHECK(strncmp(text, "boot: console up\nsome other line\n", 33) == 0);
    CHECK_EQ_U(count_of(text, BEGIN_MARKER), 1);
    CHECK_EQ_U(count_of(text, END_MARKER), 1);
    /* The program's unfinished line stays its own; the markers are lines
     * of their own. */
    CHECK(strstr(text, "the program's last line, without its end\n"
                       "flightrec: ") != NULL);
    CHECK(strstr(text, expected_line) != NULL);
    CHECK(strstr(text, "\n" BEGIN_MARKER "\n") != NULL);
    CHECK(strstr(text, "\n" END_MARKER "\n"
                       "after the crash: the supervisor restarts it\n") !=
          NULL);
    CHECK(strstr(text, "still alive") == NULL);
}

/*=====   Cases   =====*/

TEST(segv_to_stderr_decodes_from_the_captured_log)
{
    use_scratch("stderr");
    struct run_result r;
    char log[600];
    crash_into_log(&r, "stderr", "segv", NULL, log, sizeof(log));
    check_died_of(&r, SIGSEGV);
    check_console_log(log, "flightrec: fatal SIGSEGV (11) at 0x40: the rings "
                           "follow\n" BEGIN_MARKER "\n");
    struct dump_view v;
    print_dump(log, &v);
    check_dump(&v, SIGSEGV, FAULT_ADDRESS, r.pid);
}

TEST(dump_after_much_other_output_is_found)
{
    /* A server's standard error: far more than the 64 KiB a reader looks
     * at for a begin marker before the dump. */
    use_scratch("long-log");
    char log[600];
    scratch_path(log, sizeof(log), "long.log");
    unlink(log);
    static char lines[200 * 1024];
    size_t n = 0;
    while (n + 64 < sizeof(lines))
        n += (size_t)snprintf(lines + n, sizeof(lines) - n,
                              "request %zu served in 3 ms\n", n);
    append_text(log, lines);
    struct run_result r;
    run_target(&r, "stderr", log, "segv", NULL);
    check_died_of(&r, SIGSEGV);
    struct dump_view v;
    print_dump(log, &v);
    check_dump(&v, SIGSEGV, FAULT_ADDRESS, r.pid);

    /* The same text without a dump: said so, exit status 1. */
    char text_only[600], cmd[2000], err_path[600], err[1024];
    scratch_path(text_only, sizeof(text_only), "text-only.log");
    scratch_path(err_path, sizeof(err_path), "text-only.err");
    unlink(text_only);
    append_text(text_only, lines);
    snprintf(cmd, sizeof(cmd), "%s print '%s' >/dev/null 2>'%s'",
             FLIGHTREC_BIN, text_only, err_path);
    int status = system(cmd);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    read_file(err_path, err, sizeof(err));
    char expected[1200];
    snprintf(expected, sizeof(expected),
             "flightrec print: %s: no stream block (a line \"" BEGIN_MARKER
             "\") in the log\n",
             text_only);
    CHECK_EQ_S(err, expected);
}

TEST(segv_to_a_file)
{
    use_scratch("file");
    char dump[600], log[600], expected[800];
    scratch_path(dump, sizeof(dump), "crash.frec");
    scratch_path(log, sizeof(log), "stderr.txt");
    unlink(dump);
    unlink(log);
    struct run_result r;
    run_target(&r, dump, log, "segv", NULL);
    check_died_of(&r, SIGSEGV);
    struct stat st;
    CHECK_EQ_I(lstat(dump, &st), 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK_EQ_U(st.st_mode & 07777, 0600);
    static char text[8192];
    read_file(log, text, sizeof(text));
    snprintf(expected, sizeof(expected),
             "the program's last line, without its end\n"
             "flightrec: fatal SIGSEGV (11) at 0x40: writing the rings to "
             "%s\n",
             dump);
    CHECK_EQ_S(text, expected);
    struct dump_view v;
    print_dump(dump, &v);
    check_dump(&v, SIGSEGV, FAULT_ADDRESS, r.pid);
}

TEST(api_call_to_stderr)
{
    use_scratch("api-stderr");
    struct run_result r;
    char log[600];
    crash_into_log(&r, NULL, "api", "stderr", log, sizeof(log));
    check_died_of(&r, SIGSEGV);
    check_console_log(log, "flightrec: fatal SIGSEGV (11) at 0x40: the rings "
                           "follow\n");
    struct dump_view v;
    print_dump(log, &v);
    check_dump(&v, SIGSEGV, FAULT_ADDRESS, r.pid);
}

TEST(api_call_to_a_file)
{
    use_scratch("api-file");
    char dump[600], log[600];
    scratch_path(dump, sizeof(dump), "api.frec");
    scratch_path(log, sizeof(log), "stderr.txt");
    unlink(dump);
    struct run_result r;
    run_target(&r, NULL, log, "api", dump);
    check_died_of(&r, SIGSEGV);
    struct stat st;
    CHECK_EQ_I(lstat(dump, &st), 0);
    CHECK_EQ_U(st.st_mode & 07777, 0600);
    struct dump_view v;
    print_dump(dump, &v);
    check_dump(&v, SIGSEGV, FAULT_ADDRESS, r.pid);
}

TEST(abort_dies_of_sigabrt_after_the_dump)
{
    use_scratch("abort");
    struct run_result r;
    char log[600];
    crash_into_log(&r, "stderr", "abort", NULL, log, sizeof(log));
    check_died_of(&r, SIGABRT);
    /* abort() sends the signal: there is no fault address. */
    check_console_log(log, "flightrec: fatal SIGABRT (6) at 0x0: the rings "
                           "follow\n");
    struct dump_view v;
    print_dump(log, &v);
    check_dump(&v, SIGABRT, 0, r.pid);
}

TEST(default_set_with_sa_siginfo_is_the_default)
{
    /* SA_SIGINFO with SIG_DFL: the default action, not a call to it. */
    use_scratch("siginfo-default");
    struct run_result r;
    char log[600];
    crash_into_log(&r, "stderr", "abort-siginfo-default", NULL, log,
                   sizeof(log));
    check_died_of(&r, SIGABRT);
    check_console_log(log, "flightrec: fatal SIGABRT (6) at 0x0: the rings "
                           "follow\n");
}

TEST(previous_siginfo_handler_runs_after_the_dump)
{
    use_scratch("prev-siginfo");
    struct run_result r;
    char log[600];
    crash_into_log(&r, "stderr", "previous-siginfo", NULL, log, sizeof(log));
    check_died_of(&r, SIGSEGV);
    static char text[1 << 22];
    read_file(log, text, sizeof(text));
    /* It gets the signal's own information, after the dump. */
    CHECK_EQ_U(count_of(text, "previous SA_SIGINFO handler:"), 1);
    CHECK(strstr(text, END_MARKER "\nprevious SA_SIGINFO handler: signal 11 "
                                  "at 0x40\n") != NULL);
    struct dump_view v;
    print_dump(log, &v);
    check_dump(&v, SIGSEGV, FAULT_ADDRESS, r.pid);
}

TEST(previous_resethand_handler_runs_once)
{
    use_scratch("prev-reset");
    struct run_result r;
    char log[600];
    crash_into_log(&r, "stderr", "previous-resethand", NULL, log,
                   sizeof(log));
    /* The plain handler returns to the faulting store; as the kernel
     * would have, its SA_RESETHAND left the default action for that. */
    check_died_of(&r, SIGSEGV);
    static char text[1 << 22];
    read_file(log, text, sizeof(text));
    CHECK_EQ_U(count_of(text, "previous plain handler ran\n"), 1);
    CHECK(strstr(text, END_MARKER "\nprevious plain handler ran\n") != NULL);
    CHECK_EQ_U(count_of(text, BEGIN_MARKER), 1);
}

TEST(fault_in_the_previous_handler_dumps_once)
{
    use_scratch("prev-fault");
    struct run_result r;
    char log[600];
    crash_into_log(&r, "stderr", "fault-in-previous", NULL, log, sizeof(log));
    check_died_of(&r, SIGSEGV);
    static char text[1 << 22];
    read_file(log, text, sizeof(text));
    CHECK_EQ_U(count_of(text, "previous handler faults too\n"), 1);
    CHECK_EQ_U(count_of(text, BEGIN_MARKER), 1);
    CHECK_EQ_U(count_of(text, "flightrec: fatal"), 1);
    struct dump_view v;
    print_dump(log, &v);
    check_dump(&v, SIGSEGV, FAULT_ADDRESS, r.pid);
}

TEST(crash_while_taking_rings_dumps_without_waiting)
{
    /* A thread that gets its fatal signal before, while or after it takes
     * its rings (the registry lock): the dump is written in any case, the
     * process dies of the signal, nothing hangs (the case's timeout). */
    use_scratch("registry");
    for (int round = 0; round < 16; round++) {
        struct run_result r;
        char log[600], seed[16];
        snprintf(seed, sizeof(seed), "%d", round * 137);
        crash_into_log(&r, "stderr", "kill-new-thread", seed, log,
                       sizeof(log));
        check_died_of(&r, SIGSEGV);
        static char text[1 << 22];
        read_file(log, text, sizeof(text));
        CHECK_EQ_U(count_of(text, BEGIN_MARKER), 1);
        CHECK_EQ_U(count_of(text, END_MARKER), 1);
        CHECK(strstr(text, "flightrec: fatal SIGSEGV (11) at 0x0: the rings "
                           "follow\n") != NULL);
        struct dump_view v;
        print_dump(log, &v);
        /* The workers' rings whole; the fatal record, when the thread
         * could have its rings, a sent signal's (no address). */
        CHECK_EQ_U(v.worker[0].events, 500);
        CHECK_EQ_U(v.worker[0].torn + v.worker[1].torn, 0);
        CHECK_EQ_U(v.worker[1].last, 4999);
        CHECK(v.fatal_records <= 1);
        if (v.fatal_records == 1) {
            CHECK_EQ_U(v.signal, SIGSEGV);
            CHECK_EQ_U(v.address, 0);
            CHECK(v.fatal_paired);
        }
    }
}

TEST(ignored_sigsegv_still_dies_of_a_fault)
{
    /* The kernel does not let a fault be ignored: neither does the
     * handler, after the dump. */
    use_scratch("ignored-fault");
    struct run_result r;
    char log[600];
    crash_into_log(&r, "stderr", "ignored-fault", NULL, log, sizeof(log));
    check_died_of(&r, SIGSEGV);
    check_console_log(log, "flightrec: fatal SIGSEGV (11) at 0x40: the rings "
                           "follow\n");
    struct dump_view v;
    print_dump(log, &v);
    check_dump(&v, SIGSEGV, FAULT_ADDRESS, r.pid);
}

TEST(ignored_sigsegv_sent_stays_ignored)
{
    use_scratch("ignored-sent");
    struct run_result r;
    char log[600];
    scratch_path(log, sizeof(log), "stderr.txt");
    unlink(log);
    run_target(&r, "stderr", log, "ignored-sent", NULL);
    CHECK(WIFEXITED(r.status));
    CHECK_EQ_I(WEXITSTATUS(r.status), 0);
    static char text[8192];
    read_file(log, text, sizeof(text));
    CHECK_EQ_S(text, "still running after the ignored signal\n");
}

TEST(threads_crashing_together_dump_once)
{
    use_scratch("together");
    for (int round = 0; round < 4; round++) {
        struct run_result r;
        char log[600];
        crash_into_log(&r, "stderr", "crash-together", NULL, log,
                       sizeof(log));
        check_died_of(&r, SIGSEGV);
        static char text[1 << 22];
        read_file(log, text, sizeof(text));
        CHECK_EQ_U(count_of(text, BEGIN_MARKER), 1);
        CHECK_EQ_U(count_of(text, END_MARKER), 1);
        CHECK_EQ_U(count_of(text, "flightrec: fatal"), 1);
        struct dump_view v;
        print_dump(log, &v);
        /* The record of the thread that dumped; the other waited. */
        CHECK_EQ_U(v.fatal_records, 1);
        CHECK_EQ_U(v.signal, SIGSEGV);
        CHECK_EQ_U(v.address, FAULT_ADDRESS);
        CHECK(v.fatal_paired);
        CHECK(v.fatal_tid != r.pid);
        CHECK_EQ_U(v.worker[0].events, 500);
        CHECK_EQ_U(v.worker[1].last, 4999);
    }
}

TEST(disabled_dump_writes_nothing)
{
    use_scratch("disabled");
    struct run_result r;
    char log[600];
    crash_into_log(&r, NULL, "disabled", NULL, log, sizeof(log));
    check_died_of(&r, SIGSEGV);
    static char text[8192];
    read_file(log, text, sizeof(text));
    CHECK_EQ_S(text, "boot: console up\nsome other line\n"
                     "the program's last line, without its end"
                     "after the crash: the supervisor restarts it\n");
}

TEST(no_file_left_after_a_normal_exit)
{
    use_scratch("exit");
    char dump[600], log[600];
    scratch_path(dump, sizeof(dump), "never.frec");
    scratch_path(log, sizeof(log), "stderr.txt");
    unlink(dump);
    unlink(log);
    struct run_result r;
    run_target(&r, dump, log, "exit", NULL);
    CHECK(WIFEXITED(r.status));
    CHECK_EQ_I(WEXITSTATUS(r.status), 0);
    struct stat st;
    CHECK_EQ_I(lstat(dump, &st), -1);
    CHECK_EQ_I(errno, ENOENT);
    char text[256];
    CHECK_EQ_U(read_file(log, text, sizeof(text)), 0);
}

TEST(file_is_made_at_once_0600_and_goes_at_exit)
{
    use_scratch("hold");
    char dump[600], log[600];
    scratch_path(dump, sizeof(dump), "held.frec");
    scratch_path(log, sizeof(log), "stderr.txt");
    unlink(dump);
    int fds[2];
    CHECK_EQ_I(pipe(fds), 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(fds[1]);
        dup2(fds[0], STDIN_FILENO);
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(out, STDOUT_FILENO);
        setenv("FLIGHTREC_SHM", "0", 1);
        unsetenv("FLIGHTREC_FATAL");
        umask(0); /* the file's mode must not depend on it */
        execl(FATAL_TARGET, "fatal-target", "hold", dump, (char *)NULL);
        _exit(121);
    }
    close(fds[0]);
    /* Opened in advance: there once enabling returned. */
    char text[256] = "";
    for (int i = 0; i < 10000 && strstr(text, "\n") == NULL; i++) {
        usleep(1000);
        read_file(log, text, sizeof(text));
    }
    CHECK_EQ_S(text, "enable: 0\n");
    struct stat st;
    CHECK_EQ_I(lstat(dump, &st), 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK_EQ_U(st.st_mode & 07777, 0600);
    CHECK_EQ_I(st.st_uid, getuid());
    CHECK_EQ_I(st.st_size, 0);
    close(fds[1]);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_I(lstat(dump, &st), -1);
    CHECK_EQ_I(errno, ENOENT);
}

TEST(symlink_at_the_path_is_refused)
{
    use_scratch("symlink");
    char link_path[600], pointed[600], log[600];
    scratch_path(link_path, sizeof(link_path), "link.frec");
    scratch_path(pointed, sizeof(pointed), "victim.txt");
    scratch_path(log, sizeof(log), "stderr.txt");
    unlink(link_path);
    unlink(pointed);
    unlink(log);
    /* A dangling link: following it would create the file it names. */
    CHECK_EQ_I(symlink(pointed, link_path), 0);
    struct run_result r;
    run_target(&r, NULL, log, "enable", link_path);
    CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    char expected[64];
    snprintf(expected, sizeof(expected), "enable: %d\n", -ELOOP);
    CHECK_EQ_S(r.out, expected);
    struct stat st;
    CHECK_EQ_I(lstat(pointed, &st), -1);
    CHECK(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));

    /* From the environment: said once, and the program goes on without
     * the dump (it dies of its fault as it would have). */
    run_target(&r, link_path, log, "segv", NULL);
    check_died_of(&r, SIGSEGV);
    static char text[8192];
    read_file(log, text, sizeof(text));
    /* The value as messages show it: its first 64 bytes. */
    char line[1400];
    snprintf(line, sizeof(line),
             "flightrec: FLIGHTREC_FATAL=%.64s%s: %s; no fatal-signal dump\n"
             "the program's last line, without its end",
             link_path, strlen(link_path) > 64 ? "..." : "", strerror(ELOOP));
    CHECK_EQ_S(text, line);
    CHECK(strstr(text, BEGIN_MARKER) == NULL);
    CHECK_EQ_I(lstat(pointed, &st), -1);
}

TEST(existing_file_is_left_alone)
{
    use_scratch("exists");
    char dump[600], log[600];
    scratch_path(dump, sizeof(dump), "old.frec");
    scratch_path(log, sizeof(log), "stderr.txt");
    unlink(dump);
    append_text(dump, "an earlier crash's dump\n");
    struct run_result r;
    run_target(&r, NULL, log, "enable", dump);
    char expected[64];
    snprintf(expected, sizeof(expected), "enable: %d\n", -EEXIST);
    CHECK_EQ_S(r.out, expected);
    char text[256];
    read_file(dump, text, sizeof(text));
    CHECK_EQ_S(text, "an earlier crash's dump\n");
}

TEST_MAIN()
