/* SPDX-License-Identifier: BSD-2-Clause */
/* Decoder glue: a merging client feeds a sink. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "util/out-buffer.h"
#include "convert-symbols.h"
#include "convert.h"

/* Reading a pipe, how long the decoder holds records back to merge rings
 * in time order: memory is bounded by the records of this window, not by
 * the trace (a regular file is merged exactly, see fr_convert_fd). */
#define MERGE_WINDOW_NS 1000000000ull
#define READ_CHUNK (1u << 20)

struct run {
    flightrec_client *client;
    struct fr_sink *sink;
    struct fr_source src;
    int begun;
    int failed;
    struct fr_convert_stats *stats;
    int symbols_wanted;
    struct fr_symbols *symbols;    /* made at the header (the word size) */
};

static const char *event_name(void *arg, uint32_t event)
{
    return flightrec_client_event_name(arg, event);
}

static const char *thread_name(void *arg, int64_t tid)
{
    return flightrec_client_thread_name(arg, tid);
}

static uint32_t event_kind(void *arg, uint32_t event, int *begin)
{
    *begin = flightrec_client_span_begin(arg, event);
    return flightrec_client_event_kind(arg, event);
}

static const char *symbol(void *arg, uint64_t address)
{
    return fr_symbols_name(arg, address);
}

static int begin(struct run *r)
{
    r->begun = 1;
    r->src.info = flightrec_client_info(r->client);
    if (r->symbols_wanted) {
        r->symbols = fr_symbols_create(
            r->src.info->format != 0 ? FLIGHTREC_ITEM_SIZE(r->src.info->format) - 4
                                     : 8,
            NULL, NULL);
        if (r->symbols != NULL) {
            r->src.symbol = symbol;
            r->src.symbol_arg = r->symbols;
        }
    }
    r->src.event_name = event_name;
    r->src.thread_name = thread_name;
    r->src.event_kind = event_kind;
    r->src.arg = r->client;
    if (fr_sink_begin(r->sink, &r->src) != 0) {
        r->failed = 1;
        return -1;
    }
    return 0;
}

static int on_record(const struct flightrec_record *rec, void *arg)
{
    struct run *r = arg;
    if (!r->begun && begin(r) != 0)
        return 1;
    r->stats->records++;
    if (rec->type == FLIGHTREC_RECORD_LOSS)
        r->stats->lost += rec->loss_count;
    if (r->symbols != NULL)
        fr_symbols_record(r->symbols, rec);
    if (fr_sink_record(r->sink, rec) != 0) {
        r->failed = 1;
        return 1;
    }
    return 0;
}

static void show_progress(void *arg, uint64_t done, uint64_t total)
{
    (void)arg;
    if (total != 0)
        fprintf(stderr, "\rconverting: %3d%% (%" PRIu64 " MiB)",
                (int)(done * 100 / total), done >> 20);
}

static int setup(struct run *r, struct fr_sink *sink,
                 const struct fr_convert_progress *progress,
                 struct fr_convert_stats *stats, int time_order, char *err,
                 size_t err_size)
{
    memset(r, 0, sizeof *r);
    memset(stats, 0, sizeof *stats);
    r->sink = sink;
    r->stats = stats;
    r->symbols_wanted = progress == NULL || !progress->no_symbols;
    struct flightrec_client_options opt = { 0 };
    opt.on_record = on_record;
    opt.arg = r;
    opt.merge = sink->by_ring_ok && !time_order ? FLIGHTREC_MERGE_BY_RING : 1;
    opt.merge_window_ns = MERGE_WINDOW_NS;
    if (progress != NULL) {
        opt.memory_limit = progress->memory_limit;
        if (progress->show && progress->total_bytes > 0)
            opt.on_progress = show_progress;
    }
    if (flightrec_client_create(&r->client, &opt) != 0) {
        fr_errorf(err, err_size, "cannot create the decoder");
        return -1;
    }
    return 0;
}

/* Records the window let through out of order (pipes only). */
static uint64_t late_count(const flightrec_client *client)
{
    struct flightrec_client_totals tot;

    flightrec_client_totals(client, &tot);
    return tot.late;
}

/* Ends the stream and, when all went well, the sink (which puts the output
 * in place); reports the first error. */
static int finish(struct run *r, int feed_rc, char *err, size_t err_size)
{
    int rc = flightrec_client_finish(r->client);
    if (r->stats != NULL)
        r->stats->late = late_count(r->client);
    if (rc == 0 && feed_rc != 0)
        rc = feed_rc;
    int ret = 0;
    if (r->failed) {
        fr_errorf(err, err_size, "%s", r->sink->error);
        ret = -1;
    } else if (rc != 0) {
        const char *m = flightrec_client_message(r->client);
        fr_errorf(err, err_size, "%s", m[0] ? m : "invalid stream");
        ret = -1;
    } else if ((!r->begun && begin(r) != 0) || fr_sink_end(r->sink) != 0) {
        fr_errorf(err, err_size, "%s", r->sink->error);
        ret = -1;
    }
    r->stats->untimed = r->sink->untimed;
    flightrec_client_destroy(r->client);
    fr_symbols_destroy(r->symbols);
    return ret;
}

int fr_convert_buffer(const void *buf, size_t len, struct fr_sink *sink,
                      struct fr_convert_stats *stats, char *err,
                      size_t err_size)
{
    struct run r;
    if (setup(&r, sink, NULL, stats, 0, err, err_size) != 0)
        return -1;
    int rc = flightrec_client_feed(r.client, buf, len);
    stats->bytes = len;
    return finish(&r, rc, err, err_size);
}

/* A console log (a firmware's UART output) feeds the decoder the stream
 * bytes of its marked blocks. */
static int console_to_client(void *arg, const void *bytes, size_t n)
{
    return flightrec_client_feed(arg, bytes, n);
}

/* Whether @a fd is a regular file holding a stream (not a console log):
 * flightrec_client_read_fd() reads it in exact order.  Looks at the same
 * first bytes a pipe's first read would, without moving the offset. */
static int regular_stream(int fd)
{
    struct stat st;
    off_t at;
    unsigned char *head;
    ssize_t n;
    int console;

    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (at = lseek(fd, 0, SEEK_CUR)) < 0)
        return 0;
    head = malloc(READ_CHUNK);
    if (head == NULL)
        return 1; /* read_fd reports the lack of memory */
    do
        n = pread(fd, head, READ_CHUNK, at);
    while (n < 0 && errno == EINTR);
    console = n > 0 && flightrec_console_probe(head, (size_t)n);
    free(head);
    return !console;
}

int fr_convert_fd(int fd, struct fr_sink *sink,
                  const struct fr_convert_progress *progress,
                  struct fr_convert_stats *stats, char *err, size_t err_size)
{
    struct run r;
    if (setup(&r, sink, progress, stats, 0, err, err_size) != 0)
        return -1;
    if (regular_stream(fd)) {
        /* Reads and finishes, in exact order (or ring by ring). */
        off_t start = lseek(fd, 0, SEEK_CUR);
        int rc = flightrec_client_read_fd(r.client, fd);
        if (sink->needs_time_order) {
            /* Some output is fed by several rings (a firmware's tasks and
             * interrupts on one processor): again, in time order. */
            flightrec_client_destroy(r.client);
            fr_symbols_destroy(r.symbols);
            if (fr_sink_reset(sink) != 0 || lseek(fd, start, SEEK_SET) < 0) {
                fr_errorf(err, err_size, "cannot read the input again: %s",
                          sink->error[0] ? sink->error : strerror(errno));
                return -1;
            }
            if (setup(&r, sink, progress, stats, 1, err, err_size) != 0)
                return -1;
            rc = flightrec_client_read_fd(r.client, fd);
        }
        if (r.client != NULL && progress && progress->show &&
            progress->total_bytes > 0)
            fprintf(stderr, "\r%40s\r", "");
        struct flightrec_client_totals tot;
        flightrec_client_totals(r.client, &tot);
        stats->bytes = tot.bytes;
        return finish(&r, rc, err, err_size);
    }
    /* A pipe, or a console log: read once, through the window. */
    unsigned char *buf = malloc(READ_CHUNK);
    if (buf == NULL) {
        flightrec_client_destroy(r.client);
        fr_errorf(err, err_size, "out of memory");
        return -1;
    }
    int rc = 0, shown = -1;
    int first = 1, is_console = 0;
    struct flightrec_console console;
    int show = progress && progress->show && progress->total_bytes > 0;
    for (;;) {
        ssize_t n = read(fd, buf, READ_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fr_errorf(err, err_size, "read: %s", strerror(errno));
            free(buf);
            flightrec_client_destroy(r.client);
            fr_symbols_destroy(r.symbols);
            return -1;
        }
        if (n == 0)
            break;
        stats->bytes += (uint64_t)n;
        if (first) {
            first = 0;
            is_console = flightrec_console_probe(buf, (size_t)n);
            if (is_console)
                flightrec_console_init(&console, console_to_client, r.client);
        }
        rc = is_console ? flightrec_console_feed(&console, buf, (size_t)n)
                        : flightrec_client_feed(r.client, buf, (size_t)n);
        if (rc != 0)
            break;
        if (show) {
            int pct = (int)(stats->bytes * 100 / progress->total_bytes);
            if (pct != shown) {
                shown = pct;
                fprintf(stderr, "\rconverting: %3d%% (%" PRIu64 " MiB)",
                        pct > 100 ? 100 : pct, stats->bytes >> 20);
            }
        }
    }
    if (show)
        fprintf(stderr, "\r%40s\r", "");
    free(buf);
    if (is_console && rc == 0)
        rc = flightrec_console_finish(&console);
    if (is_console && console.message[0] != '\0') {
        /* The log's own error names its line; what came before is kept. */
        (void)finish(&r, 0, err, err_size);
        fr_errorf(err, err_size, "%s", flightrec_console_message(&console));
        return -1;
    }
    return finish(&r, rc, err, err_size);
}
