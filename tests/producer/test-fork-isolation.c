/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fork child never writes into its parent's session file: with its own
 * snapshot it records into that; when the snapshot cannot be had (its
 * mapping fails, or its move into place does: the port's test hook
 * FLIGHTREC_TEST_FORK_FAIL) recording is off in the child, said once, and
 * the parent's region is byte for byte what it was.
 */
#include "producer-test.h"

#include <flightrec/region.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The process's region (the static library exposes it to tests). */
extern unsigned char *flightrec__region_base;

static const char refused_line[] =
    "flightrec: the forked child could not have its own copy of the "
    "session's rings; recording is off in the child\n";

static size_t used_bytes(void)
{
    const struct flightrec_region_header *h =
        (const void *)flightrec__region_base;
    return (size_t)atomic_load(&h->used);
}

static void *record_in_thread(void *arg)
{
    for (uintptr_t i = 0; i < 4; i++)
        flightrec_produce(FLIGHTREC_USER(3), (uintptr_t)arg + i);
    return NULL;
}

/* Child failures, one bit each (its exit status). */
enum {
    CHILD_RUNNING = 1,      /* recording on where it must be off, or off */
    CHILD_DRAIN = 2,        /* drain result */
    CHILD_EVENTS = 4,       /* what its own drain delivered */
    CHILD_THREAD = 8,
    CHILD_GRANDCHILD = 16,
};

/* The child: records, changes the filter, starts, drains, makes a thread
 * and a child of its own.  @own_rings: whether it has its own copy. */
static int child_body(int own_rings)
{
    int failed = 0;
    for (uintptr_t i = 0; i < 5; i++)
        flightrec_produce(FLIGHTREC_USER(2), i);
    flightrec_filter_set(FLIGHTREC_USER(7), 0);
    flightrec_stop();
    flightrec_start();
    if (flightrec_is_running() != own_rings)
        failed |= CHILD_RUNNING;
    pthread_t thread;
    if (pthread_create(&thread, NULL, record_in_thread, (void *)100) != 0 ||
        pthread_join(thread, NULL) != 0)
        failed |= CHILD_THREAD;
    pid_t grandchild = fork();
    if (grandchild == 0) {
        flightrec_produce(FLIGHTREC_USER(4), 4);
        _exit(0);
    }
    int status;
    if (grandchild < 0 || waitpid(grandchild, &status, 0) != grandchild ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        failed |= CHILD_GRANDCHILD;
    FILE *file = tmpfile();
    int rc = file != NULL ? flightrec_drain(fileno(file)) : -1;
    if (rc != (own_rings ? 0 : -ENOMEM))
        failed |= CHILD_DRAIN;
    if (own_rings && rc == 0) {
        /* Its own five events, the thread's four (the grandchild's are
         * its own). */
        struct sp_stream s;
        parse_file(&s, file);
        struct sp_item items[16];
        size_t mine = 0, thread_items = 0, other = 0;
        for (uint32_t ring = 0; ring < s.ring_count; ring++) {
            size_t n = user_items(&s, ring, items, 16);
            for (size_t i = 0; i < n && i < 16; i++) {
                if (items[i].event == FLIGHTREC_USER(2))
                    mine++;
                else if (items[i].event == FLIGHTREC_USER(3))
                    thread_items++;
                else
                    other++;
            }
        }
        if (mine != 5 || thread_items != 4 || other != 0)
            failed |= CHILD_EVENTS;
        sp_free(&s);
    } else if (file != NULL) {
        fclose(file);
    }
    return failed;
}

/* @hook: FLIGHTREC_TEST_FORK_FAIL's value, or NULL. */
static void fork_leaves_parent_alone(const char *hook)
{
    if (hook != NULL)
        setenv("FLIGHTREC_TEST_FORK_FAIL", hook, 1);
    setup_or_die(64, FLIGHTREC_MODE_FLIGHT);
    for (uintptr_t i = 0; i < 3; i++)
        flightrec_produce(FLIGHTREC_USER(1), i);
    const struct flightrec_region_header *h =
        (const void *)flightrec__region_base;
    CHECK_EQ_U(h->flags & FLIGHTREC_REGION_HOT_SHARED,
               FLIGHTREC_REGION_HOT_SHARED);
    size_t used = used_bytes();
    unsigned char *before = malloc(used);
    CHECK(before != NULL);
    memcpy(before, flightrec__region_base, used);

    /* The child's messages come at the fork, before its own code runs. */
    FILE *messages = tmpfile();
    CHECK(messages != NULL);
    fflush(stderr);
    int saved_stderr = dup(STDERR_FILENO);
    CHECK(saved_stderr >= 0);
    CHECK(dup2(fileno(messages), STDERR_FILENO) == STDERR_FILENO);
    pid_t child = fork();
    if (child == 0)
        _exit(child_body(hook == NULL));
    CHECK(dup2(saved_stderr, STDERR_FILENO) == STDERR_FILENO);
    close(saved_stderr);
    CHECK(child > 0);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));

    /* Nothing of the parent's region changed: header, control block and
     * its lock, process block, hot page, ring list, rings. */
    CHECK_EQ_U(used_bytes(), used);
    size_t differ = 0;
    for (size_t i = 0; i < used; i++)
        differ += before[i] != flightrec__region_base[i];
    CHECK_EQ_U(differ, 0);
    free(before);
    CHECK_EQ_I(WEXITSTATUS(status), 0);

    /* Said once, in the child only. */
    size_t len;
    unsigned char *text = sp_read_fd(fileno(messages), &len);
    fclose(messages);
    if (hook != NULL) {
        CHECK_EQ_U(len, sizeof(refused_line) - 1);
        CHECK(memcmp(text, refused_line, len) == 0);
    } else {
        CHECK_EQ_U(len, 0);
    }
    free(text);

    /* The parent records as before, and finds only its own events. */
    CHECK_EQ_I(flightrec_is_running(), 1);
    CHECK_EQ_I(flightrec_event_enabled(FLIGHTREC_USER(7)), 1);
    flightrec_produce(FLIGHTREC_USER(1), 3);
    struct sp_stream s;
    capture(&s, 1);
    CHECK_EQ_U(s.pid, getpid());
    struct sp_item items[16];
    size_t n = 0;
    for (uint32_t ring = 0; ring < s.ring_count; ring++) {
        struct sp_item ring_items[16];
        size_t k = user_items(&s, ring, ring_items, 16);
        for (size_t i = 0; i < k && n < 16; i++)
            items[n++] = ring_items[i];
    }
    CHECK_EQ_U(n, 4);
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ_U(items[i].event, FLIGHTREC_USER(1));
        CHECK_EQ_U(items[i].data, i);
    }
    for (size_t i = 0; i < s.chunk_count; i++)
        CHECK_EQ_U(s.chunks[i].overflow, 0);
    sp_free(&s);
}

TEST(child_with_its_snapshot_leaves_parent_alone)
{
    fork_leaves_parent_alone(NULL);
}

TEST(child_without_snapshot_records_nothing_into_parent)
{
    fork_leaves_parent_alone("snapshot");
}

TEST(child_whose_snapshot_cannot_move_records_nothing_into_parent)
{
    fork_leaves_parent_alone("install");
}

TEST_MAIN()
