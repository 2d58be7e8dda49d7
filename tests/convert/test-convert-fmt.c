/* SPDX-License-Identifier: BSD-2-Clause */
/* util/fmt.h (the formatter of the converters and the flightrec command)
 * against the printf conversions it replaces, on edge values (every power
 * of ten and its neighbours, the type limits) and a random sweep. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/fmt.h"
#include "test.h"

static uint64_t values[256];
static size_t nvalues;

static void add(uint64_t v)
{
    if (nvalues < sizeof values / sizeof values[0])
        values[nvalues++] = v;
}

static void make_values(void)
{
    nvalues = 0;
    uint64_t p = 1;
    for (int i = 0; i < 20; i++, p *= 10) {
        add(p - 1);
        add(p);
        add(p + 1);
    }
    for (int i = 0; i < 64; i += 4)
        add(((uint64_t)1 << i) | (((uint64_t)1 << i) - 1));
    add(0);
    add(UINT64_MAX);
    add((uint64_t)INT64_MAX);
    add((uint64_t)INT64_MIN);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    while (nvalues < sizeof values / sizeof values[0]) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        add(x >> (x & 63));
    }
}

/* Compares what @a end - buf holds with snprintf's @a want. */
static void same(const char *buf, const char *end, const char *want)
{
    size_t n = (size_t)(end - buf);
    if (n != strlen(want) || memcmp(buf, want, n) != 0)
        TEST_FAIL("got '%.*s', want '%s'", (int)n, buf, want);
}

TEST(unsigned_forms)
{
    make_values();
    char buf[64], want[64];
    for (size_t i = 0; i < nvalues; i++) {
        uint64_t v = values[i];
        snprintf(want, sizeof want, "%" PRIu64, v);
        same(buf, fr_fmt_u64(buf, v), want);
        snprintf(want, sizeof want, "%" PRIx64, v);
        same(buf, fr_fmt_hex(buf, v), want);
        for (unsigned w = 0; w <= 22; w++) {
            snprintf(want, sizeof want, "%0*" PRIu64, (int)w, v);
            same(buf, fr_fmt_u64_zero(buf, v, w), want);
            snprintf(want, sizeof want, "%*" PRIu64, (int)w, v);
            same(buf, fr_fmt_u64_right(buf, v, w), want);
        }
    }
}

TEST(signed_forms)
{
    make_values();
    char buf[64], want[64];
    for (size_t i = 0; i < nvalues; i++) {
        for (int neg = 0; neg < 2; neg++) {
            int64_t v = neg ? (int64_t)(0 - values[i]) : (int64_t)values[i];
            snprintf(want, sizeof want, "%" PRId64, v);
            same(buf, fr_fmt_i64(buf, v), want);
            for (unsigned w = 0; w <= 22; w++) {
                snprintf(want, sizeof want, "%-*" PRId64, (int)w, v);
                same(buf, fr_fmt_i64_left(buf, v, w), want);
            }
        }
    }
}

TEST(hex_forms)
{
    make_values();
    char buf[64], want[64];
    for (size_t i = 0; i < nvalues; i++) {
        uint64_t v = values[i];
        snprintf(want, sizeof want, "0x%" PRIx64, v);
        same(buf, fr_fmt_hex0x(buf, v), want);
        /* Whatever the value, nothing is stored past 16 bytes. */
        memset(buf, '#', sizeof buf);
        char *end = fr_fmt_hex(buf + 8, v);
        snprintf(want, sizeof want, "%" PRIx64, v);
        same(buf + 8, end, want);
        for (size_t k = 0; k < sizeof buf; k++)
            if ((k < 8 || k >= 24) && buf[k] != '#')
                TEST_FAIL("fr_fmt_hex(%" PRIx64 ") wrote byte %zu", v, k);
    }
}

TEST(time_forms)
{
    make_values();
    char buf[64], want[64];
    for (size_t i = 0; i < nvalues; i++) {
        uint64_t v = values[i];
        snprintf(want, sizeof want, "%09u", (unsigned)(v % 1000000000u));
        same(buf, fr_fmt_ns9(buf, (uint32_t)(v % 1000000000u)), want);
        snprintf(want, sizeof want, "%" PRIu64 ".%09u", v / 1000000000u,
                 (unsigned)(v % 1000000000u));
        same(buf, fr_fmt_seconds(buf, v), want);
    }
    same(buf, fr_fmt_iso8601(buf, 0), "1970-01-01T00:00:00.000000000Z");
    same(buf, fr_fmt_iso8601(buf, 951782400123456789ull),
         "2000-02-29T00:00:00.123456789Z");
    same(buf, fr_fmt_iso8601(buf, UINT64_MAX),
         "2554-07-21T23:34:33.709551615Z");
}

TEST(text)
{
    char buf[64];
    char *p = FR_FMT_LIT(buf, "ab");
    p = fr_fmt_str(p, "cde");
    p = fr_fmt_mem(p, "fgh", 2);
    same(buf, p, "abcdefg");
}

TEST_MAIN()
