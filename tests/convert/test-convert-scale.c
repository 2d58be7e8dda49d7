/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CTF writer at many rings: memory counted by an allocator wrapped at
 * link time (-Wl,--wrap), the file limit set to the usual default of 1,024,
 * and the result read back by babeltrace2.
 */
#include <flightrec/events.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sink-driver.h"
#include "test.h"

/*----- counting allocator -----*/

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

static size_t heap_now, heap_peak;

static void *counted(void *p)
{
    if (p != NULL) {
        heap_now += malloc_usable_size(p);
        if (heap_now > heap_peak)
            heap_peak = heap_now;
    }
    return p;
}

void *__wrap_malloc(size_t n) { return counted(__real_malloc(n)); }
void *__wrap_calloc(size_t n, size_t size)
{
    return counted(__real_calloc(n, size));
}
void *__wrap_realloc(void *p, size_t n)
{
    if (p != NULL)
        heap_now -= malloc_usable_size(p);
    void *q = __real_realloc(p, n);
    if (q == NULL && p != NULL && n != 0)
        heap_now += malloc_usable_size(p);   /* p is still there */
    return counted(q);
}
void __wrap_free(void *p)
{
    if (p != NULL)
        heap_now -= malloc_usable_size(p);
    __real_free(p);
}

/*----- the tests -----*/

extern const char *const flightrec__v10_names[512];

static const char *event_name(void *arg, uint32_t event)
{
    (void)arg;
    return event < 512 && flightrec__v10_names[event] ? flightrec__v10_names[event]
                                                      : "USER_1";
}

static struct flightrec_stream_info info;
static struct fr_source src = { .info = &info, .event_name = event_name };

/* Writes @a rings rings of @a per_ring user events each, taking the rings
 * in turn (the worst case: every record goes to another stream), then
 * @a ring0_more events more in ring 0. */
static void write_rings(const char *dir, uint32_t rings, uint32_t per_ring,
                        uint32_t ring0_more)
{
    info.kind = FLIGHTREC_STREAM_FLIGHTREC;
    info.frequency = 1000000000u;
    info.process_id = 99;
    char err[256];
    struct fr_sink *sink;
    if (fr_sink_create(&sink, FR_FORMAT_CTF, dir, err, sizeof err) != 0)
        TEST_FAIL("%s", err);
    CHECK_EQ_I(fr_sink_begin(sink, &src), 0);
    struct flightrec_ring_info ri;
    memset(&ri, 0, sizeof ri);
    struct flightrec_record r;
    memset(&r, 0, sizeof r);
    r.type = FLIGHTREC_RECORD_EVENT;
    r.event = FLIGHTREC_USER(1);
    r.ring_info = &ri;
    for (uint32_t i = 0; i < per_ring; i++) {
        for (uint32_t ring = 0; ring < rings; ring++) {
            ri.id = ring;
            ri.thread_id = 1000 + ring;
            snprintf(ri.thread_name, sizeof ri.thread_name, "t%" PRIu32,
                     ring);
            r.ring = ring;
            r.time_ns = 1000 + (uint64_t)i * 1000000 + ring;
            r.data = i;
            if (fr_sink_record(sink, &r) != 0)
                TEST_FAIL("record: %s", sink->error);
        }
    }
    ri.id = 0;
    ri.thread_id = 1000;
    snprintf(ri.thread_name, sizeof ri.thread_name, "t0");
    r.ring = 0;
    for (uint32_t i = 0; i < ring0_more; i++) {
        r.time_ns = 1000 + (uint64_t)(per_ring + i) * 1000000;
        r.data = per_ring + i;
        if (fr_sink_record(sink, &r) != 0)
            TEST_FAIL("record: %s", sink->error);
    }
    if (fr_sink_end(sink) != 0)
        TEST_FAIL("end: %s", sink->error);
    fr_sink_destroy(sink);
}

static void limit_files(rlim_t n)
{
    struct rlimit rl;
    CHECK_EQ_I(getrlimit(RLIMIT_NOFILE, &rl), 0);
    rl.rlim_cur = n;
    CHECK_EQ_I(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static unsigned long command_number(const char *cmd)
{
    int st;
    char *out = run_cmd(cmd, &st);
    CHECK_EQ_I(st, 0);
    unsigned long v = strtoul(out, NULL, 10);
    free(out);
    return v;
}

TEST(rings_50000)
{
    /* Was: "Too many open files" after 1,018 stream files, no metadata. */
    limit_files(1024);
    const char *dir = scratch("rings-50000");
    write_rings(dir, 50000, 2, 198);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c '^stream_'", dir);
    CHECK_EQ_U(command_number(cmd), 50000);
    snprintf(cmd, sizeof cmd, "test -s '%s/metadata' && echo 1", dir);
    CHECK_EQ_U(command_number(cmd), 1);
    /* babeltrace2 reads a few rings' files: the last ring holds its two
     * events, at their times. */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s-part' && cp '%s/metadata' "
             "'%s/stream_49999' '%s/stream_0' '%s-part/' && babeltrace2 "
             "--clock-cycles --no-delta '%s-part' | grep -c "
             "'vtid = 50999, procname = \"t49999\" }, { data = 0x[01] }'",
             dir, dir, dir, dir, dir, dir);
    CHECK_EQ_U(command_number(cmd), 2);
    /* 50,000 buffers leave each stream the smallest packet, 1 KiB, and
     * ring 0's 200 events fill them to their end: 66 events of 14 bytes
     * after the 83 bytes of header and context, three packets of 1,007
     * bytes and one of 2 events.  Was 43 events a packet (room kept for
     * the largest event, 342 bytes), 3,215 bytes in all. */
    snprintf(cmd, sizeof cmd, "stat -c %%s '%s/stream_0'", dir);
    CHECK_EQ_U(command_number(cmd), 3u * (83 + 66 * 14) + 83 + 2 * 14);
    snprintf(cmd, sizeof cmd, "babeltrace2 '%s-part' | grep -c "
             "'vtid = 1000, procname = \"t0\" }, { data = '", dir);
    CHECK_EQ_U(command_number(cmd), 200);
}

TEST(memory_5000_rings)
{
    /* Was a 64 KiB buffer per ring: 320 MiB at 5,000 rings. */
    heap_now = heap_peak = 0;
    const char *dir = scratch("rings-5000");
    write_rings(dir, 5000, 400, 0);
    fprintf(stderr, "peak heap at 5,000 rings: %.1f MiB\n",
            (double)heap_peak / (1024.0 * 1024.0));
    /* The 8 MiB budget and 5,000 streams' state (was 32 MiB, and before
     * that 320 MiB). */
    CHECK(heap_peak <= 12u * 1024 * 1024);
    /* Each ring's events come back (babeltrace2 takes minutes to set up
     * 5,000 streams, so three of them are read), and every event is 14
     * bytes plus its share of the packet headers. */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s-part' && cp '%s/metadata' "
             "'%s/stream_0' '%s/stream_2500' '%s/stream_4999' '%s-part/' && "
             "babeltrace2 '%s-part' | grep -c ' USER_1: '",
             dir, dir, dir, dir, dir, dir, dir);
    CHECK_EQ_U(command_number(cmd), 3u * 400u);
    snprintf(cmd, sizeof cmd, "cat '%s'/stream_* | wc -c", dir);
    unsigned long bytes = command_number(cmd);
    CHECK(bytes >= 5000ul * 400 * 14);
    CHECK(bytes <= 5000ul * 400 * 16);
    /* The budget is shared: each ring's buffer grows to its share,
     * 8 MiB / 5,000 = 1,677 bytes, so every stream is four packets of up
     * to 113 events (each with its 83 to 86 bytes of header and context,
     * procname "tN").  Was: the first rings kept 64 KiB buffers and the
     * later ones wrote 1 KiB packets. */
    snprintf(cmd, sizeof cmd, "stat -c %%s '%s/stream_0' '%s/stream_2500' "
             "'%s/stream_4999' | awk '{ t += $1 } END { print t }'",
             dir, dir, dir);
    CHECK_EQ_U(command_number(cmd), 3ul * 400 * 14 + 4 * (83 + 86 + 86));
}

TEST(bytes_per_event)
{
    /* A plain user event: 14 bytes (was 28).  Packets of 64 KiB hold
     * 4,670 events after their 91-byte header and context; a gap of more
     * than 2^32 ns takes the extended header (14 more bytes). */
    const char *dir = scratch("bytes-per-event");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_CTF, dir);
    drv_ring(&d, 0, 101, "worker one", 0);
    drv_begin(&d);
    for (uint64_t i = 0; i < 10000; i++)
        drv_event(&d, 0, 1000 + i * 100 + (i >= 5000 ? 5000000000ull : 0),
                  FLIGHTREC_USER(1), i);
    drv_end(&d);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "stat -c %%s '%s/stream_0'", dir);
    CHECK_EQ_U(command_number(cmd), 3 * 91 + 10000 * 14 + 8);
    snprintf(cmd, sizeof cmd, "babeltrace2 --clock-cycles --no-delta '%s' "
             "| grep -c -e '^\\[00000000000000500900\\] .*data = 0x1387 }' "
             "-e '^\\[00000000005000501000\\] .*data = 0x1388 }' "
             "-e '^\\[00000000005001000900\\] .*data = 0x270F }'", dir);
    CHECK_EQ_U(command_number(cmd), 3);
}

TEST_MAIN()
