/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The event filter the program asks for: set, get and specs
 * (src/common/filter-spec.h says what a spec is).  The names and globs of
 * FLIGHTREC_EVENTS, and of `flightrec ctl filter` specs, also apply to
 * events the program names later.
 */
#include "runtime.h"

#include "../common/filter-spec.h"
#include "../common/remembered-spec.h"

#include <pthread.h>
#include <string.h>

/* FLIGHTREC_EVENTS as read at start-up, kept for later names (under the
 * control lock) until the region exists: then the region's copy, which
 * flightrec ctl extends, is the one that counts. */
static char remembered_early[FLIGHTREC_REMEMBERED_SPEC_BYTES];

const char *flightrec__filter_remembered_early(void)
{
    return remembered_early;
}

static void filter_apply(uint32_t *words, uint32_t first, uint32_t last,
                         int enabled)
{
    for (uint32_t id = first; id <= last && id < FLIGHTREC_EVENT_COUNT; id++) {
        if (enabled)
            words[id >> 5] |= 1u << (id & 31);
        else
            words[id >> 5] &= ~(1u << (id & 31));
    }
}

void flightrec_filter_set_range(uint32_t first, uint32_t last, int enabled)
{
    /* Every path that takes the control lock starts up first, so that a
     * handler interrupting it never has to (see flightrec__try_init()). */
    flightrec__ensure_init();
    struct flightrec__control_hold hold;
    flightrec__control_begin(&hold);
    filter_apply(flightrec__filter_wanted, first, last, enabled);
    flightrec__filter_publish();
    flightrec__control_end(&hold);
}

void flightrec_filter_set(uint32_t event, int enabled)
{
    flightrec_filter_set_range(event, event, enabled);
}

int flightrec_filter_get(uint32_t event)
{
    uint32_t id = event & FLIGHTREC_EVENT_MASK;
    flightrec__ensure_init();
    flightrec__control_begin_read();
    int enabled =
        (int)((flightrec__filter_wanted[id >> 5] >> (id & 31)) & 1u);
    flightrec__mutex_unlock(&flightrec__control_lock);
    return enabled;
}

static void registered_name(uint32_t event, char *out, size_t size,
                            void *context)
{
    (void)context;
    flightrec__event_name_locked(event, out, size);
}

int flightrec_filter_parse(const char *spec)
{
    flightrec__ensure_init();
    return flightrec__filter_parse(spec, 0, NULL);
}

int flightrec__filter_parse(const char *spec, int remember, size_t *bad)
{
    int rc = 0;
    struct flightrec__control_hold hold;
    flightrec__control_begin(&hold);
    if (remember && strlen(spec) >= FLIGHTREC_REMEMBERED_SPEC_BYTES) {
        if (bad != NULL)
            *bad = FLIGHTREC_REMEMBERED_SPEC_BYTES - 1;
        rc = FLIGHTREC_EINVAL_CONFIG;
    } else if (fr_filter_spec_apply(flightrec__filter_wanted, spec,
                                    registered_name, NULL, remember,
                                    bad) != 0) {
        rc = FLIGHTREC_EINVAL_CONFIG;
    }
    if (rc == 0) {
        flightrec__filter_publish();
        if (remember && flightrec__region_base != NULL)
            fr_remembered_store(region_control(), spec);
        else if (remember)
            strcpy(remembered_early, spec);
    }
    flightrec__control_end(&hold);
    return rc;
}

void flightrec__filter_named_locked(uint32_t event, const char *name)
{
    char region_copy[FLIGHTREC_REMEMBERED_SPEC_BYTES];
    const char *spec = remembered_early;
    /* The region's copy may come from another process: torn by a ctl that
     * died while writing it, it judges nothing. */
    if (flightrec__region_base != NULL) {
        (void)fr_remembered_load(region_control(), region_copy);
        spec = region_copy;
    }
    if (spec[0] == '\0')
        return;
    int verdict = fr_filter_spec_judge(spec, event, name);
    if (verdict < 0)
        return; /* the spec says nothing new about this event */
    filter_apply(flightrec__filter_wanted, event, event, verdict);
    flightrec__filter_publish();
}
