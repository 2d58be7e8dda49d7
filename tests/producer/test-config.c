/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Configuration as a user meets it: ring size bounds, the messages for bad
 * environment values (they name the variable; numbers are decimal),
 * pre-faulting, error codes and their names, and filters by event name and
 * glob.  Each case runs in its own process (fresh environment and runtime).
 */
#include <flightrec.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/client/event-table.h"
#include "stream-parse.h"
#include "test.h"

/* Runs the lazy start-up (the first event) with stderr captured; returns
 * what the runtime wrote there (malloc'd, NUL-terminated). */
static char *first_event_stderr(void)
{
    FILE *err = tmpfile();
    CHECK(err != NULL);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(err), 2);
    flightrec_produce(FLIGHTREC_USER(1), 1);
    dup2(saved, 2);
    close(saved);
    size_t len;
    unsigned char *bytes = sp_read_fd(fileno(err), &len);
    fclose(err);
    char *text = malloc(len + 1);
    CHECK(text != NULL);
    memcpy(text, bytes, len);
    text[len] = '\0';
    free(bytes);
    return text;
}

/* Enabled events in the wanted filter. */
static unsigned enabled_count(void)
{
    unsigned n = 0;
    for (uint32_t id = 0; id < FLIGHTREC_EVENT_COUNT; id++)
        n += (unsigned)flightrec_filter_get(id);
    return n;
}

/*=====   Ring size bounds   =====*/

TEST(max_items_bound)
{
    if (sizeof(void *) == 8)
        CHECK_EQ_U(FLIGHTREC_MAX_ITEMS, 1u << 24);
    else
        CHECK_EQ_U(FLIGHTREC_MAX_ITEMS, 1u << 22);
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.start = 0;
    config.items_per_ring = 2147483648u;
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_ETOOLARGE);
    config.items_per_ring = FLIGHTREC_MAX_ITEMS * 2;
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_ETOOLARGE);
    config.items_per_ring = 64;
    config.signal_items_per_ring = FLIGHTREC_MAX_ITEMS * 2;
    CHECK_EQ_I(flightrec_setup(&config), FLIGHTREC_ETOOLARGE);
    /* The bound itself is accepted (setup allocates nothing). */
    config.signal_items_per_ring = 0;
    config.items_per_ring = FLIGHTREC_MAX_ITEMS;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    struct flightrec_config now;
    flightrec_get_config(&now);
    CHECK_EQ_U(now.items_per_ring, FLIGHTREC_MAX_ITEMS);
    CHECK_EQ_U(now.signal_items_per_ring, FLIGHTREC_MAX_ITEMS / 16);
    CHECK_EQ_S(flightrec_strerror(FLIGHTREC_ETOOLARGE),
               "item count is above FLIGHTREC_MAX_ITEMS");
}

TEST(unallocatable_items_from_environment_refused)
{
    setenv("FLIGHTREC_ITEMS", "2147483648", 1);
    char *text = first_event_stderr();
    CHECK_EQ_S(text, "flightrec: FLIGHTREC_ITEMS=2147483648: item count is "
                     "above FLIGHTREC_MAX_ITEMS; recording is off\n");
    free(text);
    CHECK_EQ_I(flightrec_is_running(), 0);
    struct flightrec_stats stats;
    flightrec_get_stats(&stats);
    CHECK_EQ_U(stats.produced, 0);
}

TEST(items_beyond_32_bits_are_too_large)
{
    struct flightrec_config config;
    char message[128];
    flightrec_config_init(&config);
    setenv("FLIGHTREC_ITEMS", "99999999999999999999999", 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)),
               FLIGHTREC_ETOOLARGE);
    CHECK_EQ_S(message, "FLIGHTREC_ITEMS=99999999999999999999999: item count "
                        "is above FLIGHTREC_MAX_ITEMS");
    CHECK_EQ_U(config.items_per_ring, 65536); /* left alone */
}

/*=====   Messages name the variable; numbers are decimal   =====*/

TEST(signal_items_message_names_its_variable)
{
    struct flightrec_config config;
    char message[128];
    flightrec_config_init(&config);
    setenv("FLIGHTREC_SIGNAL_ITEMS", "3", 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)),
               FLIGHTREC_ETOOSMALL);
    CHECK_EQ_S(message, "FLIGHTREC_SIGNAL_ITEMS=3: item count is below 16");
    setenv("FLIGHTREC_SIGNAL_ITEMS", "48", 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)),
               FLIGHTREC_ENOTPOW2);
    CHECK_EQ_S(message,
               "FLIGHTREC_SIGNAL_ITEMS=48: item count is not a power of two");
    setenv("FLIGHTREC_SIGNAL_ITEMS", "3", 1);
    char *text = first_event_stderr();
    CHECK_EQ_S(text, "flightrec: FLIGHTREC_SIGNAL_ITEMS=3: item count is "
                     "below 16; recording is off\n");
    free(text);
    CHECK_EQ_I(flightrec_is_running(), 0);
}

/* @value in @variable is refused with FLIGHTREC_EINVAL_CONFIG and
 * "@variable=@value: @why". */
static void check_refused(const char *variable, const char *value,
                          const char *why)
{
    struct flightrec_config config;
    char message[160], expect[160];
    flightrec_config_init(&config);
    setenv(variable, value, 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)),
               FLIGHTREC_EINVAL_CONFIG);
    snprintf(expect, sizeof(expect), "%s=%s: %s", variable, value, why);
    CHECK_EQ_S(message, expect);
    unsetenv(variable);
}

TEST(numbers_are_decimal)
{
    const char *zero = "numbers are decimal, without leading zeros";
    check_refused("FLIGHTREC_ITEMS", "010", zero);
    check_refused("FLIGHTREC_ITEMS", "0x100", zero);
    check_refused("FLIGHTREC_ITEMS", "+64", "not a decimal number");
    check_refused("FLIGHTREC_ITEMS", " 64", "not a decimal number");
    check_refused("FLIGHTREC_ITEMS", "-64", "not a decimal number");
    check_refused("FLIGHTREC_RETAIN", "010", zero);
    check_refused("FLIGHTREC_RETAIN", "4294967296", "number above 4294967295");
    check_refused("FLIGHTREC_START", "2", "0 or 1");
    check_refused("FLIGHTREC_START", "yes", "not a decimal number");
    check_refused("FLIGHTREC_PREFAULT", "01", zero);

    struct flightrec_config config;
    char message[128];
    flightrec_config_init(&config);
    setenv("FLIGHTREC_ITEMS", "1024", 1);
    setenv("FLIGHTREC_SIGNAL_ITEMS", "16", 1);
    setenv("FLIGHTREC_RETAIN", "0", 1);
    setenv("FLIGHTREC_START", "0", 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)), 0);
    CHECK_EQ_U(config.items_per_ring, 1024);
    CHECK_EQ_U(config.signal_items_per_ring, 16);
    CHECK_EQ_U(config.retained_rings, 0);
    CHECK_EQ_I(config.start, 0);
}

TEST(refused_values_are_shown_safely)
{
    struct flightrec_config config;
    char message[200];
    flightrec_config_init(&config);
    setenv("FLIGHTREC_MODE", "fl\033[2Jight", 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)),
               FLIGHTREC_EMODE);
    CHECK_EQ_S(message, "FLIGHTREC_MODE=fl\\x1b[2Jight: unknown mode "
                        "(flight or discard)");
    char long_value[101];
    memset(long_value, 'x', 100);
    long_value[100] = '\0';
    setenv("FLIGHTREC_MODE", long_value, 1);
    CHECK_EQ_I(flightrec_config_from_env(&config, message, sizeof(message)),
               FLIGHTREC_EMODE);
    char expect[200];
    snprintf(expect, sizeof(expect),
             "FLIGHTREC_MODE=%.64s...: unknown mode (flight or discard)",
             long_value);
    CHECK_EQ_S(message, expect);
}

/*=====   Pre-faulting   =====*/

TEST(prefault_from_environment)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    CHECK_EQ_I(config.prefault, 0);
    setenv("FLIGHTREC_PREFAULT", "1", 1);
    setenv("FLIGHTREC_ITEMS", "256", 1);
    char *text = first_event_stderr();
    CHECK_EQ_S(text, "");
    free(text);
    struct flightrec_config now;
    flightrec_get_config(&now);
    CHECK_EQ_I(now.prefault, 1);
    CHECK_EQ_U(now.items_per_ring, 256);
    CHECK_EQ_I(flightrec_is_running(), 1);
}

TEST(prefault_by_setup)
{
    struct flightrec_config config;
    flightrec_config_init(&config);
    config.prefault = 1;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    struct flightrec_config now;
    flightrec_get_config(&now);
    CHECK_EQ_I(now.prefault, 1);
    config.prefault = 0;
    CHECK_EQ_I(flightrec_setup(&config), 0);
    flightrec_get_config(&now);
    CHECK_EQ_I(now.prefault, 0);
}

/*=====   Error codes   =====*/

TEST(error_codes_and_names)
{
    /* Conditions errno names are -errno... */
    CHECK_EQ_I(FLIGHTREC_ENOMEM, -ENOMEM);
    CHECK_EQ_I(FLIGHTREC_EINVAL_CONFIG, -EINVAL);
    CHECK_EQ_I(FLIGHTREC_EBUSY_CONFIG, -EBUSY);
    CHECK_EQ_S(flightrec_strerror(FLIGHTREC_ENOMEM), strerror(ENOMEM));
    CHECK_EQ_S(flightrec_strerror(-ENOSPC), strerror(ENOSPC));
    /* ...flightrec's own are apart from every errno value. */
    static const int own[] = {
        FLIGHTREC_ENOTPOW2, FLIGHTREC_ETOOSMALL, FLIGHTREC_EMODE,
        FLIGHTREC_ETOOLARGE, FLIGHTREC_EBADMAGIC, FLIGHTREC_EFORMAT,
        FLIGHTREC_EVERSION, FLIGHTREC_ETRUNC, FLIGHTREC_ERING,
        FLIGHTREC_ECOUNT, FLIGHTREC_ESTREAM, FLIGHTREC_ECALLBACK,
        FLIGHTREC_ESTATE,
    };
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        CHECK(own[i] <= -4000 && own[i] > -4100);
        for (size_t j = 0; j < i; j++)
            CHECK(own[i] != own[j]);
        CHECK(strcmp(flightrec_strerror(own[i]), "unknown error") != 0);
    }
    CHECK_EQ_S(flightrec_err_name(0), "FLIGHTREC_OK");
    CHECK_EQ_S(flightrec_err_name(FLIGHTREC_EMODE), "FLIGHTREC_EMODE");
    CHECK_EQ_S(flightrec_err_name(FLIGHTREC_ETOOLARGE), "FLIGHTREC_ETOOLARGE");
    CHECK_EQ_S(flightrec_err_name(FLIGHTREC_ECALLBACK), "FLIGHTREC_ECALLBACK");
    CHECK_EQ_S(flightrec_err_name(FLIGHTREC_ENOMEM), "ENOMEM");
    CHECK_EQ_S(flightrec_err_name(FLIGHTREC_EINVAL_CONFIG), "EINVAL");
    CHECK_EQ_S(flightrec_err_name(FLIGHTREC_EBUSY_CONFIG), "EBUSY");
    CHECK_EQ_S(flightrec_err_name(-ENOSPC), "ENOSPC");
    CHECK_EQ_S(flightrec_err_name(-EPIPE), "EPIPE");
    CHECK_EQ_S(flightrec_err_name(1), "unknown");
    CHECK_EQ_S(flightrec_err_name(-4099), "unknown");
    CHECK_EQ_S(flightrec_strerror(-4099), "unknown error");
}

/*=====   Filters by name   =====*/

TEST(filter_names_and_globs)
{
    CHECK_EQ_I(flightrec_filter_parse("-all,+MUTEX_*"), 0);
    CHECK_EQ_U(enabled_count(), 4);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_MUTEX_LOCK_ENTRY), 1);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_MUTEX_LOCK_EXIT), 1);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_MUTEX_UNLOCK), 1);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_MUTEX_TRYLOCK_FAIL), 1);

    CHECK_EQ_I(flightrec_filter_parse("all,-mutex_lock_*,-user"), 0);
    CHECK_EQ_U(enabled_count(), 512 - 2);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_MUTEX_LOCK_ENTRY), 0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_MUTEX_UNLOCK), 1);

    /* '?' is one character; USER_<n> names the unnamed user events. */
    CHECK_EQ_I(flightrec_filter_parse("-all,ARG_?,USER_7,USER_51?"), 0);
    CHECK_EQ_U(enabled_count(), 10 + 1 + 2);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_ARG_9), 1);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(7)), 1);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(511)), 1);

    /* Registered names, and a '*' that must backtrack. */
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_USER(3), "request.start"),
               0);
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_USER(4), "request.end"), 0);
    CHECK_EQ_I(flightrec_filter_parse("-all,+req*t"), 0);
    CHECK_EQ_U(enabled_count(), 1);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(3)), 1);
    CHECK_EQ_I(flightrec_filter_parse("+Request.End"), 0);
    CHECK_EQ_U(enabled_count(), 2);

    /* A name nothing answers to, or a bad term: refused, nothing changed. */
    CHECK_EQ_I(flightrec_filter_parse("all,-MUTEX_LOK_*"),
               FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_I(flightrec_filter_parse("all,-010"), FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_I(flightrec_filter_parse("all,-0x10"), FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_I(flightrec_filter_parse("all,-"), FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_U(enabled_count(), 2);
}

/* The producer's name table is its own (it must not link the decoder's):
 * every system name the decoder knows selects exactly its id. */
TEST(filter_names_match_decoder_table)
{
    unsigned named = 0;
    for (uint32_t id = 0; id < 512; id++) {
        const char *name = flightrec__v10_names[id];
        if (name == NULL)
            continue;
        char spec[96];
        snprintf(spec, sizeof(spec), "-all,+%s", name);
        CHECK_EQ_I(flightrec_filter_parse(spec), 0);
        if (enabled_count() != 1 || flightrec_filter_get(id) != 1)
            TEST_FAIL("%s does not select exactly id %u", name, (unsigned)id);
        named++;
    }
    CHECK_EQ_U(named, 366);
}

TEST(environment_filter_by_name)
{
    setenv("FLIGHTREC_EVENTS", "all,-MUTEX_*,-request,-user,+net_*", 1);
    char *text = first_event_stderr();
    CHECK_EQ_S(text, "");
    free(text);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_MUTEX_UNLOCK), 0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_THREAD_ID), 1);
    CHECK_EQ_U(enabled_count(), 512 - 4);
    /* Names the program registers later meet the same terms. */
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_USER(1), "net_rx"), 0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(1)), 1);
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_USER(2), "disk"), 0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(2)), 0);
    /* A name no term mentions leaves the program's own choice alone. */
    flightrec_filter_set(FLIGHTREC_USER(5), 1);
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_USER(5), "timer"), 0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(5)), 1);
    /* A system id given a name follows the last term covering it. */
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_EV_THREAD_ID, "request"),
               0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_EV_THREAD_ID), 0);
    CHECK_EQ_U(enabled_count(), 512 - 5 + 2);
}

TEST(environment_filter_later_term_wins)
{
    setenv("FLIGHTREC_EVENTS", "-request,user", 1);
    char *text = first_event_stderr();
    CHECK_EQ_S(text, "");
    free(text);
    CHECK_EQ_I(flightrec_event_set_name(FLIGHTREC_USER(9), "request"), 0);
    CHECK_EQ_I(flightrec_filter_get(FLIGHTREC_USER(9)), 1);
}

TEST(environment_filter_error_names_the_term)
{
    setenv("FLIGHTREC_EVENTS", "all,5-3", 1);
    char *text = first_event_stderr();
    CHECK_EQ_S(text, "flightrec: FLIGHTREC_EVENTS=all,5-3: bad filter term at "
                     "byte 5; recording is off\n");
    free(text);
    CHECK_EQ_I(flightrec_is_running(), 0);
}

TEST(environment_filter_too_long)
{
    char spec[600] = "all";
    while (strlen(spec) < 520)
        strcat(spec, ",-MUTEX_UNLOCK");
    setenv("FLIGHTREC_EVENTS", spec, 1);
    char *text = first_event_stderr();
    char expect[200];
    snprintf(expect, sizeof(expect),
             "flightrec: FLIGHTREC_EVENTS=%.64s...: longer than 511 bytes; "
             "recording is off\n", spec);
    CHECK_EQ_S(text, expect);
    free(text);
    CHECK_EQ_I(flightrec_is_running(), 0);
}

TEST_MAIN(TEST_ENTRY(max_items_bound),
          TEST_ENTRY(unallocatable_items_from_environment_refused),
          TEST_ENTRY(items_beyond_32_bits_are_too_large),
          TEST_ENTRY(signal_items_message_names_its_variable),
          TEST_ENTRY(numbers_are_decimal),
          TEST_ENTRY(refused_values_are_shown_safely),
          TEST_ENTRY(prefault_from_environment), TEST_ENTRY(prefault_by_setup),
          TEST_ENTRY(error_codes_and_names),
          TEST_ENTRY(filter_names_and_globs),
          TEST_ENTRY(filter_names_match_decoder_table),
          TEST_ENTRY(environment_filter_by_name),
          TEST_ENTRY(environment_filter_later_term_wins),
          TEST_ENTRY(environment_filter_error_names_the_term),
          TEST_ENTRY(environment_filter_too_long))
