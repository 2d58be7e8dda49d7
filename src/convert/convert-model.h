/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The timeline model shared by the Perfetto, Chrome JSON and ftrace writers:
 * it turns records into tracks, properly nested slices (entry/exit pairs,
 * lock wait / lock held, signal handlers and interrupts, running threads),
 * instants, a heap counter and scheduler events.  The writers only format.
 */
#ifndef FLIGHTREC_CONVERT_MODEL_H
#define FLIGHTREC_CONVERT_MODEL_H

#include <stdint.h>

#include "convert-events.h"
#include "convert-map.h"
#include "convert.h"

enum fr_track_kind {
    FR_TRACK_THREAD = 0,   /* a thread (context 0) */
    FR_TRACK_SIGNAL = 1,   /* a thread's signal handlers (ring context 1) */
    FR_TRACK_CPU = 2,      /* RTEMS processor: running threads */
    FR_TRACK_IRQ = 3       /* RTEMS processor: interrupts */
};

enum fr_slice_kind {
    FR_SLICE_SYSCALL = 0,  /* POSIX call pair, e.g. READ_ENTRY/EXIT */
    FR_SLICE_CALL,         /* other pair (malloc, free, RTEMS calls) */
    FR_SLICE_FUNC,
    FR_SLICE_LOCK_WAIT,
    FR_SLICE_LOCK_HELD,
    FR_SLICE_SIGNAL,
    FR_SLICE_IRQ,
    FR_SLICE_RUN,
    FR_SLICE_USER          /* a span the program defined (SPAN_BEGIN/END) */
};

#define FR_MODEL_DEPTH 32

struct fr_slice {
    uint8_t kind;
    uint8_t blocked;       /* a CPU run that ended because its thread
                            * waited (SCHEDULER_BLOCK), not preempted */
    uint32_t event;        /* entry event id */
    uint64_t key;          /* what the exit must match */
    uint64_t data;         /* entry data */
    uint64_t begin_ns;     /* when it began (or was reopened) */
    char name[64];         /* event names are up to 63 bytes */
};

struct fr_track {
    uint64_t uuid;         /* unique, from 16 up */
    int kind;
    int64_t tid;           /* thread id (RTEMS object id); -1 for CPU/IRQ */
    uint32_t cpu;          /* ring (flightrec) or processor (RTEMS) */
    char name[64];         /* track name as viewers show it */
    char comm[64];         /* the thread's own name (signal tracks too) */
    int idle;              /* RTEMS idle thread: shown as tid 0 */
    int depth;
    /* A free of no duration ended before its FREE_EXIT came: that exit,
     * if it comes next, shows nothing (fr_model_record()). */
    int free_ended;
    struct fr_slice stack[FR_MODEL_DEPTH];
};

/* Where an event happens. */
struct fr_ctx {
    uint64_t ns;
    uint32_t cpu;
    struct fr_track *thread;   /* running / owning thread */
    int in_irq;                /* signal handler or interrupt */
    int on_cpu;                /* flightrec: cpu is a processor (a processor
                                * ring), not a ring id */
};

struct fr_model_ops {
    /* A track is about to be used for the first time (or renamed). */
    int (*track)(void *w, struct fr_track *t);
    int (*begin)(void *w, const struct fr_ctx *c, struct fr_track *t,
                 const struct fr_slice *s);
    /* @a exit_event / @a exit_data: the record that ended it, or
     * UINT32_MAX when the model splits slices to keep them nested. */
    int (*end)(void *w, const struct fr_ctx *c, struct fr_track *t,
               const struct fr_slice *s, uint32_t exit_event,
               uint64_t exit_data);
    int (*instant)(void *w, const struct fr_ctx *c, struct fr_track *t,
                   uint32_t event, uint64_t data);
    int (*counter)(void *w, const struct fr_ctx *c, int64_t heap_bytes);
    /* RTEMS: a processor switched threads (prev may be NULL: unknown). */
    int (*sched_switch)(void *w, const struct fr_ctx *c,
                        struct fr_track *prev, struct fr_track *next);
    int (*waking)(void *w, const struct fr_ctx *c, struct fr_track *t);
    int (*loss)(void *w, const struct fr_ctx *c, struct fr_track *t,
                uint32_t kind, uint64_t count);
    /* A sample of a counter the program defined (FLIGHTREC_EVENT_COUNTER),
     * on the thread @a t that recorded it. */
    int (*value)(void *w, const struct fr_ctx *c, struct fr_track *t,
                 uint32_t event, int64_t value);
    /* A string event's text (raw bytes, NUL-terminated). */
    int (*text)(void *w, const struct fr_ctx *c, struct fr_track *t,
                uint32_t event, const char *text, size_t len);
};

struct fr_mring;

struct fr_model {
    const struct fr_model_ops *ops;
    void *w;
    const struct fr_source *src;
    int kernel;
    struct fr_events ev;
    struct fr_map rings;
    int cpu_rings;       /* processor rings seen (context switches) */
    struct fr_map tracks;
    struct fr_mring *cache;
    uint64_t next_uuid;
    struct fr_heap heap;
    int narrow;            /* 32-bit stream: counters sign-extend */
    uint64_t unmatched;    /* exits without entry, shown as instants */
    uint64_t too_deep;     /* slices beyond FR_MODEL_DEPTH, dropped */
    /* flightrec streams: the free slice a FREE_ENTRY opened, until the
     * next record says whether its FREE_EXIT follows (thread NULL: none). */
    struct fr_ctx free_at;
    uint32_t free_event;
};

/* Heap pointers tracked at once; beyond it allocations are not counted. */
#define FR_MODEL_HEAP_CAP (1u << 20)

int fr_model_init(struct fr_model *m, const struct fr_model_ops *ops, void *w,
                  const struct fr_source *src, int kernel);
void fr_model_free(struct fr_model *m);
/* Returns 0, or the first non-zero writer result. */
int fr_model_record(struct fr_model *m, const struct flightrec_record *r);
/* Ends what only the end of the stream ends (a free still waiting for its
 * exit), before the writer's trailer; 0 or the writer's result. */
int fr_model_finish(struct fr_model *m);

/* Shown pid of a thread track: RTEMS idle threads are 0. */
static inline int64_t fr_track_pid(const struct fr_track *t)
{
    return t == NULL ? 0 : t->idle ? 0 : t->tid;
}

#endif
