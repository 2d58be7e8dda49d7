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
    "Options:\n"
    "  --window=SECONDS     merge window when reading a pipe (default 2,\n"
    "                       as print: both count the same records late)\n"
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
    /* Threads: open addressing on tid; slots index into threads[]. */
    struct thread_stat *threads;
    size_t thread_count, thread_cap;
    int32_t *slots;
    size_t slot_mask;
    /* Last lookup, since consecutive records mostly share a thread. */
    const struct flightrec_ring_info *last_ring;
    int64_t last_tid;
    struct thread_stat *last_thread;
    int oom;
};

static size_t hash_tid(int64_t tid)
{
    uint64_t h = (uint64_t)tid * 0x9e3779b97f4a7c15u;
    return (size_t)(h >> 32);
}

static int grow_slots(struct stats_ctx *s)
{
    size_t n = s->slot_mask ? (s->slot_mask + 1) * 2 : 64;
    int32_t *slots = malloc(n * sizeof(*slots));

    if (slots == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        slots[i] = -1;
    for (size_t t = 0; t < s->thread_count; t++) {
        size_t i = hash_tid(s->threads[t].tid) & (n - 1);
        while (slots[i] >= 0)
            i = (i + 1) & (n - 1);
        slots[i] = (int32_t)t;
    }
    free(s->slots);
    s->slots = slots;
    s->slot_mask = n - 1;
    return 0;
}

static struct thread_stat *find_thread(struct stats_ctx *s, int64_t tid)
{
    if ((s->slots == NULL || s->thread_count * 2 >= s->slot_mask + 1) &&
        grow_slots(s) != 0)
        return NULL;
    size_t i = hash_tid(tid) & s->slot_mask;
    while (s->slots[i] >= 0) {
        struct thread_stat *t = &s->threads[s->slots[i]];
        if (t->tid == tid)
            return t;
        i = (i + 1) & s->slot_mask;
    }
    if (s->thread_count == s->thread_cap) {
        size_t cap = s->thread_cap ? s->thread_cap * 2 : 16;
        struct thread_stat *grown = realloc(s->threads, cap * sizeof(*grown));
        if (grown == NULL)
            return NULL;
        s->threads = grown;
        s->thread_cap = cap;
    }
    struct thread_stat *t = &s->threads[s->thread_count];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    s->slots[i] = (int32_t)s->thread_count++;
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
    *cli_fmt_seconds(buf, ns) = '\0';
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

static int cmp_ring(const void *a, const void *b)
{
    const struct flightrec_ring_info *x = *(const void *const *)a;
    const struct flightrec_ring_info *y = *(const void *const *)b;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->context < y->context ? -1 : x->context > y->context;
}

static void print_header(const struct flightrec_stream_info *info)
{
    printf("stream: %s, version 0x%08x, format %s\n",
           cli_stream_kind_name(info->kind), (unsigned)info->version,
           cli_format_name(info->format));
    printf("frequency: %llu Hz\n", (unsigned long long)info->frequency);
    if (info->kind == FLIGHTREC_STREAM_FLIGHTREC)
        printf("rings in header: %u\n", (unsigned)info->ring_count);
    else
        printf("processors: %u\n", (unsigned)info->ring_count);
    printf("items per ring: %u\n", (unsigned)info->items_per_ring);
    if (info->process_id >= 0)
        printf("process id: %lld\n", (long long)info->process_id);
    if (info->has_realtime) {
        char t[40];
        *cli_fmt_iso8601(t, info->realtime_ns_at_zero) = '\0';
        printf("realtime at uptime 0: %s\n", t);
    }
    if (info->arch[0] != '\0')
        printf("arch: %.*s\n", (int)sizeof info->arch, info->arch);
    if (info->bsp[0] != '\0')
        printf("bsp: %.*s\n", (int)sizeof info->bsp, info->bsp);
    if (info->tools[0] != '\0')
        printf("tools: %.*s\n", (int)sizeof info->tools, info->tools);
}

static void print_stats(struct stats_ctx *s)
{
    const struct flightrec_stream_info *info = flightrec_client_info(s->client);
    struct flightrec_client_totals tot;
    uint64_t dur = s->have_time ? s->last_ns - s->first_ns : 0;
    char a[64], b[64];

    flightrec_client_totals(s->client, &tot);
    print_header(info);
    fmt_seconds(a, s->have_time ? s->first_ns : 0);
    fmt_seconds(b, s->have_time ? s->last_ns : 0);
    printf("first record: %s s\nlast record: %s s\n", a, b);
    fmt_seconds(a, dur);
    printf("duration: %s s\n", a);
    printf("bytes: %llu\n", (unsigned long long)tot.bytes);
    fmt_rate(a, sizeof a, tot.events, dur);
    printf("events: %llu (%s/s)\n", (unsigned long long)tot.events, a);
    printf("untimed: %llu\n", (unsigned long long)tot.untimed);
    printf("late: %llu\n", (unsigned long long)tot.late);
    printf("lost: overflow %llu, discard %llu, missing %llu\n",
           (unsigned long long)tot.overflow, (unsigned long long)tot.discard,
           (unsigned long long)tot.missing);

    struct event_row rows[FLIGHTREC_EVENT_COUNT];
    size_t nrows = 0;
    for (uint32_t id = 0; id < FLIGHTREC_EVENT_COUNT; id++) {
        if (s->per_event[id] != 0) {
            rows[nrows].id = id;
            rows[nrows++].count = s->per_event[id];
        }
    }
    if (nrows > 1)
        qsort(rows, nrows, sizeof rows[0], cmp_event_row);
    printf("\nevents by type: %zu\n", nrows);
    printf("%12s %14s %5s  %s\n", "count", "rate/s", "id", "event");
    for (size_t i = 0; i < nrows; i++) {
        fmt_rate(a, sizeof a, rows[i].count, dur);
        printf("%12llu %14s %5u  %s\n", (unsigned long long)rows[i].count, a,
               (unsigned)rows[i].id,
               flightrec_client_event_name(s->client, rows[i].id));
    }

    if (s->thread_count > 1)
        qsort(s->threads, s->thread_count, sizeof s->threads[0], cmp_thread);
    printf("\nthreads: %zu\n", s->thread_count);
    printf("%12s %14s %10s  %s\n", "events", "rate/s", "tid", "name");
    for (size_t i = 0; i < s->thread_count; i++) {
        const struct thread_stat *t = &s->threads[i];
        fmt_rate(a, sizeof a, t->events, dur);
        if (t->tid >= 0)
            snprintf(b, sizeof b, "%lld", (long long)t->tid);
        else
            snprintf(b, sizeof b, "-");
        printf("%12llu %14s %10s  %s\n", (unsigned long long)t->events, a, b,
               t->name[0] != '\0' ? t->name : "-");
    }

    size_t nrings = flightrec_client_ring_count(s->client);
    const struct flightrec_ring_info **rings =
        nrings ? malloc(nrings * sizeof(*rings)) : NULL;
    if (nrings != 0 && rings == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < nrings; i++) {
        const struct flightrec_ring_info *r = flightrec_client_ring(s->client,
                                                                    i);
        if (r != NULL)
            rings[n++] = r;
    }
    if (n > 1)
        qsort(rings, n, sizeof rings[0], cmp_ring);
    printf("\nrings: %zu\n", n);
    printf("%5s %7s %12s %10s %10s %10s %10s %10s  %s\n", "ring", "context",
           "events", "overflow", "discard", "missing", "untimed", "tid",
           "name");
    for (size_t i = 0; i < n; i++) {
        const struct flightrec_ring_info *r = rings[i];
        if (r->thread_id >= 0)
            snprintf(b, sizeof b, "%lld", (long long)r->thread_id);
        else
            snprintf(b, sizeof b, "-");
        printf("%5u %7s %12llu %10llu %10llu %10llu %10llu %10s  %.*s\n",
               (unsigned)r->id, r->context ? "signal" : "thread",
               (unsigned long long)r->events,
               (unsigned long long)r->overflow,
               (unsigned long long)r->discard,
               (unsigned long long)r->missing,
               (unsigned long long)r->untimed, b,
               (int)sizeof r->thread_name,
               r->thread_name[0] != '\0' ? r->thread_name : "-");
    }
    free(rings);
}

enum { OPT_WINDOW = 256, OPT_MEMORY_LIMIT };

static const struct option long_options[] = {
    { "window", required_argument, NULL, OPT_WINDOW },
    { "memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cmd_stats(int argc, char **argv)
{
    struct stats_ctx *s = calloc(1, sizeof(*s));
    struct cli_input in = { .fd = -1 };
    uint64_t window_ns = CLI_MERGE_WINDOW_NS;
    uint64_t memory_limit = cli_memory_limit_default();
    int ret = CLI_FAIL;
    int c;

    cli_set_command("stats");
    if (s == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return CLI_FAIL;
    }
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        if (c == OPT_WINDOW) {
            if (cli_parse_seconds(optarg, &window_ns) == 0)
                continue;
            ret = cli_usage_error(usage, "bad time '%s' (seconds, e.g. "
                                  "1.5)", optarg);
        } else if (c == OPT_MEMORY_LIMIT) {
            if (cli_parse_size(optarg, &memory_limit) == 0)
                continue;
            ret = cli_usage_error(usage, "bad size '%s' (bytes, or with K, "
                                  "M, G: 512M)", optarg);
        } else if (c == 'h') {
            fputs(usage, stdout);
            ret = CLI_OK;
        } else {
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
        .merge_window_ns = cli_merge_window(&in, window_ns),
        .memory_limit = memory_limit,
    };
    int rc = flightrec_client_create(&s->client, &opt);
    if (rc != 0) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(rc));
        goto out;
    }
    rc = cli_decode(&in, s->client);
    /* What was decoded before an error is still summarized. */
    print_stats(s);
    if (s->oom)
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
    else if (rc == 0)
        ret = CLI_OK;
out:
    cli_input_close(&in);
    flightrec_client_destroy(s->client);
    free(s->threads);
    free(s->slots);
    free(s);
    return ret;
}
