/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The producer's run-time control, shared by its files: settings (settings.c),
 * lazy start-up and the fork handler (startup.c), start/stop and the filter
 * in force (control.c), the filter the program asks for (filter.c) and event
 * names (event-names.c).  The ring layout and the registry are in ring.h.
 */
#ifndef FLIGHTREC_RUNTIME_H
#define FLIGHTREC_RUNTIME_H

#include "ring.h"

#include <pthread.h>
#include <stdint.h>

#define FLIGHTREC_FILTER_WORDS (FLIGHTREC_EVENT_COUNT / 32)

/* Settings (settings.c). */
/* Non-zero once flightrec_setup() succeeded (until flightrec_cleanup()):
 * start-up then leaves the environment alone. */
extern int flightrec__configured;
/* Validates @config into @out without applying it; 0 or an error code. */
int flightrec__settle(const struct flightrec_config *config,
                      struct flightrec_settings *out);
/* Puts @next in force (start-up from the environment). */
void flightrec__settings_install(const struct flightrec_settings *next);
/* Parses an unsigned 32-bit number; 0 or -1. */
int flightrec__parse_number(const char *text, uint32_t *out);

/* Control (control.c).  The control lock serialises every change of the
 * settings, the filter and the names; every path that takes it starts up
 * first, so that a signal handler interrupting it never has to (see
 * flightrec__try_init()). */
extern pthread_mutex_t flightrec__control_lock;
/* The filter the program asked for (under the control lock). */
extern uint32_t flightrec__filter_wanted[FLIGHTREC_FILTER_WORDS];
/* Puts the wanted filter in force, or zeros while stopped; takes effect at
 * the next event of every thread.  Called with the control lock held. */
void flightrec__filter_publish(void);
void flightrec__set_running_locked(int running);
void flightrec__set_running(int running);

/* Filter (filter.c): parses @spec and applies it, or changes nothing;
 * takes the control lock.  0 or FLIGHTREC_EINVAL_CONFIG. */
int flightrec__filter_parse(const char *spec);

#endif
