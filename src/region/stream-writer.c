/* SPDX-License-Identifier: BSD-2-Clause */
#include "stream-writer.h"
#include "order.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define ITEM_SIZE (4 + sizeof(uintptr_t))
#define START_SIZE 8

static ssize_t fd_write(void *target, const void *bytes, size_t n)
{
    ssize_t done = write(*(int *)target, bytes, n);
    return done < 0 ? -errno : done;
}

void frw_sink_init(struct frw_sink *sink, frw_sink_write_fn write_fn,
                  void *target, void *buf, size_t cap)
{
    memset(sink, 0, sizeof(*sink));
    sink->write = write_fn;
    sink->target = target;
    sink->buf = buf;
    sink->cap = cap;
}

void frw_sink_init_fd(struct frw_sink *sink, int *fd, void *buf, size_t cap)
{
    frw_sink_init(sink, fd_write, fd, buf, cap);
}

void frw_sink_resume(struct frw_sink *sink)
{
    sink->error = 0;
    sink->len = 0;
    sink->start_in_buf = 0;
}

/* Writes @n bytes; returns how many went out before a failure. */
static size_t write_all(struct frw_sink *sink, const unsigned char *bytes,
                        size_t n)
{
    size_t done = 0;
    while (done < n && sink->error == 0) {
        ssize_t k = sink->write(sink->target, bytes + done, n - done);
        if (k > 0) {
            done += (size_t)k;
            sink->written += (uint64_t)k;
        } else if (k == -EINTR) {
            continue;
        } else {
            sink->error = k < 0 ? (int)k : -EIO;
        }
    }
    return done;
}

/* After a write cut the buffer at @done: keep the rest of the cut item. */
static void keep_cut_item(struct frw_sink *sink, size_t done)
{
    size_t boundary;
    if (done < sink->start_in_buf) {
        boundary = sink->start_in_buf;
    } else {
        size_t into = (done - sink->start_in_buf) % ITEM_SIZE;
        boundary = into == 0 ? done : done + (ITEM_SIZE - into);
    }
    if (boundary > sink->len)
        boundary = sink->len;
    sink->carry_len = boundary - done;
    memcpy(sink->carry, sink->buf + done, sink->carry_len);
}

int frw_sink_flush(struct frw_sink *sink)
{
    if (sink->carry_len != 0 && sink->error == 0) {
        size_t done = write_all(sink, sink->carry, sink->carry_len);
        memmove(sink->carry, sink->carry + done, sink->carry_len - done);
        sink->carry_len -= done;
    }
    if (sink->len != 0 && sink->error == 0) {
        size_t done = write_all(sink, sink->buf, sink->len);
        if (done < sink->len)
            keep_cut_item(sink, done);
    }
    FR_TEST_POINT(6);
    /* After an error the rest is dropped: its items are lost, and the
     * positions of the next chunks say so. */
    FR_COMMIT_BEGIN();
    sink->len = 0;
    sink->start_in_buf = 0;
#if defined(FLIGHTREC_PORT_FIRMWARE)
    sink->committed = 0;
    sink->buf_at = (uint32_t)sink->written;
#endif
    FR_COMMIT_END();
    return sink->error;
}

#if defined(FLIGHTREC_PORT_FIRMWARE)
void frw_sink_recover(struct frw_sink *sink, uint32_t taken)
{
    /* Past the last commit: part of a record the interrupted drain never
     * finished (its commit would have counted it); nothing of it went
     * out, since puts between commits have their room reserved. */
    size_t have = sink->committed;
    size_t skip = (uint32_t)(taken - sink->buf_at);
    if (skip > have)
        skip = have;
    memmove(sink->buf, sink->buf + skip, have - skip);
    sink->len = sink->committed = have - skip;
    if (skip != 0)
        sink->start_in_buf = 0;
    sink->written = taken;
    sink->buf_at = taken;
}
#endif

void frw_sink_reserve(struct frw_sink *sink, size_t bytes)
{
    if (sink->cap - sink->len < bytes)
        (void)frw_sink_flush(sink);
}

static void put_bytes(struct frw_sink *sink, const void *bytes, size_t n)
{
    frw_sink_reserve(sink, n);
    memcpy(sink->buf + sink->len, bytes, n);
    sink->len += n;
}

uint32_t frw_host_format(void)
{
    const uint16_t probe = 1;
    int little = *(const unsigned char *)&probe == 1;
    if (sizeof(uintptr_t) == 8)
        return little ? FLIGHTREC_FORMAT_LE_64 : FLIGHTREC_FORMAT_BE_64;
    return little ? FLIGHTREC_FORMAT_LE_32 : FLIGHTREC_FORMAT_BE_32;
}

void frw_put_start(struct frw_sink *sink)
{
    uint32_t words[2] = { frw_host_format(), FLIGHTREC_MAGIC };
    /* The stream start is the only unit that is not an item: it goes at
     * the front of the buffer, where a cut inside it can be told. */
    if (sink->len != 0)
        (void)frw_sink_flush(sink);
    sink->start_in_buf = sizeof(words);
    put_bytes(sink, words, sizeof(words));
}

void frw_put_item(struct frw_sink *sink, uint32_t event_word, uintptr_t data)
{
    unsigned char item[ITEM_SIZE];
    memcpy(item, &event_word, 4);
    memcpy(item + 4, &data, sizeof(data));
    put_bytes(sink, item, sizeof(item));
}

unsigned char *frw_items_room(struct frw_sink *sink, size_t want, size_t *room)
{
    /* Flushed where frw_put_item() would flush: the writes stay the same. */
    frw_sink_reserve(sink, ITEM_SIZE);
    size_t fit = (sink->cap - sink->len) / ITEM_SIZE;
    *room = fit < want ? fit : want;
    return sink->buf + sink->len;
}

void frw_put_meta(struct frw_sink *sink, uint32_t event, uintptr_t data)
{
    frw_put_item(sink, FLIGHTREC_TIME_EVENT(0, event), data);
}

void frw_put_name(struct frw_sink *sink, uint32_t event, const uint32_t *words,
                 size_t nwords)
{
    size_t per_item = sizeof(uintptr_t) / 4;
    for (size_t i = 0; i < nwords; i += per_item) {
        uintptr_t data = words[i];
#if UINTPTR_MAX > UINT32_MAX
        data |= (uintptr_t)words[i + 1] << 32;
#endif
        frw_put_meta(sink, event, data);
    }
}

void frw_put_header(struct frw_sink *sink,
                   const struct flightrec_region_header *header,
                   const struct flightrec_region_control *control)
{
    frw_put_start(sink);
    frw_put_meta(sink, FLIGHTREC_EV_VERSION, FLIGHTREC_STREAM_VERSION);
    frw_put_meta(sink, FLIGHTREC_EV_RING_COUNT,
                atomic_load_explicit(&header->ring_count,
                                     memory_order_relaxed));
    frw_put_meta(sink, FLIGHTREC_EV_PER_CPU_COUNT, control->items);
    uint64_t frequency = atomic_load_explicit(&header->counter_frequency,
                                              memory_order_relaxed);
    frw_put_meta(sink, FLIGHTREC_EV_FREQUENCY, (uintptr_t)frequency);
    if (sizeof(uintptr_t) == 4 && frequency > UINT32_MAX)
        frw_put_meta(sink, FLIGHTREC_EV_FREQUENCY_HIGH,
                    (uintptr_t)(frequency >> 16 >> 16));
    frw_put_meta(sink, FLIGHTREC_EV_PROCESS_ID, (uintptr_t)header->process_id);
    frw_put_meta(sink, FLIGHTREC_EV_REALTIME_LOW, (uint32_t)header->realtime_ns);
    frw_put_meta(sink, FLIGHTREC_EV_REALTIME_HIGH,
                (uint32_t)(header->realtime_ns >> 32));
    /* The header is one unit: a write that cuts it keeps all the rest, so
     * that the stream never goes on without its header. */
    _Static_assert(8 + 9 * ITEM_SIZE <= sizeof(((struct frw_sink *)0)->carry),
                   "the carry holds a whole header");
    if (sink->start_in_buf != 0)
        sink->start_in_buf = sink->len;
}

void frw_put_event_names(struct frw_sink *sink,
                        const struct flightrec_region_names *names,
                        uint32_t *seen)
{
    for (uint32_t event = 0; event < FLIGHTREC_EVENT_COUNT; event++) {
        uint32_t serial = FR_LOAD_ACQUIRE(&names->serial[event]);
        if (serial == 0 || (seen != NULL && seen[event] == serial))
            continue;
        uint32_t words[FLIGHTREC_REGION_EVENT_NAME_WORDS];
        for (size_t i = 0; i < FLIGHTREC_REGION_EVENT_NAME_WORDS; i++)
            words[i] = atomic_load_explicit(&names->words[event][i],
                                            memory_order_relaxed);
        uint32_t kind = atomic_load_explicit(&names->kind[event],
                                             memory_order_relaxed);
        size_t nwords = FLIGHTREC_REGION_EVENT_NAME_WORDS;
        while (nwords > 2 && words[nwords - 1] == 0 && words[nwords - 2] == 0)
            nwords -= 2;
#if defined(FLIGHTREC_PORT_FIRMWARE)
        /* The record goes into the buffer without a write, and counts
         * with seen[] in one commit (a fault handler's drain sends it
         * again if an interrupted one did not finish it). */
        frw_sink_reserve(sink, (2 + nwords * 4 / sizeof(uintptr_t)) *
                                   ITEM_SIZE);
#endif
        FR_TEST_POINT(1);
        frw_put_meta(sink, FLIGHTREC_EV_EVENT_NAME_ID, event);
        FR_TEST_POINT(2);
        frw_put_name(sink, FLIGHTREC_EV_EVENT_NAME, words, nwords);
        /* Instants (the default) say nothing: streams of programs that
         * define no kinds stay as they were. */
        if (kind != FLIGHTREC_EVENT_INSTANT)
            frw_put_meta(sink, FLIGHTREC_EV_EVENT_KIND, kind);
        FR_COMMIT_BEGIN();
        frw_sink_commit(sink);
        if (seen != NULL)
            seen[event] = serial;
        FR_COMMIT_END();
    }
}
