/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Vector table and reset for the MPS2 boards (link-an385.ld,
 * link-an505.ld): QEMU loads the whole image, so reset only clears .bss
 * before main().
 */
#include "port-cortexm.h"

#include <stdint.h>

extern uint32_t __bss_start__, __bss_end__, __stack_top__;
int main(void);
void systick_handler(void);
void timer1_handler(void);
void pendsv_handler(void);
void hardfault_handler(void);

void __attribute__((noreturn)) reset_handler(void);
void reset_handler(void)
{
    for (uint32_t *p = &__bss_start__; p < &__bss_end__; p++)
        *p = 0;
    (void)main();
    for (;;)
        ;
}

static void unexpected_handler(void)
{
    hardfault_handler(); /* reported and ended like the fault */
}

#define EXTERNAL_IRQS 32
__attribute__((section(".vectors"), used))
static void (*const vectors[16 + EXTERNAL_IRQS])(void) = {
    [0] = (void (*)(void))(uintptr_t)&__stack_top__,
    [1] = reset_handler,
    [2] = unexpected_handler,       /* NMI */
    [3] = hardfault_handler,
    [4] = unexpected_handler,       /* MemManage */
    [5] = unexpected_handler,       /* BusFault */
    [6] = unexpected_handler,       /* UsageFault */
    [11] = unexpected_handler,      /* SVCall */
    [14] = pendsv_handler,          /* the demo's interrupt in a record */
    [15] = systick_handler,
    [16 + FW_IRQ_TIMER0] = fw_timer0_handler,
    [16 + FW_IRQ_TIMER1] = timer1_handler,
};
