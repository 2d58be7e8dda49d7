/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * On a ring's first lap, flightrec_drain() faults in the pages its producer
 * writes next (twice what the drain found, at most a quarter ring), so that
 * the producer does not take those page faults itself
 * (src/producer/dump.c, populate_ahead()).  Exact where the kernel has
 * MADV_POPULATE_WRITE (Linux 5.14); where it has not, nothing is faulted in.
 */
#include "producer-test.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

/* Whether this kernel populates pages on request (a scratch mapping). */
static int kernel_populates(void)
{
#ifdef MADV_POPULATE_WRITE
    long page = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    int ok = madvise(p, (size_t)page, MADV_POPULATE_WRITE) == 0;
    munmap(p, (size_t)page);
    return ok;
#else
    return 0;
#endif
}

/* Resident pages among those holding items [from, to) of @a items. */
static size_t resident_pages(const struct flightrec_item *items,
                             uintptr_t from, uintptr_t to, size_t *pages)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (uintptr_t)(items + from) & ~(page - 1);
    uintptr_t end = ((uintptr_t)(items + to) + page - 1) & ~(page - 1);
    size_t n = (size_t)((end - first) / page);
    unsigned char *vec = malloc(n);
    CHECK(vec != NULL);
    CHECK_EQ_I(mincore((void *)first, end - first, vec), 0);
    size_t resident = 0;
    for (size_t i = 0; i < n; i++)
        resident += vec[i] & 1u;
    free(vec);
    *pages = n;
    return resident;
}

TEST(drain_faults_in_the_pages_ahead_of_the_head)
{
    setenv("FLIGHTREC_ITEMS", "65536", 1);
    setenv("FLIGHTREC_SIGNAL_ITEMS", "1024", 1);
    /* 8,192 items: the drain finds 1/8 of the ring, 128/1024. */
    for (int i = 0; i < 8192; i++)
        flightrec_produce(FLIGHTREC_USER(1), (uintptr_t)i);
    const struct flightrec__writer *w = &flightrec__self.main;
    CHECK_EQ_U(w->mask + 1, 65536);
    uintptr_t head = atomic_load(&w->ring->head);
    /* And the items the first event adds (the thread's name): the drain
     * still finds 128/1024 of the ring. */
    CHECK(head >= 8192 && head < 8192 + 64);
    /* Beyond the page the head is in, nothing was written yet. */
    uintptr_t page_items = (uintptr_t)sysconf(_SC_PAGESIZE) /
                           sizeof(struct flightrec_item);
    uintptr_t from = (head + page_items) & ~(page_items - 1);
    /* Twice 1/8 of the ring ahead, and the largest record. */
    uintptr_t to = head + 2 * 8192 + FLIGHTREC_MAX_PENDING;
    size_t pages;
    CHECK_EQ_U(resident_pages(w->items, from, to, &pages), 0);
    CHECK(pages >= 30);
    int fd = open("/dev/null", O_WRONLY);
    CHECK(fd >= 0);
    CHECK_EQ_I(flightrec_drain(fd), 0);
    close(fd);
    size_t want = kernel_populates() ? pages : 0;
    CHECK_EQ_U(resident_pages(w->items, from, to, &pages), want);
}

TEST_MAIN()
