/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Context switches of the program's threads, from perf, without
 * root: one inherited software event per CPU on this process
 * (context_switch, sample_id_all with TID, TIME and CPU), drained with the
 * rings into processor rings of the recording (docs/format.md, "Processor
 * rings").
 *
 * perf_event_paranoid <= 2 lets a process trace its own tasks.  Events are
 * opened on this process after the drain thread started, so the recorder's
 * own thread is not among them; threads the program creates later inherit
 * them.  The event descriptors are closed as soon as their rings are
 * mapped (the mapping keeps the event alive), so that a program closing
 * all its descriptors cannot end them.  Only threads inherit them
 * (inherit_thread, Linux 5.13): a forked child opens its own, and its
 * switches never fill these rings.  An older kernel refuses that: the
 * events are then inherited by children too (said once), whose switches
 * in these rings are left out here.
 *
 * Times go onto the counter the program's events use.  Where the kernel
 * publishes how perf's own clock maps onto the cycle counter
 * (cap_user_time_zero: time_zero, time_mult, time_shift), that mapping is
 * inverted, exact to a tick.  Elsewhere (a virtual machine without a
 * reliable TSC, or a counter that is not the cycle counter) the events use
 * CLOCK_MONOTONIC (use_clockid), and each drain takes a (counter,
 * CLOCK_MONOTONIC) pair, read close together: a switch between two drains
 * is placed by interpolating between their pairs, so the error is that of
 * reading a pair (tens of nanoseconds), whatever the counter's drift.
 */
#include "preload.h"

#include "../common/muldiv.h"

#include <flightrec/format.h>
#include <flightrec/producer.h>
#include <flightrec/region.h>

#include <linux/perf_event.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)) && \
    !defined(FLIGHTREC_PORT_COUNTER)
#define COUNTER_IS_CYCLES 1
#else
#define COUNTER_IS_CYCLES 0
#endif

/* The perf ring's positions are 64-bit words the kernel shares with us.
 * Where 64-bit atomics are not lock-free (flightrec/region.h), they go by
 * 32-bit halves: the head is read until its upper half holds still, and
 * the kernel uses the tail only modulo the ring's size, so its lower half
 * is all it needs. */
static uint64_t perf_head_load(const void *at)
{
#if FLIGHTREC_REGION_NARROW
    const _Atomic uint32_t *half = (const _Atomic uint32_t *)at;
    const int low = FLIGHTREC_REGION_WORD_SHIFT / 4, high = 1 - low;
    uint32_t upper, lower;
    do {
        upper = atomic_load_explicit(&half[high], memory_order_acquire);
        lower = atomic_load_explicit(&half[low], memory_order_acquire);
    } while (atomic_load_explicit(&half[high], memory_order_acquire) != upper);
    return (uint64_t)upper << 32 | lower;
#else
    return atomic_load_explicit((const _Atomic uint64_t *)at,
                                memory_order_acquire);
#endif
}

static void perf_tail_store(void *at, uint64_t tail)
{
#if FLIGHTREC_REGION_NARROW
    _Atomic uint32_t *half = (_Atomic uint32_t *)at;
    atomic_store_explicit(&half[FLIGHTREC_REGION_WORD_SHIFT / 4],
                          (uint32_t)tail, memory_order_release);
    atomic_store_explicit(&half[1 - FLIGHTREC_REGION_WORD_SHIFT / 4],
                          (uint32_t)(tail >> 32), memory_order_relaxed);
#else
    atomic_store_explicit((_Atomic uint64_t *)at, tail,
                          memory_order_release);
#endif
}

#define CPUS_MAX 1024
#define DATA_PAGES 64          /* per CPU: 256 KiB, ~8000 switches */
#define OUT_BUFFER 65536

struct cpu_ring {
    int cpu;
    struct perf_event_mmap_page *page;
    unsigned char *data;
    uint64_t data_size;
    uint32_t position;      /* events written for this ring so far */
    uint64_t lost;          /* perf's lost records not yet reported */
    uint64_t last_counter;  /* counter of the ring's last item */
    int has_last;
    uint64_t head;          /* data_head read for this drain */
};

static struct cpu_ring rings[CPUS_MAX];
static int ring_count;
static pid_t own_pid;
static size_t map_size;
static int perf_clock;          /* 1: time_zero mapping, 0: monotonic */
/* perf's clock in cycles, as the kernel publishes it (it may change it:
 * read again at every drain, under the page's sequence lock). */
struct time_map {
    uint64_t zero;
    uint32_t mult;
    uint16_t shift;
};
static struct time_map time_map;
/* The (counter, CLOCK_MONOTONIC ns) pairs of the previous and this drain. */
static uint64_t pair_counter[2], pair_ns[2];

/* The output, written in large pieces.  What a failed write left (maybe
 * the end of an item it cut) goes out first at the next drain, before
 * anything else (preload_switches_resume()). */
static unsigned char out[OUT_BUFFER];
static size_t out_len;
static size_t out_done;         /* of out_len, already written */
/* The most a perf record adds: a chunk's four metadata items, then two
 * events with their uptime pairs. */
#define RECORD_ITEMS_MAX 10
#define ITEM_BYTES (sizeof(uint32_t) + sizeof(uintptr_t))
/* Set in a fork child: says once that its switches are not recorded. */
static int child_setup;
static int said_inherited;

static void say(const char *text)
{
    ssize_t r = write(2, text, strlen(text));
    (void)r;
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A counter value and the monotonic clock at the same moment: the
 * narrowest of a few clock reads around a counter read. */
static void take_pair(uint64_t *counter, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t before = monotonic_ns();
        uint64_t c = flightrec_counter();
        uint64_t after = monotonic_ns();
        if (after - before < best) {
            best = after - before;
            *counter = c;
            *ns = before + (after - before) / 2;
        }
    }
}

static int perf_open(struct perf_event_attr *attr, int cpu)
{
    int fd = (int)syscall(SYS_perf_event_open, attr, 0, cpu, -1,
                          PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && errno == EINVAL && attr->inherit_thread) {
        /* Before Linux 5.13: children inherit the events too. */
        attr->inherit_thread = 0;
        fd = (int)syscall(SYS_perf_event_open, attr, 0, cpu, -1,
                          PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0 && !said_inherited) {
            said_inherited = 1;
            say("flightrec record: this kernel cannot keep perf's switch "
                "events to the program's threads (inherit_thread, Linux "
                "5.13); forked children's switches pass through the "
                "parent's perf rings (left out there; a burst of them may "
                "cost the parent switches, counted as lost)\n");
        }
    }
    return fd;
}

/* The page's time mapping, read as the kernel's sequence lock wants (the
 * count odd while it writes, changed when it wrote).  0, or -1 when the
 * page has none or it kept changing for 100 ms (a kernel writes it in
 * microseconds). */
static int read_time_map(const struct perf_event_mmap_page *pg,
                         struct time_map *to)
{
    _Atomic uint32_t *lock = (_Atomic uint32_t *)(void *)&pg->lock;
    uint64_t since = monotonic_ns();
    while (monotonic_ns() - since < 100000000u) {
        uint32_t seq = atomic_load_explicit(lock, memory_order_acquire);
        if (seq & 1u) {
            sched_yield();
            continue;
        }
        volatile const struct perf_event_mmap_page *v = pg;
        int has = v->cap_user_time_zero;
        struct time_map m = { v->time_zero, v->time_mult, v->time_shift };
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(lock, memory_order_relaxed) != seq)
            continue;
        if (!has || m.mult == 0 || m.shift >= 64)
            return -1;
        *to = m;
        return 0;
    }
    return -1;
}

static void close_rings(void)
{
    for (int i = 0; i < ring_count; i++)
        munmap(rings[i].page, map_size);
    ring_count = 0;
}

static void not_recorded(const char *why)
{
    char text[256];
    snprintf(text, sizeof text, "flightrec record: context switches are "
             "not recorded: %s; recording the rest\n", why);
    say(text);
    /* An image this process execs would only say it again. */
    setenv("FLIGHTREC_SWITCHES", "0", 1);
}

int preload_switches_start(int quiet)
{
    const char *env = getenv("FLIGHTREC_SWITCHES");
    if (env != NULL && strcmp(env, "0") == 0)
        return 0;
    own_pid = getpid();
    ring_count = 0;
    out_len = 0;
    out_done = 0;
    map_size = (size_t)(1 + DATA_PAGES) * (size_t)sysconf(_SC_PAGESIZE);

    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
    attr.context_switch = 1;
    attr.sample_id_all = 1;
    attr.inherit = 1;
    attr.inherit_thread = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    char why[160];
    perf_clock = 0;
#if COUNTER_IS_CYCLES
    /* Does the kernel map perf's clock onto the cycle counter? */
    int probe = perf_open(&attr, 0);
    if (probe >= 0) {
        void *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                         probe, 0);
        close(probe);
        if (map != MAP_FAILED) {
            if (read_time_map(map, &time_map) == 0)
                perf_clock = 1;
            munmap(map, map_size);
        }
    }
#endif
    if (!perf_clock) {
        attr.use_clockid = 1;
        attr.clockid = CLOCK_MONOTONIC;
    }
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (cpus > CPUS_MAX)
        cpus = CPUS_MAX;
    for (int cpu = 0; cpu < cpus; cpu++) {
        int fd = perf_open(&attr, cpu);
        if (fd < 0) {
            if (errno == ENODEV)
                continue; /* offline */
            snprintf(why, sizeof why, "perf_event_open on CPU %d: %s", cpu,
                     strerror(errno));
            goto fail;
        }
        void *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                         fd, 0);
        int err = errno;
        close(fd);
        if (map == MAP_FAILED) {
            snprintf(why, sizeof why, "mmap of the perf ring of CPU %d: %s",
                     cpu, strerror(err));
            goto fail;
        }
        struct cpu_ring *r = &rings[ring_count++];
        memset(r, 0, sizeof *r);
        r->cpu = cpu;
        r->page = map;
        r->data = (unsigned char *)map + r->page->data_offset;
        r->data_size = r->page->data_size;
    }
    if (ring_count == 0) {
        snprintf(why, sizeof why, "no CPU to trace");
        goto fail;
    }
    take_pair(&pair_counter[0], &pair_ns[0]);
    pair_counter[1] = pair_counter[0];
    pair_ns[1] = pair_ns[0];
    return 1;

fail:
    close_rings();
    if (child_setup) {
        char text[256];
        snprintf(text, sizeof text, "flightrec record: context switches of "
                 "the forked child %d are not recorded: %s; recording the "
                 "rest\n", (int)own_pid, why);
        say(text);
        /* An image the child execs would only say it again. */
        setenv("FLIGHTREC_SWITCHES", "0", 1);
    } else if (!quiet) {
        not_recorded(why);
    }
    return 0;
}

void preload_switches_after_fork(void)
{
    /* The parent's rings are not mapped here (perf maps them
     * VM_DONTCOPY); the child opens its own.  What the parent had not
     * written is the parent's. */
    int had = ring_count > 0;
    ring_count = 0;
    out_len = out_done = 0;
    if (had) {
        child_setup = 1;
        (void)preload_switches_start(1);
        child_setup = 0;
    }
}

/* perf's clock -> counter: the counter value whose perf time is the
 * latest not after @a t (the kernel's conversion, inverted). */
static uint64_t perf_time_of(uint64_t cyc)
{
    const struct time_map *m = &time_map;
    uint64_t quot = cyc >> m->shift;
    uint64_t rem = cyc & (((uint64_t)1 << m->shift) - 1);
    return m->zero + quot * m->mult + ((rem * m->mult) >> m->shift);
}

static uint64_t counter_of_perf_time(uint64_t t)
{
    const struct time_map *m = &time_map;
    if (t <= m->zero || m->mult == 0)
        return 0;
    uint64_t cyc = fr_muldiv(t - m->zero, (uint64_t)1 << m->shift, m->mult);
    while (cyc > 0 && perf_time_of(cyc) > t)
        cyc--;
    while (perf_time_of(cyc + 1) <= t)
        cyc++;
    return cyc;
}

/* CLOCK_MONOTONIC -> counter, on the line through the two pairs (the
 * previous drain's and this one's), or the counter's own frequency when
 * they are too close to give a slope. */
static uint64_t counter_of_monotonic(uint64_t t)
{
    uint64_t c0 = pair_counter[0], n0 = pair_ns[0];
    uint64_t dc = pair_counter[1] - c0, dn = pair_ns[1] - n0;
    if (dn < 1000000u) {
        dc = flightrec_counter_frequency();
        dn = 1000000000u;
    }
    if (t >= n0)
        return c0 + fr_muldiv(t - n0, dc, dn);
    uint64_t back = fr_muldiv(n0 - t, dc, dn);
    return back < c0 ? c0 - back : 0;
}

static uint64_t counter_of(uint64_t t)
{
    return perf_clock ? counter_of_perf_time(t) : counter_of_monotonic(t);
}

/* Writes what is pending; 0 when all of it went, -1 when a write failed
 * (the rest stays pending, the end of a cut item included). */
static int out_flush(int fd)
{
    while (out_done < out_len) {
        ssize_t w = write(fd, out + out_done, out_len - out_done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        out_done += (size_t)w;
    }
    out_len = out_done = 0;
    return 0;
}

int preload_switches_resume(int fd)
{
    if (getpid() != own_pid)
        return 0;
    return out_len == 0 ? 0 : out_flush(fd);
}

/* Whether a whole perf record's items fit in the buffer, flushing it if
 * need be. */
static int out_room(int fd)
{
    if (out_len + RECORD_ITEMS_MAX * ITEM_BYTES <= sizeof out)
        return 1;
    return out_flush(fd) == 0;
}

static void put_item(uint32_t event_word, uintptr_t data)
{
    memcpy(out + out_len, &event_word, sizeof event_word);
    memcpy(out + out_len + sizeof event_word, &data, sizeof data);
    out_len += ITEM_BYTES;
}

static void put_meta(uint32_t event, uintptr_t data)
{
    put_item(FLIGHTREC_TIME_EVENT(0, event), data);
}

/* One timed event of processor ring @a r, with an uptime pair first where
 * the time invariant wants one (the chunk's first item, or a gap). */
static void put_event(struct cpu_ring *r, uint64_t counter,
                      uint32_t event, uintptr_t data, int *chunk_open,
                      uint64_t base)
{
    if (!*chunk_open) {
        put_meta(FLIGHTREC_EV_PROCESSOR,
                 FLIGHTREC_CPU_RING_BASE + (uint32_t)r->cpu);
        put_meta(FLIGHTREC_EV_RING_CONTEXT, FLIGHTREC_RING_CONTEXT_CPU);
        put_meta(FLIGHTREC_EV_RING_POSITION, r->position);
        if (r->lost > 0) {
            put_meta(FLIGHTREC_EV_PER_CPU_OVERFLOW, (uintptr_t)r->lost);
            r->lost = 0;
        }
        *chunk_open = 1;
        r->has_last = 0;
    }
    if (counter < base)
        counter = base; /* before start-up: cannot be, but stay in range */
    if (r->has_last && counter < r->last_counter)
        counter = r->last_counter;
    if (!r->has_last || counter - r->last_counter >= FLIGHTREC_SYNC_TICKS / 2) {
        uint64_t uptime = counter - base;
        uint32_t word = FLIGHTREC_TIME_EVENT(counter, 0);
        put_item(word | FLIGHTREC_EV_UPTIME_LOW, (uint32_t)uptime);
        put_item(word | FLIGHTREC_EV_UPTIME_HIGH,
                 (uint32_t)(uptime >> 32));
    }
    put_item(FLIGHTREC_TIME_EVENT(counter, event), data);
    r->position++;
    r->last_counter = counter;
    r->has_last = 1;
}

struct sample_id {
    uint32_t pid, tid;
    uint64_t time;
    uint32_t cpu, reserved;
};

/* The metadata of a chunk that carries only losses. */
static void put_losses(struct cpu_ring *r)
{
    put_meta(FLIGHTREC_EV_PROCESSOR,
             FLIGHTREC_CPU_RING_BASE + (uint32_t)r->cpu);
    put_meta(FLIGHTREC_EV_RING_CONTEXT, FLIGHTREC_RING_CONTEXT_CPU);
    put_meta(FLIGHTREC_EV_RING_POSITION, r->position);
    put_meta(FLIGHTREC_EV_PER_CPU_OVERFLOW, (uintptr_t)r->lost);
    r->lost = 0;
}

/* Reads ring @r up to its head of this drain; stops early (the rest read
 * by a later drain) if the output cannot take a record. */
static void drain_ring(int fd, struct cpu_ring *r, uint64_t base)
{
    uint64_t head = r->head;
    uint64_t tail = r->page->data_tail;
    /* A 32-bit kernel's positions are unsigned longs: its head wraps at
     * 2^32 while ours goes on.  What is pending is less than a ring, so
     * its 32-bit difference is right with either kernel. */
    uint32_t pending = (uint32_t)(head - tail);
    int chunk_open = 0;
    unsigned char rec[256];
    while (pending > 0 && out_room(fd)) {
        struct perf_event_header h;
        uint64_t off = tail % r->data_size;
        size_t first = (size_t)(r->data_size - off);
        if (first >= sizeof h) {
            memcpy(&h, r->data + off, sizeof h);
        } else {
            memcpy(&h, r->data + off, first);
            memcpy((unsigned char *)&h + first, r->data, sizeof h - first);
        }
        if (h.size < sizeof h || h.size > pending)
            break;
        size_t n = h.size < sizeof rec ? h.size : sizeof rec;
        if (first >= n) {
            memcpy(rec, r->data + off, n);
        } else {
            memcpy(rec, r->data + off, first);
            memcpy(rec + first, r->data, n - first);
        }
        tail += h.size;
        pending -= h.size;
        if (h.type == PERF_RECORD_LOST && n >= sizeof h + 16) {
            uint64_t lost;
            memcpy(&lost, rec + sizeof h + 8, sizeof lost);
            r->lost += lost;
            /* The loss lies between the chunk's switches and the next
             * ones: the next switch opens a chunk that says it. */
            chunk_open = 0;
            continue;
        }
        if (h.type != PERF_RECORD_SWITCH ||
            n < sizeof h + sizeof(struct sample_id))
            continue;
        struct sample_id id;
        memcpy(&id, rec + sizeof h, sizeof id);
        if ((pid_t)id.pid != own_pid)
            continue; /* a child's, on a kernel without inherit_thread */
        uint64_t counter = counter_of(id.time);
        if ((h.misc & PERF_RECORD_MISC_SWITCH_OUT) == 0) {
            put_event(r, counter, FLIGHTREC_EV_THREAD_SWITCH_IN, id.tid,
                      &chunk_open, base);
        } else {
            /* A thread that was not preempted leaves the CPU to wait:
             * it blocks, then switches out (one time). */
            if ((h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) == 0)
                put_event(r, counter, FLIGHTREC_EV_SCHEDULER_BLOCK, id.tid,
                          &chunk_open, base);
            put_event(r, counter, FLIGHTREC_EV_THREAD_SWITCH_OUT, id.tid,
                      &chunk_open, base);
        }
    }
    perf_tail_store(&r->page->data_tail, tail);
    /* Losses with no switch after them yet: said now. */
    if (r->lost > 0 && out_room(fd))
        put_losses(r);
}

void preload_switches_drain(int fd, int drained)
{
    if (ring_count == 0 || getpid() != own_pid)
        return;
    /* The stream header comes from the rings' drain: without a successful
     * one, nothing of ours may go first. */
    if (drained != 0)
        return;
    uint64_t base = flightrec__counter_base();
    /* Every switch in the rings now came before this pair. */
    for (int i = 0; i < ring_count; i++)
        rings[i].head = perf_head_load(&rings[i].page->data_head);
    take_pair(&pair_counter[1], &pair_ns[1]);
    /* The kernel may have changed its clock's mapping since. */
    if (perf_clock)
        (void)read_time_map(rings[0].page, &time_map);
    for (int i = 0; i < ring_count; i++)
        drain_ring(fd, &rings[i], base);
    (void)out_flush(fd);
    pair_counter[0] = pair_counter[1];
    pair_ns[0] = pair_ns[1];
}
