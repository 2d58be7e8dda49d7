/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Checking a region image before reading it: a region may come from
 * another flightrec build, another process, a file left behind by a crash
 * or a corrupted disk.  Nothing in it is trusted until checked here.
 */
#ifndef FLIGHTREC_REGION_CHECK_H
#define FLIGHTREC_REGION_CHECK_H

#include <stddef.h>

/* Checks the @size bytes at @region: the header (magic, layout version,
 * word size, byte order, sizes), the control and name blocks, and every
 * ring in the ring list (offsets, capacities, a list without loops).
 * Returns 0, or -1 with a message naming what is wrong and where (and
 * both flightrec versions when the layout is another one's). */
int fr_region_check(const void *region, size_t size, char *message,
                    size_t message_size);

#endif
