/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Matching event and thread names against user patterns, and
 * suggesting the nearest name for a pattern that matched nothing.
 *
 * Internal, shared by the flightrec command (--event, --thread) and meant
 * for the producer's FLIGHTREC_EVENTS parser, so that both accept the same
 * patterns: a term equals a name exactly, or is a shell glob (fnmatch(3):
 * `*`, `?`, `[...]`) that matches it.
 */
#ifndef FLIGHTREC_NAME_MATCH_H
#define FLIGHTREC_NAME_MATCH_H

#include <stddef.h>

/** Whether @a pattern holds a glob character (`*`, `?` or `[`). */
int flightrec__name_is_glob(const char *pattern);

/** Whether @a name equals @a pattern or matches it as a glob. */
int flightrec__name_match(const char *pattern, const char *name);

/**
 * Edit distance (insertions, deletions, substitutions; ASCII letters
 * compared without case) between the first 64 bytes of @a a and @a b.
 */
unsigned flightrec__name_distance(const char *a, const char *b);

/** Finds the best suggestion for a pattern among candidate names. */
struct flightrec__name_suggest {
    const char *pattern;
    unsigned best_distance;  /**< of best, UINT_MAX while none */
    size_t prefixed;         /**< candidates that start with the pattern */
    char best[64];
};

void flightrec__name_suggest_init(struct flightrec__name_suggest *s,
                                  const char *pattern);
/** Offers one candidate (a name the pattern did not match). */
void flightrec__name_suggest_offer(struct flightrec__name_suggest *s,
                                   const char *candidate);
/**
 * The suggestion, or NULL when no candidate is close: "PATTERN*" when the
 * pattern (not a glob) begins candidate names, else the nearest candidate
 * within an edit distance of a third of the pattern's length (at least 2).
 * Written to @a buf of @a size bytes.
 */
const char *flightrec__name_suggestion(const struct flightrec__name_suggest *s,
                                       char *buf, size_t size);

#endif
