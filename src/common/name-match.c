/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Name patterns (see name-match.h).  Globs are fnmatch(3)'s: no second
 * pattern language to learn or to keep in step.
 */
#define _POSIX_C_SOURCE 200809L

#include "name-match.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int flightrec__name_is_glob(const char *pattern)
{
    return strpbrk(pattern, "*?[") != NULL;
}

int flightrec__name_match(const char *pattern, const char *name)
{
    if (strcmp(pattern, name) == 0)
        return 1;
    return flightrec__name_is_glob(pattern) && fnmatch(pattern, name, 0) == 0;
}

static char fold(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

#define NAME_DISTANCE_MAX 64

unsigned flightrec__name_distance(const char *a, const char *b)
{
    size_t la = strnlen(a, NAME_DISTANCE_MAX);
    size_t lb = strnlen(b, NAME_DISTANCE_MAX);
    unsigned row[NAME_DISTANCE_MAX + 1];

    /* One row of the Levenshtein table at a time. */
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned best = diag + (fold(a[i - 1]) != fold(b[j - 1]));
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

void flightrec__name_suggest_init(struct flightrec__name_suggest *s,
                                  const char *pattern)
{
    memset(s, 0, sizeof(*s));
    s->pattern = pattern;
    s->best_distance = UINT_MAX;
}

void flightrec__name_suggest_offer(struct flightrec__name_suggest *s,
                                   const char *candidate)
{
    size_t n = strlen(s->pattern);

    if (candidate[0] == '\0')
        return;
    if (!flightrec__name_is_glob(s->pattern) &&
        strncmp(candidate, s->pattern, n) == 0)
        s->prefixed++;
    unsigned d = flightrec__name_distance(s->pattern, candidate);
    /* Ties go to the first offered: deterministic for a given order. */
    if (d < s->best_distance) {
        s->best_distance = d;
        snprintf(s->best, sizeof s->best, "%s", candidate);
    }
}

const char *flightrec__name_suggestion(const struct flightrec__name_suggest *s,
                                       char *buf, size_t size)
{
    size_t n = strnlen(s->pattern, NAME_DISTANCE_MAX);
    unsigned limit = (unsigned)(n / 3 > 2 ? n / 3 : 2);

    if (size == 0)
        return NULL;
    if (s->prefixed > 0) {
        snprintf(buf, size, "%s*", s->pattern);
        return buf;
    }
    if (s->best_distance > limit)
        return NULL;
    snprintf(buf, size, "%s", s->best);
    return buf;
}
