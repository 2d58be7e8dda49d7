/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Chrome JSON Trace Event Format writer: {"traceEvents":[...]} with X
 * (complete) slices, i instants, C counters and M thread/process names.
 * Slices are complete events written when they end, not B/E pairs: the
 * DevTools trace engine matches every E with the last B of any thread, and
 * speedscope matches E to B by name, so interleaved threads break both.
 * Slices still open at the end of the trace end there.  ts is in
 * microseconds with three decimals, so nanoseconds survive exactly; 64-bit
 * data words are hex strings because JSON readers hold numbers as doubles.
 * Signal handler and processor tracks get their own pseudo thread ids so
 * that B/E nest per (pid, tid).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/fmt.h"
#include "convert-model-sink.h"
#include "util/out-buffer.h"
#include "convert.h"

#define PSEUDO_TID_BASE 1000000000

/* Room for one event object without its strings, and for a string of up
 * to JS_STR_INLINE bytes (6 bytes each when escaped as \u00XX). */
#define JS_EVENT_ROOM 256u
#define JS_STR_INLINE 128u
#define JS_ROOM (JS_EVENT_ROOM + 6u * JS_STR_INLINE + 2u)

struct js_sink {
    struct fr_model_sink ms;
    int64_t pid;
    /* The program's name, as its main thread (tid == pid) is named. */
    char program[64];
    uint64_t last_ns;      /* the trace's end so far */
};

/* A JSON string of @a n bytes of @a s; needs 6 * n + 2 bytes of room. */
static char *js_str(char *p, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *p++ = (char)c;
        } else if (c >= 0x20) {
            *p++ = '\\';
            *p++ = (char)c;
        } else {
            p = FR_FMT_LIT(p, "\\u00");
            *p++ = hex[c >> 4];
            *p++ = hex[c & 15];
        }
    }
    *p++ = '"';
    return p;
}

/* Room for JS_ROOM bytes in the output buffer. */
static char *room(struct js_sink *s)
{
    return (char *)fr_out_reserve(s->ms.out, JS_ROOM);
}

static void commit(struct js_sink *s, char *end)
{
    s->ms.out->len = (size_t)((unsigned char *)end - s->ms.out->buf);
}

static int done(struct js_sink *s, char *end)
{
    commit(s, end);
    return fr_model_sink_status(&s->ms);
}

/* A string of any length: names from the stream are not bounded.  @a p is
 * in room(); returns a position in room() after the string. */
static char *js_string(struct js_sink *s, char *p, const char *str)
{
    size_t n = strlen(str);
    if (n <= JS_STR_INLINE)
        return js_str(p, str, n);
    /* Escaped in pieces, each fitting room(); a piece is not a string of
     * its own, so the quotes are added around them. */
    *p++ = '"';
    while (n > 0) {
        size_t k = n < JS_STR_INLINE ? n : JS_STR_INLINE;
        char *q = js_str(p, str, k);
        /* Drop the piece's own quotes. */
        memmove(p, p + 1, (size_t)(q - p - 2));
        commit(s, q - 2);
        p = room(s);
        str += k;
        n -= k;
    }
    *p++ = '"';
    return p;
}

static int64_t js_tid(const struct fr_track *t)
{
    if (t->kind == FR_TRACK_THREAD && t->tid >= 0)
        return t->tid;
    return PSEUDO_TID_BASE + (int64_t)t->uuid;
}

static void note_time(struct js_sink *s, uint64_t ns)
{
    if (ns > s->last_ns)
        s->last_ns = ns;
}

/* Starts an event object: separator (the header wrote the first object),
 * phase, ids and time as "ts":MICROSECONDS.NNN. */
static char *head(struct js_sink *s, char ph, int64_t tid, uint64_t ns)
{
    note_time(s, ns);
    char *p = FR_FMT_LIT(room(s), ",\n{\"ph\":\"");
    *p++ = ph;
    p = FR_FMT_LIT(p, "\",\"pid\":");
    p = fr_fmt_i64(p, s->pid);
    p = FR_FMT_LIT(p, ",\"tid\":");
    p = fr_fmt_i64(p, tid);
    p = FR_FMT_LIT(p, ",\"ts\":");
    p = fr_fmt_u64(p, ns / 1000u);
    *p++ = '.';
    return fr_fmt_u64_zero(p, ns % 1000u, 3);
}

/* ,"args":{"KEY":"0xHEX"}} */
static char *hex_arg(char *p, const char *key, size_t key_len, uint64_t v)
{
    p = FR_FMT_LIT(p, ",\"args\":{\"");
    p = fr_fmt_mem(p, key, key_len);
    p = FR_FMT_LIT(p, "\":\"0x");
    p = fr_fmt_hex(p, v);
    return FR_FMT_LIT(p, "\"}");
}

static int js_track(void *w, struct fr_track *t)
{
    struct js_sink *s = w;
    if (!s->ms.base.kernel && t->kind == FR_TRACK_THREAD && t->tid == s->pid)
        snprintf(s->program, sizeof s->program, "%s", t->comm);
    char *p = FR_FMT_LIT(room(s), ",\n{\"ph\":\"M\",\"pid\":");
    p = fr_fmt_i64(p, s->pid);
    p = FR_FMT_LIT(p, ",\"tid\":");
    p = fr_fmt_i64(p, js_tid(t));
    p = FR_FMT_LIT(p, ",\"name\":\"thread_name\",\"args\":{\"name\":");
    p = js_str(p, t->name, strlen(t->name));
    return done(s, FR_FMT_LIT(p, "}}"));
}

static const char *const slice_cat[] = { "syscall", "call", "function",
                                         "lock", "lock", "signal", "irq",
                                         "sched", "user" };

/* One complete slice, from its beginning to @a end_ns. */
static int js_slice(struct js_sink *s, struct fr_track *t,
                    const struct fr_slice *sl, uint64_t end_ns,
                    uint32_t exit_event, uint64_t exit_data)
{
    char *p = head(s, 'X', js_tid(t), sl->begin_ns);
    /* Readers compute the end as ts + dur in floating point, which can
     * land a rounding error after the next slice's start or after its
     * parent's end, and then nest it wrongly (speedscope, the DevTools
     * engine).  So dur is shortened by 10 ps per nesting level: ends come
     * out strictly in order, and rounded to nanoseconds dur is exact. */
    uint64_t depth = (uint64_t)(sl - t->stack) + 1;
    uint64_t dur = (end_ns - sl->begin_ns) * 100u;
    dur = dur > depth ? dur - depth : 0;
    p = FR_FMT_LIT(p, ",\"dur\":");
    p = fr_fmt_u64(p, dur / 100000u);
    *p++ = '.';
    p = fr_fmt_u64_zero(p, dur % 100000u, 5);
    p = FR_FMT_LIT(p, ",\"name\":");
    p = js_str(p, sl->name, strlen(sl->name));
    p = FR_FMT_LIT(p, ",\"cat\":\"");
    p = fr_fmt_str(p, slice_cat[sl->kind]);
    *p++ = '"';
    if (sl->kind == FR_SLICE_SYSCALL || sl->kind == FR_SLICE_CALL) {
        p = FR_FMT_LIT(p, ",\"args\":{\"data\":\"0x");
        p = fr_fmt_hex(p, sl->data);
        *p++ = '"';
        if (exit_event != UINT32_MAX) {
            p = FR_FMT_LIT(p, ",\"result\":\"0x");
            p = fr_fmt_hex(p, exit_data);
            *p++ = '"';
        }
        *p++ = '}';
    } else if (sl->kind == FR_SLICE_USER && sl->data != 0) {
        p = hex_arg(p, "data", 4, sl->data);
    }
    *p++ = '}';
    return done(s, p);
}


static int js_begin(void *w, const struct fr_ctx *c, struct fr_track *t,
                    const struct fr_slice *sl)
{
    /* Written when it ends, as one complete event. */
    (void)t, (void)sl;
    note_time(w, c->ns);
    return 0;
}

static int js_end(void *w, const struct fr_ctx *c, struct fr_track *t,
                  const struct fr_slice *sl, uint32_t exit_event,
                  uint64_t exit_data)
{
    note_time(w, c->ns);
    return js_slice(w, t, sl, c->ns, exit_event, exit_data);
}

static int js_instant(void *w, const struct fr_ctx *c, struct fr_track *t,
                      uint32_t event, uint64_t data)
{
    struct js_sink *s = w;
    const char *name = s->ms.base.src->event_name(s->ms.base.src->arg, event);
    char *p = head(s, 'i', js_tid(t), c->ns);
    p = FR_FMT_LIT(p, ",\"s\":\"t\",\"name\":");
    p = js_string(s, p, name);
    p = hex_arg(p, "data", 4, data);
    *p++ = '}';
    return done(s, p);
}

static int js_counter(void *w, const struct fr_ctx *c, int64_t bytes)
{
    struct js_sink *s = w;
    char *p = head(s, 'C', 0, c->ns);
    p = FR_FMT_LIT(p, ",\"name\":\"heap\",\"args\":{\"bytes_in_use\":");
    p = fr_fmt_i64(p, bytes);
    return done(s, FR_FMT_LIT(p, "}}"));
}

static int js_switch(void *w, const struct fr_ctx *c, struct fr_track *prev,
                     struct fr_track *next)
{
    (void)w, (void)c, (void)prev, (void)next;
    return 0;   /* the CPU tracks' running slices show it */
}

static int js_waking(void *w, const struct fr_ctx *c, struct fr_track *t)
{
    struct js_sink *s = w;
    char *p = head(s, 'i', js_tid(t), c->ns);
    p = FR_FMT_LIT(p, ",\"s\":\"t\",\"name\":\"waking\",\"args\":{\"cpu\":");
    p = fr_fmt_u64(p, c->cpu);
    return done(s, FR_FMT_LIT(p, "}}"));
}

static int js_loss(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t kind, uint64_t count)
{
    static const char *const kinds[] = { "overflow", "discard", "missing" };
    struct js_sink *s = w;
    char *p = head(s, 'i', js_tid(t), c->ns);
    p = FR_FMT_LIT(p, ",\"s\":\"t\",\"name\":\"items lost\",\"args\":"
                      "{\"count\":");
    p = fr_fmt_u64(p, count);
    p = FR_FMT_LIT(p, ",\"kind\":\"");
    p = fr_fmt_str(p, kind < 3 ? kinds[kind] : "?");
    return done(s, FR_FMT_LIT(p, "\"}}"));
}

/* A counter the program defined: a "C" event named after it (one series,
 * "value"); readers show one counter per name. */
static int js_value(void *w, const struct fr_ctx *c, struct fr_track *t,
                    uint32_t event, int64_t value)
{
    struct js_sink *s = w;
    const char *name = s->ms.base.src->event_name(s->ms.base.src->arg, event);
    char *p = head(s, 'C', js_tid(t), c->ns);
    p = FR_FMT_LIT(p, ",\"name\":");
    p = js_string(s, p, name);
    p = FR_FMT_LIT(p, ",\"args\":{\"value\":");
    p = fr_fmt_i64(p, value);
    return done(s, FR_FMT_LIT(p, "}}"));
}

/* A string event: an instant with the text as its "text" argument. */
static int js_text(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t event, const char *text, size_t len)
{
    struct js_sink *s = w;
    (void)len; /* NUL-terminated; js_string() takes it in pieces */
    const char *name = s->ms.base.src->event_name(s->ms.base.src->arg, event);
    char *p = head(s, 'i', js_tid(t), c->ns);
    p = FR_FMT_LIT(p, ",\"s\":\"t\",\"name\":");
    p = js_string(s, p, name);
    p = FR_FMT_LIT(p, ",\"args\":{\"text\":");
    p = js_string(s, p, text);
    return done(s, FR_FMT_LIT(p, "}}"));
}

static const struct fr_model_ops js_model_ops = {
    js_track, js_begin, js_end, js_instant, js_counter, js_switch,
    js_waking, js_loss, js_value, js_text
};

static int js_header(struct fr_model_sink *ms)
{
    struct js_sink *s = (struct js_sink *)ms;
    const struct flightrec_stream_info *info = ms->base.src->info;
    s->pid = info->process_id >= 0 ? info->process_id : 1;
    /* The process is named in the trailer, once its main thread's name is
     * known; readers take metadata events anywhere. */
    char *p = FR_FMT_LIT(room(s), "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":");
    p = fr_fmt_i64(p, s->pid);
    p = FR_FMT_LIT(p, ",\"tid\":0,\"name\":\"process_sort_index\","
                      "\"args\":{\"sort_index\":0}}");
    return done(s, p);
}

/* Slices still open when the trace ends, innermost first. */
static void end_open(void *val, void *arg)
{
    struct fr_track *t = val;
    struct js_sink *s = arg;
    for (int i = t->depth - 1; i >= 0; i--)
        js_slice(s, t, &t->stack[i], s->last_ns, UINT32_MAX, 0);
}

static void js_trailer(struct fr_model_sink *ms)
{
    struct js_sink *s = (struct js_sink *)ms;
    fr_map_each(&ms->model.tracks, end_open, s);
    const struct flightrec_stream_info *info = ms->base.src->info;
    char name[96];
    if (ms->base.kernel)
        snprintf(name, sizeof name, "RTEMS %s", info->bsp);
    else if (s->program[0] != '\0')
        snprintf(name, sizeof name, "%s", s->program);
    else
        snprintf(name, sizeof name, "flightrec pid %" PRId64, s->pid);
    char *p = FR_FMT_LIT(room(s), ",\n{\"ph\":\"M\",\"pid\":");
    p = fr_fmt_i64(p, s->pid);
    p = FR_FMT_LIT(p, ",\"tid\":0,\"name\":\"process_name\","
                      "\"args\":{\"name\":");
    p = js_str(p, name, strlen(name));
    commit(s, FR_FMT_LIT(p, "}}"));
    fr_out_str(ms->out, "\n],\"displayTimeUnit\":\"ns\"}\n");
}

static const struct fr_model_sink_format js_format = {
    &js_model_ops, js_header, js_trailer, NULL
};

int fr_json_create(struct fr_sink **out, const char *path, char *err,
                   size_t err_size)
{
    return fr_model_sink_create(out, sizeof(struct js_sink), &js_format, path,
                                err, err_size);
}
