/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the stream decoder.  The first input byte picks the
 * options (merge, window) and seeds the piece sizes, so one input also
 * explores how the stream is split across feeds; every record is checked
 * for the invariants a reader relies on.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <flightrec/client.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(const struct flightrec_record *r, void *arg)
{
    (void)arg;
    if (r->ring_info == NULL || r->ring_info->id != r->ring ||
        r->type > FLIGHTREC_RECORD_LOSS || r->event > 1023 ||
        ((r->flags & FLIGHTREC_RECORD_UNTIMED) && r->time_ns != 0 &&
         r->type == FLIGHTREC_RECORD_EVENT))
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct flightrec_client_options o = {0};
    struct flightrec_client_totals t;
    flightrec_client *c;
    uint32_t seed;
    size_t at = 1;

    if (size < 1)
        return 0;
    o.on_record = check;
    o.merge = data[0] & 1;
    /* bit 1: a window of (data[0] >> 2) us, or the stream's when that is 0 */
    o.merge_window_ns = !(data[0] & 2)  ? 0
                        : data[0] >> 2 ? (uint64_t)(data[0] >> 2) * 1000
                                       : FLIGHTREC_MERGE_WINDOW_AUTO;
    seed = data[0] * 2654435761u + 1;
    if (flightrec_client_create(&c, &o) != 0)
        return 0;
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
