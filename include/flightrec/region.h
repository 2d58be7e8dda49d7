/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief The ring region: the memory layout a recording process keeps its
 * rings in, documented and versioned (docs/format.md, "The ring region").
 *
 * A region is one block of memory that describes itself: a header with a
 * magic, the layout version, the word size and byte order of the writer,
 * and the offsets of everything else.  It holds no pointers, only offsets
 * from its first byte, so the same bytes can be read at another address:
 * in another process (a shared file), after the process died, or from a
 * firmware image.
 *
 *     offset 0                 struct flightrec_region_header
 *     control_offset           struct flightrec_region_control
 *     hot_offset               struct flightrec_region_hot, a page of its
 *                              own (page-aligned in the file)
 *     names_offset             struct flightrec_region_names
 *     rings_offset ... used    ring pairs: struct flightrec_region_ring,
 *                              then its items, each ring 64-byte aligned
 *
 * Rings are linked newest first from ring_list through next_offset; a ring
 * is in the list only once it is completely initialised.  Positions are
 * free-running item counts (modulo the word size).
 *
 * Writers: the owning thread writes head, dropped, the sync fields and the
 * items; the reader (one at a time) writes tail and the reader_* fields;
 * the registry (under its lock) writes identity, state, lists.
 */
#ifndef FLIGHTREC_REGION_H
#define FLIGHTREC_REGION_H

#include <stdint.h>

#include "format.h"

#ifndef __cplusplus
#include <stdatomic.h>

/** "FRRG" in the writer's byte order: the first word of a region. */
#define FLIGHTREC_REGION_MAGIC 0x47525246u
/** The layout described here.  A reader refuses any other version. */
#define FLIGHTREC_REGION_LAYOUT_VERSION 4u

/**
 * The words that several processes change with one atomic operation
 * (bytes in use, the ring list and links, events lost without a ring, the
 * counter frequency, the consumer claim and the control lock) have 8 bytes
 * each.  Where the CPU has lock-free 64-bit atomics, they are 64-bit words.
 * Where it has none (32-bit PowerPC, where an atomic built on a lock inside
 * the C library excludes threads of one process only; a 32-bit firmware,
 * whose 32-bit words are less code than 64-bit ones made atomic by masking
 * interrupts), each is a 32-bit atomic word in the less significant half
 * of its 8 bytes, the other half staying 0: the same layout, read as 64
 * bits the same value.  Offsets fit, since such a region is below 4 GiB;
 * claims are 32 bits then; counts run modulo 2^32.  The header says which
 * (FLIGHTREC_REGION_WORDS_32 in flags).
 */
#if defined(__GCC_ATOMIC_LLONG_LOCK_FREE) && __GCC_ATOMIC_LLONG_LOCK_FREE == 2
#define FLIGHTREC_REGION_NARROW 0
/** The value of a shared 8-byte word as this build changes it. */
typedef uint64_t flightrec_region_word;
#define FLIGHTREC_REGION_WORD(name) _Atomic uint64_t name
/** Bytes from the start of a shared word's 8 to its member (layout pins). */
#define FLIGHTREC_REGION_WORD_SHIFT 0
#else
#define FLIGHTREC_REGION_NARROW 1
typedef uint32_t flightrec_region_word;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FLIGHTREC_REGION_WORD_SHIFT 4
#define FLIGHTREC_REGION_WORD(name) \
    uint32_t name##_high;                                                     \
    _Atomic uint32_t name
#else
#define FLIGHTREC_REGION_WORD_SHIFT 0
#define FLIGHTREC_REGION_WORD(name) \
    _Atomic uint32_t name;                                                    \
    uint32_t name##_high
#endif
#endif

/** Ring and control modes (the values of enum flightrec_mode). */
#define FLIGHTREC_REGION_MODE_FLIGHT 0u
#define FLIGHTREC_REGION_MODE_DISCARD 1u

#define FLIGHTREC_REGION_LITTLE_ENDIAN 1u
#define FLIGHTREC_REGION_BIG_ENDIAN 2u

/** Bytes of a thread name in a ring's identity (4 words, LSB first). */
#define FLIGHTREC_REGION_NAME_WORDS 4u
/** Words of an event name (64 bytes). */
#define FLIGHTREC_REGION_EVENT_NAME_WORDS 16u
/** Bytes of the remembered filter specs in the control block. */
#define FLIGHTREC_REGION_REMEMBERED_BYTES 512u
/** Alignment of every part of a region (a cache line). */
#define FLIGHTREC_REGION_ALIGN 64u

/** The region header, at offset 0. */
struct flightrec_region_header {
    uint32_t magic;                 /**< FLIGHTREC_REGION_MAGIC */
    uint16_t layout_version;        /**< FLIGHTREC_REGION_LAYOUT_VERSION */
    uint8_t word_size;              /**< sizeof(uintptr_t) of the writer */
    uint8_t byte_order;             /**< FLIGHTREC_REGION_*_ENDIAN */
    uint32_t header_size;           /**< sizeof this header */
    uint32_t ring_size;             /**< sizeof(struct flightrec_region_ring) */
    uint32_t item_size;             /**< bytes of one item in memory */
    uint32_t library_version;       /**< writer's flightrec: major << 16 |
                                         minor << 8 | patch */
    uint64_t region_size;           /**< bytes the region may grow to */
    FLIGHTREC_REGION_WORD(used);          /**< bytes in use; rings lie below */
    uint64_t control_offset;
    uint64_t names_offset;
    uint64_t rings_offset;          /**< where the first ring was placed */
    FLIGHTREC_REGION_WORD(ring_list);     /**< newest ring, 0: none */
    _Atomic uint32_t ring_count;    /**< rings created (ids 0..count-1) */
    int32_t process_id;
    uint64_t counter_base;          /**< counter value at uptime 0 */
    uint64_t realtime_ns;           /**< CLOCK_REALTIME at uptime 0 */
    FLIGHTREC_REGION_WORD(counter_frequency); /**< Hz; 0 until calibrated */
    /** Events recorded where no ring could be had (memory exhausted, or a
     * signal after the thread's exit): counted, never silently lost. */
    FLIGHTREC_REGION_WORD(lost_without_ring);
    uint64_t process_offset;        /**< struct flightrec_region_process */
    uint32_t counter_kind;          /**< FLIGHTREC_REGION_COUNTER_* */
    /** FLIGHTREC_REGION_HOT_SHARED when the process's hot path reads the
     * hot page at hot_offset itself (it maps that page of the session
     * file over its own control page), so that control changes made in
     * the region from outside take effect at each thread's next event. */
    uint32_t flags;
    uint64_t hot_offset;            /**< struct flightrec_region_hot */
    uint8_t reserved[56];
};

/** Header flag: the hot page is the process's own (see flags). */
#define FLIGHTREC_REGION_HOT_SHARED 1u
/** Header flag: the shared 8-byte words are 32-bit atomics (see
 * FLIGHTREC_REGION_WORD).  A reader of the other kind refuses the region:
 * the claims differ, and its atomics would not exclude the writer's. */
#define FLIGHTREC_REGION_WORDS_32 2u

/** What the counter is: a reader outside the process can measure the
 * frequency itself while it is still 0 (a process killed in its first
 * 20 ms) when it is the machine's own time-stamp counter. */
#define FLIGHTREC_REGION_COUNTER_TSC 1u
#define FLIGHTREC_REGION_COUNTER_CNTVCT 2u
#define FLIGHTREC_REGION_COUNTER_MONOTONIC_NS 3u
#define FLIGHTREC_REGION_COUNTER_PORT 4u

/** Bytes of the command line a region keeps (NUL-separated arguments). */
#define FLIGHTREC_REGION_CMDLINE 232u

/** Who wrote the region: for listing sessions and telling a live process
 * from a dead one whose pid was reused. */
struct flightrec_region_process {
    int32_t pid;
    uint32_t uid;
    uint64_t start_time;            /**< /proc/PID/stat field 22 (ticks) */
    char program[16];               /**< the program's name, NUL-padded */
    char cmdline[FLIGHTREC_REGION_CMDLINE]; /**< arguments, NUL-separated */
};

/** Control words: what `flightrec ctl` and the API change, under the
 * control lock; generation changes with every change.  The filter in force
 * is in the hot page (struct flightrec_region_hot). */
struct flightrec_region_control {
    _Atomic uint32_t generation;
    _Atomic uint32_t running;       /**< 1 started, 0 stopped */
    _Atomic uint32_t mode;          /**< enum flightrec_mode of new rings */
    uint32_t items;                 /**< items per thread ring */
    uint32_t signal_items;          /**< items per signal ring */
    uint32_t retained;              /**< retained rings of exited threads */
    /** The consumer that drains the rings, if any: one at a time.  The
     * claim is consumer_claim, pid << 42 | start time (its low 42 bits;
     * with 32-bit words pid << 10 | the low 10 bits), taken with a
     * compare-and-swap; a dead consumer's claim (its pid gone or reused)
     * may be taken over.  consumer_pid repeats the pid for display. */
    _Atomic int32_t consumer_pid;
    uint32_t reserved0;
    FLIGHTREC_REGION_WORD(consumer_claim);
    /** Whoever changes the control words holds this: a claim as above,
     * for the program itself or a `flightrec ctl`; a dead holder's claim
     * may be taken over.  Held for a few stores. */
    FLIGHTREC_REGION_WORD(lock);
    /** `flightrec ctl rewind` steps rewind_request; the consumer, at its
     * next drain, re-reads every ring from its oldest intact item and sets
     * rewind_done to the request it served. */
    _Atomic uint32_t rewind_request;
    _Atomic uint32_t rewind_done;
    /** The length of remembered plus one once it is complete; set to 0
     * before remembered changes and last after it, so that a writer killed
     * in the middle leaves 0 and readers ignore the torn specs. */
    _Atomic uint32_t remembered_length;
    /** A sequence count over the remembered specs: odd while a writer
     * changes them, stepped again after, so that a reader copying them
     * meanwhile sees it moved even when the length comes out the same
     * (0 in a region whose writers predate it: never odd). */
    _Atomic uint32_t remembered_sequence;
    /** The filter the program asked for: bit set = recorded. */
    _Atomic uint32_t filter[FLIGHTREC_EVENT_COUNT / 32];
    /** The filter specs whose names and globs also judge events named
     * later, comma-joined in the order they were applied: the program's
     * FLIGHTREC_EVENTS, then each `flightrec ctl filter` spec.  NUL-
     * terminated; changed under the control lock, valid only as
     * remembered_length says. */
    char remembered[FLIGHTREC_REGION_REMEMBERED_BYTES];
};

/** The hot page: the words the hot path reads (include/flightrec/producer.h,
 * struct flightrec__control_page).  The filter in force: the program's
 * filter while recording is started, all zero while it is stopped, and
 * never the recorder's own uptime ids. */
struct flightrec_region_hot {
    _Atomic uint32_t filter[FLIGHTREC_EVENT_COUNT / 32];
};

/** Event names: a serial that changes with each name (0: unnamed), then the
 * name in words (LSB first, NUL-terminated within 64 bytes). */
struct flightrec_region_names {
    _Atomic uint32_t serial[FLIGHTREC_EVENT_COUNT];
    _Atomic uint32_t words[FLIGHTREC_EVENT_COUNT]
                          [FLIGHTREC_REGION_EVENT_NAME_WORDS];
    /** What each event means: an EVENT_KIND data word (format.h,
     * FLIGHTREC_EVENT_*), 0 for an instant; written before its serial. */
    _Atomic uint32_t kind[FLIGHTREC_EVENT_COUNT];
};

/** Ring states. */
enum flightrec_region_ring_state {
    FLIGHTREC_RING_FREE = 0,        /**< no owner, nothing unread */
    FLIGHTREC_RING_LIVE = 1,        /**< owned by a live thread */
    FLIGHTREC_RING_RETIRED = 2      /**< owner exited; items may be unread */
};

/** A ring's owner as readers report it. */
struct flightrec_region_owner {
    _Atomic int32_t tid;
    _Atomic uint32_t name[FLIGHTREC_REGION_NAME_WORDS];
};

/** What an owner has written of its own (uptime pairs): with it a reader
 * turns ring positions into the program's events. */
struct flightrec_region_recorder {
    _Atomic uintptr_t total;        /**< recorder items since owner start */
    _Atomic uintptr_t last_at;      /**< where the latest group starts */
    _Atomic uint32_t last_count;    /**< items in that group */
    uint32_t pad;
};

/** One ring.  Its items follow at items_offset. */
struct flightrec_region_ring {
    /* The owner's line: the hot path touches only head. */
    _Atomic uintptr_t head;         /**< position of the next item */
    _Atomic uintptr_t dropped;      /**< discard-mode drops (owner) */
    _Atomic uintptr_t nested_dropped; /**< records lost to deep nesting or
                                           while attaching (atomic add) */
    /** recorder[sync_seq & 1] is current.  The owner fills the other slot
     * and then steps sync_seq: a reader interrupted or overtaken always
     * finds one whole slot (and retries if sync_seq moved). */
    _Atomic uint32_t sync_seq;
    uint32_t pad0;
    uint8_t pad1[FLIGHTREC_REGION_ALIGN - 3 * sizeof(uintptr_t) - 8];
    struct flightrec_region_recorder recorder[2];
    uint8_t pad2[FLIGHTREC_REGION_ALIGN -
                 2 * sizeof(struct flightrec_region_recorder)];

    /* The reader's line. */
    _Atomic uintptr_t tail;         /**< next position the reader reads */
    _Atomic uintptr_t reader_events;  /**< owner's events before tail */
    _Atomic uintptr_t reader_dropped; /**< drops already reported */
    _Atomic uint32_t reader_generation; /**< owner_generation last read */
    _Atomic uint32_t reader_flags;
    uint8_t pad3[FLIGHTREC_REGION_ALIGN - 3 * sizeof(uintptr_t) - 8];

    /* Identity, changed by attach and retire. */
    _Atomic uint32_t generation;    /**< odd while the identity changes */
    _Atomic uint32_t state;         /**< enum flightrec_region_ring_state */
    struct flightrec_region_owner owner;
    _Atomic uintptr_t start;        /**< first position of this owner */
    _Atomic uintptr_t dropped_at_start; /**< drops when this owner came */
    /** The previous owner when the ring was reused before a reader had
     * everything: its losses are reported under its own identity. */
    _Atomic uint32_t previous_generation;
    struct flightrec_region_owner previous;
    _Atomic uintptr_t previous_end;     /**< position where it ended */
    _Atomic uintptr_t previous_events;  /**< its events, in all */
    _Atomic uintptr_t previous_dropped; /**< drop counter at its end */

    /* Fixed at creation. */
    uint32_t id;                    /**< ring id in streams */
    uint32_t context;               /**< 0 thread, 1 signal handlers */
    _Atomic uint32_t mode;          /**< enum flightrec_mode */
    /** The generation the current owner got the ring at: a reader that
     * sees another value knows the owner changed (a rename alone changes
     * only generation). */
    _Atomic uint32_t owner_generation;
    uint64_t capacity;              /**< items, a power of two */
    uint64_t items_offset;
    uint64_t partner_offset;        /**< thread ring <-> signal ring */
    uint64_t bytes;                 /**< descriptor and items */
    FLIGHTREC_REGION_WORD(next_offset);   /**< older ring in the list, 0: last */

    /* Registry bookkeeping (under the registry lock). */
    uint64_t retire_order;
    uint64_t list_prev;             /**< free or retired list links */
    uint64_t list_next;
    uint32_t registry_list;         /**< 0 none, 1 free list, 2 retired */
    /** Steps before every change of mode (by the owner): a reader that
     * copied under discard mode's bound checks that no change came in
     * between, even one and back. */
    _Atomic uint32_t mode_changes;
    uint8_t reserved[24];
};

/** One item in memory (the stream packs it: 4 + word size bytes). */
struct flightrec_region_item {
    _Atomic uint32_t event;         /**< time << 10 | event id */
    _Atomic uintptr_t data;
};

#endif /* !__cplusplus */

#endif
