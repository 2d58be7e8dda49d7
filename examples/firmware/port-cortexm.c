/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Cortex-M port of the recording runtime (src/producer/platform.h) for
 * the ARM MPS2 boards QEMU emulates (mps2-an385: Cortex-M3, mps2-an505:
 * Cortex-M33; port-cortexm.h has their differences), built with
 * FLIGHTREC_PORT_FIRMWARE and FLIGHTREC_PORT_COUNTER.
 *
 * - The region is a static array; nothing is ever given back.
 * - The counter is the CMSDK TIMER0 (32-bit down-counter at the system
 *   clock) extended to 64 bits by its wrap interrupt, from 2^32.
 * - The recorder's one "thread" is the CPU: tasks switch cooperatively, so
 *   no task is ever switched out in the middle of a record; interrupts are
 *   its signals (a record they interrupt sends theirs to the signal ring).
 * - Start-up takes fixed settings: there is no environment.
 * - Streams go out on UART0 as base64 lines between marker lines
 *   (docs/format.md, "Console logs"): write() is this port's.
 * - The C library is not linked (-nostdlib): the few functions the core
 *   calls are here.  The core needs no 64-bit atomics (which ARMv7-M
 *   lacks): the region's shared words are 32-bit (flightrec/region.h).
 */
#include "port-cortexm.h"

#include "platform.h"
#include "runtime.h"

#include <errno.h>
#include <string.h>
#include <sys/types.h>

/*=====   Registers   =====*/

#define REG(address) (*(volatile uint32_t *)(address))

#define UART0_BASE FW_UART0_BASE
#define UART_DATA REG(UART0_BASE + 0x00u)
#define UART_STATE REG(UART0_BASE + 0x04u)
#define UART_CTRL REG(UART0_BASE + 0x08u)
#define UART_BAUDDIV REG(UART0_BASE + 0x10u)
#define UART_STATE_TX_FULL 1u
#define UART_CTRL_TX_ENABLE 1u

#define TIMER0_BASE FW_TIMER0_BASE
#define TIMER_CTRL(base) REG((base) + 0x00u)
#define TIMER_VALUE(base) REG((base) + 0x04u)
#define TIMER_RELOAD(base) REG((base) + 0x08u)
#define TIMER_INTSTATUS(base) REG((base) + 0x0cu)
#define TIMER_CTRL_ENABLE 1u
#define TIMER_CTRL_IRQ_ENABLE 8u

#define NVIC_ISER0 REG(0xe000e100u)
#define NVIC_IPR(n) (*(volatile uint8_t *)(0xe000e400u + (n)))

/*=====   The counter   =====*/

/* Wraps of TIMER0 counted by its interrupt (the highest priority), from
 * 1: the counter starts at 2^32, where the hot path's deadlines are above
 * its busy mark (a deadline's high half of 0, flightrec/producer.h) from
 * the first event on; below 2^32 every event would take the slow path. */
static volatile uint32_t counter_wraps = 1;

void fw_counter_init(void)
{
    TIMER_CTRL(TIMER0_BASE) = 0;
    TIMER_RELOAD(TIMER0_BASE) = 0xffffffffu;
    TIMER_VALUE(TIMER0_BASE) = 0xffffffffu;
    TIMER_INTSTATUS(TIMER0_BASE) = 1u;
    NVIC_IPR(FW_IRQ_TIMER0) = 0x00; /* above every other interrupt */
    NVIC_ISER0 = 1u << FW_IRQ_TIMER0;
    TIMER_CTRL(TIMER0_BASE) = TIMER_CTRL_ENABLE | TIMER_CTRL_IRQ_ENABLE;
}

void fw_timer0_handler(void)
{
    TIMER_INTSTATUS(TIMER0_BASE) = 1u;
    counter_wraps++;
}

/* Ticks since fw_counter_init(), plus 2^32: the wrap count, then the
 * elapsed part of the down-counter.  A wrap that happened but whose
 * interrupt has not run yet (a handler of the same priority, masked
 * interrupts) shows as the pending flag with a counter just below its
 * reload. */
uint64_t flightrec_port_counter(void)
{
    uint32_t wraps, value, pending;
    do { /* again if the wrap interrupt ran in between */
        wraps = counter_wraps;
        value = TIMER_VALUE(TIMER0_BASE);
        pending = TIMER_INTSTATUS(TIMER0_BASE) & 1u;
    } while (wraps != counter_wraps);
    uint32_t elapsed = ~value;
    if (pending && elapsed < 0x80000000u)
        wraps++;
    return ((uint64_t)wraps << 32) | elapsed;
}

uint64_t flightrec_port_counter_frequency(void)
{
    return FW_CLOCK_HZ;
}

/*=====   The region   =====*/

static unsigned char region[FW_REGION_BYTES]
    __attribute__((aligned(FLIGHTREC_REGION_ALIGN)));

void *flightrec__port_region_reserve(size_t *size)
{
    if (*size > sizeof(region))
        *size = sizeof(region);
    return region;
}

void flightrec__port_region_discard(void *at, size_t size)
{
    memset(at, 0, size);
}

void flightrec__port_region_prefault(void *at, size_t size)
{
    (void)at;
    (void)size;
}

/* Parts of the region are placed in units of a cache line: no file backs
 * them. */
size_t flightrec__port_page_size(void)
{
    return FLIGHTREC_REGION_ALIGN;
}

/* No session files: the region is this firmware's memory, read out over
 * the UART (or by a debugger). */
int flightrec__port_region_share(void *base, size_t size,
                                 struct flightrec_region_process *process,
                                 char *message, size_t message_size)
{
    (void)base;
    (void)size;
    (void)message_size;
    memset(process, 0, sizeof(*process));
    memcpy(process->program, "firmware", 9);
    message[0] = '\0'; /* nothing to say: private memory is the design */
    return -1;
}

int flightrec__port_region_grow(void *base, size_t from, size_t to)
{
    (void)base;
    (void)from;
    (void)to;
    return 0;
}

int flightrec__port_region_is_shared(void)
{
    return 0;
}

/* Never called: a firmware does not fork. */
void *flightrec__port_region_snapshot_begin(size_t size)
{
    (void)size;
    return NULL;
}

void flightrec__port_region_snapshot_copy(void *to, const void *from,
                                          size_t n)
{
    (void)to;
    (void)from;
    (void)n;
}

int flightrec__port_region_snapshot_install(void *base, void *snapshot,
                                            size_t size)
{
    (void)base;
    (void)snapshot;
    (void)size;
    return -1;
}

void flightrec__port_region_snapshot_drop(void *snapshot, size_t size)
{
    (void)snapshot;
    (void)size;
}

size_t fw_region_bytes_used(void)
{
    const struct flightrec_region_header *h = (const void *)region;
    return (size_t)atomic_load_explicit(&h->used, memory_order_relaxed);
}

/*=====   Identity   =====*/

int32_t flightrec__port_thread_id(void)
{
    return FW_CPU_ID;
}

void flightrec__port_process_forked(struct flightrec_region_process *process)
{
    (void)process; /* no fork on firmware */
}

int32_t flightrec__port_process_id(void)
{
    return 0;
}

int flightrec__port_self_name(char name[16])
{
    memcpy(name, "cpu0", 5);
    return 0;
}

int flightrec__port_thread_name(int32_t tid, char name[16])
{
    (void)tid;
    return flightrec__port_self_name(name);
}

/* The CPU never exits and never forks. */
int flightrec__port_on_thread_exit(void *arg)
{
    (void)arg;
    return 0;
}

void flightrec__port_thread_exit_init(void (*fn)(void *arg))
{
    (void)fn;
}

void flightrec__port_at_fork(void (*prepare)(void), void (*parent)(void),
                             void (*child)(void))
{
    (void)prepare;
    (void)parent;
    (void)child;
}

void flightrec__port_yield(void)
{
}

const char *flightrec__port_getenv(const char *name)
{
    (void)name;
    return NULL;
}

/* No wall clock: uptime 0 is at the epoch. */
uint64_t flightrec__port_monotonic_ns(void)
{
    return 0;
}

uint64_t flightrec__port_realtime_ns(void)
{
    return 0;
}

void flightrec__port_sleep_ns(uint64_t ns)
{
    (void)ns;
}

/*=====   UART   =====*/

void fw_uart_init(void)
{
    UART_BAUDDIV = 16;
    UART_CTRL = UART_CTRL_TX_ENABLE;
}

void fw_uart_put(const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        while (UART_STATE & UART_STATE_TX_FULL)
            ;
        UART_DATA = (unsigned char)text[i];
    }
}

void fw_uart_puts(const char *text)
{
    fw_uart_put(text, strlen(text));
}

void flightrec__port_message(const char *text, size_t length)
{
    fw_uart_put(text, length);
}

/*=====   Streams as base64 blocks   =====*/

/*
 * A fault may come in the middle of a drain (an interrupt handler that
 * faults while the logger task drains), and the fault handler, which
 * never returns, drains once more.  It must find the log and the stream
 * where the interrupted drain left them, to the byte: every change of the
 * block's state below (a byte taken, a character sent) is made with
 * interrupts off, a few instructions each, while the waits for the UART
 * are not.  fw_stream_block_close() then finishes an interrupted block,
 * and flightrec_drain() goes on from the bytes it took
 * (flightrec__port_stream_taken()).
 */

#define BASE64_LINE 76u     /* characters of a full line */

static const char base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static struct {
    int open;                   /* from the begin marker to the end one */
    int ending;                 /* the end marker is (being) sent */
    unsigned char pending[3];   /* bytes taken, not yet in a group */
    unsigned pending_len;
    char out[40];               /* characters to send: a group and maybe
                                   a line end, or a marker line */
    unsigned out_len, out_sent;
    unsigned column;            /* once what is in out[] is sent */
    uint32_t taken;             /* stream bytes taken since start-up */
} block;

static uint32_t interrupts_off(void)
{
    uint32_t primask;
    __asm__ __volatile__("mrs %0, primask\n\tcpsid i"
                         : "=r"(primask)::"memory");
    return primask;
}

static void interrupts_restore(uint32_t state)
{
    __asm__ __volatile__("msr primask, %0" ::"r"(state) : "memory");
}

#if defined(FW_FAULT_AFTER_COMMIT)
volatile int fw_commit_watch;
static unsigned commits_watched;
#endif
#if defined(FW_TEST_POINTS)
/* Test builds: the FW_TEST_NTH-th pass through test point FW_TEST_POINT
 * (FR_TEST_POINT() in the core, src/region/order.h) once watched pends
 * SysTick, whose handler then faults: a fault at that point. */
static unsigned test_point_passes;
void fw_test_point(unsigned id)
{
    if (fw_commit_watch == 1 && id == FW_TEST_POINT &&
        ++test_point_passes == FW_TEST_NTH) {
        fw_commit_watch = 2;
        REG(0xe000ed04u) = 1u << 26; /* ICSR: PENDSTSET */
        __asm__ __volatile__("dsb\n\tisb" ::: "memory");
    }
}
#endif

/* Around the drain's commits (src/region/order.h). */
uint32_t flightrec__port_interrupts_off(void)
{
    return interrupts_off();
}

void flightrec__port_interrupts_restore(uint32_t state)
{
    interrupts_restore(state);
#if defined(FW_FAULT_AFTER_COMMIT)
    /* Test builds: the FW_FAULT_AFTER_COMMIT-th commit once watched pends
     * SysTick, whose handler then faults (demo.c): a fault right after
     * that commit. */
    if (fw_commit_watch == 1 && ++commits_watched == FW_FAULT_AFTER_COMMIT) {
        fw_commit_watch = 2;
        REG(0xe000ed04u) = 1u << 26; /* ICSR: PENDSTSET */
    }
#endif
}

uint32_t flightrec__port_stream_taken(void)
{
    return block.taken;
}

/* Puts @text into out[] to send; the caller has interrupts off and
 * out[] is empty. */
static void out_queue(const char *text, size_t n)
{
    memcpy(block.out, text, n);
    block.out_len = (unsigned)n;
    block.out_sent = 0;
}

/* Encodes the @n pending bytes (1 to 3) into out[] as a group, padded
 * when fewer than 3, with a line end after a full line; the caller has
 * interrupts off. */
static void group_encode(unsigned n)
{
    uint32_t bits = (uint32_t)block.pending[0] << 16;
    if (n > 1)
        bits |= (uint32_t)block.pending[1] << 8;
    if (n > 2)
        bits |= block.pending[2];
    for (unsigned i = 0; i < 4; i++)
        block.out[i] =
            i <= n ? base64_alphabet[(bits >> (18 - 6 * i)) & 63u] : '=';
    block.out_len = 4;
    block.column += 4;
    if (block.column >= BASE64_LINE) {
        block.out[block.out_len++] = '\n';
        block.column = 0;
    }
    block.out_sent = 0;
    block.pending_len = 0;
}

/* Sends what is left in out[], a character at a time. */
static void out_send(void)
{
    for (;;) {
        while (UART_STATE & UART_STATE_TX_FULL)
            ;
        uint32_t state = interrupts_off();
        int more = block.out_sent < block.out_len;
        if (more)
            UART_DATA = (unsigned char)block.out[block.out_sent++];
        interrupts_restore(state);
        if (!more)
            return;
    }
}

static void block_bytes(const unsigned char *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t state = interrupts_off();
        block.pending[block.pending_len++] = bytes[i];
        block.taken++;
        if (block.pending_len == 3)
            group_encode(3);
        interrupts_restore(state);
        out_send();
    }
}

/* The stream writer's file descriptor: FW_STREAM_FD is the open block. */
ssize_t write(int fd, const void *bytes, size_t n)
{
    if (fd != FW_STREAM_FD)
        return -1;
    block_bytes(bytes, n);
    return (ssize_t)n;
}

static void block_begin(void)
{
    static const char begin[] = FW_BLOCK_BEGIN "\n";
    uint32_t state = interrupts_off();
    block.pending_len = 0;
    block.column = 0;
    block.ending = 0;
    out_queue(begin, sizeof begin - 1);
    block.open = 1;
    interrupts_restore(state);
    out_send();
}

void fw_stream_block_close(void)
{
    static const char end[] = "\n" FW_BLOCK_END "\n";
    if (!block.open)
        return;
    out_send(); /* what an interrupt cut short */
    uint32_t state = interrupts_off();
    if (!block.ending && block.pending_len != 0)
        group_encode(block.pending_len);
    interrupts_restore(state);
    out_send();
    state = interrupts_off();
    if (!block.ending) {
        /* The line end only after a partial line. */
        size_t skip = block.column == 0 ? 1 : 0;
        out_queue(end + skip, sizeof end - 1 - skip);
        block.ending = 1;
    }
    interrupts_restore(state);
    out_send();
    block.open = 0;
}

int fw_stream_block(void)
{
    block_begin();
    int rc = flightrec_drain(FW_STREAM_FD);
    fw_stream_block_close();
    return rc;
}

/*=====   Start-up and control without an environment   =====*/

static const struct flightrec_settings fw_settings = {
    .items = FW_RING_ITEMS,
    .signal_items = FW_SIGNAL_RING_ITEMS,
#if defined(FW_FLIGHT_MODE)
    .mode = FLIGHTREC_MODE_FLIGHT, /* test builds */
#else
    .mode = FLIGHTREC_MODE_DISCARD,
#endif
    .retained = 0,
    .prefault = 0,
};

const struct flightrec_settings *flightrec__settings(void)
{
    return &fw_settings;
}

#define ALL_ONES_8 \
    0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, \
        0xffffffffu, 0xffffffffu, 0xffffffffu
struct flightrec__control_page flightrec__control_page = {
    .filter = { ALL_ONES_8, ALL_ONES_8, ALL_ONES_8, ALL_ONES_8 },
};
uint32_t flightrec__filter_wanted[FLIGHTREC_FILTER_WORDS] = {
    ALL_ONES_8, ALL_ONES_8, ALL_ONES_8, ALL_ONES_8,
};
flightrec__mutex_t flightrec__control_lock = FLIGHTREC__MUTEX_INITIALIZER;

/* Recording is always started on the firmware. */
int flightrec_is_running(void)
{
    return 1;
}

/* Nobody outside changes the control words: the control lock alone. */
void flightrec__control_begin(struct flightrec__control_hold *hold)
{
    hold->region_held = 0;
    flightrec__mutex_lock(&flightrec__control_lock);
}

void flightrec__control_end(struct flightrec__control_hold *hold)
{
    (void)hold;
    flightrec__mutex_unlock(&flightrec__control_lock);
}

int flightrec__port_hot_share(void *page, size_t page_bytes,
                              size_t hot_offset)
{
    (void)page;
    (void)page_bytes;
    (void)hot_offset;
    return -1;
}

void flightrec__port_hot_unshare(void *page)
{
    (void)page;
}

int flightrec__port_control_lock(_Atomic flightrec_region_word *lock)
{
    (void)lock;
    return 0;
}

void flightrec__port_control_unlock(_Atomic flightrec_region_word *lock)
{
    (void)lock;
}

/* No filter spec to remember: names change nothing. */
void flightrec__filter_named_locked(uint32_t event, const char *name)
{
    (void)event;
    (void)name;
}

static _Atomic int init_state;   /* 0 not begun, 1 under way, 2 done */

int flightrec__try_init(void)
{
    int state = 0;
    if (atomic_load_explicit(&init_state, memory_order_acquire) == 2)
        return 0;
    if (!atomic_compare_exchange_strong_explicit(&init_state, &state, 1,
                                                 memory_order_acquire,
                                                 memory_order_acquire))
        return -1; /* an interrupt came during start-up */
    flightrec__timebase_init();
    /* The region starts with the wanted filter, running, and the control
     * page's filter on its hot page: nothing to publish after it (nobody
     * else reads the control generation). */
    (void)flightrec__region_create(&fw_settings);
    atomic_store_explicit(&init_state, 2, memory_order_release);
    return 0;
}

int flightrec__init_is_mine(void)
{
    /* One CPU: whoever finds start-up under way interrupted it. */
    return atomic_load_explicit(&init_state, memory_order_relaxed) == 1;
}

void flightrec__ensure_init(void)
{
    (void)flightrec__try_init();
}

/*=====   What the C library would provide   =====*/

static int errno_value;

int *__errno(void)
{
    return &errno_value;
}

void *memcpy(void *to, const void *from, size_t n)
{
    unsigned char *d = to;
    const unsigned char *s = from;
    while (n--)
        *d++ = *s++;
    return to;
}

void *memset(void *at, int value, size_t n)
{
    unsigned char *d = at;
    while (n--)
        *d++ = (unsigned char)value;
    return at;
}

void *memmove(void *to, const void *from, size_t n)
{
    unsigned char *d = to;
    const unsigned char *s = from;
    if (d < s) {
        while (n--)
            *d++ = *s++;
    } else {
        while (n--)
            d[n] = s[n];
    }
    return to;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x < *y ? -1 : 1;
    return 0;
}

size_t strlen(const char *text)
{
    size_t n = 0;
    while (text[n] != '\0')
        n++;
    return n;
}

size_t strnlen(const char *text, size_t max)
{
    size_t n = 0;
    while (n < max && text[n] != '\0')
        n++;
    return n;
}
