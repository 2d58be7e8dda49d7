/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The producer's run-time control, shared by its files: settings (settings.c),
 * lazy start-up and the fork handler (startup.c), start/stop and the filter
 * in force (control.c), the filter the program asks for (filter.c) and event
 * names (event-names.c); the region, the registry of rings and the calling
 * thread's binding to them.  The ring layout is in ring.h.
 */
#ifndef FLIGHTREC_RUNTIME_H
#define FLIGHTREC_RUNTIME_H

#include "ring.h"

#include <flightrec.h>

#include <stddef.h>
#include <stdint.h>

/* The runtime's locks (control, drain).  On firmware they are taken in task
 * context only, on one CPU whose scheduler switches tasks cooperatively:
 * nobody else can hold them, so they only mark. */
#if defined(FLIGHTREC_PORT_FIRMWARE)
typedef struct { int held; } flightrec__mutex_t;
#define FLIGHTREC__MUTEX_INITIALIZER { 0 }
static inline void flightrec__mutex_lock(flightrec__mutex_t *m) { m->held = 1; }
static inline void flightrec__mutex_unlock(flightrec__mutex_t *m) { m->held = 0; }
static inline void flightrec__mutex_init(flightrec__mutex_t *m) { m->held = 0; }
#else
#include <pthread.h>
typedef pthread_mutex_t flightrec__mutex_t;
#define FLIGHTREC__MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define flightrec__mutex_lock pthread_mutex_lock
#define flightrec__mutex_unlock pthread_mutex_unlock
#define flightrec__mutex_init(m) pthread_mutex_init((m), NULL)
#endif

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
/* Whether the calling thread is the one running start-up (a handler that
 * interrupted it must not wait for it) (startup.c). */
int flightrec__init_is_mine(void);
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
extern flightrec__mutex_t flightrec__control_lock;
/* A change of the control words: the control lock, and the region's
 * control lock while another process may change them too (`flightrec
 * ctl`); begin() also takes in what that process changed. */
struct flightrec__control_hold {
    int region_held;
};
void flightrec__control_begin(struct flightrec__control_hold *hold);
void flightrec__control_end(struct flightrec__control_hold *hold);
/* For reading the control words only: the control lock and what another
 * process changed; ended with flightrec__mutex_unlock(). */
void flightrec__control_begin_read(void);
/* The filter the program asked for (under the control lock). */
extern uint32_t flightrec__filter_wanted[FLIGHTREC_FILTER_WORDS];
/* Puts the wanted filter in force, or zeros while stopped; takes effect at
 * the next event of every thread.  Called with the control lock held. */
void flightrec__filter_publish(void);
void flightrec__set_running_locked(int running);
void flightrec__set_running(int running);
/* Recording off for good (a fork child without rings of its own): later
 * starts change nothing.  Takes the control lock. */
void flightrec__refuse_running(void);

/* Filter (filter.c). */
#define FLIGHTREC_REMEMBERED_SPEC_BYTES FLIGHTREC_REGION_REMEMBERED_BYTES
/* Parses @spec and applies it, or changes nothing; takes the control lock.
 * A name or glob that matches no event is an error, except with @remember:
 * then the names and globs of @spec also apply to events named later
 * (FLIGHTREC_EVENTS is read before the program names its events), and
 * specs of FLIGHTREC_REMEMBERED_SPEC_BYTES or more are refused.  0, or
 * FLIGHTREC_EINVAL_CONFIG and the offset of the bad term in @bad. */
int flightrec__filter_parse(const char *spec, int remember, size_t *bad);
/* The remembered spec before the region exists (region.c copies it in). */
const char *flightrec__filter_remembered_early(void);

/* @event was just named @name: applies the remembered spec to it.  Called
 * with the control lock held. */
void flightrec__filter_named_locked(uint32_t event, const char *name);

/* Event names (event-names.c): the name registered for @event, unpacked
 * into @out (NUL-terminated); its length, 0 if none.  Control lock held. */
size_t flightrec__event_name_locked(uint32_t event, char *out, size_t size);

/* Time base (timebase.c). */
struct flightrec_timebase {
    uint64_t base;              /* counter value at uptime 0 */
    uint64_t realtime_ns;       /* CLOCK_REALTIME at uptime 0 */
};
const struct flightrec_timebase *flightrec__timebase(void);
void flightrec__timebase_init(void);
/* Puts the counter frequency into the region as soon as it is known
 * without waiting, for readers outside the process (a slow path calls it
 * until flightrec__frequency_published). */
void flightrec__timebase_publish_if_ready(void);
extern _Atomic int flightrec__frequency_published;

/* The region (region.c): created at start-up. */
int flightrec__region_create(const struct flightrec_settings *settings);
/* Copies the control state into the region: the wanted filter and the
 * running flag into the control block, the filter in force into the hot
 * page; steps the generation.  Control lock and region lock held. */
void flightrec__region_publish_control(const uint32_t *filter, int running,
                                       const uint32_t *in_force);
/* The settings' mode and sizes into the control block. */
void flightrec__region_publish_settings(const struct flightrec_settings *s);
/* The mode of new rings: the control block's (which `flightrec ctl` may
 * change), or the settings' before the region exists. */
int flightrec__current_mode(void);
/* Counts an event that found no ring. */
void flightrec__count_lost_without_ring(uintptr_t n);

/* Registry (registry.c). */
uint32_t flightrec__registry_count(void);
/* Owner side: attach the calling thread (both rings); 0 or -1. */
int flightrec__attach(void);
void flightrec__registry_init(void);
/* Whether some thread holds the registry lock now: a fatal-signal handler
 * does not attach a ring (and wait for it) while it is held. */
int flightrec__registry_busy(void);
void flightrec__registry_reset_after_fork(void);
/* fork() hooks: a shared region's snapshot for the child (registry.c). */
void flightrec__registry_before_fork(void);
void flightrec__registry_after_fork_parent(void);
/* Frees (gives back the pages of) exited threads' rings and empties the
 * others; under the drain lock. */
void flightrec__registry_cleanup(void);
/* A drain read everything of a retired pair: it may be reused at once. */
void flightrec__registry_pair_read(ring_t *thread_ring);
/* The drain lock, for the in-process server's drains (dump.c). */
void flightrec__drain_enter(void);
void flightrec__drain_leave(void);
/* Non-zero while the in-process server runs: it is the one consumer
 * (server-thread.c). */
extern _Atomic int flightrec__server_active;
void flightrec__server_forget_after_fork(void);
/* Packs a name into LSB-first words. */
void flightrec__pack_name(const char *name, uint32_t *words, size_t nwords);

/* The calling thread's rings (produce.c). */
void flightrec__self_bind(ring_t *main_ring, ring_t *signal_ring);
void flightrec__self_unbind(void);
ring_t *flightrec__self_ring(void);
/* The thread is gone for the runtime: later events are counted as lost. */
void flightrec__self_exited(void);
/* After fork() in the child: the next event writes a sync pair. */
void flightrec__self_resync(void);
#if defined(FLIGHTREC_PORT_FIRMWARE)
/* The slow path of every record on firmware (produce-multi.c): @n items
 * as flightrec_prepare() at @now, an add of each and a commit; the main
 * writer's deadline is 0, and @deadline is what it was. */
void flightrec__record_slow(uint64_t now, uint64_t deadline,
                            const struct flightrec_item_in *items, size_t n);
#endif

/* Reading (dump.c). */
struct frw_sink;
/* Writes a complete stream of what the rings hold now onto @sink, then
 * flushes it: takes no lock and allocates nothing (flightrec_dump(), the
 * fatal-signal dump).  Start-up must be done and the region exist. */
int flightrec__dump_to(struct frw_sink *sink);
void flightrec__drain_reset_after_fork(void);
void flightrec__rings_cleanup(void);

/* The fatal-signal dump (fatal.c): applies FLIGHTREC_FATAL, at start-up
 * (hosted ports only). */
void flightrec__fatal_from_env(void);

#endif
