/* SPDX-License-Identifier: BSD-2-Clause */
/* Event filter specs (filter-spec.h). */
#include "filter-spec.h"

#include "../producer/system-event-names.h"

#include <flightrec/events.h>
#include <flightrec/format.h>

#include <stdio.h>
#include <string.h>

_Static_assert(FR_FILTER_WORDS * 32 == FLIGHTREC_EVENT_COUNT,
               "one bit per event id");

#define TERM_BYTES 72             /* a registered name is up to 63 bytes */

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

/* A decimal number of 32 bits: digits only, and no leading zero, which C
 * programmers read as octal; 0 or -1. */
static int parse_decimal(const char *text, uint32_t *out)
{
    uint64_t value = 0;
    if (*text == '\0' || (text[0] == '0' && text[1] != '\0'))
        return -1;
    for (; *text != '\0'; text++) {
        if (*text < '0' || *text > '9')
            return -1;
        value = value * 10 + (uint64_t)(*text - '0');
        if (value > UINT32_MAX)
            return -1;
    }
    *out = (uint32_t)value;
    return 0;
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
        if (parse_decimal(word, &out->first) != 0)
            return -1;
        out->last = out->first;
        if (dash != NULL &&
            parse_decimal(dash + 1, &out->last) != 0)
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
static uint32_t apply_name(uint32_t *words, const struct term *term,
                           fr_registered_name_fn registered_name,
                           void *context)
{
    const char *system_name = flightrec_system_names;
    uint32_t matched = 0;
    for (uint32_t id = 0; id < FLIGHTREC_EVENT_COUNT; id++) {
        char registered[64];
        registered[0] = '\0';
        if (registered_name != NULL)
            registered_name(id, registered, sizeof(registered), context);
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
    uint32_t words[FR_FILTER_WORDS];
    int names_may_come;   /* a name matching nothing may be registered later */
    fr_registered_name_fn registered;
    void *context;
};

static int apply_term(const struct term *term, void *context)
{
    struct application *a = context;
    if (term->kind == TERM_IDS) {
        filter_apply(a->words, term->first, term->last, term->enabled);
        return 0;
    }
    return apply_name(a->words, term, a->registered, a->context) == 0 &&
                   !a->names_may_come
               ? -1
               : 0;
}

int fr_filter_spec_apply(uint32_t *words, const char *spec,
                         fr_registered_name_fn registered, void *context,
                         int names_may_come, size_t *bad)
{
    struct application a = {.names_may_come = names_may_come,
                            .registered = registered,
                            .context = context};
    memcpy(a.words, words, sizeof(a.words));
    if (for_each_term(spec, bad, apply_term, &a) != 0)
        return -1;
    memcpy(words, a.words, sizeof(a.words));
    return 0;
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

int fr_filter_spec_judge(const char *spec, uint32_t event, const char *name)
{
    struct verdict v = {.event = event, .name = name};
    (void)for_each_term(spec, NULL, judge_term, &v);
    return v.by_new_name ? v.enabled : -1;
}

static int bit(const uint32_t *words, uint32_t id)
{
    return (int)((words[id >> 5] >> (id & 31)) & 1u);
}

/* Appends ",+a-b" / ",-a" to @out; returns 0, or -1 when it is full. */
static int put_range(char *out, size_t size, size_t *len, char sign,
                     uint32_t first, uint32_t last, int first_term)
{
    char term[32];
    size_t n;
    if (first == last)
        n = (size_t)snprintf(term, sizeof(term), "%s%c%u",
                             first_term ? "" : ",", sign, (unsigned)first);
    else
        n = (size_t)snprintf(term, sizeof(term), "%s%c%u-%u",
                             first_term ? "" : ",", sign, (unsigned)first,
                             (unsigned)last);
    if (*len + n + 4 > size)
        return -1;
    memcpy(out + *len, term, n + 1);
    *len += n;
    return 0;
}

void fr_filter_spec_format(const uint32_t *words, char *out, size_t size)
{
    if (size == 0)
        return;
    uint32_t on = 0;
    for (uint32_t id = 0; id < FLIGHTREC_EVENT_COUNT; id++)
        on += (uint32_t)bit(words, id);
    /* Name the exceptions to whichever is the majority. */
    int base = on * 2 >= FLIGHTREC_EVENT_COUNT;
    size_t len = (size_t)snprintf(out, size, "%s", base ? "all" : "-all");
    if (len >= size) {
        out[size - 1] = '\0';
        return;
    }
    for (uint32_t id = 0; id < FLIGHTREC_EVENT_COUNT;) {
        if (bit(words, id) == base) {
            id++;
            continue;
        }
        uint32_t last = id;
        while (last + 1 < FLIGHTREC_EVENT_COUNT && bit(words, last + 1) != base)
            last++;
        if (put_range(out, size, &len, base ? '-' : '+', id, last, 0) != 0) {
            if (len + 4 <= size)
                memcpy(out + len, "...", 4);
            return;
        }
        id = last + 1;
    }
}

void fr_filter_in_force(const uint32_t *wanted, int running, uint32_t *out)
{
    for (uint32_t i = 0; i < FR_FILTER_WORDS; i++) {
        uint32_t word = running ? wanted[i] : 0;
        for (uint32_t id = FLIGHTREC_EV_UPTIME_HIGH;
             id <= FLIGHTREC_EV_UPTIME_LOW; id++)
            if (id / 32 == i)
                word &= ~(1u << (id % 32));
        out[i] = word;
    }
}
