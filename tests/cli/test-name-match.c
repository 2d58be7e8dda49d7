/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * src/common/name-match.c: the patterns --event and --thread accept (and
 * FLIGHTREC_EVENTS is to accept), and the nearest-name suggestion.
 */
#include "name-match.h"
#include "test.h"

TEST(match)
{
    static const struct {
        const char *pattern, *name;
        int match;
    } cases[] = {
        { "MUTEX_LOCK_ENTRY", "MUTEX_LOCK_ENTRY", 1 },
        { "MUTEX_LOCK_ENTRY", "MUTEX_LOCK_EXIT", 0 },
        { "MUTEX_*", "MUTEX_LOCK_ENTRY", 1 },
        { "MUTEX_*", "MALLOC_ENTRY", 0 },
        { "*_ENTRY", "MALLOC_ENTRY", 1 },
        { "worker-?", "worker-1", 1 },
        { "worker-?", "worker-12", 0 },
        { "worker-[13]", "worker-3", 1 },
        { "worker-[13]", "worker-2", 0 },
        { "mutex_*", "MUTEX_LOCK_ENTRY", 0 },  /* case matters */
        { "", "", 1 },
        /* A name holding glob characters matches itself exactly. */
        { "a[1]", "a[1]", 1 },
        { "a[1]", "a1", 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (flightrec__name_match(cases[i].pattern, cases[i].name) !=
            cases[i].match)
            TEST_FAIL("'%s' against '%s': wanted %d", cases[i].pattern,
                      cases[i].name, cases[i].match);
    CHECK_EQ_I(flightrec__name_is_glob("a*"), 1);
    CHECK_EQ_I(flightrec__name_is_glob("a?"), 1);
    CHECK_EQ_I(flightrec__name_is_glob("a[b]"), 1);
    CHECK_EQ_I(flightrec__name_is_glob("a-b_c"), 0);
}

TEST(distance)
{
    static const struct {
        const char *a, *b;
        unsigned d;
    } cases[] = {
        { "", "", 0 },
        { "", "abc", 3 },
        { "abc", "", 3 },
        { "request", "request", 0 },
        { "reqest", "request", 1 },
        { "MALOC_ENTRY", "MALLOC_ENTRY", 1 },
        { "malloc_entry", "MALLOC_ENTRY", 0 },  /* letters without case */
        { "wroker", "worker", 2 },
        { "kitten", "sitting", 3 },
        { "worker", "worker-1", 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_EQ_U(flightrec__name_distance(cases[i].a, cases[i].b),
                   cases[i].d);
        CHECK_EQ_U(flightrec__name_distance(cases[i].b, cases[i].a),
                   cases[i].d);
    }
}

static const char *suggest(const char *pattern, const char *const *names,
                           char *buf, size_t size)
{
    struct flightrec__name_suggest s;

    flightrec__name_suggest_init(&s, pattern);
    for (; *names != NULL; names++)
        flightrec__name_suggest_offer(&s, *names);
    return flightrec__name_suggestion(&s, buf, size);
}

TEST(suggestion)
{
    static const char *const threads[] = { "main", "worker-1", "worker-2",
                                           NULL };
    static const char *const events[] = { "MUTEX_LOCK_ENTRY",
                                          "MUTEX_LOCK_EXIT", "MALLOC_ENTRY",
                                          "job", NULL };
    char buf[80];

    CHECK_EQ_S(suggest("worker", threads, buf, sizeof buf), "worker*");
    CHECK_EQ_S(suggest("mian", threads, buf, sizeof buf), "main");
    CHECK(suggest("zzzz", threads, buf, sizeof buf) == NULL);
    CHECK_EQ_S(suggest("MUTEX_LOCK_ENTR", events, buf, sizeof buf),
               "MUTEX_LOCK_ENTR*");
    CHECK_EQ_S(suggest("MUTEX_LOCK_ENTRYY", events, buf, sizeof buf),
               "MUTEX_LOCK_ENTRY");
    CHECK_EQ_S(suggest("jbo", events, buf, sizeof buf), "job");
    /* Ties go to the first offered. */
    CHECK_EQ_S(suggest("worker-3", threads, buf, sizeof buf), "worker-1");
    /* A glob gets no "PATTERN*" suggestion. */
    CHECK(suggest("MUTX_*", events, buf, sizeof buf) == NULL);
    static const char *const none[] = { NULL };
    CHECK(suggest("x", none, buf, sizeof buf) == NULL);
}

TEST_MAIN()
