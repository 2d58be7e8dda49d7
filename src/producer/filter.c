/* SPDX-License-Identifier: BSD-2-Clause */
/* The event filter the program asks for: set, get and the spec parser. */
#include "runtime.h"

#include <pthread.h>
#include <string.h>

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
    pthread_mutex_lock(&flightrec__control_lock);
    filter_apply(flightrec__filter_wanted, first, last, enabled);
    flightrec__filter_publish();
    pthread_mutex_unlock(&flightrec__control_lock);
}

void flightrec_filter_set(uint32_t event, int enabled)
{
    flightrec_filter_set_range(event, event, enabled);
}

int flightrec_filter_get(uint32_t event)
{
    uint32_t id = event & FLIGHTREC_EVENT_MASK;
    flightrec__ensure_init();
    pthread_mutex_lock(&flightrec__control_lock);
    int enabled =
        (int)((flightrec__filter_wanted[id >> 5] >> (id & 31)) & 1u);
    pthread_mutex_unlock(&flightrec__control_lock);
    return enabled;
}

static int parse_range(const char *token, size_t len, uint32_t *first,
                       uint32_t *last)
{
    char text[32];
    if (len == 0 || len >= sizeof(text))
        return -1;
    memcpy(text, token, len);
    text[len] = '\0';
    if (strcmp(text, "all") == 0) {
        *first = 0;
        *last = FLIGHTREC_EVENT_COUNT - 1;
        return 0;
    }
    if (strcmp(text, "user") == 0) {
        *first = FLIGHTREC_EV_USER_0;
        *last = FLIGHTREC_EVENT_COUNT - 1;
        return 0;
    }
    if (strcmp(text, "system") == 0) {
        *first = 0;
        *last = FLIGHTREC_EV_USER_0 - 1;
        return 0;
    }
    char *dash = strchr(text + 1, '-');
    if (dash != NULL)
        *dash = '\0';
    if (flightrec__parse_number(text, first) != 0)
        return -1;
    *last = *first;
    if (dash != NULL && flightrec__parse_number(dash + 1, last) != 0)
        return -1;
    if (*first > *last || *last >= FLIGHTREC_EVENT_COUNT)
        return -1;
    return 0;
}

int flightrec_filter_parse(const char *spec)
{
    flightrec__ensure_init();
    return flightrec__filter_parse(spec);
}

int flightrec__filter_parse(const char *spec)
{
    uint32_t words[FLIGHTREC_FILTER_WORDS];
    pthread_mutex_lock(&flightrec__control_lock);
    memcpy(words, flightrec__filter_wanted, sizeof(words));
    const char *at = spec;
    int rc = 0;
    while (*at != '\0' && rc == 0) {
        size_t len = strcspn(at, ",");
        int enabled = 1;
        const char *token = at;
        if (*token == '-') {
            enabled = 0;
            token++;
        }
        uint32_t first, last;
        if (parse_range(token, len - (size_t)(token - at), &first, &last) != 0)
            rc = FLIGHTREC_EINVAL_CONFIG;
        else
            filter_apply(words, first, last, enabled);
        at += len;
        if (*at == ',')
            at++;
    }
    if (rc == 0) {
        memcpy(flightrec__filter_wanted, words, sizeof(words));
        flightrec__filter_publish();
    }
    pthread_mutex_unlock(&flightrec__control_lock);
    return rc;
}
