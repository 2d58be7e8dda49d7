/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Minimal test harness: typed checks that print both operands and the
 * location, and a runner that executes one named case per process so that
 * ctest runs (and times out) each case on its own:
 *
 *   TEST(wrap) { CHECK_EQ_U(1, 1); }
 *   TEST_MAIN(TEST_ENTRY(wrap))
 *
 * `test-foo wrap` runs one case; `test-foo` runs them all.
 */
#ifndef FLIGHTREC_TEST_H
#define FLIGHTREC_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST(name) static void test_##name(void)
#define TEST_ENTRY(name) { #name, test_##name }

struct test_case {
    const char *name;
    void (*fn)(void);
};

#define TEST_FAIL(...) \
    do { \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); \
        abort(); \
    } while (0)

#define CHECK(cond) \
    do { \
        if (!(cond)) \
            TEST_FAIL("check failed: %s", #cond); \
    } while (0)

#define CHECK_EQ_U(a, b) \
    do { \
        uint64_t check_a_ = (uint64_t)(a), check_b_ = (uint64_t)(b); \
        if (check_a_ != check_b_) \
            TEST_FAIL("%s == %s: %" PRIu64 " (0x%" PRIx64 ") != %" PRIu64 \
                      " (0x%" PRIx64 ")", #a, #b, check_a_, check_a_, \
                      check_b_, check_b_); \
    } while (0)

#define CHECK_EQ_I(a, b) \
    do { \
        int64_t check_a_ = (int64_t)(a), check_b_ = (int64_t)(b); \
        if (check_a_ != check_b_) \
            TEST_FAIL("%s == %s: %" PRId64 " != %" PRId64, #a, #b, \
                      check_a_, check_b_); \
    } while (0)

#define CHECK_EQ_S(a, b) \
    do { \
        const char *check_a_ = (a), *check_b_ = (b); \
        if (check_a_ == NULL || check_b_ == NULL || \
            strcmp(check_a_, check_b_) != 0) \
            TEST_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, \
                      check_a_ ? check_a_ : "(null)", \
                      check_b_ ? check_b_ : "(null)"); \
    } while (0)

#define CHECK_EQ_MEM(a, b, n) \
    do { \
        if (memcmp((a), (b), (n)) != 0) \
            TEST_FAIL("%s and %s differ in their first %zu bytes", #a, #b, \
                      (size_t)(n)); \
    } while (0)

#define TEST_MAIN(...) \
    int main(int argc, char **argv) \
    { \
        static const struct test_case cases[] = { __VA_ARGS__ }; \
        size_t count = sizeof(cases) / sizeof(cases[0]); \
        int ran = 0; \
        for (size_t i = 0; i < count; i++) { \
            if (argc > 1 && strcmp(argv[1], cases[i].name) != 0) \
                continue; \
            cases[i].fn(); \
            ran++; \
        } \
        if (ran == 0) { \
            fprintf(stderr, "no test case named '%s'\n", argv[1]); \
            return 2; \
        } \
        return 0; \
    }

#endif
