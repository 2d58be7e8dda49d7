/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Event filter specs, shared by the recording runtime (FLIGHTREC_EVENTS,
 * flightrec_filter_parse()) and `flightrec ctl PID filter SPEC`, so that
 * both accept the same specs.
 *
 * A spec is a comma-separated list of terms, applied in order, each
 * optionally prefixed with '+' (record, the default) or '-' (ignore):
 * "all", "user" (512..1023), "system" (0..511), a decimal id or range
 * "300-320", or an event name or glob ('*' any run, '?' one character),
 * matched without regard to case against the system event names, USER_<n>
 * and the names the program registered.
 *
 * Libc only, no allocation: the runtime links it.
 */
#ifndef FLIGHTREC_FILTER_SPEC_H
#define FLIGHTREC_FILTER_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define FR_FILTER_WORDS 32u

/* The name the program registered for @event, NUL-terminated in @out
 * (empty if none). */
typedef void (*fr_registered_name_fn)(uint32_t event, char *out, size_t size,
                                      void *context);

/* Applies @spec to @words (a copy: on error the caller keeps the old
 * filter).  A name or glob that matches no event is an error unless
 * @names_may_come.  0, or -1 with the offset of the bad term in @bad. */
int fr_filter_spec_apply(uint32_t *words, const char *spec,
                         fr_registered_name_fn registered, void *context,
                         int names_may_come, size_t *bad);

/* The verdict of @spec on @event, just named @name: 1 record, 0 ignore,
 * -1 the spec's names and globs say nothing about that name. */
int fr_filter_spec_judge(const char *spec, uint32_t event, const char *name);

/* @words as a short spec ("all", "all,-600-700", "-all,+351-354"), in
 * @out of @size bytes (cut short with "..." if it does not fit). */
void fr_filter_spec_format(const uint32_t *words, char *out, size_t size);

/* The filter in force from the one wanted: @wanted while @running, else
 * nothing; never the recorder's own uptime ids, which a program must not
 * record (they would shift every reader's count of its events). */
void fr_filter_in_force(const uint32_t *wanted, int running, uint32_t *out);

#endif
