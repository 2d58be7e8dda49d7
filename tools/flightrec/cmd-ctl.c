/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flightrec ctl: shows and changes a running program's control words in
 * its session file (docs/recording.md, "Controlling a running program").
 *
 * The program's hot path reads the session file's hot page itself, so a
 * change here is seen at each thread's next event; the program's own API
 * calls take the same control lock and take in what changed.
 */
#define _GNU_SOURCE /* O_NOFOLLOW */
#include "cli.h"
#include "cli-session.h"

#include "../../src/common/filter-spec.h"
#include "../../src/common/remembered-spec.h"
#include "../../src/region/session.h"

#include <flightrec/region.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char ctl_usage[] =
    "usage: flightrec ctl PID|FILE [ACTION...]\n"
    "\n"
    "Shows (no ACTION) or changes the recording of a running program.\n"
    "Changes take effect at each thread's next event; a mode change at each\n"
    "thread's next record that takes the slow path (at most a quarter ring\n"
    "or 2^21 counter ticks later).  Actions, applied in order:\n"
    "\n"
    "  start               record again\n"
    "  stop                record nothing (the rings keep what they hold)\n"
    "  rewind              the consumer's next read starts at the oldest\n"
    "                      event the rings hold (flight mode)\n"
    "  mode flight|discard overwrite the oldest / drop the newest when full\n"
    "  filter SPEC         change the event filter: comma-separated terms,\n"
    "                      each +TERM (record, the default) or -TERM\n"
    "                      (ignore), applied in order; a TERM is all, user,\n"
    "                      system, an id, a range 600-700, an event name or\n"
    "                      a glob (MUTEX_*, 'net_*'); e.g. 'all,-600-700',\n"
    "                      '-all,+MUTEX_*'\n"
    "\n"
    "  -h, --help          show this help\n";

/* The parts of a session ctl touches, located once from a copy of the
 * header: the file is another process's and may change under us, so no
 * offset is read from it twice. */
struct view {
    unsigned char *base;
    struct flightrec_region_header header;
    struct flightrec_region_control *control;
    struct flightrec_region_hot *hot;
    const struct flightrec_region_names *names;
    const struct flightrec_region_process *process;
};

static int within(uint64_t offset, size_t size, size_t total)
{
    return offset <= total && size <= total - offset && offset % 8 == 0;
}

static int view_of(struct fr_session *s, struct view *v)
{
    v->base = s->base;
    memcpy(&v->header, s->base, sizeof(v->header));
    const struct flightrec_region_header *h = &v->header;
    if (!within(h->control_offset, sizeof(*v->control), s->size) ||
        !within(h->hot_offset, sizeof(*v->hot), s->size) ||
        !within(h->names_offset, sizeof(*v->names), s->size) ||
        !within(h->process_offset, sizeof(*v->process), s->size)) {
        char safe[600];
        cli_msg(0, "'%s': region blocks outside the file",
                cli_escape(safe, sizeof(safe), s->path));
        return -1;
    }
    v->control = (void *)(s->base + h->control_offset);
    v->hot = (void *)(s->base + h->hot_offset);
    v->names = (const void *)(s->base + h->names_offset);
    v->process = (const void *)(s->base + h->process_offset);
    return 0;
}

/* The names the program registered, from the session's name table. */
static void registered_name(uint32_t event, char *out, size_t size,
                            void *context)
{
    const struct flightrec_region_names *names = context;
    size_t n = 0;
    if (atomic_load(&names->serial[event]) != 0) {
        for (; n + 1 < size && n < 4 * FLIGHTREC_REGION_EVENT_NAME_WORDS;
             n++) {
            uint32_t word = atomic_load(&names->words[event][n / 4]);
            char c = (char)((word >> (8 * (n % 4))) & 0xffu);
            if (c == '\0')
                break;
            out[n] = c;
        }
    }
    out[n] = '\0';
}

enum action_kind { ACT_START, ACT_STOP, ACT_REWIND, ACT_MODE, ACT_FILTER };

struct action {
    enum action_kind kind;
    const char *arg;
};

/* Parses the actions of argv[from..]; their count, or -1 after a usage
 * message. */
static int parse_actions(int argc, char **argv, int from,
                         struct action *out, int max)
{
    int n = 0;
    for (int i = from; i < argc; i++) {
        if (n == max) {
            cli_usage_error(ctl_usage, "too many actions");
            return -1;
        }
        const char *word = argv[i];
        struct action *a = &out[n++];
        a->arg = NULL;
        if (strcmp(word, "start") == 0) {
            a->kind = ACT_START;
        } else if (strcmp(word, "stop") == 0) {
            a->kind = ACT_STOP;
        } else if (strcmp(word, "rewind") == 0) {
            a->kind = ACT_REWIND;
        } else if (strcmp(word, "mode") == 0 || strcmp(word, "filter") == 0) {
            if (i + 1 >= argc) {
                cli_usage_error(ctl_usage, "'%s' needs a value", word);
                return -1;
            }
            a->kind = word[0] == 'm' ? ACT_MODE : ACT_FILTER;
            a->arg = argv[++i];
            if (a->kind == ACT_MODE && strcmp(a->arg, "flight") != 0 &&
                strcmp(a->arg, "discard") != 0) {
                char safe[80];
                cli_usage_error(ctl_usage,
                                "unknown mode '%s' (flight or discard)",
                                cli_escape(safe, sizeof(safe), a->arg));
                return -1;
            }
        } else {
            char safe[80];
            cli_usage_error(ctl_usage, "unknown action '%s'",
                            cli_escape(safe, sizeof(safe), word));
            return -1;
        }
    }
    return n;
}

static void show_state(const struct view *v)
{
    const struct flightrec_region_process *p = v->process;
    struct flightrec_region_control *c = v->control;
    uint32_t wanted[FR_FILTER_WORDS];
    for (uint32_t i = 0; i < FR_FILTER_WORDS; i++)
        wanted[i] = atomic_load(&c->filter[i]);
    char spec[600], program[sizeof(p->program) + 1], safe[80];
    fr_filter_spec_format(wanted, spec, sizeof(spec));
    memcpy(program, p->program, sizeof(p->program));
    program[sizeof(p->program)] = '\0';
    int32_t consumer = atomic_load(&c->consumer_pid);
    printf("process     %d (%s), %s\n", (int)p->pid,
           cli_escape(safe, sizeof(safe), program),
           fr_session_alive(v->base) ? "alive" : "dead");
    printf("state       %s\n", atomic_load(&c->running) ? "started" : "stopped");
    printf("mode        %s\n", atomic_load(&c->mode) == FLIGHTREC_REGION_MODE_DISCARD
                                   ? "discard"
                                   : "flight");
    printf("filter      %s\n", spec);
    char remembered[FLIGHTREC_REGION_REMEMBERED_BYTES], safe_spec[600];
    if (fr_remembered_load(c, remembered) != 0)
        printf("later names none: the specs kept for them were torn (a "
               "flightrec ctl died while writing them)\n");
    else if (remembered[0] != '\0')
        printf("later names %s\n",
               cli_escape(safe_spec, sizeof(safe_spec), remembered));
    printf("generation  %u\n", (unsigned)atomic_load(&c->generation));
    if (consumer != 0)
        printf("consumer    process %d\n", (int)consumer);
    else
        printf("consumer    none\n");
    if (atomic_load(&c->rewind_request) != atomic_load(&c->rewind_done))
        printf("rewind      pending: at the consumer's next read\n");
    printf("control     %s\n",
           v->header.flags & FLIGHTREC_REGION_HOT_SHARED
               ? "shared: changes reach every thread's next event"
               : "private: this process cannot be controlled from outside");
}

/* Whether @spec starts with a term that sets every id ("all", "-all"):
 * then no earlier spec can matter to a name that comes later. */
static int spec_resets_all(const char *spec)
{
    if (*spec == '+' || *spec == '-')
        spec++;
    return strncasecmp(spec, "all", 3) == 0 && (spec[3] == '\0' || spec[3] == ',');
}

/* @remembered (the specs that judge names that come later) with @spec
 * applied after them: 0, or -1 after a message. */
static int remember_spec(char *remembered, const char *spec)
{
    size_t have = spec_resets_all(spec) ? 0 : strlen(remembered);
    size_t need = have + (have != 0) + strlen(spec);
    if (need >= FLIGHTREC_REGION_REMEMBERED_BYTES) {
        cli_msg(0, "the filter specs kept for events named later would "
                   "pass %u bytes; start the spec with 'all' or '-all' to "
                   "replace them",
                FLIGHTREC_REGION_REMEMBERED_BYTES - 1);
        return -1;
    }
    if (have != 0)
        remembered[have++] = ',';
    strcpy(remembered + have, spec);
    return 0;
}

/* The control words after @actions, from @wanted, @running, @mode and
 * @remembered as they are: 0, or -1 after a message.  @say: print the
 * notes (once, not again under the lock). */
static int compute(const struct view *v, const struct action *actions, int n,
                   uint32_t *wanted, int *running, uint32_t *mode,
                   char *remembered, int *rewinds, int say)
{
    *rewinds = 0;
    for (int i = 0; i < n; i++) {
        const struct action *a = &actions[i];
        switch (a->kind) {
        case ACT_START:
            *running = 1;
            break;
        case ACT_STOP:
            *running = 0;
            break;
        case ACT_REWIND:
            ++*rewinds;
            break;
        case ACT_MODE:
            *mode = strcmp(a->arg, "discard") == 0
                        ? FLIGHTREC_REGION_MODE_DISCARD
                        : FLIGHTREC_REGION_MODE_FLIGHT;
            break;
        case ACT_FILTER: {
            size_t bad = 0;
            char safe[300];
            uint32_t strict[FR_FILTER_WORDS];
            memcpy(strict, wanted, sizeof(strict));
            /* A name that matches no event yet is kept for the names the
             * program defines later, as FLIGHTREC_EVENTS's are. */
            int unmatched = fr_filter_spec_apply(strict, a->arg,
                                                 registered_name,
                                                 (void *)v->names, 0,
                                                 &bad) != 0;
            if (fr_filter_spec_apply(wanted, a->arg, registered_name,
                                     (void *)v->names, 1, &bad) != 0) {
                cli_msg(0, "bad filter term at byte %zu of '%s' (a bad "
                           "range or a stray comma)",
                        bad + 1, cli_escape(safe, sizeof(safe), a->arg));
                return -1;
            }
            if (remember_spec(remembered, a->arg) != 0)
                return -1;
            if (unmatched && say)
                fprintf(stderr,
                        "flightrec ctl: note: a name in '%s' matches no "
                        "event yet; it applies to events named later\n",
                        cli_escape(safe, sizeof(safe), a->arg));
            break;
        }
        }
    }
    if (*rewinds && *mode != FLIGHTREC_REGION_MODE_FLIGHT) {
        cli_msg(0, "rewind needs flight mode: in discard mode the rings hold "
                   "nothing the consumer has not read");
        return -1;
    }
    return 0;
}

/* The control words as they are.  Remembered specs that are torn (a ctl
 * died while writing them) count as none, replaced by what this ctl
 * writes; @say: note it. */
static void read_words(const struct view *v, uint32_t *wanted, int *running,
                       uint32_t *mode, char *remembered, int say)
{
    for (uint32_t i = 0; i < FR_FILTER_WORDS; i++)
        wanted[i] = atomic_load(&v->control->filter[i]);
    *running = atomic_load(&v->control->running) != 0;
    *mode = atomic_load(&v->control->mode);
    if (fr_remembered_load(v->control, remembered) != 0 && say)
        fprintf(stderr, "flightrec ctl: note: the filter specs kept for "
                        "events named later were torn (a flightrec ctl died "
                        "while writing them); they are dropped\n");
}

/* Applies @actions: checked first (messages, no lock), then done again on
 * the words as they are under the region's control lock, which is held
 * only for the stores.  0 or -1 after a message (nothing changed). */
static int apply(const struct view *v, const struct action *actions, int n)
{
    struct flightrec_region_control *c = v->control;
    uint32_t wanted[FR_FILTER_WORDS], mode;
    char remembered[FLIGHTREC_REGION_REMEMBERED_BYTES];
    int running, rewinds;
    read_words(v, wanted, &running, &mode, remembered, 1);
    if (compute(v, actions, n, wanted, &running, &mode, remembered, &rewinds,
                1) != 0)
        return -1;

    int32_t me = (int32_t)getpid(), holder = 0;
    uint64_t start = fr_process_start_time(me);
    if (fr_control_lock(&c->lock, me, start, &holder) != 0) {
        cli_msg(0, "the control lock of process %d's session is held by "
                   "process %d (stopped?): nothing changed",
                (int)v->process->pid, (int)holder);
        return -1;
    }
    /* Checked above: the same actions on words that changed meanwhile
     * fail only if the program's own changes filled the remembered specs
     * in between (names are only ever added). */
    read_words(v, wanted, &running, &mode, remembered, 0);
    int rc = compute(v, actions, n, wanted, &running, &mode, remembered,
                     &rewinds, 0);
    if (rc == 0) {
        uint32_t in_force[FR_FILTER_WORDS];
        fr_filter_in_force(wanted, running, in_force);
        for (uint32_t i = 0; i < FR_FILTER_WORDS; i++) {
            atomic_store_explicit(&c->filter[i], wanted[i],
                                  memory_order_relaxed);
            atomic_store_explicit(&v->hot->filter[i], in_force[i],
                                  memory_order_relaxed);
        }
        atomic_store_explicit(&c->running, (uint32_t)running,
                              memory_order_relaxed);
        atomic_store_explicit(&c->mode, mode, memory_order_relaxed);
        fr_remembered_store(c, remembered);
        if (rewinds)
            atomic_fetch_add_explicit(&c->rewind_request, 1,
                                      memory_order_release);
        atomic_fetch_add_explicit(&c->generation, 1, memory_order_release);
    }
    fr_control_unlock(&c->lock, me, start);
    return rc;
}

int cmd_ctl(int argc, char **argv)
{
    static const struct option options[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    cli_set_command("ctl");
    int c;
    optind = 1;
    opterr = 0;
    /* '+': stop at the PID, so that "filter -all,+X" is not an option. */
    while ((c = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
        if (c == 'h') {
            fputs(ctl_usage, stdout);
            return 0;
        }
        return cli_bad_option(c, argv, ctl_usage);
    }
    if (optind >= argc)
        return cli_usage_error(ctl_usage, "expected a PID or FILE");
    struct action actions[64];
    int n = parse_actions(argc, argv, optind + 1, actions, 64);
    if (n < 0)
        return CLI_USAGE;

    struct fr_session s;
    if (cli_session_open(argv[optind], n > 0, &s, 0) != 0)
        return 1;
    int rc = 0;
    struct view v;
    if (view_of(&s, &v) != 0) {
        rc = 1;
    } else if (n == 0) {
        show_state(&v);
    } else if (!fr_session_alive(s.base)) {
        cli_msg(0, "process %d is not running: its session can be read "
                   "(flightrec dump) but not controlled",
                (int)v.process->pid);
        rc = 1;
    } else if (fr_session_mapped_by(&s, v.process->pid) == 0) {
        cli_msg(0, "process %d no longer records into this session (it "
                   "called exec): nothing to control",
                (int)v.process->pid);
        rc = 1;
    } else if (!(v.header.flags & FLIGHTREC_REGION_HOT_SHARED)) {
        cli_msg(0, "process %d keeps its control words in private memory: "
                   "it cannot be controlled from outside",
                (int)v.process->pid);
        rc = 1;
    } else if (apply(&v, actions, n) != 0) {
        rc = 1;
    }
    fr_session_close(&s);
    return rc;
}
