/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoder memory per ring, counted by the allocator itself: the test links
 * with --wrap=malloc,calloc,realloc,free, so every allocation of the
 * library is counted (bytes the allocator handed out, by
 * malloc_usable_size), and the peak is checked against exact bounds.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flightrec/client.h>

#include "stream-vector.h"
#include "test.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

static size_t live, peak;

static void counted(void *p)
{
    if (p != NULL) {
        live += malloc_usable_size(p);
        if (live > peak)
            peak = live;
    }
}

void *__wrap_malloc(size_t n)
{
    void *p = __real_malloc(n);
    counted(p);
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    void *p = __real_calloc(n, size);
    counted(p);
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    size_t old = p != NULL ? malloc_usable_size(p) : 0;
    void *q = __real_realloc(p, n);
    if (q != NULL) {
        live -= old;
        counted(q);
    }
    return q;
}

void __wrap_free(void *p)
{
    if (p != NULL)
        live -= malloc_usable_size(p);
    __real_free(p);
}

#define RINGS (1u << 20)

static int count_record(const struct flightrec_record *r, void *arg)
{
    (void)r;
    (*(uint64_t *)arg)++;
    return 0;
}

/* A stream of RINGS rings that each appear in a chunk of one PROCESSOR
 * item and hold nothing (8 bytes a ring). */
static void empty_rings(struct fr_vec *v)
{
    fr_vec_init(v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(v, UINT64_C(1000000000), RINGS, 1024, 1, 0);
    for (uint32_t r = 0; r < RINGS; r++)
        fr_vec_item(v, 0, FLIGHTREC_EV_PROCESSOR, r);
}

static int temp_file(const struct fr_vec *v)
{
    char path[] = "/tmp/test-client-memory-XXXXXX";
    int fd = mkstemp(path);

    CHECK(fd >= 0);
    unlink(path);
    CHECK_EQ_I(write(fd, v->buf, v->len), (long)v->len);
    CHECK_EQ_I(lseek(fd, 0, SEEK_SET), 0);
    return fd;
}

/* Decodes @a v (0: fed whole, unmerged; 1: fed whole, merged; 2:
 * flightrec_client_read_fd on a file); returns the peak bytes the
 * library held beyond what was allocated before. */
static size_t decode_peak(const struct fr_vec *v, int how)
{
    uint64_t records = 0;
    struct flightrec_client_options o = {
        .on_record = count_record, .arg = &records, .merge = how != 0};
    flightrec_client *c;
    size_t base;
    int fd = how == 2 ? temp_file(v) : -1;

    base = peak = live;
    CHECK_EQ_I(flightrec_client_create(&c, &o), 0);
    if (how == 2) {
        int rc = flightrec_client_read_fd(c, fd);
        if (rc != 0)
            TEST_FAIL("read_fd: %s", flightrec_client_message(c));
        close(fd);
    } else {
        CHECK_EQ_I(flightrec_client_feed(c, v->buf, v->len), 0);
        CHECK_EQ_I(flightrec_client_finish(c), 0);
    }
    CHECK_EQ_U(records, 0);
    CHECK_EQ_U(flightrec_client_ring_count(c), RINGS);
    /* Each ring still says which it is (copied before the next call). */
    for (uint32_t i = 0; i < RINGS; i += RINGS / 8 - 1) {
        const struct flightrec_ring_info *r = flightrec_client_ring(c, i);
        CHECK(r != NULL);
        CHECK_EQ_U(r->id, i);
        CHECK_EQ_I(r->thread_id, -1);
        CHECK_EQ_U(r->events, 0);
        CHECK_EQ_U(r->overflow + r->discard + r->missing, 0);
    }
    CHECK(flightrec_client_ring(c, RINGS) == NULL);
    flightrec_client_destroy(c);
    CHECK_EQ_U(live, base); /* everything given back */
    return peak - base;
}

/*
 * 2^20 empty rings.  Fed, a ring costs its id in the ring map (8 bytes,
 * 4-byte slots at most 3/4 full: ~8) and its pointer (8): 24 bytes at a
 * power of two rings, 32 while a table doubles; the client itself is
 * ~50 KiB.  Before, every ring had its ~500-byte struct (537 bytes a
 * ring).  read_fd adds its index: a 16-byte segment a ring (and 8 bytes
 * of first and last segment in the first pass only), 28 bytes of position
 * and read-ahead state a ring in the second, and 5 MiB of read buffers.
 */
TEST(empty_rings)
{
    struct fr_vec v;
    size_t fed, merged, file;

    empty_rings(&v);
    fed = decode_peak(&v, 0);
    merged = decode_peak(&v, 1);
    file = decode_peak(&v, 2);
    printf("peak bytes a ring: fed %.1f, merged %.1f, file %.1f\n",
           (double)fed / RINGS, (double)merged / RINGS,
           (double)file / RINGS);
    CHECK(fed <= (size_t)32 * RINGS + (256u << 10));
    CHECK(merged <= (size_t)32 * RINGS + (256u << 10));
    CHECK(file <= (size_t)80 * RINGS + (6u << 20));
    fr_vec_free(&v);
}

TEST_MAIN()
