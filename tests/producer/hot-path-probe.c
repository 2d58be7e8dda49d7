/* SPDX-License-Identifier: BSD-2-Clause */
/* The hot paths, each in a function of its own, for check-hot-path.sh to
 * read their machine code. */
#include <flightrec.h>

void probe_produce(uintptr_t data);
void probe_record(uintptr_t data);
void probe_produce_2(uintptr_t data);
void probe_produce_n(uintptr_t data);

__attribute__((noinline)) void probe_produce(uintptr_t data)
{
    flightrec_produce(FLIGHTREC_USER(1), data);
}

__attribute__((noinline)) void probe_record(uintptr_t data)
{
    struct flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_USER(2), data);
    flightrec_add(&ctx, FLIGHTREC_USER(3), data + 1);
    flightrec_commit(&ctx);
}

__attribute__((noinline)) void probe_produce_2(uintptr_t data)
{
    flightrec_produce_2(FLIGHTREC_USER(4), data, FLIGHTREC_USER(5), data + 1);
}

__attribute__((noinline)) void probe_produce_n(uintptr_t data)
{
    struct flightrec_item_in items[3] = {
        { FLIGHTREC_USER(6), data },
        { FLIGHTREC_USER(7), data + 1 },
        { FLIGHTREC_USER(8), data + 2 },
    };
    flightrec_produce_n(items, 3);
}

int main(void)
{
    probe_produce(1);
    probe_record(2);
    probe_produce_2(3);
    probe_produce_n(4);
    return 0;
}
