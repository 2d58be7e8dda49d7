/* SPDX-License-Identifier: BSD-2-Clause */
#define _POSIX_C_SOURCE 200809L
#include "convert-model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flightrec/format.h>

#include "util/fmt.h"
#include "convert-symbols.h"

struct fr_mring {
    uint32_t ring;
    uint64_t last_ns;
    /* flightrec: the ring's owner as last seen */
    int64_t tid;
    uint32_t context;
    size_t nlen;
    char name[64];
    struct fr_track *owner;
    /* RTEMS processor */
    struct fr_track *running;
    int running_known;     /* no loss since the last switch */
    int64_t out_tid;
    struct fr_track *cpu_track;
    struct fr_track *irq_track;
    int irq_depth;
    /* malloc size waiting for its exit */
    uint64_t malloc_size;
};

int fr_model_init(struct fr_model *m, const struct fr_model_ops *ops, void *w,
                  const struct fr_source *src, int kernel)
{
    memset(m, 0, sizeof *m);
    m->ops = ops;
    m->w = w;
    m->src = src;
    m->kernel = kernel;
    m->next_uuid = 16;
    m->narrow = src->info != NULL &&
                FLIGHTREC_ITEM_SIZE(src->info->format) == 8 &&
                src->info->format != 0;
    fr_events_init(&m->ev, src);
    fr_map_init(&m->rings);
    fr_map_init(&m->tracks);
    return fr_heap_init(&m->heap, FR_MODEL_HEAP_CAP);
}

static void free_val(void *val, void *arg)
{
    (void)arg;
    free(val);
}

void fr_model_free(struct fr_model *m)
{
    fr_map_each(&m->rings, free_val, NULL);
    fr_map_each(&m->tracks, free_val, NULL);
    fr_map_free(&m->rings);
    fr_map_free(&m->tracks);
    fr_heap_free(&m->heap);
}

static uint64_t track_key(int kind, int64_t id)
{
    return ((uint64_t)kind << 60) ^ ((uint64_t)id & 0x0fffffffffffffffull);
}

/* Finds or creates a track; @a name is used on creation (and renames a
 * thread track when it differs). */
static struct fr_track *get_track(struct fr_model *m, int kind, int64_t id,
                                  uint32_t cpu, const char *name, int *err)
{
    uint64_t key = track_key(kind, id);
    struct fr_track *t = fr_map_get(&m->tracks, key);
    if (t != NULL) {
        if (name != NULL && name[0] != '\0' && strcmp(t->name, name) != 0) {
            snprintf(t->name, sizeof t->name, "%s", name);
            if (kind != FR_TRACK_SIGNAL)
                memcpy(t->comm, t->name, sizeof t->comm);
            *err = m->ops->track(m->w, t);
        }
        return t;
    }
    t = calloc(1, sizeof *t);
    if (t == NULL || fr_map_put(&m->tracks, key, t) != 0) {
        free(t);
        *err = -1;
        return NULL;
    }
    t->uuid = m->next_uuid++;
    t->kind = kind;
    t->tid = kind == FR_TRACK_CPU || kind == FR_TRACK_IRQ ? -1 : id;
    t->cpu = cpu;
    t->idle = m->kernel && kind == FR_TRACK_THREAD && fr_rtems_is_idle(id);
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    memcpy(t->comm, t->name, sizeof t->comm);
    *err = m->ops->track(m->w, t);
    return t;
}

static struct fr_track *rtems_thread(struct fr_model *m, struct fr_mring *r,
                                     int64_t tid, int *err)
{
    char buf[64];
    const char *name = NULL;
    if (m->src->thread_name != NULL)
        name = m->src->thread_name(m->src->arg, tid);
    if (name == NULL || name[0] == '\0') {
        if (fr_rtems_is_idle(tid))
            snprintf(buf, sizeof buf, "IDLE/%" PRIu32, r->ring);
        else
            snprintf(buf, sizeof buf, "0x%08" PRIx64, (uint64_t)tid);
        name = buf;
    }
    return get_track(m, FR_TRACK_THREAD, tid, r->ring, name, err);
}

static struct fr_mring *get_ring(struct fr_model *m, uint32_t ring)
{
    struct fr_mring *r = m->cache;
    if (r != NULL && r->ring == ring)
        return r;
    r = fr_map_get(&m->rings, ring);
    if (r == NULL) {
        r = calloc(1, sizeof *r);
        if (r == NULL || fr_map_put(&m->rings, ring, r) != 0) {
            free(r);
            return NULL;
        }
        r->ring = ring;
        r->tid = -2;
        r->out_tid = -1;
    }
    m->cache = r;
    return r;
}

static int push(struct fr_model *m, const struct fr_ctx *c, struct fr_track *t,
                int kind, uint32_t event, uint64_t key, uint64_t data,
                const char *name)
{
    if (t->depth >= FR_MODEL_DEPTH) {
        m->too_deep++;
        return 0;
    }
    struct fr_slice *s = &t->stack[t->depth++];
    s->kind = (uint8_t)kind;
    s->blocked = 0; /* the slot may hold a run that ended blocked */
    s->event = event;
    s->key = key;
    s->data = data;
    s->begin_ns = c->ns;
    /* Not snprintf: this runs for every slice. */
    size_t n = strnlen(name, sizeof s->name - 1);
    memcpy(s->name, name, n);
    s->name[n] = '\0';
    return m->ops->begin(m->w, c, t, s);
}

/* Ends the innermost open slice of @a kind with @a key.  Slices opened
 * after it are ended first and reopened at the same time, so every track
 * stays strictly nested (locks released out of order, lost exits).
 * Returns 1 if nothing matched. */
static int pop(struct fr_model *m, const struct fr_ctx *c, struct fr_track *t,
               int kind, uint64_t key, uint32_t exit_event, uint64_t exit_data,
               int *err)
{
    int i = t->depth - 1;
    while (i >= 0 && !(t->stack[i].kind == kind && t->stack[i].key == key))
        i--;
    if (i < 0)
        return 1;
    for (int j = t->depth - 1; j > i && *err == 0; j--)
        *err = m->ops->end(m->w, c, t, &t->stack[j], UINT32_MAX, 0);
    if (*err == 0)
        *err = m->ops->end(m->w, c, t, &t->stack[i], exit_event, exit_data);
    /* A span the program defined ends the spans it opened that are still
     * open (their ends never came): they are not reopened. */
    int keep = i;
    for (int j = i + 1; j < t->depth; j++) {
        if (kind == FR_SLICE_USER && t->stack[j].kind == FR_SLICE_USER)
            continue;
        t->stack[keep] = t->stack[j];
        t->stack[keep].begin_ns = c->ns;
        if (*err == 0)
            *err = m->ops->begin(m->w, c, t, &t->stack[keep]);
        keep++;
    }
    t->depth = keep;
    return 0;
}

/* A slice name: @a what then @a v in hex ("0x..") or decimal.  Every
 * result fits struct fr_slice's name. */
static const char *value_name(char *dst, const char *what, uint64_t v,
                              int hex)
{
    size_t n = strlen(what);
    memcpy(dst, what, n);
    char *end = hex ? fr_fmt_hex(dst + n, v) : fr_fmt_u64(dst + n, v);
    *end = '\0';
    return dst;
}

static int end_or_instant(struct fr_model *m, const struct fr_ctx *c,
                          struct fr_track *t, int kind, uint64_t key,
                          const struct flightrec_record *rec)
{
    int err = 0;
    if (pop(m, c, t, kind, key, rec->event, rec->data, &err)) {
        m->unmatched++;
        return m->ops->instant(m->w, c, t, rec->event, rec->data);
    }
    return err;
}

static int heap_counter(struct fr_model *m, const struct fr_ctx *c)
{
    return m->ops->counter(m->w, c, (int64_t)m->heap.in_use);
}

/* An event the program defined as a span, counter or string (events with
 * a system meaning keep it).  Returns 1 if @a rec is none of these. */
static int defined_event(struct fr_model *m, const struct fr_ctx *c,
                         struct fr_track *t, const struct flightrec_record *rec,
                         int *err)
{
    uint32_t ev = rec->event;
    int begin = -1;
    if (m->src->event_kind == NULL || m->ev.role[ev] != FR_ROLE_PLAIN)
        return 1;
    switch (m->src->event_kind(m->src->arg, ev, &begin)) {
    case FLIGHTREC_EVENT_SPAN_BEGIN:
        *err = push(m, c, t, FR_SLICE_USER, ev, ev, rec->data,
                    m->src->event_name(m->src->arg, ev));
        return 0;
    case FLIGHTREC_EVENT_SPAN_END: {
        uint64_t key;
        if (begin >= 0) {
            key = (uint64_t)begin;
        } else {
            /* Unpaired: the innermost span of the thread. */
            int i = t->depth - 1;
            while (i >= 0 && t->stack[i].kind != FR_SLICE_USER)
                i--;
            key = i >= 0 ? t->stack[i].key : UINT64_MAX;
        }
        *err = end_or_instant(m, c, t, FR_SLICE_USER, key, rec);
        return 0;
    }
    case FLIGHTREC_EVENT_COUNTER: {
        int64_t v = m->narrow ? (int64_t)(int32_t)rec->data : (int64_t)rec->data;
        *err = m->ops->value(m->w, c, t, ev, v);
        return 0;
    }
    case FLIGHTREC_EVENT_STRING:
        if (rec->text == NULL)
            return 1;
        *err = m->ops->text(m->w, c, t, ev, rec->text, rec->text_len);
        return 0;
    default:
        return 1;
    }
}

/* Records that every kind of stream shares, on the thread's track. */
static int thread_event(struct fr_model *m, struct fr_mring *r,
                        const struct fr_ctx *c, struct fr_track *t,
                        const struct flightrec_record *rec)
{
    char name[48];
    uint32_t ev = rec->event;
    int err = 0;
    if (FLIGHTREC_UNLIKELY(m->src->event_kind != NULL) &&
        defined_event(m, c, t, rec, &err) == 0)
        return err;
    int free_ended = t->free_ended;
    t->free_ended = 0;
    switch (m->ev.role[ev]) {
    case FR_ROLE_PAIR_ENTRY:
        return push(m, c, t, m->ev.syscall[ev] ? FR_SLICE_SYSCALL
                                               : FR_SLICE_CALL,
                    ev, ev, rec->data, m->ev.base[ev]);
    case FR_ROLE_PAIR_EXIT:
        return end_or_instant(m, c, t,
                              m->ev.syscall[ev] ? FR_SLICE_SYSCALL
                                                : FR_SLICE_CALL,
                              ev - 1, rec);
    case FR_ROLE_MALLOC_ENTRY:
        r->malloc_size = rec->data;
        return push(m, c, t, FR_SLICE_CALL, ev, ev, rec->data, "malloc");
    case FR_ROLE_MALLOC_EXIT:
        err = end_or_instant(m, c, t, FR_SLICE_CALL, ev - 1, rec);
        if (err == 0 && rec->data != 0) {
            fr_heap_alloc(&m->heap, rec->data, r->malloc_size);
            err = heap_counter(m, c);
        }
        r->malloc_size = 0;
        return err;
    case FR_ROLE_FREE_ENTRY:
        err = push(m, c, t, FR_SLICE_CALL, ev, ev, rec->data, "free");
        if (err == 0 && !m->kernel) {
            /* Its FREE_EXIT may never come (fr_model_record()). */
            m->free_at = *c;
            m->free_at.thread = t;
            m->free_event = ev;
        }
        if (err == 0 && fr_heap_release(&m->heap, rec->data))
            err = heap_counter(m, c);
        return err;
    case FR_ROLE_FREE_EXIT:
        if (free_ended)
            return 0; /* late: its free already ended (it carries 0) */
        return end_or_instant(m, c, t, FR_SLICE_CALL, ev - 1, rec);
    case FR_ROLE_FUNC_ENTRY: {
        /* Named by the recorded objects' symbols where they can be. */
        const char *symbol = m->src->symbol != NULL
                                 ? m->src->symbol(m->src->symbol_arg, rec->data)
                                 : NULL;
        return push(m, c, t, FR_SLICE_FUNC, ev, rec->data, rec->data,
                    symbol != NULL ? symbol
                                   : value_name(name, "0x", rec->data, 1));
    }
    case FR_ROLE_FUNC_EXIT:
        return end_or_instant(m, c, t, FR_SLICE_FUNC, rec->data, rec);
    case FR_ROLE_LOCK_ENTRY:
        return push(m, c, t, FR_SLICE_LOCK_WAIT, ev, rec->data, rec->data,
                    value_name(name, "lock wait 0x", rec->data, 1));
    case FR_ROLE_LOCK_EXIT:
        err = 0;
        /* A trylock that succeeds has no wait to end. */
        pop(m, c, t, FR_SLICE_LOCK_WAIT, rec->data, ev, rec->data, &err);
        if (err != 0)
            return err;
        return push(m, c, t, FR_SLICE_LOCK_HELD, ev, rec->data, rec->data,
                    value_name(name, "lock held 0x", rec->data, 1));
    case FR_ROLE_UNLOCK:
        return end_or_instant(m, c, t, FR_SLICE_LOCK_HELD, rec->data, rec);
    default:
        return m->ops->instant(m->w, c, t, ev, rec->data);
    }
}

static int user_record(struct fr_model *m, struct fr_mring *r,
                       struct fr_ctx *c, const struct flightrec_record *rec)
{
    const struct flightrec_ring_info *ri = rec->ring_info;
    int64_t tid = ri ? ri->thread_id : -1;
    uint32_t context = ri ? ri->context : 0;
    const char *name = ri ? ri->thread_name : "";
    int err = 0;
    if (r->owner == NULL || tid != r->tid || context != r->context ||
        memcmp(name, r->name, r->nlen) != 0) {
        r->tid = tid;
        r->context = context;
        r->nlen = strnlen(name, sizeof r->name - 1);
        memcpy(r->name, name, r->nlen);
        r->name[r->nlen++] = '\0';
        char tname[64];
        if (context != 0)
            snprintf(tname, sizeof tname, "%.40s signals", name);
        else
            snprintf(tname, sizeof tname, "%s", name);
        if (tname[0] == '\0' && tid >= 0)
            snprintf(tname, sizeof tname, "thread %" PRId64, tid);
        r->owner = get_track(m, context ? FR_TRACK_SIGNAL : FR_TRACK_THREAD,
                             tid, rec->ring, tname, &err);
        if (r->owner == NULL || err != 0)
            return -1;
        snprintf(r->owner->comm, sizeof r->owner->comm, "%s", name);
    }
    c->thread = r->owner;
    c->in_irq = context != 0 || r->irq_depth > 0;
    if (rec->type == FLIGHTREC_RECORD_LOSS)
        return m->ops->loss(m->w, c, r->owner, rec->loss_kind,
                            rec->loss_count);
    char sname[48];
    switch (m->ev.role[rec->event]) {
    case FR_ROLE_IRQ_ENTRY:
        r->irq_depth++;
        c->in_irq = 1;
        return push(m, c, r->owner, FR_SLICE_SIGNAL, rec->event, rec->data,
                    rec->data, value_name(sname, "signal ", rec->data, 0));
    case FR_ROLE_IRQ_EXIT:
        if (r->irq_depth > 0)
            r->irq_depth--;
        return end_or_instant(m, c, r->owner, FR_SLICE_SIGNAL, rec->data,
                              rec);
    default:
        return thread_event(m, r, c, r->owner, rec);
    }
}

static int kernel_record(struct fr_model *m, struct fr_mring *r,
                         struct fr_ctx *c, const struct flightrec_record *rec)
{
    int err = 0;
    char name[64];
    if (r->cpu_track == NULL) {
        snprintf(name, sizeof name, "CPU %" PRIu32, r->ring);
        r->cpu_track = get_track(m, FR_TRACK_CPU, r->ring, r->ring, name,
                                 &err);
        snprintf(name, sizeof name, "CPU %" PRIu32 " IRQs", r->ring);
        if (r->cpu_track != NULL && err == 0)
            r->irq_track = get_track(m, FR_TRACK_IRQ, r->ring, r->ring, name,
                                     &err);
        if (r->irq_track == NULL || err != 0)
            return -1;
    }
    c->thread = r->running;
    c->in_irq = r->irq_depth > 0;
    if (rec->type == FLIGHTREC_RECORD_LOSS) {
        /* Which thread runs after a loss is unknown until a switch. */
        r->out_tid = -1;
        r->running_known = 0;
        return m->ops->loss(m->w, c, r->cpu_track, rec->loss_kind,
                            rec->loss_count);
    }
    uint32_t ev = rec->event;
    switch (m->ev.role[ev]) {
    case FR_ROLE_SWITCH_OUT:
        r->out_tid = (int64_t)rec->data;
        return 0;
    case FR_ROLE_SWITCH_IN: {
        struct fr_track *prev = r->running_known ? r->running : NULL;
        if (r->out_tid >= 0)
            prev = rtems_thread(m, r, r->out_tid, &err);
        struct fr_track *next = rtems_thread(m, r, (int64_t)rec->data, &err);
        if (next == NULL || err != 0)
            return -1;
        /* Only the thread switched in is known (the stream starts here, or
         * a loss cut the switch): half a switch is not shown as one. */
        if (prev != NULL)
            err = m->ops->sched_switch(m->w, c, prev, next);
        if (err == 0)
            pop(m, c, r->cpu_track, FR_SLICE_RUN, 0, ev, rec->data, &err);
        r->running = next;
        r->running_known = 1;
        r->out_tid = -1;
        c->thread = next;
        /* Idle time is shown as a gap, as viewers do for Linux. */
        if (err == 0 && !next->idle)
            err = push(m, c, r->cpu_track, FR_SLICE_RUN, ev, 0, rec->data,
                       next->name);
        return err;
    }
    case FR_ROLE_IRQ_ENTRY:
        r->irq_depth++;
        c->in_irq = 1;
        return push(m, c, r->irq_track, FR_SLICE_IRQ, ev, rec->data,
                    rec->data, value_name(name, "IRQ ", rec->data, 0));
    case FR_ROLE_IRQ_EXIT:
        if (r->irq_depth > 0)
            r->irq_depth--;
        return end_or_instant(m, c, r->irq_track, FR_SLICE_IRQ, rec->data,
                              rec);
    case FR_ROLE_UNBLOCK: {
        struct fr_track *t = rtems_thread(m, r, (int64_t)rec->data, &err);
        if (t == NULL || err != 0)
            return -1;
        return m->ops->waking(m->w, c, t);
    }
    default:
        break;
    }
    struct fr_track *t = r->running;
    if (t == NULL) {
        /* Before the first switch the running thread is unknown. */
        snprintf(name, sizeof name, "CPU %" PRIu32 " (unknown thread)",
                 r->ring);
        t = get_track(m, FR_TRACK_THREAD, -1 - (int64_t)r->ring, r->ring,
                      name, &err);
        if (t == NULL || err != 0)
            return -1;
        c->thread = t;
    }
    return thread_event(m, r, c, t, rec);
}

/* A processor ring of a flightrec stream (context switches from perf):
 * a CPU track whose slices are the program's threads running there;
 * whatever else ran is not the program's and shows as a gap. */
static int processor_record(struct fr_model *m, struct fr_mring *r,
                            struct fr_ctx *c, const struct flightrec_record *rec)
{
    int err = 0;
    uint32_t cpu = rec->ring - FLIGHTREC_CPU_RING_BASE;
    char name[64];
    c->cpu = cpu;
    c->on_cpu = 1;
    m->cpu_rings = 1;
    if (r->cpu_track == NULL) {
        snprintf(name, sizeof name, "CPU %" PRIu32, cpu);
        r->cpu_track = get_track(m, FR_TRACK_CPU, (int64_t)cpu, cpu, name,
                                 &err);
        if (r->cpu_track == NULL || err != 0)
            return -1;
    }
    if (rec->type == FLIGHTREC_RECORD_LOSS)
        return m->ops->loss(m->w, c, r->cpu_track, rec->loss_kind,
                            rec->loss_count);
    int64_t tid = (int64_t)(int32_t)rec->data;
    switch (m->ev.role[rec->event]) {
    case FR_ROLE_SWITCH_IN: {
        const char *thread = NULL;
        if (m->src->thread_name != NULL)
            thread = m->src->thread_name(m->src->arg, tid);
        if (thread == NULL || thread[0] == '\0') {
            snprintf(name, sizeof name, "thread %" PRId64, tid);
            thread = name;
        }
        return push(m, c, r->cpu_track, FR_SLICE_RUN, rec->event,
                    (uint64_t)tid, rec->data, thread);
    }
    case FR_ROLE_SWITCH_OUT:
        pop(m, c, r->cpu_track, FR_SLICE_RUN, (uint64_t)tid, rec->event,
            rec->data, &err);
        return err;
    default:
        /* SCHEDULER_BLOCK, just before its switch out: the run ends
         * because the thread waits (ftrace says S, not R). */
        if (rec->event == FLIGHTREC_EV_SCHEDULER_BLOCK) {
            struct fr_track *t = r->cpu_track;
            for (int i = t->depth - 1; i >= 0; i--)
                if (t->stack[i].kind == FR_SLICE_RUN &&
                    t->stack[i].key == (uint64_t)tid)
                    t->stack[i].blocked = 1;
        }
        return 0;
    }
}

/* A thread that exits while on a CPU has no switch out (perf stops
 * following it first): its THREAD_EXIT ends its run there. */
struct exit_run {
    struct fr_model *m;
    const struct fr_ctx *c;
    uint64_t tid;
    int err;
};

static void end_exited_run(void *val, void *arg)
{
    struct fr_mring *r = val;
    struct exit_run *x = arg;
    if (r->cpu_track == NULL || r->ring < FLIGHTREC_CPU_RING_BASE ||
        x->err != 0)
        return;
    struct fr_ctx c = *x->c;
    c.cpu = r->ring - FLIGHTREC_CPU_RING_BASE;
    c.on_cpu = 1;
    pop(x->m, &c, r->cpu_track, FR_SLICE_RUN, x->tid, FLIGHTREC_EV_THREAD_EXIT,
        x->tid, &x->err);
}

/*
 * flightrec streams: `flightrec record` writes free() as FREE_ENTRY alone
 * (free returns nothing; older recordings, and programs that record free
 * by hand, add a FREE_EXIT of 0).  A FREE_ENTRY's slice therefore ends
 * with the next record of the stream: at that record's time if it is the
 * same thread's FREE_EXIT, otherwise at the free's own time, as a free of
 * no duration, exactly as a FREE_EXIT of 0 at the same time would end it
 * (a FREE_EXIT of that thread's that still comes next shows nothing).
 * Deciding at the very next record keeps every writer's output in time
 * order.  RTEMS streams always have their FREE_EXIT, which may come after
 * other processors' records: there it ends the slice as any exit does.
 */
static int end_pending_free(struct fr_model *m)
{
    struct fr_ctx at = m->free_at;
    m->free_at.thread = NULL;
    at.thread->free_ended = 1;
    int err = 0;
    pop(m, &at, at.thread, FR_SLICE_CALL, m->free_event, m->free_event + 1,
        0, &err);
    return err;
}

static int is_exit_of_pending_free(struct fr_model *m,
                                   const struct flightrec_record *rec)
{
    if (rec->type != FLIGHTREC_RECORD_EVENT ||
        m->ev.role[rec->event] != FR_ROLE_FREE_EXIT ||
        rec->event != m->free_event + 1)
        return 0;
    struct fr_mring *r = get_ring(m, rec->ring);
    return r != NULL && r->owner == m->free_at.thread;
}

int fr_model_finish(struct fr_model *m)
{
    return m->free_at.thread != NULL ? end_pending_free(m) : 0;
}

int fr_model_record(struct fr_model *m, const struct flightrec_record *rec)
{
    if (rec->type == FLIGHTREC_RECORD_EVENT && rec->event >= FR_EVENT_IDS)
        return 0;
    if (FLIGHTREC_UNLIKELY(m->free_at.thread != NULL)) {
        if (is_exit_of_pending_free(m, rec)) {
            m->free_at.thread = NULL; /* thread_event() ends it */
        } else {
            int err = end_pending_free(m);
            if (err != 0)
                return err;
        }
    }
    /* Loaded objects are metadata for the symbol names, not events. */
    if (!m->kernel && fr_is_object_record(rec))
        return 0;
    struct fr_mring *r = get_ring(m, rec->ring);
    if (r == NULL)
        return -1;
    /* Time per ring never decreases, whatever arrives late or untimed. */
    if (rec->time_ns > r->last_ns)
        r->last_ns = rec->time_ns;
    struct fr_ctx c = { r->last_ns, rec->ring, NULL, 0, 0 };
    if (m->kernel)
        return kernel_record(m, r, &c, rec);
    if (rec->ring_info != NULL &&
        rec->ring_info->context == FLIGHTREC_RING_CONTEXT_CPU &&
        rec->ring >= FLIGHTREC_CPU_RING_BASE)
        return processor_record(m, r, &c, rec);
    if (rec->type == FLIGHTREC_RECORD_EVENT &&
        rec->event == FLIGHTREC_EV_THREAD_EXIT && m->cpu_rings) {
        struct exit_run x = { m, &c, (uint64_t)(int64_t)(int32_t)rec->data,
                              0 };
        fr_map_each(&m->rings, end_exited_run, &x);
        if (x.err != 0)
            return x.err;
    }
    return user_record(m, r, &c, rec);
}
