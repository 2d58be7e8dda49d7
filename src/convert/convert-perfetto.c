/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Perfetto native protobuf writer.  The file is a Trace message written as
 * a stream of `packet` fields (tag 0x0A + length + TracePacket), so packets
 * go out as they are made.  Field numbers are those of Perfetto's
 * trace_packet.proto / track_event.proto / track_descriptor.proto.
 *
 * Tracks: one process, a thread track per thread (signal handlers and RTEMS
 * processors on named child tracks), a counter track for heap bytes in use
 * and one per counter the program defined.
 * Slices and instants come from the shared model (convert-model.h).
 *
 * What the importer relies on beyond the schema: a clock snapshot first
 * (trace time is BOOTTIME = uptime; REALTIME = uptime + the recording's
 * wall-clock offset), every track described before use, slices balanced
 * per track (those open at the end of the trace end there) and timestamps
 * that never decrease on the one sequence.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "convert-model-sink.h"
#include "util/out-buffer.h"
#include "convert.h"

#define SEQ_ID 1u
#define PROCESS_UUID 1u
#define HEAP_UUID 2u

/* TracePacket */
#define F_PKT_CLOCK_SNAPSHOT 6
#define F_PKT_TIMESTAMP 8
#define F_PKT_SEQ_ID 10
#define F_PKT_TRACK_EVENT 11
#define F_PKT_INTERNED 12
#define F_PKT_SEQ_FLAGS 13
#define F_PKT_TRACK_DESC 60
/* TrackDescriptor */
#define F_TD_UUID 1
#define F_TD_NAME 2
#define F_TD_PROCESS 3
#define F_TD_THREAD 4
#define F_TD_PARENT 5
#define F_TD_COUNTER 8
/* TrackEvent */
#define F_TE_DEBUG 4
#define F_TE_TYPE 9
#define F_TE_NAME_IID 10
#define F_TE_TRACK_UUID 11
#define F_TE_CATEGORIES 22
#define F_TE_NAME 23
#define F_TE_COUNTER_VALUE 30

/* ClockSnapshot, its Clock, and the builtin clock ids */
#define F_CS_CLOCKS 1
#define F_CS_PRIMARY 2
#define F_CLK_ID 1
#define F_CLK_TIMESTAMP 2
#define CLOCK_REALTIME_ID 1
#define CLOCK_BOOTTIME_ID 6

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3,
       TYPE_COUNTER = 4 };

struct pb {
    unsigned char *p;
    unsigned char buf[2048];
};

static void pb_varint(struct pb *e, uint64_t v)
{
    while (v >= 0x80) {
        *e->p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *e->p++ = (unsigned char)v;
}

static void pb_tag(struct pb *e, unsigned field, unsigned wire)
{
    pb_varint(e, ((uint64_t)field << 3) | wire);
}

static void pb_uint(struct pb *e, unsigned field, uint64_t v)
{
    pb_tag(e, field, 0);
    pb_varint(e, v);
}

static void pb_bytes(struct pb *e, unsigned field, const void *s, size_t n)
{
    pb_tag(e, field, 2);
    pb_varint(e, n);
    memcpy(e->p, s, n);
    e->p += n;
}

static void pb_str(struct pb *e, unsigned field, const char *s)
{
    /* Names are bounded (64 bytes) by the model; cap anyway. */
    pb_bytes(e, field, s, strnlen(s, 200));
}

/* Opens a nested message: one length byte, widened at pb_close if needed. */
static unsigned char *pb_open(struct pb *e, unsigned field)
{
    pb_tag(e, field, 2);
    return e->p++;
}

static void pb_close(struct pb *e, unsigned char *at)
{
    size_t len = (size_t)(e->p - at - 1);
    if (len < 0x80) {
        *at = (unsigned char)len;
        return;
    }
    unsigned char tmp[10];
    size_t n = 0, v = len;
    for (; v >= 0x80; v >>= 7)
        tmp[n++] = (unsigned char)(v | 0x80);
    tmp[n++] = (unsigned char)v;
    memmove(at + n, at + 1, len);
    memcpy(at, tmp, n);
    e->p += n - 1;
}

struct pf_sink {
    struct fr_model_sink ms;
    int heap_announced;
    int first_packet;
    uint64_t last_ns;        /* packet times never decrease */
    int named_program;       /* the process is named after its main thread */
    uint8_t interned[FR_EVENT_IDS];
    uint8_t counter_announced[FR_EVENT_IDS];
    struct pb e;
};

static int pf_emit(struct pf_sink *s)
{
    size_t n = (size_t)(s->e.p - s->e.buf);
    unsigned char *p = fr_out_reserve(s->ms.out, n + 12);
    unsigned char *q = p;
    *q++ = 0x0A;
    size_t v = n;
    while (v >= 0x80) {
        *q++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *q++ = (unsigned char)v;
    memcpy(q, s->e.buf, n);
    s->ms.out->len += (size_t)(q - p) + n;
    return fr_model_sink_status(&s->ms);
}

static void pkt_start(struct pf_sink *s, uint64_t ns, int timed)
{
    s->e.p = s->e.buf;
    if (timed) {
        /* Records delivered late (pipes) are shown at the latest time. */
        if (ns < s->last_ns)
            ns = s->last_ns;
        s->last_ns = ns;
        pb_uint(&s->e, F_PKT_TIMESTAMP, ns);
    }
    pb_uint(&s->e, F_PKT_SEQ_ID, SEQ_ID);
    /* The first packet clears incremental state (interned names); the
     * rest declare they use it. */
    pb_uint(&s->e, F_PKT_SEQ_FLAGS, s->first_packet ? 3 : 2);
    s->first_packet = 0;
}

static int process_descriptor(struct pf_sink *s, const char *name);

static int pf_track(void *w, struct fr_track *t)
{
    struct pf_sink *s = w;
    int64_t main_tid = s->ms.base.src->info->process_id;
    if (!s->ms.base.kernel && !s->named_program && t->kind == FR_TRACK_THREAD &&
        t->tid == main_tid && main_tid >= 0 && t->comm[0] != '\0') {
        /* The main thread bears the program's name. */
        s->named_program = 1;
        if (process_descriptor(s, t->comm) != 0)
            return -1;
    }
    pkt_start(s, 0, 0);
    unsigned char *td = pb_open(&s->e, F_PKT_TRACK_DESC);
    pb_uint(&s->e, F_TD_UUID, t->uuid);
    int64_t pid = s->ms.base.src->info->process_id;
    if (t->kind == FR_TRACK_THREAD && t->tid >= 0) {
        unsigned char *th = pb_open(&s->e, F_TD_THREAD);
        pb_uint(&s->e, 1, (uint64_t)(pid >= 0 ? pid : 1));
        pb_uint(&s->e, 2, (uint64_t)t->tid);
        pb_str(&s->e, 5, t->name);
        pb_close(&s->e, th);
    } else {
        pb_str(&s->e, F_TD_NAME, t->name);
        pb_uint(&s->e, F_TD_PARENT, PROCESS_UUID);
    }
    pb_close(&s->e, td);
    return pf_emit(s);
}

static unsigned char *event_start(struct pf_sink *s, const struct fr_ctx *c,
                                  unsigned type, uint64_t track)
{
    pkt_start(s, c->ns, 1);
    unsigned char *te = pb_open(&s->e, F_PKT_TRACK_EVENT);
    pb_uint(&s->e, F_TE_TYPE, type);
    pb_uint(&s->e, F_TE_TRACK_UUID, track);
    return te;
}

static void annotation(struct pf_sink *s, const char *name, uint64_t v,
                       int pointer)
{
    unsigned char *da = pb_open(&s->e, F_TE_DEBUG);
    pb_str(&s->e, 10, name);
    pb_uint(&s->e, pointer ? 7 : 3, v);
    pb_close(&s->e, da);
}

static const char *const slice_cat[] = { "syscall", "call", "function",
                                         "lock", "lock", "signal", "irq",
                                         "sched", "user" };

static int pf_begin(void *w, const struct fr_ctx *c, struct fr_track *t,
                    const struct fr_slice *sl)
{
    struct pf_sink *s = w;
    unsigned char *te = event_start(s, c, TYPE_SLICE_BEGIN, t->uuid);
    pb_str(&s->e, F_TE_CATEGORIES, slice_cat[sl->kind]);
    pb_str(&s->e, F_TE_NAME, sl->name);
    if (sl->kind == FR_SLICE_SYSCALL || sl->kind == FR_SLICE_CALL ||
        (sl->kind == FR_SLICE_USER && sl->data != 0))
        annotation(s, "data", sl->data, 0);
    pb_close(&s->e, te);
    return pf_emit(s);
}

static int pf_end(void *w, const struct fr_ctx *c, struct fr_track *t,
                  const struct fr_slice *sl, uint32_t exit_event,
                  uint64_t exit_data)
{
    struct pf_sink *s = w;
    unsigned char *te = event_start(s, c, TYPE_SLICE_END, t->uuid);
    if (exit_event != UINT32_MAX &&
        (sl->kind == FR_SLICE_SYSCALL || sl->kind == FR_SLICE_CALL))
        annotation(s, "result", exit_data, 0);
    pb_close(&s->e, te);
    return pf_emit(s);
}

static int pf_instant(void *w, const struct fr_ctx *c, struct fr_track *t,
                      uint32_t event, uint64_t data)
{
    struct pf_sink *s = w;
    const char *name = s->ms.base.src->event_name(s->ms.base.src->arg, event);
    pkt_start(s, c->ns, 1);
    if (!s->interned[event]) {
        /* Event names repeat: intern each once, refer to it by id. */
        s->interned[event] = 1;
        unsigned char *id = pb_open(&s->e, F_PKT_INTERNED);
        unsigned char *en = pb_open(&s->e, 2);
        pb_uint(&s->e, 1, (uint64_t)event + 1);
        pb_str(&s->e, 2, name);
        pb_close(&s->e, en);
        pb_close(&s->e, id);
    }
    unsigned char *te = pb_open(&s->e, F_PKT_TRACK_EVENT);
    pb_uint(&s->e, F_TE_TYPE, TYPE_INSTANT);
    pb_uint(&s->e, F_TE_TRACK_UUID, t->uuid);
    pb_uint(&s->e, F_TE_NAME_IID, (uint64_t)event + 1);
    annotation(s, "data", data, 0);
    pb_close(&s->e, te);
    return pf_emit(s);
}

static int pf_counter(void *w, const struct fr_ctx *c, int64_t bytes)
{
    struct pf_sink *s = w;
    if (!s->heap_announced) {
        s->heap_announced = 1;
        pkt_start(s, 0, 0);
        unsigned char *td = pb_open(&s->e, F_PKT_TRACK_DESC);
        pb_uint(&s->e, F_TD_UUID, HEAP_UUID);
        pb_str(&s->e, F_TD_NAME, "heap bytes in use");
        pb_uint(&s->e, F_TD_PARENT, PROCESS_UUID);
        unsigned char *cd = pb_open(&s->e, F_TD_COUNTER);
        pb_uint(&s->e, 3, 3);   /* UNIT_SIZE_BYTES */
        pb_close(&s->e, cd);
        pb_close(&s->e, td);
        if (pf_emit(s) != 0)
            return -1;
    }
    unsigned char *te = event_start(s, c, TYPE_COUNTER, HEAP_UUID);
    pb_uint(&s->e, F_TE_COUNTER_VALUE, (uint64_t)bytes);
    pb_close(&s->e, te);
    return pf_emit(s);
}

static int pf_switch(void *w, const struct fr_ctx *c, struct fr_track *prev,
                     struct fr_track *next)
{
    /* Shown by the model's running-thread slices on the CPU track. */
    (void)w, (void)c, (void)prev, (void)next;
    return 0;
}

static int pf_waking(void *w, const struct fr_ctx *c, struct fr_track *t)
{
    struct pf_sink *s = w;
    unsigned char *te = event_start(s, c, TYPE_INSTANT, t->uuid);
    pb_str(&s->e, F_TE_NAME, "waking");
    annotation(s, "cpu", c->cpu, 0);
    pb_close(&s->e, te);
    return pf_emit(s);
}

static int pf_loss(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t kind, uint64_t count)
{
    static const char *const names[] = { "items lost (overflow)",
                                         "items lost (discard)",
                                         "items lost (missing)" };
    struct pf_sink *s = w;
    unsigned char *te = event_start(s, c, TYPE_INSTANT, t->uuid);
    pb_str(&s->e, F_TE_NAME, kind < 3 ? names[kind] : "items lost");
    annotation(s, "count", count, 0);
    pb_close(&s->e, te);
    return pf_emit(s);
}

/* Counter tracks of the program's counters: one per event id, named
 * after it, announced at its first sample. */
#define USER_COUNTER_UUID_BASE (UINT64_C(1) << 40)

static int pf_value(void *w, const struct fr_ctx *c, struct fr_track *t,
                    uint32_t event, int64_t value)
{
    struct pf_sink *s = w;
    (void)t;
    uint64_t uuid = USER_COUNTER_UUID_BASE + event;
    if (!s->counter_announced[event]) {
        s->counter_announced[event] = 1;
        pkt_start(s, 0, 0);
        unsigned char *td = pb_open(&s->e, F_PKT_TRACK_DESC);
        pb_uint(&s->e, F_TD_UUID, uuid);
        pb_str(&s->e, F_TD_NAME,
               s->ms.base.src->event_name(s->ms.base.src->arg, event));
        pb_uint(&s->e, F_TD_PARENT, PROCESS_UUID);
        unsigned char *cd = pb_open(&s->e, F_TD_COUNTER);
        pb_close(&s->e, cd);
        pb_close(&s->e, td);
        if (pf_emit(s) != 0)
            return -1;
    }
    unsigned char *te = event_start(s, c, TYPE_COUNTER, uuid);
    /* int64 on the wire: a negative value is its two's complement. */
    pb_uint(&s->e, F_TE_COUNTER_VALUE, (uint64_t)value);
    pb_close(&s->e, te);
    return pf_emit(s);
}

/* A string event: an instant named after the event, the text as its
 * "text" argument. */
static int pf_text(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t event, const char *text, size_t len)
{
    struct pf_sink *s = w;
    unsigned char *te = event_start(s, c, TYPE_INSTANT, t->uuid);
    pb_str(&s->e, F_TE_NAME,
           s->ms.base.src->event_name(s->ms.base.src->arg, event));
    unsigned char *da = pb_open(&s->e, F_TE_DEBUG);
    pb_str(&s->e, 10, "text");
    pb_bytes(&s->e, 6, text, len < FLIGHTREC_STRING_MAX ? len
                                                        : FLIGHTREC_STRING_MAX);
    pb_close(&s->e, da);
    pb_close(&s->e, te);
    return pf_emit(s);
}

static const struct fr_model_ops pf_model_ops = {
    pf_track, pf_begin, pf_end, pf_instant, pf_counter, pf_switch,
    pf_waking, pf_loss, pf_value, pf_text
};

static int process_descriptor(struct pf_sink *s, const char *name)
{
    const struct flightrec_stream_info *info = s->ms.base.src->info;
    pkt_start(s, 0, 0);
    unsigned char *td = pb_open(&s->e, F_PKT_TRACK_DESC);
    pb_uint(&s->e, F_TD_UUID, PROCESS_UUID);
    unsigned char *pd = pb_open(&s->e, F_TD_PROCESS);
    int64_t pid = info->process_id >= 0 ? info->process_id : 1;
    pb_uint(&s->e, 1, (uint64_t)pid);
    pb_str(&s->e, 6, name);
    pb_close(&s->e, pd);
    pb_close(&s->e, td);
    return pf_emit(s);
}

/* Trace time is the uptime, Perfetto's default BOOTTIME; the snapshot maps
 * it to REALTIME so that the UI shows wall-clock time. */
static int clock_snapshot(struct pf_sink *s, uint64_t realtime_at_zero)
{
    pkt_start(s, 0, 1);
    unsigned char *cs = pb_open(&s->e, F_PKT_CLOCK_SNAPSHOT);
    unsigned char *c = pb_open(&s->e, F_CS_CLOCKS);
    pb_uint(&s->e, F_CLK_ID, CLOCK_BOOTTIME_ID);
    pb_uint(&s->e, F_CLK_TIMESTAMP, 0);
    pb_close(&s->e, c);
    c = pb_open(&s->e, F_CS_CLOCKS);
    pb_uint(&s->e, F_CLK_ID, CLOCK_REALTIME_ID);
    pb_uint(&s->e, F_CLK_TIMESTAMP, realtime_at_zero);
    pb_close(&s->e, c);
    pb_uint(&s->e, F_CS_PRIMARY, CLOCK_BOOTTIME_ID);
    pb_close(&s->e, cs);
    return pf_emit(s);
}

static int pf_header(struct fr_model_sink *ms)
{
    struct pf_sink *s = (struct pf_sink *)ms;
    const struct flightrec_stream_info *info = ms->base.src->info;
    s->first_packet = 1;
    if (info->has_realtime && clock_snapshot(s, info->realtime_ns_at_zero))
        return -1;
    char name[96];
    if (ms->base.kernel)
        snprintf(name, sizeof name, "RTEMS %s", info->bsp);
    else
        snprintf(name, sizeof name, "flightrec pid %" PRId64,
                 info->process_id >= 0 ? info->process_id : 1);
    return process_descriptor(s, name);
}

/* Slices still open when the trace ends, innermost first. */
static void end_open(void *val, void *arg)
{
    struct fr_track *t = val;
    struct pf_sink *s = arg;
    struct fr_ctx c = { s->last_ns, t->cpu, NULL, 0, 0 };
    for (int i = t->depth - 1; i >= 0; i--)
        pf_end(s, &c, t, &t->stack[i], UINT32_MAX, 0);
}

static void pf_trailer(struct fr_model_sink *ms)
{
    fr_map_each(&ms->model.tracks, end_open, ms);
}

static const struct fr_model_sink_format pf_format = {
    &pf_model_ops, pf_header, pf_trailer, NULL
};

int fr_perfetto_create(struct fr_sink **out, const char *path, char *err,
                       size_t err_size)
{
    return fr_model_sink_create(out, sizeof(struct pf_sink), &pf_format, path,
                                err, err_size);
}
