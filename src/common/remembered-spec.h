/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The remembered filter specs of a region's control block
 * (include/flightrec/region.h), for the runtime and `flightrec ctl`: the
 * length word is cleared before the bytes change and set after them, so a
 * writer that dies in the middle (a killed ctl) leaves specs that every
 * reader sees as torn, never as a spec.
 */
#ifndef FLIGHTREC_REMEMBERED_SPEC_H
#define FLIGHTREC_REMEMBERED_SPEC_H

#include <flightrec/region.h>

#include <stdatomic.h>
#include <string.h>

/* Stores @spec (shorter than FLIGHTREC_REGION_REMEMBERED_BYTES); under the
 * region's control lock. */
static inline void fr_remembered_store(struct flightrec_region_control *c,
                                       const char *spec)
{
    size_t n = strnlen(spec, FLIGHTREC_REGION_REMEMBERED_BYTES - 1);
    /* Odd, and not what it was (a writer killed in the middle left it
     * odd). */
    uint32_t writing = (atomic_load_explicit(&c->remembered_sequence,
                                             memory_order_relaxed) |
                        1u) + 2u;
    atomic_store_explicit(&c->remembered_length, 0, memory_order_relaxed);
    atomic_store_explicit(&c->remembered_sequence, writing,
                          memory_order_relaxed);
    /* The cleared length and the odd count reach memory before any byte
     * of the spec. */
    atomic_thread_fence(memory_order_release);
    memcpy(c->remembered, spec, n);
    c->remembered[n] = '\0';
    atomic_store_explicit(&c->remembered_length, (uint32_t)n + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&c->remembered_sequence, writing + 1,
                          memory_order_release);
}

/* Copies the specs into @out (FLIGHTREC_REGION_REMEMBERED_BYTES): 0, or -1
 * with @out empty when they are torn (their writer died meanwhile), being
 * changed, or damaged.  The sequence count, not the length, tells a copy
 * that a rewrite of the same length overlapped. */
static inline int fr_remembered_load(const struct flightrec_region_control *c,
                                     char *out)
{
    uint32_t sequence =
        atomic_load_explicit(&c->remembered_sequence, memory_order_acquire);
    uint32_t length =
        atomic_load_explicit(&c->remembered_length, memory_order_relaxed);
    memcpy(out, c->remembered, FLIGHTREC_REGION_REMEMBERED_BYTES);
    atomic_thread_fence(memory_order_acquire);
    if ((sequence & 1u) != 0 || length == 0 ||
        length > FLIGHTREC_REGION_REMEMBERED_BYTES ||
        atomic_load_explicit(&c->remembered_sequence, memory_order_relaxed) !=
            sequence ||
        atomic_load_explicit(&c->remembered_length, memory_order_relaxed) !=
            length ||
        strnlen(out, length) != length - 1) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

#endif
