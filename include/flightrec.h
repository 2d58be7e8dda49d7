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
 * see flightrec_config_from_env() and flightrec_filter_parse(); and
 * FLIGHTREC_FATAL, see flightrec_fatal_dump_enable()) and starts.
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
 * Call it before the first event, or after flightrec_cleanup(); once rings
 * exist, only the mode may change: each ring follows at its writer's next
 * slow path, at most a quarter ring or 2^21 ticks later, as after
 * `flightrec ctl mode`.
 * @retval 0 success
 * @retval FLIGHTREC_ENOTPOW2 an item count is not a power of two
 * @retval FLIGHTREC_ETOOSMALL an item count is below 16
 * @retval FLIGHTREC_ETOOLARGE an item count is above FLIGHTREC_MAX_ITEMS
 * @retval FLIGHTREC_EMODE unknown mode
 * @retval FLIGHTREC_EBUSY_CONFIG rings exist with another size
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

/*=====   What events mean: spans, counters, strings   =====*/

/**
 * @brief Names @a event (as flightrec_event_set_name()) and declares what
 * it means; the kind travels in the stream after the name (EVENT_KIND) and
 * is in the region for readers outside the process.  Every converter then
 * shows the event as what it is (a slice, a counter, a text).
 *
 * @a kind is one of (include/flightrec/format.h):
 * - FLIGHTREC_EVENT_INSTANT: a point in time with a data word (the
 *   default of every event);
 * - FLIGHTREC_EVENT_SPAN_BEGIN: opens a span named @a name on the
 *   recording thread; spans nest per thread (a signal handler's spans nest
 *   on their own);
 * - FLIGHTREC_EVENT_SPAN_END_OF(begin): closes the innermost open span of
 *   the begin event @a begin on the thread.  Spans opened inside it and
 *   still open end with it (their own ends never came);
 * - FLIGHTREC_EVENT_SPAN_END: closes the thread's innermost open span,
 *   whatever began it;
 * - FLIGHTREC_EVENT_COUNTER: each event is a sample of counter @a name,
 *   data the value (a signed integer, intptr_t);
 * - FLIGHTREC_EVENT_STRING: each record is a text, written with
 *   flightrec_string().
 *
 * What readers do with what does not pair: an end with no open span of its
 * begin on its thread (the begin was overwritten, or came before the
 * recording started) is shown as an instant; a span still open when the
 * recording ends ends at the trace's last time.  A loss on the thread
 * (docs/format.md, loss accounting) ends nothing: an end after it still
 * closes its begin, so that only spans whose end itself was lost stay open.
 *
 * Redefining an event replaces its name and kind for the rest of the
 * stream.  flightrec_event_set_name() keeps the kind.
 * @retval 0 success
 * @retval FLIGHTREC_EINVAL_CONFIG @a event out of range, @a name empty, or
 *         @a kind not one of the above
 */
FLIGHTREC_API int flightrec_event_define(uint32_t event, const char *name,
                                         uint32_t kind);

/**
 * @brief Defines a span: @a begin and @a end (two event ids) both named
 * @a name, @a end closing @a begin.  Same as two flightrec_event_define().
 */
FLIGHTREC_API int flightrec_span_define(uint32_t begin, uint32_t end,
                                        const char *name);

/**
 * @brief Records @a text as one record of event @a event (a
 * FLIGHTREC_EVENT_STRING event): as many items as the text needs, packed
 * like thread names, always ending with a NUL byte; text beyond
 * FLIGHTREC_STRING_MAX - 1 bytes is cut.  All items have one timestamp.
 */
FLIGHTREC_API void flightrec_string(uint32_t event, const char *text);

/** @brief Records a sample of counter @a event (a FLIGHTREC_EVENT_COUNTER
 * event). */
static inline void flightrec_counter_set(uint32_t event, intptr_t value)
{
    flightrec_produce(event, (uintptr_t)value);
}

/** @brief Opens a span (a FLIGHTREC_EVENT_SPAN_BEGIN event) with @a data. */
static inline void flightrec_span_begin(uint32_t begin, uintptr_t data)
{
    flightrec_produce(begin, data);
}

/** @brief Closes a span (a FLIGHTREC_EVENT_SPAN_END event). */
static inline void flightrec_span_end(uint32_t end)
{
    flightrec_produce(end, 0);
}

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
 * @retval -EBUSY another consumer (`flightrec stream`, `flightrec serve`,
 *         or this process's server, flightrec_server_start()) holds the
 *         session: one consumer at a time (docs/recording.md, "Sessions")
 */
FLIGHTREC_API int flightrec_drain(int fd);

/**
 * @brief Starts a server thread that streams this process's rings over TCP
 * to any number of clients (`flightrec connect`; protocol in
 * docs/format.md section 10), for targets where no second process runs.
 *
 * The thread wakes every @a period_ms (0: 10 ms), drains the rings and
 * sends each client the stream from where it joined; a slow client loses
 * whole chunks, counted exactly in its stream, and holds up nobody.  The
 * thread calls no recording function.  While it runs it is the process's
 * one consumer: flightrec_drain() returns -EBUSY, and so is `flightrec
 * stream` outside refused.  At exit (or flightrec_server_stop()) its
 * clients get the end of the stream.  The environment variable
 * FLIGHTREC_SERVER=ADDR:PORT starts it when the program loads (and prints
 * "flightrec: serving on ADDR:PORT" on standard error).  With
 * FLIGHTREC_SERVER_TOKEN=FILE, clients must send the first line of FILE
 * first, as with `flightrec serve --token FILE`.  Listen on a loopback
 * address unless other machines must connect (docs/recording.md, "Serving
 * over the network").
 * @param address numeric IPv4 or IPv6 address; NULL: 127.0.0.1
 * @param port TCP port; 0: any free port (see flightrec_server_port())
 * @retval 0 the server runs
 * @retval -EALREADY a server runs already
 * @retval -EBUSY another consumer holds the session
 * @retval -EADDRNOTAVAIL the address cannot be listened on (said on
 *         standard error)
 * @retval -EACCES FLIGHTREC_SERVER_TOKEN names no readable token (said)
 * @retval -ENOMEM, -EAGAIN no memory or no thread
 */
FLIGHTREC_API int flightrec_server_start(const char *address, unsigned port,
                                         unsigned period_ms);
/** @brief The port the server listens on, 0 if none runs. */
FLIGHTREC_API unsigned flightrec_server_port(void);
/** @brief Stops the server: a last drain, the end of stream to every
 * client (at most 2 s for them to take the rest), the thread joined, the
 * consumer claim released.  Nothing if none runs. */
FLIGHTREC_API void flightrec_server_stop(void);

/**
 * @brief Forgets the drain stream: the next flightrec_drain() writes a new
 * header (for a new file or connection).
 */
FLIGHTREC_API void flightrec_drain_reset(void);

/*=====   Post-mortem   =====*/

/**
 * @brief Writes the rings once when the program dies of a fatal signal
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT), for programs without a
 * session file (docs/recording.md, "Post-mortem").
 *
 * The handler records FLIGHTREC_EV_FATAL_SIGNAL (the signal number) and
 * FLIGHTREC_EV_FATAL_ADDRESS (si_addr of a fault, 0 for a signal sent by
 * kill(), raise() or abort()) as one record in the crashing thread's ring
 * (subject to the filter; a thread without rings skips it rather than wait
 * for the registry lock another thread, or itself, holds), writes the
 * stream of flightrec_dump() once, async-signal-safe and taking no lock,
 * then hands the signal on: to the handler installed before (called
 * as the kernel would have), or to the default action (the process dies of
 * the same signal, with a core where the system makes one).  A fault during
 * the dump gets the default action at once.  FLIGHTREC_FATAL=@a target in
 * the environment does the same at start-up.
 *
 * @param target a file to create now (0600, never through a symbolic link,
 *        never one that exists; removed at a normal exit if no dump went
 *        into it), "stderr" (the stream as base64 lines between the
 *        FLIGHTREC_CONSOLE_BEGIN and FLIGHTREC_CONSOLE_END marker lines of
 *        flightrec/client.h, which `flightrec print` finds in a captured
 *        log), or NULL to disable (the handlers installed are removed where
 *        no handler was installed over them since).
 * @retval 0 success
 * @retval -EEXIST the file exists
 * @retval -ELOOP the path is a symbolic link
 * @retval -EINVAL @a target is empty
 * @retval -ENOMEM start-up could not reserve the rings: nothing to dump
 * @retval -errno creating the file or installing the handlers failed
 *         (the fatal dump is then disabled)
 */
FLIGHTREC_API int flightrec_fatal_dump_enable(const char *target);

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

/**
 * @def FLIGHTREC_SPAN(begin, end)
 * @brief Records @a begin now and @a end when the enclosing block is left
 * (by its end, return, break or goto; not by longjmp), as a statement:
 * @code
 *   {
 *       FLIGHTREC_SPAN(EV_PARSE_BEGIN, EV_PARSE_END);
 *       parse(input);
 *   }   // EV_PARSE_END recorded here
 * @endcode
 * C: GCC and Clang (__attribute__((cleanup))); C++: a scope object
 * (flightrec::span).  Several may be in one block, on different lines.
 */
#define FLIGHTREC__CAT2(a, b) a##b
#define FLIGHTREC__CAT(a, b) FLIGHTREC__CAT2(a, b)

#ifdef __cplusplus
namespace flightrec {
/** Records a begin event when made and its end event when destroyed. */
class span {
public:
    span(uint32_t begin, uint32_t end, uintptr_t data = 0) : end_(end)
    {
        flightrec_produce(begin, data);
    }
    ~span() { flightrec_produce(end_, 0); }
    span(const span &) = delete;
    span &operator=(const span &) = delete;

private:
    uint32_t end_;
};
} // namespace flightrec
#define FLIGHTREC_SPAN(begin, end) \
    flightrec::span FLIGHTREC__CAT(flightrec__span_, __LINE__)((begin), (end))
#elif defined(__GNUC__) || defined(__clang__)
/** The end a FLIGHTREC_SPAN records when its block is left. */
struct flightrec__span_scope {
    uint32_t end;
};
static inline struct flightrec__span_scope flightrec__span_open(uint32_t begin,
                                                                uint32_t end)
{
    struct flightrec__span_scope scope = { end };
    flightrec_produce(begin, 0);
    return scope;
}
static inline void flightrec__span_close(struct flightrec__span_scope *scope)
{
    flightrec_produce(scope->end, 0);
}
#define FLIGHTREC_SPAN(begin, end) \
    __attribute__((cleanup(flightrec__span_close), unused)) \
    struct flightrec__span_scope FLIGHTREC__CAT(flightrec__span_, __LINE__) = \
        flightrec__span_open((begin), (end))
#endif

#endif
