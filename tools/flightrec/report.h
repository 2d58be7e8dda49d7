/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief flightrec report: what a recording says about locks, the heap,
 * system calls, threads and spans (report-model.c), and the three ways of
 * showing it (report-write.c: text, JSON, HTML).
 *
 * Memory grows with the number of distinct locks, (call, fd) pairs, live
 * allocations, threads, span names and open spans, never with the length
 * of the trace: every duration series keeps at most RP_EXACT_MAX values,
 * then folds them into a log-linear histogram, and the time charts have a
 * fixed number of buckets whose width doubles as the trace goes on.
 */
#ifndef FLIGHTREC_REPORT_H
#define FLIGHTREC_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flightrec/client.h>

#include "convert-map.h"

/** Values a series keeps exactly; quantiles are exact up to this many. */
#define RP_EXACT_MAX 1024u
/** Sub-buckets per power of two of the folded histogram: a quantile read
 * from it is within half a sub-bucket, 1/256 of its value. */
#define RP_SUB_BITS 7u
#define RP_SUB (1u << RP_SUB_BITS)
#define RP_GROUPS (64u - RP_SUB_BITS + 1u)
/** Coarse histogram for the charts: [0], then [k + 1] = [2^k, 2^(k+1)). */
#define RP_LOG2_BUCKETS 65u
/** Buckets of the time charts (heap over time, thread timeline). */
#define RP_TIME_BUCKETS 256u
/** Nesting depth of spans followed per thread. */
#define RP_SPAN_DEPTH 64u

/** A series of durations (ns) or sizes: exact totals, bounded quantiles. */
struct rp_series {
    uint64_t count, total, min, max;
    uint64_t *exact;            /**< values while count <= RP_EXACT_MAX */
    uint32_t exact_len, exact_cap;
    int folded;                 /**< exact[] was folded into groups[] */
    uint32_t *groups[RP_GROUPS]; /**< RP_SUB counters each, lazily */
    uint64_t log2[RP_LOG2_BUCKETS];
    int sorted;
};

/** Summary of a series for output. */
struct rp_summary {
    uint64_t count, total, min, p50, p99, max;
    int exact;
};

void rp_series_add(struct rp_series *s, uint64_t v);
void rp_series_free(struct rp_series *s);
/** Quantiles by nearest rank (the value at rank ceil(q * count)). */
void rp_series_summary(struct rp_series *s, struct rp_summary *out);

struct rp_holder {
    uint64_t thread;   /**< thread key */
    uint64_t since_ns;
    uint32_t depth;
};

struct rp_lock_thread {
    int64_t tid;
    uint64_t acquisitions, contended;
    uint64_t wait_ns, hold_ns;
};

enum {
    RP_LOCK_MUTEX = 1u << 0,
    RP_LOCK_SPIN = 1u << 1,
    RP_LOCK_RWLOCK_READ = 1u << 2,
    RP_LOCK_SEMAPHORE = 1u << 3
};

struct rp_lock {
    uint64_t address;
    unsigned kinds;
    uint64_t acquisitions;   /**< successful acquisitions */
    uint64_t contended;      /**< waits over the threshold + failures */
    uint64_t failures;       /**< trylock failures and timeouts */
    uint64_t unwaited;       /**< acquisitions with no wait recorded */
    uint64_t releases_unheld; /**< releases of a hold not seen starting */
    struct rp_series wait, hold;
    struct rp_holder *holders;
    size_t holder_count, holder_cap;
    struct rp_lock_thread *threads;
    size_t thread_count, thread_cap;
};

/** Where a call's file descriptor is: its entry's data, its result, or
 * nowhere. */
enum { RP_FD_NONE = 0, RP_FD_ENTRY = 1, RP_FD_RESULT = 2 };

struct rp_call_fd {
    int64_t fd;
    uint64_t errors, bytes;
    struct rp_series latency;
};

struct rp_call {
    uint32_t entry, exit;   /**< event ids in this stream's numbering */
    char name[16];          /**< "read" */
    int fd_from;
    int counts_bytes;       /**< the result of a success is a byte count */
    uint64_t errors, bytes;
    struct rp_series latency;
    struct fr_map fds;      /**< fd -> struct rp_call_fd */
    size_t fd_count;
};

enum {
    RP_ALLOC_MALLOC = 0,
    RP_ALLOC_CALLOC,
    RP_ALLOC_REALLOC,
    RP_ALLOC_MEMALIGN,   /* posix_memalign */
    RP_ALLOC_ALIGNED,    /* aligned_alloc */
    RP_ALLOC_MMAP,
    RP_ALLOC_KINDS
};

struct rp_alloc {
    uint64_t ptr, size;
    uint32_t kind;
    uint32_t next_free;   /**< free list (index + 1), 0 when in use */
};

/** A call waiting for its exit event (one per thread context). */
struct rp_pending {
    int active;
    uint32_t entry;       /**< entry event id */
    uint32_t role;        /**< what kind of call (RP_ROLE_*) */
    uint32_t index;       /**< the rp_call or allocation kind */
    uint64_t since_ns;
    uint64_t data;        /**< the entry's data word */
    uint64_t args[5];     /**< ARG_0 .. ARG_4 with the same time */
    unsigned args_seen;
};

struct rp_span_open {
    uint64_t key;
    uint64_t since_ns;
};

struct rp_context {
    struct rp_pending call;       /**< I/O or memory call */
    int waiting;                  /**< a lock wait is open */
    uint64_t wait_lock, wait_since;
    /** Open spans, innermost last; RP_SPAN_DEPTH of them, allocated at
     * the context's first span. */
    struct rp_span_open *spans;
    uint32_t span_depth;
};

struct rp_thread {
    int64_t tid;
    char name[64];
    uint64_t events;
    uint64_t first_ns, last_ns;
    int have_time;
    struct rp_context ctx[2];     /**< thread and signal-handler context */
    /* Context switches. */
    uint64_t switches_in, switches_out;
    int on_cpu;
    uint64_t on_since_ns;
    int switches_from_perf;  /* from processor rings: no last switch out */
    uint64_t cpu_ns;
    int64_t last_cpu;             /**< CPU id of the last switch in, -1 */
    uint64_t holds;               /**< locks it holds now */
    uint32_t *timeline;           /**< events per time bucket, lazily */
    uint64_t *cpu_timeline;       /**< on-CPU ns per time bucket, lazily */
};

struct rp_span {
    uint64_t key;
    char name[80];
    struct rp_series duration;
};

/** The report's whole state. */
struct report {
    flightrec_client *client;
    uint64_t contended_ns;        /**< a wait longer than this contends */
    int roles_ready;
    uint8_t role[FLIGHTREC_EVENT_COUNT];
    /** Lock kind, allocation kind or argument number, per id. */
    uint8_t role_index[FLIGHTREC_EVENT_COUNT];
    uint8_t call_of[FLIGHTREC_EVENT_COUNT]; /**< index into calls + 1 */
    int rtems;                    /**< rings are CPUs */

    int have_time;
    uint64_t first_ns, last_ns;
    uint64_t events, untimed, late;
    int oom;

    struct fr_map threads;        /**< tid + 1 -> struct rp_thread */
    struct rp_thread **thread_list;
    size_t thread_count, thread_cap;
    int64_t cache_tid;
    struct rp_thread *cache_thread;

    struct fr_map locks;          /**< address -> struct rp_lock */
    struct rp_lock **lock_list;
    size_t lock_count, lock_cap;

    struct rp_call *calls;
    size_t call_count;

    /* Heap. */
    struct fr_map live;           /**< pointer -> index + 1 into allocs */
    struct rp_alloc *allocs;
    size_t alloc_len, alloc_cap;
    uint32_t alloc_free;          /**< head of the free list (index + 1) */
    uint64_t live_count;
    uint64_t in_use, peak, peak_ns;
    int heap_seen;
    uint64_t alloc_calls[RP_ALLOC_KINDS], alloc_failed;
    uint64_t frees, unknown_frees, file_maps;

    /* Time charts: bucket i covers origin + [i, i + 1) * width. */
    int chart_started;
    uint64_t origin_ns, bucket_ns;
    uint32_t buckets_used;
    uint64_t heap_max[RP_TIME_BUCKETS], heap_end[RP_TIME_BUCKETS];
    uint8_t heap_set[RP_TIME_BUCKETS];

    /* Spans. */
    struct fr_map spans;          /**< key -> struct rp_span */
    struct rp_span **span_list;
    size_t span_count, span_cap;
    uint64_t span_unmatched_ends, span_too_deep;

    /* Pairs that could not be completed. */
    uint64_t unmatched_exits, cut_calls;

    /* Losses. */
    uint64_t lost[3];
    uint64_t loss_records;

    /* Function names (FUNCTION_ENTRY/EXIT spans), from the recorded
     * objects' files: set symbols_wanted before the first record. */
    int symbols_wanted;
    struct fr_symbols *symbols;

    /* Input. */
    const char *input_name;
    const char *input_error;      /**< the decoder's message, or NULL */
};

/** What a record means for the spans section. */
enum rp_span_edge { RP_SPAN_NONE = 0, RP_SPAN_BEGIN, RP_SPAN_END };

/**
 * Whether @a record begins or ends a span, and which (*@a key: records
 * with the same key pair up, nesting per thread).  The one place spans are
 * recognised: today FUNCTION_ENTRY / FUNCTION_EXIT (key: the function's
 * address); the stream's declared span kinds (EVENT_KIND) go here.
 */
enum rp_span_edge report_span_edge(const struct report *rp,
                                   const struct flightrec_record *record,
                                   uint64_t *key);
/** The name of span @a key, for the tables: a function's name where the
 * recorded objects name it (unless symbols_wanted is 0), else "function
 * 0xADDRESS". */
void report_span_name(const struct report *rp, uint64_t key, char *buf,
                      size_t size);

void report_init(struct report *rp, flightrec_client *client,
                 uint64_t contended_ns);
/** The decoder's callback. */
int report_on_record(const struct flightrec_record *record, void *arg);
/** Closes what is still open at the end of the trace (on-CPU time) and
 * sorts the tables. */
void report_finish(struct report *rp);
void report_free(struct report *rp);

/** Whether losses make counts and totals lower bounds. */
int report_lossy(const struct report *rp);

/* Output (report-write.c).  Each returns 0, or -1 after a message. */
int report_write_text(struct report *rp, FILE *out);
int report_write_json(struct report *rp, FILE *out);
int report_write_html(struct report *rp, const char *path);

/* Formatting shared by the writers. */
/** "999 ns", "12.35 µs", "1.50 ms", "2.00 s". */
const char *rp_fmt_duration(char *buf, size_t size, uint64_t ns);
/** "512 B", "1.5 KiB", "3.2 MiB", "1.1 GiB". */
const char *rp_fmt_bytes(char *buf, size_t size, uint64_t bytes);
/** Names of RP_ALLOC_* and lock kinds. */
const char *rp_alloc_kind_name(uint32_t kind);

#endif
