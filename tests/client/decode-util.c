/* SPDX-License-Identifier: BSD-2-Clause */
#define _POSIX_C_SOURCE 200809L
#include "decode-util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

struct ctx {
    struct tresult *res;
    int stop_after;
};

static int collect(const struct flightrec_record *r, void *arg)
{
    struct ctx *x = arg;
    struct tresult *res = x->res;
    struct trec *t;

    if (res->n == res->cap) {
        res->cap = res->cap ? res->cap * 2 : 256;
        res->recs = realloc(res->recs, res->cap * sizeof(*res->recs));
        CHECK(res->recs != NULL);
    }
    t = &res->recs[res->n++];
    t->type = r->type;
    t->flags = r->flags;
    t->ring = r->ring;
    t->event = r->event;
    t->loss_kind = r->loss_kind;
    t->time_ns = r->time_ns;
    t->data = r->data;
    t->loss_count = r->loss_count;
    t->offset = r->offset;
    CHECK(r->ring_info != NULL);
    CHECK_EQ_U(r->ring_info->id, r->ring);
    t->thread_id = r->ring_info->thread_id;
    t->context = r->ring_info->context;
    memcpy(t->thread_name, r->ring_info->thread_name, sizeof t->thread_name);
    if (x->stop_after != 0 && res->n >= (size_t)x->stop_after)
        return 1;
    return 0;
}

static void write_all(int fd, const unsigned char *p, size_t len)
{
    while (len != 0) {
        ssize_t k = write(fd, p, len);
        CHECK(k > 0);
        p += k;
        len -= (size_t)k;
    }
}

/* The whole stream through flightrec_client_read_fd(), which finishes. */
static void read_fd(struct tresult *res, flightrec_client *c,
                    const void *buf, size_t len, int how)
{
    int fd;
    pid_t child = -1;

    if (how == 1) {
        FILE *f = tmpfile();
        CHECK(f != NULL);
        fd = dup(fileno(f));
        CHECK(fd >= 0);
        fclose(f);
        write_all(fd, buf, len);
        CHECK(lseek(fd, 0, SEEK_SET) == 0);
    } else {
        int p[2];
        CHECK(pipe(p) == 0);
        child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            close(p[0]);
            write_all(p[1], buf, len);
            _exit(0);
        }
        close(p[1]);
        fd = p[0];
    }
    res->feed_rc = flightrec_client_read_fd(c, fd);
    close(fd);
    if (child > 0) {
        int st;
        CHECK(waitpid(child, &st, 0) == child);
    }
}

void tdecode(struct tresult *res, const void *buf, size_t len,
             const struct topts *opts)
{
    static const struct topts none;
    struct flightrec_client_options o;
    struct ctx x;
    flightrec_client *c;
    const unsigned char *p = buf;
    size_t at = 0;
    uint64_t seed;

    if (opts == NULL)
        opts = &none;
    memset(res, 0, sizeof(*res));
    x.res = res;
    x.stop_after = opts->stop_after;
    memset(&o, 0, sizeof(o));
    o.on_record = collect;
    o.arg = &x;
    o.merge = opts->merge;
    o.merge_window_ns = opts->window;
    o.memory_limit = opts->memory_limit;
    CHECK_EQ_I(flightrec_client_create(&c, &o), 0);
    if (opts->read_fd != 0) {
        read_fd(res, c, buf, len, opts->read_fd);
        at = len;
    }
    seed = (uint64_t)opts->chunking * 0x9e3779b97f4a7c15u + 1;
    while (at < len) {
        size_t k = len - at;
        if (opts->chunking == 1) {
            k = 1;
        } else if (opts->chunking > 1) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            k = (size_t)(seed >> 33) % 97 + 1;
            if (k > len - at)
                k = len - at;
        }
        int rc = flightrec_client_feed(c, p + at, k);
        at += k;
        if (rc != 0) {
            res->feed_rc = rc;
            break;
        }
    }
    res->finish_rc = flightrec_client_finish(c);
    snprintf(res->message, sizeof(res->message), "%s",
             flightrec_client_message(c));
    res->error_offset = flightrec_client_error_offset(c);
    flightrec_client_totals(c, &res->totals);
    res->info = *flightrec_client_info(c);
    if (opts->keep)
        res->client = c;
    else
        flightrec_client_destroy(c);
}

void tresult_free(struct tresult *res)
{
    free(res->recs);
    flightrec_client_destroy(res->client);
    memset(res, 0, sizeof(*res));
}

size_t tevents(const struct tresult *res, struct trec *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < res->n; i++) {
        if (res->recs[i].type != FLIGHTREC_RECORD_EVENT)
            continue;
        if (n < max)
            out[n] = res->recs[i];
        n++;
    }
    return n;
}

void tcompare(const struct tresult *a, const struct tresult *b)
{
    CHECK_EQ_U(a->n, b->n);
    CHECK_EQ_I(a->finish_rc, b->finish_rc);
    CHECK_EQ_S(a->message, b->message);
    for (size_t i = 0; i < a->n; i++) {
        const struct trec *x = &a->recs[i], *y = &b->recs[i];
        if (x->type != y->type || x->flags != y->flags ||
            x->ring != y->ring || x->event != y->event ||
            x->loss_kind != y->loss_kind || x->time_ns != y->time_ns ||
            x->data != y->data || x->loss_count != y->loss_count ||
            x->offset != y->offset || x->thread_id != y->thread_id ||
            x->context != y->context ||
            strncmp(x->thread_name, y->thread_name,
                    sizeof x->thread_name) != 0)
            TEST_FAIL("record %zu differs: offset %llu/%llu time %llu/%llu",
                      i, (unsigned long long)x->offset,
                      (unsigned long long)y->offset,
                      (unsigned long long)x->time_ns,
                      (unsigned long long)y->time_ns);
    }
}
