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

/* The MPS2 system clock, which drives TIMER0/1 and SysTick. */
#define FW_CLOCK_HZ 25000000u

/* IRQ numbers of the CMSDK timers on MPS2 (AN385 and AN505). */
#define FW_IRQ_TIMER0 8
#define FW_IRQ_TIMER1 9

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
int fw_stream_block(void);
/* Bytes of the region in use (header, tables, rings). */
size_t fw_region_bytes_used(void);

#endif
