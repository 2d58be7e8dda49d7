/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared helpers of the producer tests. */
#ifndef FLIGHTREC_PRODUCER_TEST_H
#define FLIGHTREC_PRODUCER_TEST_H

#include <flightrec.h>

#include <stdio.h>
#include <stdlib.h>

#include "stream-parse.h"
#include "test.h"

/* Parses the stream written to @file, then closes it. */
static inline void parse_file(struct sp_stream *s, FILE *file)
{
    size_t len;
    unsigned char *bytes = sp_read_fd(fileno(file), &len);
    sp_parse(s, bytes, len);
    free(bytes);
    fclose(file);
}

/* Dumps (or drains, with @drain) into a temporary file and parses it. */
static inline void capture(struct sp_stream *s, int drain)
{
    FILE *file = tmpfile();
    CHECK(file != NULL);
    int fd = fileno(file);
    CHECK_EQ_I(drain ? flightrec_drain(fd) : flightrec_dump(fd), 0);
    parse_file(s, file);
}

/* The chunk of ring @ring (the first one if several), or NULL. */
static inline const struct sp_chunk *chunk_of(const struct sp_stream *s,
                                              uint32_t ring)
{
    for (size_t i = 0; i < s->chunk_count; i++)
        if (s->chunks[i].ring == ring)
            return &s->chunks[i];
    return NULL;
}

/* Items of all chunks of @ring, UPTIME pairs left out, into @out. */
static inline size_t user_items(const struct sp_stream *s, uint32_t ring,
                                struct sp_item *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->chunk_count; i++) {
        const struct sp_chunk *c = &s->chunks[i];
        if (c->ring != ring)
            continue;
        for (size_t j = 0; j < c->count; j++) {
            uint32_t e = c->items[j].event;
            if (e == FLIGHTREC_EV_UPTIME_LOW || e == FLIGHTREC_EV_UPTIME_HIGH)
                continue;
            if (n < cap)
                out[n] = c->items[j];
            n++;
        }
    }
    return n;
}

static inline void setup_or_die(uint32_t items, int mode)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = items;
    config.mode = mode;
    CHECK_EQ_I(flightrec_setup(&config), 0);
}

#endif
