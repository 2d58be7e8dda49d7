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
 *
 * The CPU column: a processor ring's line is on its CPU.  A thread's own
 * events are on the CPU the processor rings last switched it in on (a
 * thread records only while it runs); before that, and in a stream without
 * processor rings (recorded without `flightrec record`'s context switches),
 * the CPU is not known and shows as 000.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "util/hash-map.h"
#include "convert-model-sink.h"
#include "util/out-buffer.h"
#include "convert.h"

struct ft_sink {
    struct fr_model_sink ms;
    int64_t pid;             /* tgid for atrace markers, -1: per thread */
    /* The CPU each thread was last switched in on (processor rings):
     * thread id -> index into cpu_of_thread. */
    struct fr_hash_map threads_seen;
    uint32_t *cpu_of_thread;
    size_t cpu_cap;
};

/* Thread @a tid runs on @a cpu from now on; 0, or -1 out of memory. */
static int thread_runs_on(struct ft_sink *s, int64_t tid, uint32_t cpu)
{
    uint32_t i = fr_hash_map_add(&s->threads_seen, (uint64_t)tid, NULL);
    if (i == FR_HASH_NONE)
        return -1;
    if (i >= s->cpu_cap) {
        size_t cap = s->cpu_cap ? 2 * s->cpu_cap : 64;
        uint32_t *grown = realloc(s->cpu_of_thread, cap * sizeof *grown);
        if (grown == NULL) {
            fr_hash_map_remove(&s->threads_seen, (uint64_t)tid);
            return -1;
        }
        s->cpu_of_thread = grown;
        s->cpu_cap = cap;
    }
    s->cpu_of_thread[i] = cpu;
    return 0;
}

/* The CPU column of a line in context @a c. */
static uint32_t line_cpu(const struct ft_sink *s, const struct fr_ctx *c)
{
    if (s->ms.base.kernel || c->on_cpu)
        return c->cpu;
    const struct fr_track *t = c->thread;
    if (t == NULL || fr_hash_map_count(&s->threads_seen) == 0)
        return 0;
    uint32_t i = fr_hash_map_find(&s->threads_seen, (uint64_t)t->tid);
    return i == FR_HASH_NONE ? 0 : s->cpu_of_thread[i];
}

/* Longest line: sched_switch with two 63-byte names, numbers at their
 * widest, plus the prefix. */
#define FT_LINE_MAX 512u
/* Longest text of a string event shown (FLIGHTREC_STRING_MAX less its NUL);
 * with the prefix and the name it fits FT_LINE_MAX. */
#define FT_TEXT_MAX (FLIGHTREC_STRING_MAX - 1u)
/* Longest thread name (struct fr_track comm less its NUL) and event name
 * shown. */
#define FT_COMM_MAX 63u
#define FT_NAME_MAX 79u

/* Thread names go into space-separated fields: make them one token of at
 * most @a max bytes, "<...>" when empty. */
static char *put_token(char *p, const char *src, size_t max)
{
    size_t i = 0;
    for (; src[i] != '\0' && i < max; i++) {
        unsigned char ch = (unsigned char)src[i];
        p[i] = ch <= ' ' || ch == 0x7f || ch == '|' || ch == '='
                   ? '_' : (char)ch;
    }
    if (i == 0)
        return FR_FMT_LIT(p, "<...>");
    return p + i;
}

/* A marker's name or text: the rest of the line, so control characters
 * (and '|', which separates marker fields) become '_'; spaces stay. */
static char *put_field(char *p, const char *src, size_t max)
{
    size_t i = 0;
    for (; src[i] != '\0' && i < max; i++) {
        unsigned char ch = (unsigned char)src[i];
        p[i] = ch < ' ' || ch == 0x7f || ch == '|' ? '_' : (char)ch;
    }
    return p + i;
}

/* The name sched_* lines give a thread. */
static char *track_comm(struct ft_sink *s, char *p, const struct fr_track *t,
                        uint32_t cpu)
{
    if (t == NULL || (t->idle && !s->ms.base.kernel))
        return FR_FMT_LIT(p, "<idle>");
    if (t->idle) {
        p = FR_FMT_LIT(p, "swapper/");
        return fr_fmt_u64(p, cpu);
    }
    return put_token(p, t->comm, FT_COMM_MAX);
}

/* Room for one line in the output buffer. */
static char *line_start(struct ft_sink *s)
{
    return (char *)fr_out_reserve(s->ms.out, FT_LINE_MAX);
}

static int line_end(struct ft_sink *s, char *end)
{
    s->ms.out->len = (size_t)((unsigned char *)end - s->ms.out->buf);
    return fr_model_sink_status(&s->ms);
}

/* Writes "TASK-PID [CPU] FLAGS TS: " (printf "%16s-%-7d [%03u] %s
 * %5u.%09u: "). */
static char *prefix(struct ft_sink *s, char *p, const struct fr_ctx *c,
                    const char *flags)
{
    const struct fr_track *t = c->thread;
    char *task = p;
    if (t == NULL || t->idle)
        p = FR_FMT_LIT(p, "<idle>");
    else
        p = put_token(p, t->comm, FT_COMM_MAX);
    size_t n = (size_t)(p - task);
    if (n < 16) {
        /* Right-align in 16 columns. */
        memmove(task + 16 - n, task, n);
        memset(task, ' ', 16 - n);
        p = task + 16;
    }
    *p++ = '-';
    p = fr_fmt_i64_left(p, fr_track_pid(t), 7);
    p = FR_FMT_LIT(p, " [");
    p = fr_fmt_u64_zero(p, line_cpu(s, c), 3);
    p = FR_FMT_LIT(p, "] ");
    p = fr_fmt_mem(p, flags, 5);
    *p++ = ' ';
    p = fr_fmt_u64_right(p, c->ns / 1000000000u, 5);
    *p++ = '.';
    p = fr_fmt_u64_zero(p, c->ns % 1000000000u, 9);
    return FR_FMT_LIT(p, ": ");
}

static const char *flags_of(const struct fr_ctx *c)
{
    return c->in_irq ? "d.h1." : ".....";
}

static int64_t marker_pid(struct ft_sink *s, const struct fr_ctx *c)
{
    return s->pid >= 0 ? s->pid : fr_track_pid(c->thread);
}

/* "tracing_mark_write: K|PID" */
static char *marker(struct ft_sink *s, char *p, const struct fr_ctx *c,
                    char kind)
{
    p = FR_FMT_LIT(p, "tracing_mark_write: ");
    *p++ = kind;
    *p++ = '|';
    return fr_fmt_i64(p, marker_pid(s, c));
}

static int ft_track(void *w, struct fr_track *t)
{
    (void)w, (void)t;
    return 0;
}

/* A task's name in a sched_switch line of @a cpu: the idle task's is
 * swapper/CPU. */
static char *switch_comm(char *p, const struct fr_track *t, uint32_t cpu)
{
    if (!t->idle)
        return put_token(p, t->comm, FT_COMM_MAX);
    p = FR_FMT_LIT(p, "swapper/");
    return fr_fmt_u64(p, cpu);
}

/* A program thread's run on a CPU (a processor ring of recorded context
 * switches) begins or ends: a sched_switch from or to the idle task, as
 * the CTF kernel trace has it (other processes' time is not recorded).
 * @a state: the thread's state when it leaves ('R', 'S', 'X'). */
static int ft_cpu_run(struct ft_sink *s, const struct fr_ctx *c,
                      const struct fr_slice *sl, int begins, char state)
{
    if (begins && thread_runs_on(s, (int64_t)sl->key, c->cpu) != 0)
        return -1;
    struct fr_track thread, idle;
    memset(&thread, 0, sizeof thread);
    memset(&idle, 0, sizeof idle);
    thread.kind = idle.kind = FR_TRACK_THREAD;
    thread.tid = (int64_t)sl->key;
    memcpy(thread.comm, sl->name, sizeof thread.comm); /* both 64, NUL-ended */
    idle.idle = 1;
    struct fr_ctx pctx = *c;
    pctx.thread = begins ? &idle : &thread;
    const struct fr_track *prev = pctx.thread, *next = begins ? &thread
                                                              : &idle;
    char *p = prefix(s, line_start(s), &pctx, "d..2.");
    p = FR_FMT_LIT(p, "sched_switch: prev_comm=");
    p = switch_comm(p, prev, c->cpu);
    p = FR_FMT_LIT(p, " prev_pid=");
    p = fr_fmt_i64(p, fr_track_pid(prev));
    p = FR_FMT_LIT(p, " prev_prio=120 prev_state=");
    *p++ = begins ? 'R' : state;
    p = FR_FMT_LIT(p, " ==> next_comm=");
    p = switch_comm(p, next, c->cpu);
    p = FR_FMT_LIT(p, " next_pid=");
    p = fr_fmt_i64(p, fr_track_pid(next));
    p = FR_FMT_LIT(p, " next_prio=120\n");
    return line_end(s, p);
}

static int ft_begin(void *w, const struct fr_ctx *c, struct fr_track *t,
                    const struct fr_slice *sl)
{
    struct ft_sink *s = w;
    (void)t;
    if (sl->kind == FR_SLICE_RUN)   /* kernel streams: sched_switch lines */
        return c->on_cpu && !s->ms.base.kernel ? ft_cpu_run(s, c, sl, 1, 'R')
                                               : 0;
    char *p = line_start(s);
    switch (sl->kind) {
    case FR_SLICE_IRQ:
        p = prefix(s, p, c, "d.h1.");
        p = FR_FMT_LIT(p, "irq_handler_entry: irq=");
        p = fr_fmt_u64(p, sl->key);
        p = FR_FMT_LIT(p, " name=irq");
        p = fr_fmt_u64(p, sl->key);
        break;
    case FR_SLICE_SYSCALL:
        p = prefix(s, p, c, flags_of(c));
        p = FR_FMT_LIT(p, "sys_");
        p = fr_fmt_str(p, sl->name);
        p = FR_FMT_LIT(p, "(data: ");
        p = fr_fmt_hex(p, sl->data);
        *p++ = ')';
        break;
    default:
        p = prefix(s, p, c, flags_of(c));
        p = marker(s, p, c, 'B');
        *p++ = '|';
        p = put_field(p, sl->name, FT_NAME_MAX);
        break;
    }
    *p++ = '\n';
    return line_end(s, p);
}

static int ft_end(void *w, const struct fr_ctx *c, struct fr_track *t,
                  const struct fr_slice *sl, uint32_t exit_event,
                  uint64_t exit_data)
{
    struct ft_sink *s = w;
    (void)t;
    if (sl->kind == FR_SLICE_RUN) {
        if (!c->on_cpu || s->ms.base.kernel)
            return 0;
        return ft_cpu_run(s, c, sl, 0,
                          exit_event == FLIGHTREC_EV_THREAD_EXIT ? 'X'
                          : sl->blocked                          ? 'S'
                                                                 : 'R');
    }
    char *p = line_start(s);
    switch (sl->kind) {
    case FR_SLICE_IRQ:
        p = prefix(s, p, c, "d.h1.");
        p = FR_FMT_LIT(p, "irq_handler_exit: irq=");
        p = fr_fmt_u64(p, sl->key);
        p = FR_FMT_LIT(p, " ret=handled");
        break;
    case FR_SLICE_SYSCALL:
        p = prefix(s, p, c, flags_of(c));
        p = FR_FMT_LIT(p, "sys_");
        p = fr_fmt_str(p, sl->name);
        p = FR_FMT_LIT(p, " -> 0x");
        p = fr_fmt_hex(p, exit_event == UINT32_MAX ? 0 : exit_data);
        break;
    default:
        p = prefix(s, p, c, flags_of(c));
        p = marker(s, p, c, 'E');
        break;
    }
    *p++ = '\n';
    return line_end(s, p);
}

static int ft_instant(void *w, const struct fr_ctx *c, struct fr_track *t,
                      uint32_t event, uint64_t data)
{
    struct ft_sink *s = w;
    (void)t;
    const char *name = s->ms.base.src->event_name(s->ms.base.src->arg, event);
    char *p = prefix(s, line_start(s), c, flags_of(c));
    p = marker(s, p, c, 'I');
    *p++ = '|';
    p = put_token(p, name, FT_NAME_MAX);
    p = FR_FMT_LIT(p, " data=0x");
    p = fr_fmt_hex(p, data);
    *p++ = '\n';
    return line_end(s, p);
}

static int ft_counter(void *w, const struct fr_ctx *c, int64_t bytes)
{
    struct ft_sink *s = w;
    char *p = prefix(s, line_start(s), c, flags_of(c));
    p = marker(s, p, c, 'C');
    p = FR_FMT_LIT(p, "|heap_bytes_in_use|");
    p = fr_fmt_i64(p, bytes);
    *p++ = '\n';
    return line_end(s, p);
}

static int ft_switch(void *w, const struct fr_ctx *c, struct fr_track *prev,
                     struct fr_track *next)
{
    struct ft_sink *s = w;
    struct fr_ctx pctx = *c;
    pctx.thread = prev;
    char *p = prefix(s, line_start(s), &pctx, "d..2.");
    /* Priorities are not recorded: 120 is Linux's default. */
    p = FR_FMT_LIT(p, "sched_switch: prev_comm=");
    p = track_comm(s, p, prev, c->cpu);
    p = FR_FMT_LIT(p, " prev_pid=");
    p = fr_fmt_i64(p, fr_track_pid(prev));
    p = FR_FMT_LIT(p, " prev_prio=120 prev_state=R ==> next_comm=");
    p = track_comm(s, p, next, c->cpu);
    p = FR_FMT_LIT(p, " next_pid=");
    p = fr_fmt_i64(p, fr_track_pid(next));
    p = FR_FMT_LIT(p, " next_prio=120\n");
    return line_end(s, p);
}

static int ft_waking(void *w, const struct fr_ctx *c, struct fr_track *t)
{
    struct ft_sink *s = w;
    char *p = prefix(s, line_start(s), c, c->in_irq ? "d.h2." : "d..2.");
    p = FR_FMT_LIT(p, "sched_waking: comm=");
    p = track_comm(s, p, t, c->cpu);
    p = FR_FMT_LIT(p, " pid=");
    p = fr_fmt_i64(p, fr_track_pid(t));
    p = FR_FMT_LIT(p, " prio=120 target_cpu=");
    p = fr_fmt_u64_zero(p, c->cpu, 3);
    *p++ = '\n';
    return line_end(s, p);
}

static int ft_loss(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t kind, uint64_t count)
{
    struct ft_sink *s = w;
    (void)t, (void)kind;
    /* The kernel's own notation for ring-buffer losses. */
    char *p = FR_FMT_LIT(line_start(s), "CPU:");
    p = fr_fmt_u64(p, s->ms.base.kernel ? c->cpu : 0);
    p = FR_FMT_LIT(p, " [LOST ");
    p = fr_fmt_u64(p, count);
    p = FR_FMT_LIT(p, " EVENTS]\n");
    return line_end(s, p);
}

/* A counter the program defined: "C|PID|NAME|VALUE". */
static int ft_value(void *w, const struct fr_ctx *c, struct fr_track *t,
                    uint32_t event, int64_t value)
{
    struct ft_sink *s = w;
    (void)t;
    const char *name = s->ms.base.src->event_name(s->ms.base.src->arg, event);
    char *p = prefix(s, line_start(s), c, flags_of(c));
    p = marker(s, p, c, 'C');
    *p++ = '|';
    p = put_field(p, name, FT_NAME_MAX);
    *p++ = '|';
    p = fr_fmt_i64(p, value);
    *p++ = '\n';
    return line_end(s, p);
}

/* A string event: an instant "I|PID|NAME: TEXT" (the text on one line). */
static int ft_text(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t event, const char *text, size_t len)
{
    struct ft_sink *s = w;
    (void)t, (void)len;
    const char *name = s->ms.base.src->event_name(s->ms.base.src->arg, event);
    char *p = prefix(s, line_start(s), c, flags_of(c));
    p = marker(s, p, c, 'I');
    *p++ = '|';
    p = put_field(p, name, FT_NAME_MAX);
    p = FR_FMT_LIT(p, ": ");
    p = put_field(p, text, FT_TEXT_MAX);
    *p++ = '\n';
    return line_end(s, p);
}

static const struct fr_model_ops ft_model_ops = {
    ft_track, ft_begin, ft_end, ft_instant, ft_counter, ft_switch,
    ft_waking, ft_loss, ft_value, ft_text
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
    return fr_model_sink_status(ms);
}

static void ft_destroy(struct fr_model_sink *ms)
{
    struct ft_sink *s = (struct ft_sink *)ms;
    fr_hash_map_free(&s->threads_seen);
    free(s->cpu_of_thread);
}

static const struct fr_model_sink_format ft_format = {
    &ft_model_ops, ft_header, NULL, ft_destroy
};

int fr_ftrace_create(struct fr_sink **out, const char *path, char *err,
                     size_t err_size)
{
    return fr_model_sink_create(out, sizeof(struct ft_sink), &ft_format, path,
                                err, err_size);
}
