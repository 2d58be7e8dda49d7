/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Helpers shared by the flightrec subcommands (see cli.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "name-match.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_verbosity = 1;

static const char *command = "";

/*=====   Messages   =====*/

void cli_set_command(const char *name)
{
    command = name ? name : "";
}

static void vmsg(const char *fmt, va_list ap) CLI_PRINTF(1, 0);

static void vmsg(const char *fmt, va_list ap)
{
    char line[1024];

    vsnprintf(line, sizeof line, fmt, ap);
    if (command[0] != '\0')
        fprintf(stderr, "flightrec %s: %s\n", command, line);
    else
        fprintf(stderr, "flightrec: %s\n", line);
}

void cli_msg(int level, const char *fmt, ...)
{
    va_list ap;

    if (level > cli_verbosity)
        return;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
    fputs(usage, stderr);
    return CLI_USAGE;
}

int cli_bad_option(int c, char **argv, const char *usage)
{
    const char *arg = argv[optind - 1];

    if (c == ':')
        return cli_usage_error(usage, "option '%s' needs a value", arg);
    if (optopt != 0 && strncmp(arg, "--", 2) != 0)
        return cli_usage_error(usage, "unknown option '-%c'", optopt);
    return cli_usage_error(usage, "unknown option '%s'", arg);
}

/*=====   Input   =====*/

int (*cli_session_dump)(const char *pid, int fd);

static int cli_input_stat(struct cli_input *in, const char *path);

/* Whether @path is a process id (digits only). */
static int is_pid(const char *path)
{
    if (path[0] == '\0')
        return 0;
    for (const char *p = path; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* A session's rings as a stream in an anonymous file: print PID. */
static int open_session_dump(struct cli_input *in, const char *pid)
{
    FILE *buffer = tmpfile(); /* 0600, and no name left behind */
    int fd = buffer != NULL ? dup(fileno(buffer)) : -1;
    if (buffer != NULL)
        fclose(buffer);
    if (fd < 0) {
        cli_msg(CLI_ERROR, "cannot make a buffer for process %s: %s", pid,
                strerror(errno));
        return -1;
    }
    if (cli_session_dump(pid, fd) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return -1;
    }
    in->fd = fd;
    return 0;
}

int cli_input_open(struct cli_input *in, const char *path)
{

    if (path == NULL)
        path = "-";
    in->path = path;
    in->on_idle = NULL;
    in->idle_arg = NULL;
    if (strcmp(path, "-") == 0) {
        in->fd = STDIN_FILENO;
        in->name = "<stdin>";
    } else {
        in->name = path;
        do
            in->fd = open(path, O_RDONLY);
        while (in->fd < 0 && errno == EINTR);
        /* A process id that is no file names a session. */
        if (in->fd < 0 && errno == ENOENT && cli_session_dump != NULL &&
            is_pid(path))
            return open_session_dump(in, path) != 0 ? -1
                                                    : cli_input_stat(in, path);
        if (in->fd < 0) {
            cli_msg(CLI_ERROR, "cannot open '%s': %s", path,
                    strerror(errno));
            return -1;
        }
    }
    return cli_input_stat(in, path);
}

static int cli_input_stat(struct cli_input *in, const char *path)
{
    struct stat st;
    in->is_regular = fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode);
    if (in->fd != STDIN_FILENO && S_ISDIR(st.st_mode)) {
        cli_msg(CLI_ERROR, "cannot read '%s': %s", path, strerror(EISDIR));
        close(in->fd);
        in->fd = -1;
        return -1;
    }
    return 0;
}

void cli_input_close(struct cli_input *in)
{
    if (in->fd > STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
}

uint64_t cli_merge_window(const struct cli_input *in, uint64_t window_ns)
{
    return in->is_regular ? 0 : window_ns;
}

/* Reports a stream error (not a callback stop: its owner says why). */
static int decode_result(struct cli_input *in, flightrec_client *client,
                         int rc)
{
    if (rc != 0 && rc != FLIGHTREC_ECALLBACK) {
        const char *m = flightrec_client_message(client);
        char safe[512];
        if (m == NULL || m[0] == '\0')
            m = flightrec_strerror(rc);
        /* The message may quote names from the stream. */
        cli_msg(CLI_ERROR, "%s: %s", in->name, cli_escape(safe, sizeof safe, m));
    }
    return rc;
}

/* A console log (a firmware's UART output) feeds the client the stream
 * bytes of its marked blocks. */
static int console_to_client(void *arg, const void *bytes, size_t n)
{
    return flightrec_client_feed(arg, bytes, n);
}

/* Whether the regular file @a fd holds a console log, judged by the same
 * first bytes a first read would give (the offset does not move). */
static int console_log_file(int fd, unsigned char *buf, size_t size)
{
    off_t at = lseek(fd, 0, SEEK_CUR);
    ssize_t n;

    if (at < 0)
        return 0;
    do
        n = pread(fd, buf, size, at);
    while (n < 0 && errno == EINTR);
    return n > 0 && flightrec_console_probe(buf, (size_t)n);
}

int cli_decode(struct cli_input *in, flightrec_client *client)
{
    enum { CHUNK = 1u << 20 };
    unsigned char *buf = malloc(CHUNK);
    int rc = 0;
    int read_errno = 0;
    int first = 1;
    struct flightrec_console console;
    int is_console = 0;

    if (buf == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return FLIGHTREC_ENOMEM;
    }
    /* A regular file holding a stream is read twice, in exact order with
     * memory bounded by its rings.  Anything else (a pipe, a console log)
     * is read once, through the merge window, here rather than by
     * flightrec_client_read_fd() so that a live print shows what it has
     * whenever the input pauses (on_idle). */
    if (in->is_regular && !console_log_file(in->fd, buf, CHUNK)) {
        free(buf);
        rc = flightrec_client_read_fd(client, in->fd);
        return decode_result(in, client, rc);
    }
    for (;;) {
        if (in->on_idle != NULL) {
            /* Nothing to read yet: let the caller show what it has before
             * the read waits. */
            struct pollfd pfd = { .fd = in->fd, .events = POLLIN };
            if (poll(&pfd, 1, 0) == 0)
                in->on_idle(in->idle_arg);
        }
        ssize_t n = read(in->fd, buf, CHUNK);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            read_errno = errno;
            break;
        }
        if (n == 0)
            break;
        if (first) {
            first = 0;
            is_console = flightrec_console_probe(buf, (size_t)n);
            if (is_console)
                flightrec_console_init(&console, console_to_client, client);
        }
        rc = is_console ? flightrec_console_feed(&console, buf, (size_t)n)
                        : flightrec_client_feed(client, buf, (size_t)n);
        if (rc != 0)
            break;
    }
    free(buf);
    /* The log's own error (not base64, a block cut off) is the one to
     * name; one from the client comes through its message below. */
    int console_rc = 0;
    if (is_console && read_errno == 0 && rc == 0)
        console_rc = flightrec_console_finish(&console);
    int console_failed = is_console && console.message[0] != '\0';
    /* Finish also after an error: it delivers what was decoded before. */
    int frc = flightrec_client_finish(client);
    if (rc == 0)
        rc = console_rc != 0 ? console_rc : frc;
    if (console_failed && read_errno == 0) {
        cli_msg(CLI_ERROR, "%s: %s", in->name,
                flightrec_console_message(&console));
        return rc;
    }
    if (read_errno != 0) {
        cli_msg(CLI_ERROR, "%s: read error: %s", in->name,
                strerror(read_errno));
        return -read_errno;
    }
    return decode_result(in, client, rc);
}

/*=====   Option values   =====*/

int cli_parse_u64(const char *text, uint64_t *out)
{
    uint64_t v = 0;

    if (text == NULL || *text == '\0')
        return -1;
    for (const char *p = text; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

uint64_t cli_memory_limit_default(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);

    if (pages <= 0 || page <= 0)
        return 0;
    return (uint64_t)pages * (uint64_t)page / 2;
}

int cli_parse_size(const char *text, uint64_t *bytes)
{
    char digits[32];
    size_t n = text != NULL ? strlen(text) : 0;
    unsigned shift = 0;
    uint64_t v;

    if (n == 0 || n >= sizeof digits)
        return -1;
    memcpy(digits, text, n + 1);
    switch (digits[n - 1]) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: break;
    }
    if (shift != 0)
        digits[--n] = '\0';
    if (cli_parse_u64(digits, &v) != 0 || v > (UINT64_MAX >> shift))
        return -1;
    *bytes = v << shift;
    return 0;
}

void cli_decode_options_init(struct cli_decode_options *o)
{
    o->window_ns = FLIGHTREC_MERGE_WINDOW_AUTO;
    o->memory_limit = cli_memory_limit_default();
}

int cli_decode_option(struct cli_decode_options *o, int c, const char *arg,
                      const char *usage, int *status)
{
    if (c == CLI_OPT_WINDOW) {
        if (cli_parse_seconds(arg, &o->window_ns) == 0)
            return 1;
        *status = cli_usage_error(usage, "bad time '%s' (seconds, e.g. 1.5)",
                                  arg);
        return -1;
    }
    if (c == CLI_OPT_MEMORY_LIMIT) {
        if (cli_parse_size(arg, &o->memory_limit) == 0)
            return 1;
        *status = cli_usage_error(usage, "bad size '%s' (bytes, or with K, "
                                  "M, G: 512M)", arg);
        return -1;
    }
    return 0;
}

int cli_parse_seconds(const char *text, uint64_t *ns)
{
    uint64_t sec = 0, frac = 0;
    const char *p = text;
    int digits = 0, frac_digits = 0;

    if (text == NULL)
        return -1;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (sec > (UINT64_MAX / 1000000000u - 9) / 10)
            return -1;
        sec = sec * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, frac_digits++) {
            if (frac_digits == 9)
                return -1;
            frac = frac * 10 + (uint64_t)(*p - '0');
        }
    }
    if (*p != '\0' || digits + frac_digits == 0)
        return -1;
    for (int i = frac_digits; i < 9; i++)
        frac *= 10;
    *ns = sec * 1000000000u + frac;
    return 0;
}

/* Appends a term (n bytes of s) to a pattern list. */
static int push_pattern(struct cli_pattern **terms, size_t *count,
                        const char *s, size_t n)
{
    struct cli_pattern *grown = realloc(*terms, (*count + 1) * sizeof(**terms));
    char *copy = malloc(n + 1);
    uint64_t number;

    if (grown != NULL)
        *terms = grown;
    if (grown == NULL || copy == NULL) {
        free(copy);
        return -1;
    }
    memcpy(copy, s, n);
    copy[n] = '\0';
    grown[*count].text = copy;
    grown[*count].number =
        cli_parse_u64(copy, &number) == 0 && number <= INT64_MAX
            ? (int64_t)number : -1;
    grown[*count].matched = 0;
    (*count)++;
    return 0;
}

static void free_patterns(struct cli_pattern *terms, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(terms[i].text);
    free(terms);
}

/* "flightrec CMD: --OPTION 'TERM' matched no WHAT[; did you mean 'X'?]" */
static void report_unmatched(const char *option, const char *what,
                             const struct cli_pattern *term,
                             const struct flightrec__name_suggest *sg)
{
    char text[256], near[160], shown[256];
    const char *n = sg ? flightrec__name_suggestion(sg, near, sizeof near)
                       : NULL;

    cli_escape(text, sizeof text, term->text);
    if (n != NULL)
        cli_msg(CLI_WARN, "--%s '%s' matched no %s; did you mean '%s'?",
                option, text, what, cli_escape(shown, sizeof shown, n));
    else
        cli_msg(CLI_WARN, "--%s '%s' matched no %s", option, text, what);
}

void cli_event_filter_init(struct cli_event_filter *f)
{
    memset(f, 0, sizeof(*f));
}

int cli_event_filter_add(struct cli_event_filter *f, const char *arg)
{
    const char *p = arg;

    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);

        if (n == 0 || push_pattern(&f->terms, &f->count, p, n) != 0)
            return -1;
        const struct cli_pattern *t = &f->terms[f->count - 1];
        if (t->number >= FLIGHTREC_EVENT_COUNT ||
            (t->number < 0 && t->text[0] >= '0' && t->text[0] <= '9' &&
             strspn(t->text, "0123456789") == n))
            return -1;
        f->active = 1;
        if (end == NULL)
            break;
        p = end + 1;
    }
    /* Decisions depend on the terms: forget the cached ones. */
    memset(f->seen, 0, sizeof f->seen);
    return 0;
}

int cli_event_filter_match(struct cli_event_filter *f,
                           const flightrec_client *client, uint32_t id)
{
    uint64_t names_changes = flightrec_client_event_names_changes(client);

    id &= FLIGHTREC_EVENT_MASK;
    if (f->seen[id].names_changes == names_changes + 1)
        return f->seen[id].decision;
    const char *name = flightrec_client_event_name(client, id);
    /* Every term is tried (not only up to the first match) so that each
     * knows whether it matched something. */
    unsigned char match = 0;
    for (size_t i = 0; i < f->count; i++) {
        struct cli_pattern *t = &f->terms[i];
        if (t->number >= 0 ? (uint32_t)t->number == id
                           : flightrec__name_match(t->text, name)) {
            t->matched = 1;
            match = 1;
        }
    }
    f->seen[id].names_changes = names_changes + 1;
    f->seen[id].decision = match;
    return match;
}

void cli_event_filter_report(const struct cli_event_filter *f,
                             const flightrec_client *client)
{
    for (size_t i = 0; i < f->count; i++) {
        const struct cli_pattern *t = &f->terms[i];
        if (t->matched)
            continue;
        struct flightrec__name_suggest sg;
        flightrec__name_suggest_init(&sg, t->text);
        /* Candidates: the events the stream holds. */
        for (uint32_t id = 0; t->number < 0 && id < FLIGHTREC_EVENT_COUNT;
             id++)
            if (f->seen[id].names_changes != 0)
                flightrec__name_suggest_offer(
                    &sg, flightrec_client_event_name(client, id));
        report_unmatched("event", "event", t, t->number < 0 ? &sg : NULL);
    }
}

void cli_event_filter_free(struct cli_event_filter *f)
{
    free_patterns(f->terms, f->count);
    cli_event_filter_init(f);
}

void cli_thread_filter_init(struct cli_thread_filter *f)
{
    memset(f, 0, sizeof(*f));
}

int cli_thread_filter_add(struct cli_thread_filter *f, const char *arg)
{
    if (arg == NULL || arg[0] == '\0' ||
        push_pattern(&f->terms, &f->count, arg, strlen(arg)) != 0)
        return -1;
    f->active = 1;
    memset(f->slots, 0, sizeof f->slots);
    return 0;
}

static void remember_thread_name(struct cli_thread_filter *f, const char *name)
{
    if (name[0] == '\0' || f->seen_count == CLI_THREAD_SEEN_MAX)
        return;
    for (size_t i = 0; i < f->seen_count; i++)
        if (strncmp(f->seen[i], name, sizeof f->seen[i]) == 0)
            return;
    if (f->seen == NULL) {
        f->seen = malloc(CLI_THREAD_SEEN_MAX * sizeof(*f->seen));
        if (f->seen == NULL)
            return;  /* only suggestions are lost */
    }
    memcpy(f->seen[f->seen_count], name, sizeof f->seen[0]);
    f->seen[f->seen_count][sizeof f->seen[0] - 1] = '\0';
    f->seen_count++;
}

int cli_thread_filter_match(struct cli_thread_filter *f,
                            const struct flightrec_ring_info *ring)
{
    if (ring == NULL)
        return 0;
    struct cli_filter_slot *slot =
        &f->slots[(ring->id * 2 + ring->context) % CLI_THREAD_SLOTS];
    if (slot->key == ring && slot->tid == ring->thread_id &&
        strncmp(slot->name, ring->thread_name, sizeof slot->name) == 0)
        return slot->decision;

    char name[64];
    memcpy(name, ring->thread_name, sizeof name);
    name[sizeof name - 1] = '\0';
    remember_thread_name(f, name);
    unsigned char match = 0;
    for (size_t i = 0; i < f->count; i++) {
        struct cli_pattern *t = &f->terms[i];
        if ((t->number >= 0 && t->number == ring->thread_id) ||
            (name[0] != '\0' && flightrec__name_match(t->text, name))) {
            t->matched = 1;
            match = 1;
        }
    }
    slot->key = ring;
    slot->tid = ring->thread_id;
    memcpy(slot->name, name, sizeof slot->name);
    slot->decision = match;
    return match;
}

void cli_thread_filter_report(const struct cli_thread_filter *f)
{
    for (size_t i = 0; i < f->count; i++) {
        const struct cli_pattern *t = &f->terms[i];
        if (t->matched)
            continue;
        struct flightrec__name_suggest sg;
        flightrec__name_suggest_init(&sg, t->text);
        for (size_t k = 0; k < f->seen_count; k++)
            flightrec__name_suggest_offer(&sg, f->seen[k]);
        report_unmatched("thread", "thread", t, &sg);
    }
}

void cli_thread_filter_free(struct cli_thread_filter *f)
{
    free_patterns(f->terms, f->count);
    free(f->seen);
    cli_thread_filter_init(f);
}

/*=====   Text   =====*/

char *cli_fmt_csv(char *p, const char *s, size_t len)
{
    int quote = 0;

    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == ',' || c == '"' || c == '\n' || c == '\r') {
            quote = 1;
            break;
        }
    }
    if (!quote) {
        memcpy(p, s, len);
        return p + len;
    }
    *p++ = '"';
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"')
            *p++ = '"';
        *p++ = s[i];
    }
    *p++ = '"';
    return p;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if there is
 * none; *cp gets its code point. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, v = c & 0x1fu, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, v = c & 0x0fu, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, v = c & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0u) != 0x80u)
            return 0;
        v = v << 6 | (s[i] & 0x3fu);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

static char *fmt_xhh(char *p, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";

    *p++ = '\\';
    *p++ = 'x';
    *p++ = hex[c >> 4];
    *p++ = hex[c & 15];
    return p;
}

char *cli_fmt_escaped(char *p, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;

    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            *p++ = (char)c;
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = utf8_seq(u + i, len - i, &cp);
        if (n > 1 && cp >= 0xa0) {
            memcpy(p, u + i, n);
            p += n;
            i += n;
            continue;
        }
        /* A control character (C0, DEL, or C1 in either encoding), a
         * backslash, or a byte that is not UTF-8. */
        const char *short_form = NULL;
        switch (c) {
        case '\\':
            short_form = "\\\\";
            break;
        case '\n':
            short_form = "\\n";
            break;
        case '\t':
            short_form = "\\t";
            break;
        case '\r':
            short_form = "\\r";
            break;
        case 0x1b:
            short_form = "\\e";
            break;
        default:
            break;
        }
        if (short_form != NULL) {
            memcpy(p, short_form, 2);
            p += 2;
            i++;
        } else if (n == 0) {
            p = fmt_xhh(p, c);
            i++;
        } else {
            for (size_t k = 0; k < n; k++)
                p = fmt_xhh(p, u[i + k]);
            i += n;
        }
    }
    return p;
}

const char *cli_escape(char *buf, size_t size, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s), used = 0;

    if (size == 0)
        return buf;
    /* One character at a time: the text is cut before a character (or
     * escape) that does not fit, never inside one. */
    for (size_t i = 0; i < len;) {
        char piece[16];
        uint32_t cp;
        size_t n = utf8_seq(u + i, len - i, &cp);
        if (n == 0)
            n = 1;
        size_t k = (size_t)(cli_fmt_escaped(piece, s + i, n) - piece);
        if (used + k + 1 > size)
            break;
        memcpy(buf + used, piece, k);
        used += k;
        i += n;
    }
    buf[used] = '\0';
    return buf;
}

char *cli_fmt_json(char *p, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;

    *p++ = '"';
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            *p++ = (char)c;
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = utf8_seq(u + i, len - i, &cp);
        if (n > 1 && cp >= 0xa0) {
            memcpy(p, u + i, n);
            p += n;
            i += n;
            continue;
        }
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = (char)c;
        } else if (c == '\n') {
            memcpy(p, "\\n", 2);
            p += 2;
        } else if (n == 0) {
            memcpy(p, "\\ufffd", 6);
            p += 6;
        } else {
            /* C0, DEL or C1: \u00XX */
            memcpy(p, "\\u00", 4);
            p[4] = hex[cp >> 4];
            p[5] = hex[cp & 15];
            p += 6;
        }
        i += n ? n : 1;
    }
    *p++ = '"';
    return p;
}

const char *cli_loss_kind_name(uint32_t kind)
{
    switch (kind) {
    case FLIGHTREC_LOSS_OVERFLOW:
        return "overflow";
    case FLIGHTREC_LOSS_DISCARD:
        return "discard";
    case FLIGHTREC_LOSS_MISSING:
        return "missing";
    default:
        return "unknown";
    }
}

const char *cli_stream_kind_name(uint32_t kind)
{
    switch (kind) {
    case FLIGHTREC_STREAM_FLIGHTREC:
        return "flightrec";
    case FLIGHTREC_STREAM_RTEMS_V10:
        return "rtems-v10";
    case FLIGHTREC_STREAM_RTEMS_V1:
        return "rtems-v1";
    case FLIGHTREC_STREAM_RTEMS_V1_SEED:
        return "rtems-v1-seed";
    case FLIGHTREC_STREAM_RTEMS:
        return "rtems";
    default:
        return "unknown";
    }
}

const char *cli_format_name(uint32_t format)
{
    switch (format) {
    case FLIGHTREC_FORMAT_LE_32:
        return "le32";
    case FLIGHTREC_FORMAT_LE_64:
        return "le64";
    case FLIGHTREC_FORMAT_BE_32:
        return "be32";
    case FLIGHTREC_FORMAT_BE_64:
        return "be64";
    default:
        return "unknown";
    }
}

const char *cli_count_text(char *buf, size_t size, uint64_t v)
{
    snprintf(buf, size, "%llu%s", (unsigned long long)v,
             v == UINT64_MAX ? " (saturated)" : "");
    return buf;
}
