/* SPDX-License-Identifier: BSD-2-Clause */
/* A static program linked with flightrec_wrap(): run under `flightrec
 * record`, its malloc() and free() are in the recording. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    void *volatile block = malloc(1234);
    printf("block %p\n", block);
    free(block);
    return 0;
}
