/* SPDX-License-Identifier: BSD-2-Clause */
/* What each event id means to a viewer, looked up by name once per stream so
 * that RTEMS v1 numbering and flightrec/v10 numbering both work. */
#ifndef FLIGHTREC_CONVERT_EVENTS_H
#define FLIGHTREC_CONVERT_EVENTS_H

#include <stdint.h>

#include "convert.h"

#define FR_EVENT_IDS 1024u

enum fr_role {
    FR_ROLE_PLAIN = 0,      /* a single event */
    FR_ROLE_PAIR_ENTRY,     /* X_ENTRY whose id + 1 is X_EXIT */
    FR_ROLE_PAIR_EXIT,
    FR_ROLE_SWITCH_IN,
    FR_ROLE_SWITCH_OUT,
    FR_ROLE_IRQ_ENTRY,
    FR_ROLE_IRQ_EXIT,
    FR_ROLE_MALLOC_ENTRY,
    FR_ROLE_MALLOC_EXIT,
    FR_ROLE_FREE_ENTRY,
    FR_ROLE_FREE_EXIT,
    FR_ROLE_FUNC_ENTRY,
    FR_ROLE_FUNC_EXIT,
    FR_ROLE_LOCK_ENTRY,     /* starts waiting for a lock */
    FR_ROLE_LOCK_EXIT,      /* holds the lock */
    FR_ROLE_UNLOCK,
    FR_ROLE_UNBLOCK         /* a thread becomes ready: data = thread id */
};

struct fr_events {
    uint8_t role[FR_EVENT_IDS];
    uint8_t syscall[FR_EVENT_IDS];  /* PAIR_* that is a POSIX call */
    /* Lower-case base name of pairs, e.g. "read" for READ_ENTRY/EXIT;
     * indexed by the ENTRY and the EXIT id alike. */
    char base[FR_EVENT_IDS][24];
};

/* Fills @a ev from the source's names of the system ids (0..511). */
void fr_events_init(struct fr_events *ev, const struct fr_source *src);

/* RTEMS thread ids of the internal API (idle threads) map to tid 0, as
 * Linux's per-CPU swapper. */
int fr_rtems_is_idle(int64_t thread_id);

#endif
