/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief The flightrec command: global options, then a subcommand found in
 * a table (see cli.h for how to add one).
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <stdio.h>
#include <string.h>

#ifndef FLIGHTREC_CLI_VERSION
#define FLIGHTREC_CLI_VERSION "unknown"
#endif

struct flightrec_cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static int cmd_help(int argc, char **argv);

/* Sorted by name. */
static const struct flightrec_cmd cmds[] = {
    { "connect", cmd_connect, "record a stream from a flightrec or RTEMS server" },
    { "convert", cmd_convert, "convert a stream to CTF, Perfetto, ftrace or JSON" },
    { "ctl", cmd_ctl, "show or change a running program's recording" },
    { "dump", cmd_dump, "write what a session's rings hold, live or dead" },
    { "help", cmd_help, "show help for flightrec or a command" },
    { "ls", cmd_ls, "list this user's sessions (recording processes)" },
    { "print", cmd_print, "print the records of a stream as text or CSV" },
#ifdef FLIGHTREC_HAVE_RECORD
    { "record", cmd_record, "run a program and record it (preload library)" },
#endif
    { "report", cmd_report, "locks, heap, call latency, threads, spans, losses" },
    { "rm", cmd_rm, "remove session files" },
    { "serve", cmd_serve, "serve live sessions over TCP to many clients" },
    { "stats", cmd_stats, "summarize a stream: events, threads, losses" },
    { "stream", cmd_stream, "consume a live session's rings continuously" },
};

static const char main_usage[] =
    "usage: flightrec [--version] [--help] [-q | -v] COMMAND [ARGS]\n";

static void print_main_help(FILE *f)
{
    fputs(main_usage, f);
    fputs("\nRead and convert flightrec and RTEMS record streams.\n"
          "\nCommands:\n", f);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "   %-9s %s\n", cmds[i].name, cmds[i].summary);
    fputs("\nGlobal options:\n"
          "   -q, --quiet    show errors only\n"
          "   -v, --verbose  show more messages\n"
          "   --version      print the version and exit\n"
          "   -h, --help     print this help and exit\n"
          "\nSee 'flightrec help COMMAND' or 'man flightrec'.\n", f);
}

static const struct flightrec_cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(cmds[i].name, name) == 0)
            return &cmds[i];
    return NULL;
}

static int unknown_cmd(const char *name)
{
    cli_set_command("");
    cli_msg(CLI_ERROR, "'%s' is not a flightrec command, see 'flightrec "
            "--help'", name);
    return CLI_USAGE;
}

/* flightrec help [COMMAND]: runs "COMMAND --help". */
static int cmd_help(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "help") == 0) {
        print_main_help(stdout);
        return CLI_OK;
    }
    if (argc > 2) {
        cli_set_command("help");
        return cli_usage_error("usage: flightrec help [COMMAND]\n",
                               "too many arguments");
    }
    const struct flightrec_cmd *cmd = find_cmd(argv[1]);
    if (cmd == NULL)
        return unknown_cmd(argv[1]);
    char help[] = "--help";
    char *args[] = { argv[1], help, NULL };
    return cmd->fn(2, args);
}

int main(int argc, char **argv)
{
    int i = 1;

    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            cli_verbosity = 0;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            cli_verbosity = 2;
        } else if (strcmp(a, "--version") == 0) {
            printf("flightrec %s\n", FLIGHTREC_CLI_VERSION);
            return CLI_OK;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_main_help(stdout);
            return CLI_OK;
        } else {
            cli_msg(CLI_ERROR, "unknown option '%s'", a);
            fputs(main_usage, stderr);
            return CLI_USAGE;
        }
    }
    if (i == argc) {
        print_main_help(stderr);
        return CLI_USAGE;
    }
    const struct flightrec_cmd *cmd = find_cmd(argv[i]);
    if (cmd == NULL)
        return unknown_cmd(argv[i]);
    int rc = cmd->fn(argc - i, argv + i);
    if (fflush(stdout) != 0 && rc == CLI_OK) {
        cli_msg(CLI_ERROR, "write error on standard output");
        rc = CLI_FAIL;
    }
    return rc;
}
