/* SPDX-License-Identifier: BSD-2-Clause */
/* a * b / d exactly (floor), saturating at UINT64_MAX; 0 if d is 0. */
#ifndef FLIGHTREC_MULDIV_H
#define FLIGHTREC_MULDIV_H

#include <stdint.h>

uint64_t fr_muldiv(uint64_t a, uint64_t b, uint64_t d);
/* The same without __int128 (tests compare the two). */
uint64_t fr_muldiv_portable(uint64_t a, uint64_t b, uint64_t d);

/* The 128-bit product of @a a and @a b as *hi:*lo. */
void fr_mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo);
/* floor(hi:lo / d) for hi < d, by shift and subtract (slow: setup and
 * fallback only). */
uint64_t fr_div128(uint64_t hi, uint64_t lo, uint64_t d);

#endif
