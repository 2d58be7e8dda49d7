/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief The one number formatter of the tree (the flightrec command and
 * the converters): each function writes straight into a buffer the caller
 * has reserved, returns the end of what it wrote, and produces exactly the
 * bytes of the printf conversion named in its comment.  printf parses its
 * format string for every field, which dominated the text writers' run
 * time.  Internal; not installed.
 */
#ifndef FLIGHTREC_UTIL_FMT_H
#define FLIGHTREC_UTIL_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/** "00" "01" ... "99": two digits per division halves the divisions. */
extern const char fr_fmt_digits2[200];

/** Decimal digits in @a v (1..20). */
static inline unsigned fr_fmt_dec_len(uint64_t v)
{
    unsigned n = 1;
    for (; v >= 10000; v /= 10000)
        n += 4;
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/** The @a n last decimal digits of @a v, ending at @a end. */
static inline void fr_fmt_dec_back(char *end, uint64_t v, unsigned n)
{
    char *q = end;
    while (n >= 2) {
        q -= 2;
        memcpy(q, fr_fmt_digits2 + 2 * (v % 100), 2);
        v /= 100;
        n -= 2;
    }
    if (n != 0)
        *--q = (char)('0' + v % 10);
}

/** %llu */
static inline char *fr_fmt_u64(char *p, uint64_t v)
{
    unsigned n = fr_fmt_dec_len(v);
    fr_fmt_dec_back(p + n, v, n);
    return p + n;
}

/** %lld */
static inline char *fr_fmt_i64(char *p, int64_t v)
{
    if (v >= 0)
        return fr_fmt_u64(p, (uint64_t)v);
    *p++ = '-';
    /* Negated as unsigned so that INT64_MIN works too. */
    return fr_fmt_u64(p, 0 - (uint64_t)v);
}

/** %0Nllu: at least @a width digits, zero-padded. */
static inline char *fr_fmt_u64_zero(char *p, uint64_t v, unsigned width)
{
    unsigned n = fr_fmt_dec_len(v);
    if (n < width)
        n = width;
    fr_fmt_dec_back(p + n, v, n);
    return p + n;
}

/** %Nllu: right-aligned in @a width columns, space-padded. */
static inline char *fr_fmt_u64_right(char *p, uint64_t v, unsigned width)
{
    unsigned n = fr_fmt_dec_len(v);
    for (; width > n; width--)
        *p++ = ' ';
    fr_fmt_dec_back(p + n, v, n);
    return p + n;
}

/** %-Nlld: left-aligned in @a width columns, space-padded. */
static inline char *fr_fmt_i64_left(char *p, int64_t v, unsigned width)
{
    char *start = p;
    p = fr_fmt_i64(p, v);
    while ((unsigned)(p - start) < width)
        *p++ = ' ';
    return p;
}

/* The 8 nibbles of v as 8 lowercase hex digits, most significant first in
 * memory order (SWAR: each nibble spread to a byte, then to ASCII). */
static inline uint64_t fr_fmt_hex8_(uint32_t v)
{
    uint64_t x = v;

    x = (x | (x << 16)) & UINT64_C(0x0000ffff0000ffff);
    x = (x | (x << 8)) & UINT64_C(0x00ff00ff00ff00ff);
    x = (x | (x << 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    /* 1 in the bytes holding 10..15 */
    uint64_t letters = ((x + UINT64_C(0x0606060606060606)) >> 4) &
                       UINT64_C(0x0101010101010101);
    x += UINT64_C(0x3030303030303030) + letters * ('a' - '0' - 10);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return x;  /* the most significant byte is stored first already */
#elif defined(__GNUC__) || defined(__clang__)
    return __builtin_bswap64(x);
#else
    uint64_t r = 0;
    for (int i = 0; i < 8; i++)
        r = (r << 8) | ((x >> (8 * i)) & 0xff);
    return r;
#endif
}

/** %llx.  Stores up to 16 bytes at @a p whatever the value: needs 16
 * bytes of room. */
static inline char *fr_fmt_hex(char *p, uint64_t v)
{
    unsigned n;
#if defined(__GNUC__) || defined(__clang__)
    n = (unsigned)(67 - __builtin_clzll(v | 1)) / 4;
#else
    n = 1;
    while (n < 16 && (v >> (4 * n)) != 0)
        n++;
#endif
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
    /* All 16 digits at once, the first significant one shifted to the
     * top: bytes most significant first, split into nibbles, interleaved
     * high-low, and turned into ASCII; one 16-byte store. */
    uint64_t be = __builtin_bswap64(v << (4 * (16 - n)));
    __m128i b = _mm_cvtsi64_si128((long long)be);
    __m128i mask = _mm_set1_epi8(0x0f);
    __m128i nib = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(b, 4), mask),
                                    _mm_and_si128(b, mask));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(nib, _mm_set1_epi8(9)),
                                   _mm_set1_epi8('a' - '0' - 10));
    _mm_storeu_si128((__m128i *)(void *)p,
                     _mm_add_epi8(_mm_add_epi8(nib, _mm_set1_epi8('0')),
                                  letter));
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The first digit is the lowest byte: dropping leading zeros is a
     * right shift, and each half is one 8-byte store. */
    uint64_t lo = fr_fmt_hex8_((uint32_t)v);
    if (n > 8) {
        uint64_t hi = fr_fmt_hex8_((uint32_t)(v >> 32)) >> (8 * (16 - n));
        memcpy(p, &hi, 8);
        memcpy(p + (n - 8), &lo, 8);
    } else {
        lo >>= 8 * (8 - n);
        memcpy(p, &lo, 8);
    }
#else
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = n; i-- > 0; v >>= 4)
        p[i] = digits[v & 15];
#endif
    return p + n;
}

/** %#llx except that 0 is "0x0": "0x" and the digits of fr_fmt_hex()
 * (needs 18 bytes of room). */
static inline char *fr_fmt_hex0x(char *p, uint64_t v)
{
    p[0] = '0';
    p[1] = 'x';
    return fr_fmt_hex(p + 2, v);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The 8 decimal digits of v < 10^8 as ASCII, first digit in the lowest
 * byte (SWAR: the halves in 32-bit lanes, then pairs in 16-bit lanes, then
 * digits in bytes; each lane divides with a multiply that is exact for its
 * range: x * 5243 >> 19 = x / 100 for x < 43699, x * 103 >> 10 = x / 10
 * for x < 179, and no lane's product reaches the next lane). */
static inline uint64_t fr_fmt_dec8_(uint32_t v)
{
    uint64_t hi = v / 10000u;
    uint64_t x = hi | (uint64_t)(v - (uint32_t)hi * 10000u) << 32;
    uint64_t q = ((x * 5243u) >> 19) & UINT64_C(0x0000007f0000007f);

    x = q | (x - q * 100u) << 16;
    q = ((x * 103u) >> 10) & UINT64_C(0x000f000f000f000f);
    x = q | (x - q * 10u) << 8;
    return x + UINT64_C(0x3030303030303030);
}
#endif

/** %09u for @a v < 10^9 (nanoseconds of a second). */
static inline char *fr_fmt_ns9(char *p, uint32_t v)
{
    /* 9 digits: one, then eight. */
    unsigned lo = v % 100000000u;
    p[0] = (char)('0' + v / 100000000u);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t d = fr_fmt_dec8_(lo);
    memcpy(p + 1, &d, 8);
#else
    fr_fmt_dec_back(p + 9, lo, 8);
#endif
    return p + 9;
}

/** "%llu.%09u": @a ns nanoseconds as seconds. */
char *fr_fmt_seconds(char *p, uint64_t ns);

/** "YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ" (UTC) for nanoseconds since the Unix
 * epoch (30 bytes). */
char *fr_fmt_iso8601(char *p, uint64_t epoch_ns);

static inline char *fr_fmt_mem(char *p, const void *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/** A string literal, its length known at compile time. */
#define FR_FMT_LIT(p, lit) fr_fmt_mem((p), (lit), sizeof(lit) - 1)

/** %s; the caller bounds strlen(@a s). */
static inline char *fr_fmt_str(char *p, const char *s)
{
    return fr_fmt_mem(p, s, strlen(s));
}

#endif
