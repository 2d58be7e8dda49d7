/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Number and text formatting for the text writers (ftrace, JSON).  printf
 * parses its format string for every field and dominated their run time;
 * these write straight into a buffer the caller has reserved.  Each returns
 * the end of what it wrote and produces exactly the bytes of the printf
 * conversion named in its comment.
 */
#ifndef FLIGHTREC_CONVERT_FMT_H
#define FLIGHTREC_CONVERT_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* "00" "01" ... "99": two digits per division halves the divisions. */
extern const char fr_fmt_digits2[200];

/* Decimal digits in @a v (1..20). */
static inline unsigned fr_fmt_dec_len(uint64_t v)
{
    unsigned n = 1;
    for (; v >= 10000; v /= 10000)
        n += 4;
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* The @a n last decimal digits of @a v, ending at @a end. */
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

/* %llu */
static inline char *fr_fmt_u64(char *p, uint64_t v)
{
    unsigned n = fr_fmt_dec_len(v);
    fr_fmt_dec_back(p + n, v, n);
    return p + n;
}

/* %lld */
static inline char *fr_fmt_i64(char *p, int64_t v)
{
    if (v >= 0)
        return fr_fmt_u64(p, (uint64_t)v);
    *p++ = '-';
    /* Negated as unsigned so that INT64_MIN works too. */
    return fr_fmt_u64(p, 0 - (uint64_t)v);
}

/* %0Nllu: at least @a width digits, zero-padded. */
static inline char *fr_fmt_u64_zero(char *p, uint64_t v, unsigned width)
{
    unsigned n = fr_fmt_dec_len(v);
    if (n < width)
        n = width;
    fr_fmt_dec_back(p + n, v, n);
    return p + n;
}

/* %Nllu: right-aligned in @a width columns, space-padded. */
static inline char *fr_fmt_u64_right(char *p, uint64_t v, unsigned width)
{
    unsigned n = fr_fmt_dec_len(v);
    for (; width > n; width--)
        *p++ = ' ';
    fr_fmt_dec_back(p + n, v, n);
    return p + n;
}

/* %-Nlld: left-aligned in @a width columns, space-padded. */
static inline char *fr_fmt_i64_left(char *p, int64_t v, unsigned width)
{
    char *start = p;
    p = fr_fmt_i64(p, v);
    while ((unsigned)(p - start) < width)
        *p++ = ' ';
    return p;
}

/* %llx */
static inline char *fr_fmt_hex(char *p, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    unsigned n = 1;
    for (uint64_t t = v >> 4; t != 0; t >>= 4)
        n++;
    for (unsigned i = n; i-- > 0; v >>= 4)
        p[i] = digits[v & 15];
    return p + n;
}

static inline char *fr_fmt_mem(char *p, const void *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* A string literal, its length known at compile time. */
#define FR_FMT_LIT(p, lit) fr_fmt_mem((p), (lit), sizeof(lit) - 1)

/* %s; the caller bounds strlen(@a s). */
static inline char *fr_fmt_str(char *p, const char *s)
{
    return fr_fmt_mem(p, s, strlen(s));
}

#endif
