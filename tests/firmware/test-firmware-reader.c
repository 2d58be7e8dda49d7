/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ring reader as a firmware builds it (FLIGHTREC_PORT_FIRMWARE, on the
 * host: src/region/ring-reader.c and stream-writer.c compiled in with it),
 * on a ring built by hand.  A firmware's flightrec_produce() takes its
 * slot (the head's exclusive store) before it writes the item; a drain
 * that interrupts it in between finds the slot as the last drain left it,
 * all zero.  The drain must stop before that slot, zero what it read, and
 * deliver the slot's item with the next drain, nothing lost.
 */
#include <flightrec/region.h>

#include "../../src/region/ring-reader.h"

#include "stream-parse.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

struct memory {
    unsigned char *bytes;
    size_t len, cap;
};

static ssize_t memory_write(void *target, const void *bytes, size_t n)
{
    struct memory *m = target;
    if (m->len + n > m->cap) {
        m->cap = (m->len + n) * 2;
        m->bytes = realloc(m->bytes, m->cap);
        CHECK(m->bytes != NULL);
    }
    memcpy(m->bytes + m->len, bytes, n);
    m->len += n;
    return (ssize_t)n;
}

enum { CONTROL_AT = 192, RING_AT = 1024, ITEMS_AT = 2048, CAPACITY = 16 };

/* A region of one discard-mode ring of 16 items, its owner set, nothing
 * written yet (all zero, as a firmware's region starts). */
static unsigned char *region_new(void)
{
    size_t size = ITEMS_AT + CAPACITY * sizeof(struct flightrec_region_item);
    unsigned char *base = aligned_alloc(64, size);
    CHECK(base != NULL);
    memset(base, 0, size);
    struct flightrec_region_header *h = (void *)base;
    h->control_offset = CONTROL_AT;
    atomic_store(&h->ring_count, 1);
    atomic_store(&h->counter_frequency, 25000000u);
    struct flightrec_region_control *c = (void *)(base + CONTROL_AT);
    c->items = CAPACITY;
    struct flightrec_region_ring *ring = (void *)(base + RING_AT);
    ring->capacity = CAPACITY;
    ring->items_offset = ITEMS_AT;
    atomic_store(&ring->state, FLIGHTREC_RING_LIVE);
    atomic_store(&ring->mode, FLIGHTREC_REGION_MODE_DISCARD);
    atomic_store(&ring->owner.tid, 1000);
    atomic_store(&ring->generation, 2);
    atomic_store(&ring->owner_generation, 2);
    return base;
}

static struct flightrec_region_ring *ring_of(unsigned char *base)
{
    return (void *)(base + RING_AT);
}

static struct flightrec_region_item *item_at(unsigned char *base,
                                             uintptr_t position)
{
    struct flightrec_region_item *items = (void *)(base + ITEMS_AT);
    return &items[position % CAPACITY];
}

/* The item of event 513 at @position, with the position as its time and
 * data. */
static void put(unsigned char *base, uintptr_t position)
{
    atomic_store(&item_at(base, position)->event,
                 FLIGHTREC_TIME_EVENT(position + 1, FLIGHTREC_USER(1)));
    atomic_store(&item_at(base, position)->data, position);
}

/* One drain of the ring, parsed (a stream of its own: the header first). */
static void drain(unsigned char *base, struct sp_stream *s)
{
    struct memory m = { 0 };
    unsigned char buf[256];
    struct frw_sink sink;
    frw_sink_init(&sink, memory_write, &m, buf, sizeof(buf));
    frw_put_header(&sink, (const void *)base,
                   (const void *)(base + CONTROL_AT));
    CHECK_EQ_I(fr_ring_drain(&sink, base, ring_of(base), NULL), 0);
    CHECK_EQ_I(frw_sink_flush(&sink), 0);
    sp_parse(s, m.bytes, m.len);
    free(m.bytes);
}

TEST(drain_stops_before_a_taken_slot_and_reads_it_next_time)
{
    unsigned char *base = region_new();
    struct flightrec_region_ring *ring = ring_of(base);
    /* Positions 0..5 published; the produce that took 3 was interrupted
     * before its item (4 and 5 came from interrupts after it). */
    for (uintptr_t p = 0; p < 6; p++)
        if (p != 3)
            put(base, p);
    atomic_store(&ring->head, 6);

    struct sp_stream s;
    drain(base, &s);
    CHECK_EQ_U(s.chunk_count, 1);
    CHECK_EQ_U(s.chunks[0].position, 0);
    CHECK_EQ_U(s.chunks[0].overflow, 0);
    CHECK_EQ_U(s.chunks[0].count, 3);
    for (size_t i = 0; i < 3; i++) {
        CHECK_EQ_U(s.chunks[0].items[i].event, FLIGHTREC_USER(1));
        CHECK_EQ_U(s.chunks[0].items[i].data, i);
    }
    sp_free(&s);
    CHECK_EQ_U(atomic_load(&ring->tail), 3);
    /* What it read is zero again, as before the first lap. */
    for (uintptr_t p = 0; p < 3; p++)
        CHECK_EQ_U(atomic_load(&item_at(base, p)->event), 0);

    /* The interrupted produce goes on: its item, then the next drain. */
    put(base, 3);
    drain(base, &s);
    CHECK_EQ_U(s.chunk_count, 1);
    CHECK_EQ_U(s.chunks[0].position, 3);
    CHECK_EQ_U(s.chunks[0].overflow, 0);
    CHECK_EQ_U(s.chunks[0].count, 3);
    for (size_t i = 0; i < 3; i++)
        CHECK_EQ_U(s.chunks[0].items[i].data, 3 + i);
    sp_free(&s);
    CHECK_EQ_U(atomic_load(&ring->tail), 6);
    for (uintptr_t p = 0; p < 6; p++)
        CHECK_EQ_U(atomic_load(&item_at(base, p)->event), 0);
    free(base);
}

TEST(drain_of_a_later_lap_finds_only_zero_ahead)
{
    unsigned char *base = region_new();
    struct flightrec_region_ring *ring = ring_of(base);
    /* A lap and a half: each drain reads what is there, so that every
     * slot ahead of the head is one a drain read and zeroed. */
    uintptr_t head = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 8; i++)
            put(base, head++);
        atomic_store(&ring->head, head);
        struct sp_stream s;
        drain(base, &s);
        CHECK_EQ_U(s.chunk_count, 1);
        CHECK_EQ_U(s.chunks[0].position, head - 8);
        CHECK_EQ_U(s.chunks[0].count, 8);
        CHECK_EQ_U(s.chunks[0].items[7].data, head - 1);
        sp_free(&s);
    }
    for (uintptr_t p = 0; p < CAPACITY; p++)
        CHECK_EQ_U(atomic_load(&item_at(base, p)->event), 0);
    /* A slot taken on the second lap and not yet written reads as zero:
     * the drain stops there instead of reading the first lap's item. */
    atomic_store(&ring->head, head + 1);
    struct sp_stream s;
    drain(base, &s);
    CHECK_EQ_U(s.chunk_count, 0);
    sp_free(&s);
    CHECK_EQ_U(atomic_load(&ring->tail), head);
    free(base);
}

TEST_MAIN()
