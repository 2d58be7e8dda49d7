/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The event filter the program asks for: set, get and the spec parser.
 *
 * A spec is a comma-separated list of terms, applied in order, each
 * optionally prefixed with '+' (record, the default) or '-' (ignore):
 * "all", "user" (512..1023), "system" (0..511), a decimal id or range
 * "300-320", or an event name or glob ('*' any run, '?' one character),
 * matched without regard to case against the system event names, USER_<n>
 * and the names the program registered.  The names and globs of
 * FLIGHTREC_EVENTS also apply to events the program names later.
 */
#include "runtime.h"
#include "system-event-names.h"

#include <pthread.h>
#include <string.h>

#define TERM_BYTES 72             /* a registered name is up to 63 bytes */
/* FLIGHTREC_EVENTS as read at start-up, kept for later names (under the
 * control lock). */
static char remembered[FLIGHTREC_REMEMBERED_SPEC_BYTES];

enum term_kind { TERM_IDS, TERM_NAME };

struct term {
    int enabled;
    enum term_kind kind;
    uint32_t first, last;         /* TERM_IDS */
    char pattern[TERM_BYTES];     /* TERM_NAME, NUL-terminated */
};

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

static char fold(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* Glob match without regard to ASCII case: '*' any run, '?' one byte.
 * Backtracks only to the last '*', so it is linear in practice. */
static int glob_match(const char *pattern, const char *name)
{
    const char *star = NULL, *resume = NULL;
    while (*name != '\0') {
        if (*pattern == '*') {
            star = pattern++;
            resume = name;
        } else if (*pattern == '?' || fold(*pattern) == fold(*name)) {
            pattern++;
            name++;
        } else if (star != NULL) {
            pattern = star + 1;
            name = ++resume;
        } else {
            return 0;
        }
    }
    while (*pattern == '*')
        pattern++;
    return *pattern == '\0';
}

static int same_word(const char *a, const char *b)
{
    while (*a != '\0' && fold(*a) == fold(*b)) {
        a++;
        b++;
    }
    return *a == '\0' && *b == '\0';
}

/* Parses one term of @len bytes at @text into @out; 0 or -1. */
static int parse_term(const char *text, size_t len, struct term *out)
{
    out->enabled = 1;
    if (len > 0 && (text[0] == '-' || text[0] == '+')) {
        out->enabled = text[0] == '+';
        text++;
        len--;
    }
    if (len == 0 || len >= TERM_BYTES)
        return -1;
    char word[TERM_BYTES];
    memcpy(word, text, len);
    word[len] = '\0';
    out->kind = TERM_IDS;
    if (same_word(word, "all")) {
        out->first = 0;
        out->last = FLIGHTREC_EVENT_COUNT - 1;
        return 0;
    }
    if (same_word(word, "user")) {
        out->first = FLIGHTREC_EV_USER_0;
        out->last = FLIGHTREC_EVENT_COUNT - 1;
        return 0;
    }
    if (same_word(word, "system")) {
        out->first = 0;
        out->last = FLIGHTREC_EV_USER_0 - 1;
        return 0;
    }
    if (word[0] >= '0' && word[0] <= '9') {
        char *dash = strchr(word, '-');
        if (dash != NULL)
            *dash = '\0';
        if (flightrec__parse_decimal(word, &out->first) != 0)
            return -1;
        out->last = out->first;
        if (dash != NULL &&
            flightrec__parse_decimal(dash + 1, &out->last) != 0)
            return -1;
        if (out->first > out->last || out->last >= FLIGHTREC_EVENT_COUNT)
            return -1;
        return 0;
    }
    out->kind = TERM_NAME;
    memcpy(out->pattern, word, len + 1);
    return 0;
}

/* Whether the name term @pattern covers @event, by the name the program
 * gave it (@registered, "" if none), its system name or USER_<n>. */
static int name_covers(const char *pattern, uint32_t event,
                       const char *system_name, const char *registered)
{
    if (registered[0] != '\0' && glob_match(pattern, registered))
        return 1;
    if (event < FLIGHTREC_EV_USER_0)
        return system_name[0] != '\0' && glob_match(pattern, system_name);
    char user_name[16] = "USER_";
    uint32_t n = event - FLIGHTREC_EV_USER_0;
    size_t at = 5;
    if (n >= 100)
        user_name[at++] = (char)('0' + n / 100);
    if (n >= 10)
        user_name[at++] = (char)('0' + n / 10 % 10);
    user_name[at++] = (char)('0' + n % 10);
    user_name[at] = '\0';
    return glob_match(pattern, user_name);
}

/* Applies a name term to @words: every event whose name it matches; how
 * many it matched. */
static uint32_t apply_name(uint32_t *words, const struct term *term)
{
    const char *system_name = flightrec_system_names;
    uint32_t matched = 0;
    for (uint32_t id = 0; id < FLIGHTREC_EVENT_COUNT; id++) {
        char registered[64];
        flightrec__event_name_locked(id, registered, sizeof(registered));
        const char *own = id < FLIGHTREC_SYSTEM_NAMES_COUNT ? system_name : "";
        if (name_covers(term->pattern, id, own, registered)) {
            filter_apply(words, id, id, term->enabled);
            matched++;
        }
        if (id < FLIGHTREC_SYSTEM_NAMES_COUNT)
            system_name += strlen(system_name) + 1;
    }
    return matched;
}

/* Walks the terms of @spec, calling @fn(term, context) for each while it
 * returns 0; 0, or -1 at the first bad term (its offset in @bad). */
static int for_each_term(const char *spec, size_t *bad,
                         int (*fn)(const struct term *, void *), void *context)
{
    const char *at = spec;
    while (*at != '\0') {
        size_t len = strcspn(at, ",");
        struct term term;
        if (parse_term(at, len, &term) != 0 || fn(&term, context) != 0) {
            if (bad != NULL)
                *bad = (size_t)(at - spec);
            return -1;
        }
        at += len;
        if (*at == ',')
            at++;
    }
    return 0;
}

struct application {
    uint32_t words[FLIGHTREC_FILTER_WORDS];
    int names_may_come;   /* a name matching nothing may be registered later */
};

static int apply_term(const struct term *term, void *context)
{
    struct application *a = context;
    if (term->kind == TERM_IDS) {
        filter_apply(a->words, term->first, term->last, term->enabled);
        return 0;
    }
    return apply_name(a->words, term) == 0 && !a->names_may_come ? -1 : 0;
}

int flightrec_filter_parse(const char *spec)
{
    flightrec__ensure_init();
    return flightrec__filter_parse(spec, 0, NULL);
}

int flightrec__filter_parse(const char *spec, int remember, size_t *bad)
{
    struct application a = {.names_may_come = remember};
    int rc = 0;
    pthread_mutex_lock(&flightrec__control_lock);
    memcpy(a.words, flightrec__filter_wanted, sizeof(a.words));
    if (remember && strlen(spec) >= sizeof(remembered)) {
        if (bad != NULL)
            *bad = sizeof(remembered) - 1;
        rc = FLIGHTREC_EINVAL_CONFIG;
    } else if (for_each_term(spec, bad, apply_term, &a) != 0) {
        rc = FLIGHTREC_EINVAL_CONFIG;
    }
    if (rc == 0) {
        memcpy(flightrec__filter_wanted, a.words, sizeof(a.words));
        flightrec__filter_publish();
        if (remember)
            strcpy(remembered, spec);
    }
    pthread_mutex_unlock(&flightrec__control_lock);
    return rc;
}

/* The verdict of the remembered spec on one newly named event. */
struct verdict {
    uint32_t event;
    const char *name;
    int enabled;          /* of the last term that covers the event */
    int by_new_name;      /* a name term matched the new name */
};

static int judge_term(const struct term *term, void *context)
{
    struct verdict *v = context;
    if (term->kind == TERM_IDS) {
        if (v->event >= term->first && v->event <= term->last)
            v->enabled = term->enabled;
        return 0;
    }
    const char *system_name = "";
    if (v->event < FLIGHTREC_SYSTEM_NAMES_COUNT) {
        system_name = flightrec_system_names;
        for (uint32_t id = 0; id < v->event; id++)
            system_name += strlen(system_name) + 1;
    }
    if (glob_match(term->pattern, v->name)) {
        v->enabled = term->enabled;
        v->by_new_name = 1;
    } else if (name_covers(term->pattern, v->event, system_name, "")) {
        v->enabled = term->enabled;
    }
    return 0;
}

void flightrec__filter_named_locked(uint32_t event, const char *name)
{
    if (remembered[0] == '\0')
        return;
    struct verdict v = {.event = event, .name = name};
    (void)for_each_term(remembered, NULL, judge_term, &v);
    if (!v.by_new_name)
        return; /* the spec says nothing new about this event */
    filter_apply(flightrec__filter_wanted, event, event, v.enabled);
    flightrec__filter_publish();
}
