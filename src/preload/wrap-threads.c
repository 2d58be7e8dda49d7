/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Wrappers of the threads and locks groups (events: docs/record.md).
 *
 * Locks: MUTEX_LOCK_ENTRY (lock address) is every attempt; what was
 * acquired says the kind: MUTEX_LOCK_EXIT an exclusive hold (mutex, write
 * lock), THREAD_RESOURCE_OBTAIN a shared hold (read lock),
 * RTEMS_SEMAPHORE_OBTAIN a semaphore; MUTEX_TRYLOCK_FAIL an attempt that
 * failed.  Barriers: RTEMS_BARRIER_WAIT is the arrival, RTEMS_BARRIER_RELEASE
 * the way out (with the call's result), a wait that nobody holds after.  Releases are recorded before the real release, so that another
 * thread's acquisition never appears to come first.
 */
/* _GNU_SOURCE comes from the build; the wrappers define the plain names,
 * not the 64-bit-offset ones the headers would rename them to. */
#undef _FILE_OFFSET_BITS

#include "preload.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>

DECLARE_REAL(int, pthread_create, (pthread_t *, const pthread_attr_t *,
                                    void *(*)(void *), void *));
DECLARE_REAL(void, pthread_exit, (void *)) __attribute__((noreturn));
DECLARE_REAL(int, pthread_setname_np, (pthread_t, const char *));
DECLARE_REAL(int, pthread_mutex_lock, (pthread_mutex_t *));
DECLARE_REAL(int, pthread_mutex_trylock, (pthread_mutex_t *));
DECLARE_REAL(int, pthread_mutex_unlock, (pthread_mutex_t *));
DECLARE_REAL(int, pthread_mutex_timedlock, (pthread_mutex_t *,
                                            const struct timespec *));
DECLARE_REAL(int, pthread_spin_lock, (pthread_spinlock_t *));
DECLARE_REAL(int, pthread_spin_trylock, (pthread_spinlock_t *));
DECLARE_REAL(int, pthread_spin_unlock, (pthread_spinlock_t *));
DECLARE_REAL(int, pthread_rwlock_rdlock, (pthread_rwlock_t *));
DECLARE_REAL(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t *));
DECLARE_REAL(int, pthread_rwlock_wrlock, (pthread_rwlock_t *));
DECLARE_REAL(int, pthread_rwlock_trywrlock, (pthread_rwlock_t *));
DECLARE_REAL(int, pthread_rwlock_unlock, (pthread_rwlock_t *));
DECLARE_REAL(int, pthread_cond_wait, (pthread_cond_t *, pthread_mutex_t *));
DECLARE_REAL(int, pthread_cond_timedwait, (pthread_cond_t *, pthread_mutex_t *,
                                           const struct timespec *));
DECLARE_REAL(int, pthread_cond_signal, (pthread_cond_t *));
DECLARE_REAL(int, pthread_cond_broadcast, (pthread_cond_t *));
DECLARE_REAL(int, sem_wait, (sem_t *));
DECLARE_REAL(int, sem_trywait, (sem_t *));
DECLARE_REAL(int, sem_timedwait, (sem_t *, const struct timespec *));
DECLARE_REAL(int, sem_post, (sem_t *));
DECLARE_REAL(int, pthread_barrier_init, (pthread_barrier_t *,
                                         const pthread_barrierattr_t *,
                                         unsigned));
DECLARE_REAL(int, pthread_barrier_wait, (pthread_barrier_t *));
DECLARE_REAL(int, pthread_barrier_destroy, (pthread_barrier_t *));

/*=====   Thread ids by pthread_t, for names given to other threads   =====*/

#define TID_SLOTS 1024u
static struct { _Atomic uintptr_t thread; _Atomic int tid; } tid_table[TID_SLOTS];

static size_t tid_slot(uintptr_t thread)
{
    return (size_t)((thread * 0x9e3779b97f4a7c15ull) >> 54) & (TID_SLOTS - 1);
}

static void tid_remember(uintptr_t thread, int tid)
{
    size_t s = tid_slot(thread);
    for (size_t i = 0; i < TID_SLOTS; i++, s = (s + 1) & (TID_SLOTS - 1)) {
        uintptr_t cur = atomic_load(&tid_table[s].thread);
        if (cur == thread ||
            (cur == 0 && atomic_compare_exchange_strong(&tid_table[s].thread,
                                                        &cur, thread)) ||
            cur == thread) {
            atomic_store(&tid_table[s].tid, tid);
            return;
        }
    }
}

static int tid_lookup(uintptr_t thread)
{
    size_t s = tid_slot(thread);
    for (size_t i = 0; i < TID_SLOTS; i++, s = (s + 1) & (TID_SLOTS - 1)) {
        uintptr_t cur = atomic_load(&tid_table[s].thread);
        if (cur == thread)
            return atomic_load(&tid_table[s].tid);
        if (cur == 0)
            return 0;
    }
    return 0;
}

/*=====   Threads   =====*/

/* On the creator's stack until the new thread has taken its copy and
 * posted `started`. */
struct thread_start {
    void *(*fn)(void *);
    void *arg;
    int creator;
    int tid;
    sem_t started;
};

static _Thread_local int exit_recorded __attribute__((tls_model("initial-exec")));

static void record_thread_exit(void)
{
    if (!exit_recorded && preload_on(GROUP_THREADS)) {
        exit_recorded = 1;
        rec1(FLIGHTREC_EV_THREAD_EXIT, (uintptr_t)preload_tid());
    }
}

static void *thread_main(void *p)
{
    struct thread_start *start = p;
    void *(*fn)(void *) = start->fn;
    void *arg = start->arg;
    int creator = start->creator;
    int me = preload_tid();
    tid_remember((uintptr_t)pthread_self(), me);
    start->tid = me;
    REAL(sem_post)(&start->started); /* start is gone after this */
    rec1(FLIGHTREC_EV_THREAD_START, (uintptr_t)creator);
    void *result = fn(arg);
    record_thread_exit();
    return result;
}

int WRAPPER(pthread_create)(pthread_t *thread, const pthread_attr_t *attr,
                            void *(*fn)(void *), void *arg)
{
    if (!preload_on(GROUP_THREADS))
        return REAL(pthread_create)(thread, attr, fn, arg);
    struct thread_start start = {
        .fn = fn, .arg = arg, .creator = preload_tid(), .tid = 0
    };
    sem_init(&start.started, 0, 0);
    int r = REAL(pthread_create)(thread, attr, thread_main, &start);
    if (r == 0) {
        /* Wait for the thread's id: THREAD_CREATE names the new thread. */
        while (REAL(sem_wait)(&start.started) != 0 && errno == EINTR)
            ;
        rec1(FLIGHTREC_EV_THREAD_CREATE, (uintptr_t)start.tid);
    }
    sem_destroy(&start.started);
    return r;
}

void WRAPPER(pthread_exit)(void *result)
{
    record_thread_exit();
    REAL(pthread_exit)(result);
}

int WRAPPER(pthread_setname_np)(pthread_t thread, const char *name)
{
    int r = REAL(pthread_setname_np)(thread, name);
    if (r == 0 && preload_on(GROUP_THREADS)) {
        int tid = pthread_equal(thread, pthread_self())
                      ? preload_tid() : tid_lookup((uintptr_t)thread);
        rec1(FLIGHTREC_EV_THREAD_SET_NAME, (uintptr_t)tid);
    }
    return r;
}

/*=====   Mutexes   =====*/

/*
 * A blocking acquisition tries first.  Taken at once, the attempt and the
 * acquisition are one record: two items, one time (no wait, and one
 * counter read instead of two).  Busy, the attempt is recorded before the
 * blocking call and its outcome after it, so that the wait is exact.
 * Errors other than "busy" are what the blocking call would return too
 * (the try fails the same way); errno is left as the program's call leaves
 * it.
 */
#define ACQUIRE(obj, try_call, busy, blocking_call, attempt_ev, got_ev)    \
    do {                                                                  \
        int r_ = (try_call);                                              \
        if (FLIGHTREC_LIKELY(r_ != (busy))) {                             \
            rec2((attempt_ev), (uintptr_t)(obj),                          \
                 r_ == 0 ? (got_ev) : FLIGHTREC_EV_MUTEX_TRYLOCK_FAIL,    \
                 (uintptr_t)(obj));                                       \
            return r_;                                                    \
        }                                                                 \
        rec1((attempt_ev), (uintptr_t)(obj));                             \
        r_ = (blocking_call);                                             \
        rec1(r_ == 0 ? (got_ev) : FLIGHTREC_EV_MUTEX_TRYLOCK_FAIL,        \
             (uintptr_t)(obj));                                           \
        return r_;                                                        \
    } while (0)

int WRAPPER(pthread_mutex_lock)(pthread_mutex_t *m)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_mutex_lock)(m);
    ACQUIRE(m, REAL(pthread_mutex_trylock)(m), EBUSY,
            REAL(pthread_mutex_lock)(m), FLIGHTREC_EV_MUTEX_LOCK_ENTRY,
            FLIGHTREC_EV_MUTEX_LOCK_EXIT);
}

int WRAPPER(pthread_mutex_trylock)(pthread_mutex_t *m)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_mutex_trylock)(m);
    int r = REAL(pthread_mutex_trylock)(m);
    rec1(r == 0 ? FLIGHTREC_EV_MUTEX_LOCK_EXIT : FLIGHTREC_EV_MUTEX_TRYLOCK_FAIL,
         (uintptr_t)m);
    return r;
}

int WRAPPER(pthread_mutex_unlock)(pthread_mutex_t *m)
{
    if (preload_on(GROUP_LOCKS))
        rec1(FLIGHTREC_EV_MUTEX_UNLOCK, (uintptr_t)m);
    return REAL(pthread_mutex_unlock)(m);
}

int WRAPPER(pthread_mutex_timedlock)(pthread_mutex_t *m,
                                     const struct timespec *abstime)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_mutex_timedlock)(m, abstime);
    ACQUIRE(m, REAL(pthread_mutex_trylock)(m), EBUSY,
            REAL(pthread_mutex_timedlock)(m, abstime),
            FLIGHTREC_EV_MUTEX_LOCK_ENTRY, FLIGHTREC_EV_MUTEX_LOCK_EXIT);
}

/*=====   Spinlocks: RTEMS's ISR locks are its spinlocks   =====*/

int WRAPPER(pthread_spin_lock)(pthread_spinlock_t *l)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_spin_lock)(l);
    ACQUIRE(l, REAL(pthread_spin_trylock)(l), EBUSY,
            REAL(pthread_spin_lock)(l), FLIGHTREC_EV_ISR_LOCK_ACQUIRE_ENTRY,
            FLIGHTREC_EV_ISR_LOCK_ACQUIRE_EXIT);
}

int WRAPPER(pthread_spin_trylock)(pthread_spinlock_t *l)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_spin_trylock)(l);
    int r = REAL(pthread_spin_trylock)(l);
    rec1(r == 0 ? FLIGHTREC_EV_ISR_LOCK_ACQUIRE_EXIT
                : FLIGHTREC_EV_MUTEX_TRYLOCK_FAIL, (uintptr_t)l);
    return r;
}

int WRAPPER(pthread_spin_unlock)(pthread_spinlock_t *l)
{
    if (preload_on(GROUP_LOCKS))
        rec1(FLIGHTREC_EV_ISR_LOCK_RELEASE, (uintptr_t)l);
    return REAL(pthread_spin_unlock)(l);
}

/*=====   Read-write locks   =====*/

int WRAPPER(pthread_rwlock_rdlock)(pthread_rwlock_t *l)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_rwlock_rdlock)(l);
    ACQUIRE(l, REAL(pthread_rwlock_tryrdlock)(l), EBUSY,
            REAL(pthread_rwlock_rdlock)(l), FLIGHTREC_EV_MUTEX_LOCK_ENTRY,
            FLIGHTREC_EV_THREAD_RESOURCE_OBTAIN);
}

int WRAPPER(pthread_rwlock_tryrdlock)(pthread_rwlock_t *l)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_rwlock_tryrdlock)(l);
    int r = REAL(pthread_rwlock_tryrdlock)(l);
    rec1(r == 0 ? FLIGHTREC_EV_THREAD_RESOURCE_OBTAIN
                : FLIGHTREC_EV_MUTEX_TRYLOCK_FAIL, (uintptr_t)l);
    return r;
}

int WRAPPER(pthread_rwlock_wrlock)(pthread_rwlock_t *l)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_rwlock_wrlock)(l);
    ACQUIRE(l, REAL(pthread_rwlock_trywrlock)(l), EBUSY,
            REAL(pthread_rwlock_wrlock)(l), FLIGHTREC_EV_MUTEX_LOCK_ENTRY,
            FLIGHTREC_EV_MUTEX_LOCK_EXIT);
}

int WRAPPER(pthread_rwlock_trywrlock)(pthread_rwlock_t *l)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_rwlock_trywrlock)(l);
    int r = REAL(pthread_rwlock_trywrlock)(l);
    rec1(r == 0 ? FLIGHTREC_EV_MUTEX_LOCK_EXIT : FLIGHTREC_EV_MUTEX_TRYLOCK_FAIL,
         (uintptr_t)l);
    return r;
}

int WRAPPER(pthread_rwlock_unlock)(pthread_rwlock_t *l)
{
    if (preload_on(GROUP_LOCKS)) {
        /* glibc keeps the writer's thread id in the lock: a write hold
         * ends as a mutex's, a read hold as a shared resource's. */
        int writer = l->__data.__cur_writer == preload_tid();
        rec1(writer ? FLIGHTREC_EV_MUTEX_UNLOCK
                    : FLIGHTREC_EV_THREAD_RESOURCE_RELEASE, (uintptr_t)l);
    }
    return REAL(pthread_rwlock_unlock)(l);
}

/*=====   Condition variables   =====*/

/* A wait releases the mutex and blocks on the condition (one record), then
 * leaves the condition holding the mutex again (one record). */
int WRAPPER(pthread_cond_wait)(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_cond_wait)(c, m);
    rec2(FLIGHTREC_EV_MUTEX_UNLOCK, (uintptr_t)m,
         FLIGHTREC_EV_THREAD_QUEUE_ENQUEUE, (uintptr_t)c);
    int r = REAL(pthread_cond_wait)(c, m);
    rec2(FLIGHTREC_EV_THREAD_QUEUE_EXTRACT, (uintptr_t)c,
         FLIGHTREC_EV_MUTEX_LOCK_EXIT, (uintptr_t)m);
    return r;
}

int WRAPPER(pthread_cond_timedwait)(pthread_cond_t *c, pthread_mutex_t *m,
                                    const struct timespec *abstime)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_cond_timedwait)(c, m, abstime);
    rec2(FLIGHTREC_EV_MUTEX_UNLOCK, (uintptr_t)m,
         FLIGHTREC_EV_THREAD_QUEUE_ENQUEUE, (uintptr_t)c);
    int r = REAL(pthread_cond_timedwait)(c, m, abstime);
    rec2(FLIGHTREC_EV_THREAD_QUEUE_EXTRACT, (uintptr_t)c,
         FLIGHTREC_EV_MUTEX_LOCK_EXIT, (uintptr_t)m);
    return r;
}

int WRAPPER(pthread_cond_signal)(pthread_cond_t *c)
{
    if (preload_on(GROUP_LOCKS))
        rec1(FLIGHTREC_EV_THREAD_QUEUE_SURRENDER, (uintptr_t)c);
    return REAL(pthread_cond_signal)(c);
}

int WRAPPER(pthread_cond_broadcast)(pthread_cond_t *c)
{
    if (preload_on(GROUP_LOCKS))
        rec1(FLIGHTREC_EV_THREAD_QUEUE_SURRENDER_STICKY, (uintptr_t)c);
    return REAL(pthread_cond_broadcast)(c);
}

/*=====   Semaphores   =====*/

/* sem_trywait() first, as ACQUIRE(); it reports "busy" as -1 with errno
 * EAGAIN, which the blocking call must not inherit. */
static int sem_try(sem_t *s)
{
    int saved = errno;
    int r = REAL(sem_trywait)(s);
    if (r != 0 && errno == EAGAIN) {
        errno = saved;
        return EAGAIN;
    }
    return r;
}

int WRAPPER(sem_wait)(sem_t *s)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(sem_wait)(s);
    ACQUIRE(s, sem_try(s), EAGAIN, REAL(sem_wait)(s),
            FLIGHTREC_EV_MUTEX_LOCK_ENTRY,
            FLIGHTREC_EV_RTEMS_SEMAPHORE_OBTAIN);
}

int WRAPPER(sem_trywait)(sem_t *s)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(sem_trywait)(s);
    int r = REAL(sem_trywait)(s);
    rec1(r == 0 ? FLIGHTREC_EV_RTEMS_SEMAPHORE_OBTAIN
                : FLIGHTREC_EV_MUTEX_TRYLOCK_FAIL, (uintptr_t)s);
    return r;
}

int WRAPPER(sem_timedwait)(sem_t *s, const struct timespec *abstime)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(sem_timedwait)(s, abstime);
    ACQUIRE(s, sem_try(s), EAGAIN,
            REAL(sem_timedwait)(s, abstime), FLIGHTREC_EV_MUTEX_LOCK_ENTRY,
            FLIGHTREC_EV_RTEMS_SEMAPHORE_OBTAIN);
}

int WRAPPER(sem_post)(sem_t *s)
{
    if (preload_on(GROUP_LOCKS))
        rec1(FLIGHTREC_EV_RTEMS_SEMAPHORE_RELEASE, (uintptr_t)s);
    return REAL(sem_post)(s);
}

/*=====   Barriers   =====*/

/* RTEMS_BARRIER_CREATE (address) + ARG_2 (count) + RETURN_0 (result), one
 * record after the call. */
int WRAPPER(pthread_barrier_init)(pthread_barrier_t *b,
                                  const pthread_barrierattr_t *attr,
                                  unsigned count)
{
    int r = REAL(pthread_barrier_init)(b, attr, count);
    if (preload_on(GROUP_LOCKS))
        rec3(FLIGHTREC_EV_RTEMS_BARRIER_CREATE, (uintptr_t)b,
             FLIGHTREC_EV_ARG_2, (uintptr_t)count, FLIGHTREC_EV_RETURN_0,
             (uintptr_t)(intptr_t)r);
    return r;
}

/* The arrival before the call; after it, the way out and the result
 * (PTHREAD_BARRIER_SERIAL_THREAD, -1, for one thread of each round). */
int WRAPPER(pthread_barrier_wait)(pthread_barrier_t *b)
{
    if (!preload_on(GROUP_LOCKS))
        return REAL(pthread_barrier_wait)(b);
    rec1(FLIGHTREC_EV_RTEMS_BARRIER_WAIT, (uintptr_t)b);
    int r = REAL(pthread_barrier_wait)(b);
    rec2(FLIGHTREC_EV_RTEMS_BARRIER_RELEASE, (uintptr_t)b,
         FLIGHTREC_EV_RETURN_0, (uintptr_t)(intptr_t)r);
    return r;
}

int WRAPPER(pthread_barrier_destroy)(pthread_barrier_t *b)
{
    if (preload_on(GROUP_LOCKS))
        rec1(FLIGHTREC_EV_RTEMS_BARRIER_DELETE, (uintptr_t)b);
    return REAL(pthread_barrier_destroy)(b);
}
