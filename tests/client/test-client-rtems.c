/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RTEMS record streams of every version RTEMS shipped (1 in both
 * numberings, 2..10), in all four formats, built from the event tables in
 * data/rtems-record (not from the decoder's constants) with the structure
 * each version has: header items, info strings from v7, the thread table
 * from v5, TAIL/HEAD chunks before v10.  One scenario, two CPUs at 1 MHz:
 * thread switches and names, an overflow, a missing chunk (exact from
 * TAIL/HEAD), items before their CPU's first sync, a 4.1 s gap without a
 * sync.  Every item gets a true time (ticks at 1 MHz, sync pairs at exact
 * quarters of a second), so every expected record is exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flightrec/client.h>

#include "decode-util.h"
#include "stream-vector.h"
#include "test.h"

static const uint32_t formats[4] = {
    FLIGHTREC_FORMAT_LE_32, FLIGHTREC_FORMAT_LE_64, FLIGHTREC_FORMAT_BE_32,
    FLIGHTREC_FORMAT_BE_64};

struct version_case {
    const char *table;
    uint32_t version;
    int seed;        /* the 2018 patch's v1 numbering */
    uint32_t kind;
    const char *numbering;
};

static const struct version_case versions[] = {
    {"events-rtems-v1-seed.tsv", 1, 1, FLIGHTREC_STREAM_RTEMS_V1_SEED,
     "RTEMS v1, numbering of the 2018 patch (118 system events)"},
    {"events-rtems-v1.tsv", 1, 0, FLIGHTREC_STREAM_RTEMS_V1,
     "RTEMS v1, committed numbering (142 system events)"},
    {"events-rtems-v2.tsv", 2, 0, FLIGHTREC_STREAM_RTEMS,
     "RTEMS v2 (142 system events)"},
    {"events-rtems-v3.tsv", 3, 0, FLIGHTREC_STREAM_RTEMS,
     "RTEMS v3 (181 system events)"},
    {"events-rtems-v4.tsv", 4, 0, FLIGHTREC_STREAM_RTEMS,
     "RTEMS v4 (238 system events)"},
    {"events-rtems-v5.tsv", 5, 0, FLIGHTREC_STREAM_RTEMS,
     "RTEMS v5 (239 system events)"},
    {"events-rtems-v6.tsv", 6, 0, FLIGHTREC_STREAM_RTEMS,
     "RTEMS v6 (302 system events)"},
    {"events-rtems-v7.tsv", 7, 0, FLIGHTREC_STREAM_RTEMS,
     "RTEMS v7 (310 system events)"},
    {"events-rtems-v8.tsv", 8, 0, FLIGHTREC_STREAM_RTEMS,
     "RTEMS v8 (338 system events)"},
    {"events-rtems-v9.tsv", 9, 0, FLIGHTREC_STREAM_RTEMS,
     "RTEMS v9 (341 system events)"},
    {"events-rtems-v10.tsv", 10, 0, FLIGHTREC_STREAM_RTEMS_V10,
     "RTEMS v10 (342 system events)"},
};
#define VERSION_COUNT (sizeof(versions) / sizeof(versions[0]))

/* Thread object ids and names of the scenario. */
#define IDLE0 0x09010001u
#define IDLE1 0x09010002u
#define UI1 0x0a010001u
#define WORKER 0x0a010002u
#define LATE 0x0a010003u
static const struct {
    uint32_t id;
    const char *name;
} table_threads[] = {
    {IDLE0, "IDLE"}, {IDLE1, "IDLE"}, {UI1, "UI1"},
    {WORKER, "worker_thread_01"}, /* 16 bytes: no NUL in the last item */
};

#define FREQ 1000000u
#define COUNT 16u
#define MAX_EXPECT 256

struct cpu {
    uint32_t head;       /* items produced so far (RTEMS v1..v9 HEAD) */
    int64_t tid;         /* running thread as the decoder must see it */
    int pending_loss;    /* expected LOSS records waiting for a time */
};

struct build {
    struct fr_vec v;
    struct fr_rtems_table t;
    const struct version_case *vc;
    struct cpu cpu[2];
    int ring_seen[2];
    struct trec exp[MAX_EXPECT];
    size_t n;
};

static uint32_t id_of(const struct build *b, const char *name)
{
    if (strncmp(name, "USER_", 5) == 0)
        return 512 + (uint32_t)atoi(name + 5);
    return fr_rtems_id(&b->t, name);
}

/* The first of @a a / @a b the table has (names change across versions). */
static uint32_t id_either(const struct build *b, const char *a,
                          const char *c)
{
    int id = fr_rtems_find(&b->t, a);
    return id >= 0 ? (uint32_t)id : fr_rtems_id(&b->t, c);
}

/* Names the decoder knows for a thread in this version. */
static const char *thread_name(const struct build *b, int64_t tid)
{
    if (tid < 0)
        return "";
    if (b->vc->version >= 5) {
        for (size_t i = 0; i < 4; i++)
            if (table_threads[i].id == tid)
                return table_threads[i].name;
    }
    if (tid == LATE && b->vc->version >= 7)
        return "late";
    return "";
}

static struct trec *expect(struct build *b, uint32_t cpu)
{
    struct trec *e;

    CHECK(b->n < MAX_EXPECT);
    e = &b->exp[b->n++];
    memset(e, 0, sizeof(*e));
    e->ring = cpu;
    e->thread_id = b->cpu[cpu].tid;
    snprintf(e->thread_name, sizeof e->thread_name, "%s",
             thread_name(b, b->cpu[cpu].tid));
    return e;
}

/* An event item at true time @a ticks (1 MHz); the decoder must give it
 * time ticks * 1000 ns. */
static void event(struct build *b, uint32_t cpu, uint64_t ticks,
                  const char *name, uint64_t data)
{
    uint32_t id = id_of(b, name);
    struct trec *e;

    if (strcmp(name, "THREAD_SWITCH_OUT") == 0 ||
        strcmp(name, "THREAD_SWITCH_IN") == 0)
        b->cpu[cpu].tid = (int64_t)data;
    /* Losses take the time of the ring's next event. */
    for (size_t i = b->n; b->cpu[cpu].pending_loss > 0 && i-- > 0;) {
        if (b->exp[i].ring == cpu && b->exp[i].type == FLIGHTREC_RECORD_LOSS &&
            b->exp[i].time_ns == UINT64_MAX) {
            b->exp[i].time_ns = ticks * 1000;
            b->cpu[cpu].pending_loss--;
        }
    }
    e = expect(b, cpu);
    e->type = FLIGHTREC_RECORD_EVENT;
    e->event = id;
    e->data = fr_vec_data_bytes(&b->v) == 4 ? (uint32_t)data : data;
    e->time_ns = ticks * 1000;
    e->offset = b->v.len;
    fr_vec_item(&b->v, (uint32_t)ticks, id, data);
}

static void loss(struct build *b, uint32_t cpu, uint32_t kind,
                 uint64_t count)
{
    struct trec *e;

    b->cpu[cpu].tid = -1; /* a switch may have been lost */
    e = expect(b, cpu);
    e->type = FLIGHTREC_RECORD_LOSS;
    e->loss_kind = kind;
    e->loss_count = count;
    e->time_ns = UINT64_MAX; /* set by the next event */
    b->cpu[cpu].pending_loss++;
}

/* UPTIME_LOW / UPTIME_HIGH at @a ticks, a multiple of 0.25 s: the 32.32
 * value is exact. */
static void uptime(struct build *b, uint32_t cpu, uint64_t ticks)
{
    uint64_t bt = (ticks / FREQ) << 32 | (ticks % FREQ) / 250000 << 30;

    CHECK_EQ_U(ticks % 250000, 0);
    (void)cpu;
    fr_vec_item(&b->v, (uint32_t)ticks, id_of(b, "UPTIME_LOW"), (uint32_t)bt);
    fr_vec_item(&b->v, (uint32_t)ticks, id_of(b, "UPTIME_HIGH"), bt >> 32);
}

/* A thread switch as RTEMS records it: one produce_n of three items. */
static void switch_to(struct build *b, uint32_t cpu, uint64_t ticks,
                      uint32_t from, uint32_t to)
{
    event(b, cpu, ticks, "THREAD_SWITCH_OUT", from);
    event(b, cpu, ticks, "THREAD_STACK_CURRENT", 0x180);
    event(b, cpu, ticks, "THREAD_SWITCH_IN", to);
}

/* A chunk head: @a produced items since the previous chunk of this CPU
 * (v1..v9 TAIL / HEAD), @a overflow of them lost (v10 PER_CPU_OVERFLOW). */
static void chunk(struct build *b, uint32_t cpu, uint32_t produced,
                  uint32_t overflow)
{
    struct cpu *k = &b->cpu[cpu];

    b->ring_seen[cpu] = 1;
    fr_vec_item(&b->v, 0, id_of(b, "PROCESSOR"), cpu);
    if (b->vc->version < 10) {
        fr_vec_item(&b->v, 0, id_either(b, "PER_CPU_TAIL", "TAIL"), k->head);
        fr_vec_item(&b->v, 0, id_either(b, "PER_CPU_HEAD", "HEAD"),
                    k->head + produced);
    } else if (overflow != 0) {
        fr_vec_item(&b->v, 0, id_of(b, "PER_CPU_OVERFLOW"), overflow);
    }
    k->head += produced;
    if (overflow != 0)
        loss(b, cpu, FLIGHTREC_LOSS_OVERFLOW, overflow);
}

static void header(struct build *b)
{
    const struct version_case *vc = b->vc;

    fr_vec_item(&b->v, 0, id_of(b, "VERSION"), vc->version);
    if (!vc->seed)
        fr_vec_item(&b->v, 0, id_of(b, "PROCESSOR_MAXIMUM"), 1);
    fr_vec_item(&b->v, 0, id_either(b, "PER_CPU_COUNT", "COUNT"), COUNT);
    fr_vec_item(&b->v, 0, id_of(b, "FREQUENCY"), FREQ);
    if (vc->version >= 7) {
        fr_vec_packed(&b->v, 0, id_of(b, "ARCH"), "sparc", 5);
        fr_vec_packed(&b->v, 0, id_of(b, "MULTILIB"), "v8", 2);
        fr_vec_packed(&b->v, 0, id_of(b, "BSP"), "erc32", 5);
        fr_vec_packed(&b->v, 0, id_of(b, "VERSION_CONTROL_KEY"), "5.3", 3);
        fr_vec_packed(&b->v, 0, id_of(b, "TOOLS"), "10.2.1 20210309", 15);
    }
    if (vc->version >= 5) {
        for (size_t i = 0; i < 4; i++) {
            const char *name = table_threads[i].name;
            fr_vec_item(&b->v, 0, id_of(b, "THREAD_ID"), table_threads[i].id);
            fr_vec_packed(&b->v, 0, id_of(b, "THREAD_NAME"), name,
                          strlen(name));
        }
    }
}

/* The scenario; returns the stream in b->v and the records in b->exp. */
static void build(struct build *b, const struct version_case *vc,
                  uint32_t format)
{
    char path[512];
    size_t per, items;
    int v10 = vc->version >= 10;

    memset(b, 0, sizeof(*b));
    b->vc = vc;
    snprintf(path, sizeof path, "%s/%s", FLIGHTREC_RTEMS_DATA_DIR, vc->table);
    fr_rtems_table_load(&b->t, path);
    fr_vec_init(&b->v, format);
    per = fr_vec_data_bytes(&b->v);
    b->cpu[0].tid = b->cpu[1].tid = -1;
    header(b);

    /* CPU 0: an item before its first sync (timed backwards), the sync at
     * 0.25 s, a switch from IDLE to UI1. */
    chunk(b, 0, 7, 0);
    event(b, 0, 200000, "USER_0", 1);
    uptime(b, 0, 250000);
    switch_to(b, 0, 260000, IDLE0, UI1);
    event(b, 0, 270000, "USER_1", 2);

    /* CPU 1: sync, switch to the worker, then 4.1 s without a sync. */
    chunk(b, 1, 6, 0);
    uptime(b, 1, 500000);
    switch_to(b, 1, 600000, IDLE1, WORKER);
    event(b, 1, 4700000, "USER_2", 3);

    /* CPU 0 overflowed: 20 produced, a 16-item ring hands out 15. */
    chunk(b, 0, 20, 5);
    items = 0;
    for (uint32_t i = 0; i < 3; i++, items++)
        event(b, 0, 300000 + i * 1000, "USER_3", i);
    uptime(b, 0, 750000);
    items += 2;
    event(b, 0, 760000, "USER_4", 7);
    items++;
    event(b, 0, 770000, "THREAD_CREATE", LATE);
    items++;
    if (vc->version >= 5) {
        /* THREAD_CREATE's name, with its time. */
        fr_vec_packed(&b->v, 770000, id_of(b, "THREAD_NAME"), "late", 4);
        items += (4 + per - 1) / per;
    }
    switch_to(b, 0, 780000, UI1, LATE);
    items += 3;
    for (uint32_t i = 0; items < COUNT - 1; i++, items++)
        event(b, 0, 790000 + i, "USER_5", i);

    /* CPU 1: a chunk of 5 items never reached the stream (v1..v9 see it
     * from TAIL / HEAD; v10 cannot), then one of 4. */
    if (!v10) {
        b->cpu[1].head += 5;
        chunk(b, 1, 4, 0);
        loss(b, 1, FLIGHTREC_LOSS_MISSING, 5);
    } else {
        chunk(b, 1, 4, 0);
    }
    event(b, 1, 4800000, "USER_6", 6);
    uptime(b, 1, 5000000);
    event(b, 1, 5000500, "USER_7", 7);

    /* CPU 0 again, after 4.4 s: a sync first. */
    chunk(b, 0, 3, 0);
    uptime(b, 0, 5250000);
    event(b, 0, 5300000, "USER_8", 8);
}

static void build_free(struct build *b)
{
    fr_vec_free(&b->v);
    fr_rtems_table_free(&b->t);
}

static void check_records(const struct build *b, const struct tresult *res,
                          const struct trec *exp, const char *what)
{
    if (res->n != b->n)
        TEST_FAIL("%s, %s: %zu records, expected %zu", b->vc->table, what,
                  res->n, b->n);
    for (size_t i = 0; i < b->n; i++) {
        const struct trec *x = &res->recs[i], *y = &exp[i];
        if (x->type != y->type || x->ring != y->ring ||
            x->time_ns != y->time_ns || x->flags != 0 ||
            x->thread_id != y->thread_id ||
            strcmp(x->thread_name, y->thread_name) != 0 ||
            (y->type == FLIGHTREC_RECORD_EVENT &&
             (x->event != y->event || x->data != y->data ||
              x->offset != y->offset)) ||
            (y->type == FLIGHTREC_RECORD_LOSS &&
             (x->loss_kind != y->loss_kind ||
              x->loss_count != y->loss_count)))
            TEST_FAIL("%s, format 0x%08x, %s: record %zu: type %u ring %u "
                      "time %llu event %u data %llu thread %lld '%s' loss "
                      "%u/%llu flags %u; expected type %u ring %u time %llu "
                      "event %u data %llu thread %lld '%s' loss %u/%llu",
                      b->vc->table, (unsigned)b->v.format, what, i, x->type,
                      x->ring, (unsigned long long)x->time_ns, x->event,
                      (unsigned long long)x->data, (long long)x->thread_id,
                      x->thread_name, x->loss_kind,
                      (unsigned long long)x->loss_count, x->flags, y->type,
                      y->ring, (unsigned long long)y->time_ns, y->event,
                      (unsigned long long)y->data, (long long)y->thread_id,
                      y->thread_name, y->loss_kind,
                      (unsigned long long)y->loss_count);
    }
}

/* Merge order: time, then ring (first appearance: CPU 0 first), stable. */
static int merge_cmp(const void *pa, const void *pb)
{
    const struct trec *a = pa, *b = pb;

    if (a->time_ns != b->time_ns)
        return a->time_ns < b->time_ns ? -1 : 1;
    if (a->ring != b->ring)
        return a->ring < b->ring ? -1 : 1;
    /* Same ring, same time: stream order (the expected list's). */
    return a->context < b->context ? -1 : a->context > b->context;
}

static void check_info(const struct build *b, const struct tresult *res)
{
    const struct version_case *vc = b->vc;
    const char *tools = vc->version >= 7 ? "10.2.1 20210309" : "";

    CHECK_EQ_I(res->finish_rc, 0);
    CHECK_EQ_S(res->message, "");
    CHECK_EQ_U(res->info.kind, vc->kind);
    CHECK_EQ_U(res->info.version, vc->version);
    CHECK_EQ_U(res->info.format, b->v.format);
    CHECK_EQ_U(res->info.frequency, FREQ);
    CHECK_EQ_U(res->info.items_per_ring, COUNT);
    CHECK_EQ_U(res->info.ring_count, vc->seed ? 0 : 2);
    CHECK_EQ_S(res->info.arch, vc->version >= 7 ? "sparc" : "");
    CHECK_EQ_S(res->info.bsp, vc->version >= 7 ? "erc32" : "");
    CHECK_EQ_S(res->info.tools, tools);
    CHECK_EQ_U(res->totals.overflow, 5);
    CHECK_EQ_U(res->totals.missing, vc->version >= 10 ? 0 : 5);
    CHECK_EQ_U(res->totals.discard, 0);
    CHECK_EQ_U(res->totals.untimed, 0);
    CHECK_EQ_U(res->totals.late, 0);
    CHECK_EQ_U(res->totals.rings, 2);
    CHECK_EQ_U(res->totals.bytes, b->v.len);
}

/* The decoder names every id as the version's table does. */
static void check_names(const struct build *b, flightrec_client *c)
{
    CHECK_EQ_S(flightrec_client_numbering(c), b->vc->numbering);
    for (uint32_t id = 0; id < 512; id++) {
        const char *want = b->t.names[id];
        char generated[16];
        /* Unused ids are SYSTEM_<id>, also in v5, whose placeholders are
         * off by one (SYSTEM_238 is 239: THREAD_NAME went in before). */
        if (want == NULL || strncmp(want, "SYSTEM_", 7) == 0) {
            snprintf(generated, sizeof generated, "SYSTEM_%u", (unsigned)id);
            want = generated;
        }
        CHECK_EQ_S(flightrec_client_event_name(c, id), want);
        CHECK_EQ_I(flightrec_client_event_id(c, want), (int)id);
    }
    CHECK_EQ_S(flightrec_client_event_name(c, 512 + 7), "USER_7");
    /* Switches alone name no thread (no thread table before v5). */
    if (b->vc->version >= 5)
        CHECK_EQ_S(flightrec_client_thread_name(c, WORKER),
                   "worker_thread_01");
    else
        CHECK(flightrec_client_thread_name(c, WORKER) == NULL);
}

TEST(versions_formats)
{
    for (size_t vi = 0; vi < VERSION_COUNT; vi++) {
        for (int f = 0; f < 4; f++) {
            struct build b;
            struct tresult res, one, rnd, merged;
            struct topts keep = {.keep = 1}, bytes = {.chunking = 1},
                         random = {.chunking = 7},
                         merge = {.merge = 1, .window = 0};
            struct trec *sorted;

            build(&b, &versions[vi], formats[f]);
            tdecode(&res, b.v.buf, b.v.len, &keep);
            check_info(&b, &res);
            check_records(&b, &res, b.exp, "whole");
            check_names(&b, res.client);

            tdecode(&one, b.v.buf, b.v.len, &bytes);
            check_info(&b, &one);
            check_records(&b, &one, b.exp, "byte by byte");
            tdecode(&rnd, b.v.buf, b.v.len, &random);
            check_records(&b, &rnd, b.exp, "random pieces");

            sorted = malloc(b.n * sizeof(*sorted));
            CHECK(sorted != NULL);
            memcpy(sorted, b.exp, b.n * sizeof(*sorted));
            for (size_t i = 0; i < b.n; i++)
                sorted[i].context = (uint32_t)i; /* stream order */
            qsort(sorted, b.n, sizeof(*sorted), merge_cmp);
            for (size_t i = 0; i < b.n; i++)
                sorted[i].context = 0;
            tdecode(&merged, b.v.buf, b.v.len, &merge);
            check_info(&b, &merged);
            check_records(&b, &merged, sorted, "merged");

            free(sorted);
            tresult_free(&res);
            tresult_free(&one);
            tresult_free(&rnd);
            tresult_free(&merged);
            build_free(&b);
        }
    }
}

/* The two version 1 numberings differ from the first header item on; an
 * item that heads neither is an error naming it. */
TEST(v1_numbering_detection)
{
    struct fr_vec v;
    struct tresult res;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_item(&v, 0, 1, 1);
    fr_vec_item(&v, 0, 2, 0); /* ACCEPT in both */
    tdecode(&res, v.buf, v.len, NULL);
    CHECK_EQ_I(res.finish_rc, FLIGHTREC_ESTREAM);
    CHECK_EQ_S(res.message, "byte 16: RTEMS version 1 stream: event 2 after "
                            "VERSION is no header item of either version 1 "
                            "numbering");
    tresult_free(&res);
    fr_vec_free(&v);

    fr_vec_init(&v, FLIGHTREC_FORMAT_BE_64);
    fr_vec_item(&v, 0, 1, 1);
    tdecode(&res, v.buf, v.len, NULL);
    CHECK_EQ_I(res.finish_rc, FLIGHTREC_ETRUNC);
    CHECK_EQ_S(res.message, "byte 20: stream ends before the version 1 "
                            "header shows its numbering");
    CHECK_EQ_U(res.info.version, 1);
    CHECK_EQ_U(res.info.kind, FLIGHTREC_STREAM_UNKNOWN);
    tresult_free(&res);
    fr_vec_free(&v);

    /* Versions beyond those RTEMS shipped. */
    for (uint32_t bad = 0; bad <= 11; bad += 11) {
        char msg[64];
        fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
        fr_vec_item(&v, 0, 1, bad);
        tdecode(&res, v.buf, v.len, NULL);
        snprintf(msg, sizeof msg, "byte 8: unsupported stream version %u",
                 (unsigned)bad);
        CHECK_EQ_I(res.finish_rc, FLIGHTREC_EVERSION);
        CHECK_EQ_S(res.message, msg);
        tresult_free(&res);
        fr_vec_free(&v);
    }
}

/* The thread running on a CPU is renamed while it runs (THREAD_CREATE of
 * its own id after a restart): the CPU's next records carry the new name,
 * the ones before keep the old; --thread and stats see the same. */
TEST(rename_while_running)
{
    struct build b;
    struct tresult res;
    struct topts merge = {.merge = 1};
    char path[512];
    uint32_t create, name;

    memset(&b, 0, sizeof(b));
    b.vc = &versions[VERSION_COUNT - 1];
    snprintf(path, sizeof path, "%s/%s", FLIGHTREC_RTEMS_DATA_DIR,
             b.vc->table);
    fr_rtems_table_load(&b.t, path);
    fr_vec_init(&b.v, FLIGHTREC_FORMAT_LE_32);
    b.cpu[0].tid = -1;
    header(&b);
    create = id_of(&b, "THREAD_CREATE");
    name = id_of(&b, "THREAD_NAME");
    chunk(&b, 0, 0, 0);
    uptime(&b, 0, 250000);
    fr_vec_item(&b.v, 260000, id_of(&b, "THREAD_SWITCH_IN"), UI1);
    fr_vec_item(&b.v, 270000, id_of(&b, "USER_1"), 1);
    fr_vec_item(&b.v, 280000, create, UI1);
    fr_vec_packed(&b.v, 280000, name, "renamed", 7);
    fr_vec_item(&b.v, 290000, id_of(&b, "USER_1"), 2);
    tdecode(&res, b.v.buf, b.v.len, &merge);
    CHECK_EQ_I(res.finish_rc, 0);
    CHECK_EQ_U(res.n, 4);
    CHECK_EQ_S(res.recs[0].thread_name, "UI1");
    CHECK_EQ_S(res.recs[1].thread_name, "UI1");
    CHECK_EQ_S(res.recs[2].thread_name, "UI1"); /* THREAD_CREATE itself */
    CHECK_EQ_S(res.recs[3].thread_name, "renamed");
    CHECK_EQ_I(res.recs[3].thread_id, UI1);
    CHECK_EQ_U(res.recs[3].time_ns, 290000000u);
    tresult_free(&res);
    build_free(&b);
}

/* 1 MHz: sync pairs 2^22 ticks (4.19 s) apart.  CPU 1's first pair comes
 * at 4.25 s, so its items from 0.3 s wait that long for their times while
 * CPU 0's run on.  A 2 s window delivers 21 of them late; the window the
 * stream implies (twice 4.19 s) none, in exact time order. */
TEST(window_from_stream)
{
    struct fr_vec v;
    struct tresult fixed, derived;
    struct topts two = {.merge = 1, .window = 2000000000u},
                 autow = {.merge = 1, .window = FLIGHTREC_MERGE_WINDOW_AUTO};
    size_t cpu1_items = 0;

    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_item(&v, 0, FLIGHTREC_EV_VERSION, 10);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR_MAXIMUM, 1);
    fr_vec_item(&v, 0, FLIGHTREC_EV_PER_CPU_COUNT, 512);
    fr_vec_item(&v, 0, FLIGHTREC_EV_FREQUENCY, FREQ);
    /* Chunks every 0.5 s; items every 0.1 s from 0.3 s, both CPUs. */
    for (uint32_t k = 0; k < 10; k++) {
        for (uint32_t cpu = 0; cpu < 2; cpu++) {
            fr_vec_item(&v, 0, FLIGHTREC_EV_PROCESSOR, cpu);
            for (uint32_t i = 0; i < 5; i++) {
                uint64_t t = (uint64_t)k * 500000 + i * 100000;
                uint64_t sync = cpu == 0 ? 250000 : 4250000;
                if (t >= 300000) {
                    fr_vec_item(&v, (uint32_t)t, FLIGHTREC_USER(cpu), t);
                    cpu1_items += cpu;
                }
                if (t + 50000 == sync)
                    fr_vec_uptime(&v, (uint32_t)sync,
                                  sync / FREQ << 32 |
                                      (sync % FREQ) / 250000 << 30);
            }
        }
    }
    tdecode(&fixed, v.buf, v.len, &two);
    tdecode(&derived, v.buf, v.len, &autow);
    CHECK_EQ_I(fixed.finish_rc, 0);
    CHECK_EQ_I(derived.finish_rc, 0);
    CHECK_EQ_U(fixed.n, 2 * cpu1_items);
    CHECK_EQ_U(derived.n, fixed.n);
    CHECK_EQ_U(fixed.info.merge_window_ns, 2000000000u);
    CHECK_EQ_U(fixed.totals.late, 21);
    CHECK_EQ_U(derived.info.merge_window_ns,
               2 * UINT64_C(4194304) * 1000);
    CHECK_EQ_U(derived.totals.late, 0);
    for (size_t i = 0; i < derived.n; i++) {
        CHECK_EQ_U(derived.recs[i].time_ns, derived.recs[i].data * 1000);
        CHECK_EQ_U(derived.recs[i].flags, 0);
        if (i > 0)
            CHECK(derived.recs[i].time_ns >= derived.recs[i - 1].time_ns);
    }
    tresult_free(&fixed);
    tresult_free(&derived);
    fr_vec_free(&v);
}

/* RTEMS master between be764f7dec and 4655a7df00 still says version 9 but
 * frames chunks as version 10 does (PROCESSOR, PER_CPU_OVERFLOW, no TAIL /
 * HEAD): the overflow count is taken as it is. */
TEST(v9_fetch_framing)
{
    struct build b;
    struct tresult res;
    char path[512];

    memset(&b, 0, sizeof(b));
    b.vc = &versions[VERSION_COUNT - 2];
    CHECK_EQ_U(b.vc->version, 9);
    snprintf(path, sizeof path, "%s/%s", FLIGHTREC_RTEMS_DATA_DIR,
             b.vc->table);
    fr_rtems_table_load(&b.t, path);
    fr_vec_init(&b.v, FLIGHTREC_FORMAT_BE_64);
    header(&b);
    fr_vec_item(&b.v, 0, id_of(&b, "PROCESSOR"), 1);
    uptime(&b, 1, 250000);
    fr_vec_item(&b.v, 260000, id_of(&b, "USER_1"), 1);
    fr_vec_item(&b.v, 0, id_of(&b, "PROCESSOR"), 1);
    fr_vec_item(&b.v, 0, id_of(&b, "PER_CPU_OVERFLOW"), 3);
    fr_vec_item(&b.v, 270000, id_of(&b, "USER_2"), 2);
    uptime(&b, 1, 500000);
    tdecode(&res, b.v.buf, b.v.len, NULL);
    CHECK_EQ_I(res.finish_rc, 0);
    CHECK_EQ_U(res.n, 3);
    CHECK_EQ_U(res.recs[0].time_ns, 260000000u);
    CHECK_EQ_U(res.recs[1].type, FLIGHTREC_RECORD_LOSS);
    CHECK_EQ_U(res.recs[1].loss_kind, FLIGHTREC_LOSS_OVERFLOW);
    CHECK_EQ_U(res.recs[1].loss_count, 3);
    CHECK_EQ_U(res.recs[1].time_ns, 270000000u);
    CHECK_EQ_U(res.recs[2].time_ns, 270000000u);
    CHECK_EQ_U(res.totals.overflow, 3);
    CHECK_EQ_U(res.totals.missing, 0);
    tresult_free(&res);
    build_free(&b);
}

TEST_MAIN(TEST_ENTRY(versions_formats), TEST_ENTRY(v1_numbering_detection),
          TEST_ENTRY(v9_fetch_framing),
          TEST_ENTRY(rename_while_running), TEST_ENTRY(window_from_stream))
