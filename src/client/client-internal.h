/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internal state of the stream decoder, shared by its files:
 *   client.c        API, byte framing, the decode loop and item dispatch
 *   client-header.c versions and numberings, stream header facts
 *   client-chunk.c  chunks, loss accounting, ring items, running threads
 *   client-time.c   tick/ns arithmetic, sync anchors, hold-back resolution
 *   client-merge.c  delivery: per-ring queues and the k-way merge heap
 *   client-names.c  event and thread names, the id maps
 *   client-read.c   flightrec_client_read_fd(): files in exact order,
 *                   ring by ring, in memory bounded by the rings
 */
#ifndef FLIGHTREC_CLIENT_INTERNAL_H
#define FLIGHTREC_CLIENT_INTERNAL_H

#include <flightrec/client.h>

#include <stdint.h>

#include "util/hash-map.h"

/* Documented limits; all come with a clear error, never a crash. */
#define FRC_RING_ID_LIMIT (1u << 24)       /* ring ids 0 .. 2^24 - 1 */
#define FRC_HOLD_RING_MAX (1u << 22)       /* held items per ring */
#define FRC_HOLD_TOTAL_MAX (1u << 24)      /* held items, all rings */
#define FRC_ITEMS_PER_RING_MAX (1u << 30)  /* PER_CPU_COUNT / COUNT */
#define FRC_NAME_MAX 64                    /* bytes incl. NUL; truncated */

#define FRC_TIME_WRAP (1u << FLIGHTREC_TIME_BITS)

/* What an item id means in the stream's numbering (client-header.c builds
 * the table per numbering, by name).  Ring items are timed; the rest are
 * framing (client-chunk.c) or header facts (client-header.c). */
enum frc_action {
    A_EVENT = 0,      /* a timed item the program recorded */
    A_EVENT_THREAD,   /* RTEMS THREAD_CREATE: an event that heads a name */
    A_SWITCH_OUT,     /* RTEMS THREAD_SWITCH_OUT: the old thread runs */
    A_SWITCH_IN,      /* RTEMS THREAD_SWITCH_IN: the new thread runs */
    A_UP_LOW,
    A_UP_HIGH,
    A_RING_LAST = A_UP_HIGH,
    /* Chunk framing and names. */
    A_PROCESSOR,
    A_THREAD_ID,
    A_THREAD_NAME,
    A_CONTEXT,
    A_POSITION,
    A_OVERFLOW,
    A_DISCARD,
    A_TAIL,           /* RTEMS v1..v9 (PER_CPU_)TAIL */
    A_HEAD,           /* RTEMS v1..v9 (PER_CPU_)HEAD */
    A_NAME_ID,
    A_NAME,
    A_KIND,           /* EVENT_KIND: what the event just named means */
    A_CHUNK_LAST = A_KIND,
    /* Header facts. */
    A_IGNORE,         /* untimed metadata nobody needs */
    A_VERSION,
    A_FREQUENCY,
    A_FREQUENCY_HIGH,
    A_COUNT,          /* PER_CPU_COUNT / v1 COUNT */
    A_RING_COUNT,
    A_PROC_MAX,
    A_PID,
    A_RT_LOW,
    A_RT_HIGH,
    A_INFO_ARCH,
    A_INFO_BSP,
    A_INFO_TOOLS,
    A_INFO_OTHER
};

/* A record waiting for its time (hold-back), or on its way to delivery. */
struct frc_rec {
    uint64_t time;    /* ns once timed; in hold-back: 0 */
    uint64_t data;    /* data word, or the loss count */
    uint64_t offset;
    uint32_t event;   /* event id, or the loss kind */
    uint32_t field;   /* 22-bit time field (hold-back) */
    uint32_t gen;     /* the ring's identity generation when decoded */
    uint16_t type;    /* enum flightrec_record_type */
    uint16_t flags;
};

/* A growable FIFO of records (circular). */
struct frc_queue {
    struct frc_rec *buf;
    size_t cap;       /* power of two or 0 */
    size_t head;
    size_t len;
};

/* A timed record waiting for its turn in the merge: only what delivery
 * needs, 32 bytes, since with window 0 every record of the stream waits. */
struct frc_qrec {
    uint64_t time;
    uint64_t data;    /* data word, or the loss count */
    uint64_t offset;
    uint32_t gen;     /* the ring's identity generation when decoded */
    uint16_t event;   /* event id (< 1024), or the loss kind */
    uint8_t type;
    uint8_t flags;
};

/* Merge queues are lists of fixed blocks from a per-client pool: growing
 * never copies, and a block emptied by the merge is reused by any ring, so
 * memory follows what the window holds.  ~8 KiB per block. */
#define FRC_BLOCK_RECS 255u
/* Blocks come in size classes, 3 to 255 records (~112 B to ~8 KiB): a
 * ring's first block is the smallest and each next one a class larger, so
 * that a ring holding one record costs ~112 bytes, not 8 KiB. */
#define FRC_BLOCK_CLASSES 4u
struct frc_block {
    struct frc_block *next;
    uint32_t cap;          /* records it holds: 3, 15, 63 or 255 */
    uint32_t size_class;
    struct frc_qrec rec[];
};

/* A ring's identity as records saw it: what a reused ring may change
 * between chunks while records of the old owner still wait. */
struct frc_ident {
    int64_t thread_id;
    uint32_t context;
    uint32_t gen;
    char thread_name[FRC_NAME_MAX];
};

struct frc_ring {
    struct flightrec_ring_info info;
    uint32_t index;        /* position in client->rings */

    /* What the merge touches per record comes first, next to info's
     * counters: with thousands of rings every line of a ring is a cache
     * miss.  Merge: timed records waiting for their turn, oldest first;
     * the ring is in the merge heap exactly when rq_head != NULL. */
    struct frc_block *rq_head;
    struct frc_block *rq_tail;
    uint32_t rq_first;      /* next record in rq_head */
    uint32_t rq_end;        /* records written to rq_tail */
    uint32_t rq_cap;        /* capacity of rq_tail */
    /* Ordered reading (client-read.c): the ring has input not yet fed,
     * so the merge stops when its queue runs empty. */
    int pending;
    int has_first;          /* info.first_ns is set */
    uint32_t gen;           /* generation of ident (see below) */
    int gen_used;           /* a record may carry gen */
    int ident_dirty;        /* info's identity written since ident taken */

    /* Time chain: valid when synced. */
    int synced;
    int fast;              /* fast path allowed (see frc_refresh_fast) */
    uint32_t field;        /* 22-bit field of the last timed item */
    uint64_t ticks;        /* flightrec: absolute uptime ticks */
    uint64_t ns;           /* time of the chain position */
    uint64_t rem;          /* remainder of ticks * 1e9 / f */
    uint64_t floor;        /* last delivered time (monotonic floor) */
    int has_floor;

    /* UPTIME_LOW awaiting its UPTIME_HIGH. */
    uint64_t seq;          /* ring items decoded */
    uint64_t low_seq;
    uint32_t low_value;
    uint32_t low_field;
    int has_low;

    /* Chunk state. */
    int in_header;         /* between PROCESSOR and the first ring item */
    int has_position;
    uint32_t position;     /* RING_POSITION of the current chunk */
    uint64_t chunk_seq;    /* seq at the chunk's first ring item */
    uint64_t uptime_seq;   /* uptime items among seq (positions of
                              flightrec v2 streams count the others) */
    uint64_t chunk_uptime_seq;
    int has_end;
    uint32_t end;          /* position after the previous chunk */
    uint64_t chunk_overflow;
    uint64_t chunk_discard;
    int has_v1_head;
    uint32_t v1_head;
    uint32_t v1_tail;
    int has_v1_tail;

    struct frc_queue held;  /* waiting for a sync (or losses for an item) */
    size_t held_events;     /* EVENT records in held */


    /* Identity generations (client-merge.c): records carry the generation
     * of info's identity fields when they were decoded, so that a record
     * delivered after the ring changed owner still describes its own. */
    struct frc_ident ident; /* snapshot of generation gen */
    struct frc_ident *hist; /* older generations, oldest first (circular) */
    size_t hist_cap;        /* power of two or 0 */
    size_t hist_head;
    size_t hist_len;
};

struct frc_thread {
    int64_t id;
    uint32_t ring;     /* RTEMS: index + 1 of the CPU it last ran on, or 0 */
    char name[FRC_NAME_MAX];
};

/* The heap orders rings by (key, index): equal times go in order of first
 * appearance.  The entry carries both, so sifting never touches a ring. */
struct frc_heap_entry {
    uint64_t key;          /* time of the ring's first queued record */
    uint32_t index;        /* the ring's index in client->rings */
};

struct flightrec_client {
    struct flightrec_client_options opt;
    struct flightrec_stream_info info;
    struct flightrec_client_totals totals;
    unsigned char cls[FLIGHTREC_EVENT_COUNT]; /* enum frc_action per id */

    /* Framing. */
    uint64_t consumed;      /* bytes consumed so far */
    unsigned char part[16]; /* bytes of an item split across feeds */
    size_t part_len;
    size_t item_size;
    int big_endian;
    int wide;
    int header_done;        /* format word and magic read */
    int finished;

    /* Error (sticky). */
    int error;
    uint64_t error_offset;
    char message[160];

    /* Header facts. */
    uint64_t freq_low;       /* FREQUENCY data (full on 64-bit formats) */
    uint32_t freq_high;
    int freq_locked;        /* a timed item used it; later changes ignored */
    uint64_t freq;
    int rtems;              /* RTEMS stream: unsigned steps, 32.32 uptime */
    int positions_in_events; /* flightrec v2: positions skip uptime items */
    int numbering;          /* enum frc_numbering, once known */
    int v1_pending;         /* VERSION 1 read, numbering not yet known */
    int window_auto;        /* merge window derived from the stream */
    uint32_t step_limit;    /* steps >= this are backwards (flightrec) */
    uint32_t rt_low;
    int has_rt_low;
    int64_t proc_max;       /* RTEMS PROCESSOR_MAXIMUM, -1 if unknown */

    /* Fast exact division by the frequency (see client-time.c). */
    uint64_t div_magic;
    int div_shift;
    int div_kind;           /* 0: by one, 1: shift, 2: magic */

    /* Rings.  A ring that has held nothing but chunk starts (PROCESSOR
     * items) has no struct frc_ring yet (rings[i] == NULL, its id in
     * ring_map): an empty ring costs its map entry and pointer, ~30
     * bytes.  frc_cur() makes the struct at the chunk's first other
     * item. */
    struct frc_ring **rings;
    size_t ring_count;
    size_t ring_cap;
    struct fr_hash_map ring_map; /* ring id -> index (the same order) */
    struct frc_ring *cur;      /* ring of the current chunk */
    uint32_t cur_empty;        /* cur is NULL: index + 1 of the chunk's
                                * ring when it has no struct yet, or 0 */
    struct flightrec_ring_info empty_info; /* flightrec_client_ring() of
                                            * such a ring */
    size_t held_total;

    /* Name sequences: the item number the next name item must have. */
    uint64_t item_no;
    uint64_t name_next;
    int name_kind;             /* 0 none, 1 thread, 2 event */
    int64_t name_target;
    char name_buf[FRC_NAME_MAX];
    size_t name_len;
    int name_done;
    struct frc_ring *name_ring; /* ring whose thread_name follows, or NULL */
    uint64_t info_next;
    uint32_t info_event;
    size_t info_len;
    int info_done;

    /* Names. */
    char *event_names[FLIGHTREC_EVENT_COUNT]; /* registered, or NULL */
    char (*gen_names)[16];                    /* "USER_n" made on demand */
    uint64_t event_names_changes;  /* see flightrec_client_event_names_changes() */
    struct frc_thread *threads;
    size_t thread_count;
    size_t thread_cap;
    struct fr_hash_map thread_map; /* thread id -> index in threads */

    /* Merge. */
    struct frc_heap_entry *heap;
    size_t heap_len;
    size_t heap_cap;
    uint64_t max_time;        /* latest time decoded */
    uint64_t released;        /* latest time delivered by the merge, or 0 */
    uint64_t release_at;      /* max_time from which the heap's first
                               * record is due (saturated), UINT64_MAX if
                               * none is */
    /* Batched release (see frc_merge_push_fast): a timed event at or
     * above fast_floor may be queued without releasing what became due;
     * defer_left counts how many more may be (FRC_RELEASE_BATCH: nothing
     * is deferred, fast_floor == released). */
    uint64_t fast_floor;
    uint32_t defer_left;
    struct frc_block *pool[FRC_BLOCK_CLASSES]; /* free blocks by class */
    int exact;                /* ordered reading: nothing is ever late */
    struct frc_ring *hungry;  /* ring the merge stopped at (pending input) */
    /* Ordered reading: while the reader feeds this ring (its queue empty),
     * its records before direct_below come before every queued record,
     * so they skip the queue (see frc_emit). */
    struct frc_ring *direct_ring;
    uint64_t direct_below;
    /* Ordered reading: records the merge may still queue before the
     * decode loop stops (feed_stop) and the reader moves on. */
    uint64_t feed_quota;
    int feed_stop;

    /* Memory the decoder holds (its own count of its large allocations),
     * against opt.memory_limit. */
    uint64_t mem_used;

    /* Ordered reading, first pass: told where each chunk (ring index) or
     * name record (UINT32_MAX) begins. */
    void (*on_segment)(void *arg, uint32_t ring_index, uint64_t offset);
    void *segment_arg;
    /* Ordered reading, first pass: plain timed events in a running ring
     * are counted, neither timed nor delivered (nothing is kept of them
     * but the index; the second pass decodes them in full).  The pass's
     * times are wrong from then on and may send an event the slow way;
     * they decide nothing it keeps: a synced ring's event is never held
     * and fails in neither way. */
    int scan_only;
    struct flightrec_ring_info view; /* ring_info of a record whose ring
                                      * changed identity since */

    /* Event kinds: EVENT_KIND data words, 0 (instant) unless the stream
     * defined one; text_active once a string event is defined, from when
     * on every delivery goes through deliver() (client-merge.c). */
    uint32_t event_kind[FLIGHTREC_EVENT_COUNT];
    int text_active;
    /* A string event's record being put together at delivery: its items
     * come one after another (one record, one time); it is delivered at
     * its NUL, or when any other record comes. */
    struct {
        int pending;
        struct frc_ring *ring;
        uint32_t flags;
        uint32_t event;
        uint32_t gen;
        uint64_t time;
        uint64_t data;
        uint64_t offset;
        size_t len;
        char buf[FLIGHTREC_STRING_MAX];
    } text;

    struct flightrec_record rec; /* filled per delivery */
    struct frc_ring *rec_ring;   /* rec holds this ring's fast fields */
};

/* Bytes counted against the memory limit for a ring's struct (and the
 * allocator's overhead); its map entry and pointer are counted as they
 * grow. */
#define FRC_RING_COST (sizeof(struct frc_ring) + 16u)

/* client.c */
/* Decodes items in @a cur's chunk (or, when @a cur is NULL, in the chunk
 * of the ring of index cur_empty - 1 that has no struct yet, or outside a
 * chunk when that is 0). */
int frc_feed_items(struct flightrec_client *c, struct frc_ring *cur,
                   uint32_t cur_empty, const unsigned char *p, size_t n,
                   uint64_t offset, size_t *used);
int frc_end_chunk(struct flightrec_client *c, struct frc_ring *r,
                  uint64_t offset);
int frc_fail(struct flightrec_client *c, int code, uint64_t offset,
             const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* client-header.c */
int frc_set_version(struct flightrec_client *c, uint64_t version,
                    uint64_t offset);
int frc_v1_numbering(struct flightrec_client *c, uint32_t event,
                     uint64_t offset);
int frc_header_item(struct flightrec_client *c, uint32_t action,
                    uint64_t data, uint64_t offset);

/* client-chunk.c */
int frc_new_ring(struct flightrec_client *c, uint32_t id, uint64_t offset);
/* The current chunk's ring, made if it had none (see cur_empty); NULL
 * outside a chunk, and after an error (out of memory). */
struct frc_ring *frc_cur(struct flightrec_client *c, uint64_t offset);
int frc_chunk_item(struct flightrec_client *c, uint32_t action,
                   uint64_t data, uint64_t offset);
int frc_ring_item(struct flightrec_client *c, uint32_t action,
                  uint32_t word, uint64_t data, uint64_t offset);
int frc_close_chunk(struct flightrec_client *c, struct frc_ring *r,
                    uint64_t offset);

/* client-time.c */
uint64_t frc_bt_to_ns(uint64_t bt);
uint64_t frc_mulhi(uint64_t a, uint64_t b);
void frc_set_divisor(struct flightrec_client *c, uint64_t d);
void frc_refresh_fast(const struct flightrec_client *c, struct frc_ring *r);
int frc_sync(struct flightrec_client *c, struct frc_ring *r, uint32_t field,
             uint64_t value, uint64_t offset);
void frc_break(struct frc_ring *r);
int frc_timed_item(struct flightrec_client *c, struct frc_ring *r,
                   uint32_t field, uint32_t event, uint64_t data,
                   uint64_t offset);
int frc_hold(struct flightrec_client *c, struct frc_ring *r,
             const struct frc_rec *rec);
int frc_flush_untimed(struct flightrec_client *c, struct frc_ring *r);

/* Division by the frequency with the reciprocal frc_set_divisor() made
 * (Granlund-Montgomery round-up variant): exact for every 64-bit x. */
static FLIGHTREC_ALWAYS_INLINE uint64_t frc_div_by(int kind, uint64_t magic,
                                                 int shift, uint64_t x)
{
    uint64_t t;

    if (kind == 2) {
#ifdef __SIZEOF_INT128__
        t = (uint64_t)(((unsigned __int128)magic * x) >> 64);
#else
        t = frc_mulhi(magic, x);
#endif
        return (t + ((x - t) >> 1)) >> shift;
    }
    return kind == 1 ? x >> shift : x;
}

static inline uint64_t frc_div(const struct flightrec_client *c, uint64_t x)
{
    return frc_div_by(c->div_kind, c->div_magic, c->div_shift, x);
}

/* client-merge.c */
int frc_charge(struct flightrec_client *c, uint64_t bytes, uint64_t offset);
/* Bytes given back (a ring's read-ahead buffer freed). */
void frc_uncharge(struct flightrec_client *c, uint64_t bytes);
int frc_queue_push(struct flightrec_client *c, struct frc_queue *q,
                   const struct frc_rec *rec);
void frc_queue_free(struct frc_queue *q);
int frc_emit(struct flightrec_client *c, struct frc_ring *r,
             struct frc_rec *rec);
int frc_deliver(struct flightrec_client *c, struct frc_ring *r,
                const struct frc_rec *rec);
int frc_merge_release(struct flightrec_client *c);
int frc_merge_drain(struct flightrec_client *c);
/* Delivers a string event still being put together (at the end). */
int frc_text_flush(struct flightrec_client *c);
struct frc_ring *frc_merge_step(struct flightrec_client *c, int *rc);
/* Ring @a r (hungry, so out of the heap) is fed next: what it decodes
 * before the heap's first record is delivered at once. */
void frc_merge_direct(struct flightrec_client *c, struct frc_ring *r);
void frc_merge_free(struct flightrec_client *c);
void frc_ident_init(struct frc_ring *r);
int frc_ident_take(struct flightrec_client *c, struct frc_ring *r,
                   uint32_t *gen);
void frc_ring_free(struct frc_ring *r);

/* The ring's identity fields (thread id, name, context) were written: the
 * next record takes a new generation if they differ, so the fast path, which
 * takes the current one blindly, waits for it. */
static inline void frc_ident_touch(struct frc_ring *r)
{
    r->ident_dirty = 1;
    r->fast = 0;
}

/*
 * The counters a delivered record moves: the one place they are kept, for
 * the decode loop's fast path (client.c) and every other delivery
 * (client-merge.c).  FRC_COUNT_EVENT for EVENT records, FRC_COUNT_TIME for
 * all.  Macros, not inline functions: with the functions GCC allocated
 * registers differently in the merge's release loop, 3 % more
 * instructions per merged record.
 */
#define FRC_COUNT_EVENT(c, r, flags) \
    do { \
        (r)->info.events++; \
        (c)->totals.events++; \
        if (FLIGHTREC_UNLIKELY((flags) & FLIGHTREC_RECORD_UNTIMED)) { \
            (r)->info.untimed++; \
            (c)->totals.untimed++; \
        } \
    } while (0)

#define FRC_COUNT_TIME(c, r, flags, time) \
    do { \
        if (FLIGHTREC_LIKELY(!((flags) & FLIGHTREC_RECORD_UNTIMED))) { \
            if (FLIGHTREC_UNLIKELY(!(r)->has_first)) { \
                (r)->info.first_ns = (time); \
                (r)->has_first = 1; \
            } \
            (r)->info.last_ns = (time); \
        } \
        if (FLIGHTREC_UNLIKELY((flags) & FLIGHTREC_RECORD_LATE)) \
            (c)->totals.late++; \
    } while (0)

/*
 * Records a due release may wait for.  Releasing as each record comes
 * costs a pass over the heap per record; batching is exact because a
 * record queued meanwhile comes strictly after every record that was due
 * (its time is above the window's limit when it comes), so the merge
 * takes the due records first and in the same order either way.  Every
 * other item, the end of each feed, and a record below the floor release
 * what is due first (frc_merge_settle), so callbacks see the same records
 * with the same counters, and no late mark, block or byte changes.
 */
#define FRC_RELEASE_BATCH 512u

/*
 * The merge's common case, inlined into the decode loop: a timed event of
 * a ring that already has records queued, with room in its last block, and
 * not late.  Returns 1 if it took the record (then 0 or an error from
 * frc_merge_release() is in *rc), 0 if frc_emit() must handle it.
 */
static FLIGHTREC_ALWAYS_INLINE int frc_merge_push_fast(
    struct flightrec_client *c, struct frc_ring *r, uint64_t time,
    uint64_t data, uint64_t offset, uint32_t event, int *rc)
{
    struct frc_qrec *q;

    if (!(r->rq_head != NULL && r->rq_end < r->rq_cap &&
          time >= c->fast_floor))
        return 0;
    q = &r->rq_tail->rec[r->rq_end++];
    q->time = time;
    q->data = data;
    q->offset = offset;
    q->gen = r->gen;
    q->event = (uint16_t)event;
    q->type = FLIGHTREC_RECORD_EVENT;
    q->flags = 0;
    if (FLIGHTREC_UNLIKELY(--c->feed_quota == 0))
        c->feed_stop = 1;
    if (time > c->max_time)
        c->max_time = time;
    *rc = 0;
    if (FLIGHTREC_UNLIKELY(c->max_time >= c->release_at)) {
        if (c->defer_left != 0) {
            /* Due, not released yet: what comes next must come after
             * the window's limit, max_time - w (no wrap: max_time >=
             * release_at >= w, or both are UINT64_MAX). */
            c->defer_left--;
            c->fast_floor = c->max_time - c->opt.merge_window_ns + 1;
        } else {
            *rc = frc_merge_release(c);
        }
    }
    return 1;
}

/* Releases what the fast path left due (see FRC_RELEASE_BATCH). */
static inline int frc_merge_settle(struct flightrec_client *c)
{
    return FLIGHTREC_UNLIKELY(c->defer_left != FRC_RELEASE_BATCH)
               ? frc_merge_release(c)
               : 0;
}

/* client-names.c */
void frc_name_start(struct flightrec_client *c, int kind, int64_t target,
                    struct frc_ring *ring);
int frc_name_item(struct flightrec_client *c, uint64_t data);
void frc_info_item(struct flightrec_client *c, uint32_t action,
                   uint64_t data);
void frc_thread_runs(struct flightrec_client *c, struct frc_ring *r,
                     int64_t id);
void frc_thread_unknown(struct frc_ring *r);
void frc_names_free(struct flightrec_client *c);

#endif
