/* SPDX-License-Identifier: BSD-2-Clause */
/* Event names registered by the program; the stream carries them. */
#include "ring.h"

#include <pthread.h>

#define NAME_WORDS 16   /* 64 bytes per event name */

static _Atomic uint32_t event_names[FLIGHTREC_EVENT_COUNT][NAME_WORDS];
static _Atomic uint32_t event_name_serial[FLIGHTREC_EVENT_COUNT];

int flightrec_event_set_name(uint32_t event, const char *name)
{
    if (event >= FLIGHTREC_EVENT_COUNT || name == NULL || name[0] == '\0')
        return FLIGHTREC_EINVAL_CONFIG;
    uint32_t words[NAME_WORDS];
    flightrec__pack_name(name, words, NAME_WORDS - 1); /* keep a NUL */
    words[NAME_WORDS - 1] = 0;
    flightrec__ensure_init();
    pthread_mutex_lock(&flightrec__control_lock);
    for (size_t i = 0; i < NAME_WORDS; i++)
        atomic_store_explicit(&event_names[event][i], words[i],
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&event_name_serial[event], 1,
                              memory_order_release);
    char kept[4 * NAME_WORDS];
    flightrec__event_name_locked(event, kept, sizeof(kept));
    flightrec__filter_named_locked(event, kept);
    pthread_mutex_unlock(&flightrec__control_lock);
    return 0;
}

uint32_t flightrec__event_name_words(uint32_t event, uint32_t *words)
{
    uint32_t serial = atomic_load_explicit(&event_name_serial[event],
                                           memory_order_acquire);
    if (serial == 0)
        return 0;
    for (size_t i = 0; i < NAME_WORDS; i++)
        words[i] = atomic_load_explicit(&event_names[event][i],
                                        memory_order_relaxed);
    return serial;
}

size_t flightrec__event_name_locked(uint32_t event, char *out, size_t size)
{
    size_t n = 0;
    for (; n + 1 < size && n < 4 * NAME_WORDS; n++) {
        uint32_t word = atomic_load_explicit(&event_names[event][n / 4],
                                             memory_order_relaxed);
        char c = (char)((word >> (8 * (n % 4))) & 0xffu);
        if (c == '\0')
            break;
        out[n] = c;
    }
    out[n] = '\0';
    return n;
}
