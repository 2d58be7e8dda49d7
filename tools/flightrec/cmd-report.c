/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief flightrec report: lock contention, heap, call latency, threads,
 * spans and losses of one recording (the analysis is report-model.c, the
 * output report-write.c).
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "report.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: flightrec report [--json] [--html FILE] [options] [FILE|-|PID]\n"
    "\n"
    "Report on the recording in FILE, standard input or the session of\n"
    "process PID: lock contention per lock, heap in use over time and what\n"
    "is still allocated at the end, time per call and file descriptor,\n"
    "events and CPU time per thread, span durations, and losses (a lossy\n"
    "trace says so first: its counts are lower bounds).\n"
    "\n"
    "Options:\n"
    "  --json               one JSON object instead of text (schema in\n"
    "                       'man flightrec')\n"
    "  --html FILE          also write a self-contained HTML page with the\n"
    "                       same tables and SVG charts (mode 0600, replaced\n"
    "                       only when complete)\n"
    "  --contended=SECONDS  a lock wait longer than this counts as contended\n"
    "                       (default 0.000001, 1 us)\n"
    "  --window=SECONDS     merge window when reading a pipe (as print)\n"
    "  --memory-limit=SIZE  stop when the decoder would hold more (e.g.\n"
    "                       512M; default half the RAM; 0: no limit)\n"
    "  --no-symbols         name function spans by address (default: by\n"
    "                       the function's name, from the recorded objects'\n"
    "                       files, where they can be)\n"
    "  --symbols            name them (the default)\n"
    "  -h, --help           show this help\n";

enum { OPT_JSON = 256, OPT_HTML, OPT_CONTENDED, OPT_SYMBOLS,
       OPT_NO_SYMBOLS };

static const struct option long_options[] = {
    { "json", no_argument, NULL, OPT_JSON },
    { "html", required_argument, NULL, OPT_HTML },
    { "contended", required_argument, NULL, OPT_CONTENDED },
    { "symbols", no_argument, NULL, OPT_SYMBOLS },
    { "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
    CLI_DECODE_LONG_OPTIONS,
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cmd_report(int argc, char **argv)
{
    struct report *rp = calloc(1, sizeof *rp);
    struct cli_input in = { .fd = -1 };
    flightrec_client *client = NULL;
    struct cli_decode_options decoding;
    uint64_t contended_ns = 1000;
    const char *html = NULL;
    int ret = CLI_FAIL, json = 0, c, have_report = 0, symbols = 1;

    cli_set_command("report");
    if (rp == NULL) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        return CLI_FAIL;
    }
    cli_decode_options_init(&decoding);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        int taken = cli_decode_option(&decoding, c, optarg, usage, &ret);
        if (taken > 0)
            continue;
        if (taken < 0)
            goto out;
        if (c == OPT_JSON || c == OPT_SYMBOLS || c == OPT_NO_SYMBOLS) {
            json |= c == OPT_JSON;
            if (c != OPT_JSON)
                symbols = c == OPT_SYMBOLS;
            continue;
        }
        if (c == OPT_HTML) {
            if (optarg[0] != '\0') {
                html = optarg;
                continue;
            }
            ret = cli_usage_error(usage, "--html needs a file name");
        } else if (c == OPT_CONTENDED) {
            if (cli_parse_seconds(optarg, &contended_ns) == 0)
                continue;
            ret = cli_usage_error(usage, "bad time '%s' (seconds, e.g. "
                                  "1.5)", optarg);
        } else if (c == 'h') {
            fputs(usage, stdout);
            ret = CLI_OK;
        } else {
            ret = cli_bad_option(c, argv, usage);
        }
        goto out;
    }
    if (argc - optind > 1) {
        ret = cli_usage_error(usage, "too many arguments");
        goto out;
    }
    if (cli_input_open(&in, optind < argc ? argv[optind] : "-") != 0)
        goto out;

    /* Merged: a lock's wait and hold pair records of different threads,
     * which only time order relates.  A regular file is read in exact
     * order with memory bounded by its rings (flightrec_client_read_fd). */
    struct flightrec_client_options opt = {
        .on_record = report_on_record,
        .arg = rp,
        .merge = 1,
        .merge_window_ns = cli_merge_window(&in, decoding.window_ns),
        .memory_limit = decoding.memory_limit,
    };
    int rc = flightrec_client_create(&client, &opt);
    if (rc != 0) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(rc));
        goto out;
    }
    report_init(rp, client, contended_ns);
    rp->symbols_wanted = symbols;
    have_report = 1;
    rp->input_name = in.name;
    rc = cli_decode(&in, client);
    if (rp->oom) {
        cli_msg(CLI_ERROR, "%s", flightrec_strerror(FLIGHTREC_ENOMEM));
        rp->input_error = flightrec_strerror(FLIGHTREC_ENOMEM);
    } else if (rc != 0) {
        /* cli_decode said what and where; the report says it too, and
         * covers what came before. */
        rp->input_error = flightrec_client_message(client);
        if (rp->input_error[0] == '\0')
            rp->input_error = flightrec_strerror(rc);
    }
    report_finish(rp);
    int wrc = json ? report_write_json(rp, stdout)
                   : report_write_text(rp, stdout);
    if (html != NULL && report_write_html(rp, html) != 0)
        wrc = -1;
    if (wrc == 0 && rc == 0 && !rp->oom)
        ret = CLI_OK;
out:
    cli_input_close(&in);
    if (have_report)
        report_free(rp);
    flightrec_client_destroy(client);
    free(rp);
    return ret;
}
