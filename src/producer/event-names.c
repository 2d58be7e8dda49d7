/* SPDX-License-Identifier: BSD-2-Clause */
/* Event names registered by the program: kept in the region's name table,
 * which the stream carries and readers outside the process see. */
#include "runtime.h"

#include "../region/order.h"

#include <errno.h>

#define NAME_WORDS FLIGHTREC_REGION_EVENT_NAME_WORDS   /* 64 bytes */

/* Whether @a kind is one flightrec_event_define() documents. */
static int kind_valid(uint32_t kind)
{
    uint32_t base = FLIGHTREC_EVENT_KIND_OF(kind);
    if (base == FLIGHTREC_EVENT_SPAN_END && (kind & FLIGHTREC_EVENT_PAIRED))
        return kind == FLIGHTREC_EVENT_SPAN_END_OF(FLIGHTREC_EVENT_BEGIN_OF(kind));
    return base <= FLIGHTREC_EVENT_STRING && kind == base;
}

/* Names @a event; with @a set_kind also stores @a kind, before the serial
 * that tells readers (the stream writer) to look again. */
static int name_event(uint32_t event, const char *name, int set_kind,
                      uint32_t kind)
{
    if (event >= FLIGHTREC_EVENT_COUNT || name == NULL || name[0] == '\0')
        return FLIGHTREC_EINVAL_CONFIG;
    uint32_t words[NAME_WORDS];
    flightrec__pack_name(name, words, NAME_WORDS - 1); /* keep a NUL */
    words[NAME_WORDS - 1] = 0;
    flightrec__ensure_init();
    if (flightrec__region_base == NULL)
        return -ENOMEM;
    struct flightrec_region_names *names = region_names();
    struct flightrec__control_hold hold;
    flightrec__control_begin(&hold);
    for (size_t i = 0; i < NAME_WORDS; i++)
        atomic_store_explicit(&names->words[event][i], words[i],
                              memory_order_relaxed);
    if (set_kind)
        atomic_store_explicit(&names->kind[event], kind, memory_order_relaxed);
    FR_FETCH_ADD_RELEASE(&names->serial[event], 1);
#ifndef FLIGHTREC_PORT_FIRMWARE /* a firmware has no filter specs */
    char kept[4 * NAME_WORDS];
    flightrec__event_name_locked(event, kept, sizeof(kept));
    flightrec__filter_named_locked(event, kept);
#endif
    flightrec__control_end(&hold);
    return 0;
}

int flightrec_event_set_name(uint32_t event, const char *name)
{
    return name_event(event, name, 0, 0);
}

int flightrec_event_define(uint32_t event, const char *name, uint32_t kind)
{
    if (!kind_valid(kind))
        return FLIGHTREC_EINVAL_CONFIG;
    return name_event(event, name, 1, kind);
}

int flightrec_span_define(uint32_t begin, uint32_t end, const char *name)
{
    if (begin >= FLIGHTREC_EVENT_COUNT || end >= FLIGHTREC_EVENT_COUNT ||
        begin == end)
        return FLIGHTREC_EINVAL_CONFIG;
    int rc = flightrec_event_define(begin, name, FLIGHTREC_EVENT_SPAN_BEGIN);
    if (rc == 0)
        rc = flightrec_event_define(end, name,
                                    FLIGHTREC_EVENT_SPAN_END_OF(begin));
    return rc;
}

void flightrec_string(uint32_t event, const char *text)
{
    enum { PER_ITEM = sizeof(uintptr_t) };
    struct flightrec_item_in items[FLIGHTREC_STRING_MAX / PER_ITEM];
    size_t len = 0;
    if (text != NULL)
        while (len < FLIGHTREC_STRING_MAX - 1 && text[len] != '\0')
            len++;
    /* Always a NUL: two texts of one id at one time stay apart. */
    size_t n = len / PER_ITEM + 1;
    for (size_t i = 0; i < n; i++) {
        uintptr_t word = 0;
        for (size_t k = 0; k < PER_ITEM && i * PER_ITEM + k < len; k++)
            word |= (uintptr_t)(unsigned char)text[i * PER_ITEM + k] << (8 * k);
        items[i].event = event;
        items[i].data = word;
    }
    flightrec_produce_n(items, n);
}

uint32_t flightrec__event_name_words(uint32_t event, uint32_t *words)
{
    if (flightrec__region_base == NULL)
        return 0;
    struct flightrec_region_names *names = region_names();
    uint32_t serial = FR_LOAD_ACQUIRE(&names->serial[event]);
    if (serial == 0)
        return 0;
    for (size_t i = 0; i < NAME_WORDS; i++)
        words[i] = atomic_load_explicit(&names->words[event][i],
                                        memory_order_relaxed);
    return serial;
}

size_t flightrec__event_name_locked(uint32_t event, char *out, size_t size)
{
    size_t n = 0;
    if (flightrec__region_base != NULL) {
        struct flightrec_region_names *names = region_names();
        for (; n + 1 < size && n < 4 * NAME_WORDS; n++) {
            uint32_t word = atomic_load_explicit(&names->words[event][n / 4],
                                                 memory_order_relaxed);
            char c = (char)((word >> (8 * (n % 4))) & 0xffu);
            if (c == '\0')
                break;
            out[n] = c;
        }
    }
    out[n] = '\0';
    return n;
}
