/* SPDX-License-Identifier: BSD-2-Clause */
#include "stream-parse.h"

#include <flightrec/format.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char *what, size_t offset)
{
    fprintf(stderr, "stream-parse: byte %zu: %s\n", offset, what);
    abort();
}

static uint64_t get(const unsigned char *p, size_t n, int big)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
    return v;
}

static void *grow(void *p, size_t count, size_t size)
{
    void *q = realloc(p, count * size);
    if (q == NULL)
        fail("out of memory", 0);
    return q;
}

static void append_chars(char *dst, size_t cap, uint64_t word, size_t n)
{
    size_t len = strlen(dst);
    for (size_t i = 0; i < n && len + 1 < cap; i++) {
        char c = (char)(word >> (8 * i));
        if (c == '\0')
            return;
        dst[len++] = c;
        dst[len] = '\0';
    }
}

void sp_parse(struct sp_stream *s, const unsigned char *b, size_t len)
{
    memset(s, 0, sizeof(*s));
    if (len < 8)
        fail("too short", 0);
    s->format = (uint32_t)get(b, 4, 0);
    int big = s->format == FLIGHTREC_FORMAT_BE_32 ||
              s->format == FLIGHTREC_FORMAT_BE_64;
    size_t data_bytes = FLIGHTREC_ITEM_SIZE(s->format) - 4;
    if (s->format != FLIGHTREC_FORMAT_LE_32 &&
        s->format != FLIGHTREC_FORMAT_LE_64 &&
        s->format != FLIGHTREC_FORMAT_BE_32 &&
        s->format != FLIGHTREC_FORMAT_BE_64)
        fail("format", 0);
    if (get(b + 4, 4, big) != FLIGHTREC_MAGIC)
        fail("magic", 4);
    struct sp_chunk *chunk = NULL;
    char *name_target = NULL;
    size_t name_cap = 0;
    uint32_t last_event = 0;
    for (size_t off = 8; off < len; off += 4 + data_bytes) {
        if (off + 4 + data_bytes > len)
            fail("truncated item", off);
        uint32_t word = (uint32_t)get(b + off, 4, big);
        uint64_t data = get(b + off + 4, data_bytes, big);
        uint32_t event = FLIGHTREC_GET_EVENT(word);
        uint32_t time22 = FLIGHTREC_GET_TIME(word);
        int continues_name = (event == FLIGHTREC_EV_THREAD_NAME &&
                              (last_event == FLIGHTREC_EV_THREAD_ID ||
                               last_event == FLIGHTREC_EV_THREAD_NAME)) ||
                             (event == FLIGHTREC_EV_EVENT_NAME &&
                              (last_event == FLIGHTREC_EV_EVENT_NAME_ID ||
                               last_event == FLIGHTREC_EV_EVENT_NAME));
        uint32_t previous_event = last_event;
        last_event = event;
        if (event == FLIGHTREC_EV_EVENT_KIND) {
            /* Only right after a name record (docs/format.md, section 4). */
            if (previous_event != FLIGHTREC_EV_EVENT_NAME_ID &&
                previous_event != FLIGHTREC_EV_EVENT_NAME)
                fail("EVENT_KIND not after a name record", off);
            s->event_kinds[s->kind_target] = (uint32_t)data;
            continue;
        }
        if (continues_name) {
            append_chars(name_target, name_cap, data, data_bytes);
            continue;
        }
        switch (event) {
        case FLIGHTREC_EV_VERSION: s->version = (uint32_t)data; continue;
        case FLIGHTREC_EV_RING_COUNT: s->ring_count = (uint32_t)data; continue;
        case FLIGHTREC_EV_PER_CPU_COUNT:
            s->items_per_ring = (uint32_t)data;
            continue;
        case FLIGHTREC_EV_FREQUENCY: s->frequency |= data; continue;
        case FLIGHTREC_EV_FREQUENCY_HIGH: s->frequency |= data << 32; continue;
        case FLIGHTREC_EV_PROCESS_ID: s->pid = (int64_t)data; continue;
        case FLIGHTREC_EV_REALTIME_LOW: s->realtime |= data; continue;
        case FLIGHTREC_EV_REALTIME_HIGH: s->realtime |= data << 32; continue;
        case FLIGHTREC_EV_EVENT_NAME_ID:
            if (data >= 1024)
                fail("event name id", off);
            name_target = s->event_names[data];
            name_target[0] = '\0';
            s->kind_target = (uint32_t)data;
            s->event_kinds[data] = 0;
            name_cap = sizeof(s->event_names[0]);
            chunk = NULL;
            continue;
        case FLIGHTREC_EV_PROCESSOR:
            if ((s->chunk_count & (s->chunk_count - 1)) == 0)
                s->chunks = grow(s->chunks,
                                 s->chunk_count ? s->chunk_count * 2 : 1,
                                 sizeof(*chunk));
            chunk = &s->chunks[s->chunk_count++];
            memset(chunk, 0, sizeof(*chunk));
            chunk->ring = (uint32_t)data;
            continue;
        default:
            break;
        }
        if (chunk == NULL)
            fail("item outside a chunk", off);
        switch (event) {
        case FLIGHTREC_EV_THREAD_ID:
            chunk->tid = (int64_t)(data_bytes == 4 ? (int32_t)data : (int64_t)data);
            name_target = chunk->name;
            name_target[0] = '\0';
            name_cap = sizeof(chunk->name);
            break;
        case FLIGHTREC_EV_RING_CONTEXT: chunk->context = (uint32_t)data; break;
        case FLIGHTREC_EV_RING_POSITION: chunk->position = (uint32_t)data; break;
        case FLIGHTREC_EV_PER_CPU_OVERFLOW: chunk->overflow = data; break;
        case FLIGHTREC_EV_PER_CPU_DISCARD: chunk->discard = data; break;
        default:
            /* Capacity doubles at powers of two: linear time overall. */
            if ((chunk->count & (chunk->count - 1)) == 0)
                chunk->items = grow(chunk->items,
                                    chunk->count ? chunk->count * 2 : 1,
                                    sizeof(struct sp_item));
            chunk->items[chunk->count].time22 = time22;
            chunk->items[chunk->count].event = event;
            chunk->items[chunk->count].data = data;
            chunk->count++;
            break;
        }
    }
}

void sp_free(struct sp_stream *s)
{
    for (size_t i = 0; i < s->chunk_count; i++)
        free(s->chunks[i].items);
    free(s->chunks);
    memset(s, 0, sizeof(*s));
}

unsigned char *sp_read_fd(int fd, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    ssize_t got;
    off_t at = 0;
    while (buf && (got = pread(fd, buf + n, cap - n, at)) > 0) {
        n += (size_t)got;
        at += got;
        if (n == cap)
            buf = grow(buf, cap *= 2, 1);
    }
    if (buf == NULL)
        fail("out of memory", 0);
    *len = n;
    return buf;
}
