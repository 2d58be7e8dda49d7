/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* renameat2() */
#endif
#include "session.h"

#include "region-check.h"

#include <flightrec/region.h>

#include <dirent.h>
#include <sched.h>
#include <time.h>
#include <signal.h>
#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* "BEFORE PATH AFTER: why" into @message; returns @rc. */
static int say(char *message, size_t size, int rc, const char *before,
               const char *path, const char *after)
{
    if (message != NULL && size != 0)
        snprintf(message, size, "%s%s%s: %s", before, path, after,
                 strerror(-rc));
    return rc;
}

int fr_session_dir(char *path, size_t size, int create, char *message,
                   size_t message_size)
{
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    int n;
    if (runtime != NULL && runtime[0] == '/')
        n = snprintf(path, size, "%s/flightrec", runtime);
    else
        n = snprintf(path, size, "/dev/shm/flightrec-%u",
                     (unsigned)getuid());
    if (n < 0 || (size_t)n >= size)
        return say(message, message_size, -ENAMETOOLONG,
                   "session directory ", "(too long)", "");
    if (create && mkdir(path, 0700) != 0 && errno != EEXIST)
        return say(message, message_size, -errno,
                   "cannot create session directory ", path, "");
    struct stat st;
    if (lstat(path, &st) != 0)
        return say(message, message_size, -errno, "session directory ", path,
                   "");
    if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
        return say(message, message_size, -ENOTDIR, "session directory ",
                   path, " is not a directory");
    if (st.st_uid != getuid())
        return say(message, message_size, -EPERM, "session directory ",
                   path, " belongs to another user");
    if ((st.st_mode & 0077) != 0)
        return say(message, message_size, -EPERM, "session directory ",
                   path, " is open to other users (it must be 0700)");
    return 0;
}

int fr_session_create(char *path, size_t size, const char *dir, int32_t pid,
                      uint64_t start_time)
{
    int len = snprintf(path, size, "%s/.%d-%llu.new", dir, (int)pid,
                       (unsigned long long)start_time);
    if (len < 0 || (size_t)len >= size)
        return -ENAMETOOLONG;
    for (int attempt = 0;; attempt++) {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0600);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST || attempt > 0)
            return -errno;
        /* Left by an earlier program of this process (it called exec)
         * that died before naming it: it never held a region. */
        unlink(path);
    }
}

int fr_session_publish(char *path, size_t size, const char *dir, int32_t pid,
                       uint64_t start_time)
{
    char hidden[512], name[512];
    if (snprintf(hidden, sizeof(hidden), "%s", path) >= (int)sizeof(hidden))
        return -ENAMETOOLONG;
    /* An exec keeps the pid and start time but not the atexit that would
     * have removed the earlier program's file: that one stays, for a dump
     * (it is dead), and this program takes the next number.  @path names
     * the hidden file until the file has its name: the atexit removal
     * (port-linux.c) unlinks @path, and must never take an earlier
     * program's file. */
    for (unsigned n = 1; n <= 10000; n++) {
        int len = n == 1 ? snprintf(name, sizeof(name), "%s/%d-%llu%s", dir,
                                    (int)pid, (unsigned long long)start_time,
                                    FR_SESSION_SUFFIX)
                         : snprintf(name, sizeof(name), "%s/%d-%llu-%u%s",
                                    dir, (int)pid,
                                    (unsigned long long)start_time, n,
                                    FR_SESSION_SUFFIX);
        if (len < 0 || (size_t)len >= sizeof(name) || (size_t)len >= size)
            return -ENAMETOOLONG;
        /* Renamed, not linked where the file system can refuse to replace
         * a name: the mapping keeps its name (a linked file's mapping
         * shows the hidden name as deleted in /proc/PID/maps and lsof). */
        int rc = -EINVAL;
#ifdef RENAME_NOREPLACE
        rc = renameat2(AT_FDCWD, hidden, AT_FDCWD, name, RENAME_NOREPLACE) == 0
                 ? 0 : -errno;
        if (rc == 0) {
            snprintf(path, size, "%s", name);
            return 0;
        }
#endif
        /* A hard link, unlike rename(), fails on a name that exists. */
        if (rc == -EINVAL || rc == -ENOSYS || rc == -EOPNOTSUPP)
            rc = link(hidden, name) == 0 ? 0 : -errno;
        if (rc == -EPERM || rc == -EOPNOTSUPP || rc == -ENOSYS) {
            /* No hard links on this file system.  Only programs of this
             * process make names of its pid and start time, and the
             * earlier ones are gone: a name found free stays free. */
            struct stat st;
            if (lstat(name, &st) == 0)
                continue;
            if (errno != ENOENT)
                return -errno;
            if (rename(hidden, name) != 0)
                return -errno;
            snprintf(path, size, "%s", name);
            return 0;
        }
        if (rc == 0) {
            unlink(hidden);
            snprintf(path, size, "%s", name);
            return 0;
        }
        if (rc != -EEXIST)
            return rc;
    }
    return -EEXIST;
}

uint64_t fr_process_start_time(int32_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: fields count from
     * the last ')'.  Field 22 is the start time; after ')' come 3..52. */
    char *p = strrchr(buf, ')');
    if (p == NULL)
        return 0;
    p++;
    for (int field = 3; field < 22; field++) {
        p = strchr(p + 1, ' ');
        if (p == NULL)
            return 0;
    }
    return strtoull(p + 1, NULL, 10);
}


static int fail(char *message, size_t size, const char *what,
                const char *path, const char *why)
{
    if (message != NULL && size != 0)
        snprintf(message, size, "%s'%s'%s%s", what, path, why[0] ? ": " : "",
                 why);
    return -1;
}

static int map_file(struct fr_session *s, size_t size, char *message,
                    size_t message_size)
{
    int prot = PROT_READ | (s->writable ? PROT_WRITE : 0);
    void *at = mmap(NULL, size, prot, MAP_SHARED, s->fd, 0);
    if (at == MAP_FAILED)
        return fail(message, message_size, "cannot map ", s->path,
                    strerror(errno));
    s->base = at;
    s->size = size;
    return 0;
}

int fr_session_open(struct fr_session *s, const char *path, int writable,
                    char *message, size_t message_size)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->writable = writable;
    s->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW |
                           O_CLOEXEC | O_NONBLOCK);
    if (s->fd < 0)
        return fail(message, message_size, "cannot open ", path,
                    errno == ELOOP ? "a symbolic link" : strerror(errno));
    struct stat st;
    if (fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fr_session_close(s);
        return fail(message, message_size, "", path, "not a regular file");
    }
    if (st.st_uid != getuid()) {
        fr_session_close(s);
        return fail(message, message_size, "", path,
                    "belongs to another user: refused");
    }
    if (st.st_size < (off_t)sizeof(struct flightrec_region_header)) {
        fr_session_close(s);
        return fail(message, message_size, "", path,
                    "too short for a region header");
    }
    if (map_file(s, (size_t)st.st_size, message, message_size) != 0) {
        fr_session_close(s);
        return -1;
    }
    char why[300];
    if (fr_region_check(s->base, s->size, why, sizeof(why)) != 0) {
        fail(message, message_size, "", path, why);
        fr_session_close(s);
        return -1;
    }
    return 0;
}

int fr_session_remap(struct fr_session *s, char *message, size_t message_size)
{
    struct stat st;
    if (fstat(s->fd, &st) != 0)
        return fail(message, message_size, "", s->path, strerror(errno));
    if ((size_t)st.st_size == s->size)
        return 0;
    munmap(s->base, s->size);
    s->base = NULL;
    if (map_file(s, (size_t)st.st_size, message, message_size) != 0)
        return -1;
    char why[300];
    if (fr_region_check(s->base, s->size, why, sizeof(why)) != 0)
        return fail(message, message_size, "", s->path, why);
    return 0;
}

void fr_session_close(struct fr_session *s)
{
    if (s->base != NULL)
        munmap(s->base, s->size);
    if (s->fd >= 0)
        close(s->fd);
    s->base = NULL;
    s->fd = -1;
}

static const struct flightrec_region_process *process_of(
    const unsigned char *region)
{
    const struct flightrec_region_header *h = (const void *)region;
    return (const void *)(region + h->process_offset);
}

/* A zombie has exited (and written its last event): only its parent has
 * not collected it yet. */
static int process_is_zombie(int32_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

int fr_session_alive(const unsigned char *region)
{
    const struct flightrec_region_process *p = process_of(region);
    if (p->pid <= 0 || (kill(p->pid, 0) != 0 && errno != EPERM))
        return 0;
    return fr_process_start_time(p->pid) == p->start_time &&
           !process_is_zombie(p->pid);
}

int fr_session_recording(const struct fr_session *s)
{
    return fr_session_alive(s->base) &&
           fr_session_mapped_by(s, process_of(s->base)->pid) != 0;
}

int fr_session_recording_every(const struct fr_session *s, uint64_t now_ns,
                               uint64_t *last_maps_ns, uint64_t every_ns)
{
    if (*last_maps_ns == UINT64_MAX || !fr_session_alive(s->base))
        return 0;
    if (*last_maps_ns != 0 && now_ns - *last_maps_ns < every_ns)
        return 1;
    *last_maps_ns = now_ns != 0 ? now_ns : 1;
    if (fr_session_mapped_by(s, process_of(s->base)->pid) == 0) {
        *last_maps_ns = UINT64_MAX;
        return 0;
    }
    return 1;
}

int fr_session_locate(const char *arg, char *path, size_t size,
                      char *message, size_t message_size)
{
    size_t len = strlen(arg);
    if (strchr(arg, '/') != NULL ||
        (len > strlen(FR_SESSION_SUFFIX) &&
         strcmp(arg + len - strlen(FR_SESSION_SUFFIX), FR_SESSION_SUFFIX) == 0)) {
        snprintf(path, size, "%s", arg);
        return 0;
    }
    char *end;
    long pid = strtol(arg, &end, 10);
    if (arg[0] == '\0' || *end != '\0' || pid <= 0 || pid > INT32_MAX)
        return fail(message, message_size, "", arg,
                    "neither a process id nor a session file");
    char dir[400];
    if (fr_session_dir(dir, sizeof(dir), 0, message, message_size) != 0)
        return -1;
    uint64_t live_start = fr_process_start_time((int32_t)pid);
    DIR *d = opendir(dir);
    if (d == NULL)
        return fail(message, message_size, "cannot read ", dir,
                    strerror(errno));
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "%ld-", pid);
    unsigned long long best = 0;
    unsigned best_program = 0;
    int found = 0;
    char best_name[300] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 ||
            strlen(e->d_name) >= sizeof(best_name))
            continue;
        unsigned long long start = strtoull(e->d_name + strlen(prefix), &end, 10);
        unsigned program = 1;
        if (*end == '-') {
            /* PID-START-N: the process's Nth program (after exec). */
            program = (unsigned)strtoul(end + 1, &end, 10);
            if (program < 2)
                continue;
        }
        if (strcmp(end, FR_SESSION_SUFFIX) != 0)
            continue;
        /* The live process's files win, its newest program's first; else
         * the newest. */
        int live = start == live_start, best_live = best == live_start;
        if (!found || (live && !best_live) ||
            (live == best_live &&
             (start > best || (start == best && program > best_program)))) {
            best = start;
            best_program = program;
            snprintf(best_name, sizeof(best_name), "%s", e->d_name);
            found = 1;
        }
    }
    closedir(d);
    if (!found)
        return fail(message, message_size, "no session of process ", arg,
                    "");
    int n = snprintf(path, size, "%s/%s", dir, best_name);
    if (n < 0 || (size_t)n >= size)
        return fail(message, message_size, "session path of process ", arg,
                    "too long");
    return 0;
}

/* The claim is one word, so that taking it is one compare-and-swap: the
 * holder's pid (22 bits: Linux's pid_max is at most 2^22) above the low
 * bits of its start time, 42 of them in a 64-bit word.  A 32-bit word
 * keeps 10 (10.24 s at 100 ticks a second): a dead holder's claim then
 * looks alive only if its pid went to a process started a multiple of
 * 1024 ticks later, and until that one exits. */
#if FLIGHTREC_REGION_NARROW
#define CLAIM_START_BITS 10
#else
#define CLAIM_START_BITS 42
#endif
_Static_assert(CLAIM_START_BITS + 22 == 8 * sizeof(flightrec_region_word),
               "a claim is a 22-bit pid and the rest of the start time");

static flightrec_region_word claim_token(int32_t pid, uint64_t start)
{
    return (flightrec_region_word)(uint32_t)pid << CLAIM_START_BITS |
           (flightrec_region_word)(start &
                                   (((uint64_t)1 << CLAIM_START_BITS) - 1));
}

static int32_t claim_pid(flightrec_region_word token)
{
    return (int32_t)(token >> CLAIM_START_BITS);
}

static int claim_alive(flightrec_region_word token)
{
    int32_t pid = claim_pid(token);
    if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM))
        return 0;
    /* A zombie holds nothing: it will never release what it held. */
    return claim_token(pid, fr_process_start_time(pid)) == token &&
           !process_is_zombie(pid);
}

int fr_consumer_claim(struct flightrec_region_control *control, int32_t pid,
                      uint64_t start, int32_t *holder)
{
    flightrec_region_word mine = claim_token(pid, start);
    for (int attempt = 0; attempt < 100; attempt++) {
        flightrec_region_word current = atomic_load_explicit(
            &control->consumer_claim, memory_order_acquire);
        if (current == mine)
            return 0;
        if (current != 0 && claim_alive(current)) {
            *holder = claim_pid(current);
            return -1;
        }
        if (atomic_compare_exchange_strong_explicit(
                &control->consumer_claim, &current, mine,
                memory_order_acq_rel, memory_order_acquire)) {
            atomic_store_explicit(&control->consumer_pid, pid,
                                  memory_order_relaxed);
            return 0;
        }
    }
    *holder = atomic_load_explicit(&control->consumer_pid,
                                   memory_order_relaxed);
    return -1;
}

void fr_consumer_release(struct flightrec_region_control *control,
                         int32_t pid)
{
    flightrec_region_word current = atomic_load_explicit(
        &control->consumer_claim, memory_order_acquire);
    if (claim_pid(current) != pid)
        return;
    if (atomic_compare_exchange_strong_explicit(
            &control->consumer_claim, &current, 0, memory_order_acq_rel,
            memory_order_relaxed))
        atomic_store_explicit(&control->consumer_pid, 0, memory_order_relaxed);
}

/* The claims are shared with other processes: only a lock-free atomic
 * works across them (region.h, FLIGHTREC_REGION_WORD). */
_Static_assert(__atomic_always_lock_free(sizeof(flightrec_region_word), 0),
               "the region's shared words are lock-free atomics");

int fr_control_lock(_Atomic flightrec_region_word *lock, int32_t pid,
                    uint64_t start, int32_t *holder)
{
    flightrec_region_word mine = claim_token(pid, start);
    struct timespec began, now;
    clock_gettime(CLOCK_MONOTONIC, &began);
    for (unsigned spins = 0;; spins++) {
        flightrec_region_word current = 0;
        if (atomic_compare_exchange_weak_explicit(lock, &current, mine,
                                                  memory_order_acquire,
                                                  memory_order_relaxed))
            return 0;
        /* Checking a holder's life costs a /proc read: now and then. */
        if (spins % 64 == 63) {
            if (!claim_alive(current) &&
                atomic_compare_exchange_strong_explicit(
                    lock, &current, mine, memory_order_acquire,
                    memory_order_relaxed))
                return 0;
            /* A live holder keeps it for a few stores; one that keeps it
             * longer is stopped or broken: give up rather than hang. */
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - began.tv_sec >= 2) {
                if (holder != NULL)
                    *holder = claim_pid(current);
                return -1;
            }
        }
        sched_yield();
    }
}

void fr_control_unlock(_Atomic flightrec_region_word *lock, int32_t pid,
                       uint64_t start)
{
    flightrec_region_word mine = claim_token(pid, start);
    (void)atomic_compare_exchange_strong_explicit(
        lock, &mine, 0, memory_order_release, memory_order_relaxed);
}

int fr_session_mapped_by(const struct fr_session *s, int32_t pid)
{
    struct stat st;
    if (fstat(s->fd, &st) != 0)
        return -1;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "re");
    if (maps == NULL)
        return -1;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof(line), maps) != NULL) {
        unsigned major, minor;
        unsigned long long inode;
        /* start-end perms offset major:minor inode [path] */
        if (sscanf(line, "%*s %*s %*s %x:%x %llu", &major, &minor, &inode) ==
                3 &&
            inode == (unsigned long long)st.st_ino &&
            major == major(st.st_dev) && minor == minor(st.st_dev))
            found = 1;
    }
    fclose(maps);
    return found;
}
