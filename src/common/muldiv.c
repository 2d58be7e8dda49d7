/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * a * b / d in 64 bits without overflow, for the decoder's times and the
 * preload library's perf clock: one copy, with a portable path for targets
 * without a 128-bit integer (32-bit ARM, powerpc).
 */
#include "muldiv.h"

/* 128-bit product of a and b as hi:lo, from 32-bit halves. */
void fr_mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;

    *lo = (mid << 32) | (uint32_t)p00;
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* floor(hi:lo / d) for hi < d, by shift and subtract (setup and fallback
 * only, never per item). */
uint64_t fr_div128(uint64_t hi, uint64_t lo, uint64_t d)
{
    uint64_t q = 0;

    for (int i = 0; i < 64; i++) {
        uint64_t carry = hi >> 63;
        hi = (hi << 1) | (lo >> 63);
        lo <<= 1;
        q <<= 1;
        if (carry || hi >= d) {
            hi -= d;
            q |= 1;
        }
    }
    return q;
}

uint64_t fr_muldiv_portable(uint64_t a, uint64_t b, uint64_t d)
{
    uint64_t hi, lo;

    if (d == 0)
        return 0;
    fr_mul128(a, b, &hi, &lo);
    if (hi >= d)
        return UINT64_MAX; /* the quotient does not fit: saturate */
    return fr_div128(hi, lo, d);
}

uint64_t fr_muldiv(uint64_t a, uint64_t b, uint64_t d)
{
#ifdef __SIZEOF_INT128__
    unsigned __int128 q;

    if (d == 0)
        return 0;
    q = (unsigned __int128)a * b / d;
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
#else
    return fr_muldiv_portable(a, b, d);
#endif
}

