/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program for test-cli-serve: started with FLIGHTREC_SERVER set, it
 * records USER(0) with data 0..COUNT-1 once a byte arrives on standard
 * input, then exits when standard input closes.
 *   serve-env-target COUNT
 */
#include <flightrec.h>

#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    unsigned long count = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
    char c;
    if (read(0, &c, 1) != 1)
        return 1;
    for (unsigned long i = 0; i < count; i++)
        flightrec_produce(FLIGHTREC_USER(0), (uintptr_t)i);
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
