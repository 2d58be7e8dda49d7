/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The recording runtime's internal interface: settings, start-up, time
 * base, the registry of rings and the calling thread's binding to them.
 */
#ifndef FLIGHTREC_RUNTIME_H
#define FLIGHTREC_RUNTIME_H

#include "ring.h"

/* Configuration in force (settings.c). */
struct flightrec_settings {
    uintptr_t items;            /* thread ring */
    uintptr_t signal_items;
    int mode;
    uint32_t retained;
    int prefault;               /* touch ring pages at attach */
};
const struct flightrec_settings *flightrec__settings(void);

/* Lazy start-up on the first event: environment, region, clock, fork
 * handler.  ensure_init() waits while another thread starts up;
 * try_init() returns -1 instead. */
void flightrec__ensure_init(void);
int flightrec__try_init(void);
/* Whether the calling thread is the one running start-up (a handler that
 * interrupted it must not wait for it). */
int flightrec__init_is_mine(void);

/* Time base (timebase.c). */
struct flightrec_timebase {
    uint64_t base;              /* counter value at uptime 0 */
    uint64_t realtime_ns;       /* CLOCK_REALTIME at uptime 0 */
};
const struct flightrec_timebase *flightrec__timebase(void);
void flightrec__timebase_init(void);

/* The region (region.c): created at start-up. */
int flightrec__region_create(const struct flightrec_settings *settings);
/* Copies the control state the API set into the region's control block. */
void flightrec__region_publish_control(const uint32_t *filter, int running,
                                       const struct flightrec_settings *s);
/* Counts an event that found no ring. */
void flightrec__count_lost_without_ring(uintptr_t n);

/* Registry (registry.c). */
uint32_t flightrec__registry_count(void);
/* Owner side: attach the calling thread (both rings); 0 or -1. */
int flightrec__attach(void);
void flightrec__registry_init(void);
void flightrec__registry_reset_after_fork(void);
/* Frees (gives back the pages of) exited threads' rings and empties the
 * others; under the drain lock. */
void flightrec__registry_cleanup(void);
/* A drain read everything of a retired pair: it may be reused at once. */
void flightrec__registry_pair_read(ring_t *thread_ring);
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

/* Reading (dump.c). */
void flightrec__drain_reset_after_fork(void);
void flightrec__rings_cleanup(void);

/* Event names (event-names.c). */
uint32_t flightrec__event_name_words(uint32_t event, uint32_t *words);

#endif
