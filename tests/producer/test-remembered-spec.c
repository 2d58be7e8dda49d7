/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The remembered filter specs' sequence count (src/common/remembered-spec.h):
 * a writer that rewrites a spec of the same length while a reader copies
 * must never make the reader accept a mix of the two.  Writers are
 * serialized by the control lock, but readers outside it (`flightrec ctl`
 * showing the specs) and the program's stuck-lock bypass meet a writer.
 * With the length word alone as the check, this accepted a mixed copy in
 * every run.
 */
#include "../../src/common/remembered-spec.h"

#include "test.h"

#include <pthread.h>

static struct flightrec_region_control control;
static _Atomic int stop;
static char spec_a[FLIGHTREC_REGION_REMEMBERED_BYTES];
static char spec_b[FLIGHTREC_REGION_REMEMBERED_BYTES];

static void *writer(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        fr_remembered_store(&control, spec_a);
        fr_remembered_store(&control, spec_b);
    }
    return NULL;
}

TEST(same_length_rewrite_never_accepted_torn)
{
    memset(spec_a, 'a', sizeof spec_a - 1);
    memset(spec_b, 'b', sizeof spec_b - 1);
    fr_remembered_store(&control, spec_a);
    pthread_t t;
    CHECK_EQ_I(pthread_create(&t, NULL, writer, NULL), 0);
    char out[FLIGHTREC_REGION_REMEMBERED_BYTES];
    unsigned long good = 0, mixed = 0;
    for (unsigned long i = 0; i < 10000000 && mixed == 0; i++) {
        if (fr_remembered_load(&control, out) != 0)
            continue;
        good++;
        if (strcmp(out, spec_a) != 0 && strcmp(out, spec_b) != 0)
            mixed++;
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    fprintf(stderr, "accepted %lu, of which mixed %lu\n", good, mixed);
    CHECK_EQ_U(mixed, 0);
}

TEST_MAIN()
