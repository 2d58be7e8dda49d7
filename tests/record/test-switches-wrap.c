/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * On a 32-bit kernel perf's data_head is an unsigned long, zero-extended
 * into the page's 64-bit word, so it wraps at 2^32 while the drain's own
 * tail keeps counting: the drain compares the two as a 32-bit difference.
 * Compared as 64-bit positions, a ring whose positions crossed 4 GiB was
 * never read again.
 */
#include "../../src/preload/switches.c"

#include "test.h"

#define FAKE_DATA (1u << 16)

static _Alignas(4096) unsigned char fake_page[4096 + FAKE_DATA];

static struct perf_event_mmap_page *fake(void)
{
    return (struct perf_event_mmap_page *)(void *)fake_page;
}

static void fake_start(uint64_t position)
{
    memset(fake_page, 0, sizeof fake_page);
    struct perf_event_mmap_page *pg = fake();
    pg->data_offset = 4096;
    pg->data_size = FAKE_DATA;
    pg->lock = 2;
    pg->cap_user_time_zero = 1;
    pg->time_zero = 1000;
    pg->time_mult = 1;
    pg->time_shift = 0;
    pg->data_head = position;
    pg->data_tail = position;
    own_pid = getpid();
    perf_clock = 1;
    CHECK_EQ_I(read_time_map(pg, &time_map), 0);
    ring_count = 1;
    memset(&rings[0], 0, sizeof rings[0]);
    rings[0].cpu = 3;
    rings[0].page = pg;
    rings[0].data = fake_page + 4096;
    rings[0].data_size = FAKE_DATA;
    out_len = out_done = 0;
}

/* The kernel's store: an unsigned long position, 32 bits on a 32-bit
 * kernel. */
static void put_switch_32bit_kernel(uint32_t tid, uint64_t uptime)
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
    r.id.time = 1000 + flightrec__counter_base() + uptime;
    r.id.cpu = 3;
    struct perf_event_mmap_page *pg = fake();
    uint32_t head = (uint32_t)pg->data_head;
    for (size_t i = 0; i < sizeof r; i++)
        fake_page[4096 + (uint32_t)(head + i) % FAKE_DATA] =
            ((const unsigned char *)&r)[i];
    pg->data_head = (uint32_t)(head + sizeof r);
}

static size_t switches_drained(void)
{
    FILE *file = tmpfile();
    CHECK(file != NULL);
    preload_switches_drain(fileno(file), 0);
    long len = ftell(file);
    CHECK(len >= 0);
    unsigned char bytes[4096];
    CHECK((size_t)len <= sizeof bytes);
    rewind(file);
    CHECK_EQ_U(fread(bytes, 1, (size_t)len, file), (size_t)len);
    fclose(file);
    size_t switches = 0;
    for (long at = 0; at + (long)ITEM_BYTES <= len; at += (long)ITEM_BYTES) {
        uint32_t word;
        memcpy(&word, bytes + at, sizeof word);
        switches += (word & FLIGHTREC_EVENT_MASK) ==
                    FLIGHTREC_EV_THREAD_SWITCH_IN;
    }
    return switches;
}

/* Control: below 4 GiB the record is read. */
TEST(switch_below_4gib_is_read)
{
    fake_start(0xFFFF0000u);
    put_switch_32bit_kernel(11, 100);
    CHECK_EQ_U(switches_drained(), 1);
}

/* A record that takes the kernel's head across 2^32. */
TEST(switch_across_4gib_on_a_32_bit_kernel_is_read)
{
    fake_start(0xFFFFFFF0u);
    put_switch_32bit_kernel(11, 100);
    CHECK_EQ_U(switches_drained(), 1);
    /* And the ring goes on being read. */
    put_switch_32bit_kernel(12, 200);
    CHECK_EQ_U(switches_drained(), 1);
}

TEST_MAIN()
