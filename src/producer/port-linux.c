/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hosted Linux port (platform.h): region memory from anonymous
 * mappings, thread identity from the kernel, the environment, clocks.
 */
#include "platform.h"

#include "../region/session.h"

#include <flightrec/common.h>
#include <flightrec/region.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void *flightrec__port_region_reserve(size_t *size)
{
    /* Address space only: pages are committed when a ring is first
     * written (or prefaulted), and never more than the rings in use. */
    for (size_t want = *size; want >= ((size_t)16 << 20); want /= 2) {
        void *memory = mmap(NULL, want, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (memory != MAP_FAILED) {
            *size = want;
            return memory;
        }
    }
    return NULL;
}

void flightrec__port_region_discard(void *at, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)at + (uintptr_t)page - 1) &
                      ~((uintptr_t)page - 1);
    uintptr_t last = ((uintptr_t)at + size) & ~((uintptr_t)page - 1);
    if (last > first)
        (void)madvise((void *)first, last - first, MADV_DONTNEED);
}

void flightrec__port_region_prefault(void *at, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    volatile unsigned char *p = at;
    for (size_t i = 0; i < size; i += (size_t)page)
        p[i] = p[i];
}

void flightrec__port_region_populate(void *at, size_t size)
{
#ifdef MADV_POPULATE_WRITE
    /* Linux 5.14: faults the pages in as a write would, changing no byte.
     * Older kernels say EINVAL; a failure leaves the faults to the
     * producer, as without it.  errno is the program's: kept. */
    uintptr_t page = (uintptr_t)flightrec__port_page_size();
    uintptr_t first = (uintptr_t)at & ~(page - 1);
    uintptr_t end = ((uintptr_t)at + size + page - 1) & ~(page - 1);
    int saved = errno;
    (void)madvise((void *)first, end - first, MADV_POPULATE_WRITE);
    errno = saved;
#else
    (void)at;
    (void)size;
#endif
}

size_t flightrec__port_page_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)page : 4096u;
}

/* Test hook, not an interface: FLIGHTREC_TEST_FORK_FAIL=snapshot makes the
 * fork snapshot's mapping fail, =install its move into place in the child
 * (tests/producer/test-fork-isolation.c; docs/recording.md, "Test hooks").
 * Read when the session file is made. */
enum { FORK_FAIL_NONE, FORK_FAIL_SNAPSHOT, FORK_FAIL_INSTALL };
static int fork_fail_hook;

/* The session file backing this process's region, -1: private memory. */
static int session_fd = -1;
static char session_path[512];
static pid_t session_owner;         /* the process that made the file */
static dev_t session_dev;           /* which file it is: a program may */
static ino_t session_ino;           /* close our descriptor, and reuse it */
/* What the session file is named after, once its region is filled in. */
static char session_dir[400];
static int32_t session_pid;
static uint64_t session_start;

/* The session file's descriptor, still ours: a program that closed it (or
 * whose next open got its number) must never see its own file extended.
 * Opened again by its path if need be; -1 if it is gone. */
static int session_descriptor(void)
{
    struct stat st;
    if (session_fd >= 0 && fstat(session_fd, &st) == 0 &&
        st.st_dev == session_dev && st.st_ino == session_ino)
        return session_fd;
    int fd = open(session_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || st.st_dev != session_dev ||
        st.st_ino != session_ino) {
        close(fd);
        return -1;
    }
    session_fd = fd;
    return fd;
}

/* Normal exit removes the session file (a kill leaves it for a dump),
 * unless FLIGHTREC_KEEP=1. */
static void remove_session(void)
{
    const char *keep = getenv("FLIGHTREC_KEEP");
    if (session_path[0] != '\0' && getpid() == session_owner &&
        !(keep != NULL && strcmp(keep, "1") == 0))
        unlink(session_path);
}

static void read_text(const char *path, char *out, size_t size)
{
    memset(out, 0, size);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, size - 1);
    close(fd);
    if (n > 0 && out[n - 1] == '\n')
        out[n - 1] = '\0';
}

static int reserve_space(int fd, size_t from, size_t to)
{
    if (ftruncate(fd, (off_t)to) != 0)
        return -errno;
    int rc = posix_fallocate(fd, (off_t)from, (off_t)(to - from));
    return -rc;
}

int flightrec__port_region_share(void *base, size_t size,
                                 struct flightrec_region_process *process,
                                 char *message, size_t message_size)
{
    memset(process, 0, sizeof(*process));
    process->pid = (int32_t)getpid();
    process->uid = (uint32_t)getuid();
    process->start_time = fr_process_start_time(process->pid);
    char comm[17];
    read_text("/proc/self/comm", comm, sizeof(comm));
    memcpy(process->program, comm, sizeof(process->program));
    read_text("/proc/self/cmdline", process->cmdline,
              sizeof(process->cmdline));

    const char *hook = getenv("FLIGHTREC_TEST_FORK_FAIL");
    fork_fail_hook = hook == NULL                   ? FORK_FAIL_NONE
                     : strcmp(hook, "snapshot") == 0 ? FORK_FAIL_SNAPSHOT
                     : strcmp(hook, "install") == 0  ? FORK_FAIL_INSTALL
                                                     : FORK_FAIL_NONE;
    const char *shm = getenv("FLIGHTREC_SHM");
    if (shm != NULL && strcmp(shm, "0") == 0)
        return -1;
    char *dir = session_dir;
    if (fr_session_dir(dir, sizeof(session_dir), 1, message, message_size) !=
        0)
        return -1;
    session_pid = process->pid;
    session_start = process->start_time;
    int fd = fr_session_create(session_path, sizeof(session_path), dir,
                               process->pid, process->start_time);
    if (fd < 0) {
        if (fd == -ENAMETOOLONG)
            snprintf(message, message_size, "session path too long in %s",
                     dir);
        else
            snprintf(message, message_size, "cannot create %s: %s",
                     session_path, strerror(-fd));
        session_path[0] = '\0';
        return -1;
    }
    int rc = reserve_space(fd, 0, size);
    void *at = MAP_FAILED;
    if (rc == 0)
        at = mmap(base, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                  fd, 0);
    if (rc != 0 || at == MAP_FAILED) {
        snprintf(message, message_size, "cannot reserve %zu bytes in %s: %s",
                 size, session_path, strerror(rc != 0 ? -rc : errno));
        close(fd);
        unlink(session_path);
        session_path[0] = '\0';
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0) {
        session_dev = st.st_dev;
        session_ino = st.st_ino;
    }
    session_fd = fd;
    session_owner = getpid();
    atexit(remove_session);
    return 0;
}

/* ThreadSanitizer takes a mapping for a write of its pages: the swap of
 * the control page for the file's, with the same contents, would be
 * reported as a race with every thread's filter test.  Its shadow is reset
 * instead (the runtime does that for mappings made while a thread ignores
 * its accesses). */
#if defined(__SANITIZE_THREAD__)
#define FLIGHTREC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FLIGHTREC_TSAN 1
#endif
#endif
#ifdef FLIGHTREC_TSAN
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define IGNORED_BY_TSAN(statement)                                           \
    do {                                                                     \
        __tsan_ignore_thread_begin();                                        \
        statement;                                                           \
        __tsan_ignore_thread_end();                                          \
    } while (0)
#else
#define IGNORED_BY_TSAN(statement) statement
#endif

/* This process's control-lock claim (pid and start time, as consumer
 * claims), known once the session exists. */
static int32_t claim_pid;
static uint64_t claim_start;

int flightrec__port_hot_share(void *page, size_t page_bytes,
                              size_t hot_offset)
{
    size_t size = flightrec__port_page_size();
    if (session_fd < 0 || size > page_bytes ||
        (uintptr_t)page % size != 0 || hot_offset % size != 0)
        return -1;
    /* The file's page already holds what the object holds: the swap is
     * invisible to threads reading it meanwhile. */
    void *at;
    IGNORED_BY_TSAN(at = mmap(page, size, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_FIXED, session_fd,
                              (off_t)hot_offset));
    if (at == MAP_FAILED)
        return -1;
    claim_pid = (int32_t)getpid();
    claim_start = fr_process_start_time(claim_pid);
    return 0;
}

void flightrec__port_hot_unshare(void *page)
{
    size_t size = flightrec__port_page_size();
    if (claim_pid == 0)
        return;
    claim_pid = 0;
    /* A private copy made aside and moved into place in one step: the
     * filter never reads as zero meanwhile (a handler may record). */
    void *copy = mmap(NULL, size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy != MAP_FAILED) {
        memcpy(copy, page, size);
        if (mremap(copy, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, page) !=
            MAP_FAILED)
            return;
        munmap(copy, size);
    }
    /* The child must not change the parent's recording: a zeroed page in
     * place, so the child records nothing (said once). */
    (void)mmap(page, size, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    static const char text[] =
        "flightrec: cannot give the forked child its own control page; "
        "recording is off in the child\n";
    flightrec__port_message(text, sizeof(text) - 1);
}

int flightrec__port_control_lock(_Atomic flightrec_region_word *lock)
{
    return fr_control_lock(lock, claim_pid, claim_start, NULL);
}

void flightrec__port_control_unlock(_Atomic flightrec_region_word *lock)
{
    fr_control_unlock(lock, claim_pid, claim_start);
}

void flightrec__port_process_forked(struct flightrec_region_process *process)
{
    process->pid = (int32_t)getpid();
    process->start_time = fr_process_start_time(process->pid);
}

int flightrec__port_region_grow(void *base, size_t from, size_t to)
{
    if (session_fd < 0)
        return 0;
    int fd = session_descriptor();
    if (fd < 0 || reserve_space(fd, from, to) != 0)
        return -1;
    void *at = mmap((unsigned char *)base + from, to - from,
                    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                    (off_t)from);
    return at == MAP_FAILED ? -1 : 0;
}

int flightrec__port_region_publish(char *message, size_t message_size)
{
    if (session_fd < 0 || session_path[0] == '\0')
        return 0;
    int rc = fr_session_publish(session_path, sizeof(session_path),
                                session_dir, session_pid, session_start);
    if (rc == 0)
        return 0;
    snprintf(message, message_size,
             "cannot name the session file %s: %s; other processes "
             "cannot see this one",
             session_path, strerror(-rc));
    /* The rings stay in the file, now nameless. */
    unlink(session_path);
    session_path[0] = '\0';
    return -1;
}

int flightrec__port_region_is_shared(void)
{
    return session_fd >= 0;
}

void *flightrec__port_region_snapshot_begin(size_t size)
{
    if (fork_fail_hook == FORK_FAIL_SNAPSHOT)
        return NULL;
    void *memory = mmap(NULL, size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return memory == MAP_FAILED ? NULL : memory;
}

void flightrec__port_region_snapshot_copy(void *to, const void *from,
                                          size_t n)
{
    IGNORED_BY_TSAN(memcpy(to, from, n));
}

int flightrec__port_region_snapshot_install(void *base, void *snapshot,
                                            size_t size)
{
    /* Moves the snapshot's pages over the region: no copy. */
    int installed =
        snapshot != NULL && fork_fail_hook != FORK_FAIL_INSTALL &&
        mremap(snapshot, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, base) !=
            MAP_FAILED;
    if (!installed) {
        if (snapshot != NULL)
            munmap(snapshot, size);
        /* Zeroed private pages over the parent's file: whatever still
         * points into the region (a record the forking thread was in the
         * middle of) writes nowhere that matters.  Should even that fail,
         * the child's runtime lets go of the region all the same. */
        (void)mmap(base, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
                   0);
    }
    /* Only if it is still ours: the number may be the program's now. */
    int fd = session_descriptor();
    if (fd >= 0)
        close(fd);
    session_fd = -1;
    session_path[0] = '\0';
    return installed ? 0 : -1;
}

void flightrec__port_region_snapshot_drop(void *snapshot, size_t size)
{
    munmap(snapshot, size);
}

int32_t flightrec__port_thread_id(void)
{
    return (int32_t)syscall(SYS_gettid);
}

int32_t flightrec__port_process_id(void)
{
    return (int32_t)getpid();
}

int flightrec__port_self_name(char name[16])
{
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
        return -1;
    name[15] = '\0';
    return 0;
}

/* Formats a decimal number into @p; returns the end. */
static char *put_decimal(char *p, uint32_t value)
{
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

/* open/read/close only: usable from a signal handler. */
int flightrec__port_thread_name(int32_t tid, char name[16])
{
    char path[64] = "/proc/self/task/";
    if (tid <= 0)
        return -1;
    char *p = put_decimal(path + 16, (uint32_t)tid);
    const char *suffix = "/comm";
    while (*suffix)
        *p++ = *suffix++;
    *p = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n;
    do {
        n = read(fd, name, 15);
    } while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return -1;
    if (name[n - 1] == '\n')
        n--;
    name[n] = '\0';
    return 0;
}

static pthread_key_t exit_key;

void flightrec__port_thread_exit_init(void (*fn)(void *arg))
{
    (void)pthread_key_create(&exit_key, fn);
}

int flightrec__port_on_thread_exit(void *arg)
{
    /* Any non-NULL value: the destructor runs at thread exit. */
    return pthread_setspecific(exit_key, arg) == 0 ? 0 : -1;
}

/* The runtime's fork handlers, kept to be run by hand too around the calls
 * that fork without running any: _Fork(), and clone() making a process
 * (the preload library's wrappers, flightrec__fork_*()). */
#define FORK_HANDLERS_MAX 4
struct fork_handler {
    void (*prepare)(void), (*parent)(void), (*child)(void);
};
static struct fork_handler fork_handlers[FORK_HANDLERS_MAX];
static _Atomic int fork_handler_count;
static pthread_mutex_t fork_handlers_lock = PTHREAD_MUTEX_INITIALIZER;
void flightrec__port_at_fork(void (*prepare)(void), void (*parent)(void),
                             void (*child)(void))
{
    (void)pthread_atfork(prepare, parent, child);
    pthread_mutex_lock(&fork_handlers_lock);
    int n = atomic_load_explicit(&fork_handler_count, memory_order_relaxed);
    if (n < FORK_HANDLERS_MAX) {
        fork_handlers[n] = (struct fork_handler){ prepare, parent, child };
        atomic_store_explicit(&fork_handler_count, n + 1,
                              memory_order_release);
    }
    pthread_mutex_unlock(&fork_handlers_lock);
}

/* In pthread_atfork()'s order: prepare handlers last registered first,
 * the others first registered first.  prepare() returns how many it ran,
 * for parent() or child() to run the same. */
FLIGHTREC_API int flightrec__fork_prepare(void);
int flightrec__fork_prepare(void)
{
    int n = atomic_load_explicit(&fork_handler_count, memory_order_acquire);
    for (int i = n - 1; i >= 0; i--)
        if (fork_handlers[i].prepare != NULL)
            fork_handlers[i].prepare();
    return n;
}

FLIGHTREC_API void flightrec__fork_parent(int ran);
void flightrec__fork_parent(int ran)
{
    for (int i = 0; i < ran; i++)
        if (fork_handlers[i].parent != NULL)
            fork_handlers[i].parent();
}

FLIGHTREC_API void flightrec__fork_child(int ran);
void flightrec__fork_child(int ran)
{
    for (int i = 0; i < ran; i++)
        if (fork_handlers[i].child != NULL)
            fork_handlers[i].child();
}

void flightrec__port_yield(void)
{
    sched_yield();
}

const char *flightrec__port_getenv(const char *name)
{
    return getenv(name);
}

void flightrec__port_message(const char *text, size_t length)
{
    (void)!write(STDERR_FILENO, text, length);
}

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t flightrec__port_monotonic_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

uint64_t flightrec__port_realtime_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

void flightrec__port_sleep_ns(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000u),
                           (long)(ns % 1000000000u) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}
