/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The context-switch drain of `flightrec record` (src/preload/switches.c,
 * compiled in here so that the test can lay out perf rings itself): where
 * a perf loss goes, the perf clock's mapping read under its lock and
 * followed when it changes, items a failed write cut finished first, and,
 * on the real kernel, a forked child that never writes into its parent's
 * perf rings and that says when it cannot record its own switches.
 */
#include "../../src/preload/switches.c"

#include "test.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>

/*=====   A perf ring laid out by the test   =====*/

#define FAKE_DATA (1u << 16)

static _Alignas(4096) unsigned char fake_page[4096 + FAKE_DATA];

static struct perf_event_mmap_page *fake(void)
{
    return (struct perf_event_mmap_page *)(void *)fake_page;
}

/* perf time = zero + counter * mult (shift 0): counters easy to tell. */
static void fake_clock(uint64_t zero, uint32_t mult)
{
    struct perf_event_mmap_page *pg = fake();
    pg->lock += 2;
    pg->cap_user_time_zero = 1;
    pg->time_zero = zero;
    pg->time_mult = mult;
    pg->time_shift = 0;
}

/* A 32-bit kernel's head is an unsigned long: it wraps at 2^32 in the
 * page's 64-bit word. */
static int kernel_32_bit;

/* An empty ring whose head and tail are at @position. */
static void fake_start_at(uint64_t position)
{
    memset(fake_page, 0, sizeof fake_page);
    struct perf_event_mmap_page *pg = fake();
    pg->data_offset = 4096;
    pg->data_size = FAKE_DATA;
    pg->data_head = pg->data_tail = position;
    fake_clock(1000, 1);
    own_pid = getpid();
    perf_clock = 1;
    (void)read_time_map(pg, &time_map);
    ring_count = 1;
    memset(&rings[0], 0, sizeof rings[0]);
    rings[0].cpu = 3;
    rings[0].page = pg;
    rings[0].data = fake_page + 4096;
    rings[0].data_size = FAKE_DATA;
    out_len = out_done = 0;
}

static void fake_start(void)
{
    kernel_32_bit = 0;
    fake_start_at(0);
}

static void fake_put(const void *record, size_t n)
{
    struct perf_event_mmap_page *pg = fake();
    for (size_t i = 0; i < n; i++)
        fake_page[4096 + (pg->data_head + i) % FAKE_DATA] =
            ((const unsigned char *)record)[i];
    pg->data_head += n;
    if (kernel_32_bit)
        pg->data_head = (uint32_t)pg->data_head;
}

/* A switch in of thread @tid at counter uptime @uptime (the clock the
 * page says now). */
static void fake_switch_in(uint32_t tid, uint64_t uptime)
{
    struct {
        struct perf_event_header h;
        struct sample_id id;
    } r;
    memset(&r, 0, sizeof r);
    r.h.type = PERF_RECORD_SWITCH;
    r.h.size = sizeof r;
    r.id.pid = (uint32_t)getpid();
    r.id.tid = tid;
    uint64_t counter = flightrec__counter_base() + uptime;
    r.id.time = fake()->time_zero + counter * fake()->time_mult;
    r.id.cpu = 3;
    fake_put(&r, sizeof r);
}

static void fake_lost(uint64_t lost)
{
    struct {
        struct perf_event_header h;
        uint64_t id, lost;
    } r = { { PERF_RECORD_LOST, 0, sizeof r }, 7, lost };
    fake_put(&r, sizeof r);
}

/*=====   The output, item by item   =====*/

struct out_item {
    uint32_t event;
    uint64_t data;
    uint64_t uptime;    /* of the last uptime pair before it */
};

/* Parses whole items of @bytes; the count, and checks no item is cut. */
static size_t parse_items(const unsigned char *bytes, size_t len,
                          struct out_item *items, size_t cap)
{
    CHECK_EQ_U(len % ITEM_BYTES, 0);
    size_t n = 0;
    uint64_t low = 0, uptime = 0;
    for (size_t at = 0; at < len; at += ITEM_BYTES) {
        uint32_t word;
        uintptr_t data;
        memcpy(&word, bytes + at, sizeof word);
        memcpy(&data, bytes + at + sizeof word, sizeof data);
        uint32_t event = word & FLIGHTREC_EVENT_MASK;
        if (event == FLIGHTREC_EV_UPTIME_LOW) {
            low = data;
            continue;
        }
        if (event == FLIGHTREC_EV_UPTIME_HIGH) {
            uptime = low | (uint64_t)data << 32;
            continue;
        }
        CHECK(n < cap);
        items[n].event = event;
        items[n].data = data;
        items[n].uptime = uptime;
        n++;
    }
    return n;
}

/* Drains into a temporary file and parses all that was written. */
static size_t drain_items(struct out_item *items, size_t cap)
{
    FILE *file = tmpfile();
    CHECK(file != NULL);
    preload_switches_drain(fileno(file), 0);
    long len = ftell(file);
    CHECK(len >= 0);
    unsigned char *bytes = malloc((size_t)len + 1);
    CHECK(bytes != NULL);
    rewind(file);
    CHECK_EQ_U(fread(bytes, 1, (size_t)len, file), (size_t)len);
    fclose(file);
    size_t n = parse_items(bytes, (size_t)len, items, cap);
    free(bytes);
    return n;
}

static void check_item(const struct out_item *item, uint32_t event,
                       uint64_t data)
{
    CHECK_EQ_U(item->event, event);
    CHECK_EQ_U(item->data, data);
}

/* A chunk's start: ring, context, position. */
static void check_chunk(const struct out_item *items, uint32_t position)
{
    check_item(&items[0], FLIGHTREC_EV_PROCESSOR,
               FLIGHTREC_CPU_RING_BASE + 3);
    check_item(&items[1], FLIGHTREC_EV_RING_CONTEXT,
               FLIGHTREC_RING_CONTEXT_CPU);
    check_item(&items[2], FLIGHTREC_EV_RING_POSITION, position);
}

/*=====   A 32-bit kernel's head across 2^32   =====*/

/* The drain's tail keeps counting past 2^32 where the head wraps: what is
 * pending is their 32-bit difference.  Compared as 64-bit positions, the
 * ring was never read again. */
TEST(switch_across_4gib_on_a_32_bit_kernel_is_read)
{
    kernel_32_bit = 1;
    fake_start_at(0xFFFFFFF0u);
    fake_switch_in(11, 100);
    struct out_item items[8];
    CHECK_EQ_U(drain_items(items, 8), 4);
    check_item(&items[3], FLIGHTREC_EV_THREAD_SWITCH_IN, 11);
    /* And the ring goes on being read. */
    fake_switch_in(12, 200);
    CHECK_EQ_U(drain_items(items, 8), 4);
    check_item(&items[3], FLIGHTREC_EV_THREAD_SWITCH_IN, 12);
    CHECK_EQ_U(items[3].uptime, 200);
}

/*=====   Losses   =====*/

/* A loss after a switch of the drain's chunk: the next switch opens a
 * chunk that says it, in the same drain. */
TEST(loss_goes_with_the_next_switch)
{
    fake_start();
    fake_switch_in(11, 100);
    fake_lost(5);
    fake_switch_in(12, 200);
    struct out_item items[32];
    size_t n = drain_items(items, 32);
    CHECK_EQ_U(n, 9);
    check_chunk(items, 0);
    check_item(&items[3], FLIGHTREC_EV_THREAD_SWITCH_IN, 11);
    CHECK_EQ_U(items[3].uptime, 100);
    check_chunk(items + 4, 1);
    check_item(&items[7], FLIGHTREC_EV_PER_CPU_OVERFLOW, 5);
    check_item(&items[8], FLIGHTREC_EV_THREAD_SWITCH_IN, 12);
    CHECK_EQ_U(items[8].uptime, 200);
    /* Said once. */
    CHECK_EQ_U(drain_items(items, 32), 0);
}

/* A loss with no switch after it, in the last drain: said in that drain. */
TEST(loss_at_the_end_is_said_in_its_drain)
{
    fake_start();
    fake_switch_in(11, 100);
    fake_lost(3);
    struct out_item items[32];
    size_t n = drain_items(items, 32);
    CHECK_EQ_U(n, 8);
    check_chunk(items, 0);
    check_item(&items[3], FLIGHTREC_EV_THREAD_SWITCH_IN, 11);
    check_chunk(items + 4, 1);
    check_item(&items[7], FLIGHTREC_EV_PER_CPU_OVERFLOW, 3);
    CHECK_EQ_U(drain_items(items, 32), 0);
}

/*=====   The perf clock's mapping   =====*/

/* The kernel changed its mapping between two drains: each drain places
 * its switches with the mapping in force. */
TEST(clock_mapping_followed_across_drains)
{
    fake_start();
    fake_switch_in(11, 777);
    struct out_item items[32];
    CHECK_EQ_U(drain_items(items, 32), 4);
    CHECK_EQ_U(items[3].uptime, 777);
    fake_clock(5000, 2);
    fake_switch_in(12, 999);
    CHECK_EQ_U(drain_items(items, 32), 4);
    check_item(&items[3], FLIGHTREC_EV_THREAD_SWITCH_IN, 12);
    CHECK_EQ_U(items[3].uptime, 999);
}

static void *finish_update(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    struct perf_event_mmap_page *pg = fake();
    pg->time_mult = 2;
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit((_Atomic uint32_t *)(void *)&pg->lock, pg->lock + 1,
                          memory_order_release);
    return NULL;
}

/* A drain that comes while the kernel writes the mapping (its lock odd,
 * the new zero written, not yet the new mult) waits for the whole of it. */
TEST(clock_mapping_read_under_its_lock)
{
    fake_start();
    struct perf_event_mmap_page *pg = fake();
    pg->lock += 1;
    pg->time_zero = 5000;
    /* The switch is timed with the new mapping (zero 5000, mult 2). */
    uint64_t counter = flightrec__counter_base() + 4242;
    struct {
        struct perf_event_header h;
        struct sample_id id;
    } r;
    memset(&r, 0, sizeof r);
    r.h.type = PERF_RECORD_SWITCH;
    r.h.size = sizeof r;
    r.id.pid = (uint32_t)getpid();
    r.id.tid = 13;
    r.id.time = 5000 + counter * 2;
    fake_put(&r, sizeof r);
    pthread_t writer;
    CHECK_EQ_I(pthread_create(&writer, NULL, finish_update, NULL), 0);
    struct out_item items[32];
    size_t n = drain_items(items, 32);
    CHECK_EQ_I(pthread_join(writer, NULL), 0);
    CHECK_EQ_U(n, 4);
    check_item(&items[3], FLIGHTREC_EV_THREAD_SWITCH_IN, 13);
    CHECK_EQ_U(items[3].uptime, 4242);
}

/*=====   Failed writes   =====*/

#define MANY 1000

/* A pipe of one page that is read only now and then: writes fail part way
 * through an item.  What is left goes out first, before the marker item a
 * rings' drain would write, and every switch arrives once, uncut. */
TEST(cut_item_finished_before_anything_else)
{
    fake_start();
    for (uint32_t i = 0; i < MANY; i++)
        fake_switch_in(i, 10 + i);
    int fds[2];
    CHECK_EQ_I(pipe2(fds, O_NONBLOCK), 0);
    CHECK(fcntl(fds[1], F_SETPIPE_SZ, 4096) >= 4096);
    size_t cap = 64 * 1024 * 16;
    unsigned char *bytes = malloc(cap);
    CHECK(bytes != NULL);
    size_t len = 0;
    int drains = 0, refused = 0;
    const uint32_t marker_word = FLIGHTREC_TIME_EVENT(0, FLIGHTREC_USER(9));
    size_t markers = 0;
    for (int round = 0; round < 100000; round++) {
        if (preload_switches_resume(fds[1]) == 0) {
            /* What the rings' drain writes first in drain_as(). */
            unsigned char marker[ITEM_BYTES];
            uintptr_t data = markers;
            memcpy(marker, &marker_word, sizeof marker_word);
            memcpy(marker + sizeof marker_word, &data, sizeof data);
            if (write(fds[1], marker, sizeof marker) == (ssize_t)sizeof marker) {
                markers++;
                preload_switches_drain(fds[1], 0);
                drains++;
            }
        } else {
            refused++;
        }
        ssize_t got;
        while ((got = read(fds[0], bytes + len, 1000)) > 0) {
            len += (size_t)got;
            CHECK(len + 1000 <= cap);
        }
        if (out_len == 0 && fake()->data_tail == fake()->data_head &&
            drains > 1)
            break;
    }
    CHECK(refused > 0); /* the pipe did cut the output */
    static struct out_item items[3 * MANY + 4096];
    size_t n = parse_items(bytes, len, items, sizeof items / sizeof items[0]);
    size_t switches = 0, marker_seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i].event == FLIGHTREC_EV_THREAD_SWITCH_IN) {
            CHECK_EQ_U(items[i].data, switches);
            switches++;
        } else if (items[i].event == FLIGHTREC_USER(9)) {
            CHECK_EQ_U(items[i].data, marker_seen);
            marker_seen++;
        } else {
            CHECK(items[i].event == FLIGHTREC_EV_PROCESSOR ||
                  items[i].event == FLIGHTREC_EV_RING_CONTEXT ||
                  items[i].event == FLIGHTREC_EV_RING_POSITION);
        }
    }
    CHECK_EQ_U(switches, MANY);
    CHECK_EQ_U(marker_seen, markers);
    free(bytes);
    close(fds[0]);
    close(fds[1]);
}

/*=====   The real kernel   =====*/

/* Records of process @pid in the perf rings, from tail to head. */
static size_t records_of(pid_t pid)
{
    size_t n = 0;
    for (int i = 0; i < ring_count; i++) {
        struct cpu_ring *r = &rings[i];
        uint64_t head = atomic_load_explicit(
            (_Atomic uint64_t *)(void *)&r->page->data_head,
            memory_order_acquire);
        for (uint64_t at = r->page->data_tail; at < head;) {
            struct perf_event_header h;
            unsigned char rec[64];
            for (size_t k = 0; k < sizeof h; k++)
                ((unsigned char *)&h)[k] = r->data[(at + k) % r->data_size];
            CHECK(h.size >= sizeof h);
            if (h.type == PERF_RECORD_SWITCH &&
                h.size >= sizeof h + sizeof(struct sample_id)) {
                for (size_t k = 0; k < sizeof h + sizeof(struct sample_id);
                     k++)
                    rec[k] = r->data[(at + k) % r->data_size];
                struct sample_id id;
                memcpy(&id, rec + sizeof h, sizeof id);
                n += (pid_t)id.pid == pid;
            }
            at += h.size;
        }
    }
    return n;
}

/* A forked child that sleeps 50 times writes none of its switches into
 * the parent's perf rings (each sleep would be two records there). */
TEST(child_switches_stay_out_of_parent_rings)
{
    (void)flightrec__counter_base();
    CHECK_EQ_I(preload_switches_start(0), 1);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        for (int i = 0; i < 50; i++)
            (void)poll(NULL, 0, 1);
        _exit(0);
    }
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_U(records_of(child), 0);
    /* The parent's own wait is there. */
    CHECK(records_of(getpid()) >= 2);
}

/* A child whose perf events cannot be had says so, once, naming itself. */
TEST(child_without_perf_says_so_once)
{
    (void)flightrec__counter_base();
    CHECK_EQ_I(preload_switches_start(0), 1);
    FILE *messages = tmpfile();
    CHECK(messages != NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        dup2(fileno(messages), 2);
        /* No descriptor left for a perf event. */
        struct rlimit none = { 3, 3 };
        if (setrlimit(RLIMIT_NOFILE, &none) != 0)
            _exit(3);
        for (int fd = 3; fd < 1024; fd++)
            if (fd != 2)
                close(fd);
        preload_switches_after_fork();
        preload_switches_drain(2, 0);
        _exit(ring_count == 0 ? 0 : 4);
    }
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    size_t len;
    rewind(messages);
    char text[512];
    len = fread(text, 1, sizeof text - 1, messages);
    text[len] = '\0';
    fclose(messages);
    char want[512];
    snprintf(want, sizeof want,
             "flightrec record: context switches of the forked child %d are "
             "not recorded: perf_event_open on CPU 0: %s; recording the "
             "rest\n",
             (int)child, strerror(EMFILE));
    if (strcmp(text, want) != 0)
        TEST_FAIL("stderr: '%s', want '%s'", text, want);
}

TEST_MAIN()
