/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the stream decoder.  The first input byte picks the
 * options (merge, window) and seeds the piece sizes, so one input also
 * explores how the stream is split across feeds, or (bit 6) has the input
 * read as a regular file by flightrec_client_read_fd(), in time order or
 * (bit 5) ring by ring; every record is checked for the invariants a
 * reader relies on.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <flightrec/client.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Ring by ring: the ring of the last record and whether it was seen
 * before (a ring's records come in one run, untimed ones too). */
struct runs {
    flightrec_client *c;
    uint32_t last;
    int any;
    uint8_t done[4096];
};

static int check(const struct flightrec_record *r, void *arg)
{
    struct runs *runs = arg;
    if (r->ring_info == NULL || r->ring_info->id != r->ring ||
        r->type > FLIGHTREC_RECORD_LOSS || r->event > 1023 ||
        ((r->flags & FLIGHTREC_RECORD_UNTIMED) && r->time_ns != 0 &&
         r->type == FLIGHTREC_RECORD_EVENT))
        abort();
    /* (After an error, finish delivers what every ring still held.) */
    if (flightrec_client_info(runs->c)->by_ring && r->ring < 4096 &&
        flightrec_client_message(runs->c)[0] == '\0') {
        if (runs->any && r->ring != runs->last) {
            if (runs->done[r->ring])
                abort();
            runs->done[runs->last] = 1;
        }
        runs->last = r->ring;
        runs->any = 1;
    }
    return 0;
}

/* The input past its first byte, read back from a regular file. */
static void read_as_file(flightrec_client *c, const uint8_t *data,
                         size_t size)
{
    int fd = memfd_create("fuzz-client", MFD_CLOEXEC);
    size_t at = 0;

    if (fd < 0)
        abort();
    while (at < size) {
        ssize_t k = write(fd, data + at, size - at);
        if (k <= 0)
            abort();
        at += (size_t)k;
    }
    if (lseek(fd, 0, SEEK_SET) != 0)
        abort();
    (void)flightrec_client_read_fd(c, fd);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct flightrec_client_options o = {0};
    struct flightrec_client_totals t;
    static struct runs runs;
    flightrec_client *c;
    uint32_t seed;
    size_t at = 1;

    if (size < 1)
        return 0;
    o.on_record = check;
    o.arg = &runs;
    o.merge = !(data[0] & 1)   ? 0
              : data[0] & 0x20 ? FLIGHTREC_MERGE_BY_RING
                               : 1;
    /* bit 1: a window of (data[0] >> 2) us, or the stream's when that is 0 */
    o.merge_window_ns = !(data[0] & 2)  ? 0
                        : data[0] >> 2 ? (uint64_t)(data[0] >> 2) * 1000
                                       : FLIGHTREC_MERGE_WINDOW_AUTO;
    seed = data[0] * 2654435761u + 1;
    if (flightrec_client_create(&c, &o) != 0)
        return 0;
    runs.c = c;
    runs.any = 0;
    memset(runs.done, 0, sizeof runs.done);
    if (data[0] & 0x40) {
        read_as_file(c, data + 1, size - 1);
        at = size;
    }
    while (at < size) {
        size_t k;
        seed = seed * 1103515245u + 12345u;
        k = (data[0] & 0x80) ? size - at : (seed >> 16) % 64 + 1;
        if (k > size - at)
            k = size - at;
        if (flightrec_client_feed(c, data + at, k) != 0)
            break;
        at += k;
    }
    if (!(data[0] & 0x40))
        (void)flightrec_client_finish(c);
    flightrec_client_totals(c, &t);
    for (size_t i = 0; i < flightrec_client_ring_count(c); i++)
        if (flightrec_client_ring(c, i) == NULL)
            abort();
    for (uint32_t e = 0; e < 1024; e += 37)
        if (flightrec_client_event_name(c, e) == NULL)
            abort();
    (void)flightrec_client_message(c);
    flightrec_client_destroy(c);
    return 0;
}
