/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes the seed corpus: small valid streams of every format and version
 * with the features the decoder handles (hold-back, losses, names, merge),
 * each prefixed with the option byte fuzz-client.c reads.
 * Usage: gen-corpus DIR [DATADIR]
 * DATADIR holds the RTEMS event tables (default: data/rtems-record).
 */
#include <stdio.h>
#include <string.h>

#include "stream-vector.h"

static const uint32_t formats[4] = {
    FLIGHTREC_FORMAT_LE_32, FLIGHTREC_FORMAT_LE_64, FLIGHTREC_FORMAT_BE_32,
    FLIGHTREC_FORMAT_BE_64};

static int save(const char *dir, const char *name, int f, unsigned opt,
                const struct fr_vec *v)
{
    char path[1024];
    FILE *out;
    unsigned char o = (unsigned char)opt;

    snprintf(path, sizeof(path), "%s/seed-%s-%d-%02x", dir, name, f, opt);
    out = fopen(path, "wb");
    if (out == NULL) {
        perror(path);
        return 1;
    }
    fwrite(&o, 1, 1, out);
    fwrite(v->buf, 1, v->len, out);
    return fclose(out) != 0;
}

static void flightrec_stream(struct fr_vec *v)
{
    fr_vec_flightrec_header(v, 3000000000u, 2, 64, 77, 123456789);
    fr_vec_name(v, FLIGHTREC_EV_EVENT_NAME_ID, 600, FLIGHTREC_EV_EVENT_NAME,
                "rx", 8);
    fr_vec_flightrec_chunk(v, 0, 10, "main", 0, 0, 0, 0);
    fr_vec_item(v, 100, FLIGHTREC_USER(1), 1);
    fr_vec_uptime(v, 200, 5000000);
    fr_vec_item(v, 300, FLIGHTREC_USER(88), 2);
    fr_vec_item(v, 250, FLIGHTREC_EV_MUTEX_LOCK_ENTRY, 3);
    fr_vec_flightrec_chunk(v, 1, 11, "worker", 1, 0, 0, 4);
    fr_vec_uptime(v, 10, 5000100);
    fr_vec_item(v, 4000000, FLIGHTREC_USER(2), 4);
    fr_vec_flightrec_chunk(v, 0, 10, "main", 0, 20, 7, 0);
    fr_vec_item(v, 400, FLIGHTREC_USER(1), 5);
    fr_vec_uptime(v, 500, 9000000);
}

static void v10_stream(struct fr_vec *v)
{
    fr_vec_item(v, 0, FLIGHTREC_EV_VERSION, 10);
    fr_vec_item(v, 0, FLIGHTREC_EV_PROCESSOR_MAXIMUM, 1);
    fr_vec_item(v, 0, FLIGHTREC_EV_PER_CPU_COUNT, 256);
    fr_vec_item(v, 0, FLIGHTREC_EV_FREQUENCY, 1000000);
    fr_vec_item(v, 0, FLIGHTREC_EV_ARCH, 0x636f7073);
    fr_vec_name(v, FLIGHTREC_EV_THREAD_ID, 0x0a010001,
                FLIGHTREC_EV_THREAD_NAME, "IDLE", 8);
    fr_vec_item(v, 0, FLIGHTREC_EV_PROCESSOR, 0);
    fr_vec_item(v, 10, FLIGHTREC_USER(0), 1);
    fr_vec_uptime(v, 20, UINT64_C(3) << 31);
    fr_vec_item(v, 30, FLIGHTREC_EV_THREAD_CREATE, 0x0a010002);
    fr_vec_item(v, 0, FLIGHTREC_EV_THREAD_NAME, 0x4b534154);
    fr_vec_item(v, 0, FLIGHTREC_EV_PROCESSOR, 1);
    fr_vec_item(v, 0, FLIGHTREC_EV_PER_CPU_OVERFLOW, 9);
    fr_vec_item(v, 40, FLIGHTREC_USER(3), 2);
    fr_vec_uptime(v, 50, UINT64_C(4) << 31);
}

static void v1_stream(struct fr_vec *v)
{
    fr_vec_item(v, 0, FLIGHTREC_V1_VERSION, 1);
    fr_vec_item(v, 0, FLIGHTREC_V1_COUNT, 8);
    fr_vec_item(v, 0, FLIGHTREC_V1_FREQUENCY, 1000000);
    fr_vec_item(v, 0, FLIGHTREC_V1_PROCESSOR, 0);
    fr_vec_item(v, 0, FLIGHTREC_V1_TAIL, 0);
    fr_vec_item(v, 0, FLIGHTREC_V1_HEAD, 3);
    fr_vec_item(v, 5, FLIGHTREC_V1_UPTIME_LOW, 0);
    fr_vec_item(v, 5, FLIGHTREC_V1_UPTIME_HIGH, 1);
    fr_vec_item(v, 6, FLIGHTREC_V1_USER_0, 1);
    fr_vec_item(v, 0, FLIGHTREC_V1_PROCESSOR, 0);
    fr_vec_item(v, 0, FLIGHTREC_V1_TAIL, 3);
    fr_vec_item(v, 0, FLIGHTREC_V1_HEAD, 20);
    fr_vec_item(v, 7, FLIGHTREC_V1_USER_0 + 1, 2);
}

/*
 * An RTEMS stream of any version from its table: the header that version
 * writes, info strings (v7+), the thread table (v5+), TAIL/HEAD chunks
 * (before v10) with an overflow and a missing chunk, thread switches and
 * THREAD_CREATE with its name.
 */
static void rtems_stream(struct fr_vec *v, const struct fr_rtems_table *t,
                         uint32_t version, int seed)
{
    int v10 = version >= 10;

    fr_vec_item(v, 0, fr_rtems_id(t, "VERSION"), version);
    if (!seed)
        fr_vec_item(v, 0, fr_rtems_id(t, "PROCESSOR_MAXIMUM"), 1);
    fr_vec_item(v, 0, fr_rtems_id(t, version >= 2 ? "PER_CPU_COUNT" : "COUNT"),
                8);
    fr_vec_item(v, 0, fr_rtems_id(t, "FREQUENCY"), 1000000);
    if (version >= 7) {
        fr_vec_packed(v, 0, fr_rtems_id(t, "ARCH"), "sparc", 5);
        fr_vec_packed(v, 0, fr_rtems_id(t, "BSP"), "leon3", 5);
        fr_vec_packed(v, 0, fr_rtems_id(t, "TOOLS"), "10.2.1", 6);
    }
    if (version >= 5) {
        fr_vec_item(v, 0, fr_rtems_id(t, "THREAD_ID"), 0x09010001);
        fr_vec_packed(v, 0, fr_rtems_id(t, "THREAD_NAME"), "IDLE", 4);
        fr_vec_item(v, 0, fr_rtems_id(t, "THREAD_ID"), 0x0a010001);
        fr_vec_packed(v, 0, fr_rtems_id(t, "THREAD_NAME"), "UI1_long_name",
                      13);
    }
    for (uint32_t k = 0; k < 3; k++) {
        for (uint32_t cpu = 0; cpu < 2; cpu++) {
            fr_vec_item(v, 0, fr_rtems_id(t, "PROCESSOR"), cpu);
            if (!v10) {
                /* CPU 1 loses a chunk before its third; CPU 0 overflows
                 * in its second. */
                uint32_t tail = k * 6 + (cpu == 1 && k == 2 ? 4 : 0);
                uint32_t n = cpu == 0 && k == 1 ? 12 : 6;
                fr_vec_item(v, 0, fr_rtems_id(t, version >= 2 ? "PER_CPU_TAIL"
                                                               : "TAIL"),
                            tail);
                fr_vec_item(v, 0, fr_rtems_id(t, version >= 2 ? "PER_CPU_HEAD"
                                                               : "HEAD"),
                            tail + n);
            } else if (cpu == 0 && k == 1) {
                fr_vec_item(v, 0, fr_rtems_id(t, "PER_CPU_OVERFLOW"), 5);
            }
            fr_vec_item(v, 100 + k, fr_rtems_id(t, "UPTIME_LOW"), k << 30);
            fr_vec_item(v, 100 + k, fr_rtems_id(t, "UPTIME_HIGH"), 1);
            fr_vec_item(v, 200, fr_rtems_id(t, "THREAD_SWITCH_OUT"),
                        0x09010001);
            fr_vec_item(v, 200, fr_rtems_id(t, "THREAD_STACK_CURRENT"), 64);
            fr_vec_item(v, 200, fr_rtems_id(t, "THREAD_SWITCH_IN"),
                        0x0a010001);
            fr_vec_item(v, 300, fr_rtems_id(t, "THREAD_CREATE"), 0x0a010002);
            if (version >= 5)
                fr_vec_packed(v, 300, fr_rtems_id(t, "THREAD_NAME"), "new",
                              3);
            fr_vec_item(v, 4000000, 512 + cpu, k);
        }
    }
}

int main(int argc, char **argv)
{
    static const unsigned opts[] = {0x00, 0x01, 0x83, 0x0b};
    /* 0x03: merged with the window the stream implies */
    static const unsigned rtems_opts[] = {0x00, 0x01, 0x03, 0x0b, 0x83};
    int rc = 0;

    static const struct {
        const char *name, *table;
        uint32_t version;
        int seed;
    } rtems[] = {
        {"rtems1s", "events-rtems-v1-seed.tsv", 1, 1},
        {"rtems1c", "events-rtems-v1.tsv", 1, 0},
        {"rtems2", "events-rtems-v2.tsv", 2, 0},
        {"rtems3", "events-rtems-v3.tsv", 3, 0},
        {"rtems4", "events-rtems-v4.tsv", 4, 0},
        {"rtems5", "events-rtems-v5.tsv", 5, 0},
        {"rtems6", "events-rtems-v6.tsv", 6, 0},
        {"rtems7", "events-rtems-v7.tsv", 7, 0},
        {"rtems8", "events-rtems-v8.tsv", 8, 0},
        {"rtems9", "events-rtems-v9.tsv", 9, 0},
        {"rtems10t", "events-rtems-v10.tsv", 10, 0},
    };
    const char *data = argc > 2 ? argv[2] : FLIGHTREC_RTEMS_DATA_DIR;

    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: gen-corpus DIR [DATADIR]\n");
        return 2;
    }
    for (int f = 0; f < 4; f++) {
        struct fr_vec v;
        fr_vec_init(&v, formats[f]);
        flightrec_stream(&v);
        rc |= save(argv[1], "flightrec", f, opts[f], &v);
        fr_vec_free(&v);
        fr_vec_init(&v, formats[f]);
        v10_stream(&v);
        rc |= save(argv[1], "rtems10", f, opts[(f + 1) % 4], &v);
        fr_vec_free(&v);
        fr_vec_init(&v, formats[f]);
        v1_stream(&v);
        rc |= save(argv[1], "rtems1", f, opts[(f + 2) % 4], &v);
        fr_vec_free(&v);
        for (size_t i = 0; i < sizeof(rtems) / sizeof(rtems[0]); i++) {
            struct fr_rtems_table t;
            char path[1024];
            snprintf(path, sizeof(path), "%s/%s", data, rtems[i].table);
            fr_rtems_table_load(&t, path);
            fr_vec_init(&v, formats[f]);
            rtems_stream(&v, &t, rtems[i].version, rtems[i].seed);
            rc |= save(argv[1], rtems[i].name, f, rtems_opts[(f + i) % 5],
                       &v);
            fr_vec_free(&v);
            fr_rtems_table_free(&t);
        }
    }
    return rc;
}
