/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the loaded-object records (OBJECT_LOAD, _PATH,
 * _BUILD_ID) and the symbol lookups they drive (src/convert/
 * convert-symbols.c): every record of the decoded input goes to the
 * resolver, every FUNCTION_ENTRY/EXIT address is looked up, and the
 * objects read back must be within their bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <flightrec/client.h>
#include <flightrec/events.h>

#include "convert-symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *arg, const char *message)
{
    (void)arg;
    if (strlen(message) > 4096)
        abort();
}

static int take(const struct flightrec_record *r, void *arg)
{
    struct fr_symbols *s = arg;
    fr_symbols_record(s, r);
    if (r->type == FLIGHTREC_RECORD_EVENT &&
        (r->event == FLIGHTREC_EV_FUNCTION_ENTRY ||
         r->event == FLIGHTREC_EV_FUNCTION_EXIT)) {
        const char *name = fr_symbols_name(s, r->data);
        if (name != NULL && strlen(name) > 511)
            abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct flightrec_client_options o = {0};
    flightrec_client *c;
    struct fr_symbols *s = fr_symbols_create(size > 0 && (data[0] & 1) ? 4 : 8,
                                             quiet, NULL);
    if (s == NULL)
        return 0;
    o.on_record = take;
    o.arg = s;
    if (flightrec_client_create(&c, &o) != 0) {
        fr_symbols_destroy(s);
        return 0;
    }
    (void)flightrec_client_feed(c, data, size);
    (void)flightrec_client_finish(c);
    uint64_t base;
    const char *path;
    const unsigned char *id;
    size_t id_len;
    for (size_t i = 0; fr_symbols_object(s, i, &base, &path, &id, &id_len) == 0;
         i++)
        if (strlen(path) > 255 || id_len > 64)
            abort();
    flightrec_client_destroy(c);
    fr_symbols_destroy(s);
    return 0;
}
