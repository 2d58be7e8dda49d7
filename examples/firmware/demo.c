/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A demo firmware for QEMU's mps2-an385 (Cortex-M3) and mps2-an505
 * (Cortex-M33): three tasks under a
 * cooperative round-robin scheduler, SysTick at 1 kHz and TIMER1 at a
 * higher priority that nests into it, recorded with flightrec.  The rings
 * go out on the UART every STREAM_EVERY_TICKS ticks; at tick FAULT_AT_TICK
 * a task executes an undefined instruction and the HardFault handler
 * streams the rest, prints the firmware's own counts and leaves QEMU with
 * status FAULT_EXIT_STATUS (semihosting).
 */
#include "port-cortexm.h"

#include <flightrec.h>

#include <stdint.h>

#define REG(address) (*(volatile uint32_t *)(address))

#define SYST_CSR REG(0xe000e010u)
#define SYST_RVR REG(0xe000e014u)
#define SYST_CVR REG(0xe000e018u)
#define SCB_SHPR3 REG(0xe000ed20u)
#define SCB_ICSR REG(0xe000ed04u)
#define ICSR_PENDSVSET (1u << 28)
#define NVIC_ISER0 REG(0xe000e100u)
#define NVIC_IPR(n) (*(volatile uint8_t *)(0xe000e400u + (n)))

#define TIMER1_BASE FW_TIMER1_BASE
#define TIMER1_CTRL REG(TIMER1_BASE + 0x00u)
#define TIMER1_VALUE REG(TIMER1_BASE + 0x04u)
#define TIMER1_RELOAD REG(TIMER1_BASE + 0x08u)
#define TIMER1_INTCLEAR REG(TIMER1_BASE + 0x0cu)

/* Exception numbers, the data of INTERRUPT_ENTRY/EXIT. */
#define VECTOR_PENDSV 14u
#define VECTOR_SYSTICK 15u
#define VECTOR_TIMER1 (16u + FW_IRQ_TIMER1)

#define SYSTICK_HZ 1000u
#define TICKS_PER_US (FW_CLOCK_HZ / 1000000u)
#define SYSTICK_PERIOD (FW_CLOCK_HZ / SYSTICK_HZ)
#define TIMER1_PERIOD (3300u * TICKS_PER_US)            /* 3.3 ms */
#define SYSTICK_WORK (200u * TICKS_PER_US)  /* each SysTick's work */
#define TASK_WORK (300u * TICKS_PER_US)     /* each task turn's work */
#define PENDSV_QUIET (200u * TICKS_PER_US)  /* no timer due that soon */
/* Instructions of the calibration loop (3 per turn): with QEMU's icount
 * they take a known virtual time, against which the log's times are
 * checked. */
#define CALIBRATION_TURNS 1000000u
#define STREAM_EVERY_TICKS 20u
#define FAULT_AT_TICK 200u
#define FAULT_EXIT_STATUS 3u

/* User events. */
#define EV_TICK FLIGHTREC_USER(0)       /* data: the tick number */
#define EV_WORK FLIGHTREC_USER(1)       /* data: the task's turn number */
#define EV_FAULT FLIGHTREC_USER(2)      /* data: the faulting pc */
#define EV_LATE FLIGHTREC_USER(3)       /* test builds: named late */

/*=====   Tasks and the scheduler   =====*/

#define TASKS 3
#define STACK_WORDS 512

struct task {
    uint32_t *sp;
    uint32_t id;
    const char *name;
    void (*entry)(struct task *self);
    uint32_t turns;
    uint32_t stack[STACK_WORDS] __attribute__((aligned(8)));
};

static void sensor_task(struct task *self);
static void control_task(struct task *self);
static void logger_task(struct task *self);

static struct task tasks[TASKS] = {
    { .id = 1, .name = "sensor", .entry = sensor_task },
    { .id = 2, .name = "control", .entry = control_task },
    { .id = 3, .name = "logger", .entry = logger_task },
};
static struct task *current;
static uint32_t boot_sp_slot;   /* where the boot stack's sp goes */
static volatile uint32_t switches;

/* Saves r4-r11 and the return address on the current stack, stores sp in
 * *from, continues on @to (where a previous switch, or task_init(), left
 * the same frame). */
void context_switch(uint32_t **from, uint32_t *to);
__asm__(".text\n"
        ".global context_switch\n"
        ".type context_switch, %function\n"
        ".thumb_func\n"
        "context_switch:\n"
        "    push {r4-r11, lr}\n"
        "    mov r2, sp\n"
        "    str r2, [r0]\n"
        "    mov sp, r1\n"
        "    pop {r4-r11, pc}\n");

static void task_start(void)
{
    current->entry(current);
    for (;;)
        ; /* tasks never return */
}

static void task_init(struct task *t)
{
    uint32_t *sp = &t->stack[STACK_WORDS];
    *--sp = (uint32_t)(uintptr_t)task_start; /* pc (thumb bit set) */
    for (int r = 4; r <= 11; r++)
        *--sp = 0;
    t->sp = sp;
}

/* The running task gives the CPU to the next one, in round-robin order. */
static void yield(void)
{
    struct task *from = current;
    struct task *to = &tasks[(from - tasks + 1) % TASKS];
    /* One record: both items get the same time. */
    flightrec_produce_2(FLIGHTREC_EV_THREAD_SWITCH_OUT, from->id,
                        FLIGHTREC_EV_THREAD_SWITCH_IN, to->id);
    switches++;
    current = to;
    context_switch(&from->sp, to->sp);
}

/* Names a task for readers: THREAD_ID, then its name in THREAD_NAME items
 * (4 bytes each, LSB first), as RTEMS does. */
static void record_task_name(const struct task *t)
{
    uint32_t words[4] = { 0, 0, 0, 0 };
    for (unsigned i = 0; i < 16 && t->name[i] != '\0'; i++)
        words[i / 4] |= (uint32_t)(unsigned char)t->name[i] << (8 * (i % 4));
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_EV_THREAD_ID, t->id);
    for (unsigned i = 0; i < 4; i++)
        flightrec_add(&ctx, FLIGHTREC_EV_THREAD_NAME, words[i]);
    flightrec_commit(&ctx);
}

static void spin(uint32_t ticks)
{
    uint64_t until = flightrec_port_counter() + ticks;
    while (flightrec_port_counter() < until)
        ;
}

/*=====   Interrupts   =====*/

static volatile uint32_t systicks, timer1_fires, timer1_nested;
static volatile int in_systick;
static volatile int fault_requested;
/* The logger task is in a drain. */
static volatile int draining;
#if defined(FW_FAULT_IN_DRAIN)
/* Test builds: the FW_FAULT_IN_DRAIN-th SysTick after tick 100 that comes
 * while the logger task drains faults there, so that the fault handler's
 * drain takes over one it interrupted (tests/firmware); FW_DRAIN_DELAY
 * counter ticks before each drain move where in it that tick lands.
 * FW_FAULT_AFTER_COMMIT=N instead faults right after the drain's N-th
 * commit (port-cortexm.c), counted from the first drain after tick 100,
 * and with FW_TEST_POINTS at a test point of the core instead.
 * FW_LATE_NAME names an event then, FW_RESET_STREAM begins a new stream,
 * FW_DUMP_IN_HANDLER dumps in the fault handler before it drains. */
static uint32_t ticks_in_drain;
#endif

void systick_handler(void);
void systick_handler(void)
{
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_ENTRY, VECTOR_SYSTICK);
    in_systick = 1;
    uint32_t tick = ++systicks;
    flightrec_produce(EV_TICK, tick);
#if defined(FW_FAULT_AFTER_COMMIT)
    if (fw_commit_watch == 2) {
        SYST_CSR = 0;
        TIMER1_CTRL = 0;
        __asm__ __volatile__("udf #2");
    }
#endif
#if defined(FW_FAULT_IN_DRAIN)
    if (draining && tick > 100 && ++ticks_in_drain == FW_FAULT_IN_DRAIN) {
        SYST_CSR = 0;
        TIMER1_CTRL = 0;
        __asm__ __volatile__("udf #1");
    }
#endif
    if (tick == FAULT_AT_TICK) {
        /* The last tick: the counts the log must show are final now. */
        SYST_CSR = 0;
        TIMER1_CTRL = 0;
        fault_requested = 1;
    }
    spin(SYSTICK_WORK);
    in_systick = 0;
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_EXIT, VECTOR_SYSTICK);
}

void pendsv_handler(void);
void pendsv_handler(void)
{
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_ENTRY, VECTOR_PENDSV);
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_EXIT, VECTOR_PENDSV);
}

void timer1_handler(void);
void timer1_handler(void)
{
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_ENTRY, VECTOR_TIMER1);
    TIMER1_INTCLEAR = 1u;
    timer1_fires++;
    if (in_systick)
        timer1_nested++;
    flightrec_produce(FLIGHTREC_EV_INTERRUPT_EXIT, VECTOR_TIMER1);
}

/*=====   Output   =====*/

static void put_decimal(uint32_t value)
{
    char digits[10];
    unsigned n = 0;
    do {
        digits[n++] = (char)('0' + value % 10u);
        value /= 10u;
    } while (value != 0);
    while (n != 0)
        fw_uart_put(&digits[--n], 1);
}

static void put_count(const char *name, uint32_t value)
{
    fw_uart_puts(" ");
    fw_uart_puts(name);
    fw_uart_puts("=");
    put_decimal(value);
}

/* Semihosting SYS_EXIT_EXTENDED: QEMU exits with @status. */
static void __attribute__((noreturn)) exit_qemu(uint32_t status)
{
    uint32_t block[2] = { 0x20026u /* ADP_Stopped_ApplicationExit */,
                          status };
    register uint32_t op __asm__("r0") = 0x20u;
    register uint32_t *arg __asm__("r1") = block;
    __asm__ __volatile__("bkpt 0xab" : : "r"(op), "r"(arg) : "memory");
    for (;;)
        ;
}

void hardfault_handler_c(const uint32_t *frame);
void hardfault_handler_c(const uint32_t *frame)
{
    int in_drain = draining;
    flightrec_produce(EV_FAULT, frame[6]);  /* the stacked pc */
    /* A block the fault cut short ends first, as far as it got. */
    fw_stream_block_close();
#if defined(FW_DUMP_IN_HANDLER)
    /* Test builds: a dump first, to a descriptor the port does not write
     * (the console log stays as it is); it must not move the drain's. */
    (void)flightrec_dump(5);
#endif
    fw_uart_puts("flightrec-demo: hard fault; counts:");
    put_count("systick", systicks);
    put_count("timer1", timer1_fires);
    put_count("nested", timer1_nested);
    put_count("switches", switches);
    put_count("region_bytes", (uint32_t)fw_region_bytes_used());
    put_count("in_drain", (uint32_t)in_drain);
    put_count("stream_bytes", flightrec__port_stream_taken());
    fw_uart_puts("\n");
    (void)fw_stream_block();
    exit_qemu(FAULT_EXIT_STATUS);
}

/* Passes the stacked exception frame (main stack: no PSP is used). */
__asm__(".text\n"
        ".global hardfault_handler\n"
        ".type hardfault_handler, %function\n"
        ".thumb_func\n"
        "hardfault_handler:\n"
        "    mrs r0, msp\n"
        "    b hardfault_handler_c\n");

/*=====   The tasks   =====*/

static void sensor_task(struct task *self)
{
    for (;;) {
        /* Every eighth turn an interrupt comes inside the record, on
         * purpose (PendSV): its events go to the signal ring, whatever the
         * timers' phase.  Not when a timer is due within PENDSV_QUIET: at
         * the highest priority, PendSV would delay it (the log checks the
         * timers' latency). */
        struct flightrec_ctx ctx;
        flightrec_prepare(&ctx);
        if (self->turns % 8u == 7u && TIMER1_VALUE > PENDSV_QUIET &&
            SYST_CVR > PENDSV_QUIET) {
            SCB_ICSR = ICSR_PENDSVSET;
            __asm__ __volatile__("dsb\n\tisb" ::: "memory");
        }
        flightrec_add(&ctx, EV_WORK, ++self->turns);
        flightrec_commit(&ctx);
        spin(TASK_WORK);
        yield();
    }
}

static void control_task(struct task *self)
{
    for (;;) {
        flightrec_produce(EV_WORK, ++self->turns);
        spin(TASK_WORK);
        if (fault_requested)
            __asm__ __volatile__("udf #0"); /* the deliberate fault */
        yield();
    }
}

static void logger_task(struct task *self)
{
    uint32_t streamed_at = 0;
    for (;;) {
        flightrec_produce(EV_WORK, ++self->turns);
        uint32_t now = systicks;
        if (now - streamed_at >= STREAM_EVERY_TICKS) {
            streamed_at = now;
#if defined(FW_DRAIN_DELAY)
            /* Test builds: where in the drain the faulting tick lands. */
            spin(FW_DRAIN_DELAY);
#endif
#if defined(FW_LATE_NAME) || defined(FW_RESET_STREAM)
            /* Test builds: once, before the first drain after tick 100, an
             * event named then, or a new stream. */
            static int late_done;
            if (now > 100 && !late_done) {
                late_done = 1;
#if defined(FW_LATE_NAME)
                flightrec_event_set_name(EV_LATE, "late");
                flightrec_produce(EV_LATE, 1);
#else
                flightrec_drain_reset();
                fw_uart_puts("flightrec-demo: new stream\n");
#endif
            }
#endif
            draining = 1;
#if defined(FW_FAULT_AFTER_COMMIT)
            if (now > 100 && fw_commit_watch == 0)
                fw_commit_watch = 1;
#endif
            (void)fw_stream_block();
            draining = 0;
        } else {
            spin(TASK_WORK);
        }
        yield();
    }
}

/*=====   Start   =====*/

int main(void)
{
    uint32_t calibration_turns = CALIBRATION_TURNS;
    fw_uart_init();
    fw_counter_init();
    fw_uart_puts("flightrec-demo: start on " FW_BOARD_NAME "\n");
    /* Counter ticks over a fixed number of instructions: under icount the
     * log shows whether the frequency in the stream is the timer's. */
    uint64_t before = flightrec_port_counter();
    __asm__ __volatile__("1: subs %0, %0, #1\n\t"
                         "nop\n\t"
                         "bne 1b"
                         : "+r"(calibration_turns)::"cc");
    uint64_t elapsed = flightrec_port_counter() - before;
    fw_uart_puts("flightrec-demo: calibration:");
    put_count("instructions", 3u * CALIBRATION_TURNS);
    put_count("ticks", (uint32_t)elapsed);
    put_count("frequency", FW_CLOCK_HZ);
    fw_uart_puts("\n");
    flightrec_event_set_name(EV_TICK, "tick");
    flightrec_event_set_name(EV_WORK, "work");
    flightrec_event_set_name(EV_FAULT, "fault");
    /* The first event attaches the CPU's rings: before any interrupt. */
    for (unsigned i = 0; i < TASKS; i++) {
        task_init(&tasks[i]);
        record_task_name(&tasks[i]);
    }
    /* The stream's start goes out before any interrupt can fault: a fault
     * handler's drain goes on with a stream once it has begun. */
    (void)fw_stream_block();

    SCB_SHPR3 = (SCB_SHPR3 & 0x00ffffffu) | (0x80u << 24); /* SysTick */
    NVIC_IPR(FW_IRQ_TIMER1) = 0x40; /* above SysTick: it nests */
    TIMER1_CTRL = 0;
    TIMER1_RELOAD = TIMER1_PERIOD - 1;
    TIMER1_VALUE = TIMER1_PERIOD - 1;
    TIMER1_INTCLEAR = 1u;
    NVIC_ISER0 = 1u << FW_IRQ_TIMER1;
    TIMER1_CTRL = 1u | 8u; /* enable, interrupt */
    SYST_RVR = SYSTICK_PERIOD - 1;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* processor clock, interrupt, enable */

    current = &tasks[0];
    flightrec_produce(FLIGHTREC_EV_THREAD_SWITCH_IN, current->id);
    context_switch((uint32_t **)(void *)&boot_sp_slot, current->sp);
    return 0;
}
