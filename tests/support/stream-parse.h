/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A deliberately simple reader of flightrec streams for producer tests: it
 * splits a stream into header facts, name records and chunks of raw items,
 * without timing them.  Independent of the decoder library, so producer
 * tests check bytes against the format document, not against the decoder.
 */
#ifndef FLIGHTREC_STREAM_PARSE_H
#define FLIGHTREC_STREAM_PARSE_H

#include <stddef.h>
#include <stdint.h>

struct sp_item {
    uint32_t time22;
    uint32_t event;
    uint64_t data;
};

struct sp_chunk {
    uint32_t ring;
    int64_t tid;
    char name[17];
    uint32_t context;
    uint32_t position;
    uint64_t overflow;
    uint64_t discard;
    size_t count;
    struct sp_item *items;
};

struct sp_stream {
    uint32_t format;
    uint32_t version;
    uint32_t ring_count;
    uint32_t items_per_ring;
    uint64_t frequency;
    int64_t pid;
    uint64_t realtime;
    char event_names[1024][65];
    uint32_t event_kinds[1024];  /* EVENT_KIND data after each name, 0 */
    uint32_t kind_target;        /* the event of the last name record */
    size_t chunk_count;
    struct sp_chunk *chunks;
};

/* Parses a whole stream; aborts the test with a message on anything the
 * format does not allow. */
void sp_parse(struct sp_stream *s, const unsigned char *bytes, size_t len);
void sp_free(struct sp_stream *s);
/* Reads a whole file descriptor from offset 0. */
unsigned char *sp_read_fd(int fd, size_t *len);

#endif
