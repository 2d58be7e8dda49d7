/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stream header: which version and which id numbering the stream uses,
 * and the facts its header items carry (frequency, items per ring,
 * processors, process id, realtime, RTEMS info strings).
 *
 * Every RTEMS version renumbers the system events (they are kept in
 * alphabetical order), so what an id means is looked up by name in the
 * version's own table (event-table.c, generated from data/rtems-record).
 * Version 1 exists in two numberings, the 2018 patch's and the one RTEMS
 * committed; the header item after VERSION tells them apart (the patch
 * sends COUNT, the committed code PROCESSOR_MAXIMUM first).
 */
#include "client-internal.h"

#include <string.h>

#include "event-table.h"

#define NS_PER_S UINT64_C(1000000000)
#define FREQUENCY_MAX (UINT64_C(1) << 44) /* ~17.6 THz: beyond is garbage */
/* The merge window when the stream gives no reason for a longer one. */
#define WINDOW_FLOOR_NS (2 * NS_PER_S)

/* What the names mean, in every numbering that has them. */
static const struct {
    const char *name;
    unsigned char action;
} common_actions[] = {
    {"EMPTY", A_IGNORE},
    {"VERSION", A_VERSION},
    {"ARCH", A_INFO_ARCH},
    {"BSP", A_INFO_BSP},
    {"TOOLS", A_INFO_TOOLS},
    {"MULTILIB", A_INFO_OTHER},
    {"VERSION_CONTROL_KEY", A_INFO_OTHER},
    {"FREQUENCY", A_FREQUENCY},
    {"COUNT", A_COUNT},
    {"PER_CPU_COUNT", A_COUNT},
    {"PER_CPU_DISCARD", A_DISCARD},
    {"OVERFLOW", A_OVERFLOW},
    {"PER_CPU_OVERFLOW", A_OVERFLOW},
    {"PROCESSOR", A_PROCESSOR},
    {"PROCESSOR_MAXIMUM", A_PROC_MAX},
    {"THREAD_ID", A_THREAD_ID},
    {"THREAD_NAME", A_THREAD_NAME},
    {"TIME_ADJUSTMENT", A_IGNORE},  /* made by RTEMS's host client */
    {"UNRELIABLE_TIME", A_IGNORE},  /* made by RTEMS's host client */
    {"UPTIME_LOW", A_UP_LOW},
    {"UPTIME_HIGH", A_UP_HIGH},
    /* RTEMS v1..v9 chunk framing. */
    {"TAIL", A_TAIL},
    {"PER_CPU_TAIL", A_TAIL},
    {"HEAD", A_HEAD},
    {"PER_CPU_HEAD", A_HEAD},
    /* flightrec's own (ids 342.., absent from RTEMS tables). */
    {"RING_COUNT", A_RING_COUNT},
    {"FREQUENCY_HIGH", A_FREQUENCY_HIGH},
    {"REALTIME_LOW", A_RT_LOW},
    {"REALTIME_HIGH", A_RT_HIGH},
    {"RING_CONTEXT", A_CONTEXT},
    {"RING_POSITION", A_POSITION},
    {"EVENT_NAME_ID", A_NAME_ID},
    {"EVENT_NAME", A_NAME},
    {"PROCESS_ID", A_PID},
    {"STREAM_END", A_IGNORE},
    {"EVENT_KIND", A_KIND},
};

static unsigned char action_of(const char *name, int rtems, int version)
{
    if (rtems) {
        /* Which thread runs on the CPU (flightrec rings are threads). */
        if (strcmp(name, "THREAD_SWITCH_OUT") == 0)
            return A_SWITCH_OUT;
        if (strcmp(name, "THREAD_SWITCH_IN") == 0)
            return A_SWITCH_IN;
        /* THREAD_CREATE heads the new thread's name from v5 on, but from
         * cc91fae43a (v5) until 8ace7eada4 (v7) the name items in the
         * ring are garbage (item index for char index); the header's
         * thread table is right in every version. */
        if (version >= 7 && strcmp(name, "THREAD_CREATE") == 0)
            return A_EVENT_THREAD;
    }
    for (size_t i = 0; i < sizeof(common_actions) / sizeof(common_actions[0]);
         i++) {
        if (strcmp(name, common_actions[i].name) == 0)
            return common_actions[i].action;
    }
    return A_EVENT;
}

static void use_numbering(struct flightrec_client *c, int numbering)
{
    const char *const *names = flightrec__event_names[numbering];
    int version = (int)c->info.version;

    c->numbering = numbering;
    memset(c->cls, A_EVENT, sizeof(c->cls));
    for (uint32_t i = 0; i < 512; i++) {
        if (names[i] != NULL)
            c->cls[i] = action_of(names[i], c->rtems, version);
    }
    switch (numbering) {
    case FRC_NUM_FLIGHTREC:
        c->info.kind = FLIGHTREC_STREAM_FLIGHTREC;
        break;
    case FRC_NUM_RTEMS_V10:
        c->info.kind = FLIGHTREC_STREAM_RTEMS_V10;
        break;
    case FRC_NUM_RTEMS_V1:
        c->info.kind = FLIGHTREC_STREAM_RTEMS_V1;
        break;
    case FRC_NUM_RTEMS_V1_SEED:
        c->info.kind = FLIGHTREC_STREAM_RTEMS_V1_SEED;
        break;
    default:
        c->info.kind = FLIGHTREC_STREAM_RTEMS;
        break;
    }
}

int frc_set_version(struct flightrec_client *c, uint64_t version,
                    uint64_t offset)
{
    c->step_limit = FRC_TIME_WRAP; /* RTEMS: every step is forwards */
    c->rtems = 1;
    if (version == FLIGHTREC_STREAM_VERSION ||
        version == FLIGHTREC_STREAM_VERSION_1) {
        c->rtems = 0;
        c->step_limit = FLIGHTREC_SYNC_TICKS;
        c->positions_in_events = version != FLIGHTREC_STREAM_VERSION_1;
    } else if (version < 1 || version > 10) {
        return frc_fail(c, FLIGHTREC_EVERSION, offset,
                        version > 0xffff ? "unsupported stream version 0x%llx"
                                         : "unsupported stream version %llu",
                        (unsigned long long)version);
    }
    c->info.version = (uint32_t)version;
    if (version == 1)
        c->v1_pending = 1; /* the next header item tells the numbering */
    else
        use_numbering(c, (version == FLIGHTREC_STREAM_VERSION ||
                          version == FLIGHTREC_STREAM_VERSION_1)
                             ? FRC_NUM_FLIGHTREC
                             : FRC_NUM_RTEMS_V2 + (int)version - 2);
    return 0;
}

/* Whether @a event names a header or framing item in @a numbering. */
static int heads(int numbering, uint32_t event)
{
    const char *name = event < 512 ? flightrec__event_names[numbering][event]
                                   : NULL;

    return name != NULL && (strcmp(name, "COUNT") == 0 ||
                            strcmp(name, "FREQUENCY") == 0 ||
                            strcmp(name, "PROCESSOR_MAXIMUM") == 0 ||
                            strcmp(name, "PROCESSOR") == 0);
}

int frc_v1_numbering(struct flightrec_client *c, uint32_t event,
                     uint64_t offset)
{
    int seed = heads(FRC_NUM_RTEMS_V1_SEED, event);
    int committed = heads(FRC_NUM_RTEMS_V1, event);

    if (seed == committed)
        return frc_fail(c, FLIGHTREC_ESTREAM, offset,
                        "RTEMS version 1 stream: event %u after VERSION is "
                        "no header item of either version 1 numbering",
                        (unsigned)event);
    c->v1_pending = 0;
    use_numbering(c, seed ? FRC_NUM_RTEMS_V1_SEED : FRC_NUM_RTEMS_V1);
    return 0;
}

/*
 * The merge window the stream needs: items wait for their ring's next sync
 * pair to be timed, up to one sync period (RTEMS: 2^22 counter ticks, the
 * watchdog's; flightrec: 2^21), and a CPU's first pair may come a whole
 * period after the other CPUs' items; twice the period covers that and the
 * transfer's own delay.  Never less than 2 s.
 */
static void derive_window(struct flightrec_client *c, uint64_t f)
{
    uint64_t span = c->rtems ? FRC_TIME_WRAP : FLIGHTREC_SYNC_TICKS;
    uint64_t w = f != 0 ? 2 * flightrec_ticks_to_ns(span, f) : 0;

    c->opt.merge_window_ns = w > WINDOW_FLOOR_NS ? w : WINDOW_FLOOR_NS;
    c->info.merge_window_ns = c->opt.merge_window_ns;
}

static int set_frequency(struct flightrec_client *c, uint64_t offset)
{
    /* On 32-bit formats FREQUENCY_HIGH holds the upper half. */
    uint64_t f = c->freq_low | (uint64_t)c->freq_high << 32;

    if (c->freq_locked)
        return 0; /* times already depend on the first one */
    if (f > FREQUENCY_MAX)
        return frc_fail(c, FLIGHTREC_ECOUNT, offset,
                        "absurd frequency %llu Hz", (unsigned long long)f);
    c->info.frequency = f;
    frc_set_divisor(c, f);
    if (c->window_auto)
        derive_window(c, f);
    return 0;
}

static int check_count(struct flightrec_client *c, uint64_t v, uint64_t max,
                       const char *what, uint64_t offset)
{
    if (v > max)
        return frc_fail(c, FLIGHTREC_ECOUNT, offset, "absurd %s %llu", what,
                        (unsigned long long)v);
    return 0;
}

int frc_header_item(struct flightrec_client *c, uint32_t action,
                    uint64_t data, uint64_t offset)
{
    switch (action) {
    case A_VERSION:
        if (data != c->info.version)
            return frc_fail(c, FLIGHTREC_ESTREAM, offset,
                            "second VERSION item %llu differs",
                            (unsigned long long)data);
        return 0;
    case A_FREQUENCY:
        c->freq_low = data;
        if (!c->wide)
            c->freq_low = (uint32_t)data;
        return set_frequency(c, offset);
    case A_FREQUENCY_HIGH:
        c->freq_high = (uint32_t)data;
        return set_frequency(c, offset);
    case A_COUNT:
        if (data == 0 || data > FRC_ITEMS_PER_RING_MAX)
            return frc_fail(c, FLIGHTREC_ECOUNT, offset,
                            "absurd items per ring %llu",
                            (unsigned long long)data);
        c->info.items_per_ring = (uint32_t)data;
        return 0;
    case A_RING_COUNT:
        if (check_count(c, data, FRC_RING_ID_LIMIT, "ring count", offset))
            return c->error;
        c->info.ring_count = (uint32_t)data;
        return 0;
    case A_PROC_MAX:
        if (check_count(c, data, FRC_RING_ID_LIMIT - 1,
                        "PROCESSOR_MAXIMUM", offset))
            return c->error;
        c->info.ring_count = (uint32_t)data + 1;
        c->proc_max = (int64_t)data;
        return 0;
    case A_PID:
        c->info.process_id = (int64_t)data;
        return 0;
    case A_RT_LOW:
        c->rt_low = (uint32_t)data;
        c->has_rt_low = 1;
        return 0;
    case A_RT_HIGH:
        if (c->has_rt_low) {
            c->info.realtime_ns_at_zero =
                c->rt_low | (uint64_t)(uint32_t)data << 32;
            c->info.has_realtime = 1;
        }
        return 0;
    case A_INFO_ARCH:
    case A_INFO_BSP:
    case A_INFO_TOOLS:
        frc_info_item(c, action, data);
        return 0;
    default: /* A_IGNORE, A_INFO_OTHER */
        return 0;
    }
}
