/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief flightrec stats: what a stream holds, as a deterministic summary.
 *
 * Output order (documented in docs/flightrec.1.md): the stream header facts,
 * the totals, then three tables: event types by count (descending, then id
 * ascending), threads by thread id (ascending, unknown first), rings by ring
 * id then context.  Rates are per second of stream duration (first to last
 * timed record), "-" when the duration is 0.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "util/hash-map.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: flightrec stats [options] [FILE|-]\n"
    "\n"
    "Summarize the stream in FILE (or standard input): header facts,\n"
    "duration, events per type and per thread with rates, losses per ring.\n"
    "\n"
    "Names from the stream are printed with control characters escaped.\n"
    "\n"
    "Options:\n"
    "  --json               one JSON object (keys: stream, first_ns,\n"
    "                       last_ns, duration_ns, bytes, events, untimed,\n"
    "                       late, lost, saturated, events_by_type, threads,\n"
    "                       rings)\n"
    "  --window=SECONDS     merge window when reading a pipe (default as\n"
    "                       print: both count the same records late)\n"
    "  --memory-limit=SIZE  stop when the decoder would hold more (e.g.\n"
    "                       512M; default half the RAM; 0: no limit)\n"
    "  -h, --help           show this help\n";

struct thread_stat {
    int64_t tid;
    uint64_t events;
    char name[64];
};

struct stats_ctx {
    flightrec_client *client;
    int have_time;
    uint64_t first_ns, last_ns;
    uint64_t per_event[FLIGHTREC_EVENT_COUNT];
    /* Threads, in order of first record until sorted at the end;
     * thread_index: tid -> index in threads[]. */
    struct thread_stat *threads;
    size_t thread_count, thread_cap;
    struct fr_hash_map thread_index;
    /* Last lookup, since consecutive records mostly share a thread. */
    const struct flightrec_ring_info *last_ring;
    int64_t last_tid;
    struct thread_stat *last_thread;
    int oom;
};

static struct thread_stat *find_thread(struct stats_ctx *s, int64_t tid)
{
    uint32_t i = fr_hash_map_find(&s->thread_index, (uint64_t)tid);

    if (i != FR_HASH_NONE)
        return &s->threads[i];
    if (s->thread_count == s->thread_cap) {
        size_t cap = s->thread_cap ? s->thread_cap * 2 : 16;
        struct thread_stat *grown = realloc(s->threads, cap * sizeof(*grown));
        if (grown == NULL)
            return NULL;
        s->threads = grown;
        s->thread_cap = cap;
    }
    /* Added last, so its index is thread_count. */
    if (fr_hash_map_add(&s->thread_index, (uint64_t)tid, NULL) ==
        FR_HASH_NONE)
        return NULL;
    struct thread_stat *t = &s->threads[s->thread_count++];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    return t;
}

static int on_record(const struct flightrec_record *r, void *arg)
{
    struct stats_ctx *s = arg;
    const struct flightrec_ring_info *ri = r->ring_info;

    if (!(r->flags & FLIGHTREC_RECORD_UNTIMED)) {
        if (!s->have_time) {
            s->have_time = 1;
            s->first_ns = s->last_ns = r->time_ns;
        } else if (r->time_ns < s->first_ns) {
            s->first_ns = r->time_ns;
        } else if (r->time_ns > s->last_ns) {
            s->last_ns = r->time_ns;
        }
    }
    if (r->type != FLIGHTREC_RECORD_EVENT)
        return 0;
    s->per_event[r->event & FLIGHTREC_EVENT_MASK]++;

    int64_t tid = ri != NULL ? ri->thread_id : -1;
    struct thread_stat *t = s->last_thread;
    if (ri != s->last_ring || tid != s->last_tid || t == NULL) {
        t = find_thread(s, tid);
        if (t == NULL) {
            s->oom = 1;
            return 1;
        }
        s->last_ring = ri;
        s->last_tid = tid;
        s->last_thread = t;
    }
    t->events++;
    if (ri != NULL && ri->thread_name[0] != '\0' &&
        strncmp(t->name, ri->thread_name, sizeof t->name) != 0) {
        memcpy(t->name, ri->thread_name, sizeof t->name);
        t->name[sizeof t->name - 1] = '\0';
    }
    return 0;
}

/* Writes "R" as count per second with one decimal, or "-". */
static void fmt_rate(char *buf, size_t size, uint64_t count, uint64_t ns)
{
    if (ns == 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.1f", (double)count * 1e9 / (double)ns);
}

static void fmt_seconds(char *buf, uint64_t ns)
{
    *fr_fmt_seconds(buf, ns) = '\0';
}

struct event_row {
    uint32_t id;
    uint64_t count;
};

static int cmp_event_row(const void *a, const void *b)
{
    const struct event_row *x = a, *y = b;

    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_thread(const void *a, const void *b)
{
    const struct thread_stat *x = a, *y = b;

    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* A ring to print: what it sorts by, and its index for
 * flightrec_client_ring() (whose description of a ring that held nothing
 * lasts only until the next call, so none is kept). */
struct ring_row {
    uint32_t id;
    uint32_t context;
    uint32_t index;
};

static int cmp_ring(const void *a, const void *b)
{
    const struct ring_row *x = a, *y = b;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->context < y->context ? -1 : x->context > y->context;
}

/* The tables, sorted, as both output forms print them. */
struct stats_tables {
    struct event_row rows[FLIGHTREC_EVENT_COUNT];
    size_t nrows;
    struct ring_row *rings;
    size_t nrings;
    uint64_t dur;
    struct flightrec_client_totals tot;
};

static int collect(struct stats_ctx *s, struct stats_tables *t)
{
    t->dur = s->have_time ? s->last_ns - s->first_ns : 0;
    flightrec_client_totals(s->client, &t->tot);
    t->nrows = 0;
    for (uint32_t id = 0; id < FLIGHTREC_EVENT_COUNT; id++) {
        if (s->per_event[id] != 0) {
            t->rows[t->nrows].id = id;
            t->rows[t->nrows++].count = s->per_event[id];
        }
    }
    if (t->nrows > 1)
        qsort(t->rows, t->nrows, sizeof t->rows[0], cmp_event_row);
    if (s->thread_count > 1)
        qsort(s->threads, s->thread_count, sizeof s->threads[0], cmp_thread);

    size_t n = flightrec_client_ring_count(s->client);
    t->rings = n ? malloc(n * sizeof(*t->rings)) : NULL;
    t->nrings = 0;
    if (n != 0 && t->rings == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct flightrec_ring_info *r = flightrec_client_ring(s->client,
                                                                    i);
        if (r != NULL) {
            struct ring_row *row = &t->rings[t->nrings++];
            row->id = r->id;
            row->context = r->context;
            row->index = (uint32_t)i;
        }
    }
    if (t->nrings > 1)
        qsort(t->rings, t->nrings, sizeof t->rings[0], cmp_ring);
    return 0;
}

/* A bounded name from the stream, escaped for the terminal. */
static const char *safe(char *buf, size_t size, const char *name, size_t max)
{
    char raw[128];
    size_t n = strnlen(name, max < sizeof raw ? max : sizeof raw - 1);

    memcpy(raw, name, n);
    raw[n] = '\0';
    return cli_escape(buf, size, raw);
}

static void print_header(const flightrec_client *client,
                         const struct flightrec_stream_info *info)
{
    char t[260];

    printf("stream: %s, version 0x%08x, format %s\n",
           cli_stream_kind_name(info->kind), (unsigned)info->version,
           cli_format_name(info->format));
    /* RTEMS renumbers its events in every version (and v1 twice). */
    if (info->kind != FLIGHTREC_STREAM_FLIGHTREC)
        printf("numbering: %s\n", flightrec_client_numbering(client));
    printf("frequency: %llu Hz\n", (unsigned long long)info->frequency);
    if (info->kind == FLIGHTREC_STREAM_FLIGHTREC)
        printf("rings in header: %u\n", (unsigned)info->ring_count);
    else
        printf("processors: %u\n", (unsigned)info->ring_count);
    printf("items per ring: %u\n", (unsigned)info->items_per_ring);
    if (info->process_id >= 0)
        printf("process id: %lld\n", (long long)info->process_id);
    if (info->has_realtime) {
        *fr_fmt_iso8601(t, info->realtime_ns_at_zero) = '\0';
        printf("realtime at uptime 0: %s\n", t);
    }
    if (info->arch[0] != '\0')
        printf("arch: %s\n", safe(t, sizeof t, info->arch, sizeof info->arch));
    if (info->bsp[0] != '\0')
        printf("bsp: %s\n", safe(t, sizeof t, info->bsp, sizeof info->bsp));
    if (info->tools[0] != '\0')
        printf("tools: %s\n",
               safe(t, sizeof t, info->tools, sizeof info->tools));
}

static void print_text(struct stats_ctx *s, const struct stats_tables *t)
{
    const struct flightrec_stream_info *info = flightrec_client_info(s->client);
    uint64_t dur = t->dur;
    char a[64], b[64], c[64], name[260];

    print_header(s->client, info);
    fmt_seconds(a, s->have_time ? s->first_ns : 0);
    fmt_seconds(b, s->have_time ? s->last_ns : 0);
    printf("first record: %s s\nlast record: %s s\n", a, b);
    fmt_seconds(a, dur);
    printf("duration: %s s\n", a);
    printf("bytes: %llu\n", (unsigned long long)t->tot.bytes);
    fmt_rate(a, sizeof a, t->tot.events, dur);
    printf("events: %llu (%s/s)\n", (unsigned long long)t->tot.events, a);
    printf("untimed: %llu\n", (unsigned long long)t->tot.untimed);
    printf("late: %llu\n", (unsigned long long)t->tot.late);
    printf("lost: overflow %s, discard %s, missing %s\n",
           cli_count_text(a, sizeof a, t->tot.overflow),
           cli_count_text(b, sizeof b, t->tot.discard),
           cli_count_text(c, sizeof c, t->tot.missing));

    printf("\nevents by type: %zu\n", t->nrows);
    printf("%12s %14s %5s  %s\n", "count", "rate/s", "id", "event");
    for (size_t i = 0; i < t->nrows; i++) {
        fmt_rate(a, sizeof a, t->rows[i].count, dur);
        printf("%12llu %14s %5u  %s\n", (unsigned long long)t->rows[i].count,
               a, (unsigned)t->rows[i].id,
               safe(name, sizeof name,
                    flightrec_client_event_name(s->client, t->rows[i].id),
                    64));
    }

    printf("\nthreads: %zu\n", s->thread_count);
    printf("%12s %14s %10s  %s\n", "events", "rate/s", "tid", "name");
    for (size_t i = 0; i < s->thread_count; i++) {
        const struct thread_stat *th = &s->threads[i];
        fmt_rate(a, sizeof a, th->events, dur);
        if (th->tid >= 0)
            snprintf(b, sizeof b, "%lld", (long long)th->tid);
        else
            snprintf(b, sizeof b, "-");
        printf("%12llu %14s %10s  %s\n", (unsigned long long)th->events, a, b,
               th->name[0] != '\0'
                   ? safe(name, sizeof name, th->name, sizeof th->name)
                   : "-");
    }

    printf("\nrings: %zu\n", t->nrings);
    printf("%5s %7s %12s %10s %10s %10s %10s %10s  %s\n", "ring", "context",
           "events", "overflow", "discard", "missing", "untimed", "tid",
           "name");
    for (size_t i = 0; i < t->nrings; i++) {
        const struct flightrec_ring_info *r =
            flightrec_client_ring(s->client, t->rings[i].index);
        if (r->thread_id >= 0)
            snprintf(b, sizeof b, "%lld", (long long)r->thread_id);
        else
            snprintf(b, sizeof b, "-");
        printf("%5u %7s %12llu %10llu %10llu %10llu %10llu %10s  %s\n",
               (unsigned)r->id, r->context ? "signal" : "thread",
               (unsigned long long)r->events,
               (unsigned long long)r->overflow,
               (unsigned long long)r->discard,
               (unsigned long long)r->missing,
               (unsigned long long)r->untimed, b,
               r->thread_name[0] != '\0'
                   ? safe(name, sizeof name, r->thread_name,
                          sizeof r->thread_name)
                   : "-");
    }
}

/* A JSON string of a bounded name, to stdout. */
static void json_str(const char *name, size_t max)
{
    char buf[6 * 128 + 2];
    size_t n = strnlen(name, max < 128 ? max : 128);

    fwrite(buf, 1, (size_t)(cli_fmt_json(buf, name, n) - buf), stdout);
}

static void json_tid(int64_t tid)
{
    if (tid >= 0)
        printf("%lld", (long long)tid);
    else
        fputs("null", stdout);
}

/* One JSON object on one line; keys documented in docs/flightrec.1.md. */
static void print_json(struct stats_ctx *s, const struct stats_tables *t)
{
    const struct flightrec_stream_info *info = flightrec_client_info(s->client);
    char iso[40];

    printf("{\"stream\":{\"kind\":\"%s\",\"version\":%u,\"format\":\"%s\","
           "\"frequency\":%llu,\"ring_count\":%u,\"items_per_ring\":%u,"
           "\"process_id\":",
           cli_stream_kind_name(info->kind), (unsigned)info->version,
           cli_format_name(info->format),
           (unsigned long long)info->frequency, (unsigned)info->ring_count,
           (unsigned)info->items_per_ring);
    json_tid(info->process_id);
    fputs(",\"realtime_at_zero\":", stdout);
    if (info->has_realtime) {
        *fr_fmt_iso8601(iso, info->realtime_ns_at_zero) = '\0';
        printf("\"%s\"", iso);
    } else {
        fputs("null", stdout);
    }
    fputs(",\"arch\":", stdout);
    json_str(info->arch, sizeof info->arch);
    fputs(",\"bsp\":", stdout);
    json_str(info->bsp, sizeof info->bsp);
    fputs(",\"tools\":", stdout);
    json_str(info->tools, sizeof info->tools);
    fputs("},\"first_ns\":", stdout);
    if (s->have_time)
        printf("%llu,\"last_ns\":%llu", (unsigned long long)s->first_ns,
               (unsigned long long)s->last_ns);
    else
        fputs("null,\"last_ns\":null", stdout);
    printf(",\"duration_ns\":%llu,\"bytes\":%llu,\"events\":%llu,"
           "\"untimed\":%llu,\"late\":%llu,\"lost\":{\"overflow\":%llu,"
           "\"discard\":%llu,\"missing\":%llu},\"saturated\":%s",
           (unsigned long long)t->dur, (unsigned long long)t->tot.bytes,
           (unsigned long long)t->tot.events,
           (unsigned long long)t->tot.untimed,
           (unsigned long long)t->tot.late,
           (unsigned long long)t->tot.overflow,
           (unsigned long long)t->tot.discard,
           (unsigned long long)t->tot.missing,
           t->tot.overflow == UINT64_MAX || t->tot.discard == UINT64_MAX ||
                   t->tot.missing == UINT64_MAX
               ? "true" : "false");
    fputs(",\"events_by_type\":[", stdout);
    for (size_t i = 0; i < t->nrows; i++) {
        printf("%s{\"id\":%u,\"event\":", i ? "," : "",
               (unsigned)t->rows[i].id);
        json_str(flightrec_client_event_name(s->client, t->rows[i].id), 64);
        printf(",\"count\":%llu}", (unsigned long long)t->rows[i].count);
    }
    fputs("],\"threads\":[", stdout);
    for (size_t i = 0; i < s->thread_count; i++) {
        const struct thread_stat *th = &s->threads[i];
        fputs(i ? ",{\"tid\":" : "{\"tid\":", stdout);
        json_tid(th->tid);
        fputs(",\"name\":", stdout);
        if (th->name[0] != '\0')
            json_str(th->name, sizeof th->name);
        else
            fputs("null", stdout);
        printf(",\"events\":%llu}", (unsigned long long)th->events);
    }
    fputs("],\"rings\":[", stdout);
    for (size_t i = 0; i < t->nrings; i++) {
        const struct flightrec_ring_info *r =
            flightrec_client_ring(s->client, t->rings[i].index);
        printf("%s{\"ring\":%u,\"context\":\"%s\",\"events\":%llu,"
               "\"overflow\":%llu,\"discard\":%llu,\"missing\":%llu,"
               "\"untimed\":%llu,\"tid\":",
               i ? "," : "", (unsigned)r->id,
               r->context ? "signal" : "thread",
               (unsigned long long)r->events,
               (unsigned long long)r->overflow,
               (unsigned long long)r->discard,
               (unsigned long long)r->missing,
               (unsigned long long)r->untimed);
        json_tid(r->thread_id);
        fputs(",\"name\":", stdout);
        if (r->thread_name[0] != '\0')
            json_str(r->thread_name, sizeof r->thread_name);
        else
            fputs("null", stdout);
        fputc('}', stdout);
    }
    fputs("]}\n", stdout);
}

static void print_stats(struct stats_ctx *s, int json)
{
    struct stats_tables *t = malloc(sizeof(*t));

    if (t == NULL || collect(s, t) != 0) {
        if (t == NULL)
            cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        free(t);
        return;
    }
    if (json)
        print_json(s, t);
    else
        print_text(s, t);
    if (t->tot.overflow == UINT64_MAX || t->tot.discard == UINT64_MAX ||
        t->tot.missing == UINT64_MAX)
        cli_msg(CLI_WARN, "loss counts reached 2^64 - 1 and stopped there "
                "(saturated): the stream reports more lost items than that");
    free(t->rings);
    free(t);
}

enum { OPT_JSON = 256 };

static const struct option long_options[] = {
    { "json", no_argument, NULL, OPT_JSON },
    CLI_DECODE_LONG_OPTIONS,
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cmd_stats(int argc, char **argv)
{
    struct stats_ctx *s = calloc(1, sizeof(*s));
    struct cli_input in = { .fd = -1 };
    struct cli_decode_options decoding;
    int ret = CLI_FAIL;
    int json = 0;
    int c;

    cli_set_command("stats");
    if (s == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return CLI_FAIL;
    }
    cli_decode_options_init(&decoding);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        if (c == OPT_JSON) {
            json = 1;
            continue;
        }
        int taken = cli_decode_option(&decoding, c, optarg, usage, &ret);
        if (taken > 0)
            continue;
        if (taken == 0 && c == 'h') {
            fputs(usage, stdout);
            ret = CLI_OK;
        } else if (taken == 0) {
            ret = cli_bad_option(c, argv, usage);
        }
        goto out;
    }
    if (argc - optind > 1) {
        ret = cli_usage_error(usage, "too many arguments");
        goto out;
    }
    if (cli_input_open(&in, optind < argc ? argv[optind] : "-") != 0)
        goto out;

    /* On a pipe, the same merge as print, so that the records print marks
     * late are those counted late here.  A file print reads in exact
     * order (nothing late) and the summary does not depend on order: one
     * pass without merge gives the same figures, faster. */
    struct flightrec_client_options opt = {
        .on_record = on_record,
        .arg = s,
        .merge = !in.is_regular,
        .merge_window_ns = cli_merge_window(&in, decoding.window_ns),
        .memory_limit = decoding.memory_limit,
    };
    int rc = flightrec_client_create(&s->client, &opt);
    if (rc != 0) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(rc));
        goto out;
    }
    rc = cli_decode(&in, s->client);
    /* What was decoded before an error is still summarized. */
    print_stats(s, json);
    if (s->oom)
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
    else if (rc == 0)
        ret = CLI_OK;
out:
    cli_input_close(&in);
    flightrec_client_destroy(s->client);
    free(s->threads);
    fr_hash_map_free(&s->thread_index);
    free(s);
    return ret;
}
