/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the region reader: a session file is hostile input
 * (another build, a crash, a damaged disk).  The region is checked, then
 * every ring is dumped and drained through the ring reader; neither may
 * crash, loop or read outside the image.
 */
#include "region-check.h"
#include "ring-reader.h"

#include <stdlib.h>
#include <string.h>

static ssize_t discard(void *target, const void *bytes, size_t n)
{
    (void)target;
    (void)bytes;
    return (ssize_t)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < sizeof(struct flightrec_region_header) || size > (4u << 20))
        return 0;
    unsigned char *image = aligned_alloc(64, (size + 63) & ~(size_t)63);
    if (image == NULL)
        return 0;
    memcpy(image, data, size);
    char message[300];
    if (fr_region_check(image, size, message, sizeof(message)) == 0) {
        const struct flightrec_region_header *h = (const void *)image;
        unsigned char buf[512];
        struct frw_sink sink;
        frw_sink_init(&sink, discard, NULL, buf, sizeof(buf));
        frw_put_header(&sink, h, (const void *)(image + h->control_offset));
        frw_put_event_names(&sink, (const void *)(image + h->names_offset),
                            NULL);
        uint64_t at = atomic_load(&h->ring_list);
        for (uint32_t n = 0; at != 0 && n <= atomic_load(&h->ring_count);
             n++) {
            struct flightrec_region_ring *ring = (void *)(image + at);
            (void)fr_ring_dump(&sink, image, ring, NULL);
            (void)fr_ring_drain(&sink, image, ring, NULL);
            at = atomic_load(&ring->next_offset);
        }
        (void)frw_sink_flush(&sink);
    }
    free(image);
    return 0;
}
