/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Helpers shared by the flightrec subcommands: messages, input,
 * option values (times, event and thread filters), output buffering and
 * number formatting.
 *
 * Adding a subcommand "foo":
 *
 *  1. Write tools/flightrec/cmd-foo.c defining `int cmd_foo(int argc,
 *     char **argv)`.  argv[0] is "foo".  It owns a `static const char
 *     usage[]` whose first line is "usage: flightrec foo SYNOPSIS", parses
 *     its options with getopt_long (reset `optind = 1` first; `-h`/`--help`
 *     prints the usage to stdout and returns 0), calls cli_set_command("foo")
 *     first thing, and frees everything through one `out:` label.
 *     Exit status: 0 success, 1 failure (bad input, I/O), 2 usage
 *     (cli_usage_error()).
 *  2. Declare cmd_foo() below and add `{ "foo", cmd_foo, "summary" }` to
 *     the command table in main.c (keep it sorted by name).
 *  3. Add the file to tools/flightrec/CMakeLists.txt.
 *  4. Document it in docs/flightrec.1.md (the SYNOPSIS line must equal the
 *     usage line after "usage: "; tests/cli checks this) and in the roff
 *     page docs/flightrec.1.
 *  5. Add cases to tests/cli/test-cli.c: rows of a struct cli_case table
 *     (arguments, exact stdout, stderr, exit status) in a TEST(name); each
 *     TEST is found and registered with ctest by itself.
 *
 * Names from the stream (threads, events, RTEMS info strings, decoder
 * messages quoting them) never reach a terminal raw: text output and
 * messages pass them through cli_fmt_escaped() / cli_escape(), JSON through
 * cli_fmt_json().
 *
 * Messages: data goes to stdout, diagnostics to stderr as
 * "flightrec CMD: what went wrong", lowercase, no final period, subjects
 * quoted, e.g. "flightrec print: cannot open 'x.rec': No such file or
 * directory".  Decoder failures are "flightrec CMD: FILE: <decoder message>"
 * (which names the byte offset).
 */
#ifndef FLIGHTREC_CLI_H
#define FLIGHTREC_CLI_H

#include <stddef.h>
#include <stdint.h>

#include <flightrec/client.h>

#include "util/fmt.h"
#include "util/out-buffer.h"

/*=====   Subcommands   =====*/

int cmd_print(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_connect(int argc, char **argv);
int cmd_report(int argc, char **argv);

/*=====   Messages   =====*/

/** Exit statuses. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/** Message levels: errors always print; -q hides warnings, -v shows info. */
enum { CLI_ERROR = 0, CLI_WARN = 1, CLI_INFO = 2 };

/** 0 with -q, 1 by default, 2 with -v (set by main). */
extern int cli_verbosity;

/** Sets the command named in messages ("print" gives "flightrec print: "). */
void cli_set_command(const char *name);

#if defined(__GNUC__) || defined(__clang__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/** Prints "flightrec CMD: message\n" to stderr when level <= verbosity. */
void cli_msg(int level, const char *fmt, ...) CLI_PRINTF(2, 3);

/** Prints the message, then @a usage, to stderr; returns CLI_USAGE. */
int cli_usage_error(const char *usage, const char *fmt, ...)
    CLI_PRINTF(2, 3);

/**
 * Handles the result of getopt_long() that is '?' or ':' (an unknown option
 * or a missing value): prints the matching message and @a usage, returns
 * CLI_USAGE.  Needs opterr = 0 and an optstring starting with ':'.
 */
int cli_bad_option(int c, char **argv, const char *usage);

/*=====   Input   =====*/

/** An opened input stream. */
struct cli_input {
    int fd;
    int is_regular;    /**< a regular file (exact merge is affordable) */
    const char *path;  /**< as given; "-" is standard input */
    const char *name;  /**< for messages: the path or "<stdin>" */
    /** Called by cli_decode() before a read that would wait (the input is
     * a pipe or terminal with nothing to read yet), e.g. to flush output
     * so that a live stream is seen as it comes; NULL: nothing. */
    void (*on_idle)(void *arg);
    void *idle_arg;
};

/**
 * Opens @a path ("-" or NULL: standard input).  On failure prints
 * "cannot open 'PATH': strerror" and returns -1.
 */
int cli_input_open(struct cli_input *in, const char *path);
/** Writes a stream of what the session of process @a pid holds to @a fd
 * (flightrec dump); 0, or -1 after a message.  Set by cmd-session.c, so
 * that print, stats and convert read a session given by its pid. */
extern int (*cli_session_dump)(const char *pid, int fd);
void cli_input_close(struct cli_input *in);

/**
 * Reads the whole input into @a client with flightrec_client_read_fd()
 * (a merging client reads a regular file twice: exact order, memory
 * bounded by its rings).  Prints "NAME: <decoder message>" on a stream or
 * read error; a callback stop (FLIGHTREC_ECALLBACK) prints nothing, the
 * callback owner reports why.
 * @return 0 on success, else the negative error code.
 */
int cli_decode(struct cli_input *in, flightrec_client *client);

/** Merge window for an input: 0 (exact) for a regular file, else
 * @a window_ns. */
uint64_t cli_merge_window(const struct cli_input *in, uint64_t window_ns);

/**
 * The decoder's memory limit when --memory-limit is not given: half the
 * machine's physical memory (so that a huge stream stops with a message
 * instead of swapping), 0 (none) if unknown.
 */
uint64_t cli_memory_limit_default(void);

/**
 * Parses a size in bytes with an optional binary suffix K, M, G or T
 * ("512M", "2G", "0" for no limit).  Returns 0 or -1.
 */
int cli_parse_size(const char *text, uint64_t *bytes);

/*=====   Option values   =====*/

/**
 * Parses a non-negative number of seconds with up to 9 decimals ("1",
 * "0.25", "12.000000001") into nanoseconds.  Returns 0 or -1.
 */
int cli_parse_seconds(const char *text, uint64_t *ns);

/** Parses a decimal unsigned integer (whole string).  Returns 0 or -1. */
int cli_parse_u64(const char *text, uint64_t *out);

/**
 * The decoding options of the commands that read a whole stream (report,
 * stats): --window=SECONDS and --memory-limit=SIZE.  Their long options are
 * CLI_DECODE_LONG_OPTIONS (ids from CLI_OPT_WINDOW on: a command's own
 * ids stay below 0x1000).
 */
struct cli_decode_options {
    uint64_t window_ns;     /**< FLIGHTREC_MERGE_WINDOW_AUTO by default */
    uint64_t memory_limit;  /**< cli_memory_limit_default() by default */
};

enum { CLI_OPT_WINDOW = 0x1000, CLI_OPT_MEMORY_LIMIT };

#define CLI_DECODE_LONG_OPTIONS                                           \
    { "window", required_argument, NULL, CLI_OPT_WINDOW },                \
    { "memory-limit", required_argument, NULL, CLI_OPT_MEMORY_LIMIT }

void cli_decode_options_init(struct cli_decode_options *o);
/**
 * Takes option @a c of getopt_long() with its @a arg if it is one of
 * CLI_DECODE_LONG_OPTIONS: 1 if taken, 0 if it is not one of them, or -1
 * after a usage error (cli_usage_error(@a usage, ...)) for a bad value,
 * the exit status in *@a status.
 */
int cli_decode_option(struct cli_decode_options *o, int c, const char *arg,
                      const char *usage, int *status);

/** One --event or --thread term, and whether any record matched it. */
struct cli_pattern {
    char *text;      /**< a name, a glob (name-match.h) or a number */
    int64_t number;  /**< the term as a decimal number, -1 if it is not one */
    int matched;
};

/** Thread filter cache entry: the decision for a ring's identity. */
struct cli_filter_slot {
    const void *key;  /**< the ring info; NULL: empty */
    int64_t tid;
    unsigned char decision;
    char name[64];
};

#define CLI_THREAD_SLOTS 1024
/** Thread names kept as suggestions for a --thread that matched nothing. */
#define CLI_THREAD_SEEN_MAX 1024

/**
 * Event filter: --event=TERM[,TERM...], repeatable.  A term is an event id
 * (0..1023), a name (system names, USER_<n>, and names the stream
 * registers) or a glob over names (MUTEX_*), so it is resolved as records
 * arrive.
 */
struct cli_event_filter {
    int active;
    size_t count;
    struct cli_pattern *terms;
    /** Per id: the decision, valid while the stream's names are unchanged
     * (flightrec_client_event_names_changes()). */
    struct {
        uint64_t names_changes;  /**< version + 1 when filled; 0: empty */
        unsigned char decision;
    } seen[FLIGHTREC_EVENT_COUNT];
};

void cli_event_filter_init(struct cli_event_filter *f);
/** Adds the comma-separated terms of @a arg.  Returns 0 or -1 (empty term,
 * id out of range, out of memory). */
int cli_event_filter_add(struct cli_event_filter *f, const char *arg);
/** Whether event @a id of the stream decoded by @a client is selected (by
 * its id or its current name). */
int cli_event_filter_match(struct cli_event_filter *f,
                           const flightrec_client *client, uint32_t id);
/** Warns (CLI_WARN) about each term that matched no record, suggesting
 * the nearest name among the events of the stream. */
void cli_event_filter_report(const struct cli_event_filter *f,
                             const flightrec_client *client);
void cli_event_filter_free(struct cli_event_filter *f);

/** Thread filter: --thread=TID|NAME|GLOB, repeatable.  A term matches a
 * thread whose id equals it (when numeric) or whose name it matches. */
struct cli_thread_filter {
    int active;
    size_t count;
    struct cli_pattern *terms;
    struct cli_filter_slot slots[CLI_THREAD_SLOTS];
    /** Distinct thread names seen, for suggestions. */
    char (*seen)[64];
    size_t seen_count;
};

void cli_thread_filter_init(struct cli_thread_filter *f);
int cli_thread_filter_add(struct cli_thread_filter *f, const char *arg);
int cli_thread_filter_match(struct cli_thread_filter *f,
                            const struct flightrec_ring_info *ring);
/** Warns about each term that matched no record, suggesting the nearest
 * thread name seen. */
void cli_thread_filter_report(const struct cli_thread_filter *f);
void cli_thread_filter_free(struct cli_thread_filter *f);

/*=====   print's text output for records decoded elsewhere   =====*/

/**
 * The lines of `flightrec print` (no option) for a client its caller feeds
 * itself: flightrec connect --print uses print's own code through these.
 */
struct cli_printer;

/** A printer writing to @a fd; NULL when out of memory. */
struct cli_printer *cli_printer_new(int fd);
/** The client whose records are printed (for event names); before the
 * first record. */
void cli_printer_attach(struct cli_printer *printer, flightrec_client *client);
/** flightrec_client_options::on_record, with the printer as its arg;
 * non-zero after a write error. */
int cli_printer_on_record(const struct flightrec_record *r, void *printer);
/** Writes what is buffered; 0, or the errno of the first failed write. */
int cli_printer_flush(struct cli_printer *printer);
/** Frees the printer (not its client); accepts NULL. */
void cli_printer_free(struct cli_printer *printer);

/*=====   Formatting (return the end of what they wrote)   =====*/

/* Numbers: util/fmt.h (fr_fmt_*). */
/** A CSV field: as is, or double-quoted with quotes doubled when it holds a
 * comma, quote, CR or LF.  Writes at most 2 * len + 2 bytes. */
char *cli_fmt_csv(char *p, const char *s, size_t len);

/**
 * Text safe for a terminal: valid UTF-8 as is, except that control
 * characters (C0, DEL, C1) become "\n", "\t", "\r", "\e" or
 * "\xHH", a backslash becomes "\\", and bytes that are not valid
 * UTF-8 become "\xHH".  Writes at most 4 * len bytes.
 */
char *cli_fmt_escaped(char *p, const char *s, size_t len);
/** cli_fmt_escaped() of the NUL-terminated @a s into @a buf (cut to fit,
 * NUL-terminated); returns @a buf.  For messages and stdio output. */
const char *cli_escape(char *buf, size_t size, const char *s);
/** A loss count in @a buf, marked " (saturated)" when it stopped at
 * UINT64_MAX; returns @a buf. */
const char *cli_count_text(char *buf, size_t size, uint64_t v);
/** A JSON string with its quotes: '"', '\' and control characters
 * escaped, bytes that are not valid UTF-8 as U+FFFD.  Writes at most
 * 6 * len + 2 bytes. */
char *cli_fmt_json(char *p, const char *s, size_t len);

/** "overflow", "discard", "missing" or "unknown". */
const char *cli_loss_kind_name(uint32_t kind);
/** "flightrec", "rtems-v10", "rtems-v1" or "unknown". */
const char *cli_stream_kind_name(uint32_t kind);
/** "le32", "le64", "be32", "be64" or "unknown". */
const char *cli_format_name(uint32_t format);

#endif
