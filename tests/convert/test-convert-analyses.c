/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel-shaped CTF trace read by LTTng's own analyses
 * (python3-lttnganalyses, on babeltrace 1): they must find the interrupt,
 * its duration, the threads and the CPUs the scenario recorded.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "sink-driver.h"
#include "test.h"

TEST(irqstats_and_cputop)
{
    /* lttnganalyses reads the tracer version only from a directory named
     * "kernel", as LTTng lays sessions out. */
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/kernel", scratch("analyses"));
    drv_kernel_scenario(FR_FORMAT_CTF, dir, 0);
    char command[4096];
    snprintf(command, sizeof command, "python3 %s/check-lttng-analyses.py %s",
             SRC_DIR, dir);
    int status = system(command);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
}

TEST_MAIN()
