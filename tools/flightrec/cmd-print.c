/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief flightrec print: the records of a stream, one line (or CSV row)
 * each, in time order.
 *
 * Numbers are formatted by hand into one large buffer written in big blocks;
 * there is no stdio call per record.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "convert-symbols.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: flightrec print [options] [FILE|-]\n"
    "\n"
    "Print the records of FILE (or standard input) in time order, one per\n"
    "line: time, [ring], thread id, thread name, event, data.\n"
    "\n"
    "Options:\n"
    "  --csv                  write CSV rows with the header\n"
    "                         time_ns,ring,thread,event,event_id,data,"
    "thread_name,kind,count,flags,function\n"
    "                         (function: the name of a FUNCTION_ENTRY/EXIT's\n"
    "                         function, empty where it is not named)\n"
    "  --json                 write one JSON object per line, with the CSV\n"
    "                         columns as keys (null when empty, data a hex\n"
    "                         string, flags a list; function only where it\n"
    "                         is named)\n"
    "  --wall                 wall-clock time (ISO-8601 UTC) instead of\n"
    "                         seconds since the first record\n"
    "  --event=NAME|ID[,...]  only these events (repeatable); a NAME may\n"
    "                         be a glob: --event='MUTEX_*'\n"
    "  --thread=TID|NAME      only records of this thread (repeatable);\n"
    "                         a NAME may be a glob: --thread='worker*'\n"
    "  --from=SECONDS         only records at or after this time\n"
    "  --to=SECONDS           only records at or before this time\n"
    "                         (both relative to the first record)\n"
    "  --window=SECONDS       merge window when reading a pipe (default:\n"
    "                         twice the stream's sync period, at least 2)\n"
    "  --memory-limit=SIZE    stop when the decoder would hold more (e.g.\n"
    "                         512M; default half the RAM; 0: no limit)\n"
    "  --no-symbols           FUNCTION_ENTRY/EXIT addresses without names\n"
    "                         (default: named from the recorded objects'\n"
    "                         files, where they can be)\n"
    "  --symbols              name them (the default)\n"
    "\n"
    "A pattern that matches nothing in the stream is reported at the end.\n"
    "Names from the stream are printed with control characters escaped\n"
    "(\\n, \\e, \\xHH).  On a pipe, records are shown whenever the input\n"
    "pauses.\n"
    "  -h, --help             show this help\n";

/* The output buffer: written when full, at the end, and whenever a pipe's
 * input pauses. */
#define PRINT_BUFFER (1u << 20)

static const char csv_header[] =
    "time_ns,ring,thread,event,event_id,data,thread_name,kind,count,flags,"
    "function\n";

/* Names longer than this are cut when printed (keeps a record in one
 * buffer reservation); the stream's names are shorter. */
#define NAME_MAX_PRINT 64u
/* Room for an escaped name (cli_fmt_escaped() writes up to 4 bytes per
 * byte). */
#define NAME_TEXT_MAX (4 * NAME_MAX_PRINT)
/* Text shorter than this is copied with one fixed-size memcpy (the
 * reservation has room for the bytes past its end). */
#define FIXED_COPY 64u

/* An event name as last returned by the client, raw (CSV, JSON) and
 * escaped for text.  Valid while the client's event_names_changes count is
 * the one it was made at: the client rewrites names in place, so the
 * pointer alone cannot tell a renamed event. */
struct name_cache {
    uint64_t names_changes;  /* count + 1 when filled; 0: empty */
    const char *ptr;
    uint32_t raw_len;
    uint32_t len;
    uint32_t kind;   /* FLIGHTREC_EVENT_* the stream defined */
    /* SPECIAL_*: what on_record() does for the event beyond printing it,
     * one test for the common event that needs nothing. */
    uint32_t special;
    char text[NAME_TEXT_MAX];
};

#define SPECIAL_SPAN 1u    /* a span begin or end: track_span() */
#define SPECIAL_OBJECT 2u  /* an object record: symbols from now on */

/* Per ring: the text "[RING] TID NAME " as last formatted (the name
 * escaped), valid while the ring's owner is the same. */
#define PREFIX_MAX (48 + NAME_TEXT_MAX)
#define RING_SLOTS 64
struct ring_cache {
    const struct flightrec_ring_info *ri;
    int64_t tid;
    uint32_t ring;
    uint32_t len;
    int short16;  /* the name ends within its first 16 bytes */
    char name[64];
    char text[PREFIX_MAX];
};

/* Open spans per ring (rings below SPAN_RINGS), for the duration an end
 * shows: the decoder delivers each ring's records in order. */
#define SPAN_RINGS 1024u
#define SPAN_DEPTH 32u
struct span_stack {
    int64_t tid;             /* the owner the spans belong to */
    uint32_t depth;
    uint32_t event[SPAN_DEPTH];
    uint64_t begin_ns[SPAN_DEPTH];
};

struct print_ctx {
    flightrec_client *client;
    struct fr_out *out;
    int csv;
    int json;
    int wall;
    uint64_t wall_saturated;  /* records whose wall time did not fit */
    int filter_time;
    int filtering;    /* any of --event, --thread, --from, --to */
    int no_realtime;  /* --wall on a stream without a realtime reference */
    int started;
    uint64_t realtime0;
    int have_base;
    uint64_t base_ns;
    uint64_t from_ns, to_ns;
    struct cli_event_filter events;
    struct cli_thread_filter threads;
    struct name_cache names[FLIGHTREC_EVENT_COUNT];
    struct span_stack *spans;   /* SPAN_RINGS, made at the first span */
    int span_state;   /* the current end: 0 untracked, 1 matched, 2 none */
    uint64_t span_ns; /* its duration when matched */
    struct ring_cache rings[RING_SLOTS];
    /* "S.NNNNN" for the 10 us last printed (the time without its last 4
     * digits): consecutive records mostly share it. */
    int sec_valid;
    uint32_t sec_len;
    uint64_t sec;   /* the time / 10,000 it was made for */
    char sec_text[32];
    /* Function names (print only; connect --print shows addresses). */
    int symbols_wanted;
    struct fr_symbols *symbols;
    /* An object record came: from then on every record goes to symbols
     * (before it, fr_symbols_record() has nothing to do). */
    int objects_seen;
    uint32_t func_entry, func_exit;   /* their ids in this stream */
    uint32_t object_path;             /* OBJECT_PATH (flightrec streams) */
    size_t word_bytes;
};

static inline struct name_cache *event_name(struct print_ctx *p, uint32_t id)
{
    struct name_cache *nc = &p->names[id & FLIGHTREC_EVENT_MASK];
    uint64_t changes = flightrec_client_event_names_changes(p->client);

    if (FLIGHTREC_UNLIKELY(nc->names_changes != changes + 1)) {
        const char *n = flightrec_client_event_name(p->client, id);
        size_t len = strnlen(n, NAME_MAX_PRINT);
        nc->names_changes = changes + 1;
        nc->ptr = n;
        nc->raw_len = (uint32_t)len;
        nc->len = (uint32_t)(cli_fmt_escaped(nc->text, n, len) - nc->text);
        nc->kind = flightrec_client_event_kind(p->client, id);
        nc->special = 0;
        if (nc->kind == FLIGHTREC_EVENT_SPAN_BEGIN ||
            nc->kind == FLIGHTREC_EVENT_SPAN_END)
            nc->special |= SPECIAL_SPAN;
        if ((id & FLIGHTREC_EVENT_MASK) >= FLIGHTREC_EV_OBJECT_LOAD &&
            (id & FLIGHTREC_EVENT_MASK) <= FLIGHTREC_EV_OBJECT_BUILD_ID)
            nc->special |= SPECIAL_OBJECT; /* as fr_is_object_record() */
    }
    return nc;
}

/* Copies text of @a len bytes; the destination has FIXED_COPY bytes of
 * room past it. */
static inline char *put_text(char *q, const char *text, size_t len)
{
    if (FLIGHTREC_LIKELY(len <= FIXED_COPY))
        memcpy(q, text, FIXED_COPY);
    else
        memcpy(q, text, len);
    return q + len;
}

/* Wall-clock nanoseconds of a record, saturated (and counted) past 2^64. */
static inline uint64_t wall_ns(struct print_ctx *p, uint64_t time_ns)
{
    if (FLIGHTREC_UNLIKELY(p->realtime0 > UINT64_MAX - time_ns)) {
        p->wall_saturated++;
        return UINT64_MAX;
    }
    return p->realtime0 + time_ns;
}

/* fr_fmt_seconds() with all but the last 4 digits from the cache:
 * records in time order mostly fall in the same 10 us as the one before. */
static inline char *fmt_seconds(struct print_ctx *p, char *q, uint64_t ns)
{
    uint64_t key = ns / 10000u;

    if (FLIGHTREC_UNLIKELY(!p->sec_valid || key != p->sec)) {
        uint64_t s = ns / 1000000000u;
        char *e = fr_fmt_u64(p->sec_text, s);
        *e++ = '.';
        e = fr_fmt_u64_zero(e, (ns - s * 1000000000u) / 10000u, 5);
        p->sec_len = (uint32_t)(e - p->sec_text);
        p->sec = key;
        p->sec_valid = 1;
    }
    /* The whole buffer: a fixed-size copy; the record's reservation has
     * room and the bytes past sec_len are overwritten. */
    memcpy(q, p->sec_text, sizeof p->sec_text);
    q += p->sec_len;
    unsigned low = (unsigned)(ns - key * 10000u);
    memcpy(q, fr_fmt_digits2 + 2 * (low / 100u), 2);
    memcpy(q + 2, fr_fmt_digits2 + 2 * (low % 100u), 2);
    return q + 4;
}

/* Signed time relative to the first record: a LATE record may precede it. */
static inline char *fmt_rel_seconds(struct print_ctx *p, char *q, uint64_t t,
                                    uint64_t base)
{
    if (FLIGHTREC_UNLIKELY(t < base)) {
        *q++ = '-';
        return fmt_seconds(p, q, base - t);
    }
    return fmt_seconds(p, q, t - base);
}

static char *fmt_flags_text(char *q, uint32_t flags)
{
    if (flags & FLIGHTREC_RECORD_LATE) {
        memcpy(q, " (late)", 7);
        q += 7;
    }
    if (flags & FLIGHTREC_RECORD_CLAMPED) {
        memcpy(q, " (clamped)", 10);
        q += 10;
    }
    return q;
}

static char *fmt_flags_csv(char *q, uint32_t flags)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {
        { FLIGHTREC_RECORD_UNTIMED, "untimed" },
        { FLIGHTREC_RECORD_LATE, "late" },
        { FLIGHTREC_RECORD_CLAMPED, "clamped" },
    };
    int first = 1;

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (flags & names[i].bit) {
            if (!first)
                *q++ = '|';
            size_t n = strlen(names[i].name);
            memcpy(q, names[i].name, n);
            q += n;
            first = 0;
        }
    }
    return q;
}

/* Whether the 64-byte name arrays hold the same string; @a cached is known
 * to end within its first 16 bytes when short16 is set. */
static inline int same_name(const char *cached, const char *name,
                            int short16)
{
    uint64_t x[2], y[2];

    if (FLIGHTREC_LIKELY(short16)) {
        memcpy(x, cached, 16);
        memcpy(y, name, 16);
        return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
    }
    return strncmp(cached, name, 64) == 0;
}

/* "[RING] TID NAME " for the record's ring, from the cache when the owner
 * has not changed. */
static const struct ring_cache *ring_prefix(struct print_ctx *p,
                                            const struct flightrec_record *r)
{
    const struct flightrec_ring_info *ri = r->ring_info;
    uint32_t ctx = ri != NULL ? ri->context : 0;
    struct ring_cache *rc = &p->rings[(r->ring * 2 + ctx) % RING_SLOTS];

    if (FLIGHTREC_LIKELY(rc->ri == ri && ri != NULL && rc->ring == r->ring &&
                         rc->tid == ri->thread_id &&
                         same_name(rc->name, ri->thread_name, rc->short16)))
        return rc;
    char *q = rc->text;
    *q++ = '[';
    if (ctx == FLIGHTREC_RING_CONTEXT_CPU && r->ring >= FLIGHTREC_CPU_RING_BASE) {
        /* A processor ring (context switches from perf): its CPU. */
        memcpy(q, "cpu", 3);
        q = fr_fmt_u64(q + 3, r->ring - FLIGHTREC_CPU_RING_BASE);
    } else {
        q = fr_fmt_u64(q, r->ring);
    }
    *q++ = ']';
    *q++ = ' ';
    if (ri != NULL && ri->thread_id >= 0)
        q = fr_fmt_u64(q, (uint64_t)ri->thread_id);
    else
        *q++ = '-';
    *q++ = ' ';
    size_t tlen = ri != NULL ? strnlen(ri->thread_name,
                                       sizeof ri->thread_name) : 0;
    if (tlen != 0) {
        q = cli_fmt_escaped(q, ri->thread_name, tlen);
    } else {
        *q++ = '-';
    }
    *q++ = ' ';
    rc->len = (uint32_t)(q - rc->text);
    rc->ri = ri;
    rc->ring = r->ring;
    if (ri != NULL) {
        rc->tid = ri->thread_id;
        memcpy(rc->name, ri->thread_name, sizeof rc->name);
        rc->short16 = strnlen(rc->name, sizeof rc->name) < 16;
    }
    return rc;
}

static char *fmt_flags_json(char *q, uint32_t flags)
{
    static const char *const names[] = { "untimed", "late", "clamped" };
    static const uint32_t bits[] = { FLIGHTREC_RECORD_UNTIMED,
                                     FLIGHTREC_RECORD_LATE,
                                     FLIGHTREC_RECORD_CLAMPED };
    int first = 1;

    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        if (flags & bits[i]) {
            if (!first)
                *q++ = ',';
            *q++ = '"';
            size_t n = strlen(names[i]);
            memcpy(q, names[i], n);
            q += n;
            *q++ = '"';
            first = 0;
        }
    }
    return q;
}

/* Text between double quotes: escaped as names are, and '"' as \". */
static char *fmt_quoted(char *q, const char *text, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] != '"')
            continue;
        q = cli_fmt_escaped(q, text + start, i - start);
        if (i < len) {
            *q++ = '\\';
            *q++ = '"';
        }
        start = i + 1;
    }
    return q;
}

/* The value of a defined event after its name: " begin 0xD" (span
 * begin), " end" (span end), " = V" (a counter, signed decimal), " \"TEXT\""
 * (a string, escaped).  A counter's value is the writer's word: 32-bit
 * streams sign-extend it. */
static char *fmt_kind_text(struct print_ctx *p, char *q, uint32_t kind,
                           const struct flightrec_record *r)
{
    switch (kind) {
    case FLIGHTREC_EVENT_SPAN_BEGIN:
        memcpy(q, " begin ", 7);
        return fr_fmt_hex0x(q + 7, r->data);
    case FLIGHTREC_EVENT_SPAN_END:
        memcpy(q, " end", 4);
        q += 4;
        if (p->span_state == 1) {
            memcpy(q, " after ", 7);
            q = fr_fmt_u64(q + 7, p->span_ns / 1000000000u);
            *q++ = '.';
            q = fr_fmt_ns9(q, (uint32_t)(p->span_ns % 1000000000u));
            memcpy(q, " s", 2);
            q += 2;
        } else if (p->span_state == 2) {
            memcpy(q, " (no open span)", 15);
            q += 15;
        }
        return q;
    case FLIGHTREC_EVENT_COUNTER: {
        uint64_t format = flightrec_client_info(p->client)->format;
        int64_t v = FLIGHTREC_ITEM_SIZE(format) == 8 ? (int64_t)(int32_t)r->data
                                                     : (int64_t)r->data;
        memcpy(q, " = ", 3);
        q += 3;
        if (v < 0) {
            *q++ = '-';
            return fr_fmt_u64(q, 0 - (uint64_t)v);
        }
        return fr_fmt_u64(q, (uint64_t)v);
    }
    case FLIGHTREC_EVENT_STRING:
        *q++ = ' ';
        *q++ = '"';
        if (r->text != NULL)
            q = fmt_quoted(q, r->text, r->text_len);
        *q++ = '"';
        return q;
    default:
        *q++ = ' ';
        return fr_fmt_hex0x(q, r->data);
    }
}

/* A text line; @a ev: the event's name, NULL for a loss. */
static void write_text(struct print_ctx *p, const struct flightrec_record *r,
                       const struct name_cache *ev)
{
    const struct ring_cache *rc = ring_prefix(p, r);
    size_t need = 96 + PREFIX_MAX + 2 * NAME_TEXT_MAX + FIXED_COPY +
                  4 * r->text_len;

    char *q = (char *)fr_out_reserve(p->out, need);
    if (FLIGHTREC_UNLIKELY(r->flags & FLIGHTREC_RECORD_UNTIMED)) {
        memcpy(q, "untimed", 7);
        q += 7;
    } else if (p->wall) {
        q = fr_fmt_iso8601(q, wall_ns(p, r->time_ns));
    } else {
        q = fmt_rel_seconds(p, q, r->time_ns, p->base_ns);
    }
    *q++ = ' ';
    q = put_text(q, rc->text, rc->len);
    if (FLIGHTREC_LIKELY(ev != NULL && ev->kind == FLIGHTREC_EVENT_INSTANT)) {
        q = put_text(q, ev->text, ev->len);
        *q++ = ' ';
        q = fr_fmt_hex0x(q, r->data);
        if (FLIGHTREC_UNLIKELY(r->event == p->object_path)) {
            /* The path's characters this item carries, as text. */
            char part[9];
            size_t n = 0;
            while (n < p->word_bytes &&
                   (part[n] = (char)(r->data >> (8 * n))) != '\0')
                n++;
            part[n] = '\0';
            memcpy(q, " \"", 2);
            q = cli_fmt_escaped(q + 2, part, n);
            *q++ = '"';
        }
        const char *fn;
        if (FLIGHTREC_UNLIKELY(p->symbols != NULL) &&
            (r->event == p->func_entry || r->event == p->func_exit) &&
            (fn = fr_symbols_name(p->symbols, r->data)) != NULL) {
            /* Names come from files: escaped, and cut to what was
             * reserved. */
            char name[NAME_TEXT_MAX / 4];
            snprintf(name, sizeof name, "%s", fn);
            *q++ = ' ';
            q = cli_fmt_escaped(q, name, strlen(name));
        }
    } else if (ev != NULL) {
        q = put_text(q, ev->text, ev->len);
        q = fmt_kind_text(p, q, ev->kind, r);
    } else {
        memcpy(q, "LOST ", 5);
        q = fr_fmt_u64(q + 5, r->loss_count);
        memcpy(q, " items (", 8);
        q += 8;
        const char *k = cli_loss_kind_name(r->loss_kind);
        size_t kl = strlen(k);
        memcpy(q, k, kl);
        q += kl;
        *q++ = ')';
    }
    if (FLIGHTREC_UNLIKELY(r->flags & ~FLIGHTREC_RECORD_UNTIMED))
        q = fmt_flags_text(q, r->flags);
    *q++ = '\n';
    p->out->len = (size_t)((unsigned char *)q - p->out->buf);
}

/* The time column of CSV and JSON: nanoseconds since the first record
 * (negative for a late record before it), or since the epoch with --wall. */
static char *fmt_time_ns(struct print_ctx *p, char *q, uint64_t time_ns)
{
    if (p->wall)
        return fr_fmt_u64(q, wall_ns(p, time_ns));
    if (time_ns >= p->base_ns)
        return fr_fmt_u64(q, time_ns - p->base_ns);
    *q++ = '-';
    return fr_fmt_u64(q, p->base_ns - time_ns);
}

/* A function name in CSV and JSON is cut to this many bytes, so that a
 * record stays within one buffer reservation (FR_OUT_RESERVE_MAX). */
#define FUNCTION_NAME_MAX 128u

/* The name of the function a FUNCTION_ENTRY/EXIT record names, for the
 * CSV and JSON writers, and its length in *@len; NULL if it is not named
 * (or --no-symbols). */
static const char *function_of(struct print_ctx *p,
                               const struct flightrec_record *r, size_t *len)
{
    *len = 0;
    if (FLIGHTREC_LIKELY(p->symbols == NULL) ||
        r->type != FLIGHTREC_RECORD_EVENT ||
        (r->event != p->func_entry && r->event != p->func_exit))
        return NULL;
    const char *name = fr_symbols_name(p->symbols, r->data);
    if (name != NULL)
        *len = strnlen(name, FUNCTION_NAME_MAX);
    return name;
}

static void write_csv(struct print_ctx *p, const struct flightrec_record *r,
                      const struct name_cache *ev,
                      const struct flightrec_ring_info *ri, size_t tlen)
{
    size_t fn_len;
    const char *fn = function_of(p, r, &fn_len);
    size_t need = 200 + 2 * tlen + 2 * fn_len;

    if (ev != NULL)
        need += 2 * (size_t)ev->raw_len;
    char *q = (char *)fr_out_reserve(p->out, need);
    if (!(r->flags & FLIGHTREC_RECORD_UNTIMED))
        q = fmt_time_ns(p, q, r->time_ns);
    *q++ = ',';
    q = fr_fmt_u64(q, r->ring);
    *q++ = ',';
    if (ri != NULL && ri->thread_id >= 0)
        q = fr_fmt_u64(q, (uint64_t)ri->thread_id);
    *q++ = ',';
    if (ev != NULL) {
        q = cli_fmt_csv(q, ev->ptr, ev->raw_len);
        *q++ = ',';
        q = fr_fmt_u64(q, r->event);
        *q++ = ',';
        q = fr_fmt_hex0x(q, r->data);
    } else {
        memcpy(q, "LOST,,", 6);
        q += 6;
    }
    *q++ = ',';
    if (tlen != 0)
        q = cli_fmt_csv(q, ri->thread_name, tlen);
    *q++ = ',';
    if (ev != NULL) {
        memcpy(q, "event,1", 7);
        q += 7;
    } else {
        const char *k = cli_loss_kind_name(r->loss_kind);
        size_t kl = strlen(k);
        memcpy(q, k, kl);
        q += kl;
        *q++ = ',';
        q = fr_fmt_u64(q, r->loss_count);
    }
    *q++ = ',';
    q = fmt_flags_csv(q, r->flags);
    *q++ = ',';
    if (fn != NULL)
        q = cli_fmt_csv(q, fn, fn_len);
    *q++ = '\n';
    p->out->len = (size_t)((unsigned char *)q - p->out->buf);
}

static char *put_str(char *q, const char *s)
{
    size_t n = strlen(s);

    memcpy(q, s, n);
    return q + n;
}

/* One JSON object per line, the fields of the CSV columns (see usage). */
static void write_json(struct print_ctx *p, const struct flightrec_record *r,
                       const struct name_cache *ev,
                       const struct flightrec_ring_info *ri, size_t tlen)
{
    size_t fn_len;
    const char *fn = function_of(p, r, &fn_len);
    size_t need = 340 + 6 * tlen + 6 * r->text_len + 6 * fn_len;

    if (ev != NULL)
        need += 6 * (size_t)ev->raw_len;
    char *q = (char *)fr_out_reserve(p->out, need);
    q = put_str(q, "{\"time_ns\":");
    if (r->flags & FLIGHTREC_RECORD_UNTIMED)
        q = put_str(q, "null");
    else
        q = fmt_time_ns(p, q, r->time_ns);
    q = put_str(q, ",\"ring\":");
    q = fr_fmt_u64(q, r->ring);
    q = put_str(q, ",\"thread\":");
    if (ri != NULL && ri->thread_id >= 0)
        q = fr_fmt_u64(q, (uint64_t)ri->thread_id);
    else
        q = put_str(q, "null");
    q = put_str(q, ",\"thread_name\":");
    q = tlen != 0 ? cli_fmt_json(q, ri->thread_name, tlen) : put_str(q, "null");
    if (ev != NULL) {
        q = put_str(q, ",\"event\":");
        q = cli_fmt_json(q, ev->ptr, ev->raw_len);
        q = put_str(q, ",\"event_id\":");
        q = fr_fmt_u64(q, r->event);
        q = put_str(q, ",\"data\":\"");
        q = fr_fmt_hex0x(q, r->data);
        q = put_str(q, "\",\"kind\":\"event\",\"count\":1");
        if (r->text != NULL) {
            q = put_str(q, ",\"text\":");
            q = cli_fmt_json(q, r->text, r->text_len);
        }
        if (fn != NULL) {
            q = put_str(q, ",\"function\":");
            q = cli_fmt_json(q, fn, fn_len);
        }
    } else {
        q = put_str(q, ",\"event\":null,\"event_id\":null,\"data\":null,"
                       "\"kind\":\"");
        q = put_str(q, cli_loss_kind_name(r->loss_kind));
        q = put_str(q, "\",\"count\":");
        q = fr_fmt_u64(q, r->loss_count);
    }
    q = put_str(q, ",\"flags\":[");
    q = fmt_flags_json(q, r->flags);
    q = put_str(q, "]}\n");
    p->out->len = (size_t)((unsigned char *)q - p->out->buf);
}

/* After the stream: what the filters and --wall could not do. */
static void report_filters(const struct print_ctx *p)
{
    if (p->no_realtime)
        return;
    if (p->events.active)
        cli_event_filter_report(&p->events, p->client);
    if (p->threads.active)
        cli_thread_filter_report(&p->threads);
    if (p->wall_saturated != 0) {
        char t[40];
        *fr_fmt_iso8601(t, UINT64_MAX) = '\0';
        cli_msg(CLI_WARN, "--wall: %llu records are later than 2^64 ns "
                "after 1970; their times are shown as %s",
                (unsigned long long)p->wall_saturated, t);
    }
}

static void symbols_warn(void *arg, const char *message)
{
    (void)arg;
    cli_msg(CLI_WARN, "%s", message);
}

static FLIGHTREC_COLD int start(struct print_ctx *p)
{
    const struct flightrec_stream_info *info = flightrec_client_info(p->client);

    p->started = 1;
    p->func_entry = p->func_exit = UINT32_MAX;
    p->object_path = info->kind == FLIGHTREC_STREAM_FLIGHTREC
                         ? FLIGHTREC_EV_OBJECT_PATH
                         : UINT32_MAX;
    p->word_bytes = info->format != 0
                        ? FLIGHTREC_ITEM_SIZE(info->format) - 4
                        : 8;
    if (p->symbols_wanted) {
        for (uint32_t id = 0; id < 512; id++) {
            const char *n = flightrec_client_event_name(p->client, id);
            if (strcmp(n, "FUNCTION_ENTRY") == 0)
                p->func_entry = id;
            else if (strcmp(n, "FUNCTION_EXIT") == 0)
                p->func_exit = id;
        }
        p->symbols = fr_symbols_create(
            info->format != 0 ? FLIGHTREC_ITEM_SIZE(info->format) - 4 : 8,
            symbols_warn, NULL);
    }
    if (p->wall) {
        if (!info->has_realtime) {
            p->no_realtime = 1;
            return 1;
        }
        p->realtime0 = info->realtime_ns_at_zero;
    }
    return 0;
}

/* Pairs span ends with their begins (docs/format.md, "Event kinds"), on
 * every record before the filters: an end shows how long its span took
 * even when its begin is not printed. */
static void track_span(struct print_ctx *p, const struct flightrec_record *r,
                       uint32_t kind)
{
    p->span_state = 0;
    if (r->ring >= SPAN_RINGS || (r->flags & FLIGHTREC_RECORD_UNTIMED))
        return;
    if (p->spans == NULL) {
        p->spans = calloc(SPAN_RINGS, sizeof(*p->spans));
        if (p->spans == NULL)
            return;
    }
    struct span_stack *st = &p->spans[r->ring];
    int64_t tid = r->ring_info != NULL ? r->ring_info->thread_id : -1;
    if (st->tid != tid) { /* a reused ring: its new owner's spans */
        st->tid = tid;
        st->depth = 0;
    }
    if (kind == FLIGHTREC_EVENT_SPAN_BEGIN) {
        if (st->depth < SPAN_DEPTH) {
            st->event[st->depth] = r->event;
            st->begin_ns[st->depth++] = r->time_ns;
        }
        return;
    }
    int begin = flightrec_client_span_begin(p->client, r->event);
    uint32_t i = st->depth;
    while (i > 0 && begin >= 0 && st->event[i - 1] != (uint32_t)begin)
        i--;
    if (i == 0) {
        p->span_state = 2;
        return;
    }
    p->span_state = 1;
    p->span_ns = r->time_ns - st->begin_ns[i - 1];
    st->depth = i - 1; /* spans opened inside it end with it */
}

static int on_record(const struct flightrec_record *r, void *arg)
{
    struct print_ctx *p = arg;
    const struct flightrec_ring_info *ri = r->ring_info;
    int untimed = (r->flags & FLIGHTREC_RECORD_UNTIMED) != 0;

    /* Once there is a base, the start is done. */
    if (FLIGHTREC_UNLIKELY(!p->have_base)) {
        if (!p->started && start(p) != 0)
            return 1;
        if (!untimed) {
            p->have_base = 1;
            p->base_ns = r->time_ns;
        }
    }
    /* The event's name and kind, looked up once for the record. */
    struct name_cache *ev = NULL;
    if (FLIGHTREC_LIKELY(r->type == FLIGHTREC_RECORD_EVENT)) {
        ev = event_name(p, r->event);
        if (FLIGHTREC_UNLIKELY(ev->special != 0)) {
            if (ev->special & SPECIAL_OBJECT)
                p->objects_seen = 1;
            if (ev->special & SPECIAL_SPAN)
                track_span(p, r, ev->kind);
        }
    }
    /* Before the first object record, fr_symbols_record() has nothing
     * to do. */
    if (FLIGHTREC_UNLIKELY(p->objects_seen) && p->symbols != NULL)
        fr_symbols_record(p->symbols, r);
    /* The name filters see every record, also those outside --from/--to,
     * so that a term naming something in the stream is not reported as
     * matching nothing. */
    if (FLIGHTREC_UNLIKELY(p->filtering)) {
        int selected = 1;
        if (p->events.active && r->type == FLIGHTREC_RECORD_EVENT &&
            !cli_event_filter_match(&p->events, p->client, r->event))
            selected = 0;
        if (p->threads.active && !cli_thread_filter_match(&p->threads, ri))
            selected = 0;
        if (!selected)
            return 0;
        if (p->filter_time) {
            if (untimed || r->time_ns < p->base_ns ||
                r->time_ns - p->base_ns < p->from_ns ||
                r->time_ns - p->base_ns > p->to_ns)
                return 0;
        }
    }

    if (FLIGHTREC_LIKELY(!p->json && !p->csv)) {
        write_text(p, r, ev);
    } else {
        size_t tlen = ri != NULL ? strnlen(ri->thread_name,
                                           sizeof ri->thread_name)
                                 : 0;
        if (p->json)
            write_json(p, r, ev, ri, tlen);
        else
            write_csv(p, r, ev, ri, tlen);
    }
    return p->out->failed ? 1 : 0;
}

/* Input pauses: show what is printed so far (live pipelines). */
static void flush_on_idle(void *arg)
{
    struct print_ctx *p = arg;

    fr_out_flush(p->out);
}

/*=====   Printing for another command (connect --print)   =====*/

/* The same context, the same callback and the same text lines as print
 * itself: connect decodes a socket, print a file or a pipe. */
struct cli_printer {
    struct print_ctx ctx;
};

struct cli_printer *cli_printer_new(int fd)
{
    struct cli_printer *printer = calloc(1, sizeof(*printer));

    if (printer == NULL)
        return NULL;
    cli_event_filter_init(&printer->ctx.events);
    cli_thread_filter_init(&printer->ctx.threads);
    printer->ctx.to_ns = UINT64_MAX;
    printer->ctx.out = fr_out_fd(fd, PRINT_BUFFER);
    if (printer->ctx.out == NULL) {
        free(printer);
        return NULL;
    }
    return printer;
}

void cli_printer_attach(struct cli_printer *printer, flightrec_client *client)
{
    printer->ctx.client = client;
}

int cli_printer_on_record(const struct flightrec_record *r, void *printer)
{
    return on_record(r, &((struct cli_printer *)printer)->ctx);
}

int cli_printer_flush(struct cli_printer *printer)
{
    fr_out_flush(printer->ctx.out);
    return printer->ctx.out->failed ? printer->ctx.out->err : 0;
}

void cli_printer_free(struct cli_printer *printer)
{
    if (printer == NULL)
        return;
    fr_out_discard(printer->ctx.out);
    cli_event_filter_free(&printer->ctx.events);
    cli_thread_filter_free(&printer->ctx.threads);
    free(printer);
}

enum {
    OPT_CSV = 256,
    OPT_JSON,
    OPT_WALL,
    OPT_EVENT,
    OPT_THREAD,
    OPT_FROM,
    OPT_TO,
    OPT_WINDOW,
    OPT_MEMORY_LIMIT,
    OPT_SYMBOLS,
    OPT_NO_SYMBOLS
};

static const struct option long_options[] = {
    { "csv", no_argument, NULL, OPT_CSV },
    { "json", no_argument, NULL, OPT_JSON },
    { "wall", no_argument, NULL, OPT_WALL },
    { "event", required_argument, NULL, OPT_EVENT },
    { "thread", required_argument, NULL, OPT_THREAD },
    { "from", required_argument, NULL, OPT_FROM },
    { "to", required_argument, NULL, OPT_TO },
    { "window", required_argument, NULL, OPT_WINDOW },
    { "memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT },
    { "symbols", no_argument, NULL, OPT_SYMBOLS },
    { "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cmd_print(int argc, char **argv)
{
    struct print_ctx *p = calloc(1, sizeof(*p));
    struct cli_input in = { .fd = -1 };
    uint64_t window_ns = FLIGHTREC_MERGE_WINDOW_AUTO;
    uint64_t memory_limit = cli_memory_limit_default();
    int have_from = 0, have_to = 0;
    int ret = CLI_FAIL;
    int c;

    cli_set_command("print");
    if (p == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return CLI_FAIL;
    }
    p->symbols_wanted = 1;
    cli_event_filter_init(&p->events);
    cli_thread_filter_init(&p->threads);
    p->to_ns = UINT64_MAX;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            ret = CLI_OK;
            goto out;
        case OPT_CSV:
            p->csv = 1;
            break;
        case OPT_JSON:
            p->json = 1;
            break;
        case OPT_WALL:
            p->wall = 1;
            break;
        case OPT_SYMBOLS:
        case OPT_NO_SYMBOLS:
            p->symbols_wanted = c == OPT_SYMBOLS;
            break;
        case OPT_EVENT:
            if (cli_event_filter_add(&p->events, optarg) != 0) {
                ret = cli_usage_error(usage, "bad event list '%s'", optarg);
                goto out;
            }
            break;
        case OPT_THREAD:
            if (cli_thread_filter_add(&p->threads, optarg) != 0) {
                ret = cli_usage_error(usage, "bad thread '%s'", optarg);
                goto out;
            }
            break;
        case OPT_FROM:
        case OPT_TO:
        case OPT_WINDOW: {
            uint64_t ns;
            if (cli_parse_seconds(optarg, &ns) != 0) {
                ret = cli_usage_error(usage, "bad time '%s' (seconds, e.g. "
                                      "1.5)", optarg);
                goto out;
            }
            if (c == OPT_FROM) {
                p->from_ns = ns;
                have_from = 1;
            } else if (c == OPT_TO) {
                p->to_ns = ns;
                have_to = 1;
            } else {
                window_ns = ns;
            }
            break;
        }
        case OPT_MEMORY_LIMIT:
            if (cli_parse_size(optarg, &memory_limit) != 0) {
                ret = cli_usage_error(usage, "bad size '%s' (bytes, or "
                                      "with K, M, G: 512M)", optarg);
                goto out;
            }
            break;
        default:
            ret = cli_bad_option(c, argv, usage);
            goto out;
        }
    }
    if (argc - optind > 1) {
        ret = cli_usage_error(usage, "too many arguments");
        goto out;
    }
    if (have_from && have_to && p->from_ns > p->to_ns) {
        ret = cli_usage_error(usage, "--from is after --to");
        goto out;
    }
    if (p->csv && p->json) {
        ret = cli_usage_error(usage, "--csv and --json exclude each other");
        goto out;
    }
    p->filter_time = have_from || have_to;
    p->filtering = p->filter_time || p->events.active || p->threads.active;

    if (cli_input_open(&in, optind < argc ? argv[optind] : "-") != 0)
        goto out;
    p->out = fr_out_fd(STDOUT_FILENO, PRINT_BUFFER);
    if (p->out == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        goto out;
    }
    struct flightrec_client_options opt = {
        .on_record = on_record,
        .arg = p,
        .merge = 1,
        .merge_window_ns = cli_merge_window(&in, window_ns),
        .memory_limit = memory_limit,
    };
    int rc = flightrec_client_create(&p->client, &opt);
    if (rc != 0) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(rc));
        goto out;
    }
    if (p->csv)
        fr_out_write(p->out, csv_header, sizeof csv_header - 1);

    in.on_idle = flush_on_idle;
    in.idle_arg = p;
    rc = cli_decode(&in, p->client);
    fr_out_flush(p->out);
    report_filters(p);
    if (p->no_realtime) {
        cli_msg(CLI_ERROR, "%s: --wall: the stream has no realtime "
                "reference", in.name);
    } else if (p->out->failed) {
        cli_msg(CLI_ERROR, "write error: %s", strerror(p->out->err));
    } else if (rc == 0) {
        ret = CLI_OK;
    }
out:
    cli_input_close(&in);
    flightrec_client_destroy(p->client);
    fr_out_discard(p->out);
    free(p->spans);
    fr_symbols_destroy(p->symbols);
    cli_event_filter_free(&p->events);
    cli_thread_filter_free(&p->threads);
    free(p);
    return ret;
}
