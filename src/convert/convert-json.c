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
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert-model.h"
#include "convert-out.h"
#include "convert.h"

#define PSEUDO_TID_BASE 1000000000

struct js_sink {
    struct fr_sink base;
    struct fr_out *out;
    struct fr_model model;
    int model_ready;
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
    fr_out_str(s->out, s->first ? "\n" : ",\n");
    s->first = 0;
    fr_out_printf(s->out, "{\"ph\":\"%c\",\"pid\":%" PRId64 ",\"tid\":%"
                  PRId64 ",\"ts\":%" PRIu64 ".%03" PRIu64, ph, s->pid, tid,
                  ns / 1000u, ns % 1000u);
}

static int done(struct js_sink *s)
{
    return s->out->failed ? -1 : 0;
}

static int js_track(void *w, struct fr_track *t)
{
    struct js_sink *s = w;
    fr_out_str(s->out, s->first ? "\n" : ",\n");
    s->first = 0;
    fr_out_printf(s->out, "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":%"
                  PRId64 ",\"name\":\"thread_name\",\"args\":{\"name\":",
                  s->pid, js_tid(t));
    js_string(s->out, t->name);
    fr_out_str(s->out, "}}");
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
    fr_out_str(s->out, ",\"name\":");
    js_string(s->out, sl->name);
    fr_out_printf(s->out, ",\"cat\":\"%s\"", slice_cat[sl->kind]);
    if (sl->kind == FR_SLICE_SYSCALL || sl->kind == FR_SLICE_CALL)
        fr_out_printf(s->out, ",\"args\":{\"data\":\"0x%" PRIx64 "\"}",
                      sl->data);
    fr_out_str(s->out, "}");
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
        fr_out_printf(s->out, ",\"args\":{\"result\":\"0x%" PRIx64 "\"}",
                      exit_data);
    fr_out_str(s->out, "}");
    return done(s);
}

static int js_instant(void *w, const struct fr_ctx *c, struct fr_track *t,
                      uint32_t event, uint64_t data)
{
    struct js_sink *s = w;
    head(s, 'i', js_tid(t), c->ns);
    fr_out_str(s->out, ",\"s\":\"t\",\"name\":");
    js_string(s->out, s->base.src->event_name(s->base.src->arg, event));
    fr_out_printf(s->out, ",\"args\":{\"data\":\"0x%" PRIx64 "\"}}", data);
    return done(s);
}

static int js_counter(void *w, const struct fr_ctx *c, int64_t bytes)
{
    struct js_sink *s = w;
    head(s, 'C', 0, c->ns);
    fr_out_printf(s->out, ",\"name\":\"heap\",\"args\":{\"bytes_in_use\":%"
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
    fr_out_printf(s->out, ",\"s\":\"t\",\"name\":\"waking\",\"args\":"
                  "{\"cpu\":%" PRIu32 "}}", c->cpu);
    return done(s);
}

static int js_loss(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t kind, uint64_t count)
{
    static const char *const kinds[] = { "overflow", "discard", "missing" };
    struct js_sink *s = w;
    head(s, 'i', js_tid(t), c->ns);
    fr_out_printf(s->out, ",\"s\":\"t\",\"name\":\"items lost\",\"args\":"
                  "{\"count\":%" PRIu64 ",\"kind\":\"%s\"}}", count,
                  kind < 3 ? kinds[kind] : "?");
    return done(s);
}

static const struct fr_model_ops js_model_ops = {
    js_track, js_begin, js_end, js_instant, js_counter, js_switch,
    js_waking, js_loss
};

static int js_sink_begin(struct fr_sink *base)
{
    struct js_sink *s = (struct js_sink *)base;
    const struct flightrec_stream_info *info = base->src->info;
    if (fr_model_init(&s->model, &js_model_ops, s, base->src,
                      base->kernel) != 0) {
        fr_errorf(base->error, sizeof base->error, "out of memory");
        return -1;
    }
    s->model_ready = 1;
    s->pid = info->process_id >= 0 ? info->process_id : 1;
    s->first = 1;
    fr_out_str(s->out, "{\"traceEvents\":[");
    fr_out_str(s->out, "\n");
    fr_out_printf(s->out, "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":0,"
                  "\"name\":\"process_name\",\"args\":{\"name\":", s->pid);
    char name[96];
    if (base->kernel)
        snprintf(name, sizeof name, "RTEMS %s", info->bsp);
    else
        snprintf(name, sizeof name, "flightrec pid %" PRId64, s->pid);
    js_string(s->out, name);
    fr_out_str(s->out, "}}");
    s->first = 0;
    return done(s);
}

static int js_record(struct fr_sink *base, const struct flightrec_record *r)
{
    struct js_sink *s = (struct js_sink *)base;
    if (fr_model_record(&s->model, r) != 0) {
        fr_errorf(base->error, sizeof base->error, "writing: %s",
                 s->out->failed ? strerror(s->out->err) : "out of memory");
        return -1;
    }
    return 0;
}

static int js_end_sink(struct fr_sink *base)
{
    struct js_sink *s = (struct js_sink *)base;
    fr_out_str(s->out, "\n],\"displayTimeUnit\":\"ns\"}\n");
    int rc = fr_out_close(s->out);
    s->out = NULL;
    if (rc != 0) {
        fr_errorf(base->error, sizeof base->error, "writing: %s",
                 strerror(errno));
        return -1;
    }
    return 0;
}

static void js_destroy(struct fr_sink *base)
{
    struct js_sink *s = (struct js_sink *)base;
    if (s->model_ready)
        fr_model_free(&s->model);
    fr_out_close(s->out);
    free(s);
}

static const struct fr_sink_ops js_ops = {
    js_sink_begin, js_record, js_end_sink, js_destroy
};

int fr_json_create(struct fr_sink **out, const char *path, char *err,
                   size_t err_size)
{
    struct js_sink *s = calloc(1, sizeof *s);
    if (s == NULL) {
        fr_errorf(err, err_size, "out of memory");
        return -1;
    }
    s->out = fr_out_open(path);
    if (s->out == NULL) {
        fr_errorf(err, err_size, "cannot create %s: %s", path,
                 strerror(errno));
        free(s);
        return -1;
    }
    s->base.ops = &js_ops;
    *out = &s->base;
    return 0;
}
