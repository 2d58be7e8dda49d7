/* SPDX-License-Identifier: BSD-2-Clause */
#include "decode-file.h"

#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

flightrec_client *decode_file(const char *path,
                              int (*on_record)(const struct flightrec_record *,
                                               void *),
                              void *arg, int *rc)
{
    struct flightrec_client_options opt = { .on_record = on_record,
                                            .arg = arg,
                                            .merge = 1 };
    flightrec_client *c;
    CHECK(flightrec_client_create(&c, &opt) == 0);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        TEST_FAIL("cannot open %s: %s", path, strerror(errno));
    /* A regular file: read in exact time order. */
    *rc = flightrec_client_read_fd(c, fd);
    close(fd);
    if (*rc != 0)
        fprintf(stderr, "%s: %s\n", path, flightrec_client_message(c));
    return c;
}
