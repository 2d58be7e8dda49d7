/* SPDX-License-Identifier: BSD-2-Clause */
/* The LTTng-UST tracepoint bench-sustained records in its lttng runs: one
 * 64-bit field, the payload of a flightrec item. */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER flightrec_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./bench-lttng-tp.h"

#if !defined(FLIGHTREC_BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define FLIGHTREC_BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

TRACEPOINT_EVENT(flightrec_bench, item,
                 TP_ARGS(uint64_t, data),
                 TP_FIELDS(ctf_integer(uint64_t, data, data)))

#endif

#include <lttng/tracepoint-event.h>
