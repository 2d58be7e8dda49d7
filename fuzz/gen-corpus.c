/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes the seed corpus: small valid streams of every format and version
 * with the features the decoder handles (hold-back, losses, names, merge),
 * each prefixed with the option byte fuzz-client.c reads.
 * Usage: gen-corpus DIR
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

int main(int argc, char **argv)
{
    static const unsigned opts[] = {0x00, 0x01, 0x83, 0x0b};
    int rc = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: gen-corpus DIR\n");
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
    }
    return rc;
}
