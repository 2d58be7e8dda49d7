/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CTF 1.8 writer: a directory with `metadata` and one data stream file per
 * ring (per CPU for RTEMS streams).  Each stream is written as a sequence of
 * packets of at most FR_CTF_PACKET_MAX bytes, so memory does not grow with
 * the trace length.  Losses close the current packet and raise the
 * cumulative `events_discarded`, which babeltrace2 and Trace Compass turn
 * into "discarded events" themselves.
 *
 * RTEMS streams are shaped like an LTTng kernel trace (sched_switch,
 * irq_handler_*, syscall_*), flightrec streams like an LTTng-UST trace.  A
 * flightrec stream is one thread, so its identity (vtid, procname) is in
 * the packet context rather than repeated on every event, and events have
 * LTTng's compact "large" header: a plain user event takes 14 bytes.  The
 * metadata is written last, because user event names can be registered
 * anywhere in the stream.  The trace is written into a temporary directory
 * beside the output and swapped into place only when complete.
 *
 * A flightrec stream with processor rings (context switches recorded from
 * perf) gets a second, kernel-shaped trace: one stream per CPU with
 * sched_switch.  The output is then laid out as an LTTng session, the two
 * traces side by side in `kernel` and `ust` (readers do not look for traces
 * below one), so that babeltrace2 and LTTng's analyses read both.
 */
#define _GNU_SOURCE /* renameat2 (RENAME_EXCHANGE) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flightrec/events.h>
#include <flightrec/format.h>

#include "convert-events.h"
#include "convert-map.h"
#include "util/out-buffer.h"
#include "convert-symbols.h"
#include "convert.h"

/* Packet buffers start small and double up to the largest packet while the
 * buffers of all streams together stay within the budget, each up to its
 * fair share (the budget over the streams holding a buffer); a full buffer
 * is written out as a packet, and one above its share shrinks to it.  So
 * memory is bounded by the budget plus a minimal buffer per ring, whatever
 * the ring count, and streams written in turn all get packets of about
 * their share: the first ones do not keep the whole budget while the
 * others write minimal packets. */
#define FR_CTF_PACKET_MIN 1024u
#define FR_CTF_PACKET_MAX (64u * 1024u)
/* 8 MiB, not more: with thousands of rings each record goes to another
 * stream, and the bytes written between two visits of one buffer (all the
 * buffers' worth) must stay in the last-level cache.  At 5,000 rings 32 MiB
 * made the writer 1.7 times slower for packets 4 times larger. */
#define FR_CTF_BUFFER_BUDGET (8u * 1024u * 1024u)
/* Stream files open at once, at most: the rest are reopened on demand. */
#define FR_CTF_FDS_MAX 65536
/* Packet header (24) + packet context without the thread identity (52). */
#define FR_CTF_PREFIX 76u
/* Thread identity in the packet context: vtid + procname (with NUL). */
#define FR_CTF_PROCNAME_MAX 64u
/* Largest event: extended header 14 + a span begin (a name of up to 63
 * bytes and its NUL, data 8) or a string event's text (with its NUL). */
#define FR_CTF_NAME_MAX 64u
#define FR_CTF_EVENT_MAX (14u + FR_CTF_NAME_MAX + 8u + FLIGHTREC_STRING_MAX)
/* Event header: the id of an extended header. */
#define FR_CTF_EXTENDED 0xffffu
/* Processors of a stream whose rings switch tasks, at most. */
#define FR_CTF_TASK_CPUS 64

enum {
    CLS_SCHED_SWITCH = FR_EVENT_IDS,
    CLS_IRQ_ENTRY,
    CLS_IRQ_EXIT,
    CLS_SCHED_WAKING,
    CLS_MALLOC,
    CLS_FREE,
    CLS_FUNC_ENTRY,
    CLS_FUNC_EXIT,
    CLS_BIN_INFO,
    CLS_BUILD_ID,
    CLS_COUNT
};

/* The fields every plain event touches come first, in the first two cache
 * lines (streams are allocated on a line boundary): at thousands of rings
 * each record lands on another stream, so its lines are cache misses. */
struct ctf_stream {
    /* line 0 */
    uint32_t ring;
    uint16_t plen;           /* procname bytes including NUL */
    uint8_t malloc_pending;  /* UST: a MALLOC_ENTRY waits for its exit */
    uint8_t created;         /* the file exists */
    uint64_t last_ns;        /* per-stream time never decreases */
    uint64_t clock_ns;       /* last timestamp written in the packet */
    unsigned char *buf;      /* the open packet */
    size_t len;              /* bytes in buf, 0 = no open packet */
    size_t cap;
    int64_t tid;             /* UST: the thread of the packet context */
    /* UST: a loaded-object record being assembled, written as LTTng-UST's
     * statedump events when it ends; NULL when none */
    struct fr_object_rec *object;
    /* line 1: the thread name of the packet context (its first 16 bytes
     * are compared on every event) */
    char procname[FR_CTF_PROCNAME_MAX];
    /* the rest: per packet, per loss, per malloc or kernel-shaped only */
    int slot;                /* fd cache slot, -1 when closed */
    uint64_t begin_ns;       /* timestamp_begin of the open packet */
    uint64_t seq;            /* packet_seq_num of the next packet */
    uint64_t discarded;      /* cumulative events_discarded */
    size_t prefix;           /* packet header + context bytes */
    /* kernel state (RTEMS CPU) */
    int64_t cur_tid;         /* running thread (RTEMS id), -1 unknown */
    int64_t out_tid;         /* last switched out, -1 none */
    int64_t blocked_tid;     /* processor ring: SCHEDULER_BLOCK before OUT */
    int task_switches;       /* a scheduler's own switches (firmware) */
    /* UST state: the pending malloc's size and time */
    uint64_t malloc_size;
    uint64_t malloc_ns;
};

struct ctf_sink {
    struct fr_sink base;
    char *dir;               /* where the trace goes */
    char *tmp;               /* where it is written until it is complete */
    int committed;
    struct fr_map streams;
    struct ctf_stream *cache;    /* last used stream */
    /* Rings are small numbers: a direct index finds most streams without
     * hashing (the map holds them all). */
    struct ctf_stream **by_ring;
    uint32_t by_ring_len;
    struct fr_events ev;
    uint8_t used[CLS_COUNT];
    /* The payload of each event id, fixed at its first event (a class
     * has one layout): LAYOUT_*, from the kind the program defined. */
    uint8_t layout[FR_EVENT_IDS];
    unsigned char uuid[16];
    int little;
    size_t buffered;         /* bytes of all packet buffers */
    size_t nbuffers;         /* streams holding a packet buffer */
    int nslots;
    int hand;                /* next slot to reuse */
    int *fds;
    struct ctf_stream **owners;
    /* The kernel trace of a flightrec stream's processor rings (in
     * tmp/kernel), made at the first such record; NULL until then. */
    struct ctf_sink *kernel_trace;
    int processor_rings;     /* this is that trace: perf's switches */
    /* Owners of rings that switch tasks themselves (a firmware's
     * scheduler): each is a processor of the kernel trace. */
    int64_t task_cpu_owner[FR_CTF_TASK_CPUS];
    int task_cpus;
};

static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

static int fail(struct ctf_sink *s, const char *what, const char *path)
{
    fr_errorf(s->base.error, sizeof s->base.error, "%s %s: %s", what, path,
             strerror(errno));
    return -1;
}

static size_t stream_prefix(const struct ctf_sink *s,
                            const struct ctf_stream *st)
{
    return s->base.kernel ? FR_CTF_PREFIX : FR_CTF_PREFIX + 4 + st->plen;
}

static void packet_prefix(struct ctf_sink *s, struct ctf_stream *st,
                          unsigned char *p, size_t len, uint64_t begin_ns,
                          uint64_t end_ns, uint64_t discarded)
{
    put32(p, 0xC1FC1FC1u);
    memcpy(p + 4, s->uuid, 16);
    put32(p + 20, 0);
    put64(p + 24, begin_ns);
    put64(p + 32, end_ns);
    put64(p + 40, (uint64_t)len * 8u);
    put64(p + 48, (uint64_t)len * 8u);
    put64(p + 56, st->seq++);
    put64(p + 64, discarded);
    put32(p + 72, st->ring);
    if (!s->base.kernel) {
        int32_t vtid = (int32_t)st->tid;
        memcpy(p + 76, &vtid, 4);
        memcpy(p + 80, st->procname, st->plen);
    }
}

static void stream_path(const struct ctf_sink *s, uint32_t ring, char *path,
                        size_t size)
{
    snprintf(path, size, "%s/stream_%" PRIu32, s->tmp, ring);
}

/* The stream's file descriptor: stream files are opened on demand and the
 * least recently opened one is closed to make room, so any number of rings
 * converts within the process's file limit. */
static int stream_fd(struct ctf_sink *s, struct ctf_stream *st)
{
    if (st->slot >= 0)
        return s->fds[st->slot];
    int slot = s->hand;
    s->hand = (s->hand + 1) % s->nslots;
    if (s->owners[slot] != NULL) {
        s->owners[slot]->slot = -1;
        s->owners[slot] = NULL;
        if (close(s->fds[slot]) != 0)
            return fail(s, "cannot close", "a CTF stream file");
    }
    char path[4200];
    stream_path(s, st->ring, path, sizeof path);
    int flags = O_WRONLY | O_APPEND | O_CLOEXEC;
    if (!st->created)
        flags |= O_CREAT | O_EXCL;
    int fd = open(path, flags, 0600);
    if (fd < 0)
        return fail(s, "cannot create", path);
    st->created = 1;
    st->slot = slot;
    s->fds[slot] = fd;
    s->owners[slot] = st;
    return fd;
}

static int write_stream(struct ctf_sink *s, struct ctf_stream *st,
                        const unsigned char *p, size_t n)
{
    int fd = stream_fd(s, st);
    if (fd < 0)
        return -1;
    if (fr_write_all(fd, p, n) != 0) {
        fr_errorf(s->base.error, sizeof s->base.error,
                  "writing CTF stream %" PRIu32 ": %s", st->ring,
                  strerror(errno));
        return -1;
    }
    return 0;
}

/* Writes the open packet (or an empty one when len == 0) and resets. */
static int flush_packet(struct ctf_sink *s, struct ctf_stream *st,
                        uint64_t end_ns)
{
    unsigned char empty[FR_CTF_PREFIX + 4 + FR_CTF_PROCNAME_MAX];
    size_t prefix = stream_prefix(s, st);
    if (st->seq == 0 && st->discarded != 0) {
        /* Readers report an unknown count when a stream's first packet
         * already counts losses: lead with an empty zero packet. */
        uint64_t t = st->len ? st->begin_ns : end_ns;
        packet_prefix(s, st, empty, prefix, t, t, 0);
        if (write_stream(s, st, empty, prefix) != 0)
            return -1;
    }
    if (st->len == 0) {
        packet_prefix(s, st, empty, prefix, end_ns, end_ns, st->discarded);
        return write_stream(s, st, empty, prefix);
    }
    size_t len = st->len;
    packet_prefix(s, st, st->buf, len, st->begin_ns, end_ns, st->discarded);
    st->len = 0;
    return write_stream(s, st, st->buf, len);
}

/* Resizes the packet buffer of @a st (no open packet past @a cap). */
static int resize_buffer(struct ctf_sink *s, struct ctf_stream *st,
                         size_t cap)
{
    unsigned char *b = realloc(st->buf, cap);
    if (b == NULL) {
        fr_errorf(s->base.error, sizeof s->base.error, "out of memory");
        return -1;
    }
    if (st->cap == 0)
        s->nbuffers++;
    s->buffered = s->buffered - st->cap + cap;
    st->buf = b;
    st->cap = cap;
    return 0;
}

/* Room for one more event in the open packet: a bigger buffer while the
 * budget and the stream's share allow, else the packet goes out. */
static int make_room(struct ctf_sink *s, struct ctf_stream *st)
{
    if (st->cap == 0)
        return resize_buffer(s, st, FR_CTF_PACKET_MIN);
    size_t share = FR_CTF_BUFFER_BUDGET / (s->nbuffers ? s->nbuffers : 1);
    if (share > FR_CTF_PACKET_MAX)
        share = FR_CTF_PACKET_MAX;
    if (share < FR_CTF_PACKET_MIN)
        share = FR_CTF_PACKET_MIN;
    size_t want = 2 * st->cap < share ? 2 * st->cap : share;
    if (want > st->cap && s->buffered + want - st->cap <= FR_CTF_BUFFER_BUDGET)
        return resize_buffer(s, st, want);
    if (flush_packet(s, st, st->last_ns) != 0)
        return -1;
    return st->cap > share ? resize_buffer(s, st, share) : 0;
}

#define FR_CTF_DIRECT_RINGS (1u << 20)

/* Keeps @a st in the direct index (rings below FR_CTF_DIRECT_RINGS). */
static void index_stream(struct ctf_sink *s, struct ctf_stream *st)
{
    uint32_t ring = st->ring;
    if (ring >= FR_CTF_DIRECT_RINGS)
        return;
    if (ring >= s->by_ring_len) {
        uint32_t len = s->by_ring_len ? s->by_ring_len : 64;
        while (len <= ring)
            len *= 2;
        struct ctf_stream **v = realloc(s->by_ring, len * sizeof *v);
        if (v == NULL)
            return;   /* the map still finds it */
        memset(v + s->by_ring_len, 0,
               (len - s->by_ring_len) * sizeof *v);
        s->by_ring = v;
        s->by_ring_len = len;
    }
    s->by_ring[ring] = st;
}

static int flush_stream(struct ctf_sink *s, struct ctf_stream *st);

/* Records come ring by ring: the stream of a ring that is done keeps no
 * buffer and no file open. */
static int retire_stream(struct ctf_sink *s, struct ctf_stream *st)
{
    if (flush_stream(s, st) != 0)
        return -1;
    if (st->cap != 0) {
        s->buffered -= st->cap;
        s->nbuffers--;
        free(st->buf);
        st->buf = NULL;
        st->cap = 0;
    }
    if (st->slot >= 0) {
        int fd = s->fds[st->slot];
        s->owners[st->slot] = NULL;
        st->slot = -1;
        if (close(fd) != 0)
            return fail(s, "cannot close", "a CTF stream file");
    }
    return 0;
}

static struct ctf_stream *get_stream(struct ctf_sink *s, uint32_t ring)
{
    struct ctf_stream *st = s->cache;
    if (st != NULL && st->ring == ring)
        return st;
    if (st != NULL && s->base.src->info->by_ring && !s->base.kernel &&
        retire_stream(s, st) != 0)
        return NULL;
    st = ring < s->by_ring_len ? s->by_ring[ring] : NULL;
    if (st == NULL)
        st = fr_map_get(&s->streams, ring);
    if (st == NULL) {
        size_t size = (sizeof *st + 63) / 64 * 64;
        st = aligned_alloc(64, size);
        if (st != NULL)
            memset(st, 0, size);
        if (st == NULL || fr_map_put(&s->streams, ring, st) != 0) {
            free(st);
            fr_errorf(s->base.error, sizeof s->base.error, "out of memory");
            return NULL;
        }
        st->ring = ring;
        st->slot = -1;
        st->tid = -1;
        st->plen = 1;
        st->cur_tid = -1;
        st->out_tid = -1;
        st->blocked_tid = -1;
        index_stream(s, st);
    }
    s->cache = st;
    return st;
}

/* Starts an event of class @a cls at @a ns; returns where its payload goes,
 * or NULL on a write error.  The header is LTTng's "large" one: a 16-bit id
 * and the low 32 bits of the time, or (id 65535) a 32-bit id and the whole
 * time when 2^32 ns or more passed since the packet's previous time. */
static unsigned char *event_begin_sized(struct ctf_sink *s,
                                        struct ctf_stream *st, uint32_t cls,
                                        uint64_t ns, size_t payload_max)
{
    /* Room for this event only (not the largest one): small packets, as
     * at tens of thousands of rings, are filled to their end. */
    while (st->len + 14u + payload_max > st->cap)
        if (make_room(s, st) != 0)
            return NULL;
    if (st->len == 0) {
        st->prefix = stream_prefix(s, st);
        st->len = st->prefix;
        st->begin_ns = ns;
        st->clock_ns = ns;
    }
    s->used[cls] = 1;
    unsigned char *p = st->buf + st->len;
    if (ns - st->clock_ns <= UINT32_MAX && cls < FR_CTF_EXTENDED) {
        put16(p, (uint16_t)cls);
        put32(p + 2, (uint32_t)ns);
        p += 6;
    } else {
        put16(p, FR_CTF_EXTENDED);
        put32(p + 2, cls);
        put64(p + 6, ns);
        p += 14;
    }
    st->clock_ns = ns;
    return p;
}

/* An event whose payload may be as large as any (names, strings). */
static unsigned char *event_begin(struct ctf_sink *s, struct ctf_stream *st,
                                  uint32_t cls, uint64_t ns)
{
    return event_begin_sized(s, st, cls, ns, FR_CTF_EVENT_MAX - 14u);
}

static void event_end(struct ctf_stream *st, const unsigned char *end)
{
    st->len = (size_t)(end - st->buf);
}

enum {
    LAYOUT_DATA = 0,          /* x64 _data */
    LAYOUT_SPAN_BEGIN,        /* string _span; x64 _data */
    LAYOUT_SPAN_END,          /* string _span */
    LAYOUT_COUNTER,           /* s64 _value */
    LAYOUT_STRING             /* string _text */
};

static int put_generic(struct ctf_sink *s, struct ctf_stream *st,
                       uint32_t cls, uint64_t ns, uint64_t data);

/* Copies @a str (at most @a max - 1 bytes) with its NUL. */
static unsigned char *put_cstr(unsigned char *p, const char *str, size_t max)
{
    size_t n = strnlen(str, max - 1);
    memcpy(p, str, n);
    p[n] = '\0';
    return p + n + 1;
}

/* An event the program defined (span begin or end, counter, string) in
 * the payload its class got at its first event. */
static int put_defined(struct ctf_sink *s, struct ctf_stream *st,
                       const struct flightrec_record *r, uint64_t ns)
{
    const struct fr_source *src = s->base.src;
    uint32_t ev = r->event;
    int begin = -1;
    if (FLIGHTREC_LIKELY(s->used[ev] && s->layout[ev] == LAYOUT_DATA))
        return put_generic(s, st, ev, ns, r->data);
    uint32_t kind = src->event_kind != NULL
                        ? src->event_kind(src->arg, ev, &begin)
                        : FLIGHTREC_EVENT_INSTANT;
    if (!s->used[ev])
        s->layout[ev] = kind <= FLIGHTREC_EVENT_STRING ? (uint8_t)kind
                                                       : LAYOUT_DATA;
    if (s->layout[ev] == LAYOUT_DATA)
        return put_generic(s, st, ev, ns, r->data);
    unsigned char *p = event_begin(s, st, ev, ns);
    if (p == NULL)
        return -1;
    switch (s->layout[ev]) {
    case LAYOUT_SPAN_BEGIN:
        p = put_cstr(p, src->event_name(src->arg, ev), FR_CTF_NAME_MAX);
        put64(p, r->data);
        p += 8;
        break;
    case LAYOUT_SPAN_END:
        /* The span it closes is named by its begin. */
        p = put_cstr(p, src->event_name(src->arg, begin >= 0 ? (uint32_t)begin
                                                             : ev),
                     FR_CTF_NAME_MAX);
        break;
    case LAYOUT_COUNTER: {
        int narrow = FLIGHTREC_ITEM_SIZE(src->info->format) == 8;
        int64_t v = narrow ? (int64_t)(int32_t)r->data : (int64_t)r->data;
        memcpy(p, &v, 8);
        p += 8;
        break;
    }
    default:
        p = put_cstr(p, r->text != NULL ? r->text : "", FLIGHTREC_STRING_MAX);
        break;
    }
    event_end(st, p);
    return 0;
}

static int put_generic(struct ctf_sink *s, struct ctf_stream *st,
                       uint32_t cls, uint64_t ns, uint64_t data)
{
    unsigned char *p = event_begin_sized(s, st, cls, ns, 8);
    if (p == NULL)
        return -1;
    put64(p, data);
    event_end(st, p + 8);
    return 0;
}

/* The LTTng-UST classes with two 64-bit fields (malloc, func_entry/exit). */
static int put_pair(struct ctf_sink *s, struct ctf_stream *st, uint32_t cls,
                    uint64_t ns, uint64_t a, uint64_t b)
{
    unsigned char *p = event_begin_sized(s, st, cls, ns, 16);
    if (p == NULL)
        return -1;
    put64(p, a);
    put64(p + 8, b);
    event_end(st, p + 16);
    return 0;
}

static void comm16(struct ctf_sink *s, struct ctf_stream *st, int64_t tid,
                   unsigned char *dst)
{
    memset(dst, 0, 16);
    if (tid < 0)
        return;
    if (fr_rtems_is_idle(tid) || (s->processor_rings && tid == 0)) {
        snprintf((char *)dst, 16, "swapper/%" PRIu32, st->ring);
        return;
    }
    const char *name = NULL;
    if (s->base.src->thread_name != NULL)
        name = s->base.src->thread_name(s->base.src->arg, tid);
    char tmp[24];
    if (name == NULL || name[0] == '\0') {
        snprintf(tmp, sizeof tmp, "0x%08" PRIx64, (uint64_t)tid & 0xffffffffu);
        name = tmp;
    }
    memcpy(dst, name, strnlen(name, 15));
}

static int32_t kernel_tid(int64_t tid)
{
    if (tid < 0 || fr_rtems_is_idle(tid))
        return 0;
    return (int32_t)tid;
}

/* sched_switch from @a prev (leaving in @a state) to @a next on @a st's
 * CPU; thread id 0 is the idle task. */
static int put_sched_switch(struct ctf_sink *s, struct ctf_stream *st,
                            uint64_t ns, int64_t prev, int64_t state,
                            int64_t next)
{
    unsigned char *p = event_begin(s, st, CLS_SCHED_SWITCH, ns);
    if (p == NULL)
        return -1;
    int32_t prio = 20, t;
    comm16(s, st, prev, p);
    t = (int32_t)prev;
    memcpy(p + 16, &t, 4);
    memcpy(p + 20, &prio, 4);
    memcpy(p + 24, &state, 8);
    comm16(s, st, next, p + 32);
    t = (int32_t)next;
    memcpy(p + 48, &t, 4);
    memcpy(p + 52, &prio, 4);
    event_end(st, p + 56);
    return 0;
}

/* A processor ring of a flightrec stream (perf's switches): only the
 * program's threads are seen, so a thread switches out to the idle task
 * (whatever else ran is not the program's) and in from it.  A thread that
 * left without blocking (SCHEDULER_BLOCK before its SWITCH_OUT) was
 * preempted and stays runnable: LTTng's analyses learn that from a
 * sched_waking at that moment, so that lttng-schedtop measures how long
 * it waited for a CPU again. */
static int processor_record(struct ctf_sink *s, struct ctf_stream *st,
                            const struct flightrec_record *r, uint64_t ns)
{
    int64_t tid = (int64_t)(int32_t)r->data;
    if (r->event == FLIGHTREC_EV_SCHEDULER_BLOCK) {
        st->blocked_tid = tid;
        return 0;
    }
    switch (s->ev.role[r->event]) {
    case FR_ROLE_SWITCH_OUT: {
        int blocked = st->blocked_tid == tid;
        st->blocked_tid = -1;
        st->cur_tid = 0;
        /* TASK_INTERRUPTIBLE (1) or TASK_RUNNING (0). */
        if (put_sched_switch(s, st, ns, tid, blocked ? 1 : 0, 0) != 0)
            return -1;
        if (blocked)
            return 0;
        unsigned char *p = event_begin(s, st, CLS_SCHED_WAKING, ns);
        if (p == NULL)
            return -1;
        int32_t t = (int32_t)tid, prio = 20, cpu = (int32_t)st->ring;
        comm16(s, st, tid, p);
        memcpy(p + 16, &t, 4);
        memcpy(p + 20, &prio, 4);
        memcpy(p + 24, &cpu, 4);
        event_end(st, p + 28);
        return 0;
    }
    case FR_ROLE_SWITCH_IN:
        st->cur_tid = tid;
        return put_sched_switch(s, st, ns, 0, 0, tid);
    default:
        return put_defined(s, st, r, ns);
    }
}

static int kernel_record(struct ctf_sink *s, struct ctf_stream *st,
                         const struct flightrec_record *r, uint64_t ns)
{
    unsigned char *p;
    uint32_t ev = r->event;
    if (s->processor_rings && !st->task_switches)
        return processor_record(s, st, r, ns);
    switch (s->ev.role[ev]) {
    case FR_ROLE_SWITCH_OUT:
        st->out_tid = (int64_t)r->data;
        return 0;
    case FR_ROLE_SWITCH_IN: {
        int64_t prev = st->out_tid >= 0 ? st->out_tid : st->cur_tid;
        int64_t next = (int64_t)r->data;
        if (prev < 0) {
            /* The thread switched out is unknown (the stream starts here,
             * or a loss cut the switch in half): only the next one is
             * known, which is no switch to show. */
            st->cur_tid = next;
            st->out_tid = -1;
            s->base.half_switches++;
            return 0;
        }
        p = event_begin(s, st, CLS_SCHED_SWITCH, ns);
        if (p == NULL)
            return -1;
        int32_t prio = 20;
        int64_t state = fr_rtems_is_idle(prev) ? 0x402 : 0;
        int32_t t;
        comm16(s, st, prev, p);
        t = kernel_tid(prev);
        memcpy(p + 16, &t, 4);
        memcpy(p + 20, &prio, 4);
        memcpy(p + 24, &state, 8);
        comm16(s, st, next, p + 32);
        t = kernel_tid(next);
        memcpy(p + 48, &t, 4);
        memcpy(p + 52, &prio, 4);
        event_end(st, p + 56);
        st->cur_tid = next;
        st->out_tid = -1;
        return 0;
    }
    case FR_ROLE_IRQ_ENTRY: {
        p = event_begin(s, st, CLS_IRQ_ENTRY, ns);
        if (p == NULL)
            return -1;
        int32_t irq = (int32_t)r->data;
        memcpy(p, &irq, 4);
        p[4] = '\0';   /* no handler names in the stream */
        event_end(st, p + 5);
        return 0;
    }
    case FR_ROLE_IRQ_EXIT: {
        p = event_begin(s, st, CLS_IRQ_EXIT, ns);
        if (p == NULL)
            return -1;
        int32_t irq = (int32_t)r->data, ret = 1;
        memcpy(p, &irq, 4);
        memcpy(p + 4, &ret, 4);
        event_end(st, p + 8);
        return 0;
    }
    case FR_ROLE_UNBLOCK: {
        p = event_begin(s, st, CLS_SCHED_WAKING, ns);
        if (p == NULL)
            return -1;
        int32_t t = kernel_tid((int64_t)r->data), prio = 20;
        int32_t cpu = (int32_t)st->ring;
        comm16(s, st, (int64_t)r->data, p);
        memcpy(p + 16, &t, 4);
        memcpy(p + 20, &prio, 4);
        memcpy(p + 24, &cpu, 4);
        event_end(st, p + 28);
        return 0;
    }
    default:
        return put_defined(s, st, r, ns);
    }
}

/* An unmatched MALLOC_ENTRY is kept as a plain event (at its time, or the
 * stream's last time if later events were written meanwhile). */
static int flush_malloc(struct ctf_sink *s, struct ctf_stream *st)
{
    if (!st->malloc_pending)
        return 0;
    st->malloc_pending = 0;
    uint64_t ns = st->malloc_ns > st->last_ns ? st->malloc_ns : st->last_ns;
    return put_generic(s, st, FLIGHTREC_EV_MALLOC_ENTRY, ns, st->malloc_size);
}

static int ust_record(struct ctf_sink *s, struct ctf_stream *st,
                      const struct flightrec_record *r, uint64_t ns)
{
    uint32_t ev = r->event;
    int role = s->ev.role[ev];
    switch (role) {
    case FR_ROLE_MALLOC_ENTRY:
        if (flush_malloc(s, st) != 0)
            return -1;
        /* LTTng's malloc event comes after the call with size and result:
         * hold the size until the exit. */
        st->malloc_pending = 1;
        st->malloc_size = r->data;
        st->malloc_ns = ns;
        return 0;
    case FR_ROLE_MALLOC_EXIT:
        if (!st->malloc_pending)
            return put_generic(s, st, ev, ns, r->data);
        st->malloc_pending = 0;
        return put_pair(s, st, CLS_MALLOC, ns, st->malloc_size, r->data);
    case FR_ROLE_FREE_ENTRY:
        return put_generic(s, st, CLS_FREE, ns, r->data);
    case FR_ROLE_FREE_EXIT:
        return 0;   /* carries nothing: free() returns void */
    case FR_ROLE_FUNC_ENTRY:
    case FR_ROLE_FUNC_EXIT:
        /* The call site is not recorded. */
        return put_pair(s, st,
                        role == FR_ROLE_FUNC_ENTRY ? CLS_FUNC_ENTRY
                                                   : CLS_FUNC_EXIT,
                        ns, r->data, 0);
    default:
        return put_defined(s, st, r, ns);
    }
}

/* Follows the ring's owner: a reused ring changes thread, and the thread
 * identity is per packet, so a new owner starts a new packet. */
static int refresh_context(struct ctf_sink *s, struct ctf_stream *st,
                           const struct flightrec_ring_info *ri)
{
    int64_t tid = ri ? ri->thread_id : -1;
    /* Most records: the same owner with a short name, whose first 16 bytes
     * (the NUL among them) are those kept the last time. */
    if (FLIGHTREC_LIKELY(ri != NULL && tid == st->tid && st->plen <= 16 &&
                         memcmp(ri->thread_name, st->procname, 16) == 0))
        return 0;
    const char *name = ri ? ri->thread_name : "";
    size_t n = strnlen(name, sizeof st->procname - 1);
    if (tid == st->tid && n + 1 == st->plen &&
        memcmp(name, st->procname, n) == 0) {
        /* The same name, other bytes after its NUL: keep those for the
         * quick comparison (the packet context uses plen bytes only). */
        if (ri != NULL && st->plen <= 16)
            memcpy(st->procname, name, 16);
        return 0;
    }
    if (st->len > 0 && flush_packet(s, st, st->last_ns) != 0)
        return -1;
    st->tid = tid;
    memcpy(st->procname, name, n);
    st->procname[n] = '\0';
    st->plen = (uint16_t)(n + 1);
    return 0;
}

static int ctf_begin(struct fr_sink *base);
static const struct fr_sink_ops ctf_ops;

/* The kernel trace beside this one, made on first use. */
static struct ctf_sink *kernel_trace(struct ctf_sink *s)
{
    if (s->kernel_trace != NULL)
        return s->kernel_trace;
    if (s->base.src->info->by_ring) {
        /* A processor's stream takes records of several rings. */
        s->base.needs_time_order = 1;
        fr_errorf(s->base.error, sizeof s->base.error,
                  "processor streams need records in time order");
        return NULL;
    }
    struct ctf_sink *k = calloc(1, sizeof *k);
    size_t len = strlen(s->tmp) + sizeof "/kernel";
    if (k != NULL) {
        k->nslots = s->nslots > 64 ? 64 : s->nslots;
        k->tmp = malloc(len);
        k->fds = calloc((size_t)k->nslots, sizeof *k->fds);
        k->owners = calloc((size_t)k->nslots, sizeof *k->owners);
    }
    if (k == NULL || k->tmp == NULL || k->fds == NULL || k->owners == NULL) {
        if (k != NULL) {
            free(k->tmp);
            free(k->fds);
            free(k->owners);
        }
        free(k);
        fr_errorf(s->base.error, sizeof s->base.error, "out of memory");
        return NULL;
    }
    snprintf(k->tmp, len, "%s/kernel", s->tmp);
    k->base.ops = &ctf_ops;
    k->base.kernel = 1;
    k->base.src = s->base.src;
    k->little = s->little;
    k->processor_rings = 1;
    fr_map_init(&k->streams);
    s->kernel_trace = k;
    if (mkdir(k->tmp, 0755) != 0) {
        fail(s, "cannot create", k->tmp);
        return NULL;
    }
    ctf_begin(&k->base);
    /* Another trace: another UUID (readers join traces that share one). */
    k->uuid[15] ^= 0xa5;
    return k;
}

/* The kernel-trace processor of a record whose ring's owner switches tasks
 * (THREAD_SWITCH_* in a thread's own rings: a firmware's scheduler, whose
 * "thread" is the CPU), from its first switch on; -1 for the others. */
static int task_cpu(struct ctf_sink *s, const struct flightrec_record *r)
{
    int64_t owner = r->ring_info->thread_id;
    for (int i = 0; i < s->task_cpus; i++)
        if (s->task_cpu_owner[i] == owner)
            return i;
    int role = r->type == FLIGHTREC_RECORD_EVENT && r->event < FR_EVENT_IDS
                   ? s->ev.role[r->event] : 0;
    if ((role != FR_ROLE_SWITCH_IN && role != FR_ROLE_SWITCH_OUT) ||
        s->task_cpus == FR_CTF_TASK_CPUS)
        return -1;
    s->task_cpu_owner[s->task_cpus] = owner;
    return s->task_cpus++;
}

/* A thread that exits while on a CPU has no switch out (perf stops
 * following it first): its THREAD_EXIT is the switch to the idle task. */
struct exit_switch {
    struct ctf_sink *k;
    int64_t tid;
    uint64_t ns;
    int err;
};

static void exit_switch_one(void *val, void *arg)
{
    struct ctf_stream *st = val;
    struct exit_switch *x = arg;
    if (st->task_switches || st->cur_tid != x->tid || x->err != 0)
        return;
    uint64_t ns = x->ns > st->last_ns ? x->ns : st->last_ns;
    st->last_ns = ns;
    st->cur_tid = 0;
    /* TASK_DEAD */
    x->err = put_sched_switch(x->k, st, ns, x->tid, 0x80, 0);
}

/* A loaded object as LTTng-UST's statedump tells it (bin_info, and
 * build_id when it has one), so that readers that resolve addresses from
 * the trace (Trace Compass, babeltrace2's debug-info) find the file. */
static int put_object(struct ctf_sink *s, struct ctf_stream *st)
{
    struct fr_object_rec *o = st->object;
    st->object = NULL;
    uint64_t memsz = 0;
    int is_pic = 0;
    (void)fr_object_file_info(o->path, &memsz, &is_pic);
    uint64_t ns = o->ns > st->last_ns ? o->ns : st->last_ns;
    unsigned char *p = event_begin(s, st, CLS_BIN_INFO, ns);
    if (p == NULL) {
        free(o);
        return -1;
    }
    put64(p, o->base);
    put64(p + 8, memsz);
    p += 16;
    memcpy(p, o->path, o->path_len);
    p[o->path_len] = 0;
    p += o->path_len + 1;
    p[0] = (unsigned char)is_pic;
    p[1] = o->build_id_len != 0;
    p[2] = 0;
    event_end(st, p + 3);
    if (o->build_id_len != 0) {
        p = event_begin(s, st, CLS_BUILD_ID, ns);
        if (p == NULL) {
            free(o);
            return -1;
        }
        put64(p, o->base);
        put64(p + 8, o->build_id_len);
        memcpy(p + 16, o->build_id, o->build_id_len);
        event_end(st, p + 16 + o->build_id_len);
    }
    st->last_ns = ns;
    free(o);
    return 0;
}

/* Object records: assembled per stream, written when they end.  Returns 1
 * if @a r was one of their items. */
static int object_item(struct ctf_sink *s, struct ctf_stream *st,
                       const struct flightrec_record *r, int *err)
{
    if (st->object != NULL &&
        fr_object_rec_take(st->object, r,
                           FLIGHTREC_ITEM_SIZE(s->base.src->info->format) - 4))
        return 1;
    if (st->object != NULL && (*err = put_object(s, st)) != 0)
        return 1;
    if (!fr_is_object_record(r))
        return 0;
    if (r->event != FLIGHTREC_EV_OBJECT_LOAD)
        return 1;   /* the rest of a record whose start was lost */
    if (refresh_context(s, st, r->ring_info) != 0) {
        *err = -1;
        return 1;
    }
    st->object = malloc(sizeof *st->object);
    if (st->object == NULL) {
        *err = fail(s, "out of memory for", "a loaded object");
        return 1;
    }
    fr_object_rec_start(st->object, r);
    return 1;
}

static int ctf_record(struct fr_sink *base, const struct flightrec_record *r)
{
    struct ctf_sink *s = (struct ctf_sink *)base;
    if (!s->base.kernel && s->kernel_trace != NULL &&
        r->type == FLIGHTREC_RECORD_EVENT &&
        r->event == FLIGHTREC_EV_THREAD_EXIT) {
        struct exit_switch x = { s->kernel_trace,
                                 (int64_t)(int32_t)r->data, r->time_ns, 0 };
        fr_map_each(&s->kernel_trace->streams, exit_switch_one, &x);
        if (x.err != 0) {
            memcpy(s->base.error, s->kernel_trace->base.error,
                   sizeof s->base.error);
            return -1;
        }
    }
    if (!s->base.kernel && r->ring_info != NULL &&
        r->ring_info->context == FLIGHTREC_RING_CONTEXT_CPU &&
        r->ring >= FLIGHTREC_CPU_RING_BASE) {
        struct ctf_sink *k = kernel_trace(s);
        if (k == NULL)
            return -1;
        struct flightrec_record cpu = *r;
        cpu.ring = r->ring - FLIGHTREC_CPU_RING_BASE;
        if (ctf_record(&k->base, &cpu) != 0) {
            memcpy(s->base.error, k->base.error, sizeof s->base.error);
            return -1;
        }
        return 0;
    }
    if (!s->base.kernel && !s->processor_rings && r->ring_info != NULL) {
        int cpu = task_cpu(s, r);
        if (cpu >= 0) {
            struct ctf_sink *k = kernel_trace(s);
            if (k == NULL)
                return -1;
            struct flightrec_record rec = *r;
            rec.ring = (uint32_t)cpu;
            struct ctf_stream *kst = get_stream(k, rec.ring);
            if (kst == NULL)
                return -1;
            kst->task_switches = 1;
            if (ctf_record(&k->base, &rec) != 0) {
                memcpy(s->base.error, k->base.error, sizeof s->base.error);
                return -1;
            }
            return 0;
        }
    }
    struct ctf_stream *st = get_stream(s, r->ring);
    if (st == NULL)
        return -1;
    int err = 0;
    if (!s->base.kernel && object_item(s, st, r, &err))
        return err;
    uint64_t ns = r->time_ns > st->last_ns ? r->time_ns : st->last_ns;
    if (r->type == FLIGHTREC_RECORD_LOSS) {
        if (!s->base.kernel && flush_malloc(s, st) != 0)
            return -1;
        /* The events before the loss end their packet, and the count goes
         * in an empty one at the loss: readers place the loss between the
         * two packets, i.e. between the last event and the loss, whatever
         * the packet sizes (which depend on the ring count and order). */
        if (st->len > 0 && flush_packet(s, st, st->last_ns) != 0)
            return -1;
        st->last_ns = ns;
        st->discarded += r->loss_count;
        /* Which thread runs after a loss is unknown until a switch. */
        st->cur_tid = -1;
        st->out_tid = -1;
        return flush_packet(s, st, ns);
    }
    if (r->event >= FR_EVENT_IDS)
        return 0;
    st->last_ns = ns;
    if (s->base.kernel)
        return kernel_record(s, st, r, ns);
    if (st->malloc_pending && s->ev.role[r->event] != FR_ROLE_MALLOC_EXIT &&
        flush_malloc(s, st) != 0)
        return -1;
    if (refresh_context(s, st, r->ring_info) != 0)
        return -1;
    return ust_record(s, st, r, ns);
}

/*----- metadata -----*/

static void tsdl_string(struct fr_out *o, const char *s)
{
    fr_out_str(o, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fr_out_printf(o, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fr_out_printf(o, "\\x%02x", c);   /* keep the line well-formed */
        else
            fr_out_write(o, s, 1);
    }
    fr_out_str(o, "\"");
}

static void event_class(struct ctf_sink *s, struct fr_out *o, uint32_t cls)
{
    static const struct {
        const char *name, *fields;
    } fixed[] = {
        { "sched_switch",
          "ch _prev_comm[16]; s32 _prev_tid; s32 _prev_prio; "
          "s64 _prev_state; ch _next_comm[16]; s32 _next_tid; "
          "s32 _next_prio;" },
        { "irq_handler_entry", "s32 _irq; string _name;" },
        { "irq_handler_exit", "s32 _irq; s32 _ret;" },
        { "sched_waking",
          "ch _comm[16]; s32 _tid; s32 _prio; s32 _target_cpu;" },
        { "lttng_ust_libc:malloc", "u64 _size; x64 _ptr;" },
        { "lttng_ust_libc:free", "x64 _ptr;" },
        { "lttng_ust_cyg_profile:func_entry", "x64 _addr; x64 _call_site;" },
        { "lttng_ust_cyg_profile:func_exit", "x64 _addr; x64 _call_site;" },
        { "lttng_ust_statedump:bin_info",
          "x64 _baddr; u64 _memsz; string _path; u8 _is_pic; "
          "u8 _has_build_id; u8 _has_debug_link;" },
        { "lttng_ust_statedump:build_id",
          "x64 _baddr; u64 __build_id_length; "
          "u8 _build_id[__build_id_length];" },
    };
    const struct fr_source *src = s->base.src;
    fr_out_str(o, "event {\n    name = ");
    const char *fields = "x64 _data;";
    if (cls >= FR_EVENT_IDS) {
        tsdl_string(o, fixed[cls - FR_EVENT_IDS].name);
        fields = fixed[cls - FR_EVENT_IDS].fields;
    } else if (s->base.kernel && s->ev.syscall[cls]) {
        char name[64];
        int entry = s->ev.role[cls] == FR_ROLE_PAIR_ENTRY;
        snprintf(name, sizeof name, "syscall_%s_%s", entry ? "entry" : "exit",
                 s->ev.base[cls]);
        tsdl_string(o, name);
        if (!entry)
            fields = "s64 _ret;";
    } else {
        static const char *const defined[] = {
            "x64 _data;", "string _span; x64 _data;", "string _span;",
            "s64 _value;", "string _text;"
        };
        tsdl_string(o, src->event_name(src->arg, cls));
        fields = defined[s->layout[cls]];
    }
    fr_out_printf(o, ";\n    id = %" PRIu32 ";\n    stream_id = 0;\n"
                     "    fields := struct { %s };\n};\n\n", cls, fields);
}

static int write_metadata(struct ctf_sink *s)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/metadata", s->tmp);
    struct fr_out *o = fr_out_open(path);
    if (o == NULL)
        return fail(s, "cannot create", path);
    const struct flightrec_stream_info *info = s->base.src->info;
    fr_out_str(o,
        "/* CTF 1.8 */\n"
        "/* written by flightrec convert */\n\n"
        "typealias integer { size = 8; align = 8; signed = false; } := u8;\n"
        "typealias integer { size = 8; align = 8; signed = false; "
        "encoding = UTF8; } := ch;\n"
        "typealias integer { size = 16; align = 8; signed = false; } := u16;\n"
        "typealias integer { size = 32; align = 8; signed = false; } := u32;\n"
        "typealias integer { size = 32; align = 8; signed = true; } := s32;\n"
        "typealias integer { size = 64; align = 8; signed = false; } := u64;\n"
        "typealias integer { size = 64; align = 8; signed = true; } := s64;\n"
        "typealias integer { size = 64; align = 8; signed = false; "
        "base = 16; } := x64;\n"
        "typealias integer { size = 64; align = 8; signed = false; "
        "map = clock.monotonic.value; } := ts64;\n"
        "typealias integer { size = 32; align = 8; signed = false; "
        "map = clock.monotonic.value; } := ts32;\n\n");
    const unsigned char *u = s->uuid;
    fr_out_printf(o,
        "trace {\n    major = 1;\n    minor = 8;\n"
        "    uuid = \"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
        "%02x%02x%02x%02x%02x%02x\";\n"
        "    byte_order = %s;\n"
        "    packet.header := struct { u32 magic; u8 uuid[16]; "
        "u32 stream_id; };\n};\n\n",
        u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
        u[11], u[12], u[13], u[14], u[15], s->little ? "le" : "be");
    fr_out_str(o, "env {\n");
    if (s->base.kernel) {
        fr_out_str(o, "    domain = \"kernel\";\n"
                      "    tracer_name = \"lttng-modules\";\n"
                      "    tracer_major = 2;\n    tracer_minor = 12;\n"
                      "    tracer_patchlevel = 0;\n"
                      "    sysname = \"Linux\";\n"
                      "    kernel_release = \"5\";\n"
                      "    kernel_version = \"0\";\n"
                      "    hostname = ");
        tsdl_string(o, info->bsp[0] ? info->bsp
                       : info->kind == FLIGHTREC_STREAM_FLIGHTREC ? "flightrec"
                       : "rtems");
        fr_out_str(o, ";\n    trace_buffering_scheme = \"global\";\n");
        if (info->arch[0]) {
            fr_out_str(o, "    rtems_arch = ");
            tsdl_string(o, info->arch);
            fr_out_str(o, ";\n");
        }
    } else {
        fr_out_printf(o, "    domain = \"ust\";\n"
                         "    tracer_name = \"lttng-ust\";\n"
                         "    tracer_major = 2;\n    tracer_minor = 12;\n"
                         "    tracer_patchlevel = 0;\n"
                         "    trace_buffering_scheme = \"pid\";\n"
                         "    hostname = \"flightrec\";\n"
                         "    vpid = %" PRId64 ";\n",
                      info->process_id);
    }
    fr_out_printf(o, "    flightrec_stream_version = %" PRIu32 ";\n",
                  info->version);
    fr_out_str(o, "};\n\n");
    uint64_t off = info->has_realtime ? info->realtime_ns_at_zero : 0;
    fr_out_printf(o,
        "clock {\n    name = \"monotonic\";\n"
        "    description = \"%s\";\n"
        "    freq = 1000000000;\n    precision = 1;\n"
        "    offset_s = %" PRIu64 ";\n    offset = %" PRIu64 ";\n"
        "    absolute = %s;\n};\n\n",
        info->has_realtime ? "uptime of the recording, epoch-based"
                           : "uptime of the recording",
        off / 1000000000u, off % 1000000000u,
        info->has_realtime ? "true" : "false");
    /* The thread identity is per packet (one thread per stream); the
     * event header is LTTng's "large" one. */
    fr_out_printf(o,
        "stream {\n    id = 0;\n"
        "    packet.context := struct {\n"
        "        ts64 timestamp_begin; ts64 timestamp_end;\n"
        "        u64 content_size; u64 packet_size;\n"
        "        u64 packet_seq_num; u64 events_discarded;\n"
        "        u32 cpu_id;%s\n    };\n"
        "    event.header := struct {\n"
        "        enum : u16 { compact = 0 ... 65534, extended = 65535 } id;\n"
        "        variant <id> {\n"
        "            struct { ts32 timestamp; } compact;\n"
        "            struct { u32 id; ts64 timestamp; } extended;\n"
        "        } v;\n    };\n"
        "};\n\n",
        s->base.kernel ? "" : "\n        s32 vtid; string procname;");
    for (uint32_t cls = 0; cls < CLS_COUNT; cls++)
        if (s->used[cls])
            event_class(s, o, cls);
    if (fr_out_close(o) != 0)
        return fail(s, "cannot write", path);
    return 0;
}

/* What a stream holds back, written out: a malloc waiting for its exit,
 * an object record, the open packet. */
static int flush_stream(struct ctf_sink *s, struct ctf_stream *st)
{
    if (!s->base.kernel && flush_malloc(s, st) != 0)
        return -1;
    if (st->object != NULL && put_object(s, st) != 0)
        return -1;
    if (st->len > 0)
        return flush_packet(s, st, st->last_ns);
    return 0;
}

static void flush_one(void *val, void *arg)
{
    struct ctf_sink *s = arg;
    if (s->base.error[0] == '\0')
        (void)flush_stream(s, val);
}

static int close_files(struct ctf_sink *s)
{
    int rc = 0;
    for (int i = 0; i < s->nslots; i++) {
        if (s->owners[i] == NULL)
            continue;
        s->owners[i]->slot = -1;
        s->owners[i] = NULL;
        if (close(s->fds[i]) != 0 && rc == 0)
            rc = fail(s, "cannot close", "a CTF stream file");
    }
    return rc;
}

static void remove_trace(const char *dir);

/* Empties a trace directory this writer made: its metadata and stream
 * files (nothing else is there) and its sub-traces. */
static void remove_trace_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, "metadata") != 0 &&
                strncmp(e->d_name, "stream_", 7) != 0 &&
                strncmp(e->d_name, ".metadata.", 10) != 0)
                continue;
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    /* The two traces of a session layout. */
    static const char *const subtraces[] = { "kernel", "ust" };
    for (int i = 0; i < 2; i++) {
        char sub[4200];
        struct stat st;
        snprintf(sub, sizeof sub, "%s/%s", dir, subtraces[i]);
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            remove_trace(sub);
    }
}

/* Removes a trace directory this writer made. */
static void remove_trace(const char *dir)
{
    remove_trace_files(dir);
    rmdir(dir);
}

/* Puts the complete trace in place of the output directory: one atomic
 * exchange when the directory exists (then the old trace is removed). */
static int commit(struct ctf_sink *s)
{
    if (rename(s->tmp, s->dir) == 0)
        return 0;
    if (errno != EEXIST && errno != ENOTEMPTY)
        return fail(s, "cannot rename the trace to", s->dir);
#ifdef RENAME_EXCHANGE
    if (renameat2(AT_FDCWD, s->tmp, AT_FDCWD, s->dir, RENAME_EXCHANGE) == 0) {
        remove_trace(s->tmp);
        return 0;
    }
#endif
    /* No exchange on this system or file system: move the old trace
     * aside, then the new one in. */
    char *old = fr_temp_name(s->dir);
    if (old == NULL || mkdtemp(old) == NULL || rmdir(old) != 0 ||
        rename(s->dir, old) != 0) {
        free(old);
        return fail(s, "cannot replace", s->dir);
    }
    if (rename(s->tmp, s->dir) != 0) {
        int e = errno;
        rename(old, s->dir);
        free(old);
        errno = e;
        return fail(s, "cannot replace", s->dir);
    }
    remove_trace(old);
    free(old);
    return 0;
}

/* Beside a kernel trace, this one goes to `ust` (LTTng's session layout:
 * a reader takes a directory holding metadata as one trace and looks no
 * deeper). */
static int move_to_ust(struct ctf_sink *s)
{
    char ust[4200], from[4500], to[4500];
    snprintf(ust, sizeof ust, "%s/ust", s->tmp);
    if (mkdir(ust, 0755) != 0)
        return fail(s, "cannot create", ust);
    DIR *d = opendir(s->tmp);
    if (d == NULL)
        return fail(s, "cannot read", s->tmp);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, "metadata") != 0 &&
            strncmp(e->d_name, "stream_", 7) != 0)
            continue;
        snprintf(from, sizeof from, "%s/%s", s->tmp, e->d_name);
        snprintf(to, sizeof to, "%s/%s", ust, e->d_name);
        if (rename(from, to) != 0)
            rc = fail(s, "cannot move", from);
    }
    closedir(d);
    return rc;
}

/* The kernel trace's files up into this directory, in place of it. */
static int move_up_kernel(struct ctf_sink *s)
{
    char kernel[4200], from[4500], to[4500];
    snprintf(kernel, sizeof kernel, "%s/kernel", s->tmp);
    DIR *d = opendir(kernel);
    if (d == NULL)
        return fail(s, "cannot read", kernel);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, "metadata") != 0 &&
            strncmp(e->d_name, "stream_", 7) != 0)
            continue;
        snprintf(from, sizeof from, "%s/%s", kernel, e->d_name);
        snprintf(to, sizeof to, "%s/%s", s->tmp, e->d_name);
        if (rename(from, to) != 0)
            rc = fail(s, "cannot move", from);
    }
    closedir(d);
    if (rc == 0 && rmdir(kernel) != 0)
        rc = fail(s, "cannot remove", kernel);
    return rc;
}

static int ctf_end(struct fr_sink *base)
{
    struct ctf_sink *s = (struct ctf_sink *)base;
    fr_map_each(&s->streams, flush_one, s);
    if (close_files(s) != 0 || s->base.error[0] != '\0')
        return -1;
    if (s->kernel_trace != NULL && ctf_end(&s->kernel_trace->base) != 0) {
        memcpy(s->base.error, s->kernel_trace->base.error,
               sizeof s->base.error);
        return -1;
    }
    /* The kernel trace lies inside this one's directory: no commit.  When
     * it is all there is (a firmware's recording), it is the output. */
    if (s->kernel_trace != NULL && fr_map_count(&s->streams) == 0) {
        if (move_up_kernel(s) != 0 || (s->dir != NULL && commit(s) != 0))
            return -1;
        s->committed = 1;
        return 0;
    }
    if (write_metadata(s) != 0 ||
        (s->kernel_trace != NULL && move_to_ust(s) != 0) ||
        (s->dir != NULL && commit(s) != 0))
        return -1;
    s->committed = 1;
    return 0;
}

static void free_one(void *val, void *arg)
{
    struct ctf_stream *st = val;
    (void)arg;
    free(st->object);
    free(st->buf);
    free(st);
}

static void free_streams(struct ctf_sink *s)
{
    fr_map_each(&s->streams, free_one, NULL);
    fr_map_free(&s->streams);
    free(s->by_ring);
    s->by_ring = NULL;
    s->by_ring_len = 0;
    s->cache = NULL;
}

static void ctf_destroy(struct fr_sink *base)
{
    struct ctf_sink *s = (struct ctf_sink *)base;
    if (s->kernel_trace != NULL)
        ctf_destroy(&s->kernel_trace->base);
    close_files(s);
    /* Not committed: the conversion failed and leaves nothing behind. */
    if (!s->committed && s->tmp != NULL)
        remove_trace(s->tmp);
    free_streams(s);
    free(s->fds);
    free(s->owners);
    free(s->dir);
    free(s->tmp);
    free(s);
}

/* Back to an empty trace in the same directory, for a new start. */
static int ctf_reset(struct fr_sink *base)
{
    struct ctf_sink *s = (struct ctf_sink *)base;
    if (s->kernel_trace != NULL)
        ctf_destroy(&s->kernel_trace->base);
    s->kernel_trace = NULL;
    int rc = close_files(s);
    free_streams(s);
    fr_map_init(&s->streams);
    remove_trace_files(s->tmp);
    s->buffered = 0;
    s->nbuffers = 0;
    s->hand = 0;
    memset(s->used, 0, sizeof s->used);
    memset(s->layout, 0, sizeof s->layout);
    s->task_cpus = 0;
    return rc;
}

static int ctf_begin(struct fr_sink *base)
{
    struct ctf_sink *s = (struct ctf_sink *)base;
    const struct flightrec_stream_info *info = base->src->info;
    fr_events_init(&s->ev, base->src);
    /* A UUID that depends on the recording, so one input always converts
     * to the same bytes (reproducible outputs, simple tests). */
    uint64_t h = 0xcbf29ce484222325ull;
    uint64_t seed[3] = { info->realtime_ns_at_zero, (uint64_t)info->process_id,
                         info->frequency };
    for (size_t i = 0; i < 16; i++) {
        h ^= seed[i % 3] >> (8 * (i / 3));
        h *= 0x100000001b3ull;
        s->uuid[i] = (unsigned char)(h >> 32);
    }
    s->uuid[6] = (unsigned char)((s->uuid[6] & 0x0f) | 0x40);
    s->uuid[8] = (unsigned char)((s->uuid[8] & 0x3f) | 0x80);
    return 0;
}

static const struct fr_sink_ops ctf_ops = {
    ctf_begin, ctf_record, ctf_end, ctf_destroy, ctf_reset
};

/* An existing output directory must hold a trace (or nothing): it is
 * replaced whole, and readers take every file in it as a stream. */
static int check_target(const char *dir, char *err, size_t err_size)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) {
        fr_errorf(err, err_size, "%s exists and is not a directory", dir);
        return -1;
    }
    DIR *d = opendir(dir);
    if (d == NULL) {
        fr_errorf(err, err_size, "cannot open %s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (strcmp(e->d_name, "kernel") == 0 || strcmp(e->d_name, "ust") == 0) {
            /* The session layout: its traces are checked in turn. */
            char sub[4200];
            snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
            if (check_target(sub, err, err_size) != 0) {
                rc = -1;
                break;
            }
            continue;
        }
        if (strcmp(e->d_name, "metadata") != 0 &&
            strncmp(e->d_name, "stream_", 7) != 0) {
            fr_errorf(err, err_size,
                     "%s is not empty (holds %s): not a CTF output directory",
                     dir, e->d_name);
            rc = -1;
            break;
        }
    }
    closedir(d);
    return rc;
}

/* mkdir -p of the directory that will hold @a dir (LTTng's session/kernel
 * layout often goes to a fresh tree). */
static int make_parents(const char *dir)
{
    char path[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, len + 1);
    char *last = strrchr(path, '/');
    if (last == NULL || last == path)
        return 0;
    *last = '\0';
    for (char *p = path + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* Stream files open at once: half the file limit, so that the rest of the
 * process (and a caller's own files) keeps room. */
static int fd_slots(void)
{
    struct rlimit rl;
    rlim_t n = FR_CTF_FDS_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur / 2 < n)
        n = rl.rlim_cur / 2;
    return n < 1 ? 1 : (int)n;
}

int fr_ctf_create(struct fr_sink **out, const char *path, char *err,
                  size_t err_size)
{
    /* "out/" and "out" are the same directory. */
    char dir[4096];
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    if (len == 0 || len >= sizeof dir) {
        fr_errorf(err, err_size, "bad output directory name");
        return -1;
    }
    memcpy(dir, path, len);
    dir[len] = '\0';
    char *real = fr_resolve_link(dir);
    if (real != NULL) {
        snprintf(dir, sizeof dir, "%s", real);
        free(real);
    }
    if (check_target(dir, err, err_size) != 0)
        return -1;
    if (make_parents(dir) != 0) {
        fr_errorf(err, err_size, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    struct ctf_sink *s = calloc(1, sizeof *s);
    if (s != NULL) {
        s->nslots = fd_slots();
        s->dir = strdup(dir);
        s->tmp = fr_temp_name(dir);
        s->fds = calloc((size_t)s->nslots, sizeof *s->fds);
        s->owners = calloc((size_t)s->nslots, sizeof *s->owners);
    }
    if (s == NULL || s->dir == NULL || s->tmp == NULL || s->fds == NULL ||
        s->owners == NULL) {
        if (s != NULL) {
            free(s->dir);
            free(s->tmp);
            free(s->fds);
            free(s->owners);
        }
        free(s);
        fr_errorf(err, err_size, "out of memory");
        return -1;
    }
    if (mkdtemp(s->tmp) == NULL) {
        fr_errorf(err, err_size, "cannot create a directory beside %s: %s",
                  dir, strerror(errno));
        free(s->tmp);
        s->tmp = NULL;
        s->base.ops = &ctf_ops;
        fr_map_init(&s->streams);
        ctf_destroy(&s->base);
        return -1;
    }
    s->base.ops = &ctf_ops;
    s->base.by_ring_ok = 1;
    fr_map_init(&s->streams);
    const uint16_t one = 1;
    s->little = *(const unsigned char *)&one == 1;
    *out = &s->base;
    return 0;
}
