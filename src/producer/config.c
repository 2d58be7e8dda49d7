/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Configuration, channel control (setup/start/stop/cleanup/rewind), the
 * event filter and event names.
 */
#include "platform.h"
#include "runtime.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_ITEMS 65536u
#define DEFAULT_RETAINED 64u
#define FILTER_WORDS (FLIGHTREC_EVENT_COUNT / 32)
#define NAME_WORDS 16   /* 64 bytes per event name */

static struct flightrec_settings settings = {
    .items = DEFAULT_ITEMS,
    .signal_items = DEFAULT_ITEMS / 16,
    .mode = FLIGHTREC_MODE_FLIGHT,
    .retained = DEFAULT_RETAINED,
};
static int configured;              /* flightrec_setup() was called */
/* Start-up state: 0 not begun, 1 under way, 2 done.  Not pthread_once: a
 * signal handler that records while its own thread is starting up must
 * not wait for itself (flightrec__try_init()). */
static _Atomic int init_state;
static _Thread_local int init_is_mine;      /* this thread runs start-up */
static pthread_mutex_t control_lock = PTHREAD_MUTEX_INITIALIZER;

#define ALL_ONES_8 \
    0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, \
        0xffffffffu, 0xffffffffu, 0xffffffffu
/* The filter the program asked for (under control_lock) and the one in
 * force, which is all zero while recording is stopped. */
static uint32_t filter_wanted[FILTER_WORDS] = {
    ALL_ONES_8, ALL_ONES_8, ALL_ONES_8, ALL_ONES_8,
};
_Atomic uint32_t flightrec__filter[FILTER_WORDS] = {
    ALL_ONES_8, ALL_ONES_8, ALL_ONES_8, ALL_ONES_8,
};
_Atomic int flightrec__running = 1;



const struct flightrec_settings *flightrec__settings(void)
{
    return &settings;
}

void flightrec_config_init(struct flightrec_config *config)
{
    memset(config, 0, sizeof(*config));
    config->items_per_ring = DEFAULT_ITEMS;
    config->signal_items_per_ring = 0;
    config->mode = FLIGHTREC_MODE_FLIGHT;
    config->retained_rings = DEFAULT_RETAINED;
    config->start = 1;
}

static int parse_number(const char *text, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0' || value > UINT32_MAX ||
        text[0] == '-')
        return -1;
    *out = (uint32_t)value;
    return 0;
}

static int env_number(const char *variable, uint32_t *out, char *message,
                      size_t message_size)
{
    const char *text = getenv(variable);
    if (text == NULL || *text == '\0')
        return 0;
    if (parse_number(text, out) == 0)
        return 0;
    if (message)
        snprintf(message, message_size, "%s=%s: not a number", variable,
                 text);
    return FLIGHTREC_EINVAL_CONFIG;
}

int flightrec_config_from_env(struct flightrec_config *config, char *message,
                              size_t message_size)
{
    uint32_t start = (uint32_t)config->start;
    int rc = env_number("FLIGHTREC_ITEMS", &config->items_per_ring, message,
                        message_size);
    if (rc == 0)
        rc = env_number("FLIGHTREC_SIGNAL_ITEMS",
                        &config->signal_items_per_ring, message, message_size);
    if (rc == 0)
        rc = env_number("FLIGHTREC_RETAIN", &config->retained_rings, message,
                        message_size);
    if (rc == 0)
        rc = env_number("FLIGHTREC_START", &start, message, message_size);
    if (rc != 0)
        return rc;
    config->start = start != 0;
    const char *mode = getenv("FLIGHTREC_MODE");
    if (mode != NULL && *mode != '\0') {
        if (strcmp(mode, "flight") == 0) {
            config->mode = FLIGHTREC_MODE_FLIGHT;
        } else if (strcmp(mode, "discard") == 0) {
            config->mode = FLIGHTREC_MODE_DISCARD;
        } else {
            if (message)
                snprintf(message, message_size,
                         "FLIGHTREC_MODE=%s: unknown mode (flight or discard)",
                         mode);
            return FLIGHTREC_EMODE;
        }
    }
    return 0;
}

static int check_items(uint32_t items)
{
    if (items < 16)
        return FLIGHTREC_ETOOSMALL;
    if ((items & (items - 1)) != 0)
        return FLIGHTREC_ENOTPOW2;
    return 0;
}

static int rings_exist(void)
{
    return ring_first() != NULL;
}

/* Validates @config into @out without applying it. */
static int settle(const struct flightrec_config *config,
                  struct flightrec_settings *out)
{
    int rc = check_items(config->items_per_ring);
    if (rc != 0)
        return rc;
    uint32_t signal_items = config->signal_items_per_ring;
    if (signal_items == 0)
        signal_items = config->items_per_ring / 16 < 16
                           ? 16
                           : config->items_per_ring / 16;
    rc = check_items(signal_items);
    if (rc != 0)
        return rc;
    if (config->mode != FLIGHTREC_MODE_FLIGHT &&
        config->mode != FLIGHTREC_MODE_DISCARD)
        return FLIGHTREC_EMODE;
    out->items = config->items_per_ring;
    out->signal_items = signal_items;
    out->mode = config->mode;
    out->retained = config->retained_rings;
    return 0;
}

/* Puts the wanted filter in force, or zeros while stopped; takes effect at
 * the next event of every thread.  Called with control_lock held. */
static void filter_publish(void)
{
    int running = atomic_load_explicit(&flightrec__running,
                                       memory_order_relaxed);
    for (size_t i = 0; i < FILTER_WORDS; i++)
        atomic_store_explicit(&flightrec__filter[i],
                              running ? filter_wanted[i] : 0,
                              memory_order_relaxed);
    flightrec__region_publish_control(filter_wanted, running, &settings);
}

static void set_running_locked(int running)
{
    atomic_store_explicit(&flightrec__running, running, memory_order_relaxed);
    filter_publish();
}

static void set_running(int running)
{
    pthread_mutex_lock(&control_lock);
    set_running_locked(running);
    pthread_mutex_unlock(&control_lock);
}

int flightrec_setup(const struct flightrec_config *config)
{
    struct flightrec_settings next;
    int rc = settle(config, &next);
    if (rc != 0)
        return rc;
    flightrec__ensure_init();
    pthread_mutex_lock(&control_lock);
    if (rings_exist() &&
        (next.items != settings.items ||
         next.signal_items != settings.signal_items ||
         next.mode != settings.mode)) {
        rc = FLIGHTREC_EBUSY_CONFIG;
    } else {
        settings = next;
        configured = 1;
        set_running_locked(config->start);
    }
    pthread_mutex_unlock(&control_lock);
    return rc;
}

void flightrec_get_config(struct flightrec_config *config)
{
    flightrec_config_init(config);
    config->items_per_ring = (uint32_t)settings.items;
    config->signal_items_per_ring = (uint32_t)settings.signal_items;
    config->mode = settings.mode;
    config->retained_rings = settings.retained;
    config->start = flightrec_is_running();
}

static void after_fork_child(void)
{
    pthread_mutex_init(&control_lock, NULL);
    flightrec__registry_reset_after_fork();
    flightrec__drain_reset_after_fork();
}

static int filter_parse(const char *spec);

/* Start-up on first use: the environment (unless flightrec_setup() came
 * first), the time base, the thread-exit hook and the fork handler. */
static void init_once_fn(void)
{
    flightrec__timebase_init();
    flightrec__registry_init();
    flightrec__port_at_fork_child(after_fork_child);
    if (flightrec__region_create(&settings) != 0) {
        static const char text[] =
            "flightrec: cannot reserve memory for the ring region; "
            "recording is off\n";
        flightrec__port_message(text, sizeof(text) - 1);
        set_running(0);
        return;
    }
    if (configured)
        return;

    struct flightrec_config config;
    struct flightrec_settings next;
    char message[160];
    flightrec_config_init(&config);
    int rc = flightrec_config_from_env(&config, message, sizeof(message));
    if (rc == 0) {
        rc = settle(&config, &next);
        if (rc != 0)
            snprintf(message, sizeof(message), "FLIGHTREC_ITEMS=%u: %s",
                     (unsigned)config.items_per_ring, flightrec_strerror(rc));
    }
    const char *events = getenv("FLIGHTREC_EVENTS");
    if (rc == 0 && events != NULL && filter_parse(events) != 0) {
        snprintf(message, sizeof(message),
                 "FLIGHTREC_EVENTS=%.100s: invalid filter", events);
        rc = FLIGHTREC_EINVAL_CONFIG;
    }
    if (rc != 0) {
        /* Nobody to return the error to: say it once and stay off rather
         * than record with a configuration nobody asked for. */
        char line[200];
        int n = snprintf(line, sizeof(line),
                         "flightrec: %s; recording is off\n", message);
        if (n > 0)
            (void)!write(STDERR_FILENO, line, (size_t)n);
        set_running(0);
        return;
    }
    settings = next;
    set_running(config.start);
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

void flightrec_start(void)
{
    flightrec__ensure_init();
    set_running(1);
}

void flightrec_stop(void)
{
    flightrec__ensure_init();
    set_running(0);
}

int flightrec_is_running(void)
{
    return atomic_load_explicit(&flightrec__running, memory_order_relaxed);
}

void flightrec_cleanup(void)
{
    flightrec_stop();
    pthread_mutex_lock(&control_lock);
    flightrec__rings_cleanup();
    configured = 0;
    pthread_mutex_unlock(&control_lock);
    /* This thread's next item starts with a pair; other live threads get
     * theirs within a quarter ring or 2^21 ticks (docs/recording.md). */
    flightrec__self_resync();
}

/*=====   Filter   =====*/

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

void flightrec_filter_set_range(uint32_t first, uint32_t last, int enabled)
{
    /* Every path that takes control_lock starts up first, so that a handler
     * interrupting it never has to (see flightrec__try_init()). */
    flightrec__ensure_init();
    pthread_mutex_lock(&control_lock);
    filter_apply(filter_wanted, first, last, enabled);
    filter_publish();
    pthread_mutex_unlock(&control_lock);
}

void flightrec_filter_set(uint32_t event, int enabled)
{
    flightrec_filter_set_range(event, event, enabled);
}

int flightrec_filter_get(uint32_t event)
{
    uint32_t id = event & FLIGHTREC_EVENT_MASK;
    flightrec__ensure_init();
    pthread_mutex_lock(&control_lock);
    int enabled = (int)((filter_wanted[id >> 5] >> (id & 31)) & 1u);
    pthread_mutex_unlock(&control_lock);
    return enabled;
}

static int parse_range(const char *token, size_t len, uint32_t *first,
                       uint32_t *last)
{
    char text[32];
    if (len == 0 || len >= sizeof(text))
        return -1;
    memcpy(text, token, len);
    text[len] = '\0';
    if (strcmp(text, "all") == 0) {
        *first = 0;
        *last = FLIGHTREC_EVENT_COUNT - 1;
        return 0;
    }
    if (strcmp(text, "user") == 0) {
        *first = FLIGHTREC_EV_USER_0;
        *last = FLIGHTREC_EVENT_COUNT - 1;
        return 0;
    }
    if (strcmp(text, "system") == 0) {
        *first = 0;
        *last = FLIGHTREC_EV_USER_0 - 1;
        return 0;
    }
    char *dash = strchr(text + 1, '-');
    if (dash != NULL)
        *dash = '\0';
    if (parse_number(text, first) != 0)
        return -1;
    *last = *first;
    if (dash != NULL && parse_number(dash + 1, last) != 0)
        return -1;
    if (*first > *last || *last >= FLIGHTREC_EVENT_COUNT)
        return -1;
    return 0;
}

int flightrec_filter_parse(const char *spec)
{
    flightrec__ensure_init();
    return filter_parse(spec);
}

static int filter_parse(const char *spec)
{
    uint32_t words[FILTER_WORDS];
    pthread_mutex_lock(&control_lock);
    memcpy(words, filter_wanted, sizeof(words));
    const char *at = spec;
    int rc = 0;
    while (*at != '\0' && rc == 0) {
        size_t len = strcspn(at, ",");
        int enabled = 1;
        const char *token = at;
        if (*token == '-') {
            enabled = 0;
            token++;
        }
        uint32_t first, last;
        if (parse_range(token, len - (size_t)(token - at), &first, &last) != 0)
            rc = FLIGHTREC_EINVAL_CONFIG;
        else
            filter_apply(words, first, last, enabled);
        at += len;
        if (*at == ',')
            at++;
    }
    if (rc == 0) {
        memcpy(filter_wanted, words, sizeof(words));
        filter_publish();
    }
    pthread_mutex_unlock(&control_lock);
    return rc;
}

/*=====   Event names   =====*/

int flightrec_event_set_name(uint32_t event, const char *name)
{
    if (event >= FLIGHTREC_EVENT_COUNT || name == NULL || name[0] == '\0')
        return FLIGHTREC_EINVAL_CONFIG;
    uint32_t words[NAME_WORDS];
    flightrec__pack_name(name, words, NAME_WORDS - 1); /* keep a NUL */
    words[NAME_WORDS - 1] = 0;
    flightrec__ensure_init();
    if (flightrec__region_base == NULL)
        return -ENOMEM;
    struct flightrec_region_names *names = region_names();
    pthread_mutex_lock(&control_lock);
    for (size_t i = 0; i < NAME_WORDS; i++)
        atomic_store_explicit(&names->words[event][i], words[i],
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&names->serial[event], 1, memory_order_release);
    pthread_mutex_unlock(&control_lock);
    return 0;
}

uint32_t flightrec__event_name_words(uint32_t event, uint32_t *words)
{
    if (flightrec__region_base == NULL)
        return 0;
    struct flightrec_region_names *names = region_names();
    uint32_t serial = atomic_load_explicit(&names->serial[event],
                                           memory_order_acquire);
    if (serial == 0)
        return 0;
    for (size_t i = 0; i < NAME_WORDS; i++)
        words[i] = atomic_load_explicit(&names->words[event][i],
                                        memory_order_relaxed);
    return serial;
}

/*=====   Statistics   =====*/

void flightrec_get_stats(struct flightrec_stats *stats)
{
    memset(stats, 0, sizeof(*stats));
    if (flightrec__region_base != NULL)
        stats->lost_without_ring = atomic_load_explicit(
            &region_header()->lost_without_ring, memory_order_relaxed);
    for (ring_t *ring = ring_first(); ring; ring = ring_next(ring)) {
        stats->rings++;
        if (atomic_load_explicit(&ring->state, memory_order_relaxed) ==
            FLIGHTREC_RING_LIVE)
            stats->live_rings++;
        stats->produced +=
            atomic_load_explicit(&ring->head, memory_order_relaxed);
        stats->dropped +=
            atomic_load_explicit(&ring->dropped, memory_order_relaxed) +
            atomic_load_explicit(&ring->nested_dropped, memory_order_relaxed);
    }
}
