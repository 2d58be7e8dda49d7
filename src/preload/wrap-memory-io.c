/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Wrappers of the memory and io groups (events: docs/record.md).
 *
 * An entry event carries the call's main argument, ARG_n items with the
 * same time carry argument n; the exit event carries the result, followed
 * by ERRNO when the call failed.
 *
 * dlsym() may allocate before the real allocator is known: those requests
 * are served from a static arena, whose blocks free() and realloc()
 * recognise and never hand to the real allocator.
 */
/* _GNU_SOURCE comes from the build; the wrappers define the plain names,
 * not the 64-bit-offset ones the headers would rename them to. */
#undef _FILE_OFFSET_BITS

#include "preload.h"

#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

/* On 64-bit hosts the *64 functions are the same; 32-bit hosts would need
 * wrappers of their own (not done). */
#define OFF_T_IS_64 (__SIZEOF_LONG__ == 8)

/*=====   Memory   =====*/

DECLARE_REAL(void *, malloc, (size_t));
DECLARE_REAL(void *, calloc, (size_t, size_t));
DECLARE_REAL(void *, realloc, (void *, size_t));
DECLARE_REAL(void, free, (void *));
DECLARE_REAL(int, posix_memalign, (void **, size_t, size_t));
DECLARE_REAL(void *, aligned_alloc, (size_t, size_t));
DECLARE_REAL(void *, mmap, (void *, size_t, int, int, int, off_t));
DECLARE_REAL(int, munmap, (void *, size_t));

#define ARENA_SIZE (64u * 1024u)
static _Alignas(16) unsigned char arena[ARENA_SIZE];
static _Atomic size_t arena_used;

/* One compare: below the arena (NULL too) the difference wraps past
 * ARENA_SIZE. */
static int in_arena(const void *p)
{
    return (uintptr_t)p - (uintptr_t)arena < ARENA_SIZE;
}

/* A block: its size in the 16 bytes before it. */
static void *arena_alloc(size_t size)
{
    size_t need = 16 + ((size + 15) & ~(size_t)15);
    size_t at = atomic_fetch_add(&arena_used, need);
    if (at + need > ARENA_SIZE)
        return NULL;
    memcpy(arena + at, &size, sizeof size);
    return arena + at + 16;
}

static size_t arena_size(const void *p)
{
    size_t size;
    memcpy(&size, (const unsigned char *)p - 16, sizeof size);
    return size;
}

#if defined(FLIGHTREC_WRAP_BUILD)
/* The linker has bound the real allocator: nothing to resolve. */
#define allocator_ready() 1
#define REAL_ALLOC(name) __real_##name
#else
static _Atomic int allocator_resolving;

/* Resolves the four together; allocations dlsym makes meanwhile come from
 * the arena.  Returns 0 while resolving is under way. */
static __attribute__((noinline, cold)) int allocator_resolve(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&allocator_resolving, &expected, 1))
        return 0;
    void *m = preload_resolve("malloc");
    void *c = preload_resolve("calloc");
    void *r = preload_resolve("realloc");
    void *f = preload_resolve("free");
    real_malloc = (void *(*)(size_t))m;
    real_calloc = (void *(*)(size_t, size_t))c;
    real_realloc = (void *(*)(void *, size_t))r;
    real_free = (void (*)(void *))f;
    return 1;
}

/* Inline: every allocator call asks. */
static inline int allocator_ready(void)
{
    return FLIGHTREC_LIKELY(real_free != NULL) ? 1 : allocator_resolve();
}

/* The allocator's functions once allocator_ready(). */
#define REAL_ALLOC(name) real_##name
#endif

void *WRAPPER(malloc)(size_t size)
{
    if (FLIGHTREC_UNLIKELY(!allocator_ready()))
        return arena_alloc(size);
    if (!preload_on(GROUP_MEMORY))
        return REAL_ALLOC(malloc)(size);
    void *p = REAL_ALLOC(malloc)(size);
    rec2(FLIGHTREC_EV_MALLOC_ENTRY, size, FLIGHTREC_EV_MALLOC_EXIT,
         (uintptr_t)p);
    return p;
}

void *WRAPPER(calloc)(size_t n, size_t size)
{
    if (FLIGHTREC_UNLIKELY(!allocator_ready())) {
        if (size != 0 && n > SIZE_MAX / size)
            return NULL;
        return arena_alloc(n * size); /* static memory is zero */
    }
    if (!preload_on(GROUP_MEMORY))
        return REAL_ALLOC(calloc)(n, size);
    void *p = REAL_ALLOC(calloc)(n, size);
    rec3(FLIGHTREC_EV_CALLOC_ENTRY, n, FLIGHTREC_EV_ARG_1, size,
         FLIGHTREC_EV_CALLOC_EXIT, (uintptr_t)p);
    return p;
}

void *WRAPPER(realloc)(void *old, size_t size)
{
    if (FLIGHTREC_UNLIKELY(in_arena(old))) {
        void *p = malloc(size);
        if (p != NULL) {
            size_t keep = arena_size(old);
            memcpy(p, old, keep < size ? keep : size);
        }
        return p;
    }
    if (FLIGHTREC_UNLIKELY(!allocator_ready()))
        return arena_alloc(size);
    if (!preload_on(GROUP_MEMORY))
        return REAL_ALLOC(realloc)(old, size);
    rec2(FLIGHTREC_EV_REALLOC_ENTRY, (uintptr_t)old, FLIGHTREC_EV_ARG_1, size);
    void *p = REAL_ALLOC(realloc)(old, size);
    rec1(FLIGHTREC_EV_REALLOC_EXIT, (uintptr_t)p);
    return p;
}

void WRAPPER(free)(void *p)
{
    if (FLIGHTREC_UNLIKELY(in_arena(p)))
        return;
    if (FLIGHTREC_UNLIKELY(!allocator_ready()))
        return; /* nothing but the arena exists yet */
    if (!preload_on(GROUP_MEMORY)) {
        REAL_ALLOC(free)(p);
        return;
    }
    /* One item: free() returns nothing, so FREE_EXIT would carry nothing
     * at the same time (readers show a free of no duration). */
    rec1(FLIGHTREC_EV_FREE_ENTRY, (uintptr_t)p);
    REAL_ALLOC(free)(p);
}

int WRAPPER(posix_memalign)(void **out, size_t alignment, size_t size)
{
    if (!preload_on(GROUP_MEMORY))
        return REAL(posix_memalign)(out, alignment, size);
    int r = REAL(posix_memalign)(out, alignment, size);
    rec4(FLIGHTREC_EV_POSIX_MEMALIGN_ENTRY, alignment, FLIGHTREC_EV_ARG_2, size,
         FLIGHTREC_EV_POSIX_MEMALIGN_EXIT, r == 0 ? (uintptr_t)*out : 0,
         FLIGHTREC_EV_RETURN_0, (uintptr_t)r);
    return r;
}

void *WRAPPER(aligned_alloc)(size_t alignment, size_t size)
{
    if (!preload_on(GROUP_MEMORY))
        return REAL(aligned_alloc)(alignment, size);
    void *p = REAL(aligned_alloc)(alignment, size);
    rec3(FLIGHTREC_EV_ALIGNED_ALLOC_ENTRY, alignment, FLIGHTREC_EV_ARG_1, size,
         FLIGHTREC_EV_ALIGNED_ALLOC_EXIT, (uintptr_t)p);
    return p;
}

void *WRAPPER(mmap)(void *addr, size_t length, int prot, int flags, int fd,
                    off_t off)
{
    if (!preload_on(GROUP_MEMORY))
        return REAL(mmap)(addr, length, prot, flags, fd, off);
    rec2(FLIGHTREC_EV_MMAP_ENTRY, length, FLIGHTREC_EV_ARG_4, (uintptr_t)fd);
    void *p = REAL(mmap)(addr, length, prot, flags, fd, off);
    rec_result(FLIGHTREC_EV_MMAP_EXIT, (long)(intptr_t)p);
    return p;
}

#if OFF_T_IS_64
void *WRAPPER(mmap64)(void *addr, size_t length, int prot, int flags, int fd,
                      off_t off)
    __attribute__((alias(WRAPPER_STRING(mmap))));
#endif

/* No munmap ids in RTEMS v10: PAGE_FREE (address) with ARG_1 (length). */
int WRAPPER(munmap)(void *addr, size_t length)
{
    if (!preload_on(GROUP_MEMORY))
        return REAL(munmap)(addr, length);
    rec2(FLIGHTREC_EV_PAGE_FREE, (uintptr_t)addr, FLIGHTREC_EV_ARG_1, length);
    return REAL(munmap)(addr, length);
}

/*=====   I/O   =====*/

DECLARE_REAL(int, open, (const char *, int, ...));
DECLARE_REAL(int, openat, (int, const char *, int, ...));
DECLARE_REAL(ssize_t, read, (int, void *, size_t));
DECLARE_REAL(ssize_t, write, (int, const void *, size_t));
DECLARE_REAL(ssize_t, pread, (int, void *, size_t, off_t));
DECLARE_REAL(ssize_t, pwrite, (int, const void *, size_t, off_t));
DECLARE_REAL(ssize_t, readv, (int, const struct iovec *, int));
DECLARE_REAL(ssize_t, writev, (int, const struct iovec *, int));
DECLARE_REAL(int, socket, (int, int, int));
DECLARE_REAL(int, accept, (int, struct sockaddr *, socklen_t *));
DECLARE_REAL(int, accept4, (int, struct sockaddr *, socklen_t *, int));
DECLARE_REAL(int, connect, (int, const struct sockaddr *, socklen_t));
DECLARE_REAL(ssize_t, send, (int, const void *, size_t, int));
DECLARE_REAL(ssize_t, sendto, (int, const void *, size_t, int,
                              const struct sockaddr *, socklen_t));
DECLARE_REAL(ssize_t, sendmsg, (int, const struct msghdr *, int));
DECLARE_REAL(ssize_t, recv, (int, void *, size_t, int));
DECLARE_REAL(ssize_t, recvfrom, (int, void *, size_t, int, struct sockaddr *,
                                socklen_t *));
DECLARE_REAL(ssize_t, recvmsg, (int, struct msghdr *, int));
DECLARE_REAL(int, poll, (struct pollfd *, nfds_t, int));
DECLARE_REAL(int, select,
             (int, fd_set *, fd_set *, fd_set *, struct timeval *));
DECLARE_REAL(int, epoll_wait, (int, struct epoll_event *, int, int));
DECLARE_REAL(int, ppoll, (struct pollfd *, nfds_t, const struct timespec *,
                          const sigset_t *));
DECLARE_REAL(int, epoll_pwait, (int, struct epoll_event *, int, int,
                                const sigset_t *));

static size_t iov_bytes(const struct iovec *iov, int count)
{
    size_t total = 0;
    for (int i = 0; i < count; i++)
        total += iov[i].iov_len;
    return total;
}

/* open(path, flags, mode): OPEN_ENTRY (flags), ARG_2 (mode). */
static int open_mode(int flags, va_list ap)
{
    if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE)
        return va_arg(ap, int);
    return 0;
}

int WRAPPER(open)(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = open_mode(flags, ap);
    va_end(ap);
    if (!preload_on(GROUP_IO))
        return REAL(open)(path, flags, mode);
    rec2(FLIGHTREC_EV_OPEN_ENTRY, (uintptr_t)flags, FLIGHTREC_EV_ARG_2,
         (uintptr_t)mode);
    int r = REAL(open)(path, flags, mode);
    rec_result(FLIGHTREC_EV_OPEN_EXIT, r);
    return r;
}

int WRAPPER(open64)(const char *path, int flags, ...)
    __attribute__((alias(WRAPPER_STRING(open))));

int WRAPPER(openat)(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = open_mode(flags, ap);
    va_end(ap);
    if (!preload_on(GROUP_IO))
        return REAL(openat)(dirfd, path, flags, mode);
    rec2(FLIGHTREC_EV_OPEN_ENTRY, (uintptr_t)flags, FLIGHTREC_EV_ARG_2,
         (uintptr_t)mode);
    int r = REAL(openat)(dirfd, path, flags, mode);
    rec_result(FLIGHTREC_EV_OPEN_EXIT, r);
    return r;
}

int WRAPPER(openat64)(int dirfd, const char *path, int flags, ...)
    __attribute__((alias(WRAPPER_STRING(openat))));

ssize_t WRAPPER(read)(int fd, void *buf, size_t n)
{
    if (!preload_on(GROUP_IO))
        return REAL(read)(fd, buf, n);
    rec2(FLIGHTREC_EV_READ_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n);
    ssize_t r = REAL(read)(fd, buf, n);
    rec_result(FLIGHTREC_EV_READ_EXIT, r);
    return r;
}

ssize_t WRAPPER(write)(int fd, const void *buf, size_t n)
{
    if (!preload_on(GROUP_IO))
        return REAL(write)(fd, buf, n);
    rec2(FLIGHTREC_EV_WRITE_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n);
    ssize_t r = REAL(write)(fd, buf, n);
    rec_result(FLIGHTREC_EV_WRITE_EXIT, r);
    return r;
}

/* No pread/pwrite ids: READ/WRITE with the offset as ARG_3. */
ssize_t WRAPPER(pread)(int fd, void *buf, size_t n, off_t off)
{
    if (!preload_on(GROUP_IO))
        return REAL(pread)(fd, buf, n, off);
    rec3(FLIGHTREC_EV_READ_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n,
         FLIGHTREC_EV_ARG_3, (uintptr_t)off);
    ssize_t r = REAL(pread)(fd, buf, n, off);
    rec_result(FLIGHTREC_EV_READ_EXIT, r);
    return r;
}

#if OFF_T_IS_64
ssize_t WRAPPER(pread64)(int fd, void *buf, size_t n, off_t off)
    __attribute__((alias(WRAPPER_STRING(pread))));
#endif

ssize_t WRAPPER(pwrite)(int fd, const void *buf, size_t n, off_t off)
{
    if (!preload_on(GROUP_IO))
        return REAL(pwrite)(fd, buf, n, off);
    rec3(FLIGHTREC_EV_WRITE_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n,
         FLIGHTREC_EV_ARG_3, (uintptr_t)off);
    ssize_t r = REAL(pwrite)(fd, buf, n, off);
    rec_result(FLIGHTREC_EV_WRITE_EXIT, r);
    return r;
}

#if OFF_T_IS_64
ssize_t WRAPPER(pwrite64)(int fd, const void *buf, size_t n, off_t off)
    __attribute__((alias(WRAPPER_STRING(pwrite))));
#endif

ssize_t WRAPPER(readv)(int fd, const struct iovec *iov, int count)
{
    if (!preload_on(GROUP_IO))
        return REAL(readv)(fd, iov, count);
    rec2(FLIGHTREC_EV_READV_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2,
         iov_bytes(iov, count));
    ssize_t r = REAL(readv)(fd, iov, count);
    rec_result(FLIGHTREC_EV_READV_EXIT, r);
    return r;
}

ssize_t WRAPPER(writev)(int fd, const struct iovec *iov, int count)
{
    if (!preload_on(GROUP_IO))
        return REAL(writev)(fd, iov, count);
    rec2(FLIGHTREC_EV_WRITEV_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2,
         iov_bytes(iov, count));
    ssize_t r = REAL(writev)(fd, iov, count);
    rec_result(FLIGHTREC_EV_WRITEV_EXIT, r);
    return r;
}

int WRAPPER(socket)(int domain, int type, int protocol)
{
    if (!preload_on(GROUP_IO))
        return REAL(socket)(domain, type, protocol);
    rec3(FLIGHTREC_EV_SOCKET_ENTRY, (uintptr_t)domain, FLIGHTREC_EV_ARG_1,
         (uintptr_t)type, FLIGHTREC_EV_ARG_2, (uintptr_t)protocol);
    int r = REAL(socket)(domain, type, protocol);
    rec_result(FLIGHTREC_EV_SOCKET_EXIT, r);
    return r;
}

int WRAPPER(accept)(int fd, struct sockaddr *addr, socklen_t *len)
{
    if (!preload_on(GROUP_IO))
        return REAL(accept)(fd, addr, len);
    rec1(FLIGHTREC_EV_ACCEPT_ENTRY, (uintptr_t)fd);
    int r = REAL(accept)(fd, addr, len);
    rec_result(FLIGHTREC_EV_ACCEPT_EXIT, r);
    return r;
}

int WRAPPER(accept4)(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    if (!preload_on(GROUP_IO))
        return REAL(accept4)(fd, addr, len, flags);
    rec1(FLIGHTREC_EV_ACCEPT_ENTRY, (uintptr_t)fd);
    int r = REAL(accept4)(fd, addr, len, flags);
    rec_result(FLIGHTREC_EV_ACCEPT_EXIT, r);
    return r;
}

int WRAPPER(connect)(int fd, const struct sockaddr *addr, socklen_t len)
{
    if (!preload_on(GROUP_IO))
        return REAL(connect)(fd, addr, len);
    rec1(FLIGHTREC_EV_CONNECT_ENTRY, (uintptr_t)fd);
    int r = REAL(connect)(fd, addr, len);
    rec_result(FLIGHTREC_EV_CONNECT_EXIT, r);
    return r;
}

ssize_t WRAPPER(send)(int fd, const void *buf, size_t n, int flags)
{
    if (!preload_on(GROUP_IO))
        return REAL(send)(fd, buf, n, flags);
    rec2(FLIGHTREC_EV_SEND_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n);
    ssize_t r = REAL(send)(fd, buf, n, flags);
    rec_result(FLIGHTREC_EV_SEND_EXIT, r);
    return r;
}

ssize_t WRAPPER(sendto)(int fd, const void *buf, size_t n, int flags,
                        const struct sockaddr *addr, socklen_t len)
{
    if (!preload_on(GROUP_IO))
        return REAL(sendto)(fd, buf, n, flags, addr, len);
    rec2(FLIGHTREC_EV_SENDTO_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n);
    ssize_t r = REAL(sendto)(fd, buf, n, flags, addr, len);
    rec_result(FLIGHTREC_EV_SENDTO_EXIT, r);
    return r;
}

ssize_t WRAPPER(sendmsg)(int fd, const struct msghdr *msg, int flags)
{
    if (!preload_on(GROUP_IO))
        return REAL(sendmsg)(fd, msg, flags);
    rec2(FLIGHTREC_EV_SENDMSG_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2,
         iov_bytes(msg->msg_iov, (int)msg->msg_iovlen));
    ssize_t r = REAL(sendmsg)(fd, msg, flags);
    rec_result(FLIGHTREC_EV_SENDMSG_EXIT, r);
    return r;
}

ssize_t WRAPPER(recv)(int fd, void *buf, size_t n, int flags)
{
    if (!preload_on(GROUP_IO))
        return REAL(recv)(fd, buf, n, flags);
    rec2(FLIGHTREC_EV_RECV_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n);
    ssize_t r = REAL(recv)(fd, buf, n, flags);
    rec_result(FLIGHTREC_EV_RECV_EXIT, r);
    return r;
}

ssize_t WRAPPER(recvfrom)(int fd, void *buf, size_t n, int flags,
                          struct sockaddr *addr, socklen_t *len)
{
    if (!preload_on(GROUP_IO))
        return REAL(recvfrom)(fd, buf, n, flags, addr, len);
    rec2(FLIGHTREC_EV_RECVFROM_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n);
    ssize_t r = REAL(recvfrom)(fd, buf, n, flags, addr, len);
    rec_result(FLIGHTREC_EV_RECVFROM_EXIT, r);
    return r;
}

ssize_t WRAPPER(recvmsg)(int fd, struct msghdr *msg, int flags)
{
    if (!preload_on(GROUP_IO))
        return REAL(recvmsg)(fd, msg, flags);
    rec2(FLIGHTREC_EV_RECVMSG_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2,
         iov_bytes(msg->msg_iov, (int)msg->msg_iovlen));
    ssize_t r = REAL(recvmsg)(fd, msg, flags);
    rec_result(FLIGHTREC_EV_RECVMSG_EXIT, r);
    return r;
}

int WRAPPER(poll)(struct pollfd *fds, nfds_t n, int timeout)
{
    if (!preload_on(GROUP_IO))
        return REAL(poll)(fds, n, timeout);
    rec2(FLIGHTREC_EV_POLL_ENTRY, (uintptr_t)n, FLIGHTREC_EV_ARG_2,
         (uintptr_t)timeout);
    int r = REAL(poll)(fds, n, timeout);
    rec_result(FLIGHTREC_EV_POLL_EXIT, r);
    return r;
}

int WRAPPER(select)(int n, fd_set *rd, fd_set *wr, fd_set *ex,
                    struct timeval *timeout)
{
    if (!preload_on(GROUP_IO))
        return REAL(select)(n, rd, wr, ex, timeout);
    rec1(FLIGHTREC_EV_SELECT_ENTRY, (uintptr_t)n);
    int r = REAL(select)(n, rd, wr, ex, timeout);
    rec_result(FLIGHTREC_EV_SELECT_EXIT, r);
    return r;
}

/* No epoll ids in RTEMS v10: BSD's equivalent, KEVENT (epoll fd), with
 * ARG_2 (maxevents). */
int WRAPPER(epoll_wait)(int epfd, struct epoll_event *events, int max,
                        int timeout)
{
    if (!preload_on(GROUP_IO))
        return REAL(epoll_wait)(epfd, events, max, timeout);
    rec2(FLIGHTREC_EV_KEVENT_ENTRY, (uintptr_t)epfd, FLIGHTREC_EV_ARG_2,
         (uintptr_t)max);
    int r = REAL(epoll_wait)(epfd, events, max, timeout);
    rec_result(FLIGHTREC_EV_KEVENT_EXIT, r);
    return r;
}

/* ppoll's timeout in milliseconds, as poll takes it: -1 for none, and
 * what does not fit an int as INT_MAX. */
static int timeout_ms(const struct timespec *t)
{
    if (t == NULL)
        return -1;
    long long ms = (long long)t->tv_sec * 1000 + t->tv_nsec / 1000000;
    return ms > INT_MAX ? INT_MAX : ms < 0 ? 0 : (int)ms;
}

/* As poll: POLL_ENTRY (count) + ARG_2 (timeout, ms), POLL_EXIT. */
int WRAPPER(ppoll)(struct pollfd *fds, nfds_t n, const struct timespec *t,
                   const sigset_t *mask)
{
    if (!preload_on(GROUP_IO))
        return REAL(ppoll)(fds, n, t, mask);
    rec2(FLIGHTREC_EV_POLL_ENTRY, (uintptr_t)n, FLIGHTREC_EV_ARG_2,
         (uintptr_t)timeout_ms(t));
    int r = REAL(ppoll)(fds, n, t, mask);
    rec_result(FLIGHTREC_EV_POLL_EXIT, r);
    return r;
}

/* As epoll_wait. */
int WRAPPER(epoll_pwait)(int epfd, struct epoll_event *events, int max,
                         int timeout, const sigset_t *mask)
{
    if (!preload_on(GROUP_IO))
        return REAL(epoll_pwait)(epfd, events, max, timeout, mask);
    rec2(FLIGHTREC_EV_KEVENT_ENTRY, (uintptr_t)epfd, FLIGHTREC_EV_ARG_2,
         (uintptr_t)max);
    int r = REAL(epoll_pwait)(epfd, events, max, timeout, mask);
    rec_result(FLIGHTREC_EV_KEVENT_EXIT, r);
    return r;
}

/*=====   _FORTIFY_SOURCE entry points   =====*/

/*
 * A program built with -D_FORTIFY_SOURCE (as Debian builds its packages)
 * calls these glibc entry points instead of open() without a constant
 * flags argument, and instead of read(), pread(), recv(), recvfrom(),
 * poll() and ppoll() into buffers of a size the compiler knows.  Each is recorded as
 * the call it stands for; the check itself stays glibc's.
 */
DECLARE_REAL(int, __open_2, (const char *, int));
DECLARE_REAL(int, __openat_2, (int, const char *, int));
DECLARE_REAL(ssize_t, __read_chk, (int, void *, size_t, size_t));
DECLARE_REAL(ssize_t, __pread_chk, (int, void *, size_t, off_t, size_t));
DECLARE_REAL(ssize_t, __recv_chk, (int, void *, size_t, size_t, int));
DECLARE_REAL(ssize_t, __recvfrom_chk, (int, void *, size_t, size_t, int,
                                      struct sockaddr *, socklen_t *));
DECLARE_REAL(int, __poll_chk, (struct pollfd *, nfds_t, int, size_t));
DECLARE_REAL(int, __ppoll_chk, (struct pollfd *, nfds_t,
                                const struct timespec *, const sigset_t *,
                                size_t));

/* Their prototypes, which glibc's headers give only to fortified builds. */
int WRAPPER(__open_2)(const char *path, int flags);
int WRAPPER(__open64_2)(const char *path, int flags);
int WRAPPER(__openat_2)(int dirfd, const char *path, int flags);
int WRAPPER(__openat64_2)(int dirfd, const char *path, int flags);
ssize_t WRAPPER(__read_chk)(int fd, void *buf, size_t n, size_t size);
ssize_t WRAPPER(__pread_chk)(int fd, void *buf, size_t n, off_t off,
                             size_t size);
ssize_t WRAPPER(__pread64_chk)(int fd, void *buf, size_t n, off_t off,
                               size_t size);
ssize_t WRAPPER(__recv_chk)(int fd, void *buf, size_t n, size_t size,
                            int flags);
ssize_t WRAPPER(__recvfrom_chk)(int fd, void *buf, size_t n, size_t size,
                                int flags, struct sockaddr *addr,
                                socklen_t *len);
int WRAPPER(__poll_chk)(struct pollfd *fds, nfds_t n, int timeout,
                        size_t size);
int WRAPPER(__ppoll_chk)(struct pollfd *fds, nfds_t n,
                         const struct timespec *t, const sigset_t *mask,
                         size_t size);

/* No mode: these are the opens without O_CREAT or O_TMPFILE. */
int WRAPPER(__open_2)(const char *path, int flags)
{
    if (!preload_on(GROUP_IO))
        return REAL(__open_2)(path, flags);
    rec2(FLIGHTREC_EV_OPEN_ENTRY, (uintptr_t)flags, FLIGHTREC_EV_ARG_2, 0);
    int r = REAL(__open_2)(path, flags);
    rec_result(FLIGHTREC_EV_OPEN_EXIT, r);
    return r;
}

int WRAPPER(__open64_2)(const char *path, int flags)
    __attribute__((alias(WRAPPER_STRING(__open_2))));

int WRAPPER(__openat_2)(int dirfd, const char *path, int flags)
{
    if (!preload_on(GROUP_IO))
        return REAL(__openat_2)(dirfd, path, flags);
    rec2(FLIGHTREC_EV_OPEN_ENTRY, (uintptr_t)flags, FLIGHTREC_EV_ARG_2, 0);
    int r = REAL(__openat_2)(dirfd, path, flags);
    rec_result(FLIGHTREC_EV_OPEN_EXIT, r);
    return r;
}

int WRAPPER(__openat64_2)(int dirfd, const char *path, int flags)
    __attribute__((alias(WRAPPER_STRING(__openat_2))));

ssize_t WRAPPER(__read_chk)(int fd, void *buf, size_t n, size_t size)
{
    if (!preload_on(GROUP_IO))
        return REAL(__read_chk)(fd, buf, n, size);
    rec2(FLIGHTREC_EV_READ_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n);
    ssize_t r = REAL(__read_chk)(fd, buf, n, size);
    rec_result(FLIGHTREC_EV_READ_EXIT, r);
    return r;
}

ssize_t WRAPPER(__pread_chk)(int fd, void *buf, size_t n, off_t off,
                             size_t size)
{
    if (!preload_on(GROUP_IO))
        return REAL(__pread_chk)(fd, buf, n, off, size);
    rec3(FLIGHTREC_EV_READ_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n,
         FLIGHTREC_EV_ARG_3, (uintptr_t)off);
    ssize_t r = REAL(__pread_chk)(fd, buf, n, off, size);
    rec_result(FLIGHTREC_EV_READ_EXIT, r);
    return r;
}

#if OFF_T_IS_64
ssize_t WRAPPER(__pread64_chk)(int fd, void *buf, size_t n, off_t off,
                               size_t size)
    __attribute__((alias(WRAPPER_STRING(__pread_chk))));
#endif

ssize_t WRAPPER(__recv_chk)(int fd, void *buf, size_t n, size_t size,
                            int flags)
{
    if (!preload_on(GROUP_IO))
        return REAL(__recv_chk)(fd, buf, n, size, flags);
    rec2(FLIGHTREC_EV_RECV_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n);
    ssize_t r = REAL(__recv_chk)(fd, buf, n, size, flags);
    rec_result(FLIGHTREC_EV_RECV_EXIT, r);
    return r;
}

ssize_t WRAPPER(__recvfrom_chk)(int fd, void *buf, size_t n, size_t size,
                                int flags, struct sockaddr *addr,
                                socklen_t *len)
{
    if (!preload_on(GROUP_IO))
        return REAL(__recvfrom_chk)(fd, buf, n, size, flags, addr, len);
    rec2(FLIGHTREC_EV_RECVFROM_ENTRY, (uintptr_t)fd, FLIGHTREC_EV_ARG_2, n);
    ssize_t r = REAL(__recvfrom_chk)(fd, buf, n, size, flags, addr, len);
    rec_result(FLIGHTREC_EV_RECVFROM_EXIT, r);
    return r;
}

int WRAPPER(__poll_chk)(struct pollfd *fds, nfds_t n, int timeout,
                        size_t size)
{
    if (!preload_on(GROUP_IO))
        return REAL(__poll_chk)(fds, n, timeout, size);
    rec2(FLIGHTREC_EV_POLL_ENTRY, (uintptr_t)n, FLIGHTREC_EV_ARG_2,
         (uintptr_t)timeout);
    int r = REAL(__poll_chk)(fds, n, timeout, size);
    rec_result(FLIGHTREC_EV_POLL_EXIT, r);
    return r;
}

int WRAPPER(__ppoll_chk)(struct pollfd *fds, nfds_t n,
                         const struct timespec *t, const sigset_t *mask,
                         size_t size)
{
#if defined(FLIGHTREC_WRAP_BUILD)
    /* Static glibc's __ppoll_chk calls ppoll by its name, which --wrap
     * sends to the wrapper above: it records the call. */
    return REAL(__ppoll_chk)(fds, n, t, mask, size);
#else
    if (!preload_on(GROUP_IO))
        return REAL(__ppoll_chk)(fds, n, t, mask, size);
    rec2(FLIGHTREC_EV_POLL_ENTRY, (uintptr_t)n, FLIGHTREC_EV_ARG_2,
         (uintptr_t)timeout_ms(t));
    int r = REAL(__ppoll_chk)(fds, n, t, mask, size);
    rec_result(FLIGHTREC_EV_POLL_EXIT, r);
    return r;
#endif
}
