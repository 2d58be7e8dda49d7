/* SPDX-License-Identifier: BSD-2-Clause */
/* Event names registered by the program: kept in the region's name table,
 * which the stream carries and readers outside the process see. */
#include "runtime.h"

#include <errno.h>

#define NAME_WORDS FLIGHTREC_REGION_EVENT_NAME_WORDS   /* 64 bytes */

int flightrec_event_set_name(uint32_t event, const char *name)
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
    atomic_fetch_add_explicit(&names->serial[event], 1, memory_order_release);
    char kept[4 * NAME_WORDS];
    flightrec__event_name_locked(event, kept, sizeof(kept));
    flightrec__filter_named_locked(event, kept);
    flightrec__control_end(&hold);
    return 0;
}

uint32_t flightrec__event_name_words(uint32_t event, uint32_t *words)
{
    if (flightrec__region_base == NULL)
        return 0;
    struct flightrec_region_names *names = region_names();
    uint32_t serial = atomic_load_explicit(&names->serial[event],
                                           memory_order_acquire);
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
