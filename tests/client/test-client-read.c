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

/* Records as delivered, in order. */
struct seen {
    struct {
        uint32_t ring, type;
        uint64_t time, data;
    } *r;
    size_t n, cap;
    int by_ring;
    flightrec_client *c;
};

static int keep(const struct flightrec_record *r, void *arg)
{
    struct seen *s = arg;

    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->r = realloc(s->r, s->cap * sizeof(*s->r));
        CHECK(s->r != NULL);
    }
    s->r[s->n].ring = r->ring;
    s->r[s->n].type = r->type;
    s->r[s->n].time = r->time_ns;
    s->r[s->n].data = r->type == FLIGHTREC_RECORD_LOSS ? r->loss_count
                                                        : r->data;
    s->n++;
    s->by_ring |= flightrec_client_info(s->c)->by_ring;
    return 0;
}

static void decode_as(const struct fr_vec *v, int merge, int from_file,
                      struct seen *s)
{
    struct flightrec_client_options opt = {
        .on_record = keep, .arg = s, .merge = merge,
    };

    memset(s, 0, sizeof(*s));
    CHECK_EQ_I(flightrec_client_create(&s->c, &opt), 0);
    if (from_file) {
        int fd = temp_file(v);
        CHECK_EQ_I(flightrec_client_read_fd(s->c, fd), 0);
        close(fd);
    } else {
        CHECK_EQ_I(flightrec_client_feed(s->c, v->buf, v->len), 0);
        CHECK_EQ_I(flightrec_client_finish(s->c), 0);
    }
    flightrec_client_destroy(s->c);
}

/* Whether the records of @a got are those of @a want ring for ring, in
 * each ring's order. */
static void check_same_per_ring(const struct seen *got,
                                const struct seen *want, uint32_t rings)
{
    CHECK_EQ_U(got->n, want->n);
    for (uint32_t ring = 0; ring < rings; ring++) {
        size_t i = 0, j = 0, count = 0;
        for (;;) {
            while (i < got->n && got->r[i].ring != ring)
                i++;
            while (j < want->n && want->r[j].ring != ring)
                j++;
            if (i == got->n || j == want->n)
                break;
            CHECK_EQ_U(got->r[i].type, want->r[j].type);
            CHECK_EQ_U(got->r[i].time, want->r[j].time);
            CHECK_EQ_U(got->r[i].data, want->r[j].data);
            i++, j++, count++;
        }
        CHECK(i == got->n && j == want->n);
        CHECK(count > 0);
    }
}

/* FLIGHTREC_MERGE_BY_RING on a file: each ring's records in one run, rings
 * in order of first appearance, each exactly as the time order gives it
 * (losses too); fed through flightrec_client_feed(), time order. */
TEST(by_ring_order)
{
    struct fr_vec v;
    struct seen timed, by_ring, fed;
    const uint32_t rings = 8;

    mixed_stream(&v, rings, 20000, 50);
    /* A loss in ring 3: its next chunk counts 5 items overwritten (it
     * wrote 2,500 events and 50 sync pairs). */
    fr_vec_flightrec_chunk(&v, 3, 103, "worker", 0, 2600 + 5, 5, 0);
    fr_vec_uptime(&v, 900000, 900000);
    fr_vec_item(&v, 900001, FLIGHTREC_USER(3), 77);
    /* Ring 1's last chunk: a loss and nothing after it to time it by (it
     * takes the ring's last time), and an event that stays untimed. */
    fr_vec_flightrec_chunk(&v, 1, 101, "worker", 0, 2600 + 7, 7, 0);
    fr_vec_item(&v, 5, FLIGHTREC_USER(1), 88);

    decode_as(&v, 1, 1, &timed);
    decode_as(&v, FLIGHTREC_MERGE_BY_RING, 1, &by_ring);
    decode_as(&v, FLIGHTREC_MERGE_BY_RING, 0, &fed);
    CHECK_EQ_U(timed.n, 20000 + 4);
    CHECK_EQ_U(timed.r[20000].type, FLIGHTREC_RECORD_LOSS);
    CHECK_EQ_U(timed.r[20000].data, 5);
    CHECK_EQ_U(timed.r[20001].data, 77);
    CHECK_EQ_U(timed.r[20002].type, FLIGHTREC_RECORD_LOSS);
    CHECK_EQ_U(timed.r[20002].ring, 1);
    CHECK_EQ_U(timed.r[20002].data, 7);
    CHECK_EQ_U(timed.r[20003].ring, 1);
    CHECK_EQ_U(timed.r[20003].data, 88);
    CHECK_EQ_I(timed.by_ring, 0);
    CHECK_EQ_I(by_ring.by_ring, 1);
    CHECK_EQ_I(fed.by_ring, 0);
    /* ring by ring: 0, 1, ... 7 */
    uint32_t runs = 1;
    for (size_t i = 1; i < by_ring.n; i++) {
        CHECK(by_ring.r[i].ring >= by_ring.r[i - 1].ring);
        runs += by_ring.r[i].ring != by_ring.r[i - 1].ring;
    }
    CHECK_EQ_U(runs, rings);
    CHECK_EQ_U(by_ring.r[0].ring, 0);
    check_same_per_ring(&by_ring, &timed, rings);
    /* fed: the time order itself */
    CHECK_EQ_U(fed.n, timed.n);
    for (size_t i = 0; i < fed.n; i++) {
        CHECK_EQ_U(fed.r[i].ring, timed.r[i].ring);
        CHECK_EQ_U(fed.r[i].time, timed.r[i].time);
    }
    free(timed.r);
    free(by_ring.r);
    free(fed.r);
    fr_vec_free(&v);
}

/* A processor ring holds other rings' threads: the stream comes in time
 * order. */
TEST(by_ring_not_with_processor_rings)
{
    struct fr_vec v;
    struct seen timed, asked;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, NS, 2, 64, 1, 0);
    fr_vec_flightrec_chunk(&v, 0, 100, "main", 0, 0, 0, 0);
    fr_vec_uptime(&v, 10, 10);
    fr_vec_item(&v, 20, FLIGHTREC_USER(0), 1);
    fr_vec_item(&v, 40, FLIGHTREC_USER(0), 3);
    fr_vec_flightrec_chunk(&v, FLIGHTREC_CPU_RING_BASE, -1, "",
                           FLIGHTREC_RING_CONTEXT_CPU, 0, 0, 0);
    fr_vec_uptime(&v, 10, 10);
    fr_vec_item(&v, 30, FLIGHTREC_EV_THREAD_SWITCH_IN, 100);
    fr_vec_item(&v, 50, FLIGHTREC_EV_THREAD_SWITCH_OUT, 100);

    decode_as(&v, 1, 1, &timed);
    decode_as(&v, FLIGHTREC_MERGE_BY_RING, 1, &asked);
    CHECK_EQ_I(asked.by_ring, 0);
    CHECK_EQ_U(asked.n, 4);
    CHECK_EQ_U(timed.n, 4);
    static const uint64_t times[] = { 20, 30, 40, 50 };
    for (size_t i = 0; i < 4; i++) {
        CHECK_EQ_U(asked.r[i].time, times[i]);
        CHECK_EQ_U(timed.r[i].time, times[i]);
    }
    free(timed.r);
    free(asked.r);
    fr_vec_free(&v);
}

TEST_MAIN()
