/* SPDX-License-Identifier: BSD-2-Clause */
#include "region-check.h"

#include <flightrec.h>
#include <flightrec/region.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int refuse(char *message, size_t message_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *message, size_t message_size, const char *format, ...)
{
    if (message != NULL && message_size != 0) {
        va_list ap;
        va_start(ap, format);
        vsnprintf(message, message_size, format, ap);
        va_end(ap);
    }
    return -1;
}

static uint32_t swap32(uint32_t x)
{
    return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) |
           (x << 24);
}

static void version_text(uint32_t number, char *out, size_t size)
{
    snprintf(out, size, "%u.%u.%u", (unsigned)(number >> 16),
             (unsigned)((number >> 8) & 0xffu), (unsigned)(number & 0xffu));
}

/* Whether [offset, offset + length) lies within the first @used bytes. */
static int inside(uint64_t offset, uint64_t length, uint64_t used)
{
    return offset <= used && length <= used - offset;
}

int fr_region_check(const void *region, size_t size, char *message,
                    size_t message_size)
{
    const struct flightrec_region_header *h = region;
    if (size < sizeof(*h))
        return refuse(message, message_size,
                      "region of %zu bytes: too short for its %zu-byte header",
                      size, sizeof(*h));
    if (h->magic != FLIGHTREC_REGION_MAGIC) {
        if (swap32(h->magic) == FLIGHTREC_REGION_MAGIC)
            return refuse(message, message_size,
                          "region written with the other byte order; this "
                          "reader reads its own host's regions only");
        return refuse(message, message_size,
                      "byte 0: not a flightrec region (magic 0x%08x)",
                      (unsigned)h->magic);
    }
    char theirs[16], ours[16];
    version_text(h->library_version, theirs, sizeof(theirs));
    version_text(FLIGHTREC_VERSION_NUMBER, ours, sizeof(ours));
    if (h->layout_version != FLIGHTREC_REGION_LAYOUT_VERSION)
        return refuse(message, message_size,
                      "region layout version %u (written by flightrec %s); "
                      "this reader (flightrec %s) reads layout version %u",
                      (unsigned)h->layout_version, theirs, ours,
                      FLIGHTREC_REGION_LAYOUT_VERSION);
    if (h->word_size != sizeof(uintptr_t))
        return refuse(message, message_size,
                      "region of a %u-bit process (flightrec %s); this reader "
                      "(flightrec %s) is %u-bit",
                      8u * h->word_size, theirs, ours,
                      (unsigned)(8 * sizeof(uintptr_t)));
    if (h->header_size != sizeof(*h) ||
        h->ring_size != sizeof(struct flightrec_region_ring) ||
        h->item_size != sizeof(struct flightrec_region_item))
        return refuse(message, message_size,
                      "region sizes (header %u, ring %u, item %u bytes) are "
                      "not those of layout version %u (%zu, %zu, %zu)",
                      (unsigned)h->header_size, (unsigned)h->ring_size,
                      (unsigned)h->item_size, FLIGHTREC_REGION_LAYOUT_VERSION,
                      sizeof(*h), sizeof(struct flightrec_region_ring),
                      sizeof(struct flightrec_region_item));
    /* The other kind's claims and atomics would not exclude the writer's
     * (region.h, FLIGHTREC_REGION_WORD). */
    uint32_t words_32 = h->flags & FLIGHTREC_REGION_WORDS_32;
    if (words_32 != (FLIGHTREC_REGION_NARROW ? FLIGHTREC_REGION_WORDS_32 : 0))
        return refuse(message, message_size,
                      "byte 124: region with %u-bit shared words (flightrec "
                      "%s); this reader (flightrec %s) uses %u-bit ones",
                      words_32 ? 32u : 64u, theirs, ours,
                      FLIGHTREC_REGION_NARROW ? 32u : 64u);
    /* The ring list first: its writer grows `used` and the ring count
     * before it publishes a ring there (release), so the two read after it
     * cover every ring it links. */
    uint64_t offset = atomic_load_explicit(&h->ring_list, memory_order_acquire);
    uint64_t used = atomic_load_explicit(&h->used, memory_order_acquire);
    if (used > size || used > h->region_size)
        return refuse(message, message_size,
                      "region truncated: %llu bytes in use, %zu present",
                      (unsigned long long)used, size);
    if (!inside(h->control_offset, sizeof(struct flightrec_region_control),
                used) ||
        !inside(h->names_offset, sizeof(struct flightrec_region_names), used) ||
        h->control_offset % FLIGHTREC_REGION_ALIGN != 0 ||
        h->names_offset % FLIGHTREC_REGION_ALIGN != 0)
        return refuse(message, message_size,
                      "byte 40: control or name block outside the region");
    if (!inside(h->hot_offset, sizeof(struct flightrec_region_hot), used) ||
        h->hot_offset % FLIGHTREC_REGION_ALIGN != 0)
        return refuse(message, message_size,
                      "byte 128: hot page outside the region");
    if (!inside(h->process_offset, sizeof(struct flightrec_region_process),
                used) ||
        h->process_offset % 8 != 0)
        return refuse(message, message_size,
                      "byte 112: process block outside the region");

    const unsigned char *base = region;
    uint32_t count = atomic_load_explicit(&h->ring_count, memory_order_relaxed);
    uint64_t seen = 0;
    while (offset != 0) {
        if (++seen > count)
            return refuse(message, message_size,
                          "ring list longer than its %u rings (a loop?)",
                          (unsigned)count);
        if (offset % FLIGHTREC_REGION_ALIGN != 0 ||
            !inside(offset, sizeof(struct flightrec_region_ring), used))
            return refuse(message, message_size,
                          "byte %llu: ring outside the region",
                          (unsigned long long)offset);
        const struct flightrec_region_ring *ring =
            (const void *)(base + offset);
        uint64_t capacity = ring->capacity;
        if (capacity < 16 || (capacity & (capacity - 1)) != 0 ||
            capacity > ((uint64_t)1 << 32))
            return refuse(message, message_size,
                          "byte %llu: ring capacity %llu is not a power of "
                          "two from 16",
                          (unsigned long long)offset,
                          (unsigned long long)capacity);
        if (!inside(ring->items_offset,
                    capacity * sizeof(struct flightrec_region_item), used) ||
            ring->items_offset % FLIGHTREC_REGION_ALIGN != 0)
            return refuse(message, message_size,
                          "byte %llu: ring items outside the region",
                          (unsigned long long)offset);
        if (ring->context > 1 || ring->id >= count)
            return refuse(message, message_size,
                          "byte %llu: ring id %u or context %u out of range",
                          (unsigned long long)offset, (unsigned)ring->id,
                          (unsigned)ring->context);
        offset = atomic_load_explicit(&ring->next_offset,
                                      memory_order_acquire);
    }
    return 0;
}
