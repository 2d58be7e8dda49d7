/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Linux ftrace text writer (the `cat trace` layout): a `# tracer: nop`
 * header, then one line per event,
 *   TASK-PID [CPU] FLAGS SECONDS.NANOSECONDS: event: body
 * with the kernel's bodies for sched_switch, sched_waking and
 * irq_handler_*, syscall lines `sys_X(data: hex)` / `sys_X -> 0xN`, and
 * atrace markers (tracing_mark_write B/E/C/I) for other slices, counters and
 * single events, which Perfetto and Trace Compass both read.  Nine decimals
 * keep nanoseconds (both readers accept more than the kernel's six).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "convert-model-sink.h"
#include "convert-out.h"
#include "convert.h"

struct ft_sink {
    struct fr_model_sink ms;
    int64_t pid;             /* tgid for atrace markers, -1: per thread */
};

/* Thread names go into space-separated fields: make them one token. */
static void safe_comm(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src[i] != '\0' && i + 1 < n; i++) {
        unsigned char ch = (unsigned char)src[i];
        dst[i] = ch <= ' ' || ch == 0x7f || ch == '|' || ch == '='
                     ? '_' : (char)ch;
    }
    dst[i] = '\0';
    if (i == 0)
        snprintf(dst, n, "<...>");
}

static void track_comm(struct ft_sink *s, char *dst, size_t n,
                       const struct fr_track *t, uint32_t cpu)
{
    if (t == NULL)
        snprintf(dst, n, "<idle>");
    else if (t->idle)
        snprintf(dst, n, s->ms.base.kernel ? "swapper/%" PRIu32 : "<idle>",
                 cpu);
    else
        safe_comm(dst, n, t->comm);
}

/* Writes "TASK-PID [CPU] FLAGS TS: " */
static void prefix(struct ft_sink *s, const struct fr_ctx *c,
                   const char *flags)
{
    char comm[64];
    const struct fr_track *t = c->thread;
    if (t == NULL || t->idle)
        snprintf(comm, sizeof comm, "<idle>");
    else
        safe_comm(comm, sizeof comm, t->comm);
    uint32_t cpu = s->ms.base.kernel ? c->cpu : 0;
    fr_out_printf(s->ms.out, "%16s-%-7" PRId64 " [%03" PRIu32 "] %s %5" PRIu64
                  ".%09" PRIu64 ": ",
                  comm, fr_track_pid(t), cpu, flags, c->ns / 1000000000u,
                  c->ns % 1000000000u);
}

static const char *flags_of(const struct fr_ctx *c)
{
    return c->in_irq ? "d.h1." : ".....";
}

static int64_t marker_pid(struct ft_sink *s, const struct fr_ctx *c)
{
    return s->pid >= 0 ? s->pid : fr_track_pid(c->thread);
}

static int ft_track(void *w, struct fr_track *t)
{
    (void)w, (void)t;
    return 0;
}

static int done(struct ft_sink *s)
{
    return fr_model_sink_status(&s->ms);
}

static int ft_begin(void *w, const struct fr_ctx *c, struct fr_track *t,
                    const struct fr_slice *sl)
{
    struct ft_sink *s = w;
    (void)t;
    switch (sl->kind) {
    case FR_SLICE_RUN:
        return 0;   /* sched_switch lines carry it */
    case FR_SLICE_IRQ:
        prefix(s, c, "d.h1.");
        fr_out_printf(s->ms.out, "irq_handler_entry: irq=%" PRIu64
                      " name=irq%" PRIu64 "\n", sl->key, sl->key);
        break;
    case FR_SLICE_SYSCALL:
        prefix(s, c, flags_of(c));
        fr_out_printf(s->ms.out, "sys_%s(data: %" PRIx64 ")\n", sl->name,
                      sl->data);
        break;
    default:
        prefix(s, c, flags_of(c));
        fr_out_printf(s->ms.out, "tracing_mark_write: B|%" PRId64 "|%s\n",
                      marker_pid(s, c), sl->name);
        break;
    }
    return done(s);
}

static int ft_end(void *w, const struct fr_ctx *c, struct fr_track *t,
                  const struct fr_slice *sl, uint32_t exit_event,
                  uint64_t exit_data)
{
    struct ft_sink *s = w;
    (void)t;
    switch (sl->kind) {
    case FR_SLICE_RUN:
        return 0;
    case FR_SLICE_IRQ:
        prefix(s, c, "d.h1.");
        fr_out_printf(s->ms.out, "irq_handler_exit: irq=%" PRIu64
                      " ret=handled\n", sl->key);
        break;
    case FR_SLICE_SYSCALL:
        prefix(s, c, flags_of(c));
        fr_out_printf(s->ms.out, "sys_%s -> 0x%" PRIx64 "\n", sl->name,
                      exit_event == UINT32_MAX ? 0 : exit_data);
        break;
    default:
        prefix(s, c, flags_of(c));
        fr_out_printf(s->ms.out, "tracing_mark_write: E|%" PRId64 "\n",
                      marker_pid(s, c));
        break;
    }
    return done(s);
}

static int ft_instant(void *w, const struct fr_ctx *c, struct fr_track *t,
                      uint32_t event, uint64_t data)
{
    struct ft_sink *s = w;
    (void)t;
    char name[80];
    safe_comm(name, sizeof name,
              s->ms.base.src->event_name(s->ms.base.src->arg, event));
    prefix(s, c, flags_of(c));
    fr_out_printf(s->ms.out, "tracing_mark_write: I|%" PRId64 "|%s data=0x%"
                  PRIx64 "\n", marker_pid(s, c), name, data);
    return done(s);
}

static int ft_counter(void *w, const struct fr_ctx *c, int64_t bytes)
{
    struct ft_sink *s = w;
    prefix(s, c, flags_of(c));
    fr_out_printf(s->ms.out, "tracing_mark_write: C|%" PRId64
                  "|heap_bytes_in_use|%" PRId64 "\n", marker_pid(s, c),
                  bytes);
    return done(s);
}

static int ft_switch(void *w, const struct fr_ctx *c, struct fr_track *prev,
                     struct fr_track *next)
{
    struct ft_sink *s = w;
    char pc[64], nc[64];
    track_comm(s, pc, sizeof pc, prev, c->cpu);
    track_comm(s, nc, sizeof nc, next, c->cpu);
    struct fr_ctx pctx = *c;
    pctx.thread = prev;
    prefix(s, &pctx, "d..2.");
    /* Priorities are not recorded: 120 is Linux's default. */
    fr_out_printf(s->ms.out, "sched_switch: prev_comm=%s prev_pid=%" PRId64
                  " prev_prio=120 prev_state=R ==> next_comm=%s next_pid=%"
                  PRId64 " next_prio=120\n", pc, fr_track_pid(prev), nc,
                  fr_track_pid(next));
    return done(s);
}

static int ft_waking(void *w, const struct fr_ctx *c, struct fr_track *t)
{
    struct ft_sink *s = w;
    char comm[64];
    track_comm(s, comm, sizeof comm, t, c->cpu);
    prefix(s, c, c->in_irq ? "d.h2." : "d..2.");
    fr_out_printf(s->ms.out, "sched_waking: comm=%s pid=%" PRId64
                  " prio=120 target_cpu=%03" PRIu32 "\n", comm,
                  fr_track_pid(t), c->cpu);
    return done(s);
}

static int ft_loss(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t kind, uint64_t count)
{
    struct ft_sink *s = w;
    (void)t, (void)kind;
    /* The kernel's own notation for ring-buffer losses. */
    fr_out_printf(s->ms.out, "CPU:%" PRIu32 " [LOST %" PRIu64 " EVENTS]\n",
                  s->ms.base.kernel ? c->cpu : 0, count);
    return done(s);
}

static const struct fr_model_ops ft_model_ops = {
    ft_track, ft_begin, ft_end, ft_instant, ft_counter, ft_switch,
    ft_waking, ft_loss
};

static int ft_header(struct fr_model_sink *ms)
{
    struct ft_sink *s = (struct ft_sink *)ms;
    s->pid = ms->base.kernel ? -1 : ms->base.src->info->process_id;
    fr_out_str(ms->out,
        "# tracer: nop\n"
        "#\n"
        "#                                _-----=> irqs-off/BH-disabled\n"
        "#                               / _----=> need-resched\n"
        "#                              | / _---=> hardirq/softirq\n"
        "#                              || / _--=> preempt-depth\n"
        "#                              ||| / _-=> migrate-disable\n"
        "#                              |||| /     delay\n"
        "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
        "#              | |         |   |||||     |         |\n");
    return done(s);
}

static const struct fr_model_sink_format ft_format = {
    &ft_model_ops, ft_header, NULL
};

int fr_ftrace_create(struct fr_sink **out, const char *path, char *err,
                     size_t err_size)
{
    return fr_model_sink_create(out, sizeof(struct ft_sink), &ft_format, path,
                                err, err_size);
}
