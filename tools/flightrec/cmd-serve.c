/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec serve: this user's sessions over TCP (docs/format.md section
 * 10), from outside the programs.  The server (src/server/) is the one
 * consumer of each session it serves and fans the stream out to its
 * clients.
 */
#define _GNU_SOURCE /* O_NOFOLLOW, O_CLOEXEC, sigaction */
#include "cli.h"
#include "cli-session.h"

#include "../../src/region/session.h"
#include "../../src/server/server.h"

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

static const char serve_usage[] =
    "usage: flightrec serve [PID...|--all] [--listen ADDR:PORT] [--token FILE] "
    "[--max-clients N]\n"
    "\n"
    "Serves live sessions of this user over TCP to 'flightrec connect' and\n"
    "other clients, many at once; the bytes sent are a recording stream.\n"
    "The server consumes each session it serves (one consumer per session).\n"
    "It ends when the processes named have all exited, or on Ctrl-C; the\n"
    "clients then get the end of the stream.\n"
    "\n"
    "  PID...              the sessions to serve\n"
    "  --all               every live session, also those that start later\n"
    "                      (the default without PID)\n"
    "  --listen ADDR:PORT  where to listen (default 127.0.0.1:6725); an\n"
    "                      address that is not loopback lets other machines\n"
    "                      connect\n"
    "  --token FILE        clients must send the first line of FILE\n"
    "  --max-clients N     clients at once (default 16)\n"
    "  -h, --help          show this help\n";

#define PERIOD_MS 10u
#define SCAN_MS 500u
#define FINISH_GRACE_MS 10000u
#define STOP_GRACE_MS 2000u

struct served {
    struct fr_session session;
    int32_t pid;
    int claimed;
    int active;
    uint64_t maps_checked_ns;   /* fr_session_recording_every() */
};

static volatile sig_atomic_t serve_stop;

static void on_stop(int sig)
{
    (void)sig;
    serve_stop = 1;
}

/*=====   A session as the server's source   =====*/

static int source_refresh(void *ctx, unsigned char **base)
{
    struct served *v = ctx;
    char message[600];
    if (fr_session_remap(&v->session, message, sizeof(message)) != 0) {
        char safe[700];
        cli_msg(CLI_ERROR, "%s", cli_escape(safe, sizeof(safe), message));
        return -1;
    }
    *base = v->session.base;
    return 0;
}

/* A process that called exec records no more into its session: its stream
 * ends as for one that exited.  Its maps are read every 100 ms at most (the
 * server asks every period). */
static int source_alive(void *ctx)
{
    struct served *v = ctx;
    return fr_session_recording_every(&v->session, cli_monotonic_ns(),
                                      &v->maps_checked_ns, 100000000u);
}

/* The current name of a live thread, from /proc (the region keeps the
 * name it had at its first event). */
static const uint32_t *source_thread_name(void *ctx,
                                          const struct flightrec_region_ring *r,
                                          uint32_t words[4])
{
    struct served *v = ctx;
    return cli_live_thread_name(v->pid, atomic_load(&r->owner.tid), words);
}

/* The server names no frequency it measured: its clients see the
 * stream's. */
static uint64_t source_frequency(void *ctx)
{
    struct served *v = ctx;
    return cli_counter_frequency(cli_region_header(v->session.base), 0);
}

static void source_ended(void *ctx)
{
    struct served *v = ctx;
    if (v->claimed)
        fr_consumer_release(cli_region_control(v->session.base), (int32_t)getpid());
    v->claimed = 0;
    v->active = 0;
    fr_session_close(&v->session);
}

static const struct fr_source_ops session_ops = {
    .refresh = source_refresh,
    .alive = source_alive,
    .thread_name = source_thread_name,
    .frequency = source_frequency,
    .ended = source_ended,
};

/* Opens and claims the session of @arg; NULL with a message (when @quiet
 * is 0) if it cannot be had. */
static struct served *take_session(const char *arg, int quiet)
{
    struct served *v = calloc(1, sizeof(*v));
    if (v == NULL) {
        cli_msg(CLI_ERROR, "out of memory");
        return NULL;
    }
    if (cli_session_open(arg, 1, &v->session, quiet) != 0) {
        free(v);
        return NULL;
    }
    const struct flightrec_region_process *p =
        (const void *)(v->session.base + cli_region_header(v->session.base)->process_offset);
    v->pid = p->pid;
    if (!fr_session_recording(&v->session)) {
        if (!quiet && fr_session_alive(v->session.base))
            cli_msg(CLI_ERROR, "process %d no longer records into this "
                               "session (it called exec): nothing to serve "
                               "(its last events: 'flightrec dump %d')",
                    (int)v->pid, (int)v->pid);
        else if (!quiet)
            cli_msg(CLI_ERROR, "process %d has exited: nothing to serve "
                               "(its last events: 'flightrec dump %d')",
                    (int)v->pid, (int)v->pid);
        fr_session_close(&v->session);
        free(v);
        return NULL;
    }
    int32_t me = (int32_t)getpid(), holder = 0;
    if (fr_consumer_claim(cli_region_control(v->session.base), me,
                          fr_process_start_time(me), &holder) != 0) {
        if (!quiet)
            cli_msg(CLI_ERROR,
                    "session of process %d is already consumed by process %d",
                    (int)v->pid, (int)holder);
        fr_session_close(&v->session);
        free(v);
        return NULL;
    }
    v->claimed = 1;
    v->active = 1;
    return v;
}

/*=====   The sessions served   =====*/

struct served_list {
    struct served **items;
    size_t count, cap;
    /* Pids refused once under --all (consumed by another): not retried
     * every scan, nor reported again. */
    int32_t *skipped;
    size_t skipped_count, skipped_cap;
};

static int list_add(struct served_list *l, struct served *v)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        struct served **grown = realloc(l->items, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        l->items = grown;
        l->cap = cap;
    }
    l->items[l->count++] = v;
    return 0;
}

static int skipped(const struct served_list *l, int32_t pid)
{
    for (size_t i = 0; i < l->skipped_count; i++)
        if (l->skipped[i] == pid)
            return 1;
    return 0;
}

static void skip(struct served_list *l, int32_t pid)
{
    if (l->skipped_count == l->skipped_cap) {
        size_t cap = l->skipped_cap ? 2 * l->skipped_cap : 16;
        int32_t *grown = realloc(l->skipped, cap * sizeof(*grown));
        if (grown == NULL)
            return;
        l->skipped = grown;
        l->skipped_cap = cap;
    }
    l->skipped[l->skipped_count++] = pid;
}

/* --all: serves the live sessions not served yet. */
static void scan_sessions(struct fr_server *server, struct served_list *l)
{
    char dir[512], message[600];
    if (fr_session_dir(dir, sizeof(dir), 0, message, sizeof(message)) != 0)
        return;
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    size_t suffix = strlen(FR_SESSION_SUFFIX);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= suffix ||
            strcmp(e->d_name + len - suffix, FR_SESSION_SUFFIX) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end != '-' || (int32_t)pid == (int32_t)getpid() ||
            fr_server_serves(server, (int32_t)pid) || skipped(l, (int32_t)pid))
            continue;
        char path[1100];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct fr_session probe;
        if (fr_session_open(&probe, path, 0, message, sizeof(message)) != 0)
            continue;
        int alive = fr_session_recording(&probe);
        fr_session_close(&probe);
        if (!alive)
            continue;
        struct served *v = take_session(path, 1);
        if (v == NULL) {
            cli_msg(CLI_WARN, "process %ld: its session cannot be served "
                              "(consumed by another process?)", pid);
            skip(l, (int32_t)pid);
            continue;
        }
        if (list_add(l, v) != 0 ||
            fr_server_add(server, v->pid, &session_ops, v) != 0) {
            source_ended(v);
            continue;
        }
        cli_msg(CLI_INFO, "serving process %d", (int)v->pid);
    }
    closedir(d);
}

/*=====   Options   =====*/

/* The first line of @path into @token; 0 or -1 with a message. */
static int read_token(const char *path, char *token, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_msg(CLI_ERROR, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && (st.st_mode & 077) != 0)
        cli_msg(CLI_WARN, "warning: the token file '%s' can be read by other "
                          "users (chmod 600 it)", path);
    ssize_t n = read(fd, token, size - 1);
    close(fd);
    if (n < 0) {
        cli_msg(CLI_ERROR, "cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    token[n] = '\0';
    token[strcspn(token, "\r\n")] = '\0';
    if (token[0] == '\0') {
        cli_msg(CLI_ERROR, "'%s': the first line (the token) is empty", path);
        return -1;
    }
    if ((size_t)n == size - 1 && strchr(token, '\n') == NULL &&
        strlen(token) == size - 1) {
        cli_msg(CLI_ERROR, "'%s': the token is longer than %zu bytes", path,
                size - 2);
        return -1;
    }
    return 0;
}

static void log_line(void *arg, const char *message)
{
    (void)arg;
    cli_msg(CLI_ERROR, "%s", message);
}

int cmd_serve(int argc, char **argv)
{
    enum { OPT_ALL = 256, OPT_LISTEN, OPT_TOKEN, OPT_MAX };
    static const struct option options[] = {
        { "all", no_argument, NULL, OPT_ALL },
        { "listen", required_argument, NULL, OPT_LISTEN },
        { "token", required_argument, NULL, OPT_TOKEN },
        { "max-clients", required_argument, NULL, OPT_MAX },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    cli_set_command("serve");
    int all = 0, c;
    const char *listen_text = NULL, *token_path = NULL;
    uint64_t max_clients = 16;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(serve_usage, stdout);
            return CLI_OK;
        case OPT_ALL:
            all = 1;
            break;
        case OPT_LISTEN:
            listen_text = optarg;
            break;
        case OPT_TOKEN:
            token_path = optarg;
            break;
        case OPT_MAX:
            if (cli_parse_u64(optarg, &max_clients) != 0 || max_clients == 0 ||
                max_clients > 4096)
                return cli_usage_error(serve_usage,
                                       "--max-clients: '%s' is not a number "
                                       "from 1 to 4096",
                                       optarg);
            break;
        default:
            return cli_bad_option(c, argv, serve_usage);
        }
    }
    if (all && optind != argc)
        return cli_usage_error(serve_usage, "PID arguments or --all, not both");
    if (optind == argc)
        all = 1;
    char address[128] = "127.0.0.1";
    unsigned port = FR_SERVER_DEFAULT_PORT;
    if (listen_text != NULL &&
        fr_server_parse_address(listen_text, address, sizeof(address),
                                &port) != 0)
        return cli_usage_error(serve_usage,
                               "--listen: '%s' is not ADDR:PORT with a "
                               "numeric address",
                               listen_text);
    static char token[256];
    if (token_path != NULL && read_token(token_path, token, sizeof(token)) != 0)
        return CLI_FAIL;

    struct served_list list;
    memset(&list, 0, sizeof(list));
    int status = CLI_OK;
    struct fr_server *server = NULL;
    for (int i = optind; i < argc; i++) {
        struct served *v = take_session(argv[i], 0);
        if (v == NULL || list_add(&list, v) != 0) {
            status = CLI_FAIL;
            goto out;
        }
    }
    struct fr_server_options so = {
        .address = address,
        .port = port,
        .token = token_path != NULL ? token : NULL,
        .max_clients = (unsigned)max_clients,
        .log = log_line,
    };
    char message[300];
    if (fr_server_open(&server, &so, message, sizeof(message)) != 0) {
        cli_msg(CLI_ERROR, "%s", message);
        server = NULL;
        status = CLI_FAIL;
        goto out;
    }
    for (size_t i = 0; i < list.count; i++)
        if (fr_server_add(server, list.items[i]->pid, &session_ops,
                          list.items[i]) != 0) {
            cli_msg(CLI_ERROR, "process %d: its session cannot be read",
                    (int)list.items[i]->pid);
            status = CLI_FAIL;
            goto out;
        }
    if (!fr_server_is_loopback(address))
        cli_msg(CLI_WARN, "warning: listening on %s: other machines can "
                          "connect%s", address,
                token_path != NULL ? "" : " and no token is required");
    cli_msg(CLI_WARN, strchr(address, ':') ? "listening on [%s]:%u"
                                           : "listening on %s:%u",
            address, fr_server_port(server));

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (all)
        scan_sessions(server, &list);
    unsigned since_scan = 0;
    while (!serve_stop) {
        fr_server_poll(server, PERIOD_MS);
        fr_server_drain(server);
        if (all) {
            since_scan += PERIOD_MS;
            if (since_scan >= SCAN_MS) {
                scan_sessions(server, &list);
                since_scan = 0;
            }
        } else if (fr_server_source_count(server) == 0) {
            break;
        }
    }
    fr_server_finish(server, serve_stop ? STOP_GRACE_MS : FINISH_GRACE_MS);
out:
    fr_server_close(server);
    for (size_t i = 0; i < list.count; i++) {
        if (list.items[i]->active)
            source_ended(list.items[i]);
        free(list.items[i]);
    }
    free(list.items);
    free(list.skipped);
    return status;
}
