/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stream writer: record-stream items (docs/format.md) onto a sink (a
 * file descriptor, a memory buffer, later a socket), in large writes.
 *
 * It never leaves part of an item behind: when a write fails after part of
 * an item went out, the rest of that item is kept and written first next
 * time, so the stream stays aligned and later chunks decode (the items in
 * between are lost, and readers see them as missing).  Allocates nothing:
 * the caller provides the buffer, so a crash handler can use it.
 */
#ifndef FLIGHTREC_STREAM_WRITER_H
#define FLIGHTREC_STREAM_WRITER_H

#include <flightrec/region.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes up to @n bytes; returns how many, or -errno. */
typedef ssize_t (*frw_sink_write_fn)(void *target, const void *bytes, size_t n);

struct frw_sink {
    frw_sink_write_fn write;
    void *target;
    int error;                  /* first failure of this use, -errno */
    unsigned char *buf;
    size_t cap, len;
    size_t start_in_buf;        /* bytes of the stream start (format word
                                   and magic) at the front of buf */
    unsigned char carry[192];   /* the rest of an item (or of the stream
                                   header) a write cut */
    size_t carry_len;
    uint64_t written;           /* bytes that reached the target */
#if defined(FLIGHTREC_PORT_FIRMWARE)
    uint32_t buf_at;            /* the stream offset of buf[0] (mod 2^32) */
    size_t committed;           /* bytes of buf a fault handler's drain
                                   takes over (frw_sink_commit()) */
#endif
};

/* A sink that writes to file descriptor @fd (retrying short writes and
 * EINTR), buffering in @buf of @cap bytes (at least 64). */
void frw_sink_init_fd(struct frw_sink *sink, int *fd, void *buf, size_t cap);
/* A sink with its own write function. */
void frw_sink_init(struct frw_sink *sink, frw_sink_write_fn write, void *target,
                  void *buf, size_t cap);
/* Starts a new use (a new call) of a sink kept across calls: clears the
 * error, keeps a pending cut item. */
void frw_sink_resume(struct frw_sink *sink);
/* Writes what is buffered; 0 or the first error of this use. */
int frw_sink_flush(struct frw_sink *sink);
#if defined(FLIGHTREC_PORT_FIRMWARE)
/* After a fault interrupted a use of @sink that never resumes: @taken is
 * the stream's bytes the target took, and the buffer keeps only those it
 * did not take yet (a write cut short goes on from the next byte). */
void frw_sink_recover(struct frw_sink *sink, uint32_t taken);
#endif
/* Flushes unless @bytes fit at the end of the buffer: what comes next
 * goes in without a write. */
void frw_sink_reserve(struct frw_sink *sink, size_t bytes);
/* Firmware: what is buffered so far is whole (items, a chunk head, a name
 * record): a drain that a fault interrupts after this is taken over up
 * to here (frw_sink_recover()).  The caller makes it one commit with
 * what goes with it (src/region/order.h).  Nothing hosted. */
static inline void frw_sink_commit(struct frw_sink *sink)
{
#if defined(FLIGHTREC_PORT_FIRMWARE)
    sink->committed = sink->len;
#else
    (void)sink;
#endif
}

/* The format word of this host's own items. */
uint32_t frw_host_format(void);

/* Stream start: format word and magic. */
void frw_put_start(struct frw_sink *sink);
/* One item: @event_word (time << 10 | id) and a data word of this host. */
void frw_put_item(struct frw_sink *sink, uint32_t event_word, uintptr_t data);
/* The size of an item in the stream. */
#define FRW_ITEM_SIZE (4 + sizeof(uintptr_t))
/* Room at the end of the buffer for up to @want whole items (flushing
 * first when not even one fits): returns where to put them, and in *@room how many
 * fit (at least one).  They count once frw_items_done() says how many were
 * put; until then the sink is unchanged. */
unsigned char *frw_items_room(struct frw_sink *sink, size_t want, size_t *room);
/* @n items were put where frw_items_room() said. */
static inline void frw_items_done(struct frw_sink *sink, size_t n)
{
    sink->len += n * FRW_ITEM_SIZE;
}
/* An item with time 0. */
void frw_put_meta(struct frw_sink *sink, uint32_t event, uintptr_t data);
/* A name (4 characters a word, LSB first) as data words of this host. */
void frw_put_name(struct frw_sink *sink, uint32_t event, const uint32_t *words,
                 size_t nwords);

/* The stream header of a region's process (docs/format.md section 3). */
void frw_put_header(struct frw_sink *sink,
                   const struct flightrec_region_header *header,
                   const struct flightrec_region_control *control);
/* Name records of events whose name serial differs from @seen (NULL: all
 * named events); updates @seen. */
void frw_put_event_names(struct frw_sink *sink,
                        const struct flightrec_region_names *names,
                        uint32_t *seen);

#endif
