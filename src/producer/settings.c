/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Settings: the defaults, the environment, validation and
 * flightrec_setup().
 */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ITEMS 65536u
#define DEFAULT_RETAINED 64u
#define SHOWN_VALUE_BYTES 64   /* of a refused value, in messages */

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
    flightrec__region_publish_settings(&settings);
}

void flightrec_config_init(struct flightrec_config *config)
{
    memset(config, 0, sizeof(*config));
    config->items_per_ring = DEFAULT_ITEMS;
    config->signal_items_per_ring = 0;
    config->mode = FLIGHTREC_MODE_FLIGHT;
    config->retained_rings = DEFAULT_RETAINED;
    config->start = 1;
    config->prefault = 0;
}

int flightrec__parse_decimal(const char *text, uint32_t *out)
{
    /* Digits only: no sign, no blanks, and no leading zero, which C
     * programmers read as octal. */
    if (text[0] < '0' || text[0] > '9' || (text[0] == '0' && text[1] != '\0'))
        return -1;
    uint64_t value = 0;
    for (const char *at = text; *at != '\0'; at++) {
        if (*at < '0' || *at > '9')
            return -1;
        if (value <= UINT32_MAX)
            value = value * 10 + (uint64_t)(*at - '0');
    }
    if (value > UINT32_MAX)
        return -2;
    *out = (uint32_t)value;
    return 0;
}

void flightrec__refusal(char *message, size_t message_size,
                        const char *variable, const char *text,
                        const char *why)
{
    if (message == NULL)
        return;
    char shown[4 * SHOWN_VALUE_BYTES + 4];
    size_t n = 0;
    size_t i = 0;
    for (; text[i] != '\0' && i < SHOWN_VALUE_BYTES; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x20 && c < 0x7f)
            shown[n++] = (char)c;
        else
            n += (size_t)snprintf(shown + n, sizeof(shown) - n, "\\x%02x", c);
    }
    if (text[i] != '\0') {
        memcpy(shown + n, "...", 3);
        n += 3;
    }
    shown[n] = '\0';
    snprintf(message, message_size, "%s=%s: %s", variable, shown, why);
}

/* The value of @variable, NULL when unset or empty. */
static const char *env_text(const char *variable)
{
    const char *text = getenv(variable);
    return text != NULL && *text != '\0' ? text : NULL;
}

/* Says why flightrec__parse_decimal() refused @text with @parsed. */
static int refuse_decimal(int parsed, const char *variable, const char *text,
                          char *message, size_t message_size)
{
    const char *why = "not a decimal number";
    if (parsed == -2)
        why = "number above 4294967295";
    else if (text[0] == '0')
        why = "numbers are decimal, without leading zeros";
    flightrec__refusal(message, message_size, variable, text, why);
    return FLIGHTREC_EINVAL_CONFIG;
}

static int env_decimal(const char *variable, uint32_t *out, char *message,
                       size_t message_size)
{
    const char *text = env_text(variable);
    if (text == NULL)
        return 0;
    uint32_t value;
    int parsed = flightrec__parse_decimal(text, &value);
    if (parsed != 0)
        return refuse_decimal(parsed, variable, text, message, message_size);
    *out = value;
    return 0;
}

static int check_items(uint32_t items)
{
    if (items < 16)
        return FLIGHTREC_ETOOSMALL;
    if (items > FLIGHTREC_MAX_ITEMS)
        return FLIGHTREC_ETOOLARGE;
    if ((items & (items - 1)) != 0)
        return FLIGHTREC_ENOTPOW2;
    return 0;
}

/* A ring size: decimal and in range (more than 32 bits is too large). */
static int env_items(const char *variable, uint32_t *out, char *message,
                     size_t message_size)
{
    const char *text = env_text(variable);
    if (text == NULL)
        return 0;
    uint32_t value;
    int parsed = flightrec__parse_decimal(text, &value);
    if (parsed == -1)
        return refuse_decimal(parsed, variable, text, message, message_size);
    int rc = parsed == -2 ? FLIGHTREC_ETOOLARGE : check_items(value);
    if (rc != 0) {
        flightrec__refusal(message, message_size, variable, text,
                           flightrec_strerror(rc));
        return rc;
    }
    *out = value;
    return 0;
}

static int env_flag(const char *variable, int *out, char *message,
                    size_t message_size)
{
    const char *text = env_text(variable);
    if (text == NULL)
        return 0;
    uint32_t value;
    int parsed = flightrec__parse_decimal(text, &value);
    if (parsed != 0)
        return refuse_decimal(parsed, variable, text, message, message_size);
    if (value > 1) {
        flightrec__refusal(message, message_size, variable, text, "0 or 1");
        return FLIGHTREC_EINVAL_CONFIG;
    }
    *out = (int)value;
    return 0;
}

int flightrec_config_from_env(struct flightrec_config *config, char *message,
                              size_t message_size)
{
    int rc = env_items("FLIGHTREC_ITEMS", &config->items_per_ring, message,
                       message_size);
    if (rc == 0)
        rc = env_items("FLIGHTREC_SIGNAL_ITEMS",
                       &config->signal_items_per_ring, message, message_size);
    if (rc == 0)
        rc = env_decimal("FLIGHTREC_RETAIN", &config->retained_rings,
                         message, message_size);
    if (rc == 0)
        rc = env_flag("FLIGHTREC_START", &config->start, message,
                      message_size);
    if (rc == 0)
        rc = env_flag("FLIGHTREC_PREFAULT", &config->prefault, message,
                      message_size);
    if (rc != 0)
        return rc;
    const char *mode = getenv("FLIGHTREC_MODE");
    if (mode != NULL && *mode != '\0') {
        if (strcmp(mode, "flight") == 0) {
            config->mode = FLIGHTREC_MODE_FLIGHT;
        } else if (strcmp(mode, "discard") == 0) {
            config->mode = FLIGHTREC_MODE_DISCARD;
        } else {
            flightrec__refusal(message, message_size, "FLIGHTREC_MODE", mode,
                    "unknown mode (flight or discard)");
            return FLIGHTREC_EMODE;
        }
    }
    return 0;
}

static int rings_exist(void)
{
    return ring_first() != NULL;
}

int flightrec__settle(const struct flightrec_config *config,
                      struct flightrec_settings *out,
                      enum flightrec_config_field *field)
{
    enum flightrec_config_field refused = FLIGHTREC_FIELD_ITEMS;
    int rc = check_items(config->items_per_ring);
    uint32_t signal_items = config->signal_items_per_ring;
    if (signal_items == 0)
        signal_items = config->items_per_ring / 16 < 16
                           ? 16
                           : config->items_per_ring / 16;
    if (rc == 0) {
        refused = FLIGHTREC_FIELD_SIGNAL_ITEMS;
        rc = check_items(signal_items);
    }
    if (rc == 0 && config->mode != FLIGHTREC_MODE_FLIGHT &&
        config->mode != FLIGHTREC_MODE_DISCARD) {
        refused = FLIGHTREC_FIELD_MODE;
        rc = FLIGHTREC_EMODE;
    }
    if (rc != 0) {
        if (field != NULL)
            *field = refused;
        return rc;
    }
    out->items = config->items_per_ring;
    out->signal_items = signal_items;
    out->mode = config->mode;
    out->retained = config->retained_rings;
    out->prefault = config->prefault != 0;
    return 0;
}

int flightrec_setup(const struct flightrec_config *config)
{
    struct flightrec_settings next;
    int rc = flightrec__settle(config, &next, NULL);
    if (rc != 0)
        return rc;
    flightrec__ensure_init();
    struct flightrec__control_hold hold;
    flightrec__control_begin(&hold);
    /* Sizes are fixed once rings exist; the mode is not: it reaches each
     * ring through its writer, as a change by flightrec ctl does. */
    if (rings_exist() && (next.items != settings.items ||
                          next.signal_items != settings.signal_items)) {
        rc = FLIGHTREC_EBUSY_CONFIG;
    } else {
        settings = next;
        flightrec__region_publish_settings(&settings);
        flightrec__configured = 1;
        flightrec__set_running_locked(config->start);
    }
    flightrec__control_end(&hold);
    return rc;
}

void flightrec_get_config(struct flightrec_config *config)
{
    flightrec_config_init(config);
    config->items_per_ring = (uint32_t)settings.items;
    config->signal_items_per_ring = (uint32_t)settings.signal_items;
    config->mode = flightrec__current_mode();
    config->retained_rings = settings.retained;
    config->start = flightrec_is_running();
    config->prefault = settings.prefault;
}
