/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Viewer-format converters: a sink receives the decoder's records in merged
 * time order and writes one viewer format (CTF, Perfetto, ftrace text,
 * Chrome JSON).  Sinks never see the decoder itself, only a fr_source that
 * answers name questions, so tests can drive them with hand-made records.
 */
#ifndef FLIGHTREC_CONVERT_H
#define FLIGHTREC_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include <flightrec/client.h>

enum fr_format {
    FR_FORMAT_CTF = 0,
    FR_FORMAT_PERFETTO = 1,
    FR_FORMAT_FTRACE = 2,
    FR_FORMAT_JSON = 3
};

/* What a sink may ask about the stream while it converts. */
struct fr_source {
    const struct flightrec_stream_info *info;
    /* Never NULL results; valid until the next call. */
    const char *(*event_name)(void *arg, uint32_t event);
    /* Last name given to a thread id (RTEMS THREAD_NAME), or NULL. */
    const char *(*thread_name)(void *arg, int64_t thread_id);
    void *arg;
    /* What an event means: FLIGHTREC_EVENT_* (format.h); for a SPAN_END
     * @a begin gets the begin id it closes, or -1 (innermost span).  NULL:
     * every event is an instant. */
    uint32_t (*event_kind)(void *arg, uint32_t event, int *begin);
    /* The symbol name of a code address (FUNCTION_ENTRY's data), or NULL
     * (unknown, or symbols off).  The member itself may be NULL. */
    const char *(*symbol)(void *arg, uint64_t address);
    void *symbol_arg;
};

struct fr_sink;

struct fr_sink_ops {
    int (*begin)(struct fr_sink *sink);
    int (*record)(struct fr_sink *sink, const struct flightrec_record *rec);
    int (*end)(struct fr_sink *sink);
    void (*destroy)(struct fr_sink *sink);
    /* Forgets every record taken, for a new start (NULL: not needed,
     * the sink never sets needs_time_order). */
    int (*reset)(struct fr_sink *sink);
};

/* Common head of every sink; the formats embed it first. */
struct fr_sink {
    const struct fr_sink_ops *ops;
    const struct fr_source *src;
    int kernel;          /* RTEMS stream: per-CPU, kernel-shaped output */
    char error[256];     /* set when an operation fails */
    /* Events that could not be timed: every format is a timeline, so they
     * are left out (and counted for a warning) rather than put anywhere. */
    uint64_t untimed;
    /* Thread switches with only the thread switched in known (the stream
     * starts there, or a loss cut the switch): not shown as switches. */
    uint64_t half_switches;
    /* Its output is kept per ring, so records may come ring by ring
     * (FLIGHTREC_MERGE_BY_RING): no merge to pay for. */
    int by_ring_ok;
    /* Given records ring by ring, it met one that needs time order (one
     * output fed by several rings): the driver resets it and reads the
     * input again in time order. */
    int needs_time_order;
};

/* Parses "ctf", "perfetto", "ftrace", "json"; -1 if unknown. */
int fr_format_parse(const char *name);
const char *fr_format_name(int format);

/*
 * Creates a sink writing @a format to @a path: a directory for CTF (created
 * if missing), a file or "-" (stdout) for the others.  The output appears
 * (replacing what was there) only when fr_sink_end succeeds; a sink
 * destroyed before that leaves no file behind.  Returns 0 or -1 with a
 * message in @a err.
 */
int fr_sink_create(struct fr_sink **out, int format, const char *path,
                   char *err, size_t err_size);

/* Drive a sink: begin once the stream header is known, then records, end. */
int fr_sink_begin(struct fr_sink *sink, const struct fr_source *src);
int fr_sink_record(struct fr_sink *sink, const struct flightrec_record *rec);
int fr_sink_end(struct fr_sink *sink);
void fr_sink_destroy(struct fr_sink *sink);
int fr_sink_reset(struct fr_sink *sink);

/* Per-format constructors (used by fr_sink_create). */
int fr_ctf_create(struct fr_sink **out, const char *dir, char *err,
                  size_t err_size);
int fr_perfetto_create(struct fr_sink **out, const char *path, char *err,
                       size_t err_size);
int fr_ftrace_create(struct fr_sink **out, const char *path, char *err,
                     size_t err_size);
int fr_json_create(struct fr_sink **out, const char *path, char *err,
                   size_t err_size);

/* Decoder glue: feeds a stream through a client into a sink. */
struct fr_convert_progress {
    uint64_t total_bytes;      /* 0 if unknown: no progress shown */
    int show;                  /* print progress to stderr */
    uint64_t memory_limit;     /* decoder memory limit, bytes; 0: none */
    int no_symbols;            /* function addresses stay hex */
};

struct fr_convert_stats {
    uint64_t bytes;
    uint64_t records;
    uint64_t lost;
    uint64_t late;    /* records written out of time order (pipes only) */
    uint64_t untimed;        /* events left out: no time known */
};

/*
 * Reads @a fd to its end through a merging client into @a sink: a regular
 * file in exact time order (flightrec_client_read_fd), anything else
 * through a merge window, counting in stats->late the records that came
 * too late for it.  Returns 0, or -1 with a message in @a err (decoder or
 * writer error); after an error the sink was not ended, so destroying it
 * leaves no output.
 */
int fr_convert_fd(int fd, struct fr_sink *sink,
                  const struct fr_convert_progress *progress,
                  struct fr_convert_stats *stats, char *err, size_t err_size);

/* Same for an in-memory stream (benchmarks, tests). */
int fr_convert_buffer(const void *buf, size_t len, struct fr_sink *sink,
                      struct fr_convert_stats *stats, char *err,
                      size_t err_size);

#endif
