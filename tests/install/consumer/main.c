/* SPDX-License-Identifier: BSD-2-Clause */
#define _POSIX_C_SOURCE 200809L
/* An installed flightrec: record, dump to a file, decode, compare. */
#include <flightrec.h>
#include <flightrec/client.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int found;

static int on_record(const struct flightrec_record *record, void *arg)
{
    (void)arg;
    if (record->type == FLIGHTREC_RECORD_EVENT &&
        record->event == FLIGHTREC_USER(5) && record->data == 1234)
        found++;
    return 0;
}

int main(void)
{
    flightrec_produce(FLIGHTREC_USER(5), 1234);
    FILE *file = tmpfile();
    if (file == NULL || flightrec_dump(fileno(file)) != 0)
        return 1;
    rewind(file);
    struct flightrec_client_options options = { .on_record = on_record };
    flightrec_client *client;
    if (flightrec_client_create(&client, &options) != 0)
        return 1;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), file)) > 0)
        flightrec_client_feed(client, buf, n);
    int rc = flightrec_client_finish(client);
    flightrec_client_destroy(client);
    fclose(file);
    if (rc != 0 || found != 1) {
        fprintf(stderr, "installed flightrec: rc=%d found=%d\n", rc, found);
        return 1;
    }
    return 0;
}
