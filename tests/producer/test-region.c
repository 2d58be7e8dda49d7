/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ring region: its header describes it, a copy at another address
 * reads the same, readers refuse what they do not understand with a
 * message, and the ring reader works on a region built by hand.
 */
#include "producer-test.h"

#include <flightrec/region.h>

#include "../../src/region/region-check.h"
#include "../../src/region/ring-reader.h"
#include "../../src/region/session.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The process's region (the static library exposes it to tests). */
extern unsigned char *flightrec__region_base;

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

static size_t used_bytes(void)
{
    const struct flightrec_region_header *h = (const void *)flightrec__region_base;
    return (size_t)atomic_load(&h->used);
}

/* A copy of the process's region at another address. */
static unsigned char *region_copy(size_t *size)
{
    *size = used_bytes();
    unsigned char *copy = aligned_alloc(64, (*size + 63) & ~(size_t)63);
    CHECK(copy != NULL);
    memcpy(copy, flightrec__region_base, *size);
    return copy;
}

/* Dumps every ring of the region image at @base through the ring reader
 * and parses the stream. */
static void dump_image(const unsigned char *base, struct sp_stream *s)
{
    const struct flightrec_region_header *h = (const void *)base;
    struct memory m = { 0 };
    unsigned char buf[256];
    struct frw_sink sink;
    frw_sink_init(&sink, memory_write, &m, buf, sizeof(buf));
    frw_put_header(&sink, h, (const void *)(base + h->control_offset));
    frw_put_event_names(&sink, (const void *)(base + h->names_offset), NULL);
    for (uint64_t at = atomic_load(&h->ring_list); at != 0;) {
        const struct flightrec_region_ring *ring = (const void *)(base + at);
        if (atomic_load(&ring->state) != FLIGHTREC_RING_FREE)
            CHECK_EQ_I(fr_ring_dump(&sink, base, ring, NULL), 0);
        at = atomic_load(&ring->next_offset);
    }
    CHECK_EQ_I(frw_sink_flush(&sink), 0);
    sp_parse(s, m.bytes, m.len);
    free(m.bytes);
}

/* A fork child's control page is its own: what it changes does not reach
 * its parent, whose hot page is the session file's. */
TEST(fork_child_controls_only_itself)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    const struct flightrec_region_header *h =
        (const void *)flightrec__region_base;
    CHECK_EQ_U(h->flags & FLIGHTREC_REGION_HOT_SHARED,
               FLIGHTREC_REGION_HOT_SHARED);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        flightrec_filter_set(FLIGHTREC_USER(7), 0);
        flightrec_stop();
        _exit(flightrec_event_enabled(FLIGHTREC_USER(1)) == 0 ? 0 : 3);
    }
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_I(flightrec_event_enabled(FLIGHTREC_USER(7)), 1);
    CHECK_EQ_I(flightrec_event_enabled(FLIGHTREC_USER(1)), 1);
    CHECK_EQ_I(flightrec_is_running(), 1);
}

/* A child forked after the parent drained (and so holds the session's
 * consumer claim) drains its own copy: the claim copied with it was the
 * parent's, not the child's to respect.  @shared: a session file, or
 * private memory (copy-on-write). */
static void fork_child_drains(int shared)
{
    if (!shared)
        setenv("FLIGHTREC_SHM", "0", 1);
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    const struct flightrec_region_header *h =
        (const void *)flightrec__region_base;
    CHECK_EQ_U(h->flags & FLIGHTREC_REGION_HOT_SHARED,
               shared ? FLIGHTREC_REGION_HOT_SHARED : 0);
    FILE *parent_file = tmpfile();
    CHECK(parent_file != NULL);
    CHECK_EQ_I(flightrec_drain(fileno(parent_file)), 0);
    const struct flightrec_region_control *c =
        (const void *)(flightrec__region_base + h->control_offset);
    CHECK_EQ_I(atomic_load(&c->consumer_pid), getpid());
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        flightrec_produce(FLIGHTREC_USER(2), 2);
        FILE *child_file = tmpfile();
        int rc = child_file != NULL ? flightrec_drain(fileno(child_file)) : 1;
        _exit(rc == 0 ? 0 : rc == FLIGHTREC_EBUSY_CONFIG ? 4 : 3);
    }
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    /* The parent's claim is untouched. */
    CHECK_EQ_I(atomic_load(&c->consumer_pid), getpid());
    CHECK_EQ_I(flightrec_drain(fileno(parent_file)), 0);
    fclose(parent_file);
}

TEST(fork_child_drains_after_the_parent_did)
{
    fork_child_drains(1);
}

TEST(fork_child_drains_after_the_parent_did_private)
{
    fork_child_drains(0);
}

/* Threads that start recording (their rings grow the session file) while
 * another thread forks: the child's snapshot is taken under the registry
 * lock, never past its end. */
static _Atomic int spawning;

/* 150 forks crashed the parent in 2 of 3 runs before the fix; under
 * qemu-user each fork of a process with busy threads costs about a
 * second, so emulated targets make fewer. */
#if defined(FLIGHTREC_TEST_EMULATED)
#define FORKS_WHILE_ATTACHING 30
#else
#define FORKS_WHILE_ATTACHING 150
#endif

static void *record_once(void *arg)
{
    flightrec_produce(FLIGHTREC_USER(3), (uintptr_t)arg);
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    for (uintptr_t i = 0; atomic_load(&spawning); i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, record_once, (void *)i) == 0)
            pthread_join(t, NULL);
    }
    return NULL;
}

TEST(fork_while_threads_attach)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.items_per_ring = 16;
    config.retained_rings = 0;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    atomic_store(&spawning, 1);
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        CHECK_EQ_I(pthread_create(&threads[i], NULL, spawner, NULL), 0);
    for (int k = 0; k < FORKS_WHILE_ATTACHING; k++) {
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            flightrec_produce(FLIGHTREC_USER(2), 2);
            _exit(0);
        }
        int status;
        CHECK_EQ_I(waitpid(child, &status, 0), child);
        CHECK(WIFEXITED(status));
        CHECK_EQ_I(WEXITSTATUS(status), 0);
    }
    atomic_store(&spawning, 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ_I(pthread_join(threads[i], NULL), 0);
}

TEST(header_describes_the_region)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    const struct flightrec_region_header *h = (const void *)flightrec__region_base;
    CHECK_EQ_U(h->magic, FLIGHTREC_REGION_MAGIC);
    CHECK_EQ_U(h->layout_version, FLIGHTREC_REGION_LAYOUT_VERSION);
    CHECK_EQ_U(h->word_size, sizeof(uintptr_t));
    const uint16_t probe = 1;
    CHECK_EQ_U(h->byte_order, *(const unsigned char *)&probe == 1
                                  ? FLIGHTREC_REGION_LITTLE_ENDIAN
                                  : FLIGHTREC_REGION_BIG_ENDIAN);
    CHECK_EQ_U(h->header_size, 192);
    CHECK_EQ_U(h->control_offset, 192);
    CHECK_EQ_U(h->names_offset, 192 + 704);
    /* The hot page has its page, and it is the one the hot path reads. */
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    CHECK_EQ_U(h->hot_offset % page, 0);
    CHECK_EQ_U(h->rings_offset, h->hot_offset + page);
    /* Shared words are 32-bit exactly where this CPU has no lock-free
     * 64-bit atomics. */
    CHECK_EQ_U(h->flags, FLIGHTREC_REGION_HOT_SHARED |
                             (__atomic_always_lock_free(8, 0)
                                  ? 0u
                                  : FLIGHTREC_REGION_WORDS_32));
    const struct flightrec_region_hot *hot =
        (const void *)(flightrec__region_base + h->hot_offset);
    CHECK((const void *)hot != (const void *)&flightrec__control_page);
    flightrec_filter_set(FLIGHTREC_USER(7), 0);
    CHECK_EQ_U(atomic_load(&hot->filter[FLIGHTREC_USER(7) / 32]) >>
                   (FLIGHTREC_USER(7) % 32) & 1u, 0);
    /* A store into the file's page is seen by the hot path: one page. */
    atomic_fetch_or(&((struct flightrec_region_hot *)(void *)hot)
                         ->filter[FLIGHTREC_USER(7) / 32],
                    1u << (FLIGHTREC_USER(7) % 32));
    CHECK_EQ_I(flightrec_event_enabled(FLIGHTREC_USER(7)), 1);
    flightrec_filter_set(FLIGHTREC_USER(7), 1);
    CHECK_EQ_U(h->library_version, FLIGHTREC_VERSION_NUMBER);
    CHECK_EQ_I(h->process_id, getpid());
    CHECK_EQ_U(atomic_load(&h->ring_count), 2);
    const struct flightrec_region_control *c =
        (const void *)(flightrec__region_base + h->control_offset);
    CHECK_EQ_U(c->items, 64);
    CHECK_EQ_U(atomic_load(&c->mode), FLIGHTREC_MODE_FLIGHT);
    CHECK_EQ_U(atomic_load(&c->running), 1);
    uint32_t before = atomic_load(&c->generation);
    flightrec_filter_set(FLIGHTREC_USER(5), 0);
    CHECK(atomic_load(&c->generation) != before);
    CHECK_EQ_U(atomic_load(&c->filter[FLIGHTREC_USER(5) / 32]) &
                   (1u << (FLIGHTREC_USER(5) % 32)),
               0);
    flightrec_stop();
    CHECK_EQ_U(atomic_load(&c->running), 0);
    flightrec_start();
    char message[200];
    CHECK_EQ_I(fr_region_check(flightrec__region_base, used_bytes(), message,
                               sizeof(message)),
               0);
}

/* The 8 bytes at @offset of @base as one number of this host's order. */
static uint64_t eight_bytes_at(const unsigned char *base, size_t offset)
{
    uint64_t value;
    memcpy(&value, base + offset, sizeof(value));
    return value;
}

/* Whatever the width of the shared words, their 8 bytes read as 64 bits
 * say the same (docs/format.md: the layout does not change). */
TEST(shared_words_read_the_same_as_64_bits)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    const unsigned char *base = flightrec__region_base;
    const struct flightrec_region_header *h = (const void *)base;
    uint64_t used = atomic_load(&h->used);
    uint64_t first = atomic_load(&h->ring_list);
    CHECK(used > h->rings_offset);
    CHECK(first >= h->rings_offset && first < used);
    CHECK_EQ_U(eight_bytes_at(base, 32), used);
    CHECK_EQ_U(eight_bytes_at(base, 64), first);
    CHECK_EQ_U(eight_bytes_at(base, 96), atomic_load(&h->counter_frequency));
    CHECK_EQ_U(eight_bytes_at(base, 104), 0); /* nothing lost */
    CHECK_EQ_U(atomic_load(&h->lost_without_ring), 0);
    const struct flightrec_region_ring *ring = (const void *)(base + first);
    size_t next_at = first + offsetof(struct flightrec_region_ring, bytes) + 8;
    CHECK_EQ_U(eight_bytes_at(base, next_at),
               atomic_load(&ring->next_offset));
    /* The thread's ring pair: the newer links to its partner. */
    CHECK_EQ_U(atomic_load(&ring->next_offset), ring->partner_offset);
}

/* The claim of process @pid started at @start, as docs/format.md spells
 * it for each width of the shared words. */
static uint64_t expected_claim(int32_t pid, uint64_t start)
{
    if (FLIGHTREC_REGION_NARROW)
        return (uint64_t)(uint32_t)pid << 10 | (start & 1023u);
    return (uint64_t)(uint32_t)pid << 42 | (start & (((uint64_t)1 << 42) - 1));
}

TEST(claims_hold_the_pid_and_start_time)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    unsigned char *base = flightrec__region_base;
    const struct flightrec_region_header *h = (const void *)base;
    struct flightrec_region_control *c = (void *)(base + h->control_offset);
    int32_t self = (int32_t)getpid(), holder = 0;
    uint64_t start = fr_process_start_time(self);
    CHECK(start != 0);
    CHECK_EQ_I(fr_consumer_claim(c, self, start, &holder), 0);
    CHECK_EQ_U(atomic_load(&c->consumer_claim), expected_claim(self, start));
    CHECK_EQ_U(eight_bytes_at(base, h->control_offset + 32),
               expected_claim(self, start));
    CHECK_EQ_I(atomic_load(&c->consumer_pid), self);
    fr_consumer_release(c, self);
    CHECK_EQ_U(atomic_load(&c->consumer_claim), 0);
    CHECK_EQ_I(atomic_load(&c->consumer_pid), 0);

    /* A lock left by this pid with another start time is a dead
     * holder's: taken over, then given back. */
    atomic_store(&c->lock, expected_claim(self, start + 1));
    CHECK_EQ_I(fr_control_lock(&c->lock, self, start, &holder), 0);
    CHECK_EQ_U(eight_bytes_at(base, h->control_offset + 40),
               expected_claim(self, start));
    fr_control_unlock(&c->lock, self, start);
    CHECK_EQ_U(atomic_load(&c->lock), 0);
}

/* No pointers inside: a copy elsewhere reads exactly as the original. */
TEST(copy_at_another_address_reads_the_same)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    flightrec_event_set_name(FLIGHTREC_USER(3), "request");
    for (int i = 0; i < 40; i++)
        flightrec_produce(FLIGHTREC_USER(3), (uintptr_t)i);
    size_t size;
    unsigned char *copy = region_copy(&size);
    char message[200];
    CHECK_EQ_I(fr_region_check(copy, size, message, sizeof(message)), 0);

    struct sp_stream original, copied;
    capture(&original, 0);
    dump_image(copy, &copied);
    CHECK_EQ_U(copied.version, FLIGHTREC_STREAM_VERSION);
    CHECK_EQ_S(copied.event_names[FLIGHTREC_USER(3)], "request");
    const struct sp_chunk *a = chunk_of(&original, 0);
    const struct sp_chunk *b = chunk_of(&copied, 0);
    CHECK(a != NULL && b != NULL);
    CHECK_EQ_U(b->count, a->count);
    CHECK_EQ_U(b->position, a->position);
    CHECK_EQ_U(b->overflow, a->overflow);
    for (size_t i = 0; i < a->count; i++) {
        CHECK_EQ_U(b->items[i].event, a->items[i].event);
        CHECK_EQ_U(b->items[i].data, a->items[i].data);
    }
    /* The last 8 positions are the reader's red zone: 56 held. */
    CHECK_EQ_U(b->items[b->count - 1].data, 39);
    sp_free(&original);
    sp_free(&copied);
    free(copy);
}

static void expect_refusal(unsigned char *image, size_t size,
                           const char *expected)
{
    char message[300];
    CHECK_EQ_I(fr_region_check(image, size, message, sizeof(message)), -1);
    CHECK_EQ_S(message, expected);
}

TEST(foreign_regions_are_refused_with_a_message)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    size_t size;
    unsigned char *copy = region_copy(&size);
    struct flightrec_region_header *h = (void *)copy;
    char ours[32];
    snprintf(ours, sizeof(ours), "%u.%u.%u", FLIGHTREC_VERSION_MAJOR,
             FLIGHTREC_VERSION_MINOR, FLIGHTREC_VERSION_PATCH);
    char expected[300];

    h->layout_version = 7;
    h->library_version = (3u << 16) | (1u << 8) | 4u;
    snprintf(expected, sizeof(expected),
             "region layout version 7 (written by flightrec 3.1.4); this "
             "reader (flightrec %s) reads layout version 4",
             ours);
    expect_refusal(copy, size, expected);
    /* The layout before the hot page (flightrec 0.2.0 sessions of
     * earlier builds) is refused too, not misread. */
    h->layout_version = 1;
    h->library_version = (0u << 16) | (2u << 8) | 0u;
    snprintf(expected, sizeof(expected),
             "region layout version 1 (written by flightrec 0.2.0); this "
             "reader (flightrec %s) reads layout version 4",
             ours);
    expect_refusal(copy, size, expected);
    /* Nor the one before the remembered filter specs. */
    h->layout_version = 2;
    snprintf(expected, sizeof(expected),
             "region layout version 2 (written by flightrec 0.2.0); this "
             "reader (flightrec %s) reads layout version 4",
             ours);
    expect_refusal(copy, size, expected);
    /* Nor the one whose remembered specs had no length word. */
    h->layout_version = 3;
    snprintf(expected, sizeof(expected),
             "region layout version 3 (written by flightrec 0.2.0); this "
             "reader (flightrec %s) reads layout version 4",
             ours);
    expect_refusal(copy, size, expected);
    h->layout_version = FLIGHTREC_REGION_LAYOUT_VERSION;
    h->library_version = FLIGHTREC_VERSION_NUMBER;

    h->word_size = sizeof(uintptr_t) == 8 ? 4 : 8;
    snprintf(expected, sizeof(expected),
             "region of a %u-bit process (flightrec %s); this reader "
             "(flightrec %s) is %u-bit",
             8u * h->word_size, ours, ours, (unsigned)(8 * sizeof(uintptr_t)));
    expect_refusal(copy, size, expected);
    h->word_size = sizeof(uintptr_t);

    /* The other width of shared words: claims and atomics that would not
     * exclude the writer's. */
    h->flags ^= FLIGHTREC_REGION_WORDS_32;
    snprintf(expected, sizeof(expected),
             "byte 124: region with %s-bit shared words (flightrec %s); "
             "this reader (flightrec %s) uses %s-bit ones",
             FLIGHTREC_REGION_NARROW ? "64" : "32", ours, ours,
             FLIGHTREC_REGION_NARROW ? "32" : "64");
    expect_refusal(copy, size, expected);
    h->flags ^= FLIGHTREC_REGION_WORDS_32;

    h->magic = 0x46525247u; /* the magic byte-swapped */
    expect_refusal(copy, size,
                   "region written with the other byte order; this reader "
                   "reads its own host's regions only");
    h->magic = 0x12345678u;
    expect_refusal(copy, size, "byte 0: not a flightrec region (magic "
                               "0x12345678)");
    h->magic = FLIGHTREC_REGION_MAGIC;

    snprintf(expected, sizeof(expected),
             "region truncated: %zu bytes in use, %zu present", size,
             size - 1);
    expect_refusal(copy, size - 1, expected);
    expect_refusal(copy, 100,
                   "region of 100 bytes: too short for its 192-byte header");

    /* A ring list that points outside, and one that loops. */
    uint64_t first = atomic_load(&h->ring_list);
    atomic_store(&h->ring_list, (uint64_t)size + 64);
    snprintf(expected, sizeof(expected), "byte %zu: ring outside the region",
             size + 64);
    expect_refusal(copy, size, expected);
    atomic_store(&h->ring_list, first);
    struct flightrec_region_ring *ring = (void *)(copy + first);
    uint64_t next = atomic_load(&ring->next_offset);
    atomic_store(&ring->next_offset, first);
    expect_refusal(copy, size, "ring list longer than its 2 rings (a loop?)");
    atomic_store(&ring->next_offset, next);
    ring->capacity = 100;
    snprintf(expected, sizeof(expected),
             "byte %llu: ring capacity 100 is not a power of two from 16",
             (unsigned long long)first);
    expect_refusal(copy, size, expected);
    free(copy);
}

/* A region laid out by hand, as another process or firmware would: the
 * ring reader turns it into the chunk the format document describes. */
TEST(ring_reader_reads_a_region_built_by_hand)
{
    const size_t hot_at = 192 + 704 + sizeof(struct flightrec_region_names);
    const size_t ring_at = hot_at + sizeof(struct flightrec_region_hot);
    const size_t ring_at_aligned = (ring_at + 63) & ~(size_t)63;
    const size_t items_at = ring_at_aligned + 448;
    const size_t size = items_at + 16 * sizeof(struct flightrec_region_item);
    unsigned char *base = aligned_alloc(64, (size + 63) & ~(size_t)63);
    CHECK(base != NULL);
    memset(base, 0, size);
    struct flightrec_region_header *h = (void *)base;
    h->magic = FLIGHTREC_REGION_MAGIC;
    h->layout_version = FLIGHTREC_REGION_LAYOUT_VERSION;
    h->word_size = sizeof(uintptr_t);
    const uint16_t probe = 1;
    h->byte_order = *(const unsigned char *)&probe == 1 ? 1 : 2;
    h->header_size = 192;
    h->ring_size = sizeof(struct flightrec_region_ring);
    h->item_size = sizeof(struct flightrec_region_item);
    h->region_size = size;
    atomic_store(&h->used, size);
    h->control_offset = 192;
    h->names_offset = 192 + 704;
    h->hot_offset = hot_at;
    h->rings_offset = ring_at_aligned;
    atomic_store(&h->ring_list, ring_at_aligned);
    atomic_store(&h->ring_count, 1);
    h->process_id = 4242;
    atomic_store(&h->counter_frequency, 1000000000u);
    h->flags = FLIGHTREC_REGION_NARROW ? FLIGHTREC_REGION_WORDS_32 : 0;
    struct flightrec_region_control *c = (void *)(base + 192);
    c->items = 16;

    struct flightrec_region_ring *ring = (void *)(base + ring_at_aligned);
    ring->capacity = 16;
    ring->items_offset = items_at;
    ring->id = 0;
    atomic_store(&ring->state, FLIGHTREC_RING_LIVE);
    atomic_store(&ring->owner.tid, 77);
    atomic_store(&ring->owner.name[0], 0x6b726f77u); /* "work" */
    atomic_store(&ring->generation, 2);
    atomic_store(&ring->owner_generation, 2);
    /* The owner's items: 18 events, uptime pairs at positions 0 and 12.
     * The reader keeps the 8 positions a pending record may be writing
     * (head - capacity .. + 8) out: it reads positions 14..21. */
    struct flightrec_region_item *items = (void *)(base + items_at);
    uintptr_t position = 0, events = 0;
    for (int i = 0; i < 22; i++, position++) {
        uint32_t id;
        uintptr_t data;
        if (i == 0 || i == 12) {
            id = FLIGHTREC_EV_UPTIME_LOW;
            data = 0;
        } else if (i == 1 || i == 13) {
            id = FLIGHTREC_EV_UPTIME_HIGH;
            data = 0;
        } else {
            id = FLIGHTREC_USER(1);
            data = events++;
        }
        atomic_store(&items[position & 15].event,
                     FLIGHTREC_TIME_EVENT(position, id));
        atomic_store(&items[position & 15].data, data);
    }
    atomic_store(&ring->head, position);
    /* The owner's count of its own items: slot 0 in force (sync_seq 0). */
    atomic_store(&ring->recorder[0].total, 4);
    atomic_store(&ring->recorder[0].last_at, 12);
    atomic_store(&ring->recorder[0].last_count, 2);

    char message[200];
    CHECK_EQ_I(fr_region_check(base, size, message, sizeof(message)), 0);
    struct sp_stream s;
    dump_image(base, &s);
    CHECK_EQ_U(s.pid, 4242);
    CHECK_EQ_U(s.chunk_count, 1);
    const struct sp_chunk *chunk = &s.chunks[0];
    CHECK_EQ_U(chunk->tid, 77);
    CHECK_EQ_S(chunk->name, "work");
    CHECK_EQ_U(chunk->count, 8);           /* positions 14..21 */
    /* Before position 14: two pairs and events 0..9.  The chunk starts at
     * the owner's event 10, and 10 events (not 14 items) are lost. */
    CHECK_EQ_U(chunk->position, 10);
    CHECK_EQ_U(chunk->overflow, 10);
    for (size_t i = 0; i < 8; i++) {
        CHECK_EQ_U(chunk->items[i].event, FLIGHTREC_USER(1));
        CHECK_EQ_U(chunk->items[i].data, 10 + i);
    }
    sp_free(&s);
    free(base);
}

/* One consumer at a time: while another live process holds the claim (as
 * `flightrec stream` does), this process's own drain is refused; once the
 * holder is gone, the drain takes the claim over. */
TEST(drain_refused_while_another_consumer_holds_the_claim)
{
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    const struct flightrec_region_header *h = (const void *)flightrec__region_base;
    struct flightrec_region_control *c =
        (void *)(flightrec__region_base + h->control_offset);
    int32_t holder = 0;
    pid_t parent = getppid();
    CHECK_EQ_I(fr_consumer_claim(c, (int32_t)parent,
                                 fr_process_start_time((int32_t)parent),
                                 &holder),
               0);
    FILE *file = tmpfile();
    CHECK_EQ_I(flightrec_drain(fileno(file)), -EBUSY);
    /* A holder that is gone (this pid with another start time). */
    atomic_store(&c->consumer_claim,
                 expected_claim((int32_t)getpid(),
                                fr_process_start_time((int32_t)getpid()) + 1));
    CHECK_EQ_I(flightrec_drain(fileno(file)), 0);
    CHECK_EQ_I(fr_consumer_claim(c, (int32_t)parent,
                                 fr_process_start_time((int32_t)parent),
                                 &holder),
               -1);
    CHECK_EQ_I(holder, getpid());
    fclose(file);
}

/* The fill `flightrec stream` paces itself by: unread items between the
 * reader's tail and the head, in 1/1024 of the capacity. */
TEST(ring_fill_counts_the_unread_items)
{
    struct flightrec_region_ring *ring = aligned_alloc(64, 1024);
    CHECK(ring != NULL);
    memset(ring, 0, 1024);
    ring->capacity = 4096;
    atomic_store(&ring->head, 1024);
    CHECK_EQ_I(fr_ring_fill(ring), 256);
    atomic_store(&ring->tail, 1000);
    CHECK_EQ_I(fr_ring_fill(ring), 6); /* 24 items: rounded down */
    atomic_store(&ring->head, 1000);
    CHECK_EQ_I(fr_ring_fill(ring), 0);
    atomic_store(&ring->head, 1000 + 4096);
    CHECK_EQ_I(fr_ring_fill(ring), 1024);
    atomic_store(&ring->head, 1000 + 3 * 4096); /* overtaken */
    CHECK_EQ_I(fr_ring_fill(ring), 1024);
    /* Positions wrap around the word. */
    atomic_store(&ring->tail, UINTPTR_MAX - 99);
    atomic_store(&ring->head, 924);
    CHECK_EQ_I(fr_ring_fill(ring), 256);
    ring->capacity = 0; /* damaged: read as full, never a division by 0 */
    CHECK_EQ_I(fr_ring_fill(ring), 1024);
    free(ring);
}

/* The pause between passes: a pass aims to find the fullest ring an
 * eighth full; shortened at once, lengthened at most twofold a pass,
 * between 100 us and 10 ms.  A fixed 10 ms pause let two threads at
 * 10 M events/s overrun 65,536-item rings between two passes. */
TEST(stream_pause_follows_the_fill)
{
    const uint64_t ms = 1000000;
    /* Rings full after 10 ms: the next pass comes after 1.25 ms. */
    CHECK_EQ_U(fr_poll_pause(10 * ms, 10 * ms, 1024), 1250000);
    /* An eighth full: the same pause again. */
    CHECK_EQ_U(fr_poll_pause(2 * ms, 2 * ms, 128), 2 * ms);
    /* A quarter full after 1.6 ms: half of it. */
    CHECK_EQ_U(fr_poll_pause(1600000, 1600000, 256), 800000);
    /* Little in the rings: at most twice as long. */
    CHECK_EQ_U(fr_poll_pause(1 * ms, 1 * ms, 32), 2 * ms);
    CHECK_EQ_U(fr_poll_pause(1 * ms, 1 * ms, 64), 2 * ms);
    CHECK_EQ_U(fr_poll_pause(1 * ms, 1 * ms, 0), 2 * ms);
    /* Idle: back to 10 ms, never more. */
    CHECK_EQ_U(fr_poll_pause(8 * ms, 8 * ms, 0), 10 * ms);
    CHECK_EQ_U(fr_poll_pause(10 * ms, 10 * ms, 0), 10 * ms);
    CHECK_EQ_U(fr_poll_pause(10 * ms, 10 * ms, 1), 10 * ms);
    /* Never below 100 us, however fast the rings fill. */
    CHECK_EQ_U(fr_poll_pause(200000, 100000, 1024), 100000);
    CHECK_EQ_U(fr_poll_pause(100000, 0, 1024), 100000);
}

TEST_MAIN(TEST_ENTRY(header_describes_the_region),
          TEST_ENTRY(copy_at_another_address_reads_the_same),
          TEST_ENTRY(foreign_regions_are_refused_with_a_message),
          TEST_ENTRY(ring_reader_reads_a_region_built_by_hand))
