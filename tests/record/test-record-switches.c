/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Context switches under `flightrec record`: the real flightrec binary
 * runs switch-target (two threads pinned to CPUs 0 and 1, each sleeping a
 * known number of times in poll()) with the real preload library, and the
 * recording is decoded with the client library.
 *
 * What the program decides is checked exactly (every sleep is a switch out
 * of a blocked thread and back in, on the thread's CPU, between its
 * POLL_ENTRY and POLL_EXIT); what the kernel decides (preemptions on a
 * loaded machine) only as lower bounds.
 */
#include "decode-file.h"
#include "test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <flightrec/client.h>
#include <flightrec/events.h>
#include <flightrec/format.h>

#define SLEEPS 6

static char scratch[4096];

/* Runs `flightrec record ARGS...` with stdout and stderr to files; returns
 * the wait status.  @a env: "NAME=VALUE" to add, or NULL. */
static int run(const char *out_path, const char *err_path, const char *env,
               const char *const *args)
{
    char *argv[32];
    size_t n = 0;
    argv[n++] = (char *)FLIGHTREC_BIN;
    argv[n++] = (char *)"record";
    for (; *args != NULL && n < 31; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0)
            _exit(125);
        dup2(o, 1);
        dup2(e, 2);
        unsetenv("FLIGHTREC_PERF_PARANOID");
        if (env != NULL)
            putenv((char *)env);
        execv(argv[0], argv);
        _exit(126);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    return status;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        TEST_FAIL("cannot open %s", path);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

struct ev {
    uint64_t time_ns;
    int cpu;             /* processor rings: the CPU; -1 for thread rings */
    int64_t tid;         /* thread rings: the owner; processor rings: data */
    uint32_t event;
    uint64_t data;
};

struct recording {
    struct ev *evs;
    size_t count, cap;
    int rc;
    uint64_t overflow;   /* losses on processor rings */
};

static int collect(const struct flightrec_record *r, void *arg)
{
    struct recording *rec = arg;
    int cpu_ring = r->ring_info->context == FLIGHTREC_RING_CONTEXT_CPU;
    if (r->type == FLIGHTREC_RECORD_LOSS && cpu_ring)
        rec->overflow += r->loss_count;
    if (r->type != FLIGHTREC_RECORD_EVENT)
        return 0;
    if (rec->count == rec->cap) {
        rec->cap = rec->cap ? rec->cap * 2 : 1024;
        rec->evs = realloc(rec->evs, rec->cap * sizeof *rec->evs);
        CHECK(rec->evs != NULL);
    }
    struct ev e = { r->time_ns, -1, r->ring_info->thread_id, r->event,
                    r->data };
    if (cpu_ring) {
        CHECK(r->ring >= FLIGHTREC_CPU_RING_BASE);
        e.cpu = (int)(r->ring - FLIGHTREC_CPU_RING_BASE);
        e.tid = (int64_t)r->data;
    }
    rec->evs[rec->count++] = e;
    return 0;
}

static void decode(const char *path, struct recording *rec)
{
    memset(rec, 0, sizeof *rec);
    flightrec_client_destroy(decode_file(path, collect, rec, &rec->rc));
}

struct target {
    long tid[2];
    int cpu[2];
    int sleeps;
};

static void parse_target(const char *text, struct target *t)
{
    memset(t, 0, sizeof *t);
    int k;
    long tid;
    int cpu;
    const char *p = text;
    for (int i = 0; i < 2; i++) {
        CHECK(sscanf(p, "thread %d %ld %d\n", &k, &tid, &cpu) == 3);
        CHECK(k == i);
        t->tid[i] = tid;
        t->cpu[i] = cpu;
        p = strchr(p, '\n');
        CHECK(p != NULL);
        p++;
    }
    CHECK(sscanf(p, "sleeps %d", &t->sleeps) == 1);
}

static void paths(const char *name, char *rec, char *out, char *err)
{
    snprintf(rec, 4200, "%s/%s.rec", scratch, name);
    snprintf(out, 4200, "%s/%s.out", scratch, name);
    snprintf(err, 4200, "%s/%s.err", scratch, name);
    unlink(rec);
}

static size_t count_cpu_events(const struct recording *rec)
{
    size_t n = 0;
    for (size_t i = 0; i < rec->count; i++)
        n += rec->evs[i].cpu >= 0;
    return n;
}

/* `flightrec report --json`: the thread's switches are its switches in,
 * and its CPU time the sum of its runs (in to out; a run still open ends
 * at the thread's last event, as perf records no switch out at exit). */
static void report_check(const char *rec_path, const struct recording *rec,
                         int64_t tid, size_t ins)
{
    uint64_t cpu_ns = 0, since = 0, last_own = 0;
    int on = 0;
    for (size_t i = 0; i < rec->count; i++) {
        const struct ev *e = &rec->evs[i];
        if (e->tid != tid)
            continue;
        if (e->cpu < 0) {
            last_own = e->time_ns;
        } else if (e->event == FLIGHTREC_EV_THREAD_SWITCH_IN) {
            on = 1;
            since = e->time_ns;
        } else if (e->event == FLIGHTREC_EV_THREAD_SWITCH_OUT && on) {
            cpu_ns += e->time_ns - since;
            on = 0;
        }
    }
    if (on && last_own > since)
        cpu_ns += last_own - since;
    char cmd[17000], out[4200], err[4200];
    snprintf(out, sizeof out, "%s/report.json", scratch);
    snprintf(err, sizeof err, "%s/report.err", scratch);
    snprintf(cmd, sizeof cmd, "'%s' report --json '%s' >'%s' 2>'%s'",
             FLIGHTREC_BIN, rec_path, out, err);
    CHECK_EQ_I(system(cmd), 0);
    const char *json = slurp(out);
    char key[64];
    snprintf(key, sizeof key, "{\"tid\":%lld,", (long long)tid);
    const char *p = strstr(json, key);
    if (p == NULL)
        TEST_FAIL("no thread %lld in the report:\n%s", (long long)tid, json);
    unsigned long long switches, reported_ns;
    const char *q = strstr(p, "\"switches\":");
    CHECK(q != NULL);
    CHECK(sscanf(q, "\"switches\":%llu,\"cpu_ns\":%llu", &switches,
                 &reported_ns) == 2);
    CHECK_EQ_U(switches, ins);
    CHECK_EQ_U(reported_ns, cpu_ns);
    CHECK(cpu_ns > 0);
}

/* print names a processor ring by its CPU: one "[cpuN] - - EVENT 0xTID"
 * line for each switch the decoder delivered, exactly. */
static void print_check(const char *rec_path, const struct recording *rec)
{
    char cmd[17000], out[4200];
    snprintf(out, sizeof out, "%s/print.txt", scratch);
    snprintf(cmd, sizeof cmd, "'%s' print '%s' >'%s'", FLIGHTREC_BIN,
             rec_path, out);
    CHECK_EQ_I(system(cmd), 0);
    const char *text = slurp(out);
    for (size_t i = 0; i < rec->count; i++) {
        const struct ev *e = &rec->evs[i];
        if (e->cpu < 0 || e->event != FLIGHTREC_EV_THREAD_SWITCH_IN)
            continue;
        char line[96];
        snprintf(line, sizeof line, "[cpu%d] - - THREAD_SWITCH_IN 0x%llx\n",
                 e->cpu, (unsigned long long)e->data);
        size_t want = 0, have = 0;
        for (size_t j = 0; j < rec->count; j++)
            want += rec->evs[j].cpu == e->cpu &&
                    rec->evs[j].event == FLIGHTREC_EV_THREAD_SWITCH_IN &&
                    rec->evs[j].data == e->data;
        for (const char *p = strstr(text, line); p != NULL;
             p = strstr(p + 1, line))
            have++;
        CHECK_EQ_U(have, want);
    }
}

/* ftrace text: each switch in is a sched_switch from the CPU's idle task
 * to the thread, on that CPU; each thread's sleeps leave in state S. */
static void ftrace_check(const char *rec_path, const struct recording *rec,
                         const long *tids, const int *cpus_of)
{
    char cmd[17000], out[4200];
    snprintf(out, sizeof out, "%s/ftrace.txt", scratch);
    snprintf(cmd, sizeof cmd, "'%s' convert --to ftrace -o '%s' '%s'",
             FLIGHTREC_BIN, out, rec_path);
    CHECK_EQ_I(system(cmd), 0);
    const char *text = slurp(out);
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (int k = 0; k < 2; k++) {
        for (int cpu = 0; cpu < cpus; cpu++) {
            size_t want = 0, have = 0;
            for (size_t j = 0; j < rec->count; j++)
                want += rec->evs[j].cpu == cpu &&
                        rec->evs[j].event == FLIGHTREC_EV_THREAD_SWITCH_IN &&
                        (int64_t)rec->evs[j].data == tids[k];
            char head[64], tail[96];
            snprintf(head, sizeof head, "<idle>-0       [%03d] d..2. ", cpu);
            snprintf(tail, sizeof tail,
                     "prev_comm=swapper/%d prev_pid=0 prev_prio=120 "
                     "prev_state=R ==> next_comm=",
                     cpu);
            char pid[48];
            snprintf(pid, sizeof pid, " next_pid=%lld next_prio=120\n",
                     (long long)tids[k]);
            for (const char *p = strstr(text, head); p != NULL;
                 p = strstr(p + 1, head)) {
                const char *end = strchr(p, '\n');
                const char *t = strstr(p, tail), *q = strstr(p, pid);
                have += t != NULL && q != NULL && t < end && q < end &&
                        q + strlen(pid) - 1 == end;
            }
            CHECK_EQ_U(have, want);
        }
        char slept[96];
        snprintf(slept, sizeof slept, " prev_pid=%lld prev_prio=120 "
                 "prev_state=S ==> next_comm=swapper/", (long long)tids[k]);
        size_t sleeps = 0;
        for (const char *p = strstr(text, slept); p != NULL;
             p = strstr(p + 1, slept))
            sleeps++;
        CHECK(sleeps >= SLEEPS);
        /* The thread's own lines (its polls, after it was pinned) are on
         * its CPU, as its switches are (before: all on 000). */
        char task[48], on_cpu[48];
        snprintf(task, sizeof task, "-%-7ld [", tids[k]);
        snprintf(on_cpu, sizeof on_cpu, "-%-7ld [%03d] ", tids[k],
                 cpus_of[k]);
        size_t polls = 0, polls_on_cpu = 0;
        for (const char *p = strstr(text, task); p != NULL;
             p = strstr(p + 1, task)) {
            const char *end = strchr(p, '\n');
            const char *call = strstr(p, ": sys_poll");
            if (call == NULL || end == NULL || call > end)
                continue;
            polls++;
            polls_on_cpu += strncmp(p, on_cpu, strlen(on_cpu)) == 0;
        }
        CHECK_EQ_U(polls, 2 * SLEEPS);    /* entries and exits */
        CHECK_EQ_U(polls_on_cpu, polls);
    }
}

/* Every sleep of each pinned thread, on its CPU, in order with the
 * thread's own events. */
TEST(switches_of_pinned_threads)
{
    char rec_path[4200], out[4200], err[4200];
    paths("pinned", rec_path, out, err);
    char sleeps_arg[16];
    snprintf(sleeps_arg, sizeof sleeps_arg, "%d", SLEEPS);
    const char *args[] = { "-o", rec_path, "--events", "io", "--",
                           SWITCH_TARGET, sleeps_arg, NULL };
    int status = run(out, err, NULL, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    /* Allowed here: nothing said about switches. */
    CHECK(strstr(slurp(err), "switches") == NULL);
    struct target t;
    parse_target(slurp(out), &t);
    CHECK_EQ_I(t.sleeps, SLEEPS);

    struct recording rec;
    decode(rec_path, &rec);
    CHECK_EQ_I(rec.rc, 0);
    CHECK_EQ_U(rec.overflow, 0);
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (size_t i = 0; i < rec.count; i++) {
        const struct ev *e = &rec.evs[i];
        if (e->cpu < 0)
            continue;
        CHECK(e->cpu < cpus);
        CHECK(e->event == FLIGHTREC_EV_THREAD_SWITCH_IN ||
              e->event == FLIGHTREC_EV_THREAD_SWITCH_OUT ||
              e->event == FLIGHTREC_EV_SCHEDULER_BLOCK);
        /* The time order of the merged recording. */
        if (i > 0)
            CHECK(e->time_ns >= rec.evs[i - 1].time_ns);
    }

    for (int k = 0; k < 2; k++) {
        int64_t tid = t.tid[k];
        /* The thread's mark (close(-1)) and its polls, from its ring. */
        size_t mark = SIZE_MAX;
        size_t polls = 0, blocked_sleeps = 0;
        uint64_t entry_ns = 0;
        int in_poll = 0, saw_block = 0, back_in = 0;
        int running = -1;    /* -1 unknown, 1 switched in, 0 out */
        int blocking = 0;
        uint64_t block_ns = 0;
        size_t outs = 0, ins = 0;
        for (size_t i = 0; i < rec.count; i++) {
            const struct ev *e = &rec.evs[i];
            if (e->tid != tid)
                continue;
            if (e->cpu < 0) {
                /* The thread's own events happen while it runs. */
                if (running == 0)
                    TEST_FAIL("thread %d: %u at %llu ns while switched out",
                              k, e->event, (unsigned long long)e->time_ns);
                if (e->event == FLIGHTREC_EV_CLOSE_ENTRY &&
                    e->data == UINT64_MAX && mark == SIZE_MAX)
                    mark = i;
                if (e->event == FLIGHTREC_EV_POLL_ENTRY && mark != SIZE_MAX) {
                    in_poll = 1;
                    saw_block = back_in = 0;
                    entry_ns = e->time_ns;
                }
                if (e->event == FLIGHTREC_EV_POLL_EXIT && in_poll) {
                    polls++;
                    blocked_sleeps += saw_block && back_in;
                    CHECK(e->time_ns >= entry_ns);
                    in_poll = 0;
                }
                continue;
            }
            /* After the mark every switch of the thread is on its CPU. */
            if (mark != SIZE_MAX)
                CHECK_EQ_I(e->cpu, t.cpu[k]);
            if (e->event == FLIGHTREC_EV_THREAD_SWITCH_OUT) {
                if (blocking)
                    CHECK_EQ_U(e->time_ns, block_ns);
                /* Outs and ins alternate. */
                CHECK(running != 0);
                running = 0;
                outs++;
                if (blocking)
                    saw_block = in_poll;
                blocking = 0;
            } else if (e->event == FLIGHTREC_EV_SCHEDULER_BLOCK) {
                /* Right before the switch out, at its time. */
                CHECK(running != 0);
                blocking = 1;
                block_ns = e->time_ns;
            } else {
                CHECK(running != 1);
                running = 1;
                ins++;
                if (in_poll && saw_block)
                    back_in = 1;
            }
        }
        CHECK(mark != SIZE_MAX);
        CHECK_EQ_U(polls, SLEEPS);
        report_check(rec_path, &rec, tid, ins);
        /* Each sleep: switched out blocked, then back in, on its CPU. */
        CHECK_EQ_U(blocked_sleeps, SLEEPS);
        CHECK(outs >= SLEEPS);
        CHECK(ins >= SLEEPS);
        /* The thread ended switched out (its exit), or still in when the
         * last drain ran: ins and outs differ by at most one. */
        CHECK(outs + 1 >= ins && ins + 1 >= outs);
    }
    print_check(rec_path, &rec);
    ftrace_check(rec_path, &rec, t.tid, t.cpu);
    free(rec.evs);
}

/* --no-switches: no processor rings, nothing said, the rest recorded. */
TEST(no_switches_option)
{
    char rec_path[4200], out[4200], err[4200];
    paths("noswitch", rec_path, out, err);
    const char *args[] = { "-o", rec_path, "--events", "io", "--no-switches",
                           "--", SWITCH_TARGET, "2", NULL };
    int status = run(out, err, NULL, args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    CHECK_EQ_I((int)strlen(slurp(err)), 0);
    struct recording rec;
    decode(rec_path, &rec);
    CHECK_EQ_I(rec.rc, 0);
    CHECK_EQ_U(count_cpu_events(&rec), 0);
    size_t polls = 0;
    for (size_t i = 0; i < rec.count; i++)
        polls += rec.evs[i].event == FLIGHTREC_EV_POLL_EXIT;
    CHECK_EQ_U(polls, 4);
    free(rec.evs);
}

/* Where perf is not allowed, record says so once and records the rest. */
TEST(not_allowed_said_once)
{
    char rec_path[4200], out[4200], err[4200];
    paths("paranoid", rec_path, out, err);
    const char *args[] = { "-o", rec_path, "--events", "io", "--",
                           SWITCH_TARGET, "2", NULL };
    int status = run(out, err, "FLIGHTREC_PERF_PARANOID=3", args);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    const char *text = slurp(err);
    static const char want[] =
        "flightrec record: context switches are not recorded: "
        "kernel.perf_event_paranoid is 3 (2 or less lets a program trace "
        "its own threads; or run as root); recording the rest\n";
    if (strcmp(text, want) != 0)
        TEST_FAIL("stderr: '%s'", text);
    struct recording rec;
    decode(rec_path, &rec);
    CHECK_EQ_I(rec.rc, 0);
    CHECK_EQ_U(count_cpu_events(&rec), 0);
    size_t polls = 0;
    for (size_t i = 0; i < rec.count; i++)
        polls += rec.evs[i].event == FLIGHTREC_EV_POLL_EXIT;
    CHECK_EQ_U(polls, 4);
    free(rec.evs);
}

__attribute__((constructor)) static void setup(void)
{
    snprintf(scratch, sizeof scratch, "%s", RECORD_TEST_DIR);
    mkdir(scratch, 0700);
    /* The recorded programs' session files (those of killed programs
     * stay) go here, not among the user's own sessions. */
    char sessions[4200];
    snprintf(sessions, sizeof sessions, "%s/sessions", scratch);
    mkdir(sessions, 0700);
    setenv("XDG_RUNTIME_DIR", sessions, 1);
}

TEST_MAIN()
