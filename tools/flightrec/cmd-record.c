/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief flightrec record: run an unmodified program with the preload
 * library (libflightrec-preload.so) and stream its recording to a file.
 *
 * The file is created here (0600, O_EXCL unless -f, O_NOFOLLOW) and handed
 * to the program as an inherited descriptor; the preload library drains
 * the program's rings into it while it runs and at its end (see
 * docs/record.md).  record waits for the program, passes on signals sent to
 * record itself, and exits with the program's status (128 + signal when a
 * signal ended it).  Then it reads the recordings back and warns about
 * events they lost, as `flightrec stats` counts them.
 */
#define _GNU_SOURCE

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: flightrec record [-o FILE] [-f] [--mode flight|discard] "
    "[--events GROUPS] [--items N] [--no-switches] -- PROGRAM [ARGS...]\n"
    "\n"
    "Run PROGRAM and record its threads, locks, memory, I/O, process and\n"
    "signal events into FILE while it runs (default PROGRAM.rec in the current\n"
    "directory).  A process PROGRAM forks, or an image it execs, writes\n"
    "FILE.PID.  Exits with PROGRAM's exit status.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE   the recording (refused if it exists, unless -f)\n"
    "  -f, --force         overwrite FILE\n"
    "  --mode MODE         flight (overwrite the oldest, default) or discard\n"
    "  --events GROUPS     comma-separated: threads, locks, memory, io,\n"
    "                      process, signals, all (default), none\n"
    "  --items N           items per thread ring (power of two, 16..16777216)\n"
    "  --no-switches       do not record context switches (recorded from\n"
    "                      perf where perf_event_paranoid is 2 or less)\n"
    "  -h, --help          show this help\n";

enum { OPT_MODE = 256, OPT_EVENTS, OPT_ITEMS, OPT_NO_SWITCHES };

static const char *const group_names[] = {
    "threads", "locks", "memory", "io", "process", "signals", "all", "none"
};

static int groups_valid(const char *text, char *bad, size_t bad_size)
{
    const char *p = text;
    if (*p == '\0') {
        snprintf(bad, bad_size, "%s", "");
        return 0;
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (size_t i = 0; i < sizeof group_names / sizeof group_names[0]; i++)
            if (strlen(group_names[i]) == len &&
                strncmp(group_names[i], p, len) == 0)
                found = 1;
        if (!found) {
            snprintf(bad, bad_size, "%.*s", (int)len, p);
            return 0;
        }
        p += len;
        if (*p == '\0')
            return 1;
        p++;
    }
}

/* The preload library: $FLIGHTREC_PRELOAD, else next to this program as
 * installed (bindir/../libdir), else the build tree's. */
static int find_preload(char *out, size_t size)
{
    const char *env = getenv("FLIGHTREC_PRELOAD");
    if (env != NULL && *env != '\0') {
        snprintf(out, size, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            int len = snprintf(out, size, "%s/%s", exe,
                               FLIGHTREC_PRELOAD_FROM_BINDIR);
            if (len > 0 && (size_t)len < size && access(out, R_OK) == 0)
                return 0;
        }
    }
#ifdef FLIGHTREC_PRELOAD_BUILD
    snprintf(out, size, "%s", FLIGHTREC_PRELOAD_BUILD);
    if (access(out, R_OK) == 0)
        return 0;
#endif
    return -1;
}

/* Whether perf lets the program trace its own context switches: root
 * may, others where kernel.perf_event_paranoid is 2 or less.  Says once
 * why not.  FLIGHTREC_PERF_PARANOID stands in for the kernel's setting,
 * root or not (tests). */
static int switches_allowed(void)
{
    const char *forced = getenv("FLIGHTREC_PERF_PARANOID");
    long level;
    char text[32];
    if (forced != NULL && *forced != '\0') {
        char *end;
        level = strtol(forced, &end, 10);
        if (*end != '\0')
            level = 3;
    } else {
        if (geteuid() == 0)
            return 1;
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
        if (f == NULL)
            return 1; /* no setting to read: perf_event_open will say */
        int got = fgets(text, sizeof text, f) != NULL;
        fclose(f);
        if (!got)
            return 1;
        level = strtol(text, NULL, 10);
    }
    if (level <= 2)
        return 1;
    cli_msg(CLI_WARN, "context switches are not recorded: "
            "kernel.perf_event_paranoid is %ld (2 or less lets a program "
            "trace its own threads; or run as root); recording the rest",
            level);
    return 0;
}

static volatile sig_atomic_t child_pid;

/* A signal sent to record itself (kill, not the terminal, which signals the
 * program's process group anyway) goes on to the program. */
static void forward_signal(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    if (child_pid > 0 && (info->si_code == SI_USER || info->si_code == SI_QUEUE))
        kill(child_pid, sig);
}

static int set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        cli_msg(CLI_ERROR, "cannot set %s: %s", name, strerror(errno));
        return -1;
    }
    return 0;
}

/*=====   Losses, said at the end   =====*/

static int count_only(const struct flightrec_record *record, void *arg)
{
    (void)record;
    (void)arg;
    return 0;
}

static uint64_t add_saturated(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* One part of a loss message, "N what" after a separator when it is not
 * the first; nothing for 0. */
static void loss_part(char *buf, size_t size, uint64_t n, const char *what)
{
    if (n == 0)
        return;
    size_t len = strlen(buf);
    char count[48];
    snprintf(buf + len, size - len, "%s%s %s", len != 0 ? ", " : "",
             cli_count_text(count, sizeof count, n), what);
}

/* Reads the recording at @a path back (one pass, no merge: the totals do
 * not depend on order) and warns when it lost events: a recording that
 * silently lacks part of the program is the worst kind of wrong. */
static void warn_losses(const char *path)
{
    char shown[PATH_MAX + 64];
    cli_escape(shown, sizeof shown, path);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return; /* removed meanwhile: nothing to say about it */
    flightrec_client *client = NULL;
    struct flightrec_client_options opt = { .on_record = count_only };
    if (flightrec_client_create(&client, &opt) != 0) {
        close(fd);
        return;
    }
    int rc = flightrec_client_read_fd(client, fd);
    close(fd);
    if (rc != 0) {
        char why[512];
        cli_escape(why, sizeof why, flightrec_client_message(client));
        cli_msg(CLI_WARN, "'%s' reads back with an error: %s", shown, why);
    }
    struct flightrec_client_totals t;
    flightrec_client_totals(client, &t);
    uint64_t lost =
        add_saturated(add_saturated(t.overflow, t.discard), t.missing);
    if (lost != 0) {
        char parts[256] = "";
        loss_part(parts, sizeof parts, t.overflow,
                  "overwritten before they were written out");
        loss_part(parts, sizeof parts, t.discard,
                  "dropped by full rings (discard mode)");
        loss_part(parts, sizeof parts, t.missing,
                  "in parts missing from the file");
        uint32_t items = flightrec_client_info(client)->items_per_ring;
        char hint[96] = "";
        if (t.overflow != 0 || t.discard != 0) {
            if (items != 0 && items < (1u << 24))
                snprintf(hint, sizeof hint, "; larger rings lose less "
                         "(--items %u)", items < (1u << 22) ? items * 4
                                                            : 1u << 24);
        }
        char lost_text[48], total_text[48];
        cli_msg(CLI_WARN, "'%s': %s of %s events lost (%s)%s", shown,
                cli_count_text(lost_text, sizeof lost_text, lost),
                cli_count_text(total_text, sizeof total_text,
                               add_saturated(t.events, lost)),
                parts, hint);
    }
    flightrec_client_destroy(client);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether @a name is BASE.PID or BASE.PID.N (the files of forked children
 * and exec'd images, src/preload/preload-core.c) of a process that has
 * ended: a child still running writes its file on. */
static int is_child_file(const char *name, const char *base)
{
    size_t len = strlen(base);
    if (strncmp(name, base, len) != 0 || name[len] != '.')
        return 0;
    const char *p = name + len + 1;
    long pid = strtol(p, NULL, 10);
    if (pid > 0 && pid <= INT_MAX && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
        return 0;
    for (int part = 0; part < 2; part++) {
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p == '\0')
            return 1;
        if (*p != '.')
            return 0;
        p++;
    }
    return 0;
}

/* warn_losses() for the main recording @a path (as given) and then, in
 * name order, for each child file beside it written since @a since. */
static void warn_all_losses(const char *path, const struct timespec *since)
{
    warn_losses(path);
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    char dir[PATH_MAX];
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_child_file(e->d_name, base))
            continue;
        /* Named as the user named the recording: beside it. */
        char full[PATH_MAX];
        struct stat st;
        if ((size_t)snprintf(full, sizeof full, "%.*s%s",
                             (int)(base - path), path, e->d_name) >=
                sizeof full ||
            lstat(full, &st) != 0 || !S_ISREG(st.st_mode) ||
            st.st_mtim.tv_sec < since->tv_sec ||
            (st.st_mtim.tv_sec == since->tv_sec &&
             st.st_mtim.tv_nsec < since->tv_nsec))
            continue;
        if (count == cap) {
            size_t grown = cap != 0 ? cap * 2 : 8;
            char **bigger = realloc(names, grown * sizeof *names);
            if (bigger == NULL)
                break;
            names = bigger;
            cap = grown;
        }
        if ((names[count] = strdup(full)) == NULL)
            break;
        count++;
    }
    closedir(d);
    if (count > 1)
        qsort(names, count, sizeof *names, compare_names);
    for (size_t i = 0; i < count; i++) {
        warn_losses(names[i]);
        free(names[i]);
    }
    free(names);
}

int cmd_record(int argc, char **argv)
{
    static const struct option long_options[] = {
        { "output", required_argument, NULL, 'o' },
        { "force", no_argument, NULL, 'f' },
        { "mode", required_argument, NULL, OPT_MODE },
        { "events", required_argument, NULL, OPT_EVENTS },
        { "items", required_argument, NULL, OPT_ITEMS },
        { "no-switches", no_argument, NULL, OPT_NO_SWITCHES },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *output = NULL, *mode = NULL, *events = NULL, *items = NULL;
    int force = 0, switches = 1;
    char default_output[PATH_MAX];
    char preload[PATH_MAX];
    int fd = -1;
    int ret = CLI_FAIL;
    int c;

    cli_set_command("record");
    optind = 1;
    opterr = 0;
    /* '+': the program's own options are not ours. */
    while ((c = getopt_long(argc, argv, "+:o:fh", long_options, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            return CLI_OK;
        case 'o':
            output = optarg;
            break;
        case 'f':
            force = 1;
            break;
        case OPT_MODE:
            mode = optarg;
            break;
        case OPT_EVENTS:
            events = optarg;
            break;
        case OPT_ITEMS:
            items = optarg;
            break;
        case OPT_NO_SWITCHES:
            switches = 0;
            break;
        default:
            return cli_bad_option(c, argv, usage);
        }
    }
    if (optind >= argc)
        return cli_usage_error(usage, "no program to run");
    char **program = argv + optind;

    if (mode != NULL && strcmp(mode, "flight") != 0 &&
        strcmp(mode, "discard") != 0)
        return cli_usage_error(usage, "unknown mode '%s' (flight or discard)",
                               mode);
    char bad[64];
    if (events != NULL && !groups_valid(events, bad, sizeof bad))
        return cli_usage_error(usage, "unknown event group '%s' (threads, "
                               "locks, memory, io, process, signals, all, none)", bad);
    if (items != NULL) {
        uint64_t n;
        if (cli_parse_u64(items, &n) != 0 || n < 16 || n > (1u << 24) ||
            (n & (n - 1)) != 0)
            return cli_usage_error(usage, "--items '%s': a power of two from "
                                   "16 to 16777216", items);
    }
    if (output == NULL) {
        const char *base = strrchr(program[0], '/');
        base = base != NULL ? base + 1 : program[0];
        if (*base == '\0')
            return cli_usage_error(usage, "no program name in '%s'",
                                   program[0]);
        snprintf(default_output, sizeof default_output, "%s.rec", base);
        output = default_output;
    }
    if (find_preload(preload, sizeof preload) != 0) {
        cli_msg(CLI_ERROR, "cannot find libflightrec-preload.so (set "
                "FLIGHTREC_PRELOAD to its path)");
        return CLI_FAIL;
    }

    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
    flags |= force ? O_TRUNC : O_EXCL;
    fd = open(output, flags, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            cli_msg(CLI_ERROR, "'%s' exists (use -f to overwrite it)", output);
        else
            cli_msg(CLI_ERROR, "cannot create '%s': %s", output,
                    strerror(errno));
        return CLI_FAIL;
    }
    struct stat st;
    char abs_output[PATH_MAX];
    if (fstat(fd, &st) != 0 || realpath(output, abs_output) == NULL) {
        cli_msg(CLI_ERROR, "cannot stat '%s': %s", output, strerror(errno));
        goto fail_unlink;
    }

    /* The child's environment: the library first in LD_PRELOAD. */
    char value[PATH_MAX * 2 + 64];
    const char *old_preload = getenv("LD_PRELOAD");
    if (old_preload != NULL && *old_preload != '\0')
        snprintf(value, sizeof value, "%s:%s", preload, old_preload);
    else
        snprintf(value, sizeof value, "%s", preload);
    if (set_env("LD_PRELOAD", value) != 0)
        goto fail_unlink;
    snprintf(value, sizeof value, "%d:%llu:%llu", fd,
             (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    if (set_env("FLIGHTREC_RECORD_FD", value) != 0 ||
        set_env("FLIGHTREC_RECORD_PATH", abs_output) != 0 ||
        (mode != NULL && set_env("FLIGHTREC_MODE", mode) != 0) ||
        (items != NULL && set_env("FLIGHTREC_ITEMS", items) != 0) ||
        (events != NULL && set_env("FLIGHTREC_GROUPS", events) != 0))
        goto fail_unlink;

    if (switches && !switches_allowed())
        switches = 0;
    if (!switches && set_env("FLIGHTREC_SWITCHES", "0") != 0)
        goto fail_unlink;

    /* The child reports a failed exec through this pipe (closed on exec). */
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        cli_msg(CLI_ERROR, "pipe: %s", strerror(errno));
        goto fail_unlink;
    }
    struct sigaction sa, old_sa[4];
    static const int forwarded[4] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward_signal;
    /* No SA_RESTART: waitpid() returns EINTR, and a sanitizer that defers
     * handlers to the next intercepted call runs ours then. */
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; i++)
        sigaction(forwarded[i], &sa, &old_sa[i]);

    /* Child files written from now on are this run's.  File times come
     * from the coarse clock. */
    struct timespec started;
    clock_gettime(CLOCK_REALTIME_COARSE, &started);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        cli_msg(CLI_ERROR, "fork: %s", strerror(errno));
        close(report[0]);
        close(report[1]);
        goto fail_unlink;
    }
    if (pid == 0) {
        for (int i = 0; i < 4; i++)
            sigaction(forwarded[i], &old_sa[i], NULL);
        (void)fcntl(fd, F_SETFD, 0); /* the program inherits the file */
        close(report[0]);
        execvp(program[0], program);
        int err = errno;
        ssize_t w = write(report[1], &err, sizeof err);
        (void)w;
        _exit(127);
    }
    child_pid = pid;
    close(report[1]);
    int exec_errno = 0;
    ssize_t got;
    do {
        got = read(report[0], &exec_errno, sizeof exec_errno);
    } while (got < 0 && errno == EINTR);
    close(report[0]);

    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    child_pid = 0;
    for (int i = 0; i < 4; i++)
        sigaction(forwarded[i], &old_sa[i], NULL);

    if (got == (ssize_t)sizeof exec_errno) {
        cli_msg(CLI_ERROR, "cannot run '%s': %s", program[0],
                strerror(exec_errno));
        ret = exec_errno == ENOENT ? 127 : 126;
        close(fd);
        unlink(output);
        return ret;
    }
    if (fstat(fd, &st) == 0 && st.st_size == 0)
        cli_msg(CLI_WARN, "'%s' is empty: '%s' did not load the preload "
                "library (a static or set-id program?)", output, program[0]);
    close(fd);
    warn_all_losses(output, &started);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return CLI_FAIL;

fail_unlink:
    close(fd);
    unlink(output);
    return ret;
}
