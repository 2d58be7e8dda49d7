/* SPDX-License-Identifier: BSD-2-Clause */
/* Names of the system events 0..511, one table per id numbering; NULL for
 * reserved ids. */
#ifndef FLIGHTREC_EVENT_TABLE_H
#define FLIGHTREC_EVENT_TABLE_H

/** flightrec and RTEMS v2+ numbering (v10 names plus flightrec's 342..). */
extern const char *const flightrec__v10_names[512];
/** RTEMS record format version 1 numbering. */
extern const char *const flightrec__v1_names[512];

#endif
