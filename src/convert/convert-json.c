/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Chrome JSON Trace Event Format writer: {"traceEvents":[...]} with B/E
 * slices, i instants, C counters and M thread/process names.  ts is in
 * microseconds with three decimals, so nanoseconds survive exactly; 64-bit
 * data words are hex strings because JSON readers hold numbers as doubles.
 * Signal handler and processor tracks get their own pseudo thread ids so
 * that B/E nest per (pid, tid).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "convert-model-sink.h"
#include "convert-out.h"
#include "convert.h"

#define PSEUDO_TID_BASE 1000000000

struct js_sink {
    struct fr_model_sink ms;
    int64_t pid;
    int first;
};

static void js_string(struct fr_out *o, const char *s)
{
    fr_out_str(o, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fr_out_printf(o, "\\%c", c);
        else if (c < 0x20)
            fr_out_printf(o, "\\u%04x", c);
        else
            fr_out_write(o, s, 1);
    }
    fr_out_str(o, "\"");
}

static int64_t js_tid(const struct fr_track *t)
{
    if (t->kind == FR_TRACK_THREAD && t->tid >= 0)
        return t->tid;
    return PSEUDO_TID_BASE + (int64_t)t->uuid;
}

/* Starts an event object: separator, phase, ids, time. */
static void head(struct js_sink *s, char ph, int64_t tid, uint64_t ns)
{
    fr_out_str(s->ms.out, s->first ? "\n" : ",\n");
    s->first = 0;
    fr_out_printf(s->ms.out, "{\"ph\":\"%c\",\"pid\":%" PRId64 ",\"tid\":%"
                  PRId64 ",\"ts\":%" PRIu64 ".%03" PRIu64, ph, s->pid, tid,
                  ns / 1000u, ns % 1000u);
}

static int done(struct js_sink *s)
{
    return fr_model_sink_status(&s->ms);
}

static int js_track(void *w, struct fr_track *t)
{
    struct js_sink *s = w;
    fr_out_str(s->ms.out, s->first ? "\n" : ",\n");
    s->first = 0;
    fr_out_printf(s->ms.out, "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":%"
                  PRId64 ",\"name\":\"thread_name\",\"args\":{\"name\":",
                  s->pid, js_tid(t));
    js_string(s->ms.out, t->name);
    fr_out_str(s->ms.out, "}}");
    return done(s);
}

static const char *const slice_cat[] = { "syscall", "call", "function",
                                         "lock", "lock", "signal", "irq",
                                         "sched" };

static int js_begin(void *w, const struct fr_ctx *c, struct fr_track *t,
                    const struct fr_slice *sl)
{
    struct js_sink *s = w;
    head(s, 'B', js_tid(t), c->ns);
    fr_out_str(s->ms.out, ",\"name\":");
    js_string(s->ms.out, sl->name);
    fr_out_printf(s->ms.out, ",\"cat\":\"%s\"", slice_cat[sl->kind]);
    if (sl->kind == FR_SLICE_SYSCALL || sl->kind == FR_SLICE_CALL)
        fr_out_printf(s->ms.out, ",\"args\":{\"data\":\"0x%" PRIx64 "\"}",
                      sl->data);
    fr_out_str(s->ms.out, "}");
    return done(s);
}

static int js_end(void *w, const struct fr_ctx *c, struct fr_track *t,
                  const struct fr_slice *sl, uint32_t exit_event,
                  uint64_t exit_data)
{
    struct js_sink *s = w;
    head(s, 'E', js_tid(t), c->ns);
    if (exit_event != UINT32_MAX &&
        (sl->kind == FR_SLICE_SYSCALL || sl->kind == FR_SLICE_CALL))
        fr_out_printf(s->ms.out, ",\"args\":{\"result\":\"0x%" PRIx64 "\"}",
                      exit_data);
    fr_out_str(s->ms.out, "}");
    return done(s);
}

static int js_instant(void *w, const struct fr_ctx *c, struct fr_track *t,
                      uint32_t event, uint64_t data)
{
    struct js_sink *s = w;
    head(s, 'i', js_tid(t), c->ns);
    fr_out_str(s->ms.out, ",\"s\":\"t\",\"name\":");
    js_string(s->ms.out, s->ms.base.src->event_name(s->ms.base.src->arg, event));
    fr_out_printf(s->ms.out, ",\"args\":{\"data\":\"0x%" PRIx64 "\"}}", data);
    return done(s);
}

static int js_counter(void *w, const struct fr_ctx *c, int64_t bytes)
{
    struct js_sink *s = w;
    head(s, 'C', 0, c->ns);
    fr_out_printf(s->ms.out, ",\"name\":\"heap\",\"args\":{\"bytes_in_use\":%"
                  PRId64 "}}", bytes);
    return done(s);
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
    head(s, 'i', js_tid(t), c->ns);
    fr_out_printf(s->ms.out, ",\"s\":\"t\",\"name\":\"waking\",\"args\":"
                  "{\"cpu\":%" PRIu32 "}}", c->cpu);
    return done(s);
}

static int js_loss(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t kind, uint64_t count)
{
    static const char *const kinds[] = { "overflow", "discard", "missing" };
    struct js_sink *s = w;
    head(s, 'i', js_tid(t), c->ns);
    fr_out_printf(s->ms.out, ",\"s\":\"t\",\"name\":\"items lost\",\"args\":"
                  "{\"count\":%" PRIu64 ",\"kind\":\"%s\"}}", count,
                  kind < 3 ? kinds[kind] : "?");
    return done(s);
}

static const struct fr_model_ops js_model_ops = {
    js_track, js_begin, js_end, js_instant, js_counter, js_switch,
    js_waking, js_loss
};

static int js_header(struct fr_model_sink *ms)
{
    struct js_sink *s = (struct js_sink *)ms;
    const struct flightrec_stream_info *info = ms->base.src->info;
    s->pid = info->process_id >= 0 ? info->process_id : 1;
    s->first = 1;
    fr_out_str(s->ms.out, "{\"traceEvents\":[");
    fr_out_str(s->ms.out, "\n");
    fr_out_printf(s->ms.out, "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":0,"
                  "\"name\":\"process_name\",\"args\":{\"name\":", s->pid);
    char name[96];
    if (ms->base.kernel)
        snprintf(name, sizeof name, "RTEMS %s", info->bsp);
    else
        snprintf(name, sizeof name, "flightrec pid %" PRId64, s->pid);
    js_string(s->ms.out, name);
    fr_out_str(s->ms.out, "}}");
    s->first = 0;
    return done(s);
}

static void js_trailer(struct fr_model_sink *ms)
{
    fr_out_str(ms->out, "\n],\"displayTimeUnit\":\"ns\"}\n");
}

static const struct fr_model_sink_format js_format = {
    &js_model_ops, js_header, js_trailer
};

int fr_json_create(struct fr_sink **out, const char *path, char *err,
                   size_t err_size)
{
    return fr_model_sink_create(out, sizeof(struct js_sink), &js_format, path,
                                err, err_size);
}
