/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ring reader: turns the rings of a region into stream chunks while
 * their owners keep writing, with exact loss counts in the program's
 * events.  It needs only the region's bytes (include/flightrec/region.h),
 * so the same code reads the rings in-process (flightrec_dump/drain) and,
 * later, from another process.
 *
 * The copy is optimistic, as RTEMS record fetches: copy a block with
 * relaxed loads, re-read the head, and keep only what the producer cannot
 * have overwritten meanwhile.  A producer may be writing up to
 * FLIGHTREC_MAX_PENDING items past its published head, so in flight mode
 * position p is intact while p >= head - capacity + FLIGHTREC_MAX_PENDING;
 * in discard mode the producer never passes the reader's tail.
 *
 * Positions count items, the recorder's uptime pairs among them; the
 * stream counts the program's events (format version 2).  The owner keeps
 * a count of its own recorder items (sync_seq, recorder_*), and the reader
 * counts the recorder items in what it copies, so both ends of every chunk
 * are known in events: RING_POSITION is the owner's events before the
 * chunk, PER_CPU_OVERFLOW the events lost before it.
 */
#ifndef FLIGHTREC_RING_READER_H
#define FLIGHTREC_RING_READER_H

#include "stream-writer.h"

/* Writes what @ring holds for its current owner, without consuming:
 * always one chunk (possibly empty), with the owner's events no longer
 * held as overflow and its drops as discard.  @name (4 words), if not
 * NULL, replaces the stored thread name.  Writes nothing to the region.
 * Returns 0, or -1 if the ring was skipped (its owner kept changing). */
int fr_ring_dump(struct frw_sink *sink, const unsigned char *base,
                 const struct flightrec_region_ring *ring,
                 const uint32_t *name);

/* Writes what is new in @ring since the previous drain (chunks only when
 * there are items or losses), and the losses of a previous owner whose
 * ring was reused meanwhile, under that owner's identity.  Moves the
 * reader's position.  One drain at a time per region. */
int fr_ring_drain(struct frw_sink *sink, const unsigned char *base,
                  struct flightrec_region_ring *ring, const uint32_t *name);

/* Writes what @ring still holds of what the drains so far delivered for
 * its current owner, up to the reader's position (the server's late
 * client: this, then the next drains, gives every event once): one chunk
 * whose overflow and discard are the owner's losses before it, or nothing
 * when no drain read this owner yet.  Writes nothing to the region; call
 * it from the thread that drains. */
int fr_ring_dump_read(struct frw_sink *sink, const unsigned char *base,
                      const struct flightrec_region_ring *ring,
                      const uint32_t *name);

#if defined(FLIGHTREC_PORT_FIRMWARE)
/* After a fault interrupted fr_ring_drain() (which never resumes): the
 * ring it was on takes the position of its last commit, so that the next
 * drain goes on from there, neither losing nor repeating an item. */
void fr_drain_recover(void);
#endif

/* Whether a drain of @ring would write anything: new items, new drops or
 * a new owner.  A few loads. */
int fr_ring_has_news(const struct flightrec_region_ring *ring);

/* The next drain delivers again everything @ring still holds (flight
 * mode), without reporting a loss for it. */
void fr_ring_rewind(struct flightrec_region_ring *ring);

/* A rewind another process asked for (`flightrec ctl PID rewind`): the
 * consumer, about to drain, gets 1 and the request in *@request, rewinds
 * every ring it drains, and then calls fr_rewind_served(). */
int fr_rewind_requested(const struct flightrec_region_control *control,
                        uint32_t *request);
void fr_rewind_served(struct flightrec_region_control *control,
                      uint32_t request);

/* Whether the reader has everything the current owner recorded and lost. */
int fr_ring_fully_read(const struct flightrec_region_ring *ring);

/* Fill levels are in 1/FR_FILL_SCALE of a ring's capacity. */
#define FR_FILL_SCALE 1024u

/* How full @ring is for the reader: the items between its tail and the
 * head, FR_FILL_SCALE when full or overtaken (or the capacity is bad). */
uint32_t fr_ring_fill(const struct flightrec_region_ring *ring);

/* A consumer that polls the rings (`flightrec stream`) adapts its pause to
 * how fast they fill: each pass aims to find the fullest ring an eighth
 * full, so a busy program is read long before its rings are full (with
 * the default 65,536 items, 10 M events/s from two threads fill a ring in
 * 13 ms) and an idle one costs a hundred wake-ups a second. */
#define FR_POLL_PAUSE_MAX_NS (10u * 1000 * 1000)
#define FR_POLL_PAUSE_MIN_NS (100u * 1000)
#define FR_POLL_TARGET_FILL (FR_FILL_SCALE / 8)

/* The next pause, from the current one (@pause_ns), the time since the
 * previous pass began (@elapsed_ns) and the fill of the fullest ring that
 * pass found (@fullest): shortened at once, lengthened at most twofold a
 * pass (a lull is not the end of a burst), within the bounds above. */
uint64_t fr_poll_pause(uint64_t pause_ns, uint64_t elapsed_ns,
                       uint32_t fullest);

#endif
