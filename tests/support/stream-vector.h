/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Builds record streams byte by byte for tests: any of the four formats, any
 * version, valid or deliberately broken.  Independent of the producer, so
 * decoder tests do not test the producer against itself.
 */
#ifndef FLIGHTREC_STREAM_VECTOR_H
#define FLIGHTREC_STREAM_VECTOR_H

#include <stddef.h>
#include <stdint.h>

#include <flightrec/format.h>

struct fr_vec {
    unsigned char *buf;
    size_t len;
    size_t cap;
    uint32_t format;
};

/* Starts a stream: format word and magic.  Aborts on out of memory. */
void fr_vec_init(struct fr_vec *v, uint32_t format);
void fr_vec_free(struct fr_vec *v);

/* A raw 32-bit word in the stream's byte order. */
void fr_vec_u32(struct fr_vec *v, uint32_t word);
/* One item; data is truncated to 32 bits in 32-bit formats. */
void fr_vec_item(struct fr_vec *v, uint32_t time22, uint32_t event,
                 uint64_t data);
/* A name sequence: head item (THREAD_ID / EVENT_NAME_ID with head_data)
 * then packed name items of event name_event; time 0. */
void fr_vec_name(struct fr_vec *v, uint32_t head_event, uint64_t head_data,
                 uint32_t name_event, const char *name, size_t name_bytes);
/* UPTIME_LOW then UPTIME_HIGH of a 64-bit value, both at time22. */
void fr_vec_uptime(struct fr_vec *v, uint32_t time22, uint64_t value);

/* A flightrec v1 header (after fr_vec_init). */
void fr_vec_flightrec_header(struct fr_vec *v, uint64_t frequency,
                             uint32_t ring_count, uint32_t items_per_ring,
                             int64_t pid, uint64_t realtime_ns);
/* A flightrec chunk head; overflow / discard items only when non-zero. */
void fr_vec_flightrec_chunk(struct fr_vec *v, uint32_t ring, int64_t tid,
                            const char *thread_name, uint32_t context,
                            uint32_t position, uint64_t overflow,
                            uint64_t discard);

/* Bytes per data word of the vector's format. */
size_t fr_vec_data_bytes(const struct fr_vec *v);
/* Items of one id carrying a string packed like names: least significant
 * byte first, as many items as @a bytes needs (no NUL when it fills them). */
void fr_vec_packed(struct fr_vec *v, uint32_t time22, uint32_t event,
                   const char *s, size_t bytes);

/*
 * RTEMS event tables as the tree keeps them (data/rtems-record, one
 * `id<TAB>name` line per enumerator), so that tests build streams of every
 * version from the tables rather than from the decoder's own constants.
 */
struct fr_rtems_table {
    char *names[1024]; /* NULL where the table has no name */
};

/* Loads @a path; aborts with a message if it cannot. */
void fr_rtems_table_load(struct fr_rtems_table *t, const char *path);
void fr_rtems_table_free(struct fr_rtems_table *t);
/* The id of @a name; aborts if the table lacks it. */
uint32_t fr_rtems_id(const struct fr_rtems_table *t, const char *name);
/* The id of @a name, or -1. */
int fr_rtems_find(const struct fr_rtems_table *t, const char *name);

#endif
