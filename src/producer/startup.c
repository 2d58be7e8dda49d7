/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Lazy start-up on first use (the environment, unless flightrec_setup()
 * came first; the time base; the thread-exit hook) and the fork handler.
 */
#include "platform.h"
#include "runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Start-up state: 0 not begun, 1 under way, 2 done.  Not pthread_once: a
 * signal handler that records while its own thread is starting up must
 * not wait for itself (flightrec__try_init()). */
static _Atomic int init_state;
static _Thread_local int init_is_mine;      /* this thread runs start-up */

static void after_fork_child(void)
{
    pthread_mutex_init(&flightrec__control_lock, NULL);
    flightrec__registry_reset_after_fork();
    flightrec__drain_reset_after_fork();
}

static void init_once_fn(void)
{
    flightrec__timebase_init();
    flightrec__registry_init();
    flightrec__port_at_fork(flightrec__registry_before_fork,
                            flightrec__registry_after_fork_parent,
                            after_fork_child);
    if (flightrec__region_create(flightrec__settings()) != 0) {
        static const char text[] =
            "flightrec: cannot reserve memory for the ring region; "
            "recording is off\n";
        flightrec__port_message(text, sizeof(text) - 1);
        flightrec__set_running(0);
        return;
    }
    /* Known at once except for a counter that needs calibrating. */
    flightrec__timebase_publish_if_ready();
    /* FLIGHTREC_FATAL, whoever configures the rings. */
    flightrec__fatal_from_env();
    if (flightrec__configured)
        return;

    struct flightrec_config config;
    struct flightrec_settings next;
    char message[160];
    flightrec_config_init(&config);
    int rc = flightrec_config_from_env(&config, message, sizeof(message));
    enum flightrec_config_field field;
    if (rc == 0 && (rc = flightrec__settle(&config, &next, &field)) != 0) {
        /* Not reached while each variable is checked as it is read;
         * should a combination ever be refused, name its field. */
        snprintf(message, sizeof(message), "%s: %s",
                 field == FLIGHTREC_FIELD_ITEMS
                     ? "FLIGHTREC_ITEMS"
                     : field == FLIGHTREC_FIELD_SIGNAL_ITEMS
                           ? "FLIGHTREC_SIGNAL_ITEMS"
                           : "FLIGHTREC_MODE",
                 flightrec_strerror(rc));
    }
    const char *events = flightrec__port_getenv("FLIGHTREC_EVENTS");
    size_t bad;
    if (rc == 0 && events != NULL &&
        (rc = flightrec__filter_parse(events, 1, &bad)) != 0) {
        char why[64];
        if (strlen(events) >= FLIGHTREC_REMEMBERED_SPEC_BYTES)
            snprintf(why, sizeof(why), "longer than %d bytes",
                     FLIGHTREC_REMEMBERED_SPEC_BYTES - 1);
        else
            snprintf(why, sizeof(why), "bad filter term at byte %zu",
                     bad + 1);
        flightrec__refusal(message, sizeof(message), "FLIGHTREC_EVENTS",
                           events, why);
    }
    if (rc != 0) {
        /* Nobody to return the error to: say it once and stay off rather
         * than record with a configuration nobody asked for. */
        char line[200];
        int n = snprintf(line, sizeof(line),
                         "flightrec: %s; recording is off\n", message);
        if (n > 0)
            flightrec__port_message(line, (size_t)n);
        flightrec__set_running(0);
        return;
    }
    flightrec__settings_install(&next);
    flightrec__set_running(config.start);
}

int flightrec__try_init(void)
{
    int state = atomic_load_explicit(&init_state, memory_order_acquire);
    if (state == 2)
        return 0;
    if (state == 0 && atomic_compare_exchange_strong_explicit(
                          &init_state, &state, 1, memory_order_acquire,
                          memory_order_acquire)) {
        init_is_mine = 1;
        atomic_signal_fence(memory_order_seq_cst);
        init_once_fn();
        atomic_store_explicit(&init_state, 2, memory_order_release);
        atomic_signal_fence(memory_order_seq_cst);
        init_is_mine = 0;
        return 0;
    }
    return -1;
}

int flightrec__init_is_mine(void)
{
    return init_is_mine;
}

void flightrec__ensure_init(void)
{
    while (flightrec__try_init() != 0)
        flightrec__port_yield(); /* another thread is starting up */
}
