/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Stream decoder: record stream bytes in, timed and attributed
 * records out (libflightrec-client).
 *
 * The client reads flightrec streams (docs/format.md) and RTEMS record
 * streams of every format version RTEMS shipped, 1 to 10 (version 1 in
 * both numberings, the 2018 patch's and the committed one), in all four
 * formats (LE/BE, 32/64-bit data) on any host.  It is incremental: feed it
 * byte chunks of any size (one byte at a time gives the same records as a
 * whole file) and it calls back once per record.  It never trusts its
 * input: any byte sequence gives either records or a clear error naming the
 * byte offset, never a crash.
 *
 * It depends on libc only and not on the recording runtime (libflightrec).
 *
 * Typical use:
 * @code
 *   struct flightrec_client_options opt = { .on_record = print, .merge = 1 };
 *   flightrec_client *c;
 *   if (flightrec_client_create(&c, &opt) != 0) ...
 *   while ((n = read(fd, buf, sizeof buf)) > 0)
 *       if (flightrec_client_feed(c, buf, n) != 0) break;
 *   rc = flightrec_client_finish(c);   // delivers what is held back
 *   if (rc != 0) fprintf(stderr, "%s\n", flightrec_client_message(c));
 *   flightrec_client_destroy(c);
 * @endcode
 *
 * Thread safety: one client is used by one thread at a time; distinct
 * clients are independent.
 */
#ifndef FLIGHTREC_CLIENT_H
#define FLIGHTREC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "errors.h"
#include "format.h"

FLIGHTREC_BEGIN_DECLS

/*=====   Records   =====*/

/** What a record is. */
enum flightrec_record_type {
    /** An item the program recorded: @c event, @c data, @c time_ns. */
    FLIGHTREC_RECORD_EVENT = 0,
    /** Items were lost: @c loss_kind, @c loss_count. */
    FLIGHTREC_RECORD_LOSS = 1
};

/** Why items were lost. */
enum flightrec_loss_kind {
    /** Overwritten before they were read (flight mode), or lost with the
     * reuse of a dead thread's ring; RTEMS PER_CPU_OVERFLOW / v1 OVERFLOW. */
    FLIGHTREC_LOSS_OVERFLOW = 0,
    /** Dropped by the producer because the ring was full (discard mode). */
    FLIGHTREC_LOSS_DISCARD = 1,
    /** Chunks missing from the stream (ring positions skipped). */
    FLIGHTREC_LOSS_MISSING = 2
};

/** @name Record flags */
/** @{ */
/** No time could be established (the stream ended before a sync item
 * reached this item); @c time_ns is 0. */
#define FLIGHTREC_RECORD_UNTIMED 0x1u
/** Delivered after records with later times (it arrived after the merge
 * window had passed its time). */
#define FLIGHTREC_RECORD_LATE 0x2u
/** The counter stepped backwards; the time was clamped so that time per
 * ring never decreases. */
#define FLIGHTREC_RECORD_CLAMPED 0x4u
/** A string event's text was longer than FLIGHTREC_STRING_MAX - 1 bytes:
 * @c text holds its beginning. */
#define FLIGHTREC_RECORD_TEXT_CUT 0x8u
/** @} */

/** What is known about a ring (a flightrec thread ring, or an RTEMS CPU).
 *
 * On RTEMS streams a ring is a CPU and @c thread_id / @c thread_name are
 * those of the thread running on it (the object id of THREAD_SWITCH_OUT /
 * THREAD_SWITCH_IN, named by the thread table after the header or by
 * THREAD_CREATE): -1 and "" before the CPU's first switch in the stream and
 * after a loss on it, until its next switch. */
struct flightrec_ring_info {
    uint32_t id;             /**< ring id (RTEMS: processor index) */
    uint32_t context;        /**< 0: thread context, 1: signal handlers */
    int64_t thread_id;       /**< owner thread id, -1 if unknown */
    char thread_name[64];    /**< owner thread name, "" if unknown */
    uint64_t events;         /**< EVENT records delivered so far (a
                                  string event counts its items) */
    /** Loss counters (these and the totals') stop at UINT64_MAX. */
    uint64_t overflow;       /**< items lost to overflow so far */
    uint64_t discard;        /**< items lost to discard so far */
    uint64_t missing;        /**< items in missing chunks so far */
    uint64_t untimed;        /**< EVENT records delivered untimed */
    uint64_t first_ns;       /**< time of the first timed record */
    uint64_t last_ns;        /**< time of the last timed record */
};

/** One decoded record, valid only during the callback. */
struct flightrec_record {
    uint32_t type;          /**< enum flightrec_record_type */
    uint32_t flags;         /**< FLIGHTREC_RECORD_* */
    uint64_t time_ns;       /**< uptime in nanoseconds */
    uint32_t ring;          /**< ring id */
    uint32_t event;         /**< event id 0..1023 (EVENT records) */
    uint64_t data;          /**< data word, zero-extended */
    uint32_t loss_kind;     /**< enum flightrec_loss_kind (LOSS records) */
    uint64_t loss_count;    /**< items lost (LOSS records) */
    uint64_t offset;        /**< byte offset of the item in the stream */
    /** The ring as it was when the item was decoded: its identity
     * (@c thread_id, @c thread_name, @c context) is that of the record's
     * own chunk, also when the record was held back or merged after a
     * reused ring changed owner; the counters are those at delivery. */
    const struct flightrec_ring_info *ring_info;
    /**
     * String events (flightrec_client_event_kind() is
     * FLIGHTREC_EVENT_STRING): the record's text, NUL-terminated, with
     * @c text_len bytes before the NUL (raw bytes from the stream: escape
     * them before printing).  The items of one string record come as this
     * one record, with the first item's time, data and offset; the ring's
     * and the totals' event counters count every item.  NULL (and 0) for
     * every other record.
     */
    const char *text;
    size_t text_len;
};

/**
 * Called once per record.  Return 0 to go on; any other value stops the
 * client, which then returns FLIGHTREC_ECALLBACK.
 */
typedef int (*flightrec_record_fn)(const struct flightrec_record *record,
                                   void *arg);

/*=====   Stream description   =====*/

/** What kind of stream the VERSION item announced. */
enum flightrec_stream_kind {
    FLIGHTREC_STREAM_UNKNOWN = 0,  /**< no VERSION item seen yet */
    FLIGHTREC_STREAM_FLIGHTREC = 1,
    FLIGHTREC_STREAM_RTEMS_V10 = 2,
    /** RTEMS version 1 as committed (142 system events, PROCESSOR_MAXIMUM
     * in the header). */
    FLIGHTREC_STREAM_RTEMS_V1 = 3,
    /** RTEMS versions 2 to 9; @c version says which. */
    FLIGHTREC_STREAM_RTEMS = 4,
    /** RTEMS version 1 numbered as in the 2018 patch (118 system events,
     * no PROCESSOR_MAXIMUM). */
    FLIGHTREC_STREAM_RTEMS_V1_SEED = 5
};

/** Header facts, filled in as the header items arrive. */
struct flightrec_stream_info {
    uint32_t format;          /**< format word, 0 until read */
    uint32_t version;         /**< VERSION data */
    uint32_t kind;            /**< enum flightrec_stream_kind */
    uint64_t frequency;       /**< counter Hz, 0 until known */
    uint32_t items_per_ring;  /**< PER_CPU_COUNT / COUNT */
    uint32_t ring_count;      /**< RING_COUNT or PROCESSOR_MAXIMUM + 1 */
    int64_t process_id;       /**< -1 if unknown */
    int has_realtime;         /**< realtime_ns_at_zero is valid */
    uint64_t realtime_ns_at_zero; /**< CLOCK_REALTIME ns at uptime 0 */
    char arch[32];            /**< RTEMS info strings, "" if absent */
    char bsp[32];
    char tools[64];
    /** The merge window in effect: the one given, or the one derived from
     * the stream for FLIGHTREC_MERGE_WINDOW_AUTO (0 until FREQUENCY). */
    uint64_t merge_window_ns;
    /** 1 when records come ring by ring (FLIGHTREC_MERGE_BY_RING applied),
     * set before the first record of the rings is delivered. */
    int by_ring;
};

/** Totals over the whole stream so far. */
struct flightrec_client_totals {
    uint64_t bytes;      /**< bytes consumed */
    uint64_t items;      /**< items decoded, metadata included */
    uint64_t events;     /**< EVENT records delivered (a string event
                              counts its items) */
    uint64_t overflow;   /**< items lost to overflow */
    uint64_t discard;    /**< items lost to discard */
    uint64_t missing;    /**< items in missing chunks */
    uint64_t untimed;    /**< EVENT records delivered untimed */
    uint64_t late;       /**< records delivered with FLIGHTREC_RECORD_LATE */
    uint32_t rings;      /**< rings seen */
    /** Most bytes the decoder held at once for rings, held-back and queued
     * records and its index (its own count of its large allocations,
     * what flightrec_client_options::memory_limit is checked against). */
    uint64_t memory;
};

/*=====   Client   =====*/

typedef struct flightrec_client flightrec_client;

/** How records are delivered. */
struct flightrec_client_options {
    flightrec_record_fn on_record;  /**< required */
    void *arg;                      /**< passed to on_record */
    /**
     * 0: records of each ring in ring order as soon as they can be timed.
     * 1: records of all rings merged in one time order (k-way merge): the
     * next record is the first of some ring's queue with the least time;
     * equal times go in order of the rings' first appearance, and each
     * ring's records keep their order.
     * FLIGHTREC_MERGE_BY_RING: see there; as 1 where it does not apply.
     */
    int merge;
    /**
     * With merge: a record is delivered once a record at least this many
     * nanoseconds later was decoded, or at finish.  Records arriving later
     * than that are delivered flagged LATE.  0 means hold everything until
     * finish (exact order, memory grows with the stream).
     * FLIGHTREC_MERGE_WINDOW_AUTO derives it from the stream.
     */
    uint64_t merge_window_ns;
    /**
     * Bytes the decoder may hold (rings, held-back and queued records,
     * the index of flightrec_client_read_fd()); 0: no limit.  Past it the
     * client stops with FLIGHTREC_ENOMEM and a message saying so, and
     * delivers what it decoded before.
     */
    uint64_t memory_limit;
    /**
     * flightrec_client_read_fd(): called now and then with the bytes read
     * so far and in all (a regular file is read twice, so @a total is
     * twice its size); may be NULL.
     */
    void (*on_progress)(void *arg, uint64_t done, uint64_t total);
};

/**
 * merge: with flightrec_client_read_fd() on a regular file holding a
 * flightrec stream whose rings are all threads' rings, every record of one
 * ring, in ring order, then those of the next ring (rings in order of first
 * appearance): each ring's records exactly as merge 1 gives them, without
 * the cost of merging them with the other rings' (for outputs kept per
 * ring, such as CTF's streams).  flightrec_stream_info::by_ring says when
 * records come so.  Processor rings (FLIGHTREC_RING_CONTEXT_CPU), whose
 * records speak of other rings' threads, RTEMS streams, whose rings are
 * processors, and every other input come in time order, as with merge 1.
 */
#define FLIGHTREC_MERGE_BY_RING 2

/**
 * merge_window_ns: derive the window from the stream, as twice its longest
 * interval between sync items (RTEMS: 2^22 counter ticks, so 8.4 s at
 * 1 MHz; flightrec: 2^21 ticks), at least 2 s.  A record waits at most that
 * interval for its time.
 */
#define FLIGHTREC_MERGE_WINDOW_AUTO UINT64_MAX

/**
 * Creates a client.
 * @retval 0 success, *out set
 * @retval FLIGHTREC_EINVAL_CONFIG options or on_record missing
 * @retval FLIGHTREC_ENOMEM
 */
FLIGHTREC_API int flightrec_client_create(
    flightrec_client **out, const struct flightrec_client_options *options);

/**
 * Consumes @a n bytes of the stream.  Records that can be delivered are
 * delivered before it returns.
 * @retval 0 success
 * @retval <0 an error; it is sticky: later calls return it again.  See
 *         flightrec_client_message() and flightrec_client_error_offset().
 */
FLIGHTREC_API int flightrec_client_feed(flightrec_client *client,
                                        const void *buf, size_t n);

/**
 * Ends the stream: delivers every record still held back (those that can
 * never be timed are flagged UNTIMED), also after an error, so everything
 * decoded before an error is delivered.
 * @retval 0 the stream was complete and valid
 * @retval FLIGHTREC_ETRUNC the stream ended inside an item
 * @retval <0 the sticky error of an earlier call
 */
FLIGHTREC_API int flightrec_client_finish(flightrec_client *client);

/**
 * Reads the whole stream from @a fd (from its current position to its end)
 * and finishes the client: flightrec_client_feed() and
 * flightrec_client_finish() in one call.
 *
 * With merge on and a regular file, the file is read twice: once to index
 * where each ring's chunks are, then ring by ring in a k-way merge that
 * decodes each ring only as far as the merge needs.  Records come in
 * exact time order -- the order of merge_window_ns 0 -- while memory is
 * bounded by the number of rings and their chunks, not by the length of
 * the stream; merge_window_ns is not used.  Any other descriptor (a pipe,
 * a terminal, a socket), and every descriptor without merge, is read
 * once through flightrec_client_feed().
 *
 * The client must be fresh (nothing fed).
 * @retval as flightrec_client_finish()
 * @retval -errno a read error; flightrec_client_message() says so, and
 *         what was decoded before it was delivered
 * @retval FLIGHTREC_ESTATE the client was already fed
 */
FLIGHTREC_API int flightrec_client_read_fd(flightrec_client *client, int fd);

/** Frees the client; accepts NULL. */
FLIGHTREC_API void flightrec_client_destroy(flightrec_client *client);

/**
 * A one-line description of the error, naming what is wrong and the byte
 * offset, e.g. "byte 0: bad magic 0x12345678"; "" when there is none.
 */
FLIGHTREC_API const char *flightrec_client_message(
    const flightrec_client *client);

/** Byte offset of the error (of the offending item's first byte). */
FLIGHTREC_API uint64_t flightrec_client_error_offset(
    const flightrec_client *client);

/** The header facts read so far. */
FLIGHTREC_API const struct flightrec_stream_info *flightrec_client_info(
    const flightrec_client *client);

/** Totals so far. */
FLIGHTREC_API void flightrec_client_totals(
    const flightrec_client *client, struct flightrec_client_totals *out);

/** Number of rings seen so far. */
FLIGHTREC_API size_t flightrec_client_ring_count(
    const flightrec_client *client);

/** The @a index-th ring seen (0 .. ring_count - 1), in order of first
 * appearance; NULL if out of range.  A ring that has held nothing but the
 * starts of its chunks (no owner, all counters 0) takes no memory of its
 * own beyond its id: its description is made on demand, and the next
 * call for such a ring rewrites it, so copy what you keep. */
FLIGHTREC_API const struct flightrec_ring_info *flightrec_client_ring(
    const flightrec_client *client, size_t index);

/**
 * The name of an event id in this stream: a name the stream registered
 * (EVENT_NAME), else the system name for the stream's numbering, else
 * "USER_<n>" / "SYSTEM_<n>".  Never NULL; valid until the client is
 * destroyed or the name is registered again.
 */
FLIGHTREC_API const char *flightrec_client_event_name(
    const flightrec_client *client, uint32_t event);

/**
 * How many times the stream has (re)named events so far.  Names are
 * rewritten in place, so a caller caching names or decisions by event (or by
 * the pointer flightrec_client_event_name() returned) revalidates them when
 * this count changes.
 */
FLIGHTREC_API uint64_t flightrec_client_event_names_changes(
    const flightrec_client *client);

/**
 * Which id numbering the stream uses, for people: "flightrec (359 system
 * events)", "RTEMS v9 (341 system events)", "RTEMS v1, numbering of the
 * 2018 patch (118 system events)"; "unknown" before the header tells.
 */
FLIGHTREC_API const char *flightrec_client_numbering(
    const flightrec_client *client);

/**
 * What the stream says event @a event means (EVENT_KIND after its name,
 * docs/format.md): FLIGHTREC_EVENT_INSTANT, _SPAN_BEGIN, _SPAN_END,
 * _COUNTER or _STRING (include/flightrec/format.h); INSTANT for an event
 * never defined, for kinds this reader does not know, and in streams
 * without EVENT_KIND.  A later name record of the event changes it; like
 * names, kinds come before the events that use them.
 *
 * Spans pair per ring (one thread, or its signal handlers) in delivery
 * order: a SPAN_END closes the innermost open span of the begin event
 * flightrec_client_span_begin() names (or the innermost open span, when
 * it names none); spans opened inside and still open end with it; an end
 * with nothing to close is an instant.
 */
FLIGHTREC_API uint32_t flightrec_client_event_kind(
    const flightrec_client *client, uint32_t event);

/** For a SPAN_END event: the id of the begin event it closes, or -1 when
 * it closes the innermost open span whatever began it (and for every other
 * kind). */
FLIGHTREC_API int flightrec_client_span_begin(const flightrec_client *client,
                                              uint32_t event);

/** The last name the stream gave thread @a thread_id, or NULL. */
FLIGHTREC_API const char *flightrec_client_thread_name(
    const flightrec_client *client, int64_t thread_id);

/** Looks an event up by name (system, USER_n or registered); returns its id
 * or -1. */
FLIGHTREC_API int flightrec_client_event_id(const flightrec_client *client,
                                            const char *name);

/** Nanoseconds for @a ticks of a counter at @a frequency Hz, exact (no
 * intermediate overflow) for any 64-bit tick count. */
FLIGHTREC_API uint64_t flightrec_ticks_to_ns(uint64_t ticks,
                                             uint64_t frequency);

/*=====   Console logs   =====*/

/** Marker lines around a stream block in a console log (a firmware's UART
 * output): base64 lines of stream bytes in between (docs/format.md,
 * section 9).  The blocks of one log, in order, are one stream. */
#define FLIGHTREC_CONSOLE_BEGIN "-----BEGIN FLIGHTREC STREAM-----"
#define FLIGHTREC_CONSOLE_END "-----END FLIGHTREC STREAM-----"

/** Receives decoded stream bytes; non-zero stops the log decoder with
 * that value. */
typedef int (*flightrec_console_out_fn)(void *arg, const void *bytes,
                                        size_t n);

/** A console log decoder: fixed size, allocates nothing. */
struct flightrec_console {
    flightrec_console_out_fn out;
    void *arg;
    int in_block;           /**< between a begin and an end marker */
    int padded;             /**< the block's base64 was padded: only the
                                 end marker may follow */
    uint32_t quad;          /**< base64 digits of an unfinished group */
    unsigned quad_len;
    char head[40];          /**< the start of the current line */
    size_t head_len;
    uint64_t line;          /**< 1-based number of the current line */
    uint64_t block_line;    /**< line of the open block's begin marker */
    uint64_t blocks;        /**< blocks ended */
    int error;              /**< sticky: 0, or the error */
    char message[128];
};

/** Whether @a bytes, the first bytes of an input, are a console log: a
 * begin marker starts one of their lines. */
FLIGHTREC_API int flightrec_console_detect(const void *bytes, size_t n);

/** Whether an input starting with @a bytes is to be read as a console log:
 * flightrec_console_detect(), or lines of text (a line end and no NUL byte
 * in its first 4 KiB: the header of every stream has NUL bytes) whose
 * blocks may come later, such as a captured standard error with a
 * fatal-signal dump after more than 64 KiB of other output.  Text without
 * a block is then reported as such by flightrec_console_finish(). */
FLIGHTREC_API int flightrec_console_probe(const void *bytes, size_t n);

/** Starts decoding a log; stream bytes go to @a out. */
FLIGHTREC_API void flightrec_console_init(struct flightrec_console *log,
                                          flightrec_console_out_fn out,
                                          void *arg);

/**
 * Consumes @a n bytes of the log; stream bytes of its blocks are passed on
 * as they are decoded, text outside blocks is skipped.
 * @retval 0 success
 * @retval FLIGHTREC_ESTREAM a block holds something that is not
 *         base64 (the message names the line); sticky
 * @retval other the out function's non-zero value
 */
FLIGHTREC_API int flightrec_console_feed(struct flightrec_console *log,
                                         const void *bytes, size_t n);

/**
 * Ends the log.
 * @retval 0 every block was complete
 * @retval FLIGHTREC_ETRUNC the log ended inside a block (its bytes so far
 *         were passed on), or it held no block at all
 * @retval <0 the sticky error of an earlier call
 */
FLIGHTREC_API int flightrec_console_finish(struct flightrec_console *log);

/** The error's description ("line 12: ..."); "" when there is none. */
FLIGHTREC_API const char *flightrec_console_message(
    const struct flightrec_console *log);

FLIGHTREC_END_DECLS

#endif
