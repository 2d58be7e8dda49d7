/* SPDX-License-Identifier: BSD-2-Clause */
/* Test helpers: decode a buffer in chosen pieces and keep every record. */
#ifndef FLIGHTREC_DECODE_UTIL_H
#define FLIGHTREC_DECODE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <flightrec/client.h>

/* A record as delivered; of its ring_info, the identity fields. */
struct trec {
    uint32_t type, flags, ring, event, loss_kind;
    uint64_t time_ns, data, loss_count, offset;
    int64_t thread_id;
    uint32_t context;
    char thread_name[64];
};

struct tresult {
    struct trec *recs;
    size_t n, cap;
    int feed_rc;
    int finish_rc;
    char message[160];
    uint64_t error_offset;
    struct flightrec_client_totals totals;
    struct flightrec_stream_info info;
    flightrec_client *client; /* kept when keep != 0 */
};

/* Chunking: 0 whole buffer, 1 one byte at a time, >1 random sizes from
 * that seed (1..97 bytes). */
struct topts {
    int chunking;
    int merge;
    uint64_t window;
    int keep;          /* keep the client for name / ring queries */
    int stop_after;    /* callback returns 1 after this many (0: never) */
    /* 1: flightrec_client_read_fd() on a temporary file holding the
     * stream, 2: on a pipe a child process writes it to; chunking is then
     * not used. */
    int read_fd;
    uint64_t memory_limit;
};

void tdecode(struct tresult *res, const void *buf, size_t len,
             const struct topts *opts);
void tresult_free(struct tresult *res);
/* The EVENT records only, in order. */
size_t tevents(const struct tresult *res, struct trec *out, size_t max);
/* Compares two record lists exactly; aborts with a message on mismatch. */
void tcompare(const struct tresult *a, const struct tresult *b);

#endif
