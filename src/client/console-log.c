/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Console logs: the stream blocks a firmware writes on its UART, base64
 * lines between marker lines, among whatever else it prints
 * (docs/format.md, section 9).  A streaming decoder: it keeps one base64
 * group and the start of the current line, so logs of any size and lines of
 * any length decode in constant memory.
 *
 * The decoder is ours rather than a library's: the client library depends
 * on libc only, and the base64 decoders Debian ships come with far larger
 * libraries (GLib, OpenSSL, GnuTLS); this one is a table-free switch.
 */
#include <flightrec/client.h>

#include <stdio.h>
#include <string.h>

#define BEGIN_LEN (sizeof(FLIGHTREC_CONSOLE_BEGIN) - 1)
#define END_LEN (sizeof(FLIGHTREC_CONSOLE_END) - 1)

_Static_assert(BEGIN_LEN < sizeof(((struct flightrec_console *)0)->head) &&
                   END_LEN < sizeof(((struct flightrec_console *)0)->head),
               "a line's head holds a marker");

/* Bytes of an input that detection looks at. */
#define DETECT_BYTES 65536u

static int is_line_start(const unsigned char *p, const unsigned char *start)
{
    return p == start || p[-1] == '\n';
}

int flightrec_console_detect(const void *bytes, size_t n)
{
    const unsigned char *start = bytes;
    if (n > DETECT_BYTES)
        n = DETECT_BYTES;
    for (size_t i = 0; i + BEGIN_LEN <= n; i++)
        if (start[i] == '-' && is_line_start(start + i, start) &&
            memcmp(start + i, FLIGHTREC_CONSOLE_BEGIN, BEGIN_LEN) == 0)
            return 1;
    return 0;
}

/* Bytes of an input that tell text from a stream. */
#define TEXT_PROBE_BYTES 4096u

int flightrec_console_probe(const void *bytes, size_t n)
{
    if (flightrec_console_detect(bytes, n))
        return 1;
    /* Lines of text: a line end and no NUL byte (a stream's header has
     * many; a short binary fragment has no line end either). */
    size_t probed = n < TEXT_PROBE_BYTES ? n : TEXT_PROBE_BYTES;
    return probed > 0 && memchr(bytes, 0, probed) == NULL &&
           memchr(bytes, '\n', probed) != NULL;
}

void flightrec_console_init(struct flightrec_console *log,
                            flightrec_console_out_fn out, void *arg)
{
    memset(log, 0, sizeof(*log));
    log->out = out;
    log->arg = arg;
    log->line = 1;
}

static int fail(struct flightrec_console *log, int code, const char *what,
                unsigned char c)
{
    if (c >= 0x20 && c < 0x7f)
        snprintf(log->message, sizeof(log->message), "line %llu: %s '%c'",
                 (unsigned long long)log->line, what, c);
    else
        snprintf(log->message, sizeof(log->message), "line %llu: %s 0x%02x",
                 (unsigned long long)log->line, what, c);
    log->error = code;
    return code;
}

/* 0..63 for a base64 digit, -1 otherwise. */
static int digit_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

static int emit(struct flightrec_console *log, const unsigned char *bytes,
                size_t n)
{
    int rc = log->out(log->arg, bytes, n);
    if (rc != 0)
        log->error = rc;
    return rc;
}

/* Ends a group of @digits digits (2..4) with the bits in log->quad. */
static int group_end(struct flightrec_console *log, unsigned digits)
{
    uint32_t bits = log->quad << (6 * (4 - digits));
    unsigned char out[3] = { (unsigned char)(bits >> 16),
                             (unsigned char)(bits >> 8), (unsigned char)bits };
    log->quad = 0;
    log->quad_len = 0;
    return emit(log, out, digits - 1);
}

static int block_char(struct flightrec_console *log, unsigned char c)
{
    if (c == '=') {
        if (log->quad_len < 2 && !log->padded)
            return fail(log, FLIGHTREC_ESTREAM, "misplaced base64 padding",
                        c);
        if (!log->padded) {
            log->padded = 1;
            return group_end(log, log->quad_len);
        }
        return 0;
    }
    int value = digit_value(c);
    if (value < 0)
        return fail(log, FLIGHTREC_ESTREAM, "not base64 in a stream block:",
                    c);
    if (log->padded)
        return fail(log, FLIGHTREC_ESTREAM, "base64 after the padding:", c);
    log->quad = log->quad << 6 | (uint32_t)value;
    if (++log->quad_len == 4)
        return group_end(log, 4);
    return 0;
}

static int block_close(struct flightrec_console *log)
{
    if (log->quad_len == 1) {
        snprintf(log->message, sizeof(log->message),
                 "line %llu: the block's base64 ends with a lone digit",
                 (unsigned long long)log->line);
        log->error = FLIGHTREC_ESTREAM;
        return log->error;
    }
    /* Unpadded base64 ends with a partial group. */
    if (log->quad_len != 0 && group_end(log, log->quad_len) != 0)
        return log->error;
    log->in_block = 0;
    log->padded = 0;
    log->blocks++;
    return 0;
}

/* A line ended (or its head filled up): @complete when its end was seen. */
static int line_head(struct flightrec_console *log, int complete)
{
    size_t n = log->head_len;
    while (complete && n > 0 &&
           (log->head[n - 1] == '\r' || log->head[n - 1] == ' '))
        n--;
    if (!log->in_block) {
        if (complete && n == BEGIN_LEN &&
            memcmp(log->head, FLIGHTREC_CONSOLE_BEGIN, BEGIN_LEN) == 0) {
            log->in_block = 1;
            log->block_line = log->line;
        }
        return 0;
    }
    if (complete && n == END_LEN &&
        memcmp(log->head, FLIGHTREC_CONSOLE_END, END_LEN) == 0)
        return block_close(log);
    /* A data line: its head is base64 too (a '\r' may end it). */
    for (size_t i = 0; i < n; i++) {
        if (log->head[i] == '\r' && i + 1 == n)
            break;
        if (block_char(log, (unsigned char)log->head[i]) != 0)
            return log->error;
    }
    return 0;
}

int flightrec_console_feed(struct flightrec_console *log, const void *bytes,
                           size_t n)
{
    const unsigned char *p = bytes;
    if (log->error != 0)
        return log->error;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c == '\n') {
            if (log->head_len != (size_t)-1 && line_head(log, 1) != 0)
                return log->error;
            log->head_len = 0;
            log->line++;
            continue;
        }
        if (log->head_len == (size_t)-1) {
            /* Past the head of a long line: only block data goes on. */
            if (log->in_block && c != '\r' && block_char(log, c) != 0)
                return log->error;
            continue;
        }
        log->head[log->head_len++] = (char)c;
        if (log->head_len == sizeof(log->head)) {
            if (line_head(log, 0) != 0)
                return log->error;
            log->head_len = (size_t)-1;
        }
    }
    return 0;
}

int flightrec_console_finish(struct flightrec_console *log)
{
    if (log->error != 0)
        return log->error;
    if (log->head_len != 0 && log->head_len != (size_t)-1 &&
        line_head(log, 1) != 0)
        return log->error;
    log->head_len = 0;
    if (log->in_block) {
        snprintf(log->message, sizeof(log->message),
                 "line %llu: the log ends inside the stream block begun "
                 "at line %llu",
                 (unsigned long long)log->line,
                 (unsigned long long)log->block_line);
        log->error = FLIGHTREC_ETRUNC;
        return log->error;
    }
    if (log->blocks == 0) {
        snprintf(log->message, sizeof(log->message),
                 "no stream block (a line \"%s\") in the log",
                 FLIGHTREC_CONSOLE_BEGIN);
        log->error = FLIGHTREC_ETRUNC;
        return log->error;
    }
    return 0;
}

const char *flightrec_console_message(const struct flightrec_console *log)
{
    return log->error != 0 ? log->message : "";
}
