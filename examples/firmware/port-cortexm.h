/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Cortex-M port (port-cortexm.c): what the demo firmware uses of it,
 * and its sizes.
 */
#ifndef FW_PORT_CORTEXM_H
#define FW_PORT_CORTEXM_H

#include <flightrec.h>

#include <stddef.h>
#include <stdint.h>

/* The board (build.sh sets one): the system clock, which drives TIMER0/1
 * and SysTick (measured against QEMU's icount instruction clock: 25 MHz on
 * AN385, 20 MHz on AN505), the CMSDK UART and timers, their IRQ numbers.
 * AN505 runs in the Secure state: its peripherals' Secure aliases. */
#if defined(FW_BOARD_AN505)
#define FW_BOARD_NAME "mps2-an505"
#define FW_CLOCK_HZ 20000000u
#define FW_UART0_BASE 0x50200000u
#define FW_TIMER0_BASE 0x50000000u
#define FW_TIMER1_BASE 0x50001000u
#define FW_IRQ_TIMER0 3
#define FW_IRQ_TIMER1 4
#else
#define FW_BOARD_NAME "mps2-an385"
#define FW_CLOCK_HZ 25000000u
#define FW_UART0_BASE 0x40004000u
#define FW_TIMER0_BASE 0x40000000u
#define FW_TIMER1_BASE 0x40001000u
#define FW_IRQ_TIMER0 8
#define FW_IRQ_TIMER1 9
#endif

/* The region: header, control, the 1024-entry event name table, and one
 * ring pair (the CPU's ring and its interrupts' ring). */
#ifndef FW_RING_ITEMS
#define FW_RING_ITEMS 2048u
#endif
#ifndef FW_SIGNAL_RING_ITEMS
#define FW_SIGNAL_RING_ITEMS 512u
#endif
#define FW_REGION_BYTES (96u * 1024u + 8u * (FW_RING_ITEMS + FW_SIGNAL_RING_ITEMS))

/* The ring owner's id in streams: the CPU, not a task (tasks appear in
 * THREAD_SWITCH items). */
#define FW_CPU_ID 1000

/* Marker lines around the base64 of a stream block (docs/format.md). */
#define FW_BLOCK_BEGIN "-----BEGIN FLIGHTREC STREAM-----"
#define FW_BLOCK_END "-----END FLIGHTREC STREAM-----"
/* The file descriptor write() turns into the open block. */
#define FW_STREAM_FD 3

void fw_uart_init(void);
void fw_uart_put(const char *text, size_t length);
void fw_uart_puts(const char *text);
/* Starts TIMER0 free-running (the counter) with its wrap interrupt. */
void fw_counter_init(void);
void fw_timer0_handler(void);
/* Drains the rings onto the UART as one marked block; flightrec_drain()'s
 * code. */
/* Drains the rings into one block of base64 lines on the UART. */
int fw_stream_block(void);
/* Ends the block a fault interrupted (nothing when none is open): what its
 * drain had sent, to the byte, then the end marker.  A fault handler calls
 * it before it prints anything, then drains with fw_stream_block(), which
 * goes on with the same stream. */
void fw_stream_block_close(void);
/* The stream's bytes write() took since start-up (src/producer/platform.h). */
uint32_t flightrec__port_stream_taken(void);
#if defined(FW_FAULT_AFTER_COMMIT)
/* Test builds: 1 watches the drain's commits, 2 once the one that faults
 * has come. */
extern volatile int fw_commit_watch;
#endif
/* Bytes of the region in use (header, tables, rings). */
size_t fw_region_bytes_used(void);

#endif
