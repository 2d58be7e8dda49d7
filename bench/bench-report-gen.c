/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes a recording for bench/report-scale.sh:
 *
 *   bench-report-gen EVENTS FILE
 *
 * EVENTS events (rounded up to whole iterations of 10) of the shapes
 * `flightrec record` writes, through the recording runtime: per iteration
 * one of 16 mutexes taken at once and released (3 events), a malloc into
 * one of 1,024 slots after a free of the slot's previous block (4), and a
 * read of one of 8 descriptors (3).  The thread drains to FILE every 4,096
 * iterations itself, so nothing is lost.  Prints "events N" (all events
 * written, the drains' own records aside).
 */
#include <flightrec.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 1024u
#define EVENTS_PER_ITERATION 10u

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench-report-gen EVENTS FILE\n");
        return 2;
    }
    unsigned long long events = strtoull(argv[1], NULL, 10);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror(argv[2]);
        return 1;
    }
    static uintptr_t slot_block[SLOTS];
    uintptr_t next_block = 0x100000;
    uint32_t x = 12345;
    unsigned long long iterations =
        (events + EVENTS_PER_ITERATION - 1) / EVENTS_PER_ITERATION;
    for (unsigned long long i = 0; i < iterations; i++) {
        x = x * 1103515245u + 12345u;
        uintptr_t mutex = 0x7000 + 64 * ((x >> 4) & 15u);
        flightrec_produce_2(FLIGHTREC_EV_MUTEX_LOCK_ENTRY, mutex,
                            FLIGHTREC_EV_MUTEX_LOCK_EXIT, mutex);
        flightrec_produce(FLIGHTREC_EV_MUTEX_UNLOCK, mutex);
        size_t slot = (x >> 8) & (SLOTS - 1);
        flightrec_produce_2(FLIGHTREC_EV_FREE_ENTRY, slot_block[slot],
                            FLIGHTREC_EV_FREE_EXIT, 0);
        slot_block[slot] = next_block;
        next_block += 1024;
        flightrec_produce_2(FLIGHTREC_EV_MALLOC_ENTRY, 16 + ((x >> 16) & 511u),
                            FLIGHTREC_EV_MALLOC_EXIT, slot_block[slot]);
        uintptr_t read_fd = 3 + ((x >> 20) & 7u);
        flightrec_produce_2(FLIGHTREC_EV_READ_ENTRY, read_fd,
                            FLIGHTREC_EV_ARG_2, 4096);
        flightrec_produce(FLIGHTREC_EV_READ_EXIT, 4096);
        if ((i & 4095u) == 4095u && flightrec_drain(fd) != 0) {
            fprintf(stderr, "bench-report-gen: drain failed\n");
            return 1;
        }
    }
    if (flightrec_drain(fd) != 0 || close(fd) != 0) {
        fprintf(stderr, "bench-report-gen: drain failed\n");
        return 1;
    }
    printf("events %llu\n", iterations * EVENTS_PER_ITERATION);
    return 0;
}
