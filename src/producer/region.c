/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The process's region: one block of memory reserved at start-up that
 * holds the header, the control block, the event names and every ring
 * (include/flightrec/region.h).  Rings are placed one after the other and
 * never move; pairs that are no longer needed go back to the registry's
 * free list, their pages given back to the system.
 */
#include "platform.h"
#include "runtime.h"

#include "../region/order.h"

#include <string.h>

#ifndef FLIGHTREC_PORT_FIRMWARE
#include "../common/remembered-spec.h"
#endif

unsigned char *flightrec__region_base;

/* Events lost before the region existed (a handler that interrupted its
 * own thread's start-up): added to the region's count when it comes. */
static _Atomic flightrec_region_word lost_before_region;


#if UINTPTR_MAX > UINT32_MAX
#define REGION_RESERVE ((size_t)64 << 30)   /* address space, not memory */
#else
#define REGION_RESERVE ((size_t)1 << 30)
#endif

static size_t align_up(size_t n)
{
    return (n + FLIGHTREC_REGION_ALIGN - 1) &
           ~(size_t)(FLIGHTREC_REGION_ALIGN - 1);
}

static uint8_t host_byte_order(void)
{
    const uint16_t probe = 1;
    return *(const unsigned char *)&probe == 1 ? FLIGHTREC_REGION_LITTLE_ENDIAN
                                               : FLIGHTREC_REGION_BIG_ENDIAN;
}

static size_t page_up(size_t n)
{
    size_t page = flightrec__port_page_size();
    return (n + page - 1) / page * page;
}

#ifndef FLIGHTREC_PORT_FIRMWARE
/* "flightrec: " @message @tail, as one line to the port's output. */
static void say(const char *message, const char *tail)
{
    char line[400];
    size_t n = 0;
    const char *parts[] = { "flightrec: ", message, tail };
    for (size_t i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p && n < sizeof(line); p++)
            line[n++] = *p;
    flightrec__port_message(line, n);
}
#endif

int flightrec__region_create(const struct flightrec_settings *settings)
{
    size_t process_at = align_up(sizeof(struct flightrec_region_header)) +
                        align_up(sizeof(struct flightrec_region_control)) +
                        align_up(sizeof(struct flightrec_region_names));
    /* The hot page has a page of its own, so that it can be mapped over
     * the process's control page. */
    size_t hot_at =
        page_up(process_at + align_up(sizeof(struct flightrec_region_process)));
    size_t fixed = hot_at + page_up(sizeof(struct flightrec_region_hot));
    size_t size = REGION_RESERVE;
    unsigned char *base = flightrec__port_region_reserve(&size);
    if (base == NULL || size < fixed)
        return -1;
#ifndef FLIGHTREC_PORT_FIRMWARE
    struct flightrec_region_process process;
    /* A session file, unless FLIGHTREC_SHM=0 or it cannot be had (then
     * private memory, said once).  A firmware's region is its own memory,
     * read over its console: the port fills in the process block only. */
    char message[300];
    message[0] = '\0';
    if (flightrec__port_region_share(base, fixed, &process, message,
                                     sizeof(message)) != 0 &&
        message[0] != '\0')
        say(message, "; recording into private memory\n");
#else
    /* Straight into the region: no file comes to back it. */
    char no_message[1];
    void *process = base + process_at;
    (void)flightrec__port_region_share(base, fixed, process, no_message,
                                       sizeof(no_message));
#endif

    struct flightrec_region_header *h = (void *)base;
    h->magic = FLIGHTREC_REGION_MAGIC;
    h->layout_version = FLIGHTREC_REGION_LAYOUT_VERSION;
    h->word_size = (uint8_t)sizeof(uintptr_t);
    h->byte_order = host_byte_order();
    h->header_size = sizeof(*h);
    h->ring_size = sizeof(ring_t);
    h->item_size = sizeof(struct flightrec_region_item);
    h->library_version = FLIGHTREC_VERSION_NUMBER;
    h->region_size = size;
    h->control_offset = align_up(sizeof(*h));
    h->names_offset =
        h->control_offset + align_up(sizeof(struct flightrec_region_control));
    h->rings_offset = fixed;
    h->process_offset = process_at;
    h->hot_offset = hot_at;
    /* Readers of the other kind of shared words refuse the region. */
    h->flags = FLIGHTREC_REGION_NARROW ? FLIGHTREC_REGION_WORDS_32 : 0;
#if defined(FLIGHTREC_PORT_COUNTER)
    h->counter_kind = FLIGHTREC_REGION_COUNTER_PORT;
#elif defined(__x86_64__) || defined(__i386__)
    h->counter_kind = FLIGHTREC_REGION_COUNTER_TSC;
#elif defined(__aarch64__)
    h->counter_kind = FLIGHTREC_REGION_COUNTER_CNTVCT;
#else
    h->counter_kind = FLIGHTREC_REGION_COUNTER_MONOTONIC_NS;
#endif
#ifndef FLIGHTREC_PORT_FIRMWARE
    memcpy(base + process_at, &process, sizeof(process));
#endif
    atomic_store_explicit(&h->used, fixed, memory_order_relaxed);
    h->process_id = flightrec__port_process_id();
    h->counter_base = flightrec__timebase()->base;
    h->realtime_ns = flightrec__timebase()->realtime_ns;

    struct flightrec_region_control *c = (void *)(base + h->control_offset);
    c->items = (uint32_t)settings->items;
    c->signal_items = (uint32_t)settings->signal_items;
    c->retained = settings->retained;
    atomic_store_explicit(&c->mode, (uint32_t)settings->mode,
                          memory_order_relaxed);
    /* What the program asked for so far, before another process can see
     * the control words (the hot page is shared below). */
    for (size_t i = 0; i < FLIGHTREC_FILTER_WORDS; i++)
        atomic_store_explicit(&c->filter[i], flightrec__filter_wanted[i],
                              memory_order_relaxed);
    atomic_store_explicit(&c->running, 1, memory_order_relaxed);
#ifndef FLIGHTREC_PORT_FIRMWARE
    /* Firmware has no filter specs (nor anyone to extend them). */
    fr_remembered_store(c, flightrec__filter_remembered_early());
#endif
    atomic_store_explicit(
        &h->lost_without_ring,
        atomic_exchange_explicit(&lost_before_region, 0, memory_order_relaxed),
        memory_order_relaxed);
    /* The filter in force so far goes to the hot page; where the port can,
     * that page then becomes the one the hot path reads. */
    struct flightrec_region_hot *hot = (void *)(base + hot_at);
    for (size_t i = 0; i < FLIGHTREC_FILTER_WORDS; i++)
        atomic_store_explicit(
            &hot->filter[i],
            atomic_load_explicit(&flightrec__control_page.filter[i],
                                 memory_order_relaxed),
            memory_order_relaxed);
#ifndef FLIGHTREC_PORT_FIRMWARE /* no other process to share it with */
    if (flightrec__port_hot_share(&flightrec__control_page,
                                  sizeof(flightrec__control_page),
                                  hot_at) == 0)
        h->flags |= FLIGHTREC_REGION_HOT_SHARED;
    /* Everything is filled in: readers (and flightrec ctl) may see the
     * file now. */
    message[0] = '\0';
    if (flightrec__port_region_publish(message, sizeof(message)) != 0 &&
        message[0] != '\0')
        say(message, "\n");
#endif
    flightrec__region_base = base;
    return 0;
}

void flightrec__region_publish_control(const uint32_t *filter, int running,
                                       const uint32_t *in_force)
{
    if (flightrec__region_base == NULL)
        return;
    struct flightrec_region_control *c = region_control();
    struct flightrec_region_hot *hot = region_hot();
    for (size_t i = 0; i < FLIGHTREC_FILTER_WORDS; i++) {
        atomic_store_explicit(&c->filter[i], filter[i], memory_order_relaxed);
        /* The same memory as the control page when the page is shared. */
        atomic_store_explicit(&hot->filter[i], in_force[i],
                              memory_order_relaxed);
    }
    atomic_store_explicit(&c->running, running != 0, memory_order_relaxed);
    FR_FETCH_ADD_RELEASE(&c->generation, 1);
}

void flightrec__region_publish_settings(const struct flightrec_settings *s)
{
    if (flightrec__region_base == NULL)
        return;
    struct flightrec_region_control *c = region_control();
    atomic_store_explicit(&c->mode, (uint32_t)s->mode, memory_order_relaxed);
    c->items = (uint32_t)s->items;
    c->signal_items = (uint32_t)s->signal_items;
    c->retained = s->retained;
    /* The generation steps with the filter publication that follows
     * (control.c), so that this process does not take its own change for
     * another's. */
}

int flightrec__current_mode(void)
{
    if (flightrec__region_base == NULL)
        return flightrec__settings()->mode;
    /* The file's word, which another process may have written. */
    return atomic_load_explicit(&region_control()->mode,
                                memory_order_relaxed) ==
                   FLIGHTREC_REGION_MODE_DISCARD
               ? FLIGHTREC_MODE_DISCARD
               : FLIGHTREC_MODE_FLIGHT;
}

void flightrec__count_lost_without_ring(uintptr_t n)
{
    if (flightrec__region_base != NULL)
        atomic_fetch_add_explicit(&region_header()->lost_without_ring, n,
                                  memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&lost_before_region, n,
                                  memory_order_relaxed);
}
