/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief flightrec report: the analysis.  Records arrive in time order
 * (a merging decoder); each updates the state of its thread, of a lock, of
 * a call or of the heap.  Event ids are looked up by name once per stream,
 * so RTEMS numberings work as flightrec's.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#include "cli.h"
#include "convert-symbols.h"

/*=====   Series   =====*/

static void fold_one(struct rp_series *s, uint64_t v)
{
    unsigned g, sub;

    if (v < RP_SUB) {
        g = 0;
        sub = (unsigned)v;
    } else {
        unsigned e = 63u - (unsigned)__builtin_clzll(v);
        g = e - RP_SUB_BITS + 1u;
        sub = (unsigned)((v >> (e - RP_SUB_BITS)) - RP_SUB);
    }
    if (s->groups[g] == NULL) {
        s->groups[g] = calloc(RP_SUB, sizeof(uint32_t));
        if (s->groups[g] == NULL)
            return; /* the coarse histogram and totals stay exact */
    }
    if (s->groups[g][sub] != UINT32_MAX)
        s->groups[g][sub]++;
}

/* The value a folded bucket stands for: its middle. */
static uint64_t bucket_value(unsigned g, unsigned sub)
{
    if (g == 0)
        return sub;
    unsigned shift = g - 1u;
    uint64_t low = (uint64_t)(RP_SUB + sub) << shift;
    return low + ((1ull << shift) >> 1);
}

/* From here on the series is bounded: its exact values go into buckets. */
static void fold_all(struct rp_series *s)
{
    for (uint32_t i = 0; i < s->exact_len; i++)
        fold_one(s, s->exact[i]);
    free(s->exact);
    s->exact = NULL;
    s->exact_len = s->exact_cap = 0;
    s->folded = 1;
}

void rp_series_add(struct rp_series *s, uint64_t v)
{
    if (s->count == 0 || v < s->min)
        s->min = v;
    if (v > s->max)
        s->max = v;
    s->count++;
    s->total = s->total + v < s->total ? UINT64_MAX : s->total + v;
    s->log2[v == 0 ? 0 : 64u - (unsigned)__builtin_clzll(v)]++;
    if (!s->folded && s->exact_len == s->exact_cap) {
        uint32_t cap = s->exact_cap ? s->exact_cap * 2 : 8;
        uint64_t *grown = cap <= RP_EXACT_MAX
                              ? realloc(s->exact, cap * sizeof(*grown))
                              : NULL;
        if (grown == NULL) {
            fold_all(s);
        } else {
            s->exact = grown;
            s->exact_cap = cap;
        }
    }
    if (s->folded) {
        fold_one(s, v);
        return;
    }
    s->exact[s->exact_len++] = v;
    s->sorted = 0;
}

void rp_series_free(struct rp_series *s)
{
    free(s->exact);
    for (unsigned g = 0; g < RP_GROUPS; g++)
        free(s->groups[g]);
    memset(s, 0, sizeof *s);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rank_of(uint64_t count, unsigned percent)
{
    /* ceil(count * percent / 100) without overflow for any count. */
    uint64_t r = count / 100 * percent +
                 (count % 100 * percent + 99) / 100;
    return r == 0 ? 1 : r;
}

static uint64_t folded_at(const struct rp_series *s, uint64_t rank)
{
    uint64_t seen = 0;

    for (unsigned g = 0; g < RP_GROUPS; g++) {
        if (s->groups[g] == NULL)
            continue;
        for (unsigned sub = 0; sub < RP_SUB; sub++) {
            seen += s->groups[g][sub];
            if (seen >= rank) {
                uint64_t v = bucket_value(g, sub);
                return v < s->min ? s->min : v > s->max ? s->max : v;
            }
        }
    }
    return s->max;
}

void rp_series_summary(struct rp_series *s, struct rp_summary *out)
{
    memset(out, 0, sizeof *out);
    out->count = s->count;
    out->total = s->total;
    out->exact = !s->folded;
    if (s->count == 0)
        return;
    out->min = s->min;
    out->max = s->max;
    if (!s->folded) {
        if (!s->sorted) {
            qsort(s->exact, s->exact_len, sizeof s->exact[0], cmp_u64);
            s->sorted = 1;
        }
        out->p50 = s->exact[rank_of(s->exact_len, 50) - 1];
        out->p99 = s->exact[rank_of(s->exact_len, 99) - 1];
    } else {
        out->p50 = folded_at(s, rank_of(s->count, 50));
        out->p99 = folded_at(s, rank_of(s->count, 99));
    }
}

/*=====   Event roles   =====*/

enum {
    RP_ROLE_NONE = 0,
    RP_ROLE_LOCK_WAIT,      /* data: lock; index: kind */
    RP_ROLE_LOCK_ACQUIRE,
    RP_ROLE_LOCK_FAIL,
    RP_ROLE_LOCK_RELEASE,
    RP_ROLE_MEM_ENTRY,      /* index: RP_ALLOC_* */
    RP_ROLE_MEM_EXIT,
    RP_ROLE_FREE,
    RP_ROLE_UNMAP,
    RP_ROLE_ARG,            /* index: n */
    RP_ROLE_CALL_ENTRY,     /* call_of: the call */
    RP_ROLE_CALL_EXIT,
    RP_ROLE_SWITCH_IN,
    RP_ROLE_SWITCH_OUT,
    RP_ROLE_FUNC_ENTRY,
    RP_ROLE_FUNC_EXIT
};

static const struct {
    const char *base;
    int fd_from;
    int counts_bytes;
} call_table[] = {
    { "READ", RP_FD_ENTRY, 1 },      { "WRITE", RP_FD_ENTRY, 1 },
    { "READV", RP_FD_ENTRY, 1 },     { "WRITEV", RP_FD_ENTRY, 1 },
    { "OPEN", RP_FD_RESULT, 0 },     { "CLOSE", RP_FD_ENTRY, 0 },
    { "SOCKET", RP_FD_RESULT, 0 },   { "ACCEPT", RP_FD_ENTRY, 0 },
    { "CONNECT", RP_FD_ENTRY, 0 },   { "BIND", RP_FD_ENTRY, 0 },
    { "LISTEN", RP_FD_ENTRY, 0 },    { "SHUTDOWN", RP_FD_ENTRY, 0 },
    { "SEND", RP_FD_ENTRY, 1 },      { "SENDTO", RP_FD_ENTRY, 1 },
    { "SENDMSG", RP_FD_ENTRY, 1 },   { "RECV", RP_FD_ENTRY, 1 },
    { "RECVFROM", RP_FD_ENTRY, 1 },  { "RECVMSG", RP_FD_ENTRY, 1 },
    { "POLL", RP_FD_NONE, 0 },       { "SELECT", RP_FD_NONE, 0 },
    { "KEVENT", RP_FD_ENTRY, 0 },    { "KQUEUE", RP_FD_RESULT, 0 },
    { "FSYNC", RP_FD_ENTRY, 0 },     { "FDATASYNC", RP_FD_ENTRY, 0 },
    { "FSTAT", RP_FD_ENTRY, 0 },     { "FTRUNCATE", RP_FD_ENTRY, 0 },
    { "FCNTL", RP_FD_ENTRY, 0 },     { "IOCTL", RP_FD_ENTRY, 0 },
    { "LSEEK", RP_FD_ENTRY, 0 },     { "FCHMOD", RP_FD_ENTRY, 0 },
    { "GETSOCKOPT", RP_FD_ENTRY, 0 }, { "SETSOCKOPT", RP_FD_ENTRY, 0 },
    { "CHOWN", RP_FD_NONE, 0 },      { "LINK", RP_FD_NONE, 0 },
    { "MKNOD", RP_FD_NONE, 0 },      { "MOUNT", RP_FD_NONE, 0 },
    { "UNMOUNT", RP_FD_NONE, 0 },    { "READLINK", RP_FD_NONE, 0 },
    { "RENAME", RP_FD_NONE, 0 },     { "STATVFS", RP_FD_NONE, 0 },
    { "SYMLINK", RP_FD_NONE, 0 },    { "UNLINK", RP_FD_NONE, 0 },
};

static const char *const alloc_base[RP_ALLOC_KINDS] = {
    "MALLOC", "CALLOC", "REALLOC", "POSIX_MEMALIGN", "ALIGNED_ALLOC", "MMAP",
};

const char *rp_alloc_kind_name(uint32_t kind)
{
    static const char *const names[RP_ALLOC_KINDS] = {
        "malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc",
        "mmap",
    };
    return kind < RP_ALLOC_KINDS ? names[kind] : "unknown";
}

static void set_role(struct report *rp, const char *name, uint8_t role,
                     uint8_t index)
{
    int id = flightrec_client_event_id(rp->client, name);

    /* Only system ids: a user event named like one means what its
     * program says. */
    if (id >= 0 && id < FLIGHTREC_EV_USER_0) {
        rp->role[id] = role;
        rp->role_index[id] = index;
    }
}

static void setup_roles(struct report *rp)
{
    const struct flightrec_stream_info *info = flightrec_client_info(
        rp->client);
    int flightrec = info->kind == FLIGHTREC_STREAM_FLIGHTREC;
    char name[40];

    rp->roles_ready = 1;
    rp->rtems = !flightrec;
    memset(rp->role, 0, sizeof rp->role);
    memset(rp->call_of, 0, sizeof rp->call_of);
    set_role(rp, "MUTEX_LOCK_ENTRY", RP_ROLE_LOCK_WAIT, 0);
    set_role(rp, "MUTEX_LOCK_EXIT", RP_ROLE_LOCK_ACQUIRE, 0);
    set_role(rp, "MUTEX_TRYLOCK_FAIL", RP_ROLE_LOCK_FAIL, 0);
    set_role(rp, "MUTEX_UNLOCK", RP_ROLE_LOCK_RELEASE, 0);
    set_role(rp, "ISR_LOCK_ACQUIRE_ENTRY", RP_ROLE_LOCK_WAIT, 1);
    set_role(rp, "ISR_LOCK_ACQUIRE_EXIT", RP_ROLE_LOCK_ACQUIRE, 1);
    set_role(rp, "ISR_LOCK_RELEASE", RP_ROLE_LOCK_RELEASE, 1);
    if (flightrec) {
        /* What the preload library records for rwlock read holds and
         * semaphores (docs/record.md); RTEMS's own events of these names
         * are recorded at the call, not at the acquisition. */
        set_role(rp, "THREAD_RESOURCE_OBTAIN", RP_ROLE_LOCK_ACQUIRE, 2);
        set_role(rp, "THREAD_RESOURCE_RELEASE", RP_ROLE_LOCK_RELEASE, 2);
        set_role(rp, "RTEMS_SEMAPHORE_OBTAIN", RP_ROLE_LOCK_ACQUIRE, 3);
        /* A barrier: the arrival is the wait, the way out its end. */
        set_role(rp, "RTEMS_BARRIER_WAIT", RP_ROLE_LOCK_WAIT, 4);
        set_role(rp, "RTEMS_BARRIER_RELEASE", RP_ROLE_LOCK_ACQUIRE, 4);
        set_role(rp, "PAGE_FREE", RP_ROLE_UNMAP, 0);
    }
    for (unsigned k = 0; k < RP_ALLOC_KINDS; k++) {
        snprintf(name, sizeof name, "%s_ENTRY", alloc_base[k]);
        set_role(rp, name, RP_ROLE_MEM_ENTRY, (uint8_t)k);
        snprintf(name, sizeof name, "%s_EXIT", alloc_base[k]);
        set_role(rp, name, RP_ROLE_MEM_EXIT, (uint8_t)k);
    }
    set_role(rp, "FREE_ENTRY", RP_ROLE_FREE, 0);
    for (unsigned n = 0; n < 5; n++) {
        snprintf(name, sizeof name, "ARG_%u", n);
        set_role(rp, name, RP_ROLE_ARG, (uint8_t)n);
    }
    set_role(rp, "THREAD_SWITCH_IN", RP_ROLE_SWITCH_IN, 0);
    set_role(rp, "THREAD_SWITCH_OUT", RP_ROLE_SWITCH_OUT, 0);
    set_role(rp, "FUNCTION_ENTRY", RP_ROLE_FUNC_ENTRY, 0);
    set_role(rp, "FUNCTION_EXIT", RP_ROLE_FUNC_EXIT, 0);

    size_t n = sizeof call_table / sizeof call_table[0];
    if (rp->calls == NULL)
        rp->calls = calloc(n, sizeof *rp->calls);
    if (rp->calls == NULL) {
        rp->oom = 1;
        return;
    }
    rp->call_count = 0;
    for (size_t i = 0; i < n; i++) {
        int entry, exit_id;
        snprintf(name, sizeof name, "%s_ENTRY", call_table[i].base);
        entry = flightrec_client_event_id(rp->client, name);
        snprintf(name, sizeof name, "%s_EXIT", call_table[i].base);
        exit_id = flightrec_client_event_id(rp->client, name);
        if (entry < 0 || exit_id < 0 || entry >= FLIGHTREC_EV_USER_0 ||
            exit_id >= FLIGHTREC_EV_USER_0)
            continue;
        struct rp_call *c = &rp->calls[rp->call_count];
        c->entry = (uint32_t)entry;
        c->exit = (uint32_t)exit_id;
        for (size_t j = 0; call_table[i].base[j] != '\0' &&
                           j + 1 < sizeof c->name; j++)
            c->name[j] = (char)(call_table[i].base[j] - 'A' + 'a');
        c->fd_from = call_table[i].fd_from;
        c->counts_bytes = call_table[i].counts_bytes;
        fr_map_init(&c->fds);
        rp->call_count++;
        rp->role[entry] = RP_ROLE_CALL_ENTRY;
        rp->role[exit_id] = RP_ROLE_CALL_EXIT;
        rp->call_of[entry] = rp->call_of[exit_id] = (uint8_t)rp->call_count;
    }
}

/*=====   Spans   =====*/

/* Keys of function spans are addresses; declared span kinds get keys with
 * the top bit set (event id below it), so the two never collide. */
#define RP_SPAN_EVENT_KEY (1ull << 63)
/* An end that closes whatever span is innermost. */
#define RP_SPAN_INNERMOST UINT64_MAX

enum rp_span_edge report_span_edge(const struct report *rp,
                                   const struct flightrec_record *record,
                                   uint64_t *key)
{
    uint8_t role = rp->role[record->event & FLIGHTREC_EVENT_MASK];

    /* Spans the program declared (EVENT_KIND): keyed by their begin id; an
     * end that names no begin closes the innermost open span. */
    uint32_t id = record->event & FLIGHTREC_EVENT_MASK;
    uint32_t kind = flightrec_client_event_kind(rp->client, id) & 0xffu;
    if (kind == FLIGHTREC_EVENT_SPAN_BEGIN) {
        *key = RP_SPAN_EVENT_KEY | id;
        return RP_SPAN_BEGIN;
    }
    if (kind == FLIGHTREC_EVENT_SPAN_END) {
        int begin = flightrec_client_span_begin(rp->client, id);
        *key = begin < 0 ? RP_SPAN_INNERMOST
                         : RP_SPAN_EVENT_KEY | (uint32_t)begin;
        return RP_SPAN_END;
    }
    if (role == RP_ROLE_FUNC_ENTRY || role == RP_ROLE_FUNC_EXIT) {
        *key = record->data & ~RP_SPAN_EVENT_KEY;
        return role == RP_ROLE_FUNC_ENTRY ? RP_SPAN_BEGIN : RP_SPAN_END;
    }
    return RP_SPAN_NONE;
}

void report_span_name(const struct report *rp, uint64_t key, char *buf,
                      size_t size)
{
    const char *name;
    if (key & RP_SPAN_EVENT_KEY)
        snprintf(buf, size, "%s",
                 flightrec_client_event_name(rp->client,
                                             (uint32_t)(key & 1023u)));
    else if ((name = rp->symbols != NULL ? fr_symbols_name(rp->symbols, key)
                                          : NULL) != NULL)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "function 0x%llx", (unsigned long long)key);
}

static void symbols_warn(void *arg, const char *message)
{
    (void)arg;
    cli_msg(CLI_WARN, "%s", message);
}

/* The names of functions come from the objects the stream records. */
static void start_symbols(struct report *rp)
{
    const struct flightrec_stream_info *info = flightrec_client_info(rp->client);
    if (!rp->symbols_wanted || rp->symbols != NULL)
        return;
    rp->symbols = fr_symbols_create(
        info->format != 0 ? FLIGHTREC_ITEM_SIZE(info->format) - 4 : 8,
        symbols_warn, NULL);
    if (rp->symbols == NULL)
        rp->oom = 1;
}

/*=====   Lookups   =====*/

static int push_ptr(void ***list, size_t *count, size_t *cap, void *p)
{
    if (*count == *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        void **grown = realloc(*list, n * sizeof(*grown));
        if (grown == NULL)
            return -1;
        *list = grown;
        *cap = n;
    }
    (*list)[(*count)++] = p;
    return 0;
}

static struct rp_thread *find_thread(struct report *rp, int64_t tid)
{
    if (rp->cache_thread != NULL && rp->cache_tid == tid)
        return rp->cache_thread;
    struct rp_thread *t = fr_map_get(&rp->threads, (uint64_t)tid);
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        if (t == NULL || fr_map_put(&rp->threads, (uint64_t)tid, t) != 0) {
            free(t);
            rp->oom = 1;
            return NULL;
        }
        if (push_ptr((void ***)&rp->thread_list, &rp->thread_count,
                     &rp->thread_cap, t) != 0) {
            rp->oom = 1;
            return NULL;
        }
        t->tid = tid;
        t->last_cpu = -1;
    }
    rp->cache_tid = tid;
    rp->cache_thread = t;
    return t;
}

static struct rp_lock *find_lock(struct report *rp, uint64_t address)
{
    struct rp_lock *l = fr_map_get(&rp->locks, address);
    if (l == NULL) {
        l = calloc(1, sizeof *l);
        if (l == NULL || fr_map_put(&rp->locks, address, l) != 0) {
            free(l);
            rp->oom = 1;
            return NULL;
        }
        if (push_ptr((void ***)&rp->lock_list, &rp->lock_count,
                     &rp->lock_cap, l) != 0) {
            rp->oom = 1;
            return NULL;
        }
        l->address = address;
    }
    return l;
}

static struct rp_lock_thread *lock_thread(struct report *rp,
                                          struct rp_lock *l, int64_t tid)
{
    for (size_t i = 0; i < l->thread_count; i++)
        if (l->threads[i].tid == tid)
            return &l->threads[i];
    if (l->thread_count == l->thread_cap) {
        size_t n = l->thread_cap ? l->thread_cap * 2 : 4;
        struct rp_lock_thread *grown = realloc(l->threads, n * sizeof(*grown));
        if (grown == NULL) {
            rp->oom = 1;
            return NULL;
        }
        l->threads = grown;
        l->thread_cap = n;
    }
    struct rp_lock_thread *lt = &l->threads[l->thread_count++];
    memset(lt, 0, sizeof *lt);
    lt->tid = tid;
    return lt;
}

/*=====   Time charts   =====*/

static void merge_halves_u32(uint32_t *v)
{
    for (unsigned i = 0; i < RP_TIME_BUCKETS / 2; i++) {
        uint64_t sum = (uint64_t)v[2 * i] + v[2 * i + 1];
        v[i] = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
    }
    memset(v + RP_TIME_BUCKETS / 2, 0, RP_TIME_BUCKETS / 2 * sizeof *v);
}

static void merge_halves_u64(uint64_t *v)
{
    for (unsigned i = 0; i < RP_TIME_BUCKETS / 2; i++)
        v[i] = v[2 * i] + v[2 * i + 1];
    memset(v + RP_TIME_BUCKETS / 2, 0, RP_TIME_BUCKETS / 2 * sizeof *v);
}

/* Doubles the bucket width: pairs of buckets become one. */
static void widen_buckets(struct report *rp)
{
    for (unsigned i = 0; i < RP_TIME_BUCKETS / 2; i++) {
        unsigned a = 2 * i, b = 2 * i + 1;
        uint64_t mx = rp->heap_max[a] > rp->heap_max[b] ? rp->heap_max[a]
                                                        : rp->heap_max[b];
        uint64_t end = rp->heap_set[b] ? rp->heap_end[b] : rp->heap_end[a];
        uint8_t set = rp->heap_set[a] | rp->heap_set[b];
        if (!rp->heap_set[a])
            mx = rp->heap_max[b];
        if (!rp->heap_set[b])
            mx = rp->heap_max[a];
        rp->heap_max[i] = mx;
        rp->heap_end[i] = end;
        rp->heap_set[i] = set;
    }
    memset(rp->heap_max + RP_TIME_BUCKETS / 2, 0,
           RP_TIME_BUCKETS / 2 * sizeof rp->heap_max[0]);
    memset(rp->heap_end + RP_TIME_BUCKETS / 2, 0,
           RP_TIME_BUCKETS / 2 * sizeof rp->heap_end[0]);
    memset(rp->heap_set + RP_TIME_BUCKETS / 2, 0, RP_TIME_BUCKETS / 2);
    for (size_t t = 0; t < rp->thread_count; t++) {
        if (rp->thread_list[t]->timeline != NULL)
            merge_halves_u32(rp->thread_list[t]->timeline);
        if (rp->thread_list[t]->cpu_timeline != NULL)
            merge_halves_u64(rp->thread_list[t]->cpu_timeline);
    }
    rp->bucket_ns *= 2;
    rp->buckets_used = (rp->buckets_used + 1) / 2;
}

/* The bucket of time @a ns, widening the buckets until it fits. */
static unsigned bucket_of(struct report *rp, uint64_t ns)
{
    if (!rp->chart_started) {
        rp->chart_started = 1;
        rp->origin_ns = ns;
        rp->bucket_ns = 1;
    }
    if (ns < rp->origin_ns)
        return 0; /* a late record */
    uint64_t off = ns - rp->origin_ns;
    while (off / rp->bucket_ns >= RP_TIME_BUCKETS &&
           rp->bucket_ns < UINT64_MAX / 4)
        widen_buckets(rp);
    uint64_t i = off / rp->bucket_ns;
    if (i >= RP_TIME_BUCKETS)
        i = RP_TIME_BUCKETS - 1;
    if (i + 1 > rp->buckets_used)
        rp->buckets_used = (uint32_t)i + 1;
    return (unsigned)i;
}

static void heap_sample(struct report *rp, uint64_t ns)
{
    unsigned i = bucket_of(rp, ns);

    if (!rp->heap_set[i] || rp->in_use > rp->heap_max[i])
        rp->heap_max[i] = rp->in_use;
    rp->heap_end[i] = rp->in_use;
    rp->heap_set[i] = 1;
    if (rp->in_use > rp->peak) {
        rp->peak = rp->in_use;
        rp->peak_ns = ns;
    }
}

/* Adds on-CPU time [from, to) to the thread's timeline buckets. */
static void cpu_interval(struct report *rp, struct rp_thread *t,
                         uint64_t from, uint64_t to)
{
    if (to <= from)
        return;
    t->cpu_ns += to - from;
    unsigned last = bucket_of(rp, to - 1);
    if (t->cpu_timeline == NULL) {
        t->cpu_timeline = calloc(RP_TIME_BUCKETS, sizeof(uint64_t));
        if (t->cpu_timeline == NULL)
            return;
    }
    unsigned first = bucket_of(rp, from);
    for (unsigned i = first; i <= last; i++) {
        uint64_t lo = rp->origin_ns + (uint64_t)i * rp->bucket_ns;
        uint64_t hi = lo + rp->bucket_ns;
        uint64_t a = from > lo ? from : lo, b = to < hi ? to : hi;
        if (i == RP_TIME_BUCKETS - 1)
            b = to;
        if (b > a)
            t->cpu_timeline[i] += b - a;
    }
}

/*=====   Heap   =====*/

static void heap_add(struct report *rp, uint64_t ptr, uint64_t size,
                     uint32_t kind, uint64_t ns)
{
    uint64_t idx = (uint64_t)(uintptr_t)fr_map_get(&rp->live, ptr);

    rp->heap_seen = 1;
    if (idx != 0) {
        /* Allocated again without a free we saw (one was lost). */
        struct rp_alloc *a = &rp->allocs[idx - 1];
        rp->in_use -= a->size;
        a->size = size;
        a->kind = kind;
        rp->in_use += size;
        heap_sample(rp, ns);
        return;
    }
    if (rp->alloc_free != 0) {
        idx = rp->alloc_free;
        rp->alloc_free = rp->allocs[idx - 1].next_free;
    } else {
        if (rp->alloc_len == rp->alloc_cap) {
            size_t n = rp->alloc_cap ? rp->alloc_cap * 2 : 256;
            struct rp_alloc *grown = realloc(rp->allocs, n * sizeof(*grown));
            if (grown == NULL) {
                rp->oom = 1;
                return;
            }
            rp->allocs = grown;
            rp->alloc_cap = n;
        }
        idx = ++rp->alloc_len;
    }
    struct rp_alloc *a = &rp->allocs[idx - 1];
    a->ptr = ptr;
    a->size = size;
    a->kind = kind;
    a->next_free = 0;
    if (fr_map_put(&rp->live, ptr, (void *)(uintptr_t)idx) != 0) {
        rp->oom = 1;
        return;
    }
    rp->live_count++;
    rp->in_use += size;
    heap_sample(rp, ns);
}

/* Returns 1 when @a ptr was live. */
static int heap_release(struct report *rp, uint64_t ptr, uint64_t ns)
{
    uint64_t idx = (uint64_t)(uintptr_t)fr_map_remove(&rp->live, ptr);

    rp->heap_seen = 1;
    if (idx == 0)
        return 0;
    struct rp_alloc *a = &rp->allocs[idx - 1];
    rp->in_use -= a->size;
    a->next_free = rp->alloc_free;
    a->size = 0;
    rp->alloc_free = (uint32_t)idx;
    rp->live_count--;
    heap_sample(rp, ns);
    return 1;
}

/* The result of a call as a signed number (32-bit formats sign-extend). */
static int64_t signed_result(const struct report *rp, uint64_t data)
{
    uint32_t format = flightrec_client_info(rp->client)->format;
    if (FLIGHTREC_ITEM_SIZE(format) == 8u)
        return (int64_t)(int32_t)(uint32_t)data;
    return (int64_t)data;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    if (a != 0 && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

static void mem_exit(struct report *rp, struct rp_pending *p, uint32_t kind,
                     uint64_t result, uint64_t ns)
{
    uint64_t size = 0;

    switch (kind) {
    case RP_ALLOC_MALLOC: size = p->data; break;
    case RP_ALLOC_CALLOC: size = sat_mul(p->data, p->args[1]); break;
    case RP_ALLOC_REALLOC: size = p->args[1]; break;
    case RP_ALLOC_MEMALIGN: size = p->args[2]; break;
    case RP_ALLOC_ALIGNED: size = p->args[1]; break;
    case RP_ALLOC_MMAP: size = p->data; break;
    default: break;
    }
    rp->alloc_calls[kind]++;
    if (kind == RP_ALLOC_MMAP) {
        int64_t fd = (p->args_seen & (1u << 4))
                         ? signed_result(rp, p->args[4]) : -1;
        if (signed_result(rp, result) == -1) {
            rp->alloc_failed++;
            return;
        }
        if (fd != -1) {
            rp->file_maps++; /* a file's pages, not the heap */
            return;
        }
        heap_add(rp, result, size, kind, ns);
        return;
    }
    if (kind == RP_ALLOC_REALLOC) {
        if (result == 0) {
            /* realloc(p, 0) frees p; any other failure keeps it. */
            if (size == 0 && p->data != 0) {
                rp->frees++;
                if (!heap_release(rp, p->data, ns))
                    rp->unknown_frees++;
            } else {
                rp->alloc_failed++;
            }
            return;
        }
        if (p->data != 0 && !heap_release(rp, p->data, ns))
            rp->unknown_frees++;
        heap_add(rp, result, size, kind, ns);
        return;
    }
    if (result == 0) {
        rp->alloc_failed++;
        return;
    }
    heap_add(rp, result, size, kind, ns);
}

/*=====   Locks   =====*/

static void hold_begin(struct report *rp, struct rp_lock *l,
                       struct rp_thread *t, uint64_t ns)
{
    int64_t tid = t->tid;

    for (size_t i = 0; i < l->holder_count; i++) {
        if (l->holders[i].thread == (uint64_t)tid) {
            l->holders[i].depth++; /* a recursive mutex */
            return;
        }
    }
    if (l->holder_count == l->holder_cap) {
        size_t n = l->holder_cap ? l->holder_cap * 2 : 2;
        struct rp_holder *grown = realloc(l->holders, n * sizeof(*grown));
        if (grown == NULL) {
            rp->oom = 1;
            return;
        }
        l->holders = grown;
        l->holder_cap = n;
    }
    struct rp_holder *h = &l->holders[l->holder_count++];
    t->holds++;
    h->thread = (uint64_t)tid;
    h->since_ns = ns;
    h->depth = 1;
}

static void hold_end(struct report *rp, struct rp_lock *l,
                     struct rp_thread *t, uint64_t ns)
{
    int64_t tid = t->tid;

    for (size_t i = 0; i < l->holder_count; i++) {
        struct rp_holder *h = &l->holders[i];
        if (h->thread != (uint64_t)tid)
            continue;
        if (--h->depth != 0)
            return;
        uint64_t held = ns >= h->since_ns ? ns - h->since_ns : 0;
        rp_series_add(&l->hold, held);
        struct rp_lock_thread *lt = lock_thread(rp, l, tid);
        if (lt != NULL)
            lt->hold_ns += held;
        l->holders[i] = l->holders[--l->holder_count];
        if (t->holds)
            t->holds--;
        return;
    }
    l->releases_unheld++;
}

/* Semaphores (3) and barriers (4) are waited for, but held by no one. */
static int kind_is_held(unsigned kind)
{
    return kind != 3 && kind != 4;
}

static void lock_record(struct report *rp, struct rp_thread *t,
                        struct rp_context *cx, uint8_t role, unsigned kind,
                        uint64_t lock, uint64_t ns)
{
    int64_t tid = t->tid;

    struct rp_lock *l = find_lock(rp, lock);
    if (l == NULL)
        return;
    if (role == RP_ROLE_LOCK_WAIT) {
        cx->waiting = 1;
        cx->wait_lock = lock;
        cx->wait_since = ns;
        return;
    }
    struct rp_lock_thread *lt = lock_thread(rp, l, tid);
    if (lt == NULL)
        return;
    if (role == RP_ROLE_LOCK_FAIL) {
        l->failures++;
        l->contended++;
        lt->contended++;
        if (cx->waiting && cx->wait_lock == lock)
            cx->waiting = 0;
        return;
    }
    if (role == RP_ROLE_LOCK_RELEASE) {
        if (kind_is_held(kind))
            hold_end(rp, l, t, ns);
        return;
    }
    /* An acquisition. */
    l->kinds |= 1u << kind;
    l->acquisitions++;
    lt->acquisitions++;
    if (cx->waiting && cx->wait_lock == lock) {
        uint64_t waited = ns >= cx->wait_since ? ns - cx->wait_since : 0;
        rp_series_add(&l->wait, waited);
        lt->wait_ns += waited;
        if (waited > rp->contended_ns) {
            l->contended++;
            lt->contended++;
        }
    } else {
        l->unwaited++; /* trylock, or taken back after a condition wait */
    }
    cx->waiting = 0;
    if (kind_is_held(kind))
        hold_begin(rp, l, t, ns);
}

/*=====   Calls   =====*/

static void call_exit(struct report *rp, struct rp_pending *p,
                      struct rp_call *c, uint64_t result, uint64_t ns)
{
    int64_t res = signed_result(rp, result);
    uint64_t took = ns >= p->since_ns ? ns - p->since_ns : 0;
    int64_t fd = -1;
    int has_fd = 0;

    if (c->fd_from == RP_FD_ENTRY) {
        fd = signed_result(rp, p->data);
        has_fd = 1;
    } else if (c->fd_from == RP_FD_RESULT && res >= 0) {
        fd = res;
        has_fd = 1;
    }
    rp_series_add(&c->latency, took);
    uint64_t bytes = c->counts_bytes && res > 0 ? (uint64_t)res : 0;
    if (res == -1)
        c->errors++;
    c->bytes += bytes;
    if (!has_fd)
        return;
    struct rp_call_fd *f = fr_map_get(&c->fds, (uint64_t)fd);
    if (f == NULL) {
        f = calloc(1, sizeof *f);
        if (f == NULL || fr_map_put(&c->fds, (uint64_t)fd, f) != 0) {
            free(f);
            rp->oom = 1;
            return;
        }
        f->fd = fd;
        c->fd_count++;
    }
    rp_series_add(&f->latency, took);
    if (res == -1)
        f->errors++;
    f->bytes += bytes;
}

/*=====   Records   =====*/

static void span_edge(struct report *rp, struct rp_context *cx,
                      enum rp_span_edge edge, uint64_t key, uint64_t ns)
{
    if (edge == RP_SPAN_BEGIN) {
        if (cx->spans == NULL) {
            cx->spans = calloc(RP_SPAN_DEPTH, sizeof *cx->spans);
            if (cx->spans == NULL) {
                rp->oom = 1;
                return;
            }
        }
        if (cx->span_depth == RP_SPAN_DEPTH) {
            rp->span_too_deep++;
            return;
        }
        cx->spans[cx->span_depth].key = key;
        cx->spans[cx->span_depth++].since_ns = ns;
        return;
    }
    if (key == RP_SPAN_INNERMOST && cx->span_depth > 0)
        key = cx->spans[cx->span_depth - 1].key;
    for (uint32_t i = cx->span_depth; i-- > 0;) {
        if (cx->spans[i].key != key)
            continue;
        struct rp_span *s = fr_map_get(&rp->spans, key);
        if (s == NULL) {
            s = calloc(1, sizeof *s);
            if (s == NULL || fr_map_put(&rp->spans, key, s) != 0) {
                free(s);
                rp->oom = 1;
                return;
            }
            if (push_ptr((void ***)&rp->span_list, &rp->span_count,
                         &rp->span_cap, s) != 0) {
                rp->oom = 1;
                return;
            }
            s->key = key;
            report_span_name(rp, key, s->name, sizeof s->name);
        }
        uint64_t since = cx->spans[i].since_ns;
        rp_series_add(&s->duration, ns >= since ? ns - since : 0);
        /* Spans opened inside it and never ended end with it unmeasured. */
        rp->span_unmatched_ends += cx->span_depth - 1 - i;
        cx->span_depth = i;
        return;
    }
    rp->span_unmatched_ends++;
}

/* A loss on a ring: what its thread had open can no longer be paired. */
static void forget_open(struct report *rp, struct rp_thread *t,
                        unsigned context)
{
    struct rp_context *cx = &t->ctx[context];

    if (cx->call.active)
        rp->cut_calls++;
    cx->call.active = 0;
    cx->waiting = 0;
    cx->span_depth = 0;
    for (size_t i = 0; t->holds != 0 && i < rp->lock_count; i++) {
        struct rp_lock *l = rp->lock_list[i];
        for (size_t h = 0; h < l->holder_count;) {
            if (l->holders[h].thread == (uint64_t)t->tid) {
                l->holders[h] = l->holders[--l->holder_count];
                t->holds--;
            } else
                h++;
        }
    }
    t->on_cpu = 0;
}

static void on_switch(struct report *rp, const struct flightrec_record *r,
                      struct rp_thread *ring_thread, uint8_t role,
                      uint64_t ns)
{
    struct rp_thread *t = ring_thread;

    /* On RTEMS a ring is a CPU and the data names the thread switched;
     * in a flightrec stream the ring is the thread and the data its CPU. */
    if (rp->rtems) {
        t = find_thread(rp, (int64_t)r->data);
        if (t == NULL)
            return;
    }
    if (role == RP_ROLE_SWITCH_OUT) {
        t->switches_out++;
        if (t->on_cpu)
            cpu_interval(rp, t, t->on_since_ns, ns);
        t->on_cpu = 0;
    } else {
        t->switches_in++;
        t->on_cpu = 1;
        t->on_since_ns = ns;
        t->last_cpu = rp->rtems ? (int64_t)r->ring : (int64_t)r->data;
    }
}

/* A processor ring of a flightrec stream (context switches from perf): the
 * ring is a CPU and the data names the thread switched, as on RTEMS. */
static int processor_record(struct report *rp, const struct flightrec_record *r,
                            int timed, uint64_t ns)
{
    int64_t cpu = (int64_t)(r->ring - FLIGHTREC_CPU_RING_BASE);
    if (r->type == FLIGHTREC_RECORD_LOSS) {
        rp->loss_records++;
        /* A switch may be among the lost: whoever ran there is unknown. */
        for (size_t i = 0; i < rp->thread_count; i++)
            if (rp->thread_list[i]->last_cpu == cpu)
                rp->thread_list[i]->on_cpu = 0;
        return 0;
    }
    rp->events++;
    if (!timed) {
        rp->untimed++;
        return 0;
    }
    uint8_t role = rp->role[r->event & FLIGHTREC_EVENT_MASK];
    if (role != RP_ROLE_SWITCH_IN && role != RP_ROLE_SWITCH_OUT)
        return 0;
    struct rp_thread *t = find_thread(rp, (int64_t)(int32_t)r->data);
    if (t == NULL)
        return 1;
    if (role == RP_ROLE_SWITCH_OUT) {
        t->switches_out++;
        if (t->on_cpu)
            cpu_interval(rp, t, t->on_since_ns, ns);
        t->on_cpu = 0;
    } else {
        t->switches_in++;
        t->on_cpu = 1;
        t->on_since_ns = ns;
        t->last_cpu = cpu;
    }
    t->switches_from_perf = 1;
    return rp->oom ? 1 : 0;
}

int report_on_record(const struct flightrec_record *r, void *arg)
{
    struct report *rp = arg;
    const struct flightrec_ring_info *ri = r->ring_info;
    int64_t tid = ri != NULL ? ri->thread_id : -1;
    unsigned context = ri != NULL && ri->context != 0 ? 1u : 0u;
    int timed = !(r->flags & FLIGHTREC_RECORD_UNTIMED);
    uint64_t ns = r->time_ns;

    if (!rp->roles_ready) {
        setup_roles(rp);
        start_symbols(rp);
    }
    if (rp->symbols != NULL)
        fr_symbols_record(rp->symbols, r);
    if (r->flags & FLIGHTREC_RECORD_LATE)
        rp->late++;
    if (timed) {
        if (!rp->have_time) {
            rp->have_time = 1;
            rp->first_ns = rp->last_ns = ns;
        } else if (ns > rp->last_ns) {
            rp->last_ns = ns;
        } else if (ns < rp->first_ns) {
            rp->first_ns = ns;
        }
    }
    if (ri != NULL && ri->context == FLIGHTREC_RING_CONTEXT_CPU &&
        r->ring >= FLIGHTREC_CPU_RING_BASE && !rp->rtems)
        return processor_record(rp, r, timed, ns);
    struct rp_thread *t = find_thread(rp, tid);
    if (t == NULL)
        return 1;
    if (r->type == FLIGHTREC_RECORD_LOSS) {
        rp->loss_records++;
        if (rp->rtems) {
            /* A CPU lost records: whoever ran on it may have switched. */
            for (size_t i = 0; i < rp->thread_count; i++)
                if (rp->thread_list[i]->last_cpu == (int64_t)r->ring)
                    rp->thread_list[i]->on_cpu = 0;
        }
        forget_open(rp, t, context);
        return rp->oom ? 1 : 0;
    }
    rp->events++;
    t->events++;
    if (ri != NULL && ri->thread_name[0] != '\0' &&
        strncmp(t->name, ri->thread_name, sizeof t->name) != 0) {
        memcpy(t->name, ri->thread_name, sizeof t->name);
        t->name[sizeof t->name - 1] = '\0';
    }
    if (!timed) {
        /* No time: counted, but it cannot pair with anything. */
        rp->untimed++;
        return rp->oom ? 1 : 0;
    }
    if (!t->have_time) {
        t->have_time = 1;
        t->first_ns = ns;
    }
    if (ns > t->last_ns)
        t->last_ns = ns;
    unsigned b = bucket_of(rp, ns);
    if (t->timeline == NULL)
        t->timeline = calloc(RP_TIME_BUCKETS, sizeof(uint32_t));
    if (t->timeline != NULL && t->timeline[b] != UINT32_MAX)
        t->timeline[b]++;

    uint32_t ev = r->event & FLIGHTREC_EVENT_MASK;
    uint8_t role = rp->role[ev];
    struct rp_context *cx = &t->ctx[context];
    struct rp_pending *p = &cx->call;
    uint64_t key;
    enum rp_span_edge edge = report_span_edge(rp, r, &key);

    if (edge != RP_SPAN_NONE) {
        span_edge(rp, cx, edge, key, ns);
        /* FUNCTION_EXIT of fork/exec carries RETURN_0 after it: no call. */
        return rp->oom ? 1 : 0;
    }
    switch (role) {
    case RP_ROLE_LOCK_WAIT:
    case RP_ROLE_LOCK_ACQUIRE:
    case RP_ROLE_LOCK_FAIL:
    case RP_ROLE_LOCK_RELEASE:
        lock_record(rp, t, cx, role, rp->role_index[ev], r->data, ns);
        break;
    case RP_ROLE_MEM_ENTRY:
    case RP_ROLE_CALL_ENTRY:
        if (p->active)
            rp->cut_calls++; /* its exit never came */
        memset(p, 0, sizeof *p);
        p->active = 1;
        p->entry = ev;
        p->role = role;
        p->index = role == RP_ROLE_MEM_ENTRY ? rp->role_index[ev]
                                             : rp->call_of[ev] - 1u;
        p->since_ns = ns;
        p->data = r->data;
        break;
    case RP_ROLE_ARG:
        if (p->active && p->since_ns == ns) {
            p->args[rp->role_index[ev]] = r->data;
            p->args_seen |= 1u << rp->role_index[ev];
        }
        break;
    case RP_ROLE_MEM_EXIT:
        if (p->active && p->role == RP_ROLE_MEM_ENTRY &&
            p->index == rp->role_index[ev]) {
            mem_exit(rp, p, rp->role_index[ev], r->data, ns);
            p->active = 0;
        } else {
            rp->unmatched_exits++;
        }
        break;
    case RP_ROLE_CALL_EXIT:
        if (p->active && p->role == RP_ROLE_CALL_ENTRY &&
            p->index == rp->call_of[ev] - 1u) {
            call_exit(rp, p, &rp->calls[p->index], r->data, ns);
            p->active = 0;
        } else {
            rp->unmatched_exits++;
        }
        break;
    case RP_ROLE_FREE:
        if (r->data != 0) {
            rp->frees++;
            if (!heap_release(rp, r->data, ns))
                rp->unknown_frees++;
        }
        break;
    case RP_ROLE_UNMAP:
        rp->frees++;
        if (!heap_release(rp, r->data, ns))
            rp->unknown_frees++;
        break;
    case RP_ROLE_SWITCH_IN:
    case RP_ROLE_SWITCH_OUT:
        on_switch(rp, r, t, role, ns);
        break;
    default:
        break;
    }
    return rp->oom ? 1 : 0;
}

/*=====   Whole report   =====*/

void report_init(struct report *rp, flightrec_client *client,
                 uint64_t contended_ns)
{
    memset(rp, 0, sizeof *rp);
    rp->client = client;
    rp->contended_ns = contended_ns;
    fr_map_init(&rp->threads);
    fr_map_init(&rp->locks);
    fr_map_init(&rp->live);
    fr_map_init(&rp->spans);
}

int report_lossy(const struct report *rp)
{
    struct flightrec_client_totals tot;

    flightrec_client_totals(rp->client, &tot);
    return tot.overflow != 0 || tot.discard != 0 || tot.missing != 0 ||
           rp->loss_records != 0;
}

static int cmp_thread(const void *a, const void *b)
{
    const struct rp_thread *x = *(const void *const *)a;
    const struct rp_thread *y = *(const void *const *)b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_lock(const void *a, const void *b)
{
    const struct rp_lock *x = *(const void *const *)a;
    const struct rp_lock *y = *(const void *const *)b;
    if (x->wait.total != y->wait.total)
        return x->wait.total > y->wait.total ? -1 : 1;
    if (x->acquisitions != y->acquisitions)
        return x->acquisitions > y->acquisitions ? -1 : 1;
    return x->address < y->address ? -1 : x->address > y->address;
}

static int cmp_lock_thread(const void *a, const void *b)
{
    const struct rp_lock_thread *x = a, *y = b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_span(const void *a, const void *b)
{
    const struct rp_span *x = *(const void *const *)a;
    const struct rp_span *y = *(const void *const *)b;
    if (x->duration.total != y->duration.total)
        return x->duration.total > y->duration.total ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_call(const void *a, const void *b)
{
    const struct rp_call *x = a, *y = b;
    if (x->latency.total != y->latency.total)
        return x->latency.total > y->latency.total ? -1 : 1;
    return strcmp(x->name, y->name);
}

void report_finish(struct report *rp)
{
    for (size_t i = 0; i < rp->thread_count; i++) {
        struct rp_thread *t = rp->thread_list[i];
        /* Still running at the end of the trace.  perf records no switch
         * out of a thread that exits: such a thread ran until its last
         * event (its exit). */
        uint64_t end = rp->last_ns;
        if (t->switches_from_perf)
            end = t->last_ns > t->on_since_ns ? t->last_ns : t->on_since_ns;
        if (t->on_cpu && rp->have_time)
            cpu_interval(rp, t, t->on_since_ns, end);
        t->on_cpu = 0;
        if (t->name[0] == '\0' && t->tid >= 0) {
            const char *n = flightrec_client_thread_name(rp->client, t->tid);
            if (n != NULL)
                snprintf(t->name, sizeof t->name, "%s", n);
        }
    }
    if (rp->thread_count > 1)
        qsort(rp->thread_list, rp->thread_count, sizeof(void *), cmp_thread);
    if (rp->lock_count > 1)
        qsort(rp->lock_list, rp->lock_count, sizeof(void *), cmp_lock);
    for (size_t i = 0; i < rp->lock_count; i++)
        if (rp->lock_list[i]->thread_count > 1)
            qsort(rp->lock_list[i]->threads, rp->lock_list[i]->thread_count,
                  sizeof(struct rp_lock_thread), cmp_lock_thread);
    if (rp->span_count > 1)
        qsort(rp->span_list, rp->span_count, sizeof(void *), cmp_span);
    if (rp->call_count > 1)
        qsort(rp->calls, rp->call_count, sizeof *rp->calls, cmp_call);
}

static void free_val(void *val, void *arg)
{
    (void)arg;
    free(val);
}

static void free_call_fd(void *val, void *arg)
{
    (void)arg;
    rp_series_free(&((struct rp_call_fd *)val)->latency);
    free(val);
}

void report_free(struct report *rp)
{
    fr_symbols_destroy(rp->symbols);
    rp->symbols = NULL;
    for (size_t i = 0; i < rp->thread_count; i++) {
        free(rp->thread_list[i]->timeline);
        free(rp->thread_list[i]->cpu_timeline);
        free(rp->thread_list[i]->ctx[0].spans);
        free(rp->thread_list[i]->ctx[1].spans);
    }
    fr_map_each(&rp->threads, free_val, NULL);
    fr_map_free(&rp->threads);
    free(rp->thread_list);
    for (size_t i = 0; i < rp->lock_count; i++) {
        struct rp_lock *l = rp->lock_list[i];
        rp_series_free(&l->wait);
        rp_series_free(&l->hold);
        free(l->holders);
        free(l->threads);
    }
    fr_map_each(&rp->locks, free_val, NULL);
    fr_map_free(&rp->locks);
    free(rp->lock_list);
    for (size_t i = 0; i < rp->call_count; i++) {
        rp_series_free(&rp->calls[i].latency);
        fr_map_each(&rp->calls[i].fds, free_call_fd, NULL);
        fr_map_free(&rp->calls[i].fds);
    }
    free(rp->calls);
    fr_map_free(&rp->live);
    free(rp->allocs);
    for (size_t i = 0; i < rp->span_count; i++)
        rp_series_free(&rp->span_list[i]->duration);
    fr_map_each(&rp->spans, free_val, NULL);
    fr_map_free(&rp->spans);
    free(rp->span_list);
}
