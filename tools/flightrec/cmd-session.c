/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec ls, dump, rm and stream: the sessions of this user's recording
 * processes, read from their region files (docs/recording.md, "Sessions").
 * Each region is checked before it is read and treated as hostile input.
 */
#define _GNU_SOURCE /* O_NOFOLLOW, O_CLOEXEC, sigaction, nanosleep */
#include "cli.h"
#include "cli-session.h"

#include "../../src/region/region-check.h"
#include "../../src/region/ring-reader.h"
#include "../../src/region/session.h"

#include <flightrec/region.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OUT_BUFFER (256u << 10)

static struct flightrec_region_ring *ring_at(unsigned char *b, uint64_t at)
{
    return at == 0 ? NULL : (void *)(b + at);
}

/* Whether the ring at @at, header and items, lies in the first @size
 * bytes mapped.  The program may add rings after the mapping was made (it
 * grows its file first): the ring list can then lead past the mapping's
 * end, to rings the next remapping brings in. */
static int ring_mapped(const unsigned char *b, uint64_t at, size_t size)
{
    if (at % FLIGHTREC_REGION_ALIGN != 0 ||
        size < sizeof(struct flightrec_region_ring) ||
        at > size - sizeof(struct flightrec_region_ring))
        return 0;
    const struct flightrec_region_ring *r = (const void *)(b + at);
    uint64_t capacity = r->capacity, items = r->items_offset;
    return capacity >= 16 && (capacity & (capacity - 1)) == 0 &&
           capacity <= size / sizeof(struct flightrec_region_item) &&
           items <= size - capacity * sizeof(struct flightrec_region_item);
}

/*=====   Output files   =====*/

/* Output to @path through a temporary file renamed at the end (no partial
 * output is left behind), created 0600 without following a link; "-" or
 * NULL is standard output, refused on a terminal. */
struct out_file {
    int fd;
    char path[1024];
    char temp[1100];
};

static int out_open(struct out_file *o, const char *path)
{
    memset(o, 0, sizeof(*o));
    if (path == NULL || strcmp(path, "-") == 0) {
        if (isatty(STDOUT_FILENO)) {
            cli_msg(0, "will not write a binary recording to a terminal: "
                       "use -o FILE or a pipe");
            return -1;
        }
        o->fd = STDOUT_FILENO;
        return 0;
    }
    snprintf(o->path, sizeof(o->path), "%s", path);
    snprintf(o->temp, sizeof(o->temp), "%s.tmp-%d", path, (int)getpid());
    o->fd = open(o->temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 0600);
    if (o->fd < 0) {
        cli_msg(0, "cannot create '%s': %s", o->temp, strerror(errno));
        return -1;
    }
    return 0;
}

/* Renames the temporary file into place (@ok), or removes it. */
static int out_close(struct out_file *o, int ok)
{
    if (o->path[0] == '\0')
        return ok ? 0 : -1;
    if (close(o->fd) != 0)
        ok = 0;
    if (ok && rename(o->temp, o->path) != 0) {
        cli_msg(0, "cannot rename '%s' to '%s': %s", o->temp, o->path,
                strerror(errno));
        ok = 0;
    }
    if (!ok)
        unlink(o->temp);
    return ok ? 0 : -1;
}

/*=====   Reading a session   =====*/



/*=====   flightrec ls   =====*/

static const char ls_usage[] =
    "usage: flightrec ls [--json]\n"
    "\n"
    "Lists the sessions of this user: one line per recording process, alive\n"
    "or dead (a reused process id, or a process that called exec and so no\n"
    "longer records into it, counts as dead), with what its rings hold.\n"
    "\n"
    "  --json     one JSON object per session and line\n"
    "  -h, --help show this help\n";

struct session_facts {
    int alive;
    uint32_t rings, threads;
    uint64_t recorded, overwritten, dropped;
};

static void gather(const struct fr_session *s, struct session_facts *f)
{
    unsigned char *base = s->base;
    size_t size = s->size;
    memset(f, 0, sizeof(*f));
    const struct flightrec_region_header *h = cli_region_header(base);
    /* A process that called exec records no more into it: dead too. */
    f->alive = fr_session_recording(s);
    uint32_t count = atomic_load(&h->ring_count);
    uint64_t at = atomic_load(&h->ring_list);
    /* The ring list was checked for loops; the bound is for rings added
     * since. */
    for (uint32_t n = 0; at != 0 && n <= count + 1024; n++) {
        if (!ring_mapped(base, at, size))
            break;
        const struct flightrec_region_ring *r = ring_at(base, at);
        f->rings++;
        uint32_t state = atomic_load(&r->state);
        if (r->context == 0 && state == FLIGHTREC_RING_LIVE)
            f->threads++;
        uintptr_t head = atomic_load(&r->head);
        f->recorded += head;
        if (head > r->capacity)
            f->overwritten += head - r->capacity;
        f->dropped += atomic_load(&r->dropped) + atomic_load(&r->nested_dropped);
        at = atomic_load(&r->next_offset);
    }
}

/* The command line with its arguments joined by spaces into @out (of
 * FLIGHTREC_REGION_CMDLINE + 1 bytes); its length. */
static size_t joined_command(const struct flightrec_region_process *p,
                             char *out)
{
    size_t n = 0;
    for (; n < FLIGHTREC_REGION_CMDLINE; n++)
        out[n] = p->cmdline[n] == '\0' ? ' ' : p->cmdline[n];
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
    return n;
}

/* A JSON string of @s, allocated. */
static char *json_text(const char *s, size_t n)
{
    char *text = malloc(6 * n + 3);
    if (text == NULL) {
        cli_msg(0, "out of memory");
        exit(1);
    }
    *cli_fmt_json(text, s, n) = '\0';
    return text;
}

static void list_one(const char *path, int json)
{
    struct fr_session s;
    char message[600], safe[700];
    if (fr_session_open(&s, path, 0, message, sizeof(message)) != 0) {
        cli_msg(0, "%s", cli_escape(safe, sizeof(safe), message));
        return;
    }
    struct session_facts f;
    gather(&s, &f);
    const struct flightrec_region_header *h = cli_region_header(s.base);
    const struct flightrec_region_control *c = cli_region_control(s.base);
    const struct flightrec_region_process *p = cli_region_process(s.base);
    char program[17], name[80], joined[FLIGHTREC_REGION_CMDLINE + 1],
        cmd[1000];
    memcpy(program, p->program, 16);
    program[16] = '\0';
    cli_escape(name, sizeof(name), program);
    joined_command(p, joined);
    cli_escape(cmd, sizeof(cmd), joined);
    const char *state = atomic_load(&c->running) ? "started" : "stopped";
    const char *mode =
        atomic_load(&c->mode) == FLIGHTREC_REGION_MODE_DISCARD ? "discard" : "flight";
    uint64_t used = atomic_load(&h->used);
    if (json) {
        char *jname = json_text(program, strlen(program));
        char *jcmd = json_text(joined, strlen(joined));
        char *jpath = json_text(path, strlen(path));
        printf("{\"pid\":%d,\"alive\":%s,\"program\":%s,\"command\":%s,"
               "\"state\":\"%s\",\"mode\":\"%s\",\"threads\":%u,"
               "\"rings\":%u,\"recorded\":%llu,\"overwritten\":%llu,"
               "\"dropped\":%llu,\"region_bytes\":%llu,\"file\":%s}\n",
               (int)p->pid, f.alive ? "true" : "false", jname, jcmd, state,
               mode, f.threads, f.rings, (unsigned long long)f.recorded,
               (unsigned long long)f.overwritten,
               (unsigned long long)f.dropped, (unsigned long long)used, jpath);
        free(jname);
        free(jcmd);
        free(jpath);
    } else {
        printf("%7d %-5s %-7s %-7s %7u %5u %12llu %12llu %10llu %9lluK "
               "%-15s %s\n",
               (int)p->pid, f.alive ? "alive" : "dead", state, mode, f.threads,
               f.rings, (unsigned long long)f.recorded,
               (unsigned long long)f.overwritten,
               (unsigned long long)f.dropped,
               (unsigned long long)(used + 1023) / 1024, name, cmd);
    }
    fr_session_close(&s);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The session files of this user, sorted; NULL-terminated, or NULL. */
static char **session_files(char *dir, size_t dir_size)
{
    char message[600];
    if (fr_session_dir(dir, dir_size, 0, message, sizeof(message)) != 0) {
        if (errno != ENOENT && strstr(message, "No such file") == NULL)
            cli_msg(0, "%s", message);
        char **none = calloc(1, sizeof(char *));
        return none;
    }
    DIR *d = opendir(dir);
    if (d == NULL) {
        cli_msg(0, "cannot read '%s': %s", dir, strerror(errno));
        return NULL;
    }
    size_t n = 0, cap = 16;
    char **names = malloc(cap * sizeof(char *));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        size_t suffix = strlen(FR_SESSION_SUFFIX);
        if (len <= suffix ||
            strcmp(e->d_name + len - suffix, FR_SESSION_SUFFIX) != 0)
            continue;
        if (n + 1 >= cap)
            names = realloc(names, (cap *= 2) * sizeof(char *));
        size_t size = strlen(dir) + len + 2;
        names[n] = malloc(size);
        snprintf(names[n], size, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(char *), compare_names);
    names[n] = NULL;
    return names;
}

static void free_files(char **files)
{
    for (size_t i = 0; files != NULL && files[i] != NULL; i++)
        free(files[i]);
    free(files);
}

int cmd_ls(int argc, char **argv)
{
    static const struct option options[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    cli_set_command("ls");
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (c == 'h') {
            fputs(ls_usage, stdout);
            return 0;
        }
        if (c == 'j')
            json = 1;
        else
            return cli_bad_option(c, argv, ls_usage);
    }
    if (optind != argc)
        return cli_usage_error(ls_usage, "unexpected argument '%s'",
                               argv[optind]);
    char dir[512];
    char **files = session_files(dir, sizeof(dir));
    if (files == NULL)
        return 1;
    if (!json && files[0] != NULL)
        printf("%7s %-5s %-7s %-7s %7s %5s %12s %12s %10s %10s %-15s %s\n",
               "PID", "LIFE", "STATE", "MODE", "THREADS", "RINGS", "RECORDED",
               "OVERWRITTEN", "DROPPED", "SIZE", "PROGRAM", "COMMAND");
    for (size_t i = 0; files[i] != NULL; i++)
        list_one(files[i], json);
    free_files(files);
    return fflush(stdout) == 0 ? 0 : 1;
}

/*=====   flightrec dump   =====*/

static const char dump_usage[] =
    "usage: flightrec dump [-o OUT] PID|FILE\n"
    "\n"
    "Writes a complete stream of what a session's rings hold, without\n"
    "consuming anything, from a live process or a dead one's session file.\n"
    "\n"
    "  -o, --output OUT  write to OUT (created 0600; default: standard output,\n"
    "                    not a terminal)\n"
    "  -h, --help        show this help\n";



/* Writes the stream of the rings of the @size bytes mapped at @base (what
 * is new in them if @consume); with @fullest, sets it to the fill level of
 * the fullest ring before it was read. */
static void put_stream(struct frw_sink *sink, unsigned char *base, size_t size,
                       int consume, uint32_t *seen, int header,
                       uint32_t *fullest)
{
    const struct flightrec_region_header *h = cli_region_header(base);
    if (header) {
        /* A copy: the header of the stream, with the frequency known. */
        struct flightrec_region_header facts;
        memcpy(&facts, h, sizeof(facts));
        atomic_store(&facts.counter_frequency, cli_counter_frequency(h, 1));
        frw_put_header(sink, &facts, cli_region_control(base));
    }
    frw_put_event_names(sink,
                       (const void *)(base + h->names_offset), seen);
    int alive = consume ? 1 : fr_session_alive(base);
    uint32_t rewind_request = 0;
    int rewind = consume && fr_rewind_requested(cli_region_control(base),
                                                &rewind_request);
    uint32_t count = atomic_load(&h->ring_count);
    uint64_t at = atomic_load(&h->ring_list);
    for (uint32_t n = 0; at != 0 && n <= count + 1024; n++) {
        if (!ring_mapped(base, at, size))
            break; /* added since the mapping: the next pass reads it */
        struct flightrec_region_ring *r = ring_at(base, at);
        at = atomic_load(&r->next_offset);
        if (at != 0 && (at % FLIGHTREC_REGION_ALIGN != 0 ||
                        at + sizeof(*r) > atomic_load(&h->used)))
            at = 0; /* a damaged link ends the walk */
        uint32_t state = atomic_load(&r->state);
        if (state == FLIGHTREC_RING_FREE)
            continue;
        uint32_t words[4];
        const uint32_t *name =
            alive && state == FLIGHTREC_RING_LIVE
                ? cli_live_thread_name(cli_region_process(base)->pid,
                                       atomic_load(&r->owner.tid), words)
                : NULL;
        if (consume) {
            if (rewind)
                fr_ring_rewind(r);
            if (fullest != NULL) {
                uint32_t fill = fr_ring_fill(r);
                if (fill > *fullest)
                    *fullest = fill;
            }
            if (fr_ring_has_news(r))
                (void)fr_ring_drain(sink, base, r, name);
        } else {
            (void)fr_ring_dump(sink, base, r, name);
        }
    }
    if (rewind)
        fr_rewind_served(cli_region_control(base), rewind_request);
}

/* cli_session_dump(): print, stats and convert of a PID. */
static int dump_session_to(const char *pid, int fd)
{
    struct fr_session s;
    if (cli_session_open(pid, 0, &s, 0) != 0)
        return -1;
    static unsigned char buf[OUT_BUFFER];
    struct frw_sink sink;
    int target = fd;
    frw_sink_init_fd(&sink, &target, buf, sizeof(buf));
    put_stream(&sink, s.base, s.size, 0, NULL, 1, NULL);
    int rc = frw_sink_flush(&sink);
    fr_session_close(&s);
    if (rc != 0)
        cli_msg(CLI_ERROR, "reading the session: %s", strerror(-rc));
    return rc == 0 ? 0 : -1;
}

__attribute__((constructor)) static void offer_session_dump(void)
{
    cli_session_dump = dump_session_to;
}

int cmd_dump(int argc, char **argv)
{
    static const struct option options[] = {
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    cli_set_command("dump");
    const char *output = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
        if (c == 'h') {
            fputs(dump_usage, stdout);
            return 0;
        }
        if (c == 'o')
            output = optarg;
        else
            return cli_bad_option(c, argv, dump_usage);
    }
    if (optind + 1 != argc)
        return cli_usage_error(dump_usage, "expected one PID or FILE");
    struct fr_session s;
    if (cli_session_open(argv[optind], 0, &s, 0) != 0)
        return 1;
    struct out_file out;
    if (out_open(&out, output) != 0) {
        fr_session_close(&s);
        return 1;
    }
    static unsigned char buf[OUT_BUFFER];
    struct frw_sink sink;
    frw_sink_init_fd(&sink, &out.fd, buf, sizeof(buf));
    put_stream(&sink, s.base, s.size, 0, NULL, 1, NULL);
    int rc = frw_sink_flush(&sink);
    if (rc != 0)
        cli_msg(0, "writing the stream: %s", strerror(-rc));
    fr_session_close(&s);
    return out_close(&out, rc == 0) == 0 ? 0 : 1;
}

/*=====   flightrec stream   =====*/

static const char stream_usage[] =
    "usage: flightrec stream [-o OUT] PID|FILE\n"
    "\n"
    "Consumes a live session's rings continuously, with exact losses, until\n"
    "the process exits (or calls exec) or Ctrl-C; the stream then ends\n"
    "cleanly.  One consumer per session at a time.\n"
    "\n"
    "  -o, --output OUT  write to OUT (created 0600; default or -: standard\n"
    "                    output, for a pipe into 'flightrec print -')\n"
    "  -h, --help        show this help\n";

static volatile sig_atomic_t stream_stop;

#define REMAP_TRIES 1000

/* Maps what the session file holds now.  The program grows its file
 * before it counts the new bytes as used, but it may do so again between
 * the file's size being read and the region being checked, which then
 * looks truncated: read it again (1 ms apart, for a second) before saying
 * so.  A region that fails its check is checked again even if the file's
 * size did not change. */
static int remap_session(struct fr_session *s, char *message, size_t size)
{
    for (int attempt = 1;; attempt++) {
        int rc = fr_session_remap(s, message, size);
        if (rc == 0 && attempt > 1) {
            char why[300];
            rc = fr_region_check(s->base, s->size, why, sizeof(why));
            /* (A message cut short is still the message.) */
            if (rc != 0 &&
                snprintf(message, size, "'%s': %s", s->path, why) < 0)
                message[0] = '\0';
        }
        if (rc == 0)
            return 0;
        if (s->base == NULL || attempt == REMAP_TRIES)
            return -1; /* not mapped at all, or really damaged */
        struct timespec pause = { 0, 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
}

static void on_stop(int sig)
{
    (void)sig;
    stream_stop = 1;
}

int cmd_stream(int argc, char **argv)
{
    static const struct option options[] = {
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    cli_set_command("stream");
    const char *output = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
        if (c == 'h') {
            fputs(stream_usage, stdout);
            return 0;
        }
        if (c == 'o')
            output = optarg;
        else
            return cli_bad_option(c, argv, stream_usage);
    }
    if (optind + 1 != argc)
        return cli_usage_error(stream_usage, "expected one PID or FILE");
    struct fr_session s;
    if (cli_session_open(argv[optind], 1, &s, 0) != 0)
        return 1;
    struct flightrec_region_control *control = cli_region_control(s.base);
    int32_t me = (int32_t)getpid(), holder = 0;
    if (fr_consumer_claim(control, me, fr_process_start_time(me), &holder) !=
        0) {
        cli_msg(0, "session of process %d is already consumed by process %d",
                (int)cli_region_process(s.base)->pid, (int)holder);
        fr_session_close(&s);
        return 1;
    }
    struct out_file out;
    if (out_open(&out, output) != 0) {
        fr_consumer_release(control, me);
        fr_session_close(&s);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    static unsigned char buf[OUT_BUFFER];
    static uint32_t seen[FLIGHTREC_EVENT_COUNT];
    struct frw_sink sink;
    frw_sink_init_fd(&sink, &out.fd, buf, sizeof(buf));
    int rc = 0, first = 1;
    char message[600];
    /* The pause adapts to how fast the rings fill (fr_poll_pause()). */
    uint64_t pause = FR_POLL_PAUSE_MAX_NS, last_pass = cli_monotonic_ns();
    uint64_t maps_checked_ns = 0;
    for (;;) {
        uint64_t pass = cli_monotonic_ns();
        uint32_t fullest = 0;
        /* A process that called exec ends its stream as one that died;
         * its maps are read at most every 100 ms (a pass can be 0.1 ms). */
        int alive = fr_session_recording_every(&s, pass, &maps_checked_ns,
                                               100000000u);
        if (remap_session(&s, message, sizeof(message)) != 0) {
            cli_msg(0, "%s", message);
            rc = -1;
            break;
        }
        control = cli_region_control(s.base);
        frw_sink_resume(&sink);
        put_stream(&sink, s.base, s.size, 1, seen, first, &fullest);
        first = 0;
        if ((rc = frw_sink_flush(&sink)) != 0) {
            cli_msg(0, "writing the stream: %s", strerror(-rc));
            break;
        }
        /* What the process wrote before it was seen gone is read above. */
        if (!alive || stream_stop)
            break;
        pause = fr_poll_pause(pause, pass - last_pass, fullest);
        last_pass = pass;
        struct timespec sleep_for = { 0, (long)pause };
        nanosleep(&sleep_for, NULL);
    }
    fr_consumer_release(control, me);
    fr_session_close(&s);
    return out_close(&out, rc == 0) == 0 ? 0 : 1;
}

/*=====   flightrec rm   =====*/

static const char rm_usage[] =
    "usage: flightrec rm PID|FILE...|--dead\n"
    "\n"
    "Removes session files, naming each one removed.  A live process's\n"
    "session is not removed.\n"
    "\n"
    "  --dead      remove the sessions of every process that is gone\n"
    "  -h, --help  show this help\n";

static int remove_session(const char *path, int only_dead)
{
    struct fr_session s;
    char message[600], safe[700];
    if (fr_session_open(&s, path, 0, message, sizeof(message)) != 0) {
        cli_msg(0, "%s", cli_escape(safe, sizeof(safe), message));
        return -1;
    }
    /* A process that called exec no longer records into it: dead. */
    int alive = fr_session_recording(&s);
    int pid = (int)cli_region_process(s.base)->pid;
    fr_session_close(&s);
    if (alive) {
        if (!only_dead)
            cli_msg(0, "process %d is alive: its session '%s' stays", pid,
                    path);
        return only_dead ? 0 : -1;
    }
    if (unlink(path) != 0) {
        cli_msg(0, "cannot remove '%s': %s", path, strerror(errno));
        return -1;
    }
    printf("removed %s (process %d)\n", cli_escape(safe, sizeof(safe), path),
           pid);
    return 0;
}

/* Session files a program made but never named (it died while its region
 * was being set up, fr_session_create()): ".PID-START.new" of a process
 * that is gone.  They hold no region; removed without a word unless that
 * fails. */
static int remove_unnamed_dead(void)
{
    char dir[512], message[600];
    if (fr_session_dir(dir, sizeof(dir), 0, message, sizeof(message)) != 0)
        return 0; /* said by session_files() */
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    int status = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int pid;
        unsigned long long start;
        char tail[8];
        if (sscanf(e->d_name, ".%d-%llu%7s", &pid, &start, tail) != 3 ||
            strcmp(tail, ".new") != 0 || pid <= 0)
            continue;
        if (fr_process_start_time(pid) == start)
            continue; /* still setting up, or about to */
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (unlink(path) != 0 && errno != ENOENT) {
            char safe[1200];
            cli_msg(0, "cannot remove '%s': %s",
                    cli_escape(safe, sizeof(safe), path), strerror(errno));
            status = 1;
        }
    }
    closedir(d);
    return status;
}

int cmd_rm(int argc, char **argv)
{
    static const struct option options[] = {
        { "dead", no_argument, NULL, 'd' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    cli_set_command("rm");
    int dead = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (c == 'h') {
            fputs(rm_usage, stdout);
            return 0;
        }
        if (c == 'd')
            dead = 1;
        else
            return cli_bad_option(c, argv, rm_usage);
    }
    if (dead == (optind != argc))
        return cli_usage_error(rm_usage, "expected PID or FILE arguments, or "
                                         "--dead alone");
    int status = 0;
    if (dead) {
        char dir[512];
        char **files = session_files(dir, sizeof(dir));
        if (files == NULL)
            return 1;
        for (size_t i = 0; files[i] != NULL; i++)
            if (remove_session(files[i], 1) != 0)
                status = 1;
        free_files(files);
        if (remove_unnamed_dead() != 0)
            status = 1;
        return status;
    }
    for (int i = optind; i < argc; i++) {
        char path[512], message[600];
        if (fr_session_locate(argv[i], path, sizeof(path), message,
                              sizeof(message)) != 0) {
            cli_msg(0, "%s", message);
            status = 1;
            continue;
        }
        if (remove_session(path, 0) != 0)
            status = 1;
    }
    return status;
}
