/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names: packed name sequences (THREAD_NAME, EVENT_NAME, RTEMS info
 * strings), the per-stream event name table in the stream's numbering, the
 * thread name table.
 */
#include "client-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event-table.h"

/* Appends the bytes of a packed data word (least significant first) to a
 * NUL-terminated buffer of @a cap bytes; returns 1 once a NUL was seen. */
static int unpack(char *buf, size_t cap, size_t *len, uint64_t data,
                  size_t bytes)
{
    for (size_t i = 0; i < bytes; i++) {
        char ch = (char)(data >> (8 * i));
        if (ch == '\0')
            return 1;
        if (*len + 1 < cap)
            buf[(*len)++] = ch;
    }
    buf[*len] = '\0';
    return 0;
}

static struct frc_thread *thread_slot(struct flightrec_client *c, int64_t id)
{
    uint32_t i = fr_hash_map_find(&c->thread_map, (uint64_t)id);

    if (i != FR_HASH_NONE)
        return &c->threads[i];
    if (c->thread_count == c->thread_cap) {
        size_t cap = c->thread_cap ? c->thread_cap * 2 : 16;
        struct frc_thread *t = realloc(c->threads, cap * sizeof(*t));
        if (t == NULL)
            return NULL;
        c->threads = t;
        c->thread_cap = cap;
    }
    /* Added last, so its index is thread_count. */
    if (fr_hash_map_add(&c->thread_map, (uint64_t)id, NULL) == FR_HASH_NONE)
        return NULL;
    struct frc_thread *t = &c->threads[c->thread_count++];
    t->id = id;
    t->ring = 0;
    t->name[0] = '\0';
    return t;
}

static void set_ring_thread(struct frc_ring *r, int64_t id, const char *name)
{
    r->info.thread_id = id;
    memcpy(r->info.thread_name, name, FRC_NAME_MAX);
    frc_ident_touch(r);
}

/* RTEMS: thread @a id runs on CPU @a r from this item on.  A thread runs
 * on one CPU at a time, so a named thread remembers where, for a new name
 * that arrives while it runs.  A thread without a name gets no table entry
 * (switches alone never grow the table): its name can only come from
 * THREAD_CREATE, which precedes its first switch. */
void frc_thread_runs(struct flightrec_client *c, struct frc_ring *r,
                     int64_t id)
{
    static const char none[FRC_NAME_MAX];
    uint32_t i;

    if (r->info.thread_id == id)
        return;
    i = fr_hash_map_find(&c->thread_map, (uint64_t)id);
    if (i != FR_HASH_NONE) {
        c->threads[i].ring = r->index + 1;
        set_ring_thread(r, id, c->threads[i].name);
    } else {
        set_ring_thread(r, id, none);
    }
}

/* RTEMS: items were lost, and with them maybe a switch. */
void frc_thread_unknown(struct frc_ring *r)
{
    static const char none[FRC_NAME_MAX];

    if (r->info.thread_id != -1 || r->info.thread_name[0] != '\0')
        set_ring_thread(r, -1, none);
}

void frc_name_start(struct flightrec_client *c, int kind, int64_t target,
                    struct frc_ring *ring)
{
    c->name_kind = kind;
    c->name_target = target;
    c->name_len = 0;
    c->name_buf[0] = '\0';
    c->name_done = 0;
    c->name_ring = ring;
    c->name_next = c->item_no + 1;
}

/* One name item: continues the sequence only if it follows its head or the
 * previous name item directly; stray name items are ignored. */
int frc_name_item(struct flightrec_client *c, uint64_t data)
{
    char *dst;

    if (c->name_kind == 0 || c->item_no != c->name_next)
        return 0;
    c->name_next = c->item_no + 1;
    if (c->name_done)
        return 0;
    c->name_done = unpack(c->name_buf, sizeof(c->name_buf), &c->name_len,
                          data, (size_t)c->item_size - 4);
    c->name_buf[c->name_len] = '\0';
    if (c->name_kind == 2) {
        uint32_t id = (uint32_t)c->name_target;
        if (c->event_names[id] == NULL) {
            c->event_names[id] = malloc(FRC_NAME_MAX);
            if (c->event_names[id] == NULL)
                return -1;
        }
        dst = c->event_names[id];
        c->event_names_changes++;
    } else {
        struct frc_thread *t = thread_slot(c, c->name_target);
        if (t == NULL)
            return -1;
        dst = t->name;
        if (c->name_ring != NULL) {
            memcpy(c->name_ring->info.thread_name, c->name_buf,
                   c->name_len + 1);
            frc_ident_touch(c->name_ring);
        } else if (t->ring != 0 &&
                   c->rings[t->ring - 1]->info.thread_id == t->id) {
            /* RTEMS: the thread is running; its CPU shows the name. */
            struct frc_ring *r = c->rings[t->ring - 1];
            memcpy(r->info.thread_name, c->name_buf, c->name_len + 1);
            frc_ident_touch(r);
        }
    }
    memcpy(dst, c->name_buf, c->name_len + 1);
    return 0;
}

/* RTEMS info strings: a run of consecutive items of one id. */
void frc_info_item(struct flightrec_client *c, uint32_t action, uint64_t data)
{
    char *dst;
    size_t cap;

    switch (action) {
    case A_INFO_ARCH:
        dst = c->info.arch;
        cap = sizeof(c->info.arch);
        break;
    case A_INFO_BSP:
        dst = c->info.bsp;
        cap = sizeof(c->info.bsp);
        break;
    case A_INFO_TOOLS:
        dst = c->info.tools;
        cap = sizeof(c->info.tools);
        break;
    default:
        return;
    }
    if (c->item_no != c->info_next || c->info_event != action) {
        c->info_len = 0;
        c->info_done = 0;
        dst[0] = '\0';
    }
    c->info_next = c->item_no + 1;
    c->info_event = action;
    if (!c->info_done)
        c->info_done = unpack(dst, cap, &c->info_len, data,
                              (size_t)c->item_size - 4);
}

void frc_names_free(struct flightrec_client *c)
{
    for (size_t i = 0; i < FLIGHTREC_EVENT_COUNT; i++)
        free(c->event_names[i]);
    free(c->gen_names);
    free(c->threads);
    fr_hash_map_free(&c->thread_map);
}

/* Before the VERSION item the numbering is flightrec's (numbering 0). */
static const char *system_name(const flightrec_client *c, uint32_t event)
{
    if (event >= 512)
        return NULL;
    return flightrec__event_names[c->numbering][event];
}

const char *flightrec_client_numbering(const flightrec_client *client)
{
    if (client == NULL || client->info.kind == FLIGHTREC_STREAM_UNKNOWN)
        return "unknown";
    return flightrec__numbering_names[client->numbering];
}

const char *flightrec_client_event_name(const flightrec_client *client,
                                        uint32_t event)
{
    struct flightrec_client *c = (struct flightrec_client *)client;
    const char *name;

    if (c == NULL)
        return "";
    event &= FLIGHTREC_EVENT_MASK;
    if (c->event_names[event] != NULL)
        return c->event_names[event];
    name = system_name(c, event);
    if (name != NULL)
        return name;
    if (c->gen_names == NULL) {
        c->gen_names = calloc(FLIGHTREC_EVENT_COUNT, sizeof(*c->gen_names));
        if (c->gen_names == NULL)
            return event >= 512 ? "USER" : "SYSTEM";
    }
    if (c->gen_names[event][0] == '\0') {
        if (event >= 512)
            snprintf(c->gen_names[event], sizeof(c->gen_names[event]),
                     "USER_%u", (unsigned)(event - 512));
        else
            snprintf(c->gen_names[event], sizeof(c->gen_names[event]),
                     "SYSTEM_%u", (unsigned)event);
    }
    return c->gen_names[event];
}

uint64_t flightrec_client_event_names_changes(const flightrec_client *client)
{
    return client != NULL ? client->event_names_changes : 0;
}

const char *flightrec_client_thread_name(const flightrec_client *client,
                                         int64_t thread_id)
{
    uint32_t i;

    if (client == NULL)
        return NULL;
    i = fr_hash_map_find(&client->thread_map, (uint64_t)thread_id);
    if (i == FR_HASH_NONE)
        return NULL;
    return client->threads[i].name;
}

/* Parses "<prefix><n>" with n in 0..max; returns n or -1. */
static int numbered(const char *name, const char *prefix, long max)
{
    size_t n = strlen(prefix);
    char *end;
    long v;

    if (strncmp(name, prefix, n) != 0 || name[n] < '0' || name[n] > '9')
        return -1;
    v = strtol(name + n, &end, 10);
    if (*end != '\0' || v < 0 || v > max)
        return -1;
    return (int)v;
}

int flightrec_client_event_id(const flightrec_client *client,
                              const char *name)
{
    int n;

    if (client == NULL || name == NULL)
        return -1;
    for (uint32_t i = 0; i < FLIGHTREC_EVENT_COUNT; i++) {
        if (client->event_names[i] != NULL &&
            strcmp(client->event_names[i], name) == 0)
            return (int)i;
    }
    for (uint32_t i = 0; i < 512; i++) {
        const char *s = system_name(client, i);
        if (s != NULL && strcmp(s, name) == 0)
            return (int)i;
    }
    n = numbered(name, "USER_", 511);
    if (n >= 0)
        return n + 512;
    return numbered(name, "SYSTEM_", 511);
}

uint32_t flightrec_client_event_kind(const flightrec_client *client,
                                     uint32_t event)
{
    if (client == NULL || event >= FLIGHTREC_EVENT_COUNT)
        return FLIGHTREC_EVENT_INSTANT;
    uint32_t kind = FLIGHTREC_EVENT_KIND_OF(client->event_kind[event]);
    return kind <= FLIGHTREC_EVENT_STRING ? kind : FLIGHTREC_EVENT_INSTANT;
}

int flightrec_client_span_begin(const flightrec_client *client,
                                uint32_t event)
{
    if (flightrec_client_event_kind(client, event) != FLIGHTREC_EVENT_SPAN_END)
        return -1;
    uint32_t word = client->event_kind[event];
    return (word & FLIGHTREC_EVENT_PAIRED) ? (int)FLIGHTREC_EVENT_BEGIN_OF(word)
                                           : -1;
}
