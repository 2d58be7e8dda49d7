/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program to run under `flightrec record`: each mode makes a known set of
 * wrapped calls and prints, on standard output, what the recording must hold
 * for them, one line per event: "THREAD EVENT_NAME 0xDATA", THREAD being
 * "main" or "t1", with the values the calls really returned.  Other lines:
 * "tid THREAD N", "leak BYTES", "pid N", "ready".  Mode "flood" floods the
 * rings instead (mode_flood()).
 *
 * Standard output has a static buffer (no malloc) and is written by libc's
 * internal write, which the preload library does not see.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char out_buffer[1 << 16];

/* Keeps the compiler from removing a malloc/free pair. */
static void *volatile sink;

static void expect(const char *thread, const char *event, uintptr_t data)
{
    printf("%s %s 0x%jx\n", thread, event, (uintmax_t)data);
}

static void expect_result(const char *thread, const char *event, long r,
                          int err)
{
    expect(thread, event, (uintptr_t)r);
    if (r == -1)
        expect(thread, "ERRNO", (uintptr_t)err);
}

static int tid(void)
{
    return (int)syscall(SYS_gettid);
}

/*=====   io   =====*/

static int mode_io(const char *dir)
{
    char path[4096];
    char buf[64] = "0123456789";
    snprintf(path, sizeof path, "%s/io-target.dat", dir);
    unlink(path);

    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
    expect("main", "OPEN_ENTRY", O_WRONLY | O_CREAT | O_EXCL);
    expect("main", "ARG_2", 0640);
    expect_result("main", "OPEN_EXIT", fd, errno);
    ssize_t r = write(fd, buf, 10);
    expect("main", "WRITE_ENTRY", (uintptr_t)fd);
    expect("main", "ARG_2", 10);
    expect_result("main", "WRITE_EXIT", r, errno);
    r = pwrite(fd, buf, 4, 100);
    expect("main", "WRITE_ENTRY", (uintptr_t)fd);
    expect("main", "ARG_2", 4);
    expect("main", "ARG_3", 100);
    expect_result("main", "WRITE_EXIT", r, errno);
    struct iovec iov[2] = { { buf, 3 }, { buf + 3, 5 } };
    r = writev(fd, iov, 2);
    expect("main", "WRITEV_ENTRY", (uintptr_t)fd);
    expect("main", "ARG_2", 8);
    expect_result("main", "WRITEV_EXIT", r, errno);
    int c = close(fd);
    expect("main", "CLOSE_ENTRY", (uintptr_t)fd);
    expect_result("main", "CLOSE_EXIT", c, errno);

    fd = open(path, O_RDONLY);
    expect("main", "OPEN_ENTRY", O_RDONLY);
    expect("main", "ARG_2", 0);
    expect_result("main", "OPEN_EXIT", fd, errno);
    r = read(fd, buf, 64);
    expect("main", "READ_ENTRY", (uintptr_t)fd);
    expect("main", "ARG_2", 64);
    expect_result("main", "READ_EXIT", r, errno);
    r = pread(fd, buf, 8, 2);
    expect("main", "READ_ENTRY", (uintptr_t)fd);
    expect("main", "ARG_2", 8);
    expect("main", "ARG_3", 2);
    expect_result("main", "READ_EXIT", r, errno);
    r = readv(fd, iov, 2);
    expect("main", "READV_ENTRY", (uintptr_t)fd);
    expect("main", "ARG_2", 8);
    expect_result("main", "READV_EXIT", r, errno);
    c = close(fd);
    expect("main", "CLOSE_ENTRY", (uintptr_t)fd);
    expect_result("main", "CLOSE_EXIT", c, errno);
    unlink(path);

    /* A failing call: its result and errno. */
    c = close(5000);
    int err = errno;
    expect("main", "CLOSE_ENTRY", 5000);
    expect_result("main", "CLOSE_EXIT", c, err);

    /* Sockets: a TCP listener and a client, then datagrams to self. */
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    expect("main", "SOCKET_ENTRY", AF_INET);
    expect("main", "ARG_1", SOCK_STREAM);
    expect("main", "ARG_2", 0);
    expect_result("main", "SOCKET_EXIT", ls, errno);
    struct sockaddr_in addr = { .sin_family = AF_INET,
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof addr;
    if (bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(ls, 4) != 0 ||
        getsockname(ls, (struct sockaddr *)&addr, &len) != 0)
        return 1;
    int cs = socket(AF_INET, SOCK_STREAM, 0);
    expect("main", "SOCKET_ENTRY", AF_INET);
    expect("main", "ARG_1", SOCK_STREAM);
    expect("main", "ARG_2", 0);
    expect_result("main", "SOCKET_EXIT", cs, errno);
    c = connect(cs, (struct sockaddr *)&addr, sizeof addr);
    expect("main", "CONNECT_ENTRY", (uintptr_t)cs);
    expect_result("main", "CONNECT_EXIT", c, errno);
    int as = accept(ls, NULL, NULL);
    expect("main", "ACCEPT_ENTRY", (uintptr_t)ls);
    expect_result("main", "ACCEPT_EXIT", as, errno);
    r = send(cs, "abc", 3, 0);
    expect("main", "SEND_ENTRY", (uintptr_t)cs);
    expect("main", "ARG_2", 3);
    expect_result("main", "SEND_EXIT", r, errno);
    r = recv(as, buf, sizeof buf, 0);
    expect("main", "RECV_ENTRY", (uintptr_t)as);
    expect("main", "ARG_2", sizeof buf);
    expect_result("main", "RECV_EXIT", r, errno);
    r = sendto(as, "hello", 5, 0, NULL, 0);
    expect("main", "SENDTO_ENTRY", (uintptr_t)as);
    expect("main", "ARG_2", 5);
    expect_result("main", "SENDTO_EXIT", r, errno);
    r = recvfrom(cs, buf, 32, 0, NULL, NULL);
    expect("main", "RECVFROM_ENTRY", (uintptr_t)cs);
    expect("main", "ARG_2", 32);
    expect_result("main", "RECVFROM_EXIT", r, errno);
    struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
    r = sendmsg(cs, &msg, 0);
    expect("main", "SENDMSG_ENTRY", (uintptr_t)cs);
    expect("main", "ARG_2", 8);
    expect_result("main", "SENDMSG_EXIT", r, errno);
    struct pollfd pfd = { .fd = as, .events = POLLIN };
    int n = poll(&pfd, 1, 1000);
    expect("main", "POLL_ENTRY", 1);
    expect("main", "ARG_2", 1000);
    expect_result("main", "POLL_EXIT", n, errno);
    r = recvmsg(as, &msg, 0);
    expect("main", "RECVMSG_ENTRY", (uintptr_t)as);
    expect("main", "ARG_2", 8);
    expect_result("main", "RECVMSG_EXIT", r, errno);
    fd_set set;
    FD_ZERO(&set);
    FD_SET(as, &set);
    struct timeval tv = { 0, 0 };
    n = select(as + 1, &set, NULL, NULL, &tv);
    expect("main", "SELECT_ENTRY", (uintptr_t)as + 1);
    expect_result("main", "SELECT_EXIT", n, errno);
    int ep = epoll_create1(0);
    struct epoll_event evs[4];
    n = epoll_wait(ep, evs, 4, 0);
    expect("main", "KEVENT_ENTRY", (uintptr_t)ep);
    expect("main", "ARG_2", 4);
    expect_result("main", "KEVENT_EXIT", n, errno);
    return 0;
}

/*=====   io, fortified   =====*/

/* The entry points of glibc's _FORTIFY_SOURCE, called as a fortified
 * build calls them (it does so for open() without a constant flags
 * argument and for reads into buffers of a known size): explicitly, so
 * that the compiler's choices do not decide what is tested. */
extern int __open_2(const char *, int);
extern int __openat_2(int, const char *, int);
extern ssize_t __read_chk(int, void *, size_t, size_t);
extern ssize_t __pread_chk(int, void *, size_t, off_t, size_t);
extern ssize_t __recv_chk(int, void *, size_t, size_t, int);
extern ssize_t __recvfrom_chk(int, void *, size_t, size_t, int,
                              struct sockaddr *, socklen_t *);
extern int __poll_chk(struct pollfd *, nfds_t, int, size_t);
extern int __ppoll_chk(struct pollfd *, nfds_t, const struct timespec *,
                       const sigset_t *, size_t);

static int mode_fortified(void)
{
    char buf[64];
    int fd = __open_2("/dev/zero", O_RDONLY);
    expect("main", "OPEN_ENTRY", O_RDONLY);
    expect("main", "ARG_2", 0);
    expect_result("main", "OPEN_EXIT", fd, errno);
    ssize_t r = __read_chk(fd, buf, 16, sizeof buf);
    expect("main", "READ_ENTRY", (uintptr_t)fd);
    expect("main", "ARG_2", 16);
    expect_result("main", "READ_EXIT", r, errno);
    r = __pread_chk(fd, buf, 8, 4096, sizeof buf);
    expect("main", "READ_ENTRY", (uintptr_t)fd);
    expect("main", "ARG_2", 8);
    expect("main", "ARG_3", 4096);
    expect_result("main", "READ_EXIT", r, errno);
    int c = close(fd);
    expect("main", "CLOSE_ENTRY", (uintptr_t)fd);
    expect_result("main", "CLOSE_EXIT", c, errno);
    fd = __openat_2(AT_FDCWD, "/nonexistent/fortified", O_RDONLY);
    int err = errno;
    expect("main", "OPEN_ENTRY", O_RDONLY);
    expect("main", "ARG_2", 0);
    expect_result("main", "OPEN_EXIT", fd, err);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0)
        return 1;
    r = send(sv[0], "abc", 3, 0);
    expect("main", "SEND_ENTRY", (uintptr_t)sv[0]);
    expect("main", "ARG_2", 3);
    expect_result("main", "SEND_EXIT", r, errno);
    struct pollfd pfd[2] = { { .fd = sv[1], .events = POLLIN },
                             { .fd = sv[0], .events = POLLIN } };
    int n = __poll_chk(pfd, 2, 1000, sizeof pfd);
    expect("main", "POLL_ENTRY", 2);
    expect("main", "ARG_2", 1000);
    expect_result("main", "POLL_EXIT", n, errno);
    r = __recv_chk(sv[1], buf, 32, sizeof buf, 0);
    expect("main", "RECV_ENTRY", (uintptr_t)sv[1]);
    expect("main", "ARG_2", 32);
    expect_result("main", "RECV_EXIT", r, errno);
    r = send(sv[0], "hello", 5, 0);
    expect("main", "SEND_ENTRY", (uintptr_t)sv[0]);
    expect("main", "ARG_2", 5);
    expect_result("main", "SEND_EXIT", r, errno);
    r = __recvfrom_chk(sv[1], buf, 40, sizeof buf, 0, NULL, NULL);
    expect("main", "RECVFROM_ENTRY", (uintptr_t)sv[1]);
    expect("main", "ARG_2", 40);
    expect_result("main", "RECVFROM_EXIT", r, errno);

    /* ppoll and epoll_pwait, plain and fortified: as poll and epoll_wait,
     * ppoll's timeout in milliseconds. */
    struct timespec quarter = { 0, 250 * 1000 * 1000 };
    n = ppoll(pfd, 2, &quarter, NULL);
    expect("main", "POLL_ENTRY", 2);
    expect("main", "ARG_2", 250);
    expect_result("main", "POLL_EXIT", n, errno);
    /* Without a timeout: a socket that can be written to at once. */
    struct pollfd out = { .fd = sv[0], .events = POLLOUT };
    n = __ppoll_chk(&out, 1, NULL, NULL, sizeof out);
    expect("main", "POLL_ENTRY", 1);
    expect("main", "ARG_2", (uintptr_t)-1);
    expect_result("main", "POLL_EXIT", n, errno);
    int ep = epoll_create1(0);
    struct epoll_event evs[2];
    n = epoll_pwait(ep, evs, 2, 0, NULL);
    expect("main", "KEVENT_ENTRY", (uintptr_t)ep);
    expect("main", "ARG_2", 2);
    expect_result("main", "KEVENT_EXIT", n, errno);
    return 0;
}

/*=====   memory   =====*/

static int mode_memory(void)
{
    char *a = malloc(100);
    expect("main", "MALLOC_ENTRY", 100);
    expect("main", "MALLOC_EXIT", (uintptr_t)a);
    char *b = calloc(3, 40);
    expect("main", "CALLOC_ENTRY", 3);
    expect("main", "ARG_1", 40);
    expect("main", "CALLOC_EXIT", (uintptr_t)b);
    char *b2 = realloc(b, 200);
    expect("main", "REALLOC_ENTRY", (uintptr_t)b);
    expect("main", "ARG_1", 200);
    expect("main", "REALLOC_EXIT", (uintptr_t)b2);
    free(a);
    expect("main", "FREE_ENTRY", (uintptr_t)a);
    void *q = NULL;
    int r = posix_memalign(&q, 64, 256);
    expect("main", "POSIX_MEMALIGN_ENTRY", 64);
    expect("main", "ARG_2", 256);
    expect("main", "POSIX_MEMALIGN_EXIT", (uintptr_t)q);
    expect("main", "RETURN_0", (uintptr_t)r);
    void *al = aligned_alloc(32, 96);
    expect("main", "ALIGNED_ALLOC_ENTRY", 32);
    expect("main", "ARG_1", 96);
    expect("main", "ALIGNED_ALLOC_EXIT", (uintptr_t)al);
    void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    expect("main", "MMAP_ENTRY", 8192);
    expect("main", "ARG_4", (uintptr_t)-1);
    expect("main", "MMAP_EXIT", (uintptr_t)m);
    munmap(m, 8192);
    expect("main", "PAGE_FREE", (uintptr_t)m);
    expect("main", "ARG_1", 8192);
    free(q);
    expect("main", "FREE_ENTRY", (uintptr_t)q);
    /* Leaked: b2 (200) and al (96). */
    printf("leak %d\n", 200 + 96);
    return 0;
}

/*=====   locks and threads   =====*/

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static sem_t t1_ready;
static int t1_tid;

static void *t1_main(void *arg)
{
    (void)arg;
    t1_tid = tid();
    pthread_setname_np(pthread_self(), "contender");
    int r = pthread_mutex_trylock(&mutex); /* main holds it */
    sem_post(&t1_ready);
    pthread_mutex_lock(&mutex);
    pthread_mutex_unlock(&mutex);
    return (void *)(intptr_t)r;
}

static int mode_locks(void)
{
    int me = tid();
    pthread_mutex_lock(&mutex);
    expect("main", "MUTEX_LOCK_ENTRY", (uintptr_t)&mutex);
    expect("main", "MUTEX_LOCK_EXIT", (uintptr_t)&mutex);
    sem_init(&t1_ready, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, t1_main, NULL);
    sem_wait(&t1_ready);
    /* Hold until t1 waits in the kernel (glibc marks the lock word 2),
     * then 20 ms more: t1's wait covers them. */
    while (__atomic_load_n(&mutex.__data.__lock, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
    struct timespec hold = { 0, 20 * 1000 * 1000 };
    nanosleep(&hold, NULL);
    pthread_mutex_unlock(&mutex);
    void *t1_result;
    pthread_join(t, &t1_result);
    expect("main", "THREAD_CREATE", (uintptr_t)t1_tid);
    expect("main", "MUTEX_LOCK_ENTRY", (uintptr_t)&t1_ready);
    expect("main", "RTEMS_SEMAPHORE_OBTAIN", (uintptr_t)&t1_ready);
    expect("main", "MUTEX_UNLOCK", (uintptr_t)&mutex);
    printf("t1 THREAD_START 0x%x\n", me);
    expect("t1", "THREAD_SET_NAME", (uintptr_t)t1_tid);
    expect("t1", "MUTEX_TRYLOCK_FAIL", (uintptr_t)&mutex);
    expect("t1", "RTEMS_SEMAPHORE_RELEASE", (uintptr_t)&t1_ready);
    expect("t1", "MUTEX_LOCK_ENTRY", (uintptr_t)&mutex);
    expect("t1", "MUTEX_LOCK_EXIT", (uintptr_t)&mutex);
    expect("t1", "MUTEX_UNLOCK", (uintptr_t)&mutex);
    expect("t1", "THREAD_EXIT", (uintptr_t)t1_tid);
    printf("tid t1 %d\n", t1_tid);
    printf("tid main %d\n", me);

    /* Read-write lock, semaphore and condition variable, one thread. */
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    pthread_rwlock_rdlock(&rw);
    pthread_rwlock_unlock(&rw);
    pthread_rwlock_wrlock(&rw);
    int busy = pthread_rwlock_tryrdlock(&rw);
    pthread_rwlock_unlock(&rw);
    pthread_rwlock_trywrlock(&rw);
    pthread_rwlock_unlock(&rw);
    uintptr_t a = (uintptr_t)&rw;
    expect("main", "MUTEX_LOCK_ENTRY", a);
    expect("main", "THREAD_RESOURCE_OBTAIN", a);
    expect("main", "THREAD_RESOURCE_RELEASE", a);
    expect("main", "MUTEX_LOCK_ENTRY", a);
    expect("main", "MUTEX_LOCK_EXIT", a);
    expect("main", busy == 0 ? "THREAD_RESOURCE_OBTAIN" : "MUTEX_TRYLOCK_FAIL",
           a);
    expect("main", "MUTEX_UNLOCK", a);
    expect("main", "MUTEX_LOCK_EXIT", a);
    expect("main", "MUTEX_UNLOCK", a);

    sem_t s;
    sem_init(&s, 0, 1);
    sem_trywait(&s);
    sem_trywait(&s); /* empty: fails */
    sem_post(&s);
    expect("main", "RTEMS_SEMAPHORE_OBTAIN", (uintptr_t)&s);
    expect("main", "MUTEX_TRYLOCK_FAIL", (uintptr_t)&s);
    expect("main", "RTEMS_SEMAPHORE_RELEASE", (uintptr_t)&s);

    pthread_spinlock_t spin;
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_spin_lock(&spin);
    int spin_busy = pthread_spin_trylock(&spin);
    pthread_spin_unlock(&spin);
    uintptr_t sp = (uintptr_t)&spin;
    expect("main", "ISR_LOCK_ACQUIRE_ENTRY", sp);
    expect("main", "ISR_LOCK_ACQUIRE_EXIT", sp);
    expect("main", spin_busy == 0 ? "ISR_LOCK_ACQUIRE_EXIT"
                                  : "MUTEX_TRYLOCK_FAIL", sp);
    expect("main", "ISR_LOCK_RELEASE", sp);

    struct timespec soon;
    clock_gettime(CLOCK_REALTIME, &soon);
    pthread_mutex_lock(&mutex);
    int timed = pthread_mutex_timedlock(&mutex, &soon); /* held: times out */
    pthread_mutex_unlock(&mutex);
    expect("main", "MUTEX_LOCK_ENTRY", (uintptr_t)&mutex);
    expect("main", "MUTEX_LOCK_EXIT", (uintptr_t)&mutex);
    expect("main", "MUTEX_LOCK_ENTRY", (uintptr_t)&mutex);
    expect("main", timed == 0 ? "MUTEX_LOCK_EXIT" : "MUTEX_TRYLOCK_FAIL",
           (uintptr_t)&mutex);
    expect("main", "MUTEX_UNLOCK", (uintptr_t)&mutex);

    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    struct timespec past = { 0, 0 };
    pthread_mutex_lock(&mutex);
    pthread_cond_timedwait(&cond, &mutex, &past);
    pthread_mutex_unlock(&mutex);
    pthread_cond_signal(&cond);
    pthread_cond_broadcast(&cond);
    uintptr_t m = (uintptr_t)&mutex, cv = (uintptr_t)&cond;
    expect("main", "MUTEX_LOCK_ENTRY", m);
    expect("main", "MUTEX_LOCK_EXIT", m);
    expect("main", "MUTEX_UNLOCK", m);
    expect("main", "THREAD_QUEUE_ENQUEUE", cv);
    expect("main", "THREAD_QUEUE_EXTRACT", cv);
    expect("main", "MUTEX_LOCK_EXIT", m);
    expect("main", "MUTEX_UNLOCK", m);
    expect("main", "THREAD_QUEUE_SURRENDER", cv);
    expect("main", "THREAD_QUEUE_SURRENDER_STICKY", cv);
    return (int)(intptr_t)t1_result == EBUSY && spin_busy == EBUSY &&
                   timed == ETIMEDOUT
               ? 0 : 1;
}

/*=====   signals   =====*/

static void *volatile handler_block;

static void on_usr1(int sig, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    handler_block = malloc(77); /* malloc from a signal handler */
    free(handler_block);
    (void)sig;
}

static void on_usr2(int sig)
{
    (void)sig;
}

static int mode_signals(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGUSR2, on_usr2);
    raise(SIGUSR1);
    expect("main", "INTERRUPT_ENTRY", SIGUSR1);
    expect("main", "MALLOC_ENTRY", 77);
    expect("main", "MALLOC_EXIT", (uintptr_t)handler_block);
    expect("main", "FREE_ENTRY", (uintptr_t)handler_block);
    expect("main", "INTERRUPT_EXIT", SIGUSR1);
    raise(SIGUSR2);
    expect("main", "INTERRUPT_ENTRY", SIGUSR2);
    expect("main", "INTERRUPT_EXIT", SIGUSR2);
    /* The program sees its own handlers, and the default for SIGINT. */
    int ok = sigaction(SIGUSR1, NULL, &old) == 0 &&
             old.sa_sigaction == on_usr1 && (old.sa_flags & SA_SIGINFO);
    ok = ok && signal(SIGUSR2, SIG_DFL) == on_usr2;
    ok = ok && sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler == SIG_DFL;
    return ok ? 0 : 1;
}

/*=====   process   =====*/

static int mode_fork(void)
{
    void *a = malloc(111);
    sink = a;
    pid_t pid = fork();
    if (pid == 0) {
        void *b = malloc(222);
        sink = b;
        free(sink);
        exit(4);
    }
    int status;
    waitpid(pid, &status, 0);
    free(sink);
    printf("pid %d\n", (int)pid);
    printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

/* As mode_fork, through the calls that run no atfork handlers: _Fork(),
 * or clone() making a process (@how "_Fork" or "clone"). */
static int clone_child(void *arg)
{
    (void)arg;
    void *b = malloc(222);
    sink = b;
    free(sink);
    exit(4);
}

static int mode_fork_without_handlers(const char *how)
{
    static _Alignas(16) unsigned char child_stack[256 * 1024];
    void *a = malloc(111);
    sink = a;
    pid_t pid;
    if (strcmp(how, "_Fork") == 0) {
        pid = _Fork();
        if (pid == 0)
            clone_child(NULL);
    } else {
        pid = clone(clone_child, child_stack + sizeof child_stack, SIGCHLD,
                    NULL);
    }
    int status;
    waitpid(pid, &status, 0);
    free(sink);
    printf("pid %d\n", (int)pid);
    printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

/* Closes every descriptor but the standard ones, then records. */
static int mode_closeall(void)
{
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    close_range(3, ~0u, 0);
    sink = malloc(333);
    free(sink);
    return 0;
}

static int mode_wait_signal(void)
{
    sink = malloc(12345);
    free(sink);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
    return 0;
}

/*=====   barrier   =====*/

static pthread_barrier_t barrier;
static int barrier_result[2][3];

static void *barrier_t1(void *arg)
{
    (void)arg;
    t1_tid = tid();
    for (int round = 0; round < 3; round++)
        barrier_result[1][round] = pthread_barrier_wait(&barrier);
    return NULL;
}

/* Two threads meet at a barrier three times; main comes 20 ms late to
 * each round. */
static int mode_barrier(void)
{
    int me = tid();
    int r = pthread_barrier_init(&barrier, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, barrier_t1, NULL);
    struct timespec late = { 0, 20 * 1000 * 1000 };
    for (int round = 0; round < 3; round++) {
        nanosleep(&late, NULL);
        barrier_result[0][round] = pthread_barrier_wait(&barrier);
    }
    pthread_join(t, NULL);
    int d = pthread_barrier_destroy(&barrier);
    uintptr_t b = (uintptr_t)&barrier;
    expect("main", "RTEMS_BARRIER_CREATE", b);
    expect("main", "ARG_2", 2);
    expect("main", "RETURN_0", (uintptr_t)r);
    static const char *const who[2] = { "main", "t1" };
    for (int i = 0; i < 2; i++) {
        for (int round = 0; round < 3; round++) {
            expect(who[i], "RTEMS_BARRIER_WAIT", b);
            expect(who[i], "RTEMS_BARRIER_RELEASE", b);
            expect(who[i], "RETURN_0",
                   (uintptr_t)(intptr_t)barrier_result[i][round]);
        }
        if (i == 0)
            expect("main", "RTEMS_BARRIER_DELETE", b);
    }
    (void)d;
    printf("tid t1 %d\n", t1_tid);
    printf("tid main %d\n", me);
    return 0;
}

/* @n lock and unlock pairs of one mutex as fast as they go (3 events a
 * pair): with small rings the drain cannot keep up, and the recording
 * loses events.  With @in_child, in a forked child (its own file); the
 * parent prints "pid N". */
static int mode_flood(long n, int in_child)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pid_t pid = in_child ? fork() : 0;
    if (pid < 0)
        return 1;
    if (pid == 0) {
        for (long i = 0; i < n; i++) {
            pthread_mutex_lock(&m);
            pthread_mutex_unlock(&m);
        }
        if (in_child)
            exit(0);
        return 0;
    }
    int status;
    waitpid(pid, &status, 0);
    printf("pid %d\n", (int)pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    if (strcmp(mode, "io") == 0)
        return mode_io(argc > 2 ? argv[2] : ".");
    if (strcmp(mode, "fortified") == 0)
        return mode_fortified();
    if (strcmp(mode, "barrier") == 0)
        return mode_barrier();
    if (strcmp(mode, "memory") == 0)
        return mode_memory();
    if (strcmp(mode, "locks") == 0)
        return mode_locks();
    if (strcmp(mode, "signals") == 0)
        return mode_signals();
    if (strcmp(mode, "fork") == 0)
        return mode_fork();
    if (strcmp(mode, "_Fork") == 0 || strcmp(mode, "clone") == 0)
        return mode_fork_without_handlers(mode);
    if (strcmp(mode, "closeall") == 0)
        return mode_closeall();
    if (strcmp(mode, "signal") == 0)
        return mode_wait_signal();
    if (strcmp(mode, "exec") == 0) {
        /* This image records a malloc, the next one returns 9. */
        sink = malloc(444);
        free(sink);
        fflush(stdout);
        execl("/proc/self/exe", argv[0], "return", "9", (char *)NULL);
        return 1;
    }
    if (strcmp(mode, "execfail") == 0) {
        /* A failed exec: the image records on, and drains at its exit. */
        execl("/nonexistent/program", "program", (char *)NULL);
        struct timespec pause_ = { 0, 30 * 1000 * 1000 };
        nanosleep(&pause_, NULL); /* the drain thread's turn comes */
        sink = malloc(555);
        free(sink);
        return 0;
    }
    if (strcmp(mode, "exit") == 0) {
        fflush(stdout);
        exit(argc > 2 ? atoi(argv[2]) : 0);
    }
    if (strcmp(mode, "return") == 0)
        return argc > 2 ? atoi(argv[2]) : 0;
    if (strcmp(mode, "linger") == 0) {
        /* A child that floods its rings and outlives this process. */
        pid_t pid = fork();
        if (pid == 0) {
            mode_flood(100000, 0);
            struct timespec linger = { 0, 600 * 1000 * 1000 };
            nanosleep(&linger, NULL);
            exit(0);
        }
        /* Long enough for the child's flood and its drains. */
        struct timespec wait = { 0, 200 * 1000 * 1000 };
        nanosleep(&wait, NULL);
        printf("pid %d\n", (int)pid);
        return 0;
    }
    if (strcmp(mode, "flood") == 0 && argc > 2)
        return mode_flood(atol(argv[2]),
                          argc > 3 && strcmp(argv[3], "fork") == 0);
    return 2;
}
