/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief The record stream: constants shared by the producer and readers.
 *
 * The stream is framed like the RTEMS record stream (docs/format.md): a
 * format word, the magic, then items.  An item is a 32-bit word holding the
 * time (upper 22 bits) and the event id (lower 10 bits), followed by a data
 * word of 32 or 64 bits, packed, in the byte order the format word names.
 */
#ifndef FLIGHTREC_FORMAT_H
#define FLIGHTREC_FORMAT_H

#include <stdint.h>

#include "events.h"

/** @name Format words (the first 4 bytes of a stream) */
/** @{ */
#define FLIGHTREC_FORMAT_LE_32 0x11111111u
#define FLIGHTREC_FORMAT_LE_64 0x22222222u
#define FLIGHTREC_FORMAT_BE_32 0x33333333u
#define FLIGHTREC_FORMAT_BE_64 0x44444444u
/** @} */

/** The second 32-bit word of a stream, in the stream's byte order. */
#define FLIGHTREC_MAGIC 0x82e14ec1u

/**
 * VERSION item data of a flightrec stream: "FR" in the upper 16 bits and
 * the flightrec stream format version (docs/format.md) in the lower 16.
 * RTEMS streams carry small numbers here (1..10), so the two never collide.
 */
#define FLIGHTREC_STREAM_VERSION_TAG 0x46520000u
#define FLIGHTREC_STREAM_FORMAT_VERSION 2u
/** The first version, whose positions and losses count ring items, uptime
 * pairs included; readers still accept it. */
#define FLIGHTREC_STREAM_VERSION_1 (FLIGHTREC_STREAM_VERSION_TAG | 1u)
#define FLIGHTREC_STREAM_VERSION \
    (FLIGHTREC_STREAM_VERSION_TAG | FLIGHTREC_STREAM_FORMAT_VERSION)

/** RTEMS record format versions a reader may also meet. */
#define FLIGHTREC_RTEMS_VERSION_1 1u
#define FLIGHTREC_RTEMS_VERSION_10 10u

#define FLIGHTREC_EVENT_BITS 10
#define FLIGHTREC_TIME_BITS 22
#define FLIGHTREC_EVENT_MASK ((1u << FLIGHTREC_EVENT_BITS) - 1u)
#define FLIGHTREC_TIME_MASK ((1u << FLIGHTREC_TIME_BITS) - 1u)
/** Number of event ids (0..1023). */
#define FLIGHTREC_EVENT_COUNT (1u << FLIGHTREC_EVENT_BITS)

/**
 * In a flightrec stream two consecutive timed items of one ring with no
 * uptime pair between them are less than this many counter ticks apart;
 * this is what makes the 22-bit time field unambiguous (docs/format.md,
 * "The time invariant").
 */
#define FLIGHTREC_SYNC_TICKS (1u << (FLIGHTREC_TIME_BITS - 1))

/** Builds the event word of an item. */
#define FLIGHTREC_TIME_EVENT(time, event) \
    ((uint32_t)(((uint32_t)(time) << FLIGHTREC_EVENT_BITS) | \
                ((uint32_t)(event) & FLIGHTREC_EVENT_MASK)))
/** The 22-bit time of an event word. */
#define FLIGHTREC_GET_TIME(word) ((uint32_t)(word) >> FLIGHTREC_EVENT_BITS)
/** The event id of an event word. */
#define FLIGHTREC_GET_EVENT(word) ((uint32_t)(word) & FLIGHTREC_EVENT_MASK)

/**
 * RING_CONTEXT values: a thread's own events, its signal handlers, or a
 * processor's context switches.  A processor ring has the id
 * FLIGHTREC_CPU_RING_BASE + the processor's number, no owner thread, and
 * holds THREAD_SWITCH_OUT / THREAD_SWITCH_IN of the program's threads on
 * that processor (docs/format.md, "Processor rings").
 */
#define FLIGHTREC_RING_CONTEXT_THREAD 0u
#define FLIGHTREC_RING_CONTEXT_SIGNAL 1u
#define FLIGHTREC_RING_CONTEXT_CPU 2u
/** Ring id of processor 0's ring (RING_CONTEXT FLIGHTREC_RING_CONTEXT_CPU). */
#define FLIGHTREC_CPU_RING_BASE 0xff0000u

/** Size in bytes of one stream item of the given format. */
#define FLIGHTREC_ITEM_SIZE(format) \
    (((format) == FLIGHTREC_FORMAT_LE_64 || \
      (format) == FLIGHTREC_FORMAT_BE_64) ? 12u : 8u)

/**
 * @name Event kinds
 * What a program declares a user event to mean (flightrec_event_define());
 * the stream carries it in an EVENT_KIND item after the event's name
 * record (docs/format.md, "Name records").  The EVENT_KIND data word is
 * the kind in bits 0..7; for FLIGHTREC_EVENT_SPAN_END, bit 8
 * (FLIGHTREC_EVENT_PAIRED) says that bits 16..25 name the begin event it
 * closes.  Readers treat a kind they do not know as an instant.
 */
/** @{ */
/** A point in time with a data word (every event that was not defined). */
#define FLIGHTREC_EVENT_INSTANT 0u
/** Opens a span on the recording thread; data: the caller's own word. */
#define FLIGHTREC_EVENT_SPAN_BEGIN 1u
/** Closes a span on the recording thread (see FLIGHTREC_EVENT_SPAN_END_OF). */
#define FLIGHTREC_EVENT_SPAN_END 2u
/** A counter sample: data is the value, a signed integer of the
 * writer's word size. */
#define FLIGHTREC_EVENT_COUNTER 3u
/** Text: one record of several items of the id, 4 or 8 characters each
 * (the data word's size), least significant byte first, ending at the
 * first NUL byte or at the record's last item. */
#define FLIGHTREC_EVENT_STRING 4u
#define FLIGHTREC_EVENT_KIND_MASK 0xffu
#define FLIGHTREC_EVENT_PAIRED 0x100u
/** The kind of an end event that closes spans opened by @a begin (an event
 * id): the innermost open span of @a begin on the recording thread. */
#define FLIGHTREC_EVENT_SPAN_END_OF(begin) \
    (FLIGHTREC_EVENT_SPAN_END | FLIGHTREC_EVENT_PAIRED | \
     (((uint32_t)(begin) & FLIGHTREC_EVENT_MASK) << 16))
/** The kind (FLIGHTREC_EVENT_INSTANT ..) of an EVENT_KIND data word. */
#define FLIGHTREC_EVENT_KIND_OF(word) ((uint32_t)(word) & FLIGHTREC_EVENT_KIND_MASK)
/** The begin event a paired end closes (valid with FLIGHTREC_EVENT_PAIRED). */
#define FLIGHTREC_EVENT_BEGIN_OF(word) \
    (((uint32_t)(word) >> 16) & FLIGHTREC_EVENT_MASK)
/** Most bytes of text a string event carries (the NUL included); the
 * producer truncates longer text, readers keep at most this much. */
#define FLIGHTREC_STRING_MAX 256u
/** @} */

#endif
