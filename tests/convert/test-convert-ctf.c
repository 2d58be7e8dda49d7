/* SPDX-License-Identifier: BSD-2-Clause */
/* CTF writer, checked with babeltrace2. */
#include <flightrec/events.h>

#include "sink-driver.h"
#include "test.h"

static char *bt(const char *dir, int *status)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "babeltrace2 --clock-cycles --no-delta '%s'",
             dir);
    return run_cmd(cmd, status);
}

TEST(ust_events)
{
    const char *dir = scratch("ust");
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_FLIGHTREC, FR_FORMAT_CTF, dir);
    d.user_names[3] = "frame_done";
    drv_ring(&d, 0, 101, "worker one", 0);
    drv_ring(&d, 1, 102, "logger", 0);
    drv_begin(&d);
    drv_event(&d, 0, 1000, FLIGHTREC_USER(3), 42);
    drv_event(&d, 1, 1500, FLIGHTREC_EV_MALLOC_ENTRY, 64);
    drv_event(&d, 1, 1600, FLIGHTREC_EV_MALLOC_EXIT, 0x5000);
    drv_event(&d, 0, 2000, FLIGHTREC_EV_FUNCTION_ENTRY, 0x401000);
    drv_event(&d, 0, 2100, FLIGHTREC_EV_FUNCTION_EXIT, 0x401000);
    drv_event(&d, 1, 2200, FLIGHTREC_EV_FREE_ENTRY, 0x5000);
    drv_event(&d, 1, 2300, FLIGHTREC_EV_FREE_EXIT, 0);
    drv_event(&d, 0, 3000, FLIGHTREC_EV_MUTEX_LOCK_EXIT, 0xabc0);
    drv_end(&d);
    int st;
    char *out = bt(dir, &st);
    fputs(out, stderr);
    CHECK_EQ_I(st, 0);
    free(out);
}

TEST(ust_losses) {}
TEST(kernel_events) {}
TEST(packets) {}
TEST(untimed) {}

TEST_MAIN(TEST_ENTRY(ust_events), TEST_ENTRY(ust_losses),
          TEST_ENTRY(kernel_events), TEST_ENTRY(packets), TEST_ENTRY(untimed))
