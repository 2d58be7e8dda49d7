/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The producer's run-time control, shared by its files: settings (settings.c),
 * lazy start-up and the fork handler (startup.c), start/stop and the filter
 * in force (control.c), the filter the program asks for (filter.c) and event
 * names (event-names.c).  The ring layout and the registry are in ring.h,
 * which includes this header.
 */
#ifndef FLIGHTREC_RUNTIME_H
#define FLIGHTREC_RUNTIME_H

#include <flightrec.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define FLIGHTREC_FILTER_WORDS (FLIGHTREC_EVENT_COUNT / 32)

/* Configuration in force (settings.c). */
struct flightrec_settings {
    uintptr_t items;            /* thread ring */
    uintptr_t signal_items;
    int mode;
    uint32_t retained;
    int prefault;               /* touch a ring's pages when it is made */
};
const struct flightrec_settings *flightrec__settings(void);
/* Lazy start-up on the first event: environment, clock, fork handler.
 * ensure_init() waits while another thread starts up; try_init() returns
 * -1 instead (signal handlers: the starting thread may be their own)
 * (startup.c). */
void flightrec__ensure_init(void);
int flightrec__try_init(void);
/* The name registered for @event as 16 packed words, and a serial number
 * that changes with every new name (0: none) (event-names.c). */
uint32_t flightrec__event_name_words(uint32_t event, uint32_t *words);

/* Settings (settings.c). */
/* Non-zero once flightrec_setup() succeeded (until flightrec_cleanup()):
 * start-up then leaves the environment alone. */
extern int flightrec__configured;
/* Which field of a configuration flightrec__settle() refused. */
enum flightrec_config_field {
    FLIGHTREC_FIELD_ITEMS,
    FLIGHTREC_FIELD_SIGNAL_ITEMS,
    FLIGHTREC_FIELD_MODE
};
/* Validates @config into @out without applying it; 0 or an error code, and
 * then the refused field in @field (if not NULL). */
int flightrec__settle(const struct flightrec_config *config,
                      struct flightrec_settings *out,
                      enum flightrec_config_field *field);
/* Puts @next in force (start-up from the environment). */
void flightrec__settings_install(const struct flightrec_settings *next);
/* Writes "VARIABLE=value: why" into @message (if not NULL), the value cut
 * short and its control bytes escaped: it goes to a terminal. */
void flightrec__refusal(char *message, size_t message_size,
                        const char *variable, const char *text,
                        const char *why);
/* Parses a decimal number of 32 bits (digits only); 0, or -1 when @text
 * is not a decimal number, -2 when it is above UINT32_MAX. */
int flightrec__parse_decimal(const char *text, uint32_t *out);

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

/* Filter (filter.c). */
#define FLIGHTREC_REMEMBERED_SPEC_BYTES 512
/* Parses @spec and applies it, or changes nothing; takes the control lock.
 * A name or glob that matches no event is an error, except with @remember:
 * then the names and globs of @spec also apply to events named later
 * (FLIGHTREC_EVENTS is read before the program names its events), and
 * specs of FLIGHTREC_REMEMBERED_SPEC_BYTES or more are refused.  0, or
 * FLIGHTREC_EINVAL_CONFIG and the offset of the bad term in @bad. */
int flightrec__filter_parse(const char *spec, int remember, size_t *bad);
/* @event was just named @name: applies the remembered spec to it.  Called
 * with the control lock held. */
void flightrec__filter_named_locked(uint32_t event, const char *name);

/* Event names (event-names.c): the name registered for @event, unpacked
 * into @out (NUL-terminated); its length, 0 if none.  Control lock held. */
size_t flightrec__event_name_locked(uint32_t event, char *out, size_t size);

#endif
