/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec_dump() and flightrec_drain(): the ring reader and the stream
 * writer (src/region/) applied to this process's region.
 */
#include "platform.h"
#include "runtime.h"

#include "../region/order.h"

#include "../region/ring-reader.h"
#ifndef FLIGHTREC_PORT_FIRMWARE
#include "../region/session.h"
#endif

#include <errno.h>
#include <string.h>

/* Drains go out in writes of this size (one system call per ~20,000
 * items); a dump uses a smaller static buffer, or one on the stack when
 * two dumps run at once (it allocates nothing: crash handlers call it). */
#ifndef FLIGHTREC_DRAIN_BUFFER    /* a firmware port sets smaller ones */
#define FLIGHTREC_DRAIN_BUFFER (256u << 10)
#endif
#ifndef FLIGHTREC_DUMP_BUFFER
#define FLIGHTREC_DUMP_BUFFER (64u << 10)
#endif
#define DRAIN_BUFFER FLIGHTREC_DRAIN_BUFFER
#define DUMP_BUFFER FLIGHTREC_DUMP_BUFFER
#define DUMP_STACK_BUFFER 1024u

static int32_t ring_tid(const ring_t *ring)
{
    return atomic_load_explicit(&ring->owner.tid, memory_order_relaxed);
}

/* The current name of a live ring's thread, from the system. */
static int live_name(const ring_t *ring, uint32_t words[4])
{
    char name[16];
    if (FR_LOAD_ACQUIRE(&ring->state) != FLIGHTREC_RING_LIVE ||
        flightrec__port_thread_name(ring_tid(ring), name) != 0)
        return -1;
    flightrec__pack_name(name, words, FLIGHTREC_REGION_NAME_WORDS);
    return 0;
}

static void publish_frequency(void)
{
    atomic_store_explicit(&region_header()->counter_frequency,
                          flightrec_counter_frequency(), memory_order_relaxed);
}

/*=====   Dump   =====*/

static unsigned char dump_buffer[DUMP_BUFFER];
static _Atomic int dump_buffer_busy;

int flightrec__dump_to(struct frw_sink *sink)
{
    publish_frequency();
    frw_put_header(sink, region_header(), region_control());
    frw_put_event_names(sink, region_names(), NULL);
    for (ring_t *ring = ring_first(); ring; ring = ring_next(ring)) {
        if (FR_LOAD_ACQUIRE(&ring->state) == FLIGHTREC_RING_FREE)
            continue;
        uint32_t name[FLIGHTREC_REGION_NAME_WORDS];
        (void)fr_ring_dump(sink, flightrec__region_base, ring,
                           live_name(ring, name) == 0 ? name : NULL);
    }
    return frw_sink_flush(sink);
}

static int dump_with(int fd, unsigned char *buf, size_t cap)
{
    int target = fd;
    struct frw_sink sink;
    frw_sink_init_fd(&sink, &target, buf, cap);
    return flightrec__dump_to(&sink);
}

int flightrec_dump(int fd)
{
    /* No waiting here: a crash handler may have interrupted start-up. */
    if (flightrec__try_init() != 0)
        return -EAGAIN;
    if (flightrec__region_base == NULL)
        return -ENOMEM;
    if (!atomic_exchange_explicit(&dump_buffer_busy, 1, memory_order_acquire)) {
        int rc = dump_with(fd, dump_buffer, sizeof(dump_buffer));
        FR_STORE_RELEASE(&dump_buffer_busy, 0);
        return rc;
    }
    unsigned char buf[DUMP_STACK_BUFFER];
    return dump_with(fd, buf, sizeof(buf));
}

/*=====   Drain   =====*/

static flightrec__mutex_t drain_lock = FLIGHTREC__MUTEX_INITIALIZER;
static int drain_started;
static uint32_t drain_name_serial[FLIGHTREC_EVENT_COUNT];
static unsigned char drain_buffer[DRAIN_BUFFER];
static int drain_fd = -1;
static struct frw_sink drain_sink;
#ifndef FLIGHTREC_PORT_FIRMWARE
/* Names read from the system lately, for paced drains (a direct-mapped
 * cache by ring id; a collision only costs a read). */
#define NAME_CACHE_SLOTS 256u
struct name_cache_slot {
    const ring_t *ring;
    uint32_t owner_generation;
    uint64_t read_at;
    uint32_t words[FLIGHTREC_REGION_NAME_WORDS];
};
static struct name_cache_slot name_cache[NAME_CACHE_SLOTS];

/* The fill of the fullest ring the last drain found (FR_FILL_SCALE: full). */
static _Atomic uint32_t drain_fullest;
#endif

static void forget_stream(void)
{
    drain_started = 0;
    drain_fd = -1;
    memset(drain_name_serial, 0, sizeof(drain_name_serial));
#ifndef FLIGHTREC_PORT_FIRMWARE
    memset(name_cache, 0, sizeof(name_cache));
#endif
}

void flightrec__drain_reset_after_fork(void)
{
    flightrec__mutex_init(&drain_lock);
    forget_stream();
#ifndef FLIGHTREC_PORT_FIRMWARE
    flightrec__server_forget_after_fork();
#endif
}

void flightrec__drain_enter(void)
{
    flightrec__mutex_lock(&drain_lock);
}

void flightrec__drain_leave(void)
{
    flightrec__mutex_unlock(&drain_lock);
}

void flightrec__rings_cleanup(void)
{
#ifndef FLIGHTREC_PORT_FIRMWARE
    flightrec_server_stop(); /* its thread reads the rings */
#endif
    flightrec__mutex_lock(&drain_lock);
    flightrec__registry_cleanup();
    forget_stream();
    flightrec__mutex_unlock(&drain_lock);
}

void flightrec_drain_reset(void)
{
    flightrec__mutex_lock(&drain_lock);
    forget_stream();
    flightrec__mutex_unlock(&drain_lock);
}

#ifndef FLIGHTREC_PORT_FIRMWARE
/* A live thread's rename shows in the next chunk of its ring (@max_age 0),
 * or in the first chunk a name read @max_age counter ticks after it
 * (paced drains: reading a name takes three system calls).  Only rings
 * with something new are asked: an idle drain reads no file. */
static const uint32_t *drain_name(ring_t *ring, uint32_t words[4],
                                  uint64_t now, uint64_t max_age)
{
    struct name_cache_slot *slot = &name_cache[ring->id % NAME_CACHE_SLOTS];
    uint32_t generation = FR_LOAD_ACQUIRE(&ring->owner_generation);
    if (max_age != 0 && slot->ring == ring &&
        slot->owner_generation == generation && now - slot->read_at < max_age &&
        FR_LOAD_ACQUIRE(&ring->state) == FLIGHTREC_RING_LIVE) {
        memcpy(words, slot->words, sizeof(slot->words));
        return words;
    }
    if (live_name(ring, words) != 0)
        return NULL;
    slot->ring = ring;
    slot->owner_generation = generation;
    slot->read_at = now;
    memcpy(slot->words, words, sizeof(slot->words));
    return words;
}
#endif

static int drain_with_names(int fd, uint64_t name_max_age);

#ifndef FLIGHTREC_PORT_FIRMWARE
/* On a ring's first lap, the pages its producer writes next are faulted in
 * by the drain rather than by the producer: a page fault costs it about
 * 3 us on a virtual machine, 4,096 of them for a ring of 2^20 items.  As
 * far ahead of the head as twice what this drain found (@a fill, in
 * 1/FR_FILL_SCALE of the ring), at most a quarter ring: a thread that
 * records little commits little more than it uses.  Later laps find the
 * pages there. */
static void populate_ahead(ring_t *ring, uint32_t fill)
{
    uintptr_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    uintptr_t capacity = (uintptr_t)ring->capacity;
    if (head >= capacity)
        return;
    uint64_t ahead = (uint64_t)capacity * fill / FR_FILL_SCALE * 2;
    if (ahead > capacity / 4)
        ahead = capacity / 4;
    uintptr_t end = head + (uintptr_t)ahead + FLIGHTREC_MAX_PENDING;
    if (end > capacity)
        end = capacity;
    const size_t item = sizeof(struct flightrec_region_item);
    flightrec__port_region_populate(
        flightrec__region_base + ring->items_offset + head * item,
        (size_t)(end - head) * item);
}
#endif

int flightrec_drain(int fd)
{
    return drain_with_names(fd, 0);
}

#ifndef FLIGHTREC_PORT_FIRMWARE
/* For the preload library's drain thread: names up to 10 ms old. */
FLIGHTREC_API int flightrec__drain_paced(int fd);
int flightrec__drain_paced(int fd)
{
    return drain_with_names(fd, flightrec_counter_frequency() / 100u);
}
#endif

static int drain_with_names(int fd, uint64_t name_max_age)
{
    flightrec__ensure_init();
    if (flightrec__region_base == NULL)
        return -ENOMEM;
    publish_frequency();
#ifndef FLIGHTREC_PORT_FIRMWARE
    /* One consumer at a time: this process, or `flightrec stream` outside
     * (whose claim, if it died, is taken over). */
    const struct flightrec_region_process *me =
        (const void *)(flightrec__region_base +
                       region_header()->process_offset);
    int32_t holder = 0;
    if (atomic_load(&flightrec__server_active) ||
        fr_consumer_claim(region_control(), me->pid, me->start_time,
                          &holder) != 0)
        return -EBUSY;
#endif
#if defined(FLIGHTREC_PORT_FIRMWARE)
    /* Held already: a fault handler drains, and the drain it interrupted
     * never resumes. */
    int interrupted = drain_lock.held;
#endif
    flightrec__mutex_lock(&drain_lock);
    if (fd != drain_fd || !drain_started) {
        /* A cut item is finished only on the descriptor it was cut on. */
        drain_fd = fd;
        frw_sink_init_fd(&drain_sink, &drain_fd, drain_buffer,
                        sizeof(drain_buffer));
#if defined(FLIGHTREC_PORT_FIRMWARE)
        /* The sink's offsets are the port's: a stream begun again
         * (flightrec_drain_reset()) does not start at its byte 0. */
        drain_sink.buf_at = flightrec__port_stream_taken();
        drain_sink.written = drain_sink.buf_at;
#endif
    }
#if defined(FLIGHTREC_PORT_FIRMWARE)
    else if (interrupted) {
        /* Its output goes on from the byte where it stopped, and the ring
         * it was on from its last commit: nothing is lost or repeated. */
        frw_sink_recover(&drain_sink, flightrec__port_stream_taken());
        fr_drain_recover();
        (void)frw_sink_flush(&drain_sink);
    }
#endif
    frw_sink_resume(&drain_sink);
    if (!drain_started) {
        frw_put_header(&drain_sink, region_header(), region_control());
        drain_started = 1;
    }
    FR_TEST_POINT(7);
    frw_put_event_names(&drain_sink, region_names(), drain_name_serial);
#ifndef FLIGHTREC_PORT_FIRMWARE
    uint32_t rewind_request, fullest = 0;
    uint64_t now = name_max_age != 0 ? flightrec_counter() : 0;
    int rewind = fr_rewind_requested(region_control(), &rewind_request);
#endif
    for (ring_t *ring = ring_first(); ring; ring = ring_next(ring)) {
        if (FR_LOAD_ACQUIRE(&ring->state) == FLIGHTREC_RING_FREE)
            continue;
#ifndef FLIGHTREC_PORT_FIRMWARE
        if (rewind)
            fr_ring_rewind(ring);
        if (fr_ring_has_news(ring)) {
            uint32_t fill = fr_ring_fill(ring);
            if (fill > fullest)
                fullest = fill;
            uint32_t name[FLIGHTREC_REGION_NAME_WORDS];
            (void)fr_ring_drain(&drain_sink, flightrec__region_base, ring,
                                drain_name(ring, name, now, name_max_age));
            populate_ahead(ring, fill);
        }
        /* The signal ring comes after its thread ring in the list: with
         * both read, an exited thread's pair may go back to the pool. */
        if (ring->context == 1 &&
            FR_LOAD_ACQUIRE(&ring->state) == FLIGHTREC_RING_RETIRED)
            flightrec__registry_pair_read(ring_partner(ring));
#else
        /* No other process asks for rewinds, nothing paces the drains, the
         * CPU's pair is never retired, and the CPU is named once when it
         * attached (port_self_name()): the name in its rings is current.
         * Its two rings are drained without asking first whether they
         * have news (a drain of a ring without any writes nothing). */
        (void)name_max_age;
        (void)fr_ring_drain(&drain_sink, flightrec__region_base, ring, NULL);
#endif
    }
#ifndef FLIGHTREC_PORT_FIRMWARE
    if (rewind)
        fr_rewind_served(region_control(), rewind_request);
    atomic_store_explicit(&drain_fullest, fullest, memory_order_relaxed);
#endif
    int rc = frw_sink_flush(&drain_sink);
    FR_TEST_POINT(5);
    if (rc != 0) {
        /* Names of a failed write may be lost with it: send all again. */
        memset(drain_name_serial, 0, sizeof(drain_name_serial));
    }
    flightrec__mutex_unlock(&drain_lock);
    return rc;
}

#ifndef FLIGHTREC_PORT_FIRMWARE
/* For a thread that drains in a loop (the preload library's): the pause
 * before its next drain, as `flightrec stream` paces its passes
 * (fr_poll_pause(): the fullest ring found an eighth full). */
FLIGHTREC_API uint64_t flightrec__drain_pause(uint64_t pause_ns,
                                              uint64_t elapsed_ns);
uint64_t flightrec__drain_pause(uint64_t pause_ns, uint64_t elapsed_ns)
{
    return fr_poll_pause(pause_ns, elapsed_ns,
                         atomic_load_explicit(&drain_fullest,
                                              memory_order_relaxed));
}
#endif

int flightrec_rewind(void)
{
    if (flightrec__current_mode() != FLIGHTREC_MODE_FLIGHT)
        return FLIGHTREC_EMODE;
    flightrec__ensure_init();
    flightrec__mutex_lock(&drain_lock);
    for (ring_t *ring = ring_first(); ring; ring = ring_next(ring))
        fr_ring_rewind(ring);
    flightrec__mutex_unlock(&drain_lock);
    return 0;
}
