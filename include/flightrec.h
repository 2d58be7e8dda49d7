/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief flightrec: record low-level events cheaply enough to leave on.
 *
 * A program records items (an event id 0..1023 and a data word) with
 * flightrec_produce() and friends; each thread writes its own ring, created
 * on its first event with the configured size.  Two modes, as the channels
 * of the Linux trace patch:
 *
 * - flight (FLIGHTREC_MODE_FLIGHT, default): the newest item overwrites the
 *   oldest; a reader learns exactly how many items it missed;
 * - discard (FLIGHTREC_MODE_DISCARD): items are dropped while a ring is
 *   full, and counted exactly per ring.
 *
 * flightrec_dump() writes what the rings hold now without consuming it
 * (post-mortem, also from a crash signal handler); flightrec_drain() streams
 * what was recorded since its previous call.  Both write the record stream
 * of docs/format.md, which `flightrec print` and the decoder library read.
 *
 * Recording needs no set-up: the first event configures from the
 * environment (FLIGHTREC_ITEMS, FLIGHTREC_SIGNAL_ITEMS, FLIGHTREC_MODE,
 * FLIGHTREC_EVENTS, FLIGHTREC_RETAIN, FLIGHTREC_START, FLIGHTREC_PREFAULT,
 * see flightrec_config_from_env() and flightrec_filter_parse()) and
 * starts.
 *
 * Life cycle (Linux trace channel semantics): flightrec_setup() configures,
 * flightrec_start() / flightrec_stop() switch recording on and off at once
 * for all threads, flightrec_rewind() lets the next drain read again what
 * the rings hold, flightrec_cleanup() stops and releases.
 */
#ifndef FLIGHTREC_H
#define FLIGHTREC_H

#include <stddef.h>
#include <stdint.h>

#include "flightrec/common.h"
#include "flightrec/errors.h"
#include "flightrec/events.h"
#include "flightrec/format.h"
#include "flightrec/producer.h"

FLIGHTREC_BEGIN_DECLS

/*=====   Recording   =====*/

/* flightrec_produce(), flightrec_produce_2(), flightrec_produce_n() and
 * prepare/add/commit are in flightrec/producer.h: inline in C; in C++ (and
 * for bindings) the same calls out of line, declared here for the
 * multi-item ones. */
#if defined(__cplusplus) || defined(FLIGHTREC__OUT_OF_LINE_MULTI)
/** @brief Records two items with one timestamp, published together. */
FLIGHTREC_API void flightrec_produce_2(uint32_t event0, uintptr_t data0,
                                       uint32_t event1, uintptr_t data1);

/** @brief Records @a n items with one timestamp (published in parts of
 * FLIGHTREC_MAX_PENDING items when larger). */
FLIGHTREC_API void flightrec_produce_n(const struct flightrec_item_in *items,
                                       size_t n);
#endif

/*=====   Configuration   =====*/

/**
 * The largest ring, in items: 2^24 on 64-bit hosts (256 MiB of 16-byte
 * items), 2^22 on 32-bit hosts (32 MiB of 8-byte items, an eighth of a
 * 32-bit address space's usual free room).  Larger sizes are refused with
 * FLIGHTREC_ETOOLARGE rather than failing at each thread's first event.
 */
#if UINTPTR_MAX > 0xffffffffu
#define FLIGHTREC_MAX_ITEMS (1u << 24)
#else
#define FLIGHTREC_MAX_ITEMS (1u << 22)
#endif

enum flightrec_mode {
    FLIGHTREC_MODE_FLIGHT = 0,   /**< overwrite the oldest items */
    FLIGHTREC_MODE_DISCARD = 1   /**< drop new items while full */
};

struct flightrec_config {
    /** Items per thread ring: a power of two, 16..FLIGHTREC_MAX_ITEMS.
     * Default 65536 (1 MiB per thread on 64-bit). */
    uint32_t items_per_ring;
    /** Items of each thread's signal ring (records made by a signal handler
     * that interrupted a record): power of two, 16..FLIGHTREC_MAX_ITEMS;
     * 0 (default): items_per_ring / 16, at least 16. */
    uint32_t signal_items_per_ring;
    /** enum flightrec_mode. */
    int mode;
    /** Rings of exited threads kept, unconsumed, before the oldest is
     * reused for a new thread (its unread items then count as overflow).
     * Default 64. */
    uint32_t retained_rings;
    /** Start recording when set up (default 1). */
    int start;
    /** Touch every page of a thread's rings when they are made (default 0):
     * the memory is committed at once (1 MiB per thread at the default
     * sizes) and the first events no longer pay page faults. */
    int prefault;
};

/** @brief Fills @a config with the defaults. */
FLIGHTREC_API void flightrec_config_init(struct flightrec_config *config);

/**
 * @brief Applies the environment to @a config, checking each value:
 * FLIGHTREC_ITEMS=<n>, FLIGHTREC_SIGNAL_ITEMS=<n> (powers of two,
 * 16..FLIGHTREC_MAX_ITEMS), FLIGHTREC_MODE=flight|discard,
 * FLIGHTREC_RETAIN=<n>, FLIGHTREC_START=0|1, FLIGHTREC_PREFAULT=0|1.
 * Numbers are decimal digits only ("010" is ten; "0x10", "+5", " 5" are
 * refused).  Unset or empty variables leave their field alone.
 * @retval 0 success
 * @retval FLIGHTREC_EINVAL_CONFIG a value is not a decimal number, or out
 *         of range (START and PREFAULT: 0 or 1)
 * @retval FLIGHTREC_ENOTPOW2, FLIGHTREC_ETOOSMALL, FLIGHTREC_ETOOLARGE
 *         an item count is not a power of two, below 16, above
 *         FLIGHTREC_MAX_ITEMS
 * @retval FLIGHTREC_EMODE unknown mode
 * On error, @a message (if not NULL) receives a line naming the variable
 * and its value, e.g. "FLIGHTREC_SIGNAL_ITEMS=3: item count is below 16".
 */
FLIGHTREC_API int flightrec_config_from_env(struct flightrec_config *config,
                                            char *message,
                                            size_t message_size);

/**
 * @brief Validates and applies a configuration.
 *
 * Call it before the first event, or after flightrec_cleanup().
 * @retval 0 success
 * @retval FLIGHTREC_ENOTPOW2 an item count is not a power of two
 * @retval FLIGHTREC_ETOOSMALL an item count is below 16
 * @retval FLIGHTREC_ETOOLARGE an item count is above FLIGHTREC_MAX_ITEMS
 * @retval FLIGHTREC_EMODE unknown mode
 * @retval FLIGHTREC_EBUSY_CONFIG rings exist with another size or mode
 */
FLIGHTREC_API int flightrec_setup(const struct flightrec_config *config);

/** @brief Reads back the configuration in force. */
FLIGHTREC_API void flightrec_get_config(struct flightrec_config *config);

/** @brief Starts recording (takes effect at once for all threads). */
FLIGHTREC_API void flightrec_start(void);

/** @brief Stops recording; a stopped event costs a load and a branch. */
FLIGHTREC_API void flightrec_stop(void);

/** @brief Whether recording is started. */
FLIGHTREC_API int flightrec_is_running(void);

/**
 * @brief Stops recording and releases the rings of exited threads; rings of
 * live threads are emptied and kept for them.  No other thread may record or
 * dump/drain while it runs.
 */
FLIGHTREC_API void flightrec_cleanup(void);

/**
 * @brief Makes the next flightrec_drain() deliver again everything the rings
 * still hold (flight mode only).
 * @retval FLIGHTREC_EMODE the rings are in discard mode
 */
FLIGHTREC_API int flightrec_rewind(void);

/*=====   Filters   =====*/

/** @brief Records (1) or ignores (0) @a event from now on. */
FLIGHTREC_API void flightrec_filter_set(uint32_t event, int enabled);

/** @brief Records or ignores the events @a first..@a last. */
FLIGHTREC_API void flightrec_filter_set_range(uint32_t first, uint32_t last,
                                              int enabled);

/** @brief Whether @a event passes the filter (ignores start/stop). */
FLIGHTREC_API int flightrec_filter_get(uint32_t event);

/**
 * @brief Parses a filter specification and applies it, term by term in
 * order: a comma-separated list of
 * - "all", "user" (512..1023), "system" (0..511);
 * - decimal ids and ranges "300-320";
 * - event names and globs ('*' any run, '?' one character), matched without
 *   regard to case against the system names of events.h ("MUTEX_UNLOCK",
 *   "THREAD_*"), "USER_<n>" for user event n, and the names given with
 *   flightrec_event_set_name() so far;
 *
 * each optionally prefixed with '-' to exclude or '+' to include (the
 * default): "all,-MUTEX_*", "-user,+request".  FLIGHTREC_EVENTS takes the
 * same specification; its names and globs also apply to events the program
 * names later (the environment is read before the program names them).
 * @retval FLIGHTREC_EINVAL_CONFIG a term is malformed or a name or glob
 *         matches no event (nothing is changed)
 */
FLIGHTREC_API int flightrec_filter_parse(const char *spec);

/*=====   Names   =====*/

/**
 * @brief Names a user event (512..1023, or any id); the name travels in the
 * stream and tools print it.  Up to 63 bytes are kept.  If FLIGHTREC_EVENTS
 * has a name or glob matching the new name, the filter of @a event follows
 * the last term of FLIGHTREC_EVENTS covering it.
 * @retval FLIGHTREC_EINVAL_CONFIG @a event out of range or name empty
 */
FLIGHTREC_API int flightrec_event_set_name(uint32_t event, const char *name);

/*=====   Reading the rings   =====*/

/**
 * @brief Writes a complete stream (header, names, one chunk per ring) of
 * what the rings hold now, without consuming it.
 *
 * Takes no lock and allocates nothing, so it may be called from a crash
 * signal handler; concurrent recording goes on and is handled exactly.
 * @retval 0 success
 * @retval -errno write() failed (EINTR is retried)
 */
FLIGHTREC_API int flightrec_dump(int fd);

/**
 * @brief Streams what was recorded since the previous call.
 *
 * The first call writes the stream header; each call writes a chunk per
 * ring with new items or new losses, with exact overflow and discard counts.
 * Calls are serialised; not async-signal-safe.
 * @retval 0 success
 * @retval -errno write() failed; the rest of an item the write cut is
 *         written first by the next call, and the events in between show
 *         as missing in the stream
 * @retval -EBUSY another consumer (`flightrec stream`) holds the session:
 *         one consumer at a time (docs/recording.md, "Sessions")
 */
FLIGHTREC_API int flightrec_drain(int fd);

/**
 * @brief Forgets the drain stream: the next flightrec_drain() writes a new
 * header (for a new file or connection).
 */
FLIGHTREC_API void flightrec_drain_reset(void);

/** Counts over all rings, for programs that watch themselves. */
struct flightrec_stats {
    uint32_t rings;          /**< rings that exist (thread and signal) */
    uint32_t live_rings;     /**< rings of live threads */
    uint64_t produced;       /**< items written to rings */
    uint64_t dropped;        /**< items dropped in discard mode */
    /** Events that found no ring to go to, counted instead of recorded: a
     * signal handler running after its thread's exit hook, or a thread
     * whose rings could not be had (region full). */
    uint64_t lost_without_ring;
};

/** @brief Fills @a stats. */
FLIGHTREC_API void flightrec_get_stats(struct flightrec_stats *stats);

/**
 * @brief Counter frequency in Hz.  The cycle counter of x86 is calibrated
 * against CLOCK_MONOTONIC over the first 20 ms after start-up: the first
 * call (or first dump/drain) waits for what is left of them.  Call it at
 * start-up if the first drain must not wait.
 */
FLIGHTREC_API uint64_t flightrec_counter_frequency(void);

FLIGHTREC_END_DECLS

#endif
