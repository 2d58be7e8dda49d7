/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Drives a converter sink without the decoder: a hand-made stream
 * description, event and thread names, and records built one by one, so
 * the writers are tested on exactly the records a test chooses.
 */
#ifndef FLIGHTREC_TEST_SINK_DRIVER_H
#define FLIGHTREC_TEST_SINK_DRIVER_H

#include <stdint.h>

#include "convert.h"

#define DRV_RINGS 8

struct drv {
    struct flightrec_stream_info info;
    struct fr_source src;
    struct fr_sink *sink;
    struct flightrec_ring_info rings[DRV_RINGS];
    const char *user_names[512];
    struct { int64_t tid; const char *name; } threads[16];
    int nthreads;
};

/* kind: FLIGHTREC_STREAM_FLIGHTREC or FLIGHTREC_STREAM_RTEMS_V10. */
void drv_init(struct drv *d, uint32_t kind, int format, const char *path);
/* Names ring @a ring's owner (flightrec rings). */
void drv_ring(struct drv *d, uint32_t ring, int64_t tid, const char *name,
              uint32_t context);
/* Names an RTEMS thread id. */
void drv_thread(struct drv *d, int64_t tid, const char *name);
void drv_begin(struct drv *d);
void drv_event(struct drv *d, uint32_t ring, uint64_t ns, uint32_t event,
               uint64_t data);
/* An event the decoder could not time (FLIGHTREC_RECORD_UNTIMED, time 0). */
void drv_untimed(struct drv *d, uint32_t ring, uint32_t event, uint64_t data);
void drv_loss(struct drv *d, uint32_t ring, uint64_t ns, uint32_t kind,
              uint64_t count);
void drv_end(struct drv *d);
/* Ends the sink but keeps it for its counters; drv_destroy frees it. */
void drv_finish(struct drv *d);
void drv_destroy(struct drv *d);

/* Runs a shell command; returns its stdout+stderr (malloc'd) and sets
 * *status to its exit status. */
char *run_cmd(const char *cmd, int *status);
/* Number of lines of @a text containing @a needle. */
int count_lines(const char *text, const char *needle);
/* Makes a fresh scratch path under the build tree for this test. */
const char *scratch(const char *name);

/* The kernel-shaped scenario the converter tests share; @name_idle names
 * the idle threads "IDLE" (else they are unnamed). */
void drv_kernel_scenario(int format, const char *path, int name_idle);

#endif
