/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A signal handler forks while its thread is in the middle of a
 * prepare/add/commit record, and the child cannot have its own copy of
 * the session's rings (FLIGHTREC_TEST_FORK_FAIL=snapshot): the child ends
 * the interrupted record in orphan items, found from the lap base as
 * every add finds its slot.  With the lap base left at 0, an add that had
 * passed its filter test when the fork came stored at 0 + head * 16.
 */
#include "producer-test.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t forked = -1;

static void fork_in_handler(int sig)
{
    (void)sig;
    forked = fork();
}

TEST(child_of_a_fork_inside_a_record_finishes_it_in_orphan_items)
{
    setenv("FLIGHTREC_TEST_FORK_FAIL", "snapshot", 1);
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    /* A head that is not a multiple of the orphan buffer's size. */
    for (int i = 0; i < 3; i++)
        flightrec_produce(FLIGHTREC_USER(1), 1);
    CHECK(signal(SIGUSR1, fork_in_handler) != SIG_ERR);
    fflush(stderr);
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    uintptr_t start = ctx.head;
    flightrec_add(&ctx, FLIGHTREC_USER(2), 2);
    raise(SIGUSR1);
    flightrec_add(&ctx, FLIGHTREC_USER(3), 3);
    flightrec_add(&ctx, FLIGHTREC_USER(4), 4);
    flightrec_commit(&ctx);
    if (forked == 0) {
        /* Every position the record can reach is one of the orphan items
         * the child's writer now points at. */
        const struct flightrec__writer *w = &flightrec__self.main;
        for (uintptr_t k = 0; k < FLIGHTREC_MAX_PENDING; k++) {
            struct flightrec_item *slot = flightrec__lap_slot(w, start + k);
            if (slot < w->items || slot >= w->items + FLIGHTREC_MAX_PENDING)
                _exit(3);
        }
        _exit(0);
    }
    CHECK(forked > 0);
    int status;
    CHECK_EQ_I(waitpid(forked, &status, 0), forked);
    CHECK_EQ_I(WIFSIGNALED(status) ? WTERMSIG(status) : 0, 0);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
}

TEST_MAIN()
