/* SPDX-License-Identifier: BSD-2-Clause */
/* The inline recording path as exported functions, for C++ callers (see
 * flightrec/producer.h) and language bindings. */
#include <flightrec.h>

int flightrec__event_enabled_call(uint32_t event)
{
    return flightrec_event_enabled(event);
}

void flightrec__produce_call(uint32_t event, uintptr_t data)
{
    flightrec_produce(event, data);
}

void flightrec__prepare_call(struct flightrec_ctx *ctx)
{
    flightrec_prepare(ctx);
}

void flightrec__add_call(struct flightrec_ctx *ctx, uint32_t event,
                         uintptr_t data)
{
    flightrec_add(ctx, event, data);
}

void flightrec__commit_call(struct flightrec_ctx *ctx)
{
    flightrec_commit(ctx);
}
