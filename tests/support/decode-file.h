/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoding a recording file as the tests of recorded programs read them:
 * one merging client over the whole file.  Compiled into the tests that use
 * it (they link the client library themselves).
 */
#ifndef FLIGHTREC_TEST_DECODE_FILE_H
#define FLIGHTREC_TEST_DECODE_FILE_H

#include <flightrec/client.h>

/* Decodes the file at @a path in time order, calling @a on_record with @a
 * arg for each record; the decoder's status in *@a rc (0, or a
 * FLIGHTREC_E* code, whose message goes to standard error).  Returns the
 * client, for what it learnt of the stream (info, rings): the caller
 * destroys it.  The test fails if the file cannot be opened. */
flightrec_client *decode_file(const char *path,
                              int (*on_record)(const struct flightrec_record *,
                                               void *),
                              void *arg, int *rc);

#endif
