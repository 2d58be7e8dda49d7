/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief flightrec report: text for a terminal, JSON for scripts, and one
 * self-contained HTML page (inline CSS and SVG, no script, no network).
 * The three show the same figures; JSON keeps every duration in integer
 * nanoseconds and every size in bytes.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/out-buffer.h"
#include "report.h"

/*=====   Units   =====*/

const char *rp_fmt_duration(char *buf, size_t size, uint64_t ns)
{
    if (ns < 1000u)
        snprintf(buf, size, "%llu ns", (unsigned long long)ns);
    else if (ns < 1000000u)
        snprintf(buf, size, "%.2f \xc2\xb5s", (double)ns / 1e3);
    else if (ns < 1000000000u)
        snprintf(buf, size, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(buf, size, "%.2f s", (double)ns / 1e9);
    return buf;
}

const char *rp_fmt_bytes(char *buf, size_t size, uint64_t bytes)
{
    if (bytes < 1024u)
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
    else if (bytes < 1024u * 1024u)
        snprintf(buf, size, "%.1f KiB", (double)bytes / 1024.0);
    else if (bytes < 1024ull * 1024u * 1024u)
        snprintf(buf, size, "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
    else
        snprintf(buf, size, "%.1f GiB",
                 (double)bytes / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

static const char *lock_kinds(unsigned kinds, char *buf, size_t size)
{
    static const char *const names[] = { "mutex", "spin", "rwlock-read",
                                         "semaphore", "barrier" };
    size_t len = 0;

    buf[0] = '\0';
    for (unsigned k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (!(kinds & (1u << k)))
            continue;
        int n = snprintf(buf + len, size - len, "%s%s", len ? "+" : "",
                         names[k]);
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
    }
    if (len == 0)
        snprintf(buf, size, "-");
    return buf;
}

/* Thread names (and other text from the stream), safe for a terminal. */
static const char *safe_name(char *buf, size_t size, const char *name)
{
    if (name == NULL || name[0] == '\0')
        return "-";
    return cli_escape(buf, size, name);
}

static const char *thread_name_of(const struct report *rp, int64_t tid)
{
    for (size_t i = 0; i < rp->thread_count; i++)
        if (rp->thread_list[i]->tid == tid)
            return rp->thread_list[i]->name;
    return "";
}

/* Pads @a s to @a width columns (UTF-8 aware), right- or left-aligned. */
static void cell(FILE *f, const char *s, int width, int right)
{
    int cols = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0u) != 0x80u)
            cols++;
    if (right)
        for (int i = cols; i < width; i++)
            fputc(' ', f);
    fputs(s, f);
    if (!right)
        for (int i = cols; i < width; i++)
            fputc(' ', f);
}

static void cell_u64(FILE *f, uint64_t v, int width)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    cell(f, b, width, 1);
}

static void cell_ns(FILE *f, uint64_t ns, int width)
{
    char b[32];
    cell(f, rp_fmt_duration(b, sizeof b, ns), width, 1);
}

/*=====   Shared figures   =====*/

struct size_row {
    uint64_t size, count, bytes;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_size_row(const void *a, const void *b)
{
    const struct size_row *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->size > y->size ? -1 : x->size < y->size;
}

/* What is still allocated, grouped by size, most bytes first. */
static struct size_row *live_by_size(const struct report *rp, size_t *rows)
{
    uint64_t *sizes = malloc((rp->live_count ? rp->live_count : 1) *
                             sizeof *sizes);
    struct size_row *out = NULL;
    size_t n = 0, k = 0;

    *rows = 0;
    if (sizes == NULL)
        return NULL;
    for (size_t i = 0; i < rp->alloc_len; i++)
        if (rp->allocs[i].next_free == 0 && n < rp->live_count &&
            fr_map_get(&rp->live, rp->allocs[i].ptr) ==
                (void *)(uintptr_t)(i + 1))
            sizes[n++] = rp->allocs[i].size;
    qsort(sizes, n, sizeof *sizes, cmp_u64);
    out = malloc((n ? n : 1) * sizeof *out);
    if (out == NULL) {
        free(sizes);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (k == 0 || out[k - 1].size != sizes[i]) {
            out[k].size = sizes[i];
            out[k].count = 0;
            out[k].bytes = 0;
            k++;
        }
        out[k - 1].count++;
        out[k - 1].bytes += sizes[i];
    }
    free(sizes);
    qsort(out, k, sizeof *out, cmp_size_row);
    *rows = k;
    return out;
}

static void live_by_kind(const struct report *rp, uint64_t count[],
                         uint64_t bytes[])
{
    memset(count, 0, RP_ALLOC_KINDS * sizeof count[0]);
    memset(bytes, 0, RP_ALLOC_KINDS * sizeof bytes[0]);
    for (size_t i = 0; i < rp->alloc_len; i++) {
        const struct rp_alloc *a = &rp->allocs[i];
        if (a->next_free != 0 || a->kind >= RP_ALLOC_KINDS ||
            fr_map_get(&rp->live, a->ptr) != (void *)(uintptr_t)(i + 1))
            continue;
        count[a->kind]++;
        bytes[a->kind] += a->size;
    }
}

static int have_switches(const struct report *rp)
{
    for (size_t i = 0; i < rp->thread_count; i++)
        if (rp->thread_list[i]->switches_in + rp->thread_list[i]->switches_out)
            return 1;
    return 0;
}

static int cmp_fd(const void *a, const void *b)
{
    const struct rp_call_fd *x = *(const void *const *)a;
    const struct rp_call_fd *y = *(const void *const *)b;
    return x->fd < y->fd ? -1 : x->fd > y->fd;
}

struct fd_list {
    const struct rp_call_fd **v;
    size_t n;
};

static void collect_fd(void *val, void *arg)
{
    struct fd_list *l = arg;
    l->v[l->n++] = val;
}

/* The fds of a call, by number; NULL (n 0) when it has none. */
static const struct rp_call_fd **call_fds(const struct rp_call *c, size_t *n)
{
    struct fd_list l = { NULL, 0 };

    *n = 0;
    if (c->fd_count == 0)
        return NULL;
    l.v = malloc(c->fd_count * sizeof *l.v);
    if (l.v == NULL)
        return NULL;
    fr_map_each(&c->fds, collect_fd, &l);
    qsort(l.v, l.n, sizeof *l.v, cmp_fd);
    *n = l.n;
    return l.v;
}

static void totals(const struct report *rp,
                   struct flightrec_client_totals *tot)
{
    flightrec_client_totals(rp->client, tot);
}

/*=====   Text   =====*/

static void text_series_head(FILE *f, const char *what)
{
    char b[32];
    snprintf(b, sizeof b, "%s total", what);
    cell(f, b, 12, 1);
    snprintf(b, sizeof b, "%s p50", what);
    cell(f, b, 11, 1);
    snprintf(b, sizeof b, "%s p99", what);
    cell(f, b, 11, 1);
    snprintf(b, sizeof b, "%s max", what);
    cell(f, b, 11, 1);
}

static void text_series(FILE *f, struct rp_series *s)
{
    struct rp_summary m;

    rp_series_summary(s, &m);
    if (m.count == 0) {
        cell(f, "-", 12, 1);
        cell(f, "-", 11, 1);
        cell(f, "-", 11, 1);
        cell(f, "-", 11, 1);
        return;
    }
    cell_ns(f, m.total, 12);
    cell_ns(f, m.p50, 11);
    cell_ns(f, m.p99, 11);
    cell_ns(f, m.max, 11);
}

static void text_losses(struct report *rp, FILE *f)
{
    struct flightrec_client_totals tot;
    size_t rings = 0;

    totals(rp, &tot);
    for (size_t i = 0; i < flightrec_client_ring_count(rp->client); i++) {
        const struct flightrec_ring_info *r = flightrec_client_ring(
            rp->client, i);
        if (r != NULL && (r->overflow || r->discard || r->missing))
            rings++;
    }
    fprintf(f, "LOSSY TRACE: %llu items lost (overflow %llu, discard %llu, "
            "missing %llu) on %zu ring%s.\n",
            (unsigned long long)(tot.overflow + tot.discard + tot.missing),
            (unsigned long long)tot.overflow,
            (unsigned long long)tot.discard,
            (unsigned long long)tot.missing, rings, rings == 1 ? "" : "s");
    fputs("  Counts and totals below are lower bounds; calls, waits, holds "
          "and spans cut\n  by a loss are left out; heap figures may be off "
          "by what the lost items did.\n", f);
}

int report_write_text(struct report *rp, FILE *f)
{
    const struct flightrec_stream_info *info = flightrec_client_info(
        rp->client);
    char a[64], b[64], name[300];
    uint64_t dur = rp->have_time ? rp->last_ns - rp->first_ns : 0;

    fprintf(f, "flightrec report: %s\n", safe_name(name, sizeof name,
                                                  rp->input_name));
    if (rp->input_error != NULL)
        fprintf(f, "INPUT ERROR: %s\n  The report covers what was read "
                "before it.\n", safe_name(name, sizeof name,
                                          rp->input_error));
    if (report_lossy(rp))
        text_losses(rp, f);
    fprintf(f, "stream: %s, %llu Hz; %llu events, %zu thread%s; duration "
            "%s\n", cli_stream_kind_name(info->kind),
            (unsigned long long)info->frequency,
            (unsigned long long)rp->events, rp->thread_count,
            rp->thread_count == 1 ? "" : "s",
            rp_fmt_duration(a, sizeof a, dur));
    if (rp->untimed || rp->late)
        fprintf(f, "untimed: %llu (counted, not paired), late: %llu\n",
                (unsigned long long)rp->untimed,
                (unsigned long long)rp->late);

    /* Locks. */
    fprintf(f, "\nlocks: %zu (contended: a wait over %s, or a failed "
            "trylock)\n", rp->lock_count,
            rp_fmt_duration(a, sizeof a, rp->contended_ns));
    if (rp->lock_count) {
        cell(f, "address", 18, 0);
        cell(f, "kind", 18, 0);
        cell(f, "acquired", 10, 1);
        cell(f, "contended", 10, 1);
        cell(f, "share", 7, 1);
        text_series_head(f, "wait");
        text_series_head(f, "hold");
        fputs("  threads\n", f);
    }
    for (size_t i = 0; i < rp->lock_count; i++) {
        struct rp_lock *l = rp->lock_list[i];
        uint64_t attempts = l->acquisitions + l->failures;
        snprintf(a, sizeof a, "0x%llx", (unsigned long long)l->address);
        cell(f, a, 18, 0);
        cell(f, lock_kinds(l->kinds, b, sizeof b), 18, 0);
        cell_u64(f, l->acquisitions, 10);
        cell_u64(f, l->contended, 10);
        if (attempts)
            snprintf(a, sizeof a, "%.1f%%",
                     100.0 * (double)l->contended / (double)attempts);
        else
            snprintf(a, sizeof a, "-");
        cell(f, a, 7, 1);
        text_series(f, &l->wait);
        text_series(f, &l->hold);
        fputs("  ", f);
        for (size_t t = 0; t < l->thread_count; t++) {
            const char *tn = thread_name_of(rp, l->threads[t].tid);
            fprintf(f, "%s%lld", t ? ", " : "",
                    (long long)l->threads[t].tid);
            if (tn[0] != '\0')
                fprintf(f, " (%s)", safe_name(name, sizeof name, tn));
        }
        fputc('\n', f);
    }

    /* Heap. */
    fputs("\nheap:", f);
    if (!rp->heap_seen) {
        fputs(" no allocator calls recorded\n", f);
    } else {
        fprintf(f, " in use at end %s in %llu allocation%s; peak %s",
                rp_fmt_bytes(a, sizeof a, rp->in_use),
                (unsigned long long)rp->live_count,
                rp->live_count == 1 ? "" : "s",
                rp_fmt_bytes(b, sizeof b, rp->peak));
        if (rp->peak != 0) {
            char t[40];
            *fr_fmt_seconds(t, rp->peak_ns) = '\0';
            fprintf(f, " at %s s", t);
        }
        fputc('\n', f);
        fputs("  calls:", f);
        for (unsigned k = 0; k < RP_ALLOC_KINDS; k++)
            if (rp->alloc_calls[k])
                fprintf(f, " %s %llu,", rp_alloc_kind_name(k),
                        (unsigned long long)rp->alloc_calls[k]);
        fprintf(f, " frees %llu (of unknown blocks %llu), failed %llu",
                (unsigned long long)rp->frees,
                (unsigned long long)rp->unknown_frees,
                (unsigned long long)rp->alloc_failed);
        if (rp->file_maps)
            fprintf(f, ", file mappings (not heap) %llu",
                    (unsigned long long)rp->file_maps);
        fputc('\n', f);
        size_t rows;
        struct size_row *sr = live_by_size(rp, &rows);
        if (rows) {
            fputs("  still allocated, by size:\n", f);
            cell(f, "size", 14, 1);
            cell(f, "count", 10, 1);
            cell(f, "bytes", 12, 1);
            fputc('\n', f);
        }
        for (size_t i = 0; sr != NULL && i < rows; i++) {
            cell_u64(f, sr[i].size, 14);
            cell_u64(f, sr[i].count, 10);
            cell(f, rp_fmt_bytes(a, sizeof a, sr[i].bytes), 12, 1);
            fputc('\n', f);
        }
        free(sr);
        uint64_t kc[RP_ALLOC_KINDS], kb[RP_ALLOC_KINDS];
        live_by_kind(rp, kc, kb);
        if (rp->live_count) {
            fputs("  still allocated, by call:\n", f);
            cell(f, "call", 16, 0);
            cell(f, "count", 8, 1);
            cell(f, "bytes", 12, 1);
            fputc('\n', f);
        }
        for (unsigned k = 0; k < RP_ALLOC_KINDS && rp->live_count; k++) {
            if (!kc[k])
                continue;
            cell(f, rp_alloc_kind_name(k), 16, 0);
            cell_u64(f, kc[k], 8);
            cell(f, rp_fmt_bytes(a, sizeof a, kb[k]), 12, 1);
            fputc('\n', f);
        }
    }

    /* Calls. */
    size_t used_calls = 0;
    for (size_t i = 0; i < rp->call_count; i++)
        used_calls += rp->calls[i].latency.count != 0;
    fprintf(f, "\ncalls: %zu\n", used_calls);
    if (used_calls) {
        cell(f, "call", 12, 0);
        cell(f, "fd", 6, 1);
        cell(f, "count", 10, 1);
        cell(f, "errors", 8, 1);
        cell(f, "bytes", 12, 1);
        text_series_head(f, "time");
        fputc('\n', f);
    }
    for (size_t i = 0; i < rp->call_count; i++) {
        struct rp_call *c = &rp->calls[i];
        if (c->latency.count == 0)
            continue;
        cell(f, c->name, 12, 0);
        cell(f, "all", 6, 1);
        cell_u64(f, c->latency.count, 10);
        cell_u64(f, c->errors, 8);
        cell(f, c->counts_bytes ? rp_fmt_bytes(a, sizeof a, c->bytes) : "-",
             12, 1);
        text_series(f, &c->latency);
        fputc('\n', f);
        size_t nf;
        const struct rp_call_fd **fds = call_fds(c, &nf);
        for (size_t j = 0; j < nf; j++) {
            struct rp_call_fd *fd = (struct rp_call_fd *)fds[j];
            cell(f, "", 12, 0);
            snprintf(a, sizeof a, "%lld", (long long)fd->fd);
            cell(f, a, 6, 1);
            cell_u64(f, fd->latency.count, 10);
            cell_u64(f, fd->errors, 8);
            cell(f, c->counts_bytes ? rp_fmt_bytes(a, sizeof a, fd->bytes)
                                    : "-", 12, 1);
            text_series(f, &fd->latency);
            fputc('\n', f);
        }
        free(fds);
    }

    /* Threads. */
    int sw = have_switches(rp);
    fprintf(f, "\nthreads: %zu\n", rp->thread_count);
    cell(f, "tid", 10, 1);
    fputs("  ", f);
    cell(f, "name", 16, 0);
    cell(f, "events", 10, 1);
    cell(f, "first s", 13, 1);
    cell(f, "last s", 13, 1);
    if (sw) {
        cell(f, "switches", 10, 1);
        cell(f, "cpu", 11, 1);
    }
    fputc('\n', f);
    for (size_t i = 0; i < rp->thread_count; i++) {
        struct rp_thread *t = rp->thread_list[i];
        if (t->tid >= 0)
            snprintf(a, sizeof a, "%lld", (long long)t->tid);
        else
            snprintf(a, sizeof a, "-");
        cell(f, a, 10, 1);
        fputs("  ", f);
        cell(f, safe_name(name, sizeof name, t->name), 16, 0);
        cell_u64(f, t->events, 10);
        *fr_fmt_seconds(a, t->first_ns) = '\0';
        *fr_fmt_seconds(b, t->last_ns) = '\0';
        cell(f, t->have_time ? a : "-", 13, 1);
        cell(f, t->have_time ? b : "-", 13, 1);
        if (sw) {
            cell_u64(f, t->switches_in, 10);
            cell_ns(f, t->cpu_ns, 11);
        }
        fputc('\n', f);
    }

    /* Spans. */
    fprintf(f, "\nspans: %zu\n", rp->span_count);
    if (rp->span_count) {
        cell(f, "name", 28, 0);
        cell(f, "count", 10, 1);
        text_series_head(f, "time");
        fputc('\n', f);
    }
    for (size_t i = 0; i < rp->span_count; i++) {
        struct rp_span *s = rp->span_list[i];
        cell(f, safe_name(name, sizeof name, s->name), 28, 0);
        cell_u64(f, s->duration.count, 10);
        text_series(f, &s->duration);
        fputc('\n', f);
    }
    if (rp->unmatched_exits || rp->cut_calls || rp->span_unmatched_ends ||
        rp->span_too_deep)
        fprintf(f, "\nunpaired: %llu exits without their entry, %llu calls "
                "without their exit, %llu span ends without their begin, "
                "%llu spans nested too deep\n",
                (unsigned long long)rp->unmatched_exits,
                (unsigned long long)rp->cut_calls,
                (unsigned long long)rp->span_unmatched_ends,
                (unsigned long long)rp->span_too_deep);
    (void)dur;
    return ferror(f) ? -1 : 0;
}

/*=====   JSON   =====*/

static void json_str(FILE *f, const char *s)
{
    size_t n = strlen(s);
    char *buf = malloc(6 * n + 3);

    if (buf == NULL) {
        fputs("\"\"", f);
        return;
    }
    fwrite(buf, 1, (size_t)(cli_fmt_json(buf, s, n) - buf), f);
    free(buf);
}

static void json_series(FILE *f, struct rp_series *s)
{
    struct rp_summary m;

    rp_series_summary(s, &m);
    fprintf(f, "{\"count\":%llu,\"total\":%llu", (unsigned long long)m.count,
            (unsigned long long)m.total);
    if (m.count)
        fprintf(f, ",\"min\":%llu,\"p50\":%llu,\"p99\":%llu,\"max\":%llu",
                (unsigned long long)m.min, (unsigned long long)m.p50,
                (unsigned long long)m.p99, (unsigned long long)m.max);
    else
        fputs(",\"min\":null,\"p50\":null,\"p99\":null,\"max\":null", f);
    fprintf(f, ",\"exact\":%s,\"histogram\":[", m.exact ? "true" : "false");
    int first = 1;
    for (unsigned k = 0; k < RP_LOG2_BUCKETS; k++) {
        if (s->log2[k] == 0)
            continue;
        uint64_t lo = k == 0 ? 0 : 1ull << (k - 1);
        fprintf(f, "%s[%llu,%llu]", first ? "" : ",", (unsigned long long)lo,
                (unsigned long long)s->log2[k]);
        first = 0;
    }
    fputs("]}", f);
}

int report_write_json(struct report *rp, FILE *f)
{
    const struct flightrec_stream_info *info = flightrec_client_info(
        rp->client);
    struct flightrec_client_totals tot;
    int lossy = report_lossy(rp);

    totals(rp, &tot);
    fputs("{\"report\":1,\"input\":", f);
    json_str(f, rp->input_name ? rp->input_name : "");
    fputs(",\"error\":", f);
    if (rp->input_error)
        json_str(f, rp->input_error);
    else
        fputs("null", f);
    fprintf(f, ",\"stream\":{\"kind\":\"%s\",\"frequency\":%llu}",
            cli_stream_kind_name(info->kind),
            (unsigned long long)info->frequency);
    if (rp->have_time)
        fprintf(f, ",\"first_ns\":%llu,\"last_ns\":%llu",
                (unsigned long long)rp->first_ns,
                (unsigned long long)rp->last_ns);
    else
        fputs(",\"first_ns\":null,\"last_ns\":null", f);
    fprintf(f, ",\"events\":%llu,\"untimed\":%llu,\"late\":%llu",
            (unsigned long long)rp->events, (unsigned long long)rp->untimed,
            (unsigned long long)rp->late);
    fprintf(f, ",\"lossy\":%s,\"lost\":{\"overflow\":%llu,\"discard\":%llu,"
            "\"missing\":%llu,\"rings\":[", lossy ? "true" : "false",
            (unsigned long long)tot.overflow,
            (unsigned long long)tot.discard,
            (unsigned long long)tot.missing);
    int first = 1;
    for (size_t i = 0; i < flightrec_client_ring_count(rp->client); i++) {
        const struct flightrec_ring_info *r = flightrec_client_ring(
            rp->client, i);
        if (r == NULL || !(r->overflow || r->discard || r->missing))
            continue;
        fprintf(f, "%s{\"ring\":%u,\"context\":%u,\"tid\":", first ? "" : ",",
                (unsigned)r->id, (unsigned)r->context);
        if (r->thread_id >= 0)
            fprintf(f, "%lld", (long long)r->thread_id);
        else
            fputs("null", f);
        fprintf(f, ",\"overflow\":%llu,\"discard\":%llu,\"missing\":%llu}",
                (unsigned long long)r->overflow,
                (unsigned long long)r->discard,
                (unsigned long long)r->missing);
        first = 0;
    }
    fputs("]},\"lower_bounds\":", f);
    /* Heap figures are not lower bounds: a lost free leaves a block in
     * use, a lost allocation frees an unknown block. */
    fputs(lossy ? "[\"locks\",\"calls\",\"threads\",\"spans\"],"
                  "\"uncertain\":[\"heap\"]"
                : "[],\"uncertain\":[]", f);
    fprintf(f, ",\"contended_threshold_ns\":%llu,\"locks\":[",
            (unsigned long long)rp->contended_ns);
    for (size_t i = 0; i < rp->lock_count; i++) {
        struct rp_lock *l = rp->lock_list[i];
        char kinds[64];
        uint64_t attempts = l->acquisitions + l->failures;
        fprintf(f, "%s{\"address\":\"0x%llx\",\"kind\":\"%s\","
                "\"acquisitions\":%llu,\"contended\":%llu,"
                "\"trylock_failures\":%llu,\"unwaited\":%llu,"
                "\"contended_share\":", i ? "," : "",
                (unsigned long long)l->address,
                lock_kinds(l->kinds, kinds, sizeof kinds),
                (unsigned long long)l->acquisitions,
                (unsigned long long)l->contended,
                (unsigned long long)l->failures,
                (unsigned long long)l->unwaited);
        if (attempts)
            fprintf(f, "%.6f", (double)l->contended / (double)attempts);
        else
            fputs("null", f);
        fputs(",\"wait_ns\":", f);
        json_series(f, &l->wait);
        fputs(",\"hold_ns\":", f);
        json_series(f, &l->hold);
        fputs(",\"threads\":[", f);
        for (size_t t = 0; t < l->thread_count; t++) {
            const struct rp_lock_thread *lt = &l->threads[t];
            fprintf(f, "%s{\"tid\":%lld,\"name\":", t ? "," : "",
                    (long long)lt->tid);
            json_str(f, thread_name_of(rp, lt->tid));
            fprintf(f, ",\"acquisitions\":%llu,\"contended\":%llu,"
                    "\"wait_ns\":%llu,\"hold_ns\":%llu}",
                    (unsigned long long)lt->acquisitions,
                    (unsigned long long)lt->contended,
                    (unsigned long long)lt->wait_ns,
                    (unsigned long long)lt->hold_ns);
        }
        fputs("]}", f);
    }

    /* Heap. */
    fprintf(f, "],\"heap\":{\"recorded\":%s,\"in_use_bytes\":%llu,"
            "\"live_allocations\":%llu,\"peak_bytes\":%llu,\"peak_ns\":",
            rp->heap_seen ? "true" : "false",
            (unsigned long long)rp->in_use,
            (unsigned long long)rp->live_count,
            (unsigned long long)rp->peak);
    if (rp->peak)
        fprintf(f, "%llu", (unsigned long long)rp->peak_ns);
    else
        fputs("null", f);
    fputs(",\"calls\":{", f);
    for (unsigned k = 0; k < RP_ALLOC_KINDS; k++)
        fprintf(f, "%s\"%s\":%llu", k ? "," : "", rp_alloc_kind_name(k),
                (unsigned long long)rp->alloc_calls[k]);
    fprintf(f, "},\"frees\":%llu,\"unknown_frees\":%llu,\"failed\":%llu,"
            "\"file_mappings\":%llu,\"live_by_size\":[",
            (unsigned long long)rp->frees,
            (unsigned long long)rp->unknown_frees,
            (unsigned long long)rp->alloc_failed,
            (unsigned long long)rp->file_maps);
    size_t rows;
    struct size_row *sr = live_by_size(rp, &rows);
    for (size_t i = 0; sr != NULL && i < rows; i++)
        fprintf(f, "%s{\"size\":%llu,\"count\":%llu,\"bytes\":%llu}",
                i ? "," : "", (unsigned long long)sr[i].size,
                (unsigned long long)sr[i].count,
                (unsigned long long)sr[i].bytes);
    free(sr);
    fputs("],\"live_by_call\":[", f);
    uint64_t kc[RP_ALLOC_KINDS], kb[RP_ALLOC_KINDS];
    live_by_kind(rp, kc, kb);
    first = 1;
    for (unsigned k = 0; k < RP_ALLOC_KINDS; k++) {
        if (!kc[k])
            continue;
        fprintf(f, "%s{\"call\":\"%s\",\"count\":%llu,\"bytes\":%llu}",
                first ? "" : ",", rp_alloc_kind_name(k),
                (unsigned long long)kc[k], (unsigned long long)kb[k]);
        first = 0;
    }
    fprintf(f, "],\"samples\":{\"origin_ns\":%llu,\"bucket_ns\":%llu,"
            "\"points\":[", (unsigned long long)rp->origin_ns,
            (unsigned long long)rp->bucket_ns);
    first = 1;
    for (unsigned i = 0; i < rp->buckets_used; i++) {
        if (!rp->heap_set[i])
            continue;
        fprintf(f, "%s[%llu,%llu,%llu]", first ? "" : ",",
                (unsigned long long)(rp->origin_ns +
                                     (uint64_t)i * rp->bucket_ns),
                (unsigned long long)rp->heap_max[i],
                (unsigned long long)rp->heap_end[i]);
        first = 0;
    }
    fputs("]}},\"calls\":[", f);
    first = 1;
    for (size_t i = 0; i < rp->call_count; i++) {
        struct rp_call *c = &rp->calls[i];
        if (c->latency.count == 0)
            continue;
        fprintf(f, "%s{\"call\":\"%s\",\"errors\":%llu,\"bytes\":%llu,"
                "\"latency_ns\":", first ? "" : ",", c->name,
                (unsigned long long)c->errors, (unsigned long long)c->bytes);
        json_series(f, &c->latency);
        fputs(",\"fds\":[", f);
        size_t nf;
        const struct rp_call_fd **fds = call_fds(c, &nf);
        for (size_t j = 0; j < nf; j++) {
            struct rp_call_fd *fd = (struct rp_call_fd *)fds[j];
            fprintf(f, "%s{\"fd\":%lld,\"errors\":%llu,\"bytes\":%llu,"
                    "\"latency_ns\":", j ? "," : "", (long long)fd->fd,
                    (unsigned long long)fd->errors,
                    (unsigned long long)fd->bytes);
            json_series(f, &fd->latency);
            fputc('}', f);
        }
        free(fds);
        fputs("]}", f);
        first = 0;
    }
    int sw = have_switches(rp);
    fputs("],\"threads\":[", f);
    for (size_t i = 0; i < rp->thread_count; i++) {
        struct rp_thread *t = rp->thread_list[i];
        fputs(i ? ",{\"tid\":" : "{\"tid\":", f);
        if (t->tid >= 0)
            fprintf(f, "%lld", (long long)t->tid);
        else
            fputs("null", f);
        fputs(",\"name\":", f);
        json_str(f, t->name);
        fprintf(f, ",\"events\":%llu", (unsigned long long)t->events);
        if (t->have_time)
            fprintf(f, ",\"first_ns\":%llu,\"last_ns\":%llu",
                    (unsigned long long)t->first_ns,
                    (unsigned long long)t->last_ns);
        else
            fputs(",\"first_ns\":null,\"last_ns\":null", f);
        if (sw)
            fprintf(f, ",\"switches\":%llu,\"cpu_ns\":%llu}",
                    (unsigned long long)t->switches_in,
                    (unsigned long long)t->cpu_ns);
        else
            fputs(",\"switches\":null,\"cpu_ns\":null}", f);
    }
    fputs("],\"spans\":[", f);
    for (size_t i = 0; i < rp->span_count; i++) {
        struct rp_span *s = rp->span_list[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        json_str(f, s->name);
        fputs(",\"duration_ns\":", f);
        json_series(f, &s->duration);
        fputc('}', f);
    }
    fprintf(f, "],\"unpaired\":{\"exits\":%llu,\"calls\":%llu,"
            "\"span_ends\":%llu,\"spans_too_deep\":%llu}}\n",
            (unsigned long long)rp->unmatched_exits,
            (unsigned long long)rp->cut_calls,
            (unsigned long long)rp->span_unmatched_ends,
            (unsigned long long)rp->span_too_deep);
    return ferror(f) ? -1 : 0;
}

/*=====   HTML   =====*/

/* Text from the stream for HTML: control characters escaped as on the
 * terminal, then the HTML specials. */
static void html_text(struct fr_out *o, const char *s)
{
    size_t n = strlen(s);
    char *esc = malloc(4 * n + 1);

    if (esc == NULL)
        return;
    *cli_fmt_escaped(esc, s, n) = '\0';
    for (const char *p = esc; *p; p++) {
        switch (*p) {
        case '&': fr_out_str(o, "&amp;"); break;
        case '<': fr_out_str(o, "&lt;"); break;
        case '>': fr_out_str(o, "&gt;"); break;
        case '"': fr_out_str(o, "&quot;"); break;
        case '\'': fr_out_str(o, "&#39;"); break;
        default: fr_out_write(o, p, 1); break;
        }
    }
    free(esc);
}

static void html_td_ns(struct fr_out *o, uint64_t ns)
{
    char b[32];
    fr_out_printf(o, "<td class=n data-ns=\"%llu\">%s</td>",
                  (unsigned long long)ns, rp_fmt_duration(b, sizeof b, ns));
}

static void html_series_cells(struct fr_out *o, struct rp_series *s)
{
    struct rp_summary m;

    rp_series_summary(s, &m);
    if (m.count == 0) {
        fr_out_str(o, "<td class=n>-</td><td class=n>-</td>"
                      "<td class=n>-</td><td class=n>-</td>");
        return;
    }
    html_td_ns(o, m.total);
    html_td_ns(o, m.p50);
    html_td_ns(o, m.p99);
    html_td_ns(o, m.max);
}

static void html_series_head(struct fr_out *o, const char *what)
{
    fr_out_printf(o, "<th>%s total</th><th>%s p50</th><th>%s p99</th>"
                  "<th>%s max</th>", what, what, what, what);
}

/* A histogram of a series over powers of two, as an SVG bar chart. */
static void html_histogram(struct fr_out *o, const struct report *rp,
                           const char *title, const char *label,
                           const struct rp_series *s)
{
    unsigned lo = RP_LOG2_BUCKETS, hi = 0;
    uint64_t peak = 0;
    char b[32];

    (void)rp;
    for (unsigned k = 0; k < RP_LOG2_BUCKETS; k++) {
        if (s->log2[k] == 0)
            continue;
        if (k < lo)
            lo = k;
        hi = k;
        if (s->log2[k] > peak)
            peak = s->log2[k];
    }
    if (peak == 0)
        return;
    unsigned n = hi - lo + 1, w = 360, h = 120, bar = (w - 20) / n;
    if (bar > 40)
        bar = 40;
    fr_out_str(o, "<figure class=hist><figcaption>");
    fr_out_str(o, title);
    fr_out_str(o, ": ");
    html_text(o, label);
    fr_out_printf(o, "</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" "
                  "width=\"%u\" height=\"%u\" role=\"img\">", w, h + 30);
    for (unsigned k = lo; k <= hi; k++) {
        unsigned x = 10 + (k - lo) * bar;
        unsigned bh = (unsigned)((double)s->log2[k] * h / (double)peak);
        if (bh == 0 && s->log2[k] != 0)
            bh = 1; /* a value is there, however few */
        uint64_t from = k == 0 ? 0 : 1ull << (k - 1);
        fr_out_printf(o, "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" "
                      "class=bar><title>%s and up: %llu</title></rect>",
                      x, h - bh, bar > 2 ? bar - 2 : 1, bh,
                      rp_fmt_duration(b, sizeof b, from),
                      (unsigned long long)s->log2[k]);
    }
    fr_out_printf(o, "<text x=\"10\" y=\"%u\" class=axis>%s</text>", h + 14,
                  rp_fmt_duration(b, sizeof b, lo == 0 ? 0 : 1ull << (lo - 1)));
    fr_out_printf(o, "<text x=\"%u\" y=\"%u\" class=axis "
                  "text-anchor=\"end\">%s</text>", 10 + n * bar, h + 28,
                  rp_fmt_duration(b, sizeof b, 1ull << (hi < 64 ? hi : 63)));
    fr_out_str(o, "</svg></figure>");
}

static void html_heap_chart(struct fr_out *o, const struct report *rp)
{
    unsigned w = 720, h = 180;
    uint64_t top = rp->peak ? rp->peak : 1;
    char b[32];
    uint64_t prev = 0;
    int started = 0;

    fr_out_printf(o, "<figure><figcaption>heap in use over time (peak "
                  "%s)</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" "
                  "width=\"%u\" height=\"%u\" role=\"img\" id=heap-chart>"
                  "<path class=line d=\"", rp_fmt_bytes(b, sizeof b, rp->peak),
                  w, h + 20);
    unsigned used = rp->buckets_used ? rp->buckets_used : 1;
    for (unsigned i = 0; i < used; i++) {
        uint64_t v = rp->heap_set[i] ? rp->heap_max[i] : prev;
        if (rp->heap_set[i])
            prev = rp->heap_end[i];
        if (!started && !rp->heap_set[i])
            continue;
        unsigned x = (unsigned)((double)i * w / used);
        unsigned x2 = (unsigned)((double)(i + 1) * w / used);
        unsigned y = h - (unsigned)((double)v * (h - 10) / (double)top);
        fr_out_printf(o, "%s%u %u L%u %u ", started ? "L" : "M", x, y, x2, y);
        started = 1;
    }
    fr_out_str(o, "\"/>");
    char t0[40], t1[40];
    *fr_fmt_seconds(t0, rp->origin_ns) = '\0';
    *fr_fmt_seconds(t1, rp->origin_ns + (uint64_t)used * rp->bucket_ns) =
        '\0';
    fr_out_printf(o, "<text x=\"0\" y=\"%u\" class=axis>%s s</text>"
                  "<text x=\"%u\" y=\"%u\" class=axis text-anchor=\"end\">"
                  "%s s</text></svg></figure>", h + 16, t0, w, h + 16, t1);
}

static void html_timeline(struct fr_out *o, const struct report *rp)
{
    unsigned label = 160, w = 560, row = 18;
    size_t rows = rp->thread_count < 64 ? rp->thread_count : 64;
    unsigned used = rp->buckets_used ? rp->buckets_used : 1;
    uint32_t peak = 1;

    for (size_t i = 0; i < rows; i++)
        for (unsigned k = 0; rp->thread_list[i]->timeline && k < used; k++)
            if (rp->thread_list[i]->timeline[k] > peak)
                peak = rp->thread_list[i]->timeline[k];
    fr_out_printf(o, "<figure><figcaption>threads over time (shade: events "
                  "per interval; bar below: on CPU)</figcaption>"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
                  "height=\"%zu\" role=\"img\" id=timeline>", label + w,
                  rows * row + 4);
    for (size_t i = 0; i < rows; i++) {
        const struct rp_thread *t = rp->thread_list[i];
        unsigned y = (unsigned)i * row;
        fr_out_printf(o, "<text x=\"0\" y=\"%u\" class=label>", y + 12);
        if (t->tid >= 0)
            fr_out_printf(o, "%lld ", (long long)t->tid);
        html_text(o, t->name[0] ? t->name : "-");
        fr_out_str(o, "</text>");
        for (unsigned k = 0; t->timeline && k < used; k++) {
            if (t->timeline[k] == 0)
                continue;
            unsigned x = label + (unsigned)((double)k * w / used);
            unsigned x2 = label + (unsigned)((double)(k + 1) * w / used);
            double op = 0.15 + 0.85 * (double)t->timeline[k] / (double)peak;
            fr_out_printf(o, "<rect x=\"%u\" y=\"%u\" width=\"%u\" "
                          "height=\"11\" class=act opacity=\"%.2f\"><title>"
                          "%u events</title></rect>", x, y + 2,
                          x2 > x ? x2 - x : 1, op,
                          (unsigned)t->timeline[k]);
        }
        for (unsigned k = 0; t->cpu_timeline && k < used; k++) {
            if (t->cpu_timeline[k] == 0)
                continue;
            unsigned x = label + (unsigned)((double)k * w / used);
            unsigned x2 = label + (unsigned)((double)(k + 1) * w / used);
            double share = (double)t->cpu_timeline[k] / (double)rp->bucket_ns;
            fr_out_printf(o, "<rect x=\"%u\" y=\"%u\" width=\"%u\" "
                          "height=\"3\" class=cpu opacity=\"%.2f\"/>", x,
                          y + 14, x2 > x ? x2 - x : 1,
                          share > 1 ? 1.0 : share);
        }
    }
    fr_out_str(o, "</svg></figure>");
}

static const char html_style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}"
    "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "th,td{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}"
    ".warn{background:#fff3cd;border:1px solid #e0b000;padding:.6em 1em}"
    ".err{background:#fde2e1;border:1px solid #c33;padding:.6em 1em}"
    "figure{display:inline-block;margin:.5em 1em .5em 0}"
    "figcaption{font-size:.9em;color:#555}"
    ".bar{fill:#4a7ab5}.act{fill:#3b8b5a}.cpu{fill:#c05030}"
    ".line{fill:none;stroke:#4a7ab5;stroke-width:2}"
    ".axis,.label{font-size:11px;fill:#555}";

int report_write_html(struct report *rp, const char *path)
{
    struct fr_out *o = fr_out_open(path);
    const struct flightrec_stream_info *info = flightrec_client_info(
        rp->client);
    struct flightrec_client_totals tot;
    char a[64], b[64];

    if (o == NULL) {
        cli_msg(CLI_ERROR, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    totals(rp, &tot);
    /* The policy keeps the page self-contained in the browser too: any
     * load from elsewhere would be refused (and logged). */
    fr_out_str(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
                  "charset=\"utf-8\"><meta http-equiv=\"Content-Security-"
                  "Policy\" content=\"default-src 'none'; style-src "
                  "'unsafe-inline'\"><title>flightrec report: ");
    html_text(o, rp->input_name ? rp->input_name : "");
    fr_out_printf(o, "</title><style>%s</style></head><body>\n", html_style);
    fr_out_str(o, "<h1>flightrec report: ");
    html_text(o, rp->input_name ? rp->input_name : "");
    fr_out_str(o, "</h1>\n");
    if (rp->input_error) {
        fr_out_str(o, "<p class=err id=input-error>Input error: ");
        html_text(o, rp->input_error);
        fr_out_str(o, ". The report covers what was read before it.</p>\n");
    }
    if (report_lossy(rp))
        fr_out_printf(o, "<p class=warn id=lossy>Lossy trace: %llu items "
                      "lost (overflow %llu, discard %llu, missing %llu). "
                      "Counts and totals are lower bounds; calls, waits, "
                      "holds and spans cut by a loss are left out; heap "
                      "figures may be off by what the lost items did.</p>\n",
                      (unsigned long long)(tot.overflow + tot.discard +
                                           tot.missing),
                      (unsigned long long)tot.overflow,
                      (unsigned long long)tot.discard,
                      (unsigned long long)tot.missing);
    fr_out_printf(o, "<p id=summary>stream %s, %llu Hz; %llu events, %zu "
                  "thread%s; duration %s</p>\n",
                  cli_stream_kind_name(info->kind),
                  (unsigned long long)info->frequency,
                  (unsigned long long)rp->events, rp->thread_count,
                  rp->thread_count == 1 ? "" : "s",
                  rp_fmt_duration(a, sizeof a, rp->have_time
                                  ? rp->last_ns - rp->first_ns : 0));

    /* Locks. */
    fr_out_printf(o, "<h2>Locks: %zu</h2><p>Contended: a wait over %s, or a "
                  "failed trylock.</p>\n", rp->lock_count,
                  rp_fmt_duration(a, sizeof a, rp->contended_ns));
    if (rp->lock_count) {
        fr_out_str(o, "<table id=locks><tr><th>address</th><th>kind</th>"
                      "<th>acquired</th><th>contended</th><th>share</th>");
        html_series_head(o, "wait");
        html_series_head(o, "hold");
        fr_out_str(o, "<th>threads</th></tr>\n");
    }
    for (size_t i = 0; i < rp->lock_count; i++) {
        struct rp_lock *l = rp->lock_list[i];
        uint64_t attempts = l->acquisitions + l->failures;
        fr_out_printf(o, "<tr><td>0x%llx</td><td>%s</td><td class=n>%llu"
                      "</td><td class=n>%llu</td><td class=n>",
                      (unsigned long long)l->address,
                      lock_kinds(l->kinds, a, sizeof a),
                      (unsigned long long)l->acquisitions,
                      (unsigned long long)l->contended);
        if (attempts)
            fr_out_printf(o, "%.1f%%", 100.0 * (double)l->contended /
                                           (double)attempts);
        else
            fr_out_str(o, "-");
        fr_out_str(o, "</td>");
        html_series_cells(o, &l->wait);
        html_series_cells(o, &l->hold);
        fr_out_str(o, "<td>");
        for (size_t t = 0; t < l->thread_count; t++) {
            const char *tn = thread_name_of(rp, l->threads[t].tid);
            fr_out_printf(o, "%s%lld", t ? ", " : "",
                          (long long)l->threads[t].tid);
            if (tn[0]) {
                fr_out_str(o, " (");
                html_text(o, tn);
                fr_out_str(o, ")");
            }
        }
        fr_out_str(o, "</td></tr>\n");
    }
    if (rp->lock_count)
        fr_out_str(o, "</table>\n");
    for (size_t i = 0; i < rp->lock_count && i < 8; i++) {
        snprintf(a, sizeof a, "0x%llx",
                 (unsigned long long)rp->lock_list[i]->address);
        html_histogram(o, rp, "lock wait", a, &rp->lock_list[i]->wait);
        html_histogram(o, rp, "lock hold", a, &rp->lock_list[i]->hold);
    }

    /* Heap. */
    fr_out_str(o, "\n<h2>Heap</h2>\n");
    if (!rp->heap_seen) {
        fr_out_str(o, "<p>No allocator calls recorded.</p>\n");
    } else {
        fr_out_printf(o, "<p id=heap-summary>In use at the end: <b>%s</b> "
                      "(%llu bytes) in %llu allocations; peak %s (%llu "
                      "bytes). Frees %llu (of unknown blocks %llu), failed "
                      "%llu.</p>\n", rp_fmt_bytes(a, sizeof a, rp->in_use),
                      (unsigned long long)rp->in_use,
                      (unsigned long long)rp->live_count,
                      rp_fmt_bytes(b, sizeof b, rp->peak),
                      (unsigned long long)rp->peak,
                      (unsigned long long)rp->frees,
                      (unsigned long long)rp->unknown_frees,
                      (unsigned long long)rp->alloc_failed);
        html_heap_chart(o, rp);
        size_t rows;
        struct size_row *sr = live_by_size(rp, &rows);
        if (rows)
            fr_out_str(o, "<h3>Still allocated, by size</h3><table "
                          "id=live-by-size><tr><th>size</th><th>count</th>"
                          "<th>bytes</th></tr>\n");
        for (size_t i = 0; sr != NULL && i < rows; i++)
            fr_out_printf(o, "<tr><td class=n>%llu</td><td class=n>%llu</td>"
                          "<td class=n>%llu</td></tr>\n",
                          (unsigned long long)sr[i].size,
                          (unsigned long long)sr[i].count,
                          (unsigned long long)sr[i].bytes);
        if (rows)
            fr_out_str(o, "</table>\n");
        free(sr);
        uint64_t kc[RP_ALLOC_KINDS], kb[RP_ALLOC_KINDS];
        live_by_kind(rp, kc, kb);
        if (rp->live_count) {
            fr_out_str(o, "<h3>Still allocated, by call</h3><table "
                          "id=live-by-call><tr><th>call</th><th>count</th>"
                          "<th>bytes</th></tr>\n");
            for (unsigned k = 0; k < RP_ALLOC_KINDS; k++)
                if (kc[k])
                    fr_out_printf(o, "<tr><td>%s</td><td class=n>%llu</td>"
                                  "<td class=n>%llu</td></tr>\n",
                                  rp_alloc_kind_name(k),
                                  (unsigned long long)kc[k],
                                  (unsigned long long)kb[k]);
            fr_out_str(o, "</table>\n");
        }
    }

    /* Calls. */
    size_t used_calls = 0;
    for (size_t i = 0; i < rp->call_count; i++)
        used_calls += rp->calls[i].latency.count != 0;
    fr_out_printf(o, "\n<h2>Calls: %zu</h2>\n", used_calls);
    if (used_calls == 0)
        fr_out_str(o, "<p>No I/O or system calls recorded.</p>\n");
    else
        fr_out_str(o, "<table id=calls><tr><th>call</th><th>fd</th>"
                      "<th>count</th><th>errors</th><th>bytes</th>");
    if (used_calls) {
        html_series_head(o, "time");
        fr_out_str(o, "</tr>\n");
    }
    for (size_t i = 0; i < rp->call_count; i++) {
        struct rp_call *c = &rp->calls[i];
        if (c->latency.count == 0)
            continue;
        fr_out_printf(o, "<tr><td>%s</td><td>all</td><td class=n>%llu</td>"
                      "<td class=n>%llu</td><td class=n>%llu</td>", c->name,
                      (unsigned long long)c->latency.count,
                      (unsigned long long)c->errors,
                      (unsigned long long)c->bytes);
        html_series_cells(o, &c->latency);
        fr_out_str(o, "</tr>\n");
        size_t nf;
        const struct rp_call_fd **fds = call_fds(c, &nf);
        for (size_t j = 0; j < nf; j++) {
            struct rp_call_fd *fd = (struct rp_call_fd *)fds[j];
            fr_out_printf(o, "<tr><td></td><td class=n>%lld</td><td class=n>"
                          "%llu</td><td class=n>%llu</td><td class=n>%llu"
                          "</td>", (long long)fd->fd,
                          (unsigned long long)fd->latency.count,
                          (unsigned long long)fd->errors,
                          (unsigned long long)fd->bytes);
            html_series_cells(o, &fd->latency);
            fr_out_str(o, "</tr>\n");
        }
        free(fds);
    }
    if (used_calls)
        fr_out_str(o, "</table>\n");
    for (size_t i = 0, shown = 0; i < rp->call_count && shown < 8; i++) {
        if (rp->calls[i].latency.count == 0)
            continue;
        html_histogram(o, rp, "call time", rp->calls[i].name,
                       &rp->calls[i].latency);
        shown++;
    }

    /* Threads. */
    int sw = have_switches(rp);
    fr_out_printf(o, "\n<h2>Threads: %zu</h2>\n<table id=threads><tr>"
                  "<th>tid</th><th>name</th><th>events</th><th>first s</th>"
                  "<th>last s</th>%s</tr>\n", rp->thread_count,
                  sw ? "<th>switches</th><th>cpu</th>" : "");
    for (size_t i = 0; i < rp->thread_count; i++) {
        struct rp_thread *t = rp->thread_list[i];
        if (t->tid >= 0)
            fr_out_printf(o, "<tr><td class=n>%lld</td><td>",
                          (long long)t->tid);
        else
            fr_out_str(o, "<tr><td class=n>-</td><td>");
        html_text(o, t->name[0] ? t->name : "-");
        *fr_fmt_seconds(a, t->first_ns) = '\0';
        *fr_fmt_seconds(b, t->last_ns) = '\0';
        fr_out_printf(o, "</td><td class=n>%llu</td><td class=n>%s</td>"
                      "<td class=n>%s</td>", (unsigned long long)t->events,
                      t->have_time ? a : "-", t->have_time ? b : "-");
        if (sw) {
            fr_out_printf(o, "<td class=n>%llu</td>",
                          (unsigned long long)t->switches_in);
            html_td_ns(o, t->cpu_ns);
        }
        fr_out_str(o, "</tr>\n");
    }
    fr_out_str(o, "</table>\n");
    html_timeline(o, rp);

    /* Spans. */
    fr_out_printf(o, "\n<h2>Spans: %zu</h2>\n", rp->span_count);
    if (rp->span_count) {
        fr_out_str(o, "<table id=spans><tr><th>name</th><th>count</th>");
        html_series_head(o, "time");
        fr_out_str(o, "</tr>\n");
        for (size_t i = 0; i < rp->span_count; i++) {
            struct rp_span *s = rp->span_list[i];
            fr_out_str(o, "<tr><td>");
            html_text(o, s->name);
            fr_out_printf(o, "</td><td class=n>%llu</td>",
                          (unsigned long long)s->duration.count);
            html_series_cells(o, &s->duration);
            fr_out_str(o, "</tr>\n");
        }
        fr_out_str(o, "</table>\n");
        for (size_t i = 0; i < rp->span_count && i < 8; i++)
            html_histogram(o, rp, "span", rp->span_list[i]->name,
                           &rp->span_list[i]->duration);
    }
    fr_out_str(o, "\n</body></html>\n");
    if (fr_out_close(o) != 0) {
        cli_msg(CLI_ERROR, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
