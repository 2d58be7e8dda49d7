/* SPDX-License-Identifier: BSD-2-Clause */
#define _POSIX_C_SOURCE 200809L
#include "sink-driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test.h"

extern const char *const flightrec__v10_names[512];

static const char *drv_event_name(void *arg, uint32_t event)
{
    struct drv *d = arg;
    static char buf[32];
    if (event < 512 && flightrec__v10_names[event] != NULL)
        return flightrec__v10_names[event];
    if (event < 512) {
        snprintf(buf, sizeof buf, "SYSTEM_%u", event);
        return buf;
    }
    if (event < 1024 && d->user_names[event - 512] != NULL)
        return d->user_names[event - 512];
    snprintf(buf, sizeof buf, "USER_%u", event - 512);
    return buf;
}

static const char *drv_thread_name(void *arg, int64_t tid)
{
    struct drv *d = arg;
    for (int i = 0; i < d->nthreads; i++)
        if (d->threads[i].tid == tid)
            return d->threads[i].name;
    return NULL;
}

void drv_init(struct drv *d, uint32_t kind, int format, const char *path)
{
    memset(d, 0, sizeof *d);
    d->info.kind = kind;
    d->info.version = kind == FLIGHTREC_STREAM_FLIGHTREC ? 0x46520001u : 10;
    d->info.frequency = 1000000000u;
    d->info.process_id = kind == FLIGHTREC_STREAM_FLIGHTREC ? 4242 : -1;
    if (kind == FLIGHTREC_STREAM_FLIGHTREC) {
        d->info.has_realtime = 1;
        d->info.realtime_ns_at_zero = 1700000000000000000ull;
    } else {
        strcpy(d->info.bsp, "qemu");
        strcpy(d->info.arch, "arm");
    }
    d->src.info = &d->info;
    d->src.event_name = drv_event_name;
    d->src.thread_name = drv_thread_name;
    d->src.arg = d;
    for (uint32_t i = 0; i < DRV_RINGS; i++) {
        d->rings[i].id = i;
        d->rings[i].thread_id = -1;
    }
    char err[256];
    if (fr_sink_create(&d->sink, format, path, err, sizeof err) != 0)
        TEST_FAIL("sink: %s", err);
}

void drv_ring(struct drv *d, uint32_t ring, int64_t tid, const char *name,
              uint32_t context)
{
    d->rings[ring].thread_id = tid;
    snprintf(d->rings[ring].thread_name, sizeof d->rings[ring].thread_name,
             "%s", name);
    d->rings[ring].context = context;
}

void drv_thread(struct drv *d, int64_t tid, const char *name)
{
    d->threads[d->nthreads].tid = tid;
    d->threads[d->nthreads].name = name;
    d->nthreads++;
}

void drv_begin(struct drv *d)
{
    if (fr_sink_begin(d->sink, &d->src) != 0)
        TEST_FAIL("begin: %s", d->sink->error);
}

void drv_event(struct drv *d, uint32_t ring, uint64_t ns, uint32_t event,
               uint64_t data)
{
    struct flightrec_record r = { 0 };
    r.type = FLIGHTREC_RECORD_EVENT;
    r.time_ns = ns;
    r.ring = ring;
    r.event = event;
    r.data = data;
    r.ring_info = &d->rings[ring];
    if (fr_sink_record(d->sink, &r) != 0)
        TEST_FAIL("record: %s", d->sink->error);
}

void drv_untimed(struct drv *d, uint32_t ring, uint32_t event, uint64_t data)
{
    struct flightrec_record r = { 0 };
    r.type = FLIGHTREC_RECORD_EVENT;
    r.flags = FLIGHTREC_RECORD_UNTIMED;
    r.ring = ring;
    r.event = event;
    r.data = data;
    r.ring_info = &d->rings[ring];
    if (fr_sink_record(d->sink, &r) != 0)
        TEST_FAIL("record: %s", d->sink->error);
}

void drv_loss(struct drv *d, uint32_t ring, uint64_t ns, uint32_t kind,
              uint64_t count)
{
    struct flightrec_record r = { 0 };
    r.type = FLIGHTREC_RECORD_LOSS;
    r.time_ns = ns;
    r.ring = ring;
    r.loss_kind = kind;
    r.loss_count = count;
    r.ring_info = &d->rings[ring];
    if (fr_sink_record(d->sink, &r) != 0)
        TEST_FAIL("loss: %s", d->sink->error);
}

void drv_finish(struct drv *d)
{
    if (fr_sink_end(d->sink) != 0)
        TEST_FAIL("end: %s", d->sink->error);
}

void drv_destroy(struct drv *d)
{
    fr_sink_destroy(d->sink);
    d->sink = NULL;
}

void drv_end(struct drv *d)
{
    if (fr_sink_end(d->sink) != 0)
        TEST_FAIL("end: %s", d->sink->error);
    fr_sink_destroy(d->sink);
    d->sink = NULL;
}

char *run_cmd(const char *cmd, int *status)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (p == NULL)
        TEST_FAIL("popen %s", cmd);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 4096) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    buf[len] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return buf;
}

int count_lines(const char *text, const char *needle)
{
    int n = 0;
    const char *line = text;
    while (*line) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char *copy = strndup(line, len);
        if (strstr(copy, needle) != NULL)
            n++;
        free(copy);
        if (eol == NULL)
            break;
        line = eol + 1;
    }
    return n;
}

const char *scratch(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "convert-out-%s", name);
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        TEST_FAIL("cannot clean %s", path);
    return path;
}

/* Two RTEMS CPUs: switches, an interrupt waking a thread, a system call,
 * a user event and a loss. */
void drv_kernel_scenario(int format, const char *path, int name_idle)
{
    struct drv d;
    drv_init(&d, FLIGHTREC_STREAM_RTEMS_V10, format, path);
    const int64_t idle0 = 0x09010001, idle1 = 0x09010002;
    const int64_t worker = 0x0a010001, uart = 0x0a010002;
    if (name_idle) {
        drv_thread(&d, idle0, "IDLE");
        drv_thread(&d, idle1, "IDLE");
    }
    drv_thread(&d, worker, "WORK");
    drv_thread(&d, uart, "UART rx");
    drv_begin(&d);
    drv_event(&d, 0, 1000, FLIGHTREC_EV_THREAD_SWITCH_OUT, (uint64_t)idle0);
    drv_event(&d, 0, 1000, FLIGHTREC_EV_THREAD_SWITCH_IN, (uint64_t)worker);
    drv_event(&d, 1, 1100, FLIGHTREC_EV_THREAD_SWITCH_OUT, (uint64_t)idle1);
    drv_event(&d, 1, 1100, FLIGHTREC_EV_THREAD_SWITCH_IN, (uint64_t)uart);
    drv_event(&d, 0, 1200, FLIGHTREC_EV_INTERRUPT_ENTRY, 11);
    drv_event(&d, 0, 1250, FLIGHTREC_EV_SCHEDULER_UNBLOCK, (uint64_t)uart);
    drv_event(&d, 0, 1300, FLIGHTREC_EV_INTERRUPT_EXIT, 11);
    drv_event(&d, 0, 1400, FLIGHTREC_EV_WRITE_ENTRY, 1);
    drv_event(&d, 0, 1500, FLIGHTREC_EV_WRITE_EXIT, 5);
    drv_event(&d, 0, 1600, FLIGHTREC_USER(2), 0xdeadbeef);
    drv_event(&d, 0, 1700, FLIGHTREC_EV_THREAD_SWITCH_OUT, (uint64_t)worker);
    drv_event(&d, 0, 1700, FLIGHTREC_EV_THREAD_SWITCH_IN, (uint64_t)idle0);
    drv_loss(&d, 1, 1800, FLIGHTREC_LOSS_OVERFLOW, 2);
    drv_end(&d);
}
