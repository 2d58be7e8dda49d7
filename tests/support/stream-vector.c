/* SPDX-License-Identifier: BSD-2-Clause */
#include "stream-vector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_big_endian(uint32_t format)
{
    return format == FLIGHTREC_FORMAT_BE_32 || format == FLIGHTREC_FORMAT_BE_64;
}

size_t fr_vec_data_bytes(const struct fr_vec *v)
{
    return FLIGHTREC_ITEM_SIZE(v->format) - 4;
}

static void put_bytes(struct fr_vec *v, uint64_t value, size_t n)
{
    if (v->len + n > v->cap) {
        v->cap = v->cap ? v->cap * 2 : 256;
        v->buf = realloc(v->buf, v->cap);
        if (v->buf == NULL) {
            fprintf(stderr, "stream-vector: out of memory\n");
            abort();
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t shift = is_big_endian(v->format) ? (n - 1 - i) * 8 : i * 8;
        v->buf[v->len++] = (unsigned char)(value >> shift);
    }
}

void fr_vec_init(struct fr_vec *v, uint32_t format)
{
    memset(v, 0, sizeof(*v));
    v->format = format;
    put_bytes(v, format, 4);
    put_bytes(v, FLIGHTREC_MAGIC, 4);
}

void fr_vec_free(struct fr_vec *v)
{
    free(v->buf);
    memset(v, 0, sizeof(*v));
}

void fr_vec_u32(struct fr_vec *v, uint32_t word)
{
    put_bytes(v, word, 4);
}

void fr_vec_item(struct fr_vec *v, uint32_t time22, uint32_t event,
                 uint64_t data)
{
    put_bytes(v, FLIGHTREC_TIME_EVENT(time22 & FLIGHTREC_TIME_MASK, event), 4);
    put_bytes(v, data, fr_vec_data_bytes(v));
}

void fr_vec_name(struct fr_vec *v, uint32_t head_event, uint64_t head_data,
                 uint32_t name_event, const char *name, size_t name_bytes)
{
    size_t per_item = fr_vec_data_bytes(v);
    size_t len = strlen(name);

    fr_vec_item(v, 0, head_event, head_data);
    for (size_t at = 0; at < name_bytes; at += per_item) {
        uint64_t word = 0;
        for (size_t i = 0; i < per_item; i++) {
            if (at + i < len)
                word |= (uint64_t)(unsigned char)name[at + i] << (8 * i);
        }
        fr_vec_item(v, 0, name_event, word);
    }
}

void fr_vec_uptime(struct fr_vec *v, uint32_t time22, uint64_t value)
{
    fr_vec_item(v, time22, FLIGHTREC_EV_UPTIME_LOW, (uint32_t)value);
    fr_vec_item(v, time22, FLIGHTREC_EV_UPTIME_HIGH, (uint32_t)(value >> 32));
}

void fr_vec_flightrec_header(struct fr_vec *v, uint64_t frequency,
                             uint32_t ring_count, uint32_t items_per_ring,
                             int64_t pid, uint64_t realtime_ns)
{
    fr_vec_item(v, 0, FLIGHTREC_EV_VERSION, FLIGHTREC_STREAM_VERSION_1);
    fr_vec_item(v, 0, FLIGHTREC_EV_RING_COUNT, ring_count);
    fr_vec_item(v, 0, FLIGHTREC_EV_PER_CPU_COUNT, items_per_ring);
    fr_vec_item(v, 0, FLIGHTREC_EV_FREQUENCY, fr_vec_data_bytes(v) == 4
                                                  ? (uint32_t)frequency
                                                  : frequency);
    if (fr_vec_data_bytes(v) == 4 && frequency > UINT32_MAX)
        fr_vec_item(v, 0, FLIGHTREC_EV_FREQUENCY_HIGH, frequency >> 32);
    fr_vec_item(v, 0, FLIGHTREC_EV_PROCESS_ID, (uint64_t)pid);
    fr_vec_item(v, 0, FLIGHTREC_EV_REALTIME_LOW, (uint32_t)realtime_ns);
    fr_vec_item(v, 0, FLIGHTREC_EV_REALTIME_HIGH,
                (uint32_t)(realtime_ns >> 32));
}

void fr_vec_flightrec_chunk(struct fr_vec *v, uint32_t ring, int64_t tid,
                            const char *thread_name, uint32_t context,
                            uint32_t position, uint64_t overflow,
                            uint64_t discard)
{
    fr_vec_item(v, 0, FLIGHTREC_EV_PROCESSOR, ring);
    fr_vec_name(v, FLIGHTREC_EV_THREAD_ID, (uint64_t)tid,
                FLIGHTREC_EV_THREAD_NAME, thread_name, 16);
    fr_vec_item(v, 0, FLIGHTREC_EV_RING_CONTEXT, context);
    fr_vec_item(v, 0, FLIGHTREC_EV_RING_POSITION, position);
    if (overflow != 0)
        fr_vec_item(v, 0, FLIGHTREC_EV_PER_CPU_OVERFLOW, overflow);
    if (discard != 0)
        fr_vec_item(v, 0, FLIGHTREC_EV_PER_CPU_DISCARD, discard);
}

void fr_vec_packed(struct fr_vec *v, uint32_t time22, uint32_t event,
                   const char *s, size_t bytes)
{
    size_t per = fr_vec_data_bytes(v), len = strlen(s);

    for (size_t at = 0; at < bytes; at += per) {
        uint64_t w = 0;
        for (size_t i = 0; i < per; i++) {
            if (at + i < len)
                w |= (uint64_t)(unsigned char)s[at + i] << (8 * i);
        }
        fr_vec_item(v, time22, event, w);
    }
}

void fr_rtems_table_load(struct fr_rtems_table *t, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int n = 0;

    memset(t, 0, sizeof(*t));
    if (f == NULL) {
        fprintf(stderr, "stream-vector: cannot open %s\n", path);
        abort();
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned id;
        char name[128];
        if (n++ == 0)
            continue; /* the header line */
        if (sscanf(line, "%u %127s", &id, name) != 2 || id >= 1024) {
            fprintf(stderr, "stream-vector: %s:%d: bad line\n", path, n);
            abort();
        }
        free(t->names[id]);
        t->names[id] = strdup(name);
        if (t->names[id] == NULL)
            abort();
    }
    fclose(f);
}

void fr_rtems_table_free(struct fr_rtems_table *t)
{
    for (size_t i = 0; i < 1024; i++)
        free(t->names[i]);
    memset(t, 0, sizeof(*t));
}

int fr_rtems_find(const struct fr_rtems_table *t, const char *name)
{
    for (int i = 0; i < 1024; i++) {
        if (t->names[i] != NULL && strcmp(t->names[i], name) == 0)
            return i;
    }
    return -1;
}

uint32_t fr_rtems_id(const struct fr_rtems_table *t, const char *name)
{
    int id = fr_rtems_find(t, name);

    if (id < 0) {
        fprintf(stderr, "stream-vector: no event %s in the table\n", name);
        abort();
    }
    return (uint32_t)id;
}
