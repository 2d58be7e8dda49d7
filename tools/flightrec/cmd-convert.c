/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec convert --to ctf|perfetto|ftrace|json -o OUT [FILE|-]
 *
 * Streams a recording through the decoder into one viewer format.  Self
 * contained (its own input handling) so it builds with or without the
 * shared CLI helpers.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"

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
    "   json       Chrome JSON Trace Event Format (Perfetto)\n"
    "\n"
    "Options:\n"
    "   -t, --to FORMAT   output format\n"
    "   -o, --output OUT  output file or directory ('-': stdout, not ctf)\n"
    "   -h, --help        print this help and exit\n";

/* Progress only pays off for big files read interactively. */
#define PROGRESS_MIN_BYTES (64ull << 20)

static int usage_error(const char *what, const char *arg)
{
    if (arg != NULL)
        fprintf(stderr, "flightrec convert: %s '%s'\n%s", what, arg, usage);
    else
        fprintf(stderr, "flightrec convert: %s\n%s", what, usage);
    return 2;
}

int cmd_convert(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "to", required_argument, NULL, 't' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *to = NULL, *output = NULL;
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
            return 0;
        case ':':
            return usage_error("missing value for option",
                               argv[optind - 1]);
        default:
            return usage_error("unknown option", argv[optind - 1]);
        }
    }
    if (to == NULL)
        return usage_error("missing --to FORMAT", NULL);
    int format = fr_format_parse(to);
    if (format < 0)
        return usage_error("unknown format", to);
    if (output == NULL)
        return usage_error("missing -o OUT", NULL);
    if (format == FR_FORMAT_CTF && strcmp(output, "-") == 0)
        return usage_error("ctf needs an output directory, not", "-");
    if (argc - optind > 1)
        return usage_error("too many arguments", NULL);
    const char *path = optind < argc ? argv[optind] : "-";

    int fd = STDIN_FILENO;
    if (strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "flightrec convert: cannot open '%s': %s\n",
                    path, strerror(errno));
            return 1;
        }
    }
    struct fr_convert_progress progress = { 0, 0 };
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (uint64_t)st.st_size >= PROGRESS_MIN_BYTES && isatty(STDERR_FILENO)) {
        progress.total_bytes = (uint64_t)st.st_size;
        progress.show = 1;
    }
    char err[512];
    struct fr_sink *sink = NULL;
    int rc = 1;
    if (fr_sink_create(&sink, format, output, err, sizeof err) != 0) {
        fprintf(stderr, "flightrec convert: %s\n", err);
        goto out;
    }
    struct fr_convert_stats stats;
    if (fr_convert_fd(fd, sink, &progress, &stats, err, sizeof err) != 0) {
        fprintf(stderr, "flightrec convert: %s: %s\n",
                strcmp(path, "-") == 0 ? "<stdin>" : path, err);
        goto out;
    }
    if (stats.lost > 0)
        fprintf(stderr, "flightrec convert: %" PRIu64 " items were lost in "
                "the recording (marked in the output)\n", stats.lost);
    rc = 0;
out:
    fr_sink_destroy(sink);
    if (fd != STDIN_FILENO)
        close(fd);
    return rc;
}
