/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief flightrec connect: record the stream a flightrec server or an
 * RTEMS record server sends over TCP.
 *
 * What a server sends is the stream format itself (docs/format.md), so the
 * file gets exactly the bytes received -- whole items only: the bytes of an
 * item still incomplete are held back, and left out if the connection dies
 * inside it, so the file is a valid recording at every moment.  The same
 * bytes go through one incremental client, for the status line, for the
 * checks and, with --print, for print's own text output (cli_printer).
 *
 * The protocol (docs/format.md, section 10): the client sends nothing
 * unless it was given --token or --pid; then the lines "token TOKEN",
 * "pid N" and an empty line.  A flightrec server ends a stream on purpose
 * with STREAM_END and closes; an RTEMS server streams until the client
 * leaves.  A server that refuses sends one line "flightrec: ..." and
 * closes.
 */
#define _GNU_SOURCE /* SOCK_NONBLOCK, SOCK_CLOEXEC, O_NOFOLLOW, pipe2 */
#include "cli.h"

#include "../../src/server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: flightrec connect HOST[:PORT] [-o FILE] [-f] [--print] "
    "[--duration S] [--reconnect] [--token FILE] [--pid N]\n"
    "\n"
    "Record the stream a flightrec server (flightrec serve, FLIGHTREC_SERVER)\n"
    "or an RTEMS record server sends, into FILE (default HOST-PORT.rec),\n"
    "until the end of the stream, Ctrl-C or --duration.  HOST is a name or\n"
    "an address ([::1] for IPv6); PORT defaults to 6725, flightrec serve's.\n"
    "A status line is shown on a terminal.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE  the recording (created 0600; refused if it exists,\n"
    "                     unless -f)\n"
    "  -f, --force        overwrite FILE\n"
    "  --print            also print the records, as 'flightrec print -'\n"
    "  --duration S       stop after S seconds (e.g. 1.5)\n"
    "  --reconnect        reconnect after a lost connection (backoff 0.25 s\n"
    "                     doubling to 5 s, 20 attempts); each connection\n"
    "                     writes a segment: FILE, FILE.2, FILE.3, ...\n"
    "  --token FILE       send the first line of FILE as the token\n"
    "  --pid N            ask the server for process N's session\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 end of stream, Ctrl-C or --duration; 1 error or\n"
    "refusal; 2 usage; 3 the target died (the connection ended without an\n"
    "end of stream: FILE holds what came, up to its last whole item).\n";

/* The status exit of a target that died: distinct from errors, as the file
 * is good up to where the target stopped. */
enum { CONNECT_TARGET_DIED = 3 };

#define CONNECT_TIMEOUT_NS (10ull * 1000000000u)
#define STATUS_PERIOD_NS (500ull * 1000000u)
#define BACKOFF_FIRST_NS (250ull * 1000000u)
#define BACKOFF_MAX_NS (5ull * 1000000000u)
#define RECONNECT_ATTEMPTS 20u
/* The longest refusal line read (and shown). */
#define REFUSAL_MAX 1024u
#define READ_CHUNK (1u << 20)
/* After a stop, what already arrived is still taken, up to this much. */
#define DRAIN_MAX (4u << 20)
#define TOKEN_MAX 1024u

static const char refusal_prefix[] = "flightrec: ";

/*=====   Stopping: Ctrl-C, SIGTERM, --duration   =====*/

static volatile sig_atomic_t stop_signal;
/* Written by the handler so that a poll() sleeping on it wakes (no race
 * between checking the flag and sleeping). */
static int stop_pipe[2] = { -1, -1 };
static uint64_t deadline_ns = UINT64_MAX;

static void on_stop(int sig)
{
    int saved = errno;
    ssize_t w;

    stop_signal = sig;
    w = write(stop_pipe[1], "", 1);
    (void)w;
    errno = saved;
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int stopping(void)
{
    return stop_signal != 0 || monotonic_ns() >= deadline_ns;
}

/*
 * Waits until @a fd (-1: none) is ready for @a events or until @a until_ns.
 * Returns 1 ready, 0 timed out, -1 stop requested (signal or --duration).
 */
static int wait_for(int fd, short events, uint64_t until_ns)
{
    for (;;) {
        if (stopping())
            return -1;
        uint64_t now = monotonic_ns();
        uint64_t end = until_ns < deadline_ns ? until_ns : deadline_ns;
        if (now >= end)
            return stopping() ? -1 : 0;
        uint64_t ms = (end - now + 999999u) / 1000000u;
        struct pollfd p[2] = {
            { .fd = stop_pipe[0], .events = POLLIN },
            { .fd = fd, .events = events },
        };
        int n = poll(p, 2, ms > INT_MAX ? INT_MAX : (int)ms);
        if (n < 0 && errno != EINTR)
            return 1; /* let the caller's own call report it */
        if (n > 0 && p[1].revents != 0)
            return 1;
    }
}

/*=====   The target   =====*/

struct target {
    char host[256];
    char port[8];
    char shown[1100]; /* as given, escaped for messages */
};

/* HOST:PORT, [IPV6]:PORT, or HOST / [IPV6] alone for flightrec serve's
 * default port. */
static int parse_target(const char *arg, struct target *t)
{
    const char *host = arg, *colon;
    size_t host_len;

    memset(t, 0, sizeof(*t));
    cli_escape(t->shown, sizeof t->shown, arg);
    if (arg[0] == '[') {
        const char *close = strchr(arg, ']');
        if (close == NULL || (close[1] != ':' && close[1] != '\0'))
            return -1;
        host = arg + 1;
        host_len = (size_t)(close - host);
        colon = close[1] == ':' ? close + 1 : NULL;
    } else {
        colon = strrchr(arg, ':');
        host_len = colon != NULL ? (size_t)(colon - arg) : strlen(arg);
        /* An IPv6 address needs its brackets: where would its port be? */
        if (memchr(arg, ':', host_len) != NULL)
            return -1;
    }
    uint64_t port = FR_SERVER_DEFAULT_PORT;
    if (host_len == 0 || host_len >= sizeof t->host ||
        (colon != NULL && cli_parse_u64(colon + 1, &port) != 0) ||
        port == 0 || port > 65535)
        return -1;
    memcpy(t->host, host, host_len);
    t->host[host_len] = '\0';
    snprintf(t->port, sizeof t->port, "%u", (unsigned)port);
    if (colon == NULL) {
        /* Messages name the port connected to. */
        size_t used = strlen(t->shown);
        snprintf(t->shown + used, sizeof t->shown - used, ":%s", t->port);
    }
    return 0;
}

/* HOST-PORT.rec, with anything but letters, digits, '.' and '-' in HOST
 * as '_' (no directory, no character a shell would mind). */
static void default_output(const struct target *t, char *out, size_t size)
{
    char host[sizeof t->host];
    size_t i = 0;

    for (; t->host[i] != '\0'; i++) {
        char c = t->host[i];
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '-';
        host[i] = plain ? c : '_';
    }
    host[i] = '\0';
    /* "." or ".." alone would name a directory. */
    if (strspn(host, ".") == i)
        memset(host, '_', i);
    snprintf(out, size, "%s-%s.rec", host, t->port);
}

/*
 * Connects to the first address of the target that answers, IPv4 or IPv6.
 * Returns the socket (non-blocking), -1 after a message, -2 when a stop was
 * requested.
 */
static int dial(const struct target *t)
{
    struct addrinfo hints, *list = NULL;
    int last_errno = 0;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int rc = getaddrinfo(t->host, t->port, &hints, &list);
    if (rc != 0) {
        char host[1100];
        cli_msg(CLI_ERROR, "cannot resolve '%s': %s",
                cli_escape(host, sizeof host, t->host),
                rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    for (struct addrinfo *ai = list; ai != NULL; ai = ai->ai_next) {
        int fd = socket(ai->ai_family,
                        ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            freeaddrinfo(list);
            return fd;
        }
        if (errno != EINPROGRESS) {
            last_errno = errno;
            close(fd);
            continue;
        }
        int ready = wait_for(fd, POLLOUT, monotonic_ns() + CONNECT_TIMEOUT_NS);
        if (ready < 0) {
            close(fd);
            freeaddrinfo(list);
            return -2;
        }
        int err = ready == 0 ? ETIMEDOUT : 0;
        socklen_t len = sizeof err;
        if (ready == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err == 0) {
            freeaddrinfo(list);
            return fd;
        }
        last_errno = err;
        close(fd);
    }
    freeaddrinfo(list);
    cli_msg(CLI_ERROR, "cannot connect to %s: %s", t->shown,
            strerror(last_errno != 0 ? last_errno : EHOSTUNREACH));
    return -1;
}

/* Sends all of @a n bytes; a server that closed early is found when its
 * answer (a refusal line, or nothing) is read, so errors are not fatal. */
static void send_all(int fd, const char *bytes, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, bytes, n, MSG_NOSIGNAL);
        if (w > 0) {
            bytes += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EAGAIN) {
            if (wait_for(fd, POLLOUT, monotonic_ns() + CONNECT_TIMEOUT_NS) != 1)
                return;
        } else if (!(w < 0 && errno == EINTR)) {
            return;
        }
    }
}

/*=====   Options   =====*/

struct connect_options {
    struct target target;
    const char *output;
    char default_name[300];
    int force;
    int print;
    int reconnect;
    int show_status;     /* a status line on stderr (a terminal) */
    char hello[TOKEN_MAX + 64]; /* what to send first; "" for nothing */
    size_t hello_len;
};

/* The first line of @a path, the token (printable, at most TOKEN_MAX). */
static int read_token(const char *path, char *token)
{
    char buf[TOKEN_MAX + 2];
    size_t len = 0;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        cli_msg(CLI_ERROR, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    while (len < sizeof buf && memchr(buf, '\n', len) == NULL) {
        ssize_t n = read(fd, buf + len, sizeof buf - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            cli_msg(CLI_ERROR, "cannot read '%s': %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (fstat(fd, &st) == 0 && (st.st_mode & 077) != 0)
        cli_msg(CLI_WARN, "'%s' can be read by other users: keep a token "
                "private (chmod 600)", path);
    close(fd);
    char *nl = memchr(buf, '\n', len);
    if (nl != NULL)
        len = (size_t)(nl - buf);
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    if (len > TOKEN_MAX) {
        cli_msg(CLI_ERROR, "'%s': the token is longer than %u bytes", path,
                TOKEN_MAX);
        return -1;
    }
    if (len == 0) {
        cli_msg(CLI_ERROR, "'%s': no token on its first line", path);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c < 0x20 || c == 0x7f) {
            cli_msg(CLI_ERROR, "'%s': the token holds a control character",
                    path);
            return -1;
        }
    }
    memcpy(token, buf, len);
    token[len] = '\0';
    return 0;
}

/* The path of segment @a n (1: FILE itself, then FILE.2, FILE.3, ...). */
static void segment_path(const struct connect_options *o, unsigned n,
                         char *out, size_t size)
{
    if (n == 1)
        snprintf(out, size, "%s", o->output);
    else
        snprintf(out, size, "%s.%u", o->output, n);
}

/* Refuses an existing FILE (without -f) and a link at its last component,
 * before connecting. */
static int check_output(const char *path, int force)
{
    struct stat st;

    if (lstat(path, &st) != 0)
        return 0;
    if (!force) {
        cli_msg(CLI_ERROR, "'%s' exists (use -f to overwrite it)", path);
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        cli_msg(CLI_ERROR, "'%s' is a symbolic link: not followed", path);
        return -1;
    }
    return 0;
}

static int open_output(const char *path, int force)
{
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
    struct stat st;
    int fd;

    flags |= force ? O_TRUNC : O_EXCL;
    do
        fd = open(path, flags, 0600);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        if (errno == EEXIST)
            cli_msg(CLI_ERROR, "'%s' exists (use -f to overwrite it)", path);
        else if (errno == ELOOP)
            cli_msg(CLI_ERROR, "'%s' is a symbolic link: not followed", path);
        else
            cli_msg(CLI_ERROR, "cannot create '%s': %s", path,
                    strerror(errno));
        return -1;
    }
    /* An overwritten file keeps its mode: make it private like a new one
     * (only a regular file: -f -o /dev/null must not chmod the device). */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (st.st_mode & 07777) != 0600)
        (void)fchmod(fd, 0600);
    return fd;
}

/*=====   One connection   =====*/

enum outcome {
    OUTCOME_STOPPED,   /* Ctrl-C, SIGTERM or --duration */
    OUTCOME_END,       /* STREAM_END: the server ended the stream */
    OUTCOME_LOST,      /* the connection ended without STREAM_END */
    OUTCOME_NO_STREAM, /* no connection, or it ended before a stream */
    OUTCOME_REFUSED,   /* a "flightrec: " line */
    OUTCOME_FAILED     /* not a stream, a stream error, a file error */
};

struct session {
    const struct connect_options *opt;
    const char *path;
    int sock;
    int file;                   /* -1 until the stream starts */
    /* Before the stream starts: what came so far. */
    unsigned char head[REFUSAL_MAX];
    size_t head_len;
    int started;
    int big_endian;
    size_t item_size;
    int is_flightrec;           /* VERSION says flightrec */
    uint64_t items;             /* whole items seen */
    unsigned char partial[16];  /* an item not yet whole */
    size_t partial_len;
    uint64_t saved;             /* bytes in the file */
    uint64_t after_end;         /* bytes after STREAM_END, dropped */
    int ended;                  /* STREAM_END seen */
    flightrec_client *client;
    struct cli_printer *printer;
    uint64_t start_ns;
    uint64_t next_status_ns;
    uint64_t rate_at_ns;        /* the previous status line, 0: none */
    uint64_t rate_events;       /* events then */
    int status_on_screen;
};

static void status_clear(struct session *s)
{
    if (s->status_on_screen) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        s->status_on_screen = 0;
    }
}

static void show_status(struct session *s)
{
    struct flightrec_client_totals t;
    uint64_t now = monotonic_ns();

    if (!s->opt->show_status || !s->started || now < s->next_status_ns)
        return;
    s->next_status_ns = now + STATUS_PERIOD_NS;
    flightrec_client_totals(s->client, &t);
    double seconds = (double)(now - s->start_ns) / 1e9;
    uint64_t lost = t.overflow;
    lost = lost + t.discard < lost ? UINT64_MAX : lost + t.discard;
    lost = lost + t.missing < lost ? UINT64_MAX : lost + t.missing;
    /* The rate of the last period (the first display has none). */
    char rate[32] = "-";
    if (s->rate_at_ns != 0 && now > s->rate_at_ns)
        snprintf(rate, sizeof rate, "%.1f",
                 (double)(t.events - s->rate_events) * 1e9 /
                     (double)(now - s->rate_at_ns));
    s->rate_at_ns = now;
    s->rate_events = t.events;
    fprintf(stderr, "\r%s: %llu events, %s/s, lost %llu, %.1f s\033[K",
            s->opt->target.shown, (unsigned long long)t.events, rate,
            (unsigned long long)lost, seconds);
    fflush(stderr);
    s->status_on_screen = 1;
}

static int ignore_record(const struct flightrec_record *r, void *arg)
{
    (void)r;
    (void)arg;
    return 0;
}

static uint64_t load(const unsigned char *p, size_t n, int big_endian)
{
    uint64_t v = 0;

    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * (big_endian ? n - 1 - i : i));
    return v;
}

/* Looks at whole items: whether the stream is flightrec's (its VERSION) and
 * where a STREAM_END ends it.  Returns the bytes that belong to the stream
 * (all, or up to and with STREAM_END). */
static size_t scan_items(struct session *s, const unsigned char *b, size_t n)
{
    /* The id is the low 10 bits of the event word: two of its bytes. */
    size_t low = s->big_endian ? 3 : 0, next = s->big_endian ? 2 : 1;
    for (size_t at = 0; at < n; at += s->item_size) {
        uint32_t id = b[at + low] | (uint32_t)(b[at + next] & 3u) << 8;
        if (FLIGHTREC_UNLIKELY(s->items++ == 0)) {
            uint64_t data = load(b + at + 4, s->item_size - 4, s->big_endian);
            s->is_flightrec = id == FLIGHTREC_EV_VERSION &&
                              (data & ~(uint64_t)0xffff) ==
                                  FLIGHTREC_STREAM_VERSION_TAG;
        } else if (FLIGHTREC_UNLIKELY(id == FLIGHTREC_EV_STREAM_END) &&
                   s->is_flightrec) {
            s->ended = 1;
            return at + s->item_size;
        }
    }
    return n;
}

/* Writes whole items to the file and decodes them.  0, or -1 after a
 * message. */
static int save(struct session *s, const unsigned char *b, size_t n)
{
    size_t done = 0;

    while (done < n) {
        ssize_t w = write(s->file, b + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            status_clear(s);
            cli_msg(CLI_ERROR, "cannot write '%s': %s", s->path,
                    strerror(w < 0 ? errno : ENOSPC));
            return -1;
        }
        done += (size_t)w;
    }
    s->saved += n;
    int rc = flightrec_client_feed(s->client, b, n);
    if (rc == 0)
        return 0;
    status_clear(s);
    if (rc == FLIGHTREC_ECALLBACK) {
        cli_msg(CLI_ERROR, "write error: %s",
                strerror(cli_printer_flush(s->printer)));
    } else {
        char safe[600];
        cli_msg(CLI_ERROR, "%s: %s (saved in '%s')", s->opt->target.shown,
                cli_escape(safe, sizeof safe, flightrec_client_message(s->client)),
                s->path);
    }
    return -1;
}

/* Stream bytes after the start: whole items are saved, the rest waits. */
static int take(struct session *s, const unsigned char *b, size_t n)
{
    if (s->ended) {
        s->after_end += n;
        return 0;
    }
    if (s->partial_len > 0) {
        size_t k = s->item_size - s->partial_len;
        if (k > n)
            k = n;
        memcpy(s->partial + s->partial_len, b, k);
        s->partial_len += k;
        b += k;
        n -= k;
        if (s->partial_len < s->item_size)
            return 0;
        scan_items(s, s->partial, s->item_size);
        s->partial_len = 0;
        if (save(s, s->partial, s->item_size) != 0)
            return -1;
        if (s->ended) {
            s->after_end += n;
            return 0;
        }
    }
    size_t whole = n - n % s->item_size;
    size_t used = scan_items(s, b, whole);
    if (used > 0 && save(s, b, used) != 0)
        return -1;
    if (s->ended) {
        s->after_end += n - used;
        return 0;
    }
    memcpy(s->partial, b + whole, n - whole);
    s->partial_len = n - whole;
    return 0;
}

static int is_format_byte(unsigned char c)
{
    return c == 0x11 || c == 0x22 || c == 0x33 || c == 0x44;
}

enum head_kind { HEAD_MORE, HEAD_STREAM, HEAD_REFUSAL, HEAD_OTHER };

/* What the first bytes are: a stream start (format word and magic), a
 * refusal line, or something else. */
static enum head_kind classify(const unsigned char *b, size_t n, int eof)
{
    size_t prefix = sizeof refusal_prefix - 1;

    if (memcmp(b, refusal_prefix, n < prefix ? n : prefix) == 0) {
        if (n < prefix)
            return eof ? HEAD_OTHER : HEAD_MORE;
        if (eof || n == REFUSAL_MAX || memchr(b, '\n', n) != NULL)
            return HEAD_REFUSAL;
        return HEAD_MORE;
    }
    if (!is_format_byte(b[0]))
        return HEAD_OTHER;
    int big = b[0] == 0x33 || b[0] == 0x44;
    for (size_t i = 1; i < n && i < 8; i++) {
        unsigned char want = i < 4 ? b[0]
                             : (unsigned char)(FLIGHTREC_MAGIC >>
                                               (8 * (big ? 7 - i : i - 4)));
        if (b[i] != want)
            return HEAD_OTHER;
    }
    if (n >= 8)
        return HEAD_STREAM;
    return eof ? HEAD_OTHER : HEAD_MORE;
}

static int start_stream(struct session *s)
{
    s->file = open_output(s->path, s->opt->force);
    if (s->file < 0)
        return -1;
    s->started = 1;
    s->big_endian = s->head[0] == 0x33 || s->head[0] == 0x44;
    s->item_size = s->head[0] == 0x22 || s->head[0] == 0x44 ? 12 : 8;
    s->start_ns = monotonic_ns();
    s->next_status_ns = s->start_ns;
    if (s->opt->print) {
        s->printer = cli_printer_new(STDOUT_FILENO);
        if (s->printer == NULL)
            goto no_memory;
    }
    /* --print: the options of `flightrec print -`. */
    struct flightrec_client_options copt = {
        .on_record = s->printer != NULL ? cli_printer_on_record : ignore_record,
        .arg = s->printer,
        .merge = s->printer != NULL,
        .merge_window_ns = FLIGHTREC_MERGE_WINDOW_AUTO,
        .memory_limit = cli_memory_limit_default(),
    };
    if (flightrec_client_create(&s->client, &copt) != 0)
        goto no_memory;
    if (s->printer != NULL)
        cli_printer_attach(s->printer, s->client);
    if (save(s, s->head, 8) != 0)
        return -1;
    return take(s, s->head + 8, s->head_len - 8);
no_memory:
    cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
    return -1;
}

/* The first bytes: a stream start, a refusal, or an error.  Returns -1
 * to go on reading, else the outcome. */
static int take_head(struct session *s, const unsigned char *b, size_t n,
                     int eof)
{
    while (n > 0 || eof) {
        size_t k = sizeof s->head - s->head_len;
        if (k > n)
            k = n;
        memcpy(s->head + s->head_len, b, k);
        s->head_len += k;
        b += k;
        n -= k;
        if (s->head_len == 0) {
            cli_msg(CLI_ERROR, "%s closed the connection without sending "
                    "anything (a flightrec server does so when the token is "
                    "wrong or missing)", s->opt->target.shown);
            return OUTCOME_NO_STREAM;
        }
        switch (classify(s->head, s->head_len, eof && n == 0)) {
        case HEAD_MORE:
            if (n == 0)
                return -1;
            break;
        case HEAD_STREAM:
            /* start_stream() takes the head's bytes, then the rest of b. */
            if (start_stream(s) != 0 || (n > 0 && take(s, b, n) != 0))
                return OUTCOME_FAILED;
            return -1;
        case HEAD_REFUSAL: {
            char line[REFUSAL_MAX + 1], safe[4 * REFUSAL_MAX + 1];
            size_t len = s->head_len;
            unsigned char *nl = memchr(s->head, '\n', len);
            if (nl != NULL)
                len = (size_t)(nl - s->head);
            if (len > 0 && s->head[len - 1] == '\r')
                len--;
            memcpy(line, s->head, len);
            line[len] = '\0';
            cli_msg(CLI_ERROR, "%s refused the connection: %s",
                    s->opt->target.shown, cli_escape(safe, sizeof safe, line));
            return OUTCOME_REFUSED;
        }
        case HEAD_OTHER: {
            char safe[4 * 16 + 1];
            size_t len = s->head_len < 16 ? s->head_len : 16;
            if (eof && classify(s->head, s->head_len, 0) == HEAD_MORE) {
                cli_msg(CLI_ERROR, "%s closed the connection after %zu "
                        "bytes, before a stream started",
                        s->opt->target.shown, s->head_len);
                return OUTCOME_NO_STREAM;
            }
            *cli_fmt_escaped(safe, (const char *)s->head, len) = '\0';
            cli_msg(CLI_ERROR, "%s: not a record stream (it begins with "
                    "'%s')", s->opt->target.shown, safe);
            return OUTCOME_FAILED;
        }
        }
    }
    return -1;
}

/* Bytes from the socket, whatever the phase; -1 to go on, else the
 * outcome. */
static int take_bytes(struct session *s, const unsigned char *b, size_t n,
                      int eof)
{
    if (!s->started)
        return take_head(s, b, n, eof);
    if (n > 0 && take(s, b, n) != 0)
        return OUTCOME_FAILED;
    if (s->ended)
        return OUTCOME_END;
    return -1;
}

/* After a stop: what already arrived is part of what was received. */
static int drain(struct session *s, unsigned char *buf)
{
    size_t total = 0;

    while (total < DRAIN_MAX) {
        ssize_t n = read(s->sock, buf, READ_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        total += (size_t)n;
        int o = take_bytes(s, buf, (size_t)n, 0);
        if (o != -1)
            return o;
    }
    return OUTCOME_STOPPED;
}

static enum outcome receive(struct session *s)
{
    unsigned char *buf = malloc(READ_CHUNK);
    int o = -1;
    const char *lost_why = NULL;

    if (buf == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return OUTCOME_FAILED;
    }
    while (o == -1) {
        struct pollfd p = { .fd = s->sock, .events = POLLIN };
        /* Nothing to read now: show what is printed before sleeping, as
         * print - does when its input pauses. */
        if (s->printer != NULL && poll(&p, 1, 0) == 0 &&
            cli_printer_flush(s->printer) != 0) {
            status_clear(s);
            cli_msg(CLI_ERROR, "write error: %s",
                    strerror(cli_printer_flush(s->printer)));
            o = OUTCOME_FAILED;
            break;
        }
        uint64_t wake = s->opt->show_status && s->started
                            ? s->next_status_ns
                            : UINT64_MAX;
        int ready = wait_for(s->sock, POLLIN, wake);
        if (ready < 0) {
            o = drain(s, buf);
            break;
        }
        if (ready == 1) {
            ssize_t n = read(s->sock, buf, READ_CHUNK);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n < 0) {
                lost_why = strerror(errno);
                if (!s->started) {
                    cli_msg(CLI_ERROR, "%s: %s", s->opt->target.shown,
                            lost_why);
                    o = OUTCOME_NO_STREAM;
                    break;
                }
                n = 0;
            }
            o = take_bytes(s, buf, (size_t)n, n == 0);
            if (n == 0 && o == -1)
                o = OUTCOME_LOST;
        }
        show_status(s);
    }
    free(buf);
    if (o == OUTCOME_LOST && s->started) {
        char cut[96] = "";
        status_clear(s);
        if (s->partial_len > 0)
            snprintf(cut, sizeof cut, " (the %zu bytes of an incomplete "
                     "item are left out)", s->partial_len);
        char how[160] = "closed";
        if (lost_why != NULL)
            snprintf(how, sizeof how, "failed (%s)", lost_why);
        cli_msg(CLI_ERROR, "%s: the target died: the connection %s without "
                "an end of stream; '%s' holds the %llu bytes received up to "
                "the last whole item%s", s->opt->target.shown, how, s->path,
                (unsigned long long)s->saved, cut);
    } else if (o == OUTCOME_LOST) {
        o = OUTCOME_NO_STREAM; /* take_head said why */
    }
    return (enum outcome)o;
}

/* Ends the stream's decoding (held-back records are printed) and closes
 * the file; may turn the outcome into a failure. */
static enum outcome finish_session(struct session *s, enum outcome o)
{
    if (s->client != NULL) {
        int rc = flightrec_client_finish(s->client);
        if (rc != 0 && rc != FLIGHTREC_ECALLBACK && o != OUTCOME_FAILED) {
            char safe[600];
            status_clear(s);
            cli_msg(CLI_ERROR, "%s: %s", s->opt->target.shown,
                    cli_escape(safe, sizeof safe,
                               flightrec_client_message(s->client)));
            if (o != OUTCOME_LOST)
                o = OUTCOME_FAILED;
        }
    }
    if (s->printer != NULL && cli_printer_flush(s->printer) != 0 &&
        o != OUTCOME_FAILED) {
        status_clear(s);
        cli_msg(CLI_ERROR, "write error: %s",
                strerror(cli_printer_flush(s->printer)));
        o = OUTCOME_FAILED;
    }
    if (s->file >= 0 && close(s->file) != 0 && o != OUTCOME_FAILED) {
        status_clear(s);
        cli_msg(CLI_ERROR, "cannot write '%s': %s", s->path, strerror(errno));
        o = OUTCOME_FAILED;
    }
    s->file = -1;
    if (s->after_end > 0)
        cli_msg(CLI_WARN, "%s: %llu bytes after the end of stream ignored",
                s->opt->target.shown, (unsigned long long)s->after_end);
    if (s->started && (o == OUTCOME_END || o == OUTCOME_STOPPED)) {
        struct flightrec_client_totals t;
        flightrec_client_totals(s->client, &t);
        status_clear(s);
        /* A terminal sees where its recording went; a script asks -v. */
        cli_msg(s->opt->show_status ? CLI_WARN : CLI_INFO,
                "'%s': %llu events, %llu bytes from %s (%s)", s->path,
                (unsigned long long)t.events, (unsigned long long)s->saved,
                s->opt->target.shown,
                o == OUTCOME_END ? "end of stream" : "stopped");
    }
    status_clear(s);
    flightrec_client_destroy(s->client);
    s->client = NULL;
    cli_printer_free(s->printer);
    s->printer = NULL;
    return o;
}

/* One connection into segment @a path; *started says whether the file was
 * made. */
static enum outcome run_once(const struct connect_options *opt,
                             const char *path, int *started)
{
    struct session *s = calloc(1, sizeof(*s));
    enum outcome o;

    *started = 0;
    if (s == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return OUTCOME_FAILED;
    }
    s->opt = opt;
    s->path = path;
    s->file = -1;
    s->sock = dial(&opt->target);
    if (s->sock == -2) {
        free(s);
        return OUTCOME_STOPPED;
    }
    if (s->sock < 0) {
        free(s);
        return OUTCOME_NO_STREAM;
    }
    if (opt->hello_len > 0)
        send_all(s->sock, opt->hello, opt->hello_len);
    o = receive(s);
    close(s->sock);
    o = finish_session(s, o);
    *started = s->started;
    free(s);
    return o;
}

/*=====   flightrec connect   =====*/

enum { OPT_PRINT = 256, OPT_DURATION, OPT_RECONNECT, OPT_TOKEN, OPT_PID };

static const struct option long_options[] = {
    { "output", required_argument, NULL, 'o' },
    { "force", no_argument, NULL, 'f' },
    { "print", no_argument, NULL, OPT_PRINT },
    { "duration", required_argument, NULL, OPT_DURATION },
    { "reconnect", no_argument, NULL, OPT_RECONNECT },
    { "token", required_argument, NULL, OPT_TOKEN },
    { "pid", required_argument, NULL, OPT_PID },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static int install_stop_handlers(void)
{
    struct sigaction sa;

    if (stop_pipe[0] < 0 && pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        cli_msg(CLI_ERROR, "pipe: %s", strerror(errno));
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    /* A second Ctrl-C ends the command at once (also while it resolves a
     * name, which cannot be interrupted). */
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

int cmd_connect(int argc, char **argv)
{
    struct connect_options *opt = calloc(1, sizeof(*opt));
    const char *token_file = NULL, *pid_text = NULL;
    uint64_t duration_ns = 0;
    int have_duration = 0;
    int ret = CLI_FAIL;
    int c;

    cli_set_command("connect");
    if (opt == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return CLI_FAIL;
    }
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:fh", long_options, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            ret = CLI_OK;
            goto out;
        case 'o':
            opt->output = optarg;
            break;
        case 'f':
            opt->force = 1;
            break;
        case OPT_PRINT:
            opt->print = 1;
            break;
        case OPT_DURATION:
            if (cli_parse_seconds(optarg, &duration_ns) != 0 ||
                duration_ns == 0) {
                ret = cli_usage_error(usage, "bad duration '%s' (seconds, "
                                      "more than 0, e.g. 1.5)", optarg);
                goto out;
            }
            have_duration = 1;
            break;
        case OPT_RECONNECT:
            opt->reconnect = 1;
            break;
        case OPT_TOKEN:
            token_file = optarg;
            break;
        case OPT_PID:
            pid_text = optarg;
            break;
        default:
            ret = cli_bad_option(c, argv, usage);
            goto out;
        }
    }
    if (argc - optind != 1) {
        ret = cli_usage_error(usage, argc - optind == 0 ? "no HOST"
                                                        : "too many arguments");
        goto out;
    }
    if (parse_target(argv[optind], &opt->target) != 0) {
        ret = cli_usage_error(usage, "bad address '%s' (HOST[:PORT], "
                              "[IPV6][:PORT], a port from 1 to 65535)",
                              opt->target.shown);
        goto out;
    }
    if (opt->output != NULL && strcmp(opt->output, "-") == 0) {
        ret = cli_usage_error(usage, "-o -: connect writes a file (--print "
                              "shows the records)");
        goto out;
    }
    uint64_t pid = 0;
    if (pid_text != NULL &&
        (cli_parse_u64(pid_text, &pid) != 0 || pid == 0 || pid > INT32_MAX)) {
        ret = cli_usage_error(usage, "bad process id '%s'", pid_text);
        goto out;
    }
    if (token_file != NULL) {
        char token[TOKEN_MAX + 1];
        if (read_token(token_file, token) != 0)
            goto out;
        opt->hello_len += (size_t)snprintf(opt->hello, sizeof opt->hello,
                                           "token %s\n", token);
    }
    if (pid_text != NULL)
        opt->hello_len += (size_t)snprintf(opt->hello + opt->hello_len,
                                           sizeof opt->hello - opt->hello_len,
                                           "pid %llu\n",
                                           (unsigned long long)pid);
    if (opt->hello_len > 0)
        opt->hello[opt->hello_len++] = '\n';
    if (opt->output == NULL) {
        default_output(&opt->target, opt->default_name,
                       sizeof opt->default_name);
        opt->output = opt->default_name;
    }
    /* The status line shares no terminal with printed records. */
    opt->show_status = cli_verbosity >= 1 && isatty(STDERR_FILENO) &&
                       !(opt->print && isatty(STDOUT_FILENO));
    if (install_stop_handlers() != 0)
        goto out;
    if (have_duration)
        deadline_ns = monotonic_ns() + duration_ns;

    unsigned segment = 1, failures = 0;
    int any_lost = 0;
    char path[PATH_MAX + 16];
    enum outcome o;
    for (;;) {
        int started = 0;
        segment_path(opt, segment, path, sizeof path);
        if (check_output(path, opt->force) != 0) {
            o = OUTCOME_FAILED;
            break;
        }
        o = run_once(opt, path, &started);
        if (started)
            segment++;
        if (o != OUTCOME_LOST && o != OUTCOME_NO_STREAM)
            break;
        any_lost |= o == OUTCOME_LOST;
        if (!opt->reconnect)
            break;
        failures = started ? 1 : failures + 1;
        if (failures > RECONNECT_ATTEMPTS) {
            cli_msg(CLI_ERROR, "gave up on %s after %u attempts",
                    opt->target.shown, RECONNECT_ATTEMPTS);
            break;
        }
        uint64_t delay = BACKOFF_FIRST_NS << (failures - 1 < 5 ? failures - 1
                                                               : 5);
        if (delay > BACKOFF_MAX_NS)
            delay = BACKOFF_MAX_NS;
        cli_msg(CLI_WARN, "reconnecting to %s in %.2f s (attempt %u of %u)",
                opt->target.shown, (double)delay / 1e9, failures,
                RECONNECT_ATTEMPTS);
        if (wait_for(-1, 0, monotonic_ns() + delay) < 0) {
            o = OUTCOME_STOPPED;
            break;
        }
    }
    switch (o) {
    case OUTCOME_END:
        ret = CLI_OK;
        break;
    case OUTCOME_STOPPED:
        ret = CLI_OK;
        if (segment == 1) {
            cli_msg(CLI_ERROR, "stopped before %s sent a stream: nothing "
                    "was saved", opt->target.shown);
            ret = CLI_FAIL;
        }
        break;
    case OUTCOME_LOST:
        ret = CONNECT_TARGET_DIED;
        break;
    case OUTCOME_NO_STREAM:
        ret = any_lost ? CONNECT_TARGET_DIED : CLI_FAIL;
        break;
    default:
        ret = CLI_FAIL;
        break;
    }
out:
    free(opt);
    return ret;
}
