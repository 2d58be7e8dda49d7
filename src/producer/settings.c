/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Settings: the defaults, the environment, validation and
 * flightrec_setup().
 */
#include "runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ITEMS 65536u
#define DEFAULT_RETAINED 64u

static struct flightrec_settings settings = {
    .items = DEFAULT_ITEMS,
    .signal_items = DEFAULT_ITEMS / 16,
    .mode = FLIGHTREC_MODE_FLIGHT,
    .retained = DEFAULT_RETAINED,
};
int flightrec__configured;

const struct flightrec_settings *flightrec__settings(void)
{
    return &settings;
}

void flightrec__settings_install(const struct flightrec_settings *next)
{
    settings = *next;
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

int flightrec__parse_number(const char *text, uint32_t *out)
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
    if (flightrec__parse_number(text, out) == 0)
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
    return flightrec__registry_first() != NULL;
}

int flightrec__settle(const struct flightrec_config *config,
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

int flightrec_setup(const struct flightrec_config *config)
{
    struct flightrec_settings next;
    int rc = flightrec__settle(config, &next);
    if (rc != 0)
        return rc;
    flightrec__ensure_init();
    pthread_mutex_lock(&flightrec__control_lock);
    if (rings_exist() &&
        (next.items != settings.items ||
         next.signal_items != settings.signal_items ||
         next.mode != settings.mode)) {
        rc = FLIGHTREC_EBUSY_CONFIG;
    } else {
        settings = next;
        flightrec__configured = 1;
        flightrec__set_running_locked(config->start);
    }
    pthread_mutex_unlock(&flightrec__control_lock);
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
