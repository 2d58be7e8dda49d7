/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory bounds of the decoder, checked with its memory limit (the client
 * counts what it allocates for rings, held-back and queued records and
 * its index, and stops past the limit): a large stream read from a file
 * in exact order within a small limit, which the same merge fed in one
 * pass cannot do; memory per ring that follows what the ring holds; and
 * the clear stop when rings alone exceed the limit.
 */
#define _POSIX_C_SOURCE 200809L
#include <flightrec/client.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream-vector.h"
#include "test.h"

#define NS 1000000000u
#define MIB (UINT64_C(1) << 20)

/* Counts records and checks that times never go back. */
struct order {
    uint64_t records;
    uint64_t events;
    uint64_t last;
    uint64_t backwards;
    uint64_t data_sum;
};

static int check_order(const struct flightrec_record *r, void *arg)
{
    struct order *o = arg;

    if (r->flags & FLIGHTREC_RECORD_UNTIMED)
        return 0;
    if (r->time_ns < o->last)
        o->backwards++;
    o->last = r->time_ns;
    o->records++;
    if (r->type == FLIGHTREC_RECORD_EVENT) {
        o->events++;
        o->data_sum += r->data;
    }
    return 0;
}

static int temp_file(const struct fr_vec *v)
{
    FILE *f = tmpfile();
    int fd;
    size_t at = 0;

    CHECK(f != NULL);
    fd = dup(fileno(f));
    CHECK(fd >= 0);
    fclose(f);
    while (at < v->len) {
        ssize_t k = write(fd, v->buf + at, v->len - at);
        CHECK(k > 0);
        at += (size_t)k;
    }
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    return fd;
}

/* @a rings threads recording at once, in drains of @a chunk items per
 * ring, times interleaved across rings; every event's data is its
 * number. */
static uint64_t mixed_stream(struct fr_vec *v, uint32_t rings, uint64_t events,
                             uint32_t chunk)
{
    uint64_t *ticks = calloc(rings, sizeof(*ticks));
    uint32_t *pos = calloc(rings, sizeof(*pos));
    uint64_t n = 0, sum = 0;

    CHECK(ticks != NULL && pos != NULL);
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(v, NS, rings, 4 * chunk, 1, 0);
    for (uint32_t r = 0; r < rings; r++)
        ticks[r] = 1000 + r;
    while (n < events) {
        for (uint32_t r = 0; r < rings && n < events; r++) {
            fr_vec_flightrec_chunk(v, r, 100 + r, "worker", 0, pos[r], 0, 0);
            fr_vec_uptime(v, (uint32_t)ticks[r] & FLIGHTREC_TIME_MASK,
                          ticks[r]);
            pos[r] += 2;
            for (uint32_t i = 0; i < chunk && n < events; i++, n++) {
                ticks[r] += 1 + (n * 7919) % 97;
                fr_vec_item(v, (uint32_t)ticks[r] & FLIGHTREC_TIME_MASK,
                            FLIGHTREC_USER(r % 512), n);
                sum += n;
                pos[r]++;
            }
        }
    }
    free(ticks);
    free(pos);
    return sum;
}

static int decode(const struct fr_vec *v, int from_file, uint64_t limit,
                  struct order *o, struct flightrec_client_totals *tot,
                  char *msg, size_t msg_size)
{
    struct flightrec_client_options opt = {
        .on_record = check_order, .arg = o, .merge = 1,
        .merge_window_ns = 0, .memory_limit = limit,
    };
    flightrec_client *c;
    int rc;

    memset(o, 0, sizeof(*o));
    CHECK_EQ_I(flightrec_client_create(&c, &opt), 0);
    if (from_file) {
        int fd = temp_file(v);
        rc = flightrec_client_read_fd(c, fd);
        close(fd);
    } else {
        flightrec_client_feed(c, v->buf, v->len);
        rc = flightrec_client_finish(c);
    }
    flightrec_client_totals(c, tot);
    snprintf(msg, msg_size, "%s", flightrec_client_message(c));
    flightrec_client_destroy(c);
    return rc;
}

/* 3 M events of 8 rings (24 MB of stream) in exact order within 2 MiB:
 * exact order in one pass would hold every record (32 bytes each). */
TEST(file_exact_order_in_2_mib)
{
    struct fr_vec v;
    struct order o;
    struct flightrec_client_totals tot;
    char msg[200];
    const uint64_t events = 3000000;
    uint64_t sum = mixed_stream(&v, 8, events, 4096);

    CHECK_EQ_I(decode(&v, 1, 2 * MIB, &o, &tot, msg, sizeof msg), 0);
    CHECK_EQ_U(o.events, events);
    CHECK_EQ_U(o.data_sum, sum);
    CHECK_EQ_U(o.backwards, 0);
    CHECK_EQ_U(tot.events, events);
    CHECK_EQ_U(tot.late, 0);
    CHECK(tot.memory <= 2 * MIB);
    CHECK(tot.memory > 0);

    /* The limit bites: the same merge fed in one pass stops, saying so,
     * and delivers what it decoded in order. */
    CHECK_EQ_I(decode(&v, 0, 2 * MIB, &o, &tot, msg, sizeof msg),
               FLIGHTREC_ENOMEM);
    CHECK(strstr(msg, "memory limit of 2 MiB reached") != NULL);
    CHECK(o.events > 0 && o.events < events);
    CHECK_EQ_U(o.backwards, 0);
    fr_vec_free(&v);
}

/* 100,000 rings with one event each: memory follows what each ring holds,
 * under 1 KiB a ring (a full 8 KiB queue block per ring before). */
TEST(one_event_rings)
{
    struct fr_vec v;
    struct order o;
    struct flightrec_client_totals tot;
    char msg[200];
    const uint32_t rings = 100000;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, NS, rings, 64, 1, 0);
    for (uint32_t r = 0; r < rings; r++) {
        fr_vec_flightrec_chunk(&v, r, 1000 + r, "t", 0, 0, 0, 0);
        fr_vec_uptime(&v, 0, 10 + (rings - r));
        fr_vec_item(&v, 1, FLIGHTREC_USER(0), r);
    }
    for (int from_file = 0; from_file < 2; from_file++) {
        CHECK_EQ_I(decode(&v, from_file, 0, &o, &tot, msg, sizeof msg), 0);
        CHECK_EQ_U(o.events, rings);
        CHECK_EQ_U(o.backwards, 0);
        CHECK_EQ_U(tot.rings, rings);
        CHECK(tot.memory / rings < 1024);
    }
    fr_vec_free(&v);
}

/* Rings alone past the limit: a clear stop, not swapping. */
TEST(empty_rings_past_limit)
{
    struct fr_vec v;
    struct order o;
    struct flightrec_client_totals tot;
    char msg[200];

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, NS, 1, 64, 1, 0);
    fr_vec_flightrec_chunk(&v, 0, 1, "first", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 10);
    fr_vec_item(&v, 1, FLIGHTREC_USER(0), 7);
    /* An empty ring costs ~30 bytes (its id's map entry and pointer):
     * 2 million of them pass 16 MiB. */
    for (uint32_t r = 1; r < 2000000; r++)
        fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, r);
    for (int from_file = 0; from_file < 2; from_file++) {
        CHECK_EQ_I(decode(&v, from_file, 16 * MIB, &o, &tot, msg,
                          sizeof msg), FLIGHTREC_ENOMEM);
        CHECK(strstr(msg, "memory limit of 16 MiB reached (") != NULL);
        CHECK(strstr(msg, "byte ") == msg);
        CHECK(tot.memory <= 16 * MIB);
        CHECK(tot.rings > 100000 && tot.rings < 2000000);
        /* what came before is delivered */
        CHECK_EQ_U(o.events, 1);
        CHECK_EQ_U(o.data_sum, 7);
    }
    fr_vec_free(&v);
}

TEST_MAIN()
