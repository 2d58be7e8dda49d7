/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec convert --to ctf|perfetto|ftrace|json -o OUT [FILE|-]
 *
 * Streams a recording through the decoder into one viewer format.  Input
 * and messages use the shared CLI helpers (cli.h).  cli_decode() is not
 * used: fr_convert_fd() owns the decoder, its merge window and its
 * progress, and reports a writer error before a decoder one.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "convert.h"

/* cli.h declares it only where the command is built in. */
int cmd_convert(int argc, char **argv);

static const char usage[] =
    "usage: flightrec convert --to ctf|perfetto|ftrace|json -o OUT [FILE|-]\n"
    "\n"
    "Convert a flightrec or RTEMS record stream for a trace viewer.\n"
    "\n"
    "Formats:\n"
    "   ctf        CTF 1.8 directory OUT (babeltrace2, Trace Compass);\n"
    "              RTEMS streams as an LTTng kernel trace, flightrec\n"
    "              streams as an LTTng-UST trace\n"
    "   perfetto   Perfetto protobuf file (ui.perfetto.dev)\n"
    "   ftrace     Linux ftrace text (Perfetto, Trace Compass)\n"
    "   json       Chrome JSON Trace Event Format (Perfetto, Chrome\n"
    "              DevTools, speedscope)\n"
    "\n"
    "Options:\n"
    "   -t, --to FORMAT   output format\n"
    "   -o, --output OUT  output file or directory ('-': stdout, not ctf)\n"
    "   --memory-limit=SIZE  stop when the decoder would hold more (e.g.\n"
    "                     512M; default half the RAM; 0: no limit)\n"
    "   --no-symbols      show function addresses in hex (default: named\n"
    "                     from the recorded objects' files, where they can)\n"
    "   --symbols         name them (the default)\n"
    "   -h, --help        print this help and exit\n";

/* Whether writing @a output would overwrite the input: the same file
 * (also through a link), or for CTF, the directory holding it, which is
 * replaced whole. */
static int output_is_input(const struct cli_input *in, const char *output,
                           int format)
{
    struct stat in_st, out_st;
    if (strcmp(output, "-") == 0 || fstat(in->fd, &in_st) != 0 ||
        stat(output, &out_st) != 0)
        return 0;
    if (in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
        return 1;
    if (format != FR_FORMAT_CTF || strcmp(in->path, "-") == 0)
        return 0;
    /* The input's directory, as the input names it. */
    char dir[4096];
    const char *slash = strrchr(in->path, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - in->path + 1),
                 in->path);
    struct stat dir_st;
    return stat(dir, &dir_st) == 0 && dir_st.st_dev == out_st.st_dev &&
           dir_st.st_ino == out_st.st_ino;
}

/* CTF keeps a file per ring open while it can (reopening costs far more
 * than writing): the soft file limit is raised as far as the hard one
 * allows.  Past it, files are still closed and reopened as needed. */
static void raise_file_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536
                      ? 65536 : rl.rlim_max;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        rl.rlim_cur = want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Progress only pays off for big files read interactively. */
#define PROGRESS_MIN_BYTES (64ull << 20)

int cmd_convert(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "to", required_argument, NULL, 't' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { "memory-limit", required_argument, NULL, 'M' },
        { "symbols", no_argument, NULL, 'S' },
        { "no-symbols", no_argument, NULL, 'N' },
        { NULL, 0, NULL, 0 }
    };
    const char *to = NULL, *output = NULL;
    uint64_t memory_limit = cli_memory_limit_default();
    int no_symbols = 0;
    cli_set_command("convert");
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":t:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            to = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return CLI_OK;
        case 'M':
            if (cli_parse_size(optarg, &memory_limit) != 0)
                return cli_usage_error(usage, "bad size '%s' (bytes, or "
                                       "with K, M, G: 512M)", optarg);
            break;
        case 'S':
        case 'N':
            no_symbols = c == 'N';
            break;
        default:
            return cli_bad_option(c, argv, usage);
        }
    }
    if (to == NULL)
        return cli_usage_error(usage, "missing --to FORMAT");
    int format = fr_format_parse(to);
    if (format < 0)
        return cli_usage_error(usage, "unknown format '%s'", to);
    if (output == NULL)
        return cli_usage_error(usage, "missing -o OUT");
    if (format == FR_FORMAT_CTF && strcmp(output, "-") == 0)
        return cli_usage_error(usage, "ctf needs an output directory, not "
                               "'-'");
    if (argc - optind > 1)
        return cli_usage_error(usage, "too many arguments");

    struct cli_input in;
    if (cli_input_open(&in, optind < argc ? argv[optind] : "-") != 0)
        return CLI_FAIL;
    struct fr_convert_progress progress = { 0, 0, memory_limit, no_symbols };
    struct stat st;
    if (in.is_regular && fstat(in.fd, &st) == 0 &&
        (uint64_t)st.st_size >= PROGRESS_MIN_BYTES && isatty(STDERR_FILENO)) {
        progress.total_bytes = (uint64_t)st.st_size;
        progress.show = 1;
    }
    char err[512];
    struct fr_sink *sink = NULL;
    int rc = CLI_FAIL;
    if (output_is_input(&in, output, format)) {
        cli_msg(CLI_ERROR, "output %s would overwrite the input %s", output,
                in.name);
        goto out;
    }
    if (format == FR_FORMAT_CTF)
        raise_file_limit();
    if (fr_sink_create(&sink, format, output, err, sizeof err) != 0) {
        cli_msg(CLI_ERROR, "%s", err);
        goto out;
    }
    struct fr_convert_stats stats;
    if (fr_convert_fd(in.fd, sink, &progress, &stats, err, sizeof err) != 0) {
        cli_msg(CLI_ERROR, "%s: %s (no output written)", in.name, err);
        goto out;
    }
    /* Out of order, which a viewer may not expect: never silently. */
    if (stats.late > 0)
        cli_msg(CLI_WARN, "%" PRIu64 " records came more than the merge "
                "window after later ones and were written out of time "
                "order (convert a file instead of a pipe for exact order)",
                stats.late);
    /* A warning (-q hides it): the output marks the losses itself. */
    if (stats.lost > 0)
        cli_msg(CLI_WARN, "%" PRIu64 " items were lost in the recording "
                "(marked in the output)", stats.lost);
    if (stats.untimed > 0)
        cli_msg(CLI_WARN, "%" PRIu64 " events could not be timed (the "
                "stream ends before their time was known) and were left "
                "out", stats.untimed);
    rc = CLI_OK;
out:
    fr_sink_destroy(sink);
    cli_input_close(&in);
    return rc;
}
