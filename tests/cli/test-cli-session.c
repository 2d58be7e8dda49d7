/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sessions from the user's side: a real recording process, the real
 * flightrec command in another process, and the real failures (kill -9,
 * a consumer that dies, another user, damaged files, a full file system).
 * Each case has its own session directory (XDG_RUNTIME_DIR).
 */
#include <flightrec.h>
#include <flightrec/client.h>
#include <flightrec/region.h>

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/region/session.h"
#include "stream-parse.h"
#include "test.h"

#define THREADS 3

static char session_dir[600];
static char scratch[512];

/* A fresh session directory for this case. */
static void use_own_sessions(const char *name)
{
    snprintf(scratch, sizeof(scratch), "%s/session-%s-%d", CLI_TEST_DIR,
             name, (int)getpid());
    mkdir(scratch, 0700);
    CHECK_EQ_I(setenv("XDG_RUNTIME_DIR", scratch, 1), 0);
    snprintf(session_dir, sizeof(session_dir), "%s/flightrec", scratch);
}

/* Runs the flightrec command; its stdout and stderr into files in the
 * scratch directory; the exit status. */
static int run(const char *args, char *out, size_t out_size, char *err,
               size_t err_size)
{
    char cmd[2048], out_path[600], err_path[600];
    snprintf(out_path, sizeof(out_path), "%s/out.txt", scratch);
    snprintf(err_path, sizeof(err_path), "%s/err.txt", scratch);
    snprintf(cmd, sizeof(cmd), "%s %s >'%s' 2>'%s'", FLIGHTREC_BIN, args,
             out_path, err_path);
    int status = system(cmd);
    const char *paths[2] = { out_path, err_path };
    char *bufs[2] = { out, err };
    size_t sizes[2] = { out_size, err_size };
    for (int i = 0; i < 2; i++) {
        if (bufs[i] == NULL)
            continue;
        FILE *f = fopen(paths[i], "r");
        size_t n = f ? fread(bufs[i], 1, sizes[i] - 1, f) : 0;
        bufs[i][n] = '\0';
        if (f)
            fclose(f);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/*=====   The recording process   =====*/

/* Shared with the child: what each of its threads has recorded so far. */
struct side_log {
    _Atomic uint64_t done[THREADS];
    _Atomic int32_t tid[THREADS];
    _Atomic int ready;
    _Atomic int release;    /* the recording threads may exit */
};

static struct side_log *side;
static uint64_t events_per_thread;

static void *recorder(void *arg)
{
    uintptr_t index = (uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof(name), "rec-%u", (unsigned)index);
    pthread_setname_np(pthread_self(), name);
    atomic_store(&side->tid[index], (int32_t)gettid());
    for (uint64_t i = 0; i < events_per_thread; i++) {
        flightrec_produce(FLIGHTREC_USER(index), (uintptr_t)i);
        atomic_store(&side->done[index], i + 1);
    }
    atomic_fetch_add(&side->ready, 1);
    while (!atomic_load(&side->release)) /* alive until told */
        usleep(1000);
    return NULL;
}

/* Forks a process that records @events per thread in @mode, then waits
 * for its standard input to close (or for a signal). */
static pid_t start_recorder(uint64_t events, int mode, uint32_t items,
                            int *hold)
{
    side = mmap(NULL, sizeof(*side), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(side != MAP_FAILED);
    memset(side, 0, sizeof(*side));
    int fds[2];
    /* Close-on-exec: the commands the test starts must not hold the
     * recorder's standard input open. */
    CHECK_EQ_I(pipe2(fds, O_CLOEXEC), 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(fds[1]);
        struct flightrec_config config;
        flightrec_config_init(&config);
        config.items_per_ring = items;
        config.mode = mode;
        if (flightrec_setup(&config) != 0)
            _exit(2);
        events_per_thread = events;
        pthread_t t[THREADS];
        for (uintptr_t i = 0; i < THREADS; i++)
            pthread_create(&t[i], NULL, recorder, (void *)i);
        char c;
        while (read(fds[0], &c, 1) > 0)
            ;
        atomic_store(&side->release, 1);
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
        exit(0); /* a normal exit: the session file goes */
    }
    close(fds[0]);
    *hold = fds[1];
    return child;
}

static void wait_ready(void)
{
    for (int i = 0; i < 20000 && atomic_load(&side->ready) < THREADS; i++)
        usleep(1000);
    CHECK_EQ_I(atomic_load(&side->ready), THREADS);
}

/*=====   Decoding what the command wrote   =====*/

struct per_thread {
    int32_t tid;
    uint64_t events, next, lost, torn;
    char name[64];
};

struct decoded {
    struct per_thread t[THREADS];
    uint64_t lost_total;
};

static int on_record(const struct flightrec_record *rec, void *arg)
{
    struct decoded *d = arg;
    if (rec->type == FLIGHTREC_RECORD_LOSS) {
        d->lost_total += rec->loss_count;
        for (int i = 0; i < THREADS; i++)
            if (rec->ring_info->thread_id == d->t[i].tid)
                d->t[i].lost += rec->loss_count;
        return 0;
    }
    if (rec->type != FLIGHTREC_RECORD_EVENT ||
        rec->event < FLIGHTREC_USER(0) ||
        rec->event >= FLIGHTREC_USER(THREADS))
        return 0;
    struct per_thread *t = &d->t[rec->event - FLIGHTREC_USER(0)];
    /* The right thread, its sequence numbers in order. */
    if (rec->ring_info->thread_id != t->tid || rec->data < t->next)
        t->torn++;
    if (t->events == 0)
        snprintf(t->name, sizeof(t->name), "%s", rec->ring_info->thread_name);
    t->next = rec->data + 1;
    t->events++;
    return 0;
}

static void decode(const char *path, struct decoded *d)
{
    memset(d, 0, sizeof(*d));
    for (int i = 0; i < THREADS; i++)
        d->t[i].tid = atomic_load(&side->tid[i]);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    size_t len;
    unsigned char *bytes = sp_read_fd(fd, &len);
    close(fd);
    struct flightrec_client_options options = {
        .on_record = on_record, .arg = d, .merge = 1,
    };
    flightrec_client *client;
    CHECK_EQ_I(flightrec_client_create(&client, &options), 0);
    CHECK_EQ_I(flightrec_client_feed(client, bytes, len), 0);
    CHECK_EQ_I(flightrec_client_finish(client), 0);
    flightrec_client_destroy(client);
    free(bytes);
}

static void out_path(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", scratch, name);
}

/*=====   Cases   =====*/

TEST(ls_and_dump_of_a_live_process)
{
    use_own_sessions("live");
    int hold;
    pid_t child = start_recorder(1000, FLIGHTREC_MODE_FLIGHT, 4096, &hold);
    wait_ready();
    static char out[1 << 17];
    char err[4096], args[1200], rec[600];
    CHECK_EQ_I(run("ls --json", out, sizeof(out), err, sizeof(err)), 0);
    char expect[200];
    snprintf(expect, sizeof(expect), "{\"pid\":%d,\"alive\":true,", (int)child);
    CHECK(strncmp(out, expect, strlen(expect)) == 0);
    CHECK(strstr(out, "\"state\":\"started\",\"mode\":\"flight\",\"threads\":3,"
                      "\"rings\":6,") != NULL);
    out_path(rec, sizeof(rec), "live.rec");
    snprintf(args, sizeof(args), "dump -o '%s' %d", rec, (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    struct stat st;
    CHECK_EQ_I(stat(rec, &st), 0);
    CHECK_EQ_U(st.st_mode & 0777, 0600);
    struct decoded d;
    decode(rec, &d);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ_U(d.t[i].events, 1000);
        CHECK_EQ_U(d.t[i].next, 1000);
        CHECK_EQ_U(d.t[i].torn, 0);
        char name[16];
        snprintf(name, sizeof(name), "rec-%d", i);
        CHECK_EQ_S(d.t[i].name, name);
    }
    CHECK_EQ_U(d.lost_total, 0);
    /* print, stats and convert take a pid as they take a file. */
    snprintf(args, sizeof(args), "stats %d", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "\nevents: 3000 (") != NULL);
    CHECK(strstr(out, "lost: overflow 0, discard 0, missing 0\n") != NULL);
    snprintf(args, sizeof(args), "print --csv --event USER_2 %d", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    size_t lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    CHECK_EQ_U(lines, 1 + 1000); /* the CSV header and rec-2's events */
    /* A normal exit removes the session. */
    close(hold);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_I(run("ls", out, sizeof(out), err, sizeof(err)), 0);
    CHECK_EQ_S(out, "");
}

TEST(kill_9_leaves_the_newest_events)
{
    use_own_sessions("kill9");
    srand((unsigned)getpid());
    for (int round = 0; round < 12; round++) {
        int hold;
        pid_t child = start_recorder(UINT64_MAX, FLIGHTREC_MODE_FLIGHT, 1024,
                                     &hold);
        /* Every thread under way, then a moment at random. */
        for (int i = 0; i < THREADS; i++)
            while (atomic_load(&side->done[i]) == 0)
                usleep(100);
        usleep((useconds_t)(rand() % 30000));
        kill(child, SIGKILL);
        int status;
        CHECK_EQ_I(waitpid(child, &status, 0), child);
        CHECK(WIFSIGNALED(status));
        close(hold);
        char out[4096], err[4096], args[1200], rec[600];
        out_path(rec, sizeof(rec), "dead.rec");
        unlink(rec);
        snprintf(args, sizeof(args), "dump -o '%s' %d", rec, (int)child);
        CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
        struct decoded d;
        decode(rec, &d);
        for (int i = 0; i < THREADS; i++) {
            uint64_t done = atomic_load(&side->done[i]);
            /* The newest events: up to the last one recorded (the side
             * log may lag it by the one in flight), nothing torn or
             * invented, and the rest reported lost. */
            CHECK_EQ_U(d.t[i].torn, 0);
            CHECK(d.t[i].next == done || d.t[i].next == done + 1);
            CHECK(d.t[i].events > 0);
            CHECK_EQ_U(d.t[i].events + d.t[i].lost, d.t[i].next);
        }
        snprintf(args, sizeof(args), "rm %d", (int)child);
        CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
        munmap(side, sizeof(*side));
    }
}

TEST(stream_delivers_or_counts_every_event)
{
    use_own_sessions("stream");
    int hold;
    /* Discard mode with small rings: the consumer outside cannot keep up
     * all the time, and what it misses is counted. */
    pid_t child = start_recorder(200000, FLIGHTREC_MODE_DISCARD, 1024, &hold);
    /* The session exists once a thread has recorded (the first event
     * creates the region at the latest): a consumer started earlier finds
     * no session. */
    for (int i = 0; i < 20000 && atomic_load(&side->done[0]) == 0; i++)
        usleep(1000);
    CHECK(atomic_load(&side->done[0]) != 0);
    char rec[600], cmd[1400];
    out_path(rec, sizeof(rec), "stream.rec");
    snprintf(cmd, sizeof(cmd), "%s stream -o '%s' %d", FLIGHTREC_BIN, rec,
             (int)child);
    FILE *consumer = popen(cmd, "r");
    CHECK(consumer != NULL);
    wait_ready();
    /* The consumer has the session before the process may go (a session
     * gone before it looked is "no session"). */
    char args[100], out[4096], err[4096];
    snprintf(args, sizeof(args), "ctl %d", (int)child);
    for (int i = 0; i < 1000; i++) {
        CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
        if (strstr(out, "consumer    process ") != NULL)
            break;
        usleep(5000);
    }
    CHECK(strstr(out, "consumer    process ") != NULL);
    close(hold);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK_EQ_I(pclose(consumer), 0); /* it ends when the process does */
    struct decoded d;
    decode(rec, &d);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ_U(d.t[i].torn, 0);
        CHECK(d.t[i].events > 0);
        CHECK_EQ_U(d.t[i].events + d.t[i].lost, 200000);
    }
}

TEST(one_consumer_at_a_time)
{
    use_own_sessions("consumers");
    int hold;
    pid_t child = start_recorder(10, FLIGHTREC_MODE_FLIGHT, 1024, &hold);
    wait_ready();
    char first_out[600];
    out_path(first_out, sizeof(first_out), "first.rec");
    pid_t first = fork();
    if (first == 0) {
        char pid_text[16];
        snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
        execl(FLIGHTREC_BIN, "flightrec", "stream", "-o", first_out, pid_text,
              (char *)NULL);
        _exit(127);
    }
    usleep(300000);
    char out[4096], err[4096], args[1200], second[600];
    out_path(second, sizeof(second), "second.rec");
    snprintf(args, sizeof(args), "stream -o '%s' %d", second, (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    char expect[200];
    snprintf(expect, sizeof(expect),
             "flightrec stream: session of process %d is already consumed by "
             "process %d\n",
             (int)child, (int)first);
    CHECK_EQ_S(err, expect);
    CHECK(access(second, F_OK) != 0); /* nothing left behind */
    /* The first consumer dies: its claim goes with it. */
    kill(first, SIGKILL);
    waitpid(first, NULL, 0);
    pid_t third = fork();
    if (third == 0) {
        char pid_text[16];
        snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
        execl(FLIGHTREC_BIN, "flightrec", "stream", "-o", second, pid_text,
              (char *)NULL);
        _exit(127);
    }
    usleep(300000);
    close(hold);
    waitpid(child, NULL, 0);
    int status;
    CHECK_EQ_I(waitpid(third, &status, 0), third);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* It had the claim, and wrote a whole stream (the first consumer took
     * the events with it). */
    struct decoded d;
    decode(second, &d);
}

/* A dead process's session file, for the cases that damage it. */
static void dead_session(char *path, size_t size, pid_t *pid)
{
    int hold;
    pid_t child = start_recorder(100, FLIGHTREC_MODE_FLIGHT, 1024, &hold);
    wait_ready();
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(hold);
    *pid = child;
    char out[4096], err[4096], args[64];
    snprintf(args, sizeof(args), "ls --json");
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    char *file = strstr(out, "\"file\":\"");
    CHECK(file != NULL);
    file += 8;
    size_t n = strcspn(file, "\"");
    CHECK(n < size);
    memcpy(path, file, n);
    path[n] = '\0';
}

TEST(damaged_and_foreign_session_files)
{
    use_own_sessions("damaged");
    char path[600], out[4096], err[4096], args[1400];
    pid_t pid;
    dead_session(path, sizeof(path), &pid);
    char copy[700];
    snprintf(copy, sizeof(copy), "%s/copy.region", scratch);
    char cmd[1500];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path, copy);
    CHECK_EQ_I(system(cmd), 0);

    /* Truncated. */
    struct stat st;
    CHECK_EQ_I(stat(copy, &st), 0);
    CHECK_EQ_I(truncate(copy, st.st_size / 2), 0);
    snprintf(args, sizeof(args), "dump -o '%s/x.rec' '%s'", scratch, copy);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    CHECK(strstr(err, "region truncated") != NULL);
    /* Not a region. */
    int fd = open(copy, O_WRONLY);
    CHECK_EQ_I((int)pwrite(fd, "JUNK", 4, 0), 4);
    close(fd);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    CHECK(strstr(err, "not a flightrec region (magic 0x4b4e554a)") != NULL);
    /* A symbolic link is not followed. */
    char link_path[700];
    snprintf(link_path, sizeof(link_path), "%s/link.region", scratch);
    CHECK_EQ_I(symlink(path, link_path), 0);
    snprintf(args, sizeof(args), "dump -o '%s/x.rec' '%s'", scratch,
             link_path);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    CHECK(strstr(err, "a symbolic link") != NULL);
    snprintf(cmd, sizeof(cmd), "%s/x.rec", scratch);
    CHECK(access(cmd, F_OK) != 0); /* no partial output */
    /* Another user's file: refused, whatever its mode. */
    CHECK_EQ_I(chown(path, 65534, 65534), 0);
    snprintf(args, sizeof(args), "dump -o '%s/x.rec' '%s'", scratch, path);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    CHECK(strstr(err, "belongs to another user: refused") != NULL);
    snprintf(args, sizeof(args), "ctl '%s' stop", path);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    CHECK(strstr(err, "belongs to another user: refused") != NULL);
    CHECK_EQ_I(chown(path, getuid(), getgid()), 0);
    /* A dead process is read, not controlled. */
    snprintf(args, sizeof(args), "ctl '%s' stop", path);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    snprintf(cmd, sizeof(cmd),
             "flightrec ctl: process %d is not running: its session can be "
             "read (flightrec dump) but not controlled\n",
             (int)pid);
    CHECK_EQ_S(err, cmd);
    /* And another user cannot even reach this user's sessions. */
    pid_t other = fork();
    if (other == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        int f = open(path, O_RDONLY);
        _exit(f < 0 && errno == EACCES ? 0 : 4);
    }
    int status;
    CHECK_EQ_I(waitpid(other, &status, 0), other);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    struct stat dir;
    CHECK_EQ_I(stat(session_dir, &dir), 0);
    CHECK_EQ_U(dir.st_mode & 0777, 0700);
    CHECK_EQ_I(stat(path, &st), 0);
    CHECK_EQ_U(st.st_mode & 0777, 0600);
}

TEST(dead_after_pid_reuse)
{
    use_own_sessions("reuse");
    char path[600], out[4096], err[4096];
    pid_t pid;
    dead_session(path, sizeof(path), &pid);
    /* Make the file claim a live pid (this test's) with another start
     * time: a reused pid is no proof of life. */
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    struct flightrec_region_header header;
    CHECK_EQ_I((int)pread(fd, &header, sizeof(header), 0),
               (int)sizeof(header));
    struct flightrec_region_process process;
    off_t at = (off_t)header.process_offset;
    CHECK_EQ_I((int)pread(fd, &process, sizeof(process), at),
               (int)sizeof(process));
    int32_t me = (int32_t)getpid();
    process.pid = me;
    process.start_time += 100000; /* not when this process started */
    CHECK_EQ_I((int)pwrite(fd, &process, sizeof(process), at),
               (int)sizeof(process));
    close(fd);
    CHECK_EQ_I(run("ls --json", out, sizeof(out), err, sizeof(err)), 0);
    char expect[100];
    snprintf(expect, sizeof(expect), "{\"pid\":%d,\"alive\":false,", (int)me);
    CHECK(strncmp(out, expect, strlen(expect)) == 0);
    CHECK_EQ_I(run("rm --dead", out, sizeof(out), err, sizeof(err)), 0);
    char removed[800];
    snprintf(removed, sizeof(removed), "removed %s (process %d)\n", path,
             (int)me);
    CHECK_EQ_S(out, removed);
}

/* A program that died while its session file was still unnamed (before
 * its region header was written) left ".PID-START.new": rm --dead removes
 * it, and keeps a live process's. */
TEST(rm_dead_removes_unnamed_files_of_dead_processes)
{
    use_own_sessions("unnamed");
    char out[4096], err[4096];
    mkdir(session_dir, 0700);
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    CHECK_EQ_I(waitpid(child, NULL, 0), child);
    char dead[700], live[700];
    snprintf(dead, sizeof(dead), "%s/.%d-%llu.new", session_dir, (int)child,
             12345ull);
    snprintf(live, sizeof(live), "%s/.%d-%llu.new", session_dir,
             (int)getpid(),
             (unsigned long long)fr_process_start_time((int32_t)getpid()));
    for (int i = 0; i < 2; i++) {
        int fd = open(i == 0 ? dead : live, O_CREAT | O_WRONLY | O_EXCL, 0600);
        CHECK(fd >= 0);
        close(fd);
    }
    CHECK_EQ_I(run("rm --dead", out, sizeof(out), err, sizeof(err)), 0);
    CHECK_EQ_S(err, "");
    struct stat st;
    CHECK(stat(dead, &st) != 0 && errno == ENOENT);
    CHECK_EQ_I(stat(live, &st), 0);
    unlink(live);
}

TEST(full_file_system_gives_private_memory)
{
    use_own_sessions("full");
    FILE *file = tmpfile();
    int err_pipe[2];
    CHECK_EQ_I(pipe(err_pipe), 0);
    pid_t child = fork();
    if (child == 0) {
        dup2(err_pipe[1], 2);
        signal(SIGXFSZ, SIG_IGN);
        /* The file system "fills up" at 4 KiB: no room for a region. */
        struct rlimit small = { 4096, 4096 };
        setrlimit(RLIMIT_FSIZE, &small);
        flightrec_produce(FLIGHTREC_USER(1), 42);
        _exit(flightrec_dump(fileno(file)) == 0 ? 0 : 5);
    }
    close(err_pipe[1]);
    char message[600];
    ssize_t n = read(err_pipe[0], message, sizeof(message) - 1);
    close(err_pipe[0]);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(n > 0);
    message[n] = '\0';
    CHECK(strstr(message, "flightrec: cannot reserve ") != NULL);
    CHECK(strstr(message, "; recording into private memory\n") != NULL);
    /* No session was left, and the recording happened anyway. */
    char out[4096], err[4096];
    CHECK_EQ_I(run("ls", out, sizeof(out), err, sizeof(err)), 0);
    CHECK_EQ_S(out, "");
    size_t len;
    unsigned char *bytes = sp_read_fd(fileno(file), &len);
    struct sp_stream s;
    sp_parse(&s, bytes, len);
    CHECK_EQ_U(s.chunk_count, 2);
    CHECK_EQ_U(s.chunks[0].count + s.chunks[1].count, 3); /* pair + 42 */
    sp_free(&s);
    free(bytes);
    fclose(file);
}

/*=====   flightrec ctl   =====*/

/* A process whose threads record without end: thread i records USER(i)
 * and then USER(5) ("other_event") with the same sequence number, and
 * notes how far it got; thread 0 also notes what the API says. */
struct loop_log {
    _Atomic uint64_t done[THREADS];
    _Atomic int32_t tid[THREADS];
    _Atomic int api_running;
    _Atomic int api_filter_other;   /* flightrec_filter_get(USER(5)) */
    _Atomic int api_filter_own;     /* flightrec_filter_get(USER(0)) */
    /* 1: thread 0 enables USER(1) itself; 2: done; 3: it names USER(6)
     * "late_event" and USER(7) "kept_event"; 4: done */
    _Atomic int command;
    _Atomic int api_filter_late;    /* flightrec_filter_get(USER(6)) */
    _Atomic int api_filter_kept;    /* flightrec_filter_get(USER(7)) */
    _Atomic int stop;
};

static struct loop_log *loop;

#define OTHER_EVENT FLIGHTREC_USER(5)

static void *looper(void *arg)
{
    uintptr_t index = (uintptr_t)arg;
    atomic_store(&loop->tid[index], (int32_t)gettid());
    for (uint64_t i = 0; !atomic_load(&loop->stop); i++) {
        flightrec_produce(FLIGHTREC_USER(index), (uintptr_t)i);
        flightrec_produce(OTHER_EVENT, (uintptr_t)i);
        atomic_store(&loop->done[index], i + 1);
        if (index == 0) {
            atomic_store(&loop->api_running, flightrec_is_running());
            atomic_store(&loop->api_filter_other,
                         flightrec_filter_get(OTHER_EVENT));
            atomic_store(&loop->api_filter_own,
                         flightrec_filter_get(FLIGHTREC_USER(0)));
            if (atomic_load(&loop->command) == 1) {
                flightrec_filter_set(FLIGHTREC_USER(1), 1);
                atomic_store(&loop->command, 2);
            }
            if (atomic_load(&loop->command) == 3) {
                flightrec_event_set_name(FLIGHTREC_USER(6), "late_event");
                flightrec_event_set_name(FLIGHTREC_USER(7), "kept_event");
                atomic_store(&loop->api_filter_late,
                             flightrec_filter_get(FLIGHTREC_USER(6)));
                atomic_store(&loop->api_filter_kept,
                             flightrec_filter_get(FLIGHTREC_USER(7)));
                atomic_store(&loop->command, 4);
            }
        }
        usleep(200);
    }
    return NULL;
}

static pid_t start_looper(uint32_t items)
{
    loop = mmap(NULL, sizeof(*loop), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(loop != MAP_FAILED);
    memset(loop, 0, sizeof(*loop));
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        /* A failed check must not leave it looping. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        struct flightrec_config config;
        flightrec_config_init(&config);
        config.items_per_ring = items;
        if (flightrec_setup(&config) != 0 ||
            flightrec_event_set_name(OTHER_EVENT, "other_event") != 0)
            _exit(2);
        pthread_t t[THREADS];
        for (uintptr_t i = 0; i < THREADS; i++)
            pthread_create(&t[i], NULL, looper, (void *)i);
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
        exit(0);
    }
    for (int i = 0; i < 20000; i++) {
        int ready = 1;
        for (int t = 0; t < THREADS; t++)
            ready &= atomic_load(&loop->done[t]) >= 20;
        if (ready)
            return child;
        usleep(1000);
    }
    TEST_FAIL("the looping recorder did not start");
    return child;
}

/* Waits until every thread got @more iterations past where it was. */
static void loop_advance(uint64_t more)
{
    uint64_t from[THREADS];
    for (int t = 0; t < THREADS; t++)
        from[t] = atomic_load(&loop->done[t]);
    for (int i = 0; i < 20000; i++) {
        int there = 1;
        for (int t = 0; t < THREADS; t++)
            there &= atomic_load(&loop->done[t]) >= from[t] + more;
        if (there)
            return;
        usleep(1000);
    }
    TEST_FAIL("the recorder's threads stopped looping");
}

static void stop_looper(pid_t child)
{
    atomic_store(&loop->stop, 1);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Per thread of the looper: the events of a dump. */
struct loop_seen {
    uint64_t own, own_after, other, other_after, own_max, other_max;
    uint64_t duplicates, discarded;
    uint64_t first_seen;    /* deliveries of sequence number 0 */
    int any_own;
};

struct loop_decoded {
    struct loop_seen t[THREADS];
    uint64_t after[THREADS];  /* sequence numbers above this are "after" */
};

static int loop_thread(const struct flightrec_record *rec)
{
    for (int t = 0; t < THREADS; t++)
        if (rec->ring_info != NULL &&
            rec->ring_info->thread_id == atomic_load(&loop->tid[t]))
            return t;
    return -1;
}

static int on_loop_record(const struct flightrec_record *rec, void *arg)
{
    struct loop_decoded *d = arg;
    int t = loop_thread(rec);
    if (t < 0)
        return 0;
    struct loop_seen *s = &d->t[t];
    if (rec->type == FLIGHTREC_RECORD_LOSS) {
        if (rec->loss_kind == FLIGHTREC_LOSS_DISCARD)
            s->discarded += rec->loss_count;
        return 0;
    }
    if (rec->type != FLIGHTREC_RECORD_EVENT)
        return 0;
    uint64_t seq = rec->data;
    if (rec->event == FLIGHTREC_USER((unsigned)t)) {
        if (s->any_own && seq <= s->own_max)
            s->duplicates++; /* delivered again */
        s->any_own = 1;
        s->first_seen += seq == 0;
        s->own++;
        s->own_after += seq > d->after[t];
        if (seq > s->own_max)
            s->own_max = seq;
    } else if (rec->event == OTHER_EVENT) {
        s->other++;
        s->other_after += seq > d->after[t];
        if (seq > s->other_max)
            s->other_max = seq;
    }
    return 0;
}

static void loop_decode(const char *path, struct loop_decoded *d,
                        const uint64_t *after)
{
    memset(d, 0, sizeof(*d));
    for (int t = 0; t < THREADS; t++)
        d->after[t] = after != NULL ? after[t] : UINT64_MAX;
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    size_t len;
    unsigned char *bytes = sp_read_fd(fd, &len);
    close(fd);
    /* Ring order, not time order: the sequence numbers tell repeats. */
    struct flightrec_client_options options = {
        .on_record = on_loop_record, .arg = d,
    };
    flightrec_client *client;
    CHECK_EQ_I(flightrec_client_create(&client, &options), 0);
    CHECK_EQ_I(flightrec_client_feed(client, bytes, len), 0);
    CHECK_EQ_I(flightrec_client_finish(client), 0);
    flightrec_client_destroy(client);
    free(bytes);
}

static void dump_to(pid_t pid, const char *name, char *path, size_t size)
{
    char args[1400], err[4096];
    out_path(path, size, name);
    unlink(path);
    snprintf(args, sizeof(args), "dump -o '%s' %d", path, (int)pid);
    CHECK_EQ_I(run(args, NULL, 0, err, sizeof(err)), 0);
    /* At most the note that the process had not calibrated its counter
     * yet (its first 20 ms). */
    if (err[0] != '\0')
        CHECK(strncmp(err, "flightrec dump: the process had not calibrated",
                      46) == 0);
}

static void ctl(pid_t pid, const char *actions)
{
    char args[1400], out[4096], err[4096];
    snprintf(args, sizeof(args), "ctl %d %s", (int)pid, actions);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK_EQ_S(out, "");
    CHECK_EQ_S(err, "");
}

static void snapshot_done(uint64_t *done)
{
    for (int t = 0; t < THREADS; t++)
        done[t] = atomic_load(&loop->done[t]);
}

TEST(ctl_stop_start_and_filter_reach_every_thread)
{
    use_own_sessions("ctl");
    pid_t child = start_looper(4096);
    char path[600], out[4096], err[4096], args[200], expect[600];

    /* Stop: once ctl returns, no thread records anything newer; each
     * thread goes on looping, and the program's API says stopped. */
    ctl(child, "stop");
    uint64_t at_stop[THREADS];
    snapshot_done(at_stop);
    loop_advance(50);
    CHECK_EQ_I(atomic_load(&loop->api_running), 0);
    struct loop_decoded d;
    dump_to(child, "stopped.rec", path, sizeof(path));
    loop_decode(path, &d, at_stop);
    for (int t = 0; t < THREADS; t++) {
        CHECK(d.t[t].own >= 19);
        CHECK_EQ_U(d.t[t].own_after, 0);
        CHECK_EQ_U(d.t[t].other_after, 0);
    }
    snprintf(args, sizeof(args), "ctl %d", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    snprintf(expect, sizeof(expect),
             "process     %d (test-cli-sessio), alive\n"
             "state       stopped\n"
             "mode        flight\n"
             "filter      all\n",
             (int)child);
    CHECK(strncmp(out, expect, strlen(expect)) == 0);

    /* Start with a filter by name: from then on every thread records its
     * other_event and nothing else. */
    ctl(child, "start filter -all,+other_*");
    uint64_t at_start[THREADS];
    snapshot_done(at_start);
    loop_advance(50);
    CHECK_EQ_I(atomic_load(&loop->api_running), 1);
    CHECK_EQ_I(atomic_load(&loop->api_filter_other), 1);
    CHECK_EQ_I(atomic_load(&loop->api_filter_own), 0);
    dump_to(child, "filtered.rec", path, sizeof(path));
    loop_decode(path, &d, at_start);
    for (int t = 0; t < THREADS; t++) {
        CHECK_EQ_U(d.t[t].own_after, 0);
        CHECK(d.t[t].other_after >= 49);
    }
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "state       started\n") != NULL);
    CHECK(strstr(out, "filter      -all,+517\n") != NULL);
    /* The program's own change on top of ctl's keeps ctl's. */
    atomic_store(&loop->command, 1);
    for (int i = 0; i < 5000 && atomic_load(&loop->command) != 2; i++)
        usleep(1000);
    CHECK_EQ_I(atomic_load(&loop->command), 2);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "filter      -all,+513,+517\n") != NULL);

    /* Everything again: each thread's own events come back. */
    ctl(child, "filter all");
    uint64_t at_all[THREADS];
    snapshot_done(at_all);
    loop_advance(50);
    dump_to(child, "all.rec", path, sizeof(path));
    loop_decode(path, &d, at_all);
    for (int t = 0; t < THREADS; t++) {
        CHECK(d.t[t].own_after >= 49);
        CHECK(d.t[t].other_after >= 49);
    }

    /* A glob that matches no event yet judges the events the program
     * names later, after what was remembered before ("all" replaced the
     * earlier specs). */
    snprintf(args, sizeof(args), "ctl %d filter -late_*", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK_EQ_S(out, "");
    CHECK_EQ_S(err, "flightrec ctl: note: a name in '-late_*' matches no "
                    "event yet; it applies to events named later\n");
    snprintf(args, sizeof(args), "ctl %d", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "filter      all\nlater names all,-late_*\n") != NULL);
    atomic_store(&loop->command, 3);
    for (int i = 0; i < 5000 && atomic_load(&loop->command) != 4; i++)
        usleep(1000);
    CHECK_EQ_I(atomic_load(&loop->command), 4);
    CHECK_EQ_I(atomic_load(&loop->api_filter_late), 0);
    CHECK_EQ_I(atomic_load(&loop->api_filter_kept), 1);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "filter      all,-518\n") != NULL);
    ctl(child, "filter all");

    /* Refusals change nothing and say why. */
    snprintf(args, sizeof(args), "ctl %d filter 7-3", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    CHECK_EQ_S(err, "flightrec ctl: bad filter term at byte 1 of '7-3' (a "
                    "bad range or a stray comma)\n");
    snprintf(args, sizeof(args), "ctl %d mode sideways", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 2);
    CHECK(strncmp(err, "flightrec ctl: unknown mode 'sideways' (flight or "
                       "discard)\n", 58) == 0);
    snprintf(args, sizeof(args), "ctl %d", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "filter      all\n") != NULL);
    stop_looper(child);
}

/* The session file of @pid, from ls --json. */
static void session_file_of(pid_t pid, char *path, size_t size)
{
    char out[8192], err[4096], key[64];
    CHECK_EQ_I(run("ls --json", out, sizeof(out), err, sizeof(err)), 0);
    snprintf(key, sizeof(key), "\"pid\":%d,", (int)pid);
    char *line = strstr(out, key);
    CHECK(line != NULL);
    char *file = strstr(line, "\"file\":\"");
    CHECK(file != NULL);
    file += 8;
    size_t n = strcspn(file, "\"");
    CHECK(n < size);
    memcpy(path, file, n);
    path[n] = '\0';
}

/* Plants a control-lock claim (pid << 42 | start time) in a session. */
static void plant_lock(const char *path, uint64_t claim)
{
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    struct flightrec_region_header h;
    CHECK_EQ_I((int)pread(fd, &h, sizeof(h), 0), (int)sizeof(h));
    off_t at = (off_t)h.control_offset +
               (off_t)offsetof(struct flightrec_region_control, lock);
    CHECK_EQ_I((int)pwrite(fd, &claim, sizeof(claim), at), (int)sizeof(claim));
    close(fd);
}

static uint64_t start_time_of(pid_t pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    CHECK(n > 0);
    text[n] = '\0';
    char *p = strrchr(text, ')');
    CHECK(p != NULL);
    unsigned long long start = 0;
    /* Field 22; field 3 follows the ')'. */
    CHECK_EQ_I(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                             "%*u %*u %*d %*d %*d %*d %*d %*d %llu",
                      &start),
               1);
    return start;
}

static uint64_t claim_of(pid_t pid, uint64_t start)
{
    return (uint64_t)(uint32_t)pid << 42 | (start & (((uint64_t)1 << 42) - 1));
}

/* A ctl killed while it wrote the remembered specs (its claim still in the
 * lock, the length word cleared, the new spec's first bytes over the old
 * ones: "-late_*" over "+late_*,+aaa_*") leaves specs that still end in a
 * NUL: the program ignores them for the names it defines later, `ctl`
 * shows them as torn, and the next ctl replaces them (said once). */
TEST(ctl_torn_remembered_specs_are_ignored)
{
    use_own_sessions("ctl-torn");
    pid_t child = start_looper(1024);
    char path[600], out[4096], err[4096], args[200];
    session_file_of(child, path, sizeof(path));
    snprintf(args, sizeof(args), "ctl %d filter +late_*,+aaa_*", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    snprintf(args, sizeof(args), "ctl %d", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "later names +late_*,+aaa_*\n") != NULL);

    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    CHECK_EQ_I(waitpid(gone, NULL, 0), gone);
    plant_lock(path, claim_of(gone, 12345));
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    struct flightrec_region_header h;
    CHECK_EQ_I((int)pread(fd, &h, sizeof(h), 0), (int)sizeof(h));
    const uint32_t cleared = 0;
    off_t at = (off_t)h.control_offset +
               (off_t)offsetof(struct flightrec_region_control,
                               remembered_length);
    CHECK_EQ_I((int)pwrite(fd, &cleared, sizeof(cleared), at),
               (int)sizeof(cleared));
    at = (off_t)h.control_offset +
         (off_t)offsetof(struct flightrec_region_control, remembered);
    CHECK_EQ_I((int)pwrite(fd, "-late_*", 7, at), 7);
    close(fd);

    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "later names none: the specs kept for them were torn "
                      "(a flightrec ctl died while writing them)\n") != NULL);
    CHECK(strstr(out, "late_*") == NULL);
    /* The program names late_event: nothing judges it, it stays on. */
    atomic_store(&loop->command, 3);
    for (int i = 0; i < 5000 && atomic_load(&loop->command) != 4; i++)
        usleep(1000);
    CHECK_EQ_I(atomic_load(&loop->command), 4);
    CHECK_EQ_I(atomic_load(&loop->api_filter_late), 1);
    CHECK_EQ_I(atomic_load(&loop->api_filter_kept), 1);

    /* The next ctl takes the dead claim over and writes whole specs. */
    snprintf(args, sizeof(args), "ctl %d filter -kept_*", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK_EQ_S(err, "flightrec ctl: note: the filter specs kept for events "
                    "named later were torn (a flightrec ctl died while "
                    "writing them); they are dropped\n");
    snprintf(args, sizeof(args), "ctl %d", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "later names -kept_*\n") != NULL);
    CHECK_EQ_S(err, "");
    stop_looper(child);
}

TEST(ctl_lock_of_a_dead_or_stuck_holder)
{
    use_own_sessions("ctl-lock");
    pid_t child = start_looper(1024);
    char path[600], out[4096], err[4096], args[200], expect[300];
    session_file_of(child, path, sizeof(path));
    snprintf(args, sizeof(args), "ctl %d stop", (int)child);
    /* A holder that died (reaped): its claim is taken over. */
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    CHECK_EQ_I(waitpid(gone, NULL, 0), gone);
    plant_lock(path, claim_of(gone, 12345));
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK_EQ_S(err, "");
    /* A zombie holds nothing either. */
    int fds[2];
    CHECK_EQ_I(pipe(fds), 0);
    pid_t zombie = fork();
    if (zombie == 0) {
        char c;
        close(fds[1]);
        (void)!read(fds[0], &c, 1);
        _exit(0);
    }
    close(fds[0]);
    uint64_t zombie_start = start_time_of(zombie);
    close(fds[1]); /* it exits, unreaped */
    for (int i = 0; i < 2000; i++) {
        char stat_path[64], text[256];
        snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", (int)zombie);
        int fd = open(stat_path, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : 0;
        if (fd >= 0)
            close(fd);
        text[n > 0 ? n : 0] = '\0';
        char *p = strrchr(text, ')');
        if (p != NULL && p[2] == 'Z')
            break;
        usleep(1000);
    }
    plant_lock(path, claim_of(zombie, zombie_start));
    snprintf(args, sizeof(args), "ctl %d start", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK_EQ_S(err, "");
    CHECK_EQ_I(waitpid(zombie, NULL, 0), zombie);
    /* A live holder that keeps it (a stopped ctl): refused after a while,
     * nothing changed, and the program's own calls go on. */
    plant_lock(path, claim_of(getpid(), start_time_of(getpid())));
    snprintf(args, sizeof(args), "ctl %d stop", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    snprintf(expect, sizeof(expect),
             "flightrec ctl: the control lock of process %d's session is "
             "held by process %d (stopped?): nothing changed\n",
             (int)child, (int)getpid());
    CHECK_EQ_S(err, expect);
    loop_advance(20);
    CHECK_EQ_I(atomic_load(&loop->api_running), 1);
    plant_lock(path, 0);
    stop_looper(child);
}

/* Whether process @pid runs @program (its /proc comm) within 5 s. */
static int wait_for_program(pid_t pid, const char *program)
{
    char want[32];
    snprintf(want, sizeof(want), "%s\n", program);
    for (int i = 0; i < 2500; i++) {
        char comm_path[64], comm[32] = "";
        snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", (int)pid);
        FILE *f = fopen(comm_path, "r");
        if (f != NULL) {
            if (fgets(comm, sizeof(comm), f) == NULL)
                comm[0] = '\0';
            fclose(f);
        }
        if (strcmp(comm, want) == 0)
            return 1;
        usleep(2000);
    }
    return 0;
}

/* The text of file @path into @text (cut to @size - 1 bytes). */
static void read_file(const char *path, char *text, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(text, 1, size - 1, f) : 0;
    text[n] = '\0';
    if (f != NULL)
        fclose(f);
}

/* The event and data columns (4th, 6th) of print --csv's @csv, a line
 * each, into @out. */
static void event_and_data(const char *csv, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *line = csv; *line != '\0';) {
        const char *end = strchr(line, '\n');
        if (end == NULL)
            end = line + strlen(line);
        const char *field[6] = { line };
        int n = 1;
        for (const char *p = line; p < end && n < 6; p++)
            if (*p == ',')
                field[n++] = p + 1;
        if (n == 6) {
            int event_len = (int)strcspn(field[3], ",");
            int data_len = (int)strcspn(field[5], ",\n");
            int w = snprintf(out + len, size - len, "%.*s,%.*s\n", event_len,
                             field[3], data_len, field[5]);
            if (w > 0 && (size_t)w < size - len)
                len += (size_t)w;
        }
        line = *end != '\0' ? end + 1 : end;
    }
}

/* The standard error of the last start_execer() child. */
static char execer_err[700];

/* Forks a process that records USER(7) 100..102, then waits for a byte on
 * the pipe whose write end is *@go and execs @program (with @arg); its
 * standard input is the pipe and its standard error execer_err. */
static pid_t start_execer(int *go, const char *program, const char *arg)
{
    snprintf(execer_err, sizeof(execer_err), "%s/child.err", scratch);
    const char *err_path = execer_err;
    int ready[2], order[2];
    CHECK_EQ_I(pipe(ready), 0);
    CHECK_EQ_I(pipe2(order, O_CLOEXEC), 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(ready[0]);
        for (uintptr_t i = 0; i < 3; i++)
            flightrec_produce(FLIGHTREC_USER(7), 100 + i);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (err < 0 || dup2(err, 2) != 2 || dup2(order[0], 0) != 0)
            _exit(126);
        CHECK_EQ_I((int)write(ready[1], "r", 1), 1);
        char c;
        if (read(0, &c, 1) != 1)
            _exit(125);
        execl(program, program, arg, (char *)NULL);
        _exit(127);
    }
    close(ready[1]);
    close(order[0]);
    char c;
    CHECK_EQ_I((int)read(ready[0], &c, 1), 1);
    close(ready[0]);
    *go = order[1];
    return child;
}

/* A process that called exec records no more into its session, though its
 * pid and start time are the same: ctl says so instead of "succeeding". */
TEST(ctl_after_exec_is_refused)
{
    use_own_sessions("ctl-exec");
    int go;
    pid_t child = start_execer(&go, "/bin/sleep", "30");
    char args[200], out[4096], err[4096], expect[300];
    snprintf(args, sizeof(args), "ctl %d", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    /* Once it runs sleep: refused. */
    CHECK_EQ_I((int)write(go, "x", 1), 1);
    CHECK(wait_for_program(child, "sleep"));
    close(go);
    snprintf(args, sizeof(args), "ctl %d stop", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    snprintf(expect, sizeof(expect),
             "flightrec ctl: process %d no longer records into this session "
             "(it called exec): nothing to control\n",
             (int)child);
    CHECK_EQ_S(err, expect);
    kill(child, SIGKILL);
    CHECK_EQ_I(waitpid(child, NULL, 0), child);
}

/* ls and stream take a process that called exec for dead: it no longer
 * records into its session.  stream delivers what the session holds and
 * ends as for a process that exited (before, it waited for ever). */
TEST(ls_and_stream_after_exec_take_the_process_for_dead)
{
    use_own_sessions("ls-exec");
    int go;
    pid_t child = start_execer(&go, "/bin/sleep", "30");
    CHECK_EQ_I((int)write(go, "x", 1), 1);
    close(go);
    CHECK(wait_for_program(child, "sleep"));
    char out[8192], err[4096], expect[1200];
    CHECK_EQ_I(run("ls --json", out, sizeof(out), err, sizeof(err)), 0);
    snprintf(expect, sizeof(expect), "{\"pid\":%d,\"alive\":false,",
             (int)child);
    CHECK(strncmp(out, expect, strlen(expect)) == 0);
    CHECK_EQ_S(err, "");
    CHECK_EQ_I(run("ls", out, sizeof(out), err, sizeof(err)), 0);
    /* Under the heading line. */
    snprintf(expect, sizeof(expect), "\n%7d dead  started flight ",
             (int)child);
    CHECK(strstr(out, expect) != NULL);
    /* serve has nothing to serve (before, it served it until killed). */
    char args[200];
    snprintf(args, sizeof(args), "serve --listen 127.0.0.1:0 %d", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    snprintf(expect, sizeof(expect),
             "flightrec serve: process %d no longer records into this "
             "session (it called exec): nothing to serve (its last events: "
             "'flightrec dump %d')\n",
             (int)child, (int)child);
    CHECK_EQ_S(err, expect);

    char path[700], cmd[2000];
    snprintf(path, sizeof(path), "%s/exec-stream.rec", scratch);
    /* Killed if it does not end by itself (SIGTERM would end it cleanly). */
    snprintf(cmd, sizeof(cmd), "timeout -s KILL 20 %s stream -o '%s' %d",
             FLIGHTREC_BIN, path, (int)child);
    int status = system(cmd);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    size_t len;
    unsigned char *bytes = sp_read_fd(fd, &len);
    close(fd);
    struct sp_stream s;
    sp_parse(&s, bytes, len);
    size_t seen = 0;
    for (size_t k = 0; k < s.chunk_count; k++)
        for (size_t i = 0; i < s.chunks[k].count; i++) {
            if (s.chunks[k].items[i].event != FLIGHTREC_USER(7))
                continue;
            CHECK_EQ_U(s.chunks[k].items[i].data, 100 + seen);
            seen++;
        }
    CHECK_EQ_U(seen, 3);
    sp_free(&s);
    free(bytes);
    /* rm --dead removes it (before, it kept it as a live process's). */
    char session[800];
    snprintf(session, sizeof(session), "%s/%d-%llu.region", session_dir,
             (int)child, (unsigned long long)start_time_of(child));
    CHECK_EQ_I(run("rm --dead", out, sizeof(out), err, sizeof(err)), 0);
    snprintf(expect, sizeof(expect), "removed %s (process %d)\n", session,
             (int)child);
    CHECK_EQ_S(out, expect);
    CHECK_EQ_S(err, "");
    CHECK(access(session, F_OK) != 0);
    kill(child, SIGKILL);
    CHECK_EQ_I(waitpid(child, NULL, 0), child);
}

/* serve ends the stream of a process that calls exec as of one that
 * exited, and ends itself (before, it served it until killed). */
TEST(serve_ends_when_its_process_calls_exec)
{
    use_own_sessions("serve-exec");
    char serve_err[700];
    snprintf(serve_err, sizeof(serve_err), "%s/serve.err", scratch);
    int go;
    pid_t child = start_execer(&go, "/bin/sleep", "30");
    pid_t server = fork();
    CHECK(server >= 0);
    if (server == 0) {
        int err = open(serve_err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (err < 0 || dup2(err, 2) != 2)
            _exit(126);
        char pid_text[16];
        snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
        execl("/usr/bin/timeout", "timeout", "-s", "KILL", "20",
              FLIGHTREC_BIN, "serve", "--listen", "127.0.0.1:0", pid_text,
              (char *)NULL);
        _exit(127);
    }
    /* Serving, then the exec. */
    int listening = 0;
    for (int i = 0; i < 2500 && !listening; i++) {
        char text[1024];
        read_file(serve_err, text, sizeof(text));
        listening = strstr(text, "listening on 127.0.0.1:") != NULL;
        if (!listening)
            usleep(2000);
    }
    CHECK(listening);
    CHECK_EQ_I((int)write(go, "x", 1), 1);
    CHECK(wait_for_program(child, "sleep"));
    int status;
    CHECK_EQ_I(waitpid(server, &status, 0), server);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    close(go);
    kill(child, SIGKILL);
    CHECK_EQ_I(waitpid(child, NULL, 0), child);
}

/* A process that execs another recording program: the new program gets a
 * session of its own (before: "cannot create ...: File exists", and its
 * rings went to private memory), `flightrec print PID` reads the new one,
 * and the old one is listed dead. */
TEST(exec_into_a_recording_program_gets_its_own_session)
{
    use_own_sessions("exec-rec");
    int go;
    pid_t child = start_execer(&go, SERVE_ENV_TARGET, "5");
    CHECK_EQ_I((int)write(go, "x", 1), 1);
    CHECK(wait_for_program(child, "serve-env-targe"));
    /* serve-env-target records USER(0) 0..4 once a byte comes. */
    CHECK_EQ_I((int)write(go, "x", 1), 1);
    char args[200], out[8192], err[4096], events[8192];
    /* (The warning that the new program has not calibrated its counter
     * yet may come on standard error.) */
    snprintf(args, sizeof(args), "print --csv --event 'USER_*' %d",
             (int)child);
    static const char expect[] = "event,data\nUSER_0,0x0\nUSER_0,0x1\n"
                                 "USER_0,0x2\nUSER_0,0x3\nUSER_0,0x4\n";
    for (int i = 0; i < 1000; i++) {
        CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
        event_and_data(out, events, sizeof(events));
        if (strcmp(events, expect) == 0)
            break;
        usleep(5000);
    }
    CHECK_EQ_S(events, expect);
    char text[1024];
    read_file(execer_err, text, sizeof(text));
    CHECK_EQ_S(text, "");
    /* Both sessions listed: the first program's dead, the new one's
     * alive. */
    CHECK_EQ_I(run("ls --json", out, sizeof(out), err, sizeof(err)), 0);
    char alive[100], dead[100];
    snprintf(alive, sizeof(alive), "{\"pid\":%d,\"alive\":true,", (int)child);
    snprintf(dead, sizeof(dead), "{\"pid\":%d,\"alive\":false,", (int)child);
    char *second = strchr(out, '\n');
    CHECK(second != NULL && strchr(second + 1, '\n') ==
                                out + strlen(out) - 1);
    int alive_first = strncmp(out, alive, strlen(alive)) == 0;
    CHECK(strncmp(alive_first ? second + 1 : out, dead, strlen(dead)) == 0);
    CHECK(strncmp(alive_first ? out : second + 1, alive, strlen(alive)) == 0);
    char second_session[800];
    snprintf(second_session, sizeof(second_session), "%s/%d-%llu-2.region",
             session_dir, (int)child,
             (unsigned long long)start_time_of(child));
    CHECK_EQ_I(access(second_session, F_OK), 0);
    close(go); /* it exits: its session goes, the first one stays */
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(access(second_session, F_OK) != 0);
    /* The first program's events, in the session left. */
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    event_and_data(out, events, sizeof(events));
    CHECK_EQ_S(events, "event,data\nUSER_7,0x64\nUSER_7,0x65\nUSER_7,0x66\n");
}

TEST(ctl_mode_switches_every_ring)
{
    use_own_sessions("ctl-mode");
    pid_t child = start_looper(1024);
    char path[600], out[8192], err[4096], args[200];
    /* The rings wrap in flight mode first (2 events an iteration). */
    loop_advance(1200);
    /* Discard, with nobody reading: the rings are full at once, so from
     * the writer's next slow path on (at most a quarter ring, 128
     * iterations, later) every event is dropped and counted. */
    ctl(child, "mode discard");
    uint64_t at_switch[THREADS];
    snapshot_done(at_switch);
    loop_advance(1200);
    uint64_t before[THREADS];
    snapshot_done(before);
    struct loop_decoded d;
    dump_to(child, "discard.rec", path, sizeof(path));
    loop_decode(path, &d, at_switch);
    for (int t = 0; t < THREADS; t++) {
        CHECK(d.t[t].own_max <= at_switch[t] + 128);
        CHECK(d.t[t].discarded >= 2 * (before[t] - at_switch[t] - 129));
    }
    snprintf(args, sizeof(args), "ls --json");
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
    CHECK(strstr(out, "\"mode\":\"discard\"") != NULL);
    /* Rewind needs flight mode. */
    snprintf(args, sizeof(args), "ctl %d rewind", (int)child);
    CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 1);
    CHECK_EQ_S(err, "flightrec ctl: rewind needs flight mode: in discard "
                    "mode the rings hold nothing the consumer has not "
                    "read\n");
    /* Flight again: the newest events overwrite the oldest. */
    ctl(child, "mode flight");
    loop_advance(1200);
    snapshot_done(before);
    dump_to(child, "flight.rec", path, sizeof(path));
    loop_decode(path, &d, NULL);
    for (int t = 0; t < THREADS; t++)
        CHECK(d.t[t].own_max + 1 >= before[t]);
    stop_looper(child);
}

TEST(ctl_rewind_makes_the_consumer_read_again)
{
    use_own_sessions("ctl-rewind");
    pid_t child = start_looper(4096);
    char stream_out[600];
    out_path(stream_out, sizeof(stream_out), "stream.rec");
    pid_t consumer = fork();
    if (consumer == 0) {
        char pid_text[16];
        snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
        execl(FLIGHTREC_BIN, "flightrec", "stream", "-o", stream_out,
              pid_text, (char *)NULL);
        _exit(127);
    }
    /* The consumer has the session and has read it. */
    char args[200], out[4096], err[4096], expect[100];
    snprintf(args, sizeof(args), "ctl %d", (int)child);
    snprintf(expect, sizeof(expect), "consumer    process %d\n", (int)consumer);
    for (int i = 0; i < 500; i++) {
        CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
        if (strstr(out, expect) != NULL)
            break;
        usleep(10000);
    }
    CHECK(strstr(out, expect) != NULL);
    /* It has written what it read first (every thread's first events)
     * into its temporary file, renamed when it ends. */
    struct stat st;
    char temp[700];
    snprintf(temp, sizeof(temp), "%s.tmp-%d", stream_out, (int)consumer);
    for (int i = 0; i < 500; i++) {
        if (stat(temp, &st) == 0 && st.st_size > 4096)
            break;
        usleep(10000);
    }
    CHECK(st.st_size > 4096);
    loop_advance(100);
    ctl(child, "rewind");
    /* Until the consumer serves it, ctl says so. */
    for (int i = 0; i < 500; i++) {
        CHECK_EQ_I(run(args, out, sizeof(out), err, sizeof(err)), 0);
        if (strstr(out, "rewind      pending") == NULL)
            break;
        usleep(10000);
    }
    CHECK(strstr(out, "rewind      pending") == NULL);
    loop_advance(100);
    stop_looper(child);
    int status;
    CHECK_EQ_I(waitpid(consumer, &status, 0), consumer);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* What the rings held when the consumer served the rewind came again:
     * each thread's sequence numbers go back once. */
    struct loop_decoded d;
    loop_decode(stream_out, &d, NULL);
    for (int t = 0; t < THREADS; t++) {
        /* The first event, read before the rewind and again after it:
         * the ring never wrapped, so the re-read starts there. */
        CHECK_EQ_U(d.t[t].first_seen, 2);
        CHECK(d.t[t].duplicates >= 1);
        CHECK(d.t[t].own >= 220);
    }
}

/* The program grows its session file and then counts the new bytes as
 * used; a consumer that read the file's size just before can find more in
 * use than it mapped.  `flightrec stream` used to stop there with "region
 * truncated"; it reads the file again until the growth is complete. */
TEST(stream_follows_a_region_caught_growing)
{
    use_own_sessions("grow");
    int hold;
    pid_t child = start_recorder(100, FLIGHTREC_MODE_FLIGHT, 1024, &hold);
    wait_ready();
    char out[4096], err[4096];
    CHECK_EQ_I(run("ls --json", out, sizeof(out), err, sizeof(err)), 0);
    char *file = strstr(out, "\"file\":\"");
    CHECK(file != NULL);
    file += 8;
    char path[600];
    size_t n = strcspn(file, "\"");
    CHECK(n < sizeof(path));
    memcpy(path, file, n);
    path[n] = '\0';
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    struct stat st;
    CHECK_EQ_I(fstat(fd, &st), 0);
    unsigned char *base = mmap(NULL, (size_t)st.st_size,
                               PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(base != MAP_FAILED);
    struct flightrec_region_header *h = (void *)base;
    const struct flightrec_region_control *c =
        (const void *)(base + h->control_offset);

    char rec[600];
    out_path(rec, sizeof(rec), "grow.rec");
    pid_t consumer = fork();
    CHECK(consumer >= 0);
    if (consumer == 0) {
        char pid_text[16];
        snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
        execl(FLIGHTREC_BIN, "flightrec", "stream", "-o", rec, pid_text,
              (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 20000 && atomic_load(&c->consumer_pid) != consumer;
         i++)
        usleep(1000);
    CHECK_EQ_I(atomic_load(&c->consumer_pid), consumer);
    /* Caught between the two steps: the file has grown by 64 KiB, the
     * region counts 128 KiB more in use.  The consumer sees it at its next
     * pass (10 ms apart at most). */
    uint64_t used = atomic_load(&h->used);
    CHECK_EQ_U(used, (uint64_t)st.st_size);
    CHECK_EQ_I(kill(consumer, SIGSTOP), 0);
    CHECK_EQ_I(ftruncate(fd, st.st_size + (64 << 10)), 0);
    atomic_store(&h->used, used + (128 << 10));
    CHECK_EQ_I(kill(consumer, SIGCONT), 0);
    usleep(100000);
    CHECK_EQ_I(ftruncate(fd, st.st_size + (128 << 10)), 0);
    usleep(100000);
    /* The consumer is still there, and streams to the end. */
    CHECK_EQ_I(waitpid(consumer, NULL, WNOHANG), 0);
    close(hold);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_I(waitpid(consumer, &status, 0), consumer);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    struct decoded d;
    decode(rec, &d);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ_U(d.t[i].events, 100);
        CHECK_EQ_U(d.t[i].torn, 0);
    }
    CHECK_EQ_U(d.lost_total, 0);
    munmap(base, (size_t)st.st_size);
    close(fd);
}

TEST_MAIN()
