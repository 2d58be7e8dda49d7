/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Minimal test harness: typed checks that print both operands and the
 * location, and a runner that executes one named case per process so that
 * ctest runs (and times out) each case on its own:
 *
 *   TEST(wrap) { CHECK_EQ_U(1, 1); }
 *   TEST_MAIN()
 *
 * The TEST(name) definitions are the only list of cases: each registers
 * itself (a constructor), and flightrec_test() in cmake/FlightrecTesting.cmake
 * finds them by scanning the sources for lines starting "TEST(name)".  So
 * write TEST(name) at the start of a line and not inside #if.
 *
 * `test-foo wrap` runs one case; `test-foo` runs them all in source order;
 * `test-foo --list` prints their names; `test-foo --expect a b` checks that
 * the cases are exactly a and b (ctest runs it as test-foo.case-list).  TEST_MAIN() ignores arguments
 * (older files list TEST_ENTRY()s there).
 */
#ifndef FLIGHTREC_TEST_H
#define FLIGHTREC_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
    const char *name;
    void (*fn)(void);
    int line;
};

#define TEST_MAX_CASES 512

struct test_registry {
    size_t count;
    struct test_case cases[TEST_MAX_CASES];
};

/* One registry per program (the cases live in its main file). */
static inline struct test_registry *test_registry_(void)
{
    static struct test_registry registry;
    return &registry;
}

static inline void test_register_(const char *name, void (*fn)(void),
                                  int line)
{
    struct test_registry *r = test_registry_();

    if (r->count == TEST_MAX_CASES) {
        fprintf(stderr, "test.h: more than %d cases\n", TEST_MAX_CASES);
        abort();
    }
    r->cases[r->count].name = name;
    r->cases[r->count].fn = fn;
    r->cases[r->count].line = line;
    r->count++;
}

#define TEST(name) \
    static void test_##name(void); \
    __attribute__((constructor)) static void test_register_##name(void) \
    { \
        test_register_(#name, test_##name, __LINE__); \
    } \
    static void test_##name(void)

/* Kept so that older TEST_MAIN(TEST_ENTRY(a), ...) lines still compile. */
#define TEST_ENTRY(name) test_##name

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

/* Runs the case named by argv[1], or all of them in source order. */
static inline int test_main_(int argc, char **argv)
{
    struct test_registry *r = test_registry_();
    int ran = 0;

    /* Constructors run in no promised order: sort by line. */
    for (size_t i = 1; i < r->count; i++) {
        struct test_case c = r->cases[i];
        size_t j = i;
        for (; j > 0 && r->cases[j - 1].line > c.line; j--)
            r->cases[j] = r->cases[j - 1];
        r->cases[j] = c;
    }
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < r->count; i++)
            printf("%s\n", r->cases[i].name);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--expect") == 0) {
        /* The build's scan of the sources found exactly these cases: a
         * TEST the scan missed would never run under ctest. */
        int bad = (size_t)(argc - 2) != r->count;
        for (size_t i = 0; i < r->count; i++) {
            int found = 0;
            for (int a = 2; a < argc; a++)
                found |= strcmp(argv[a], r->cases[i].name) == 0;
            if (!found) {
                fprintf(stderr, "case '%s' (line %d) is not registered with "
                        "ctest: write TEST(name) at the start of a line\n",
                        r->cases[i].name, r->cases[i].line);
                bad = 1;
            }
        }
        if (bad)
            fprintf(stderr, "%zu cases registered, %d expected\n", r->count,
                    argc - 2);
        return bad;
    }
    for (size_t i = 0; i < r->count; i++) {
        if (argc > 1 && strcmp(argv[1], r->cases[i].name) != 0)
            continue;
        r->cases[i].fn();
        ran++;
    }
    if (ran == 0) {
        fprintf(stderr, "no test case named '%s'\n",
                argc > 1 ? argv[1] : "");
        return 2;
    }
    return 0;
}

#define TEST_MAIN(...) \
    int main(int argc, char **argv) \
    { \
        return test_main_(argc, argv); \
    }

#endif
