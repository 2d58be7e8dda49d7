/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A stream written by the real recording runtime with the target's own
 * counter (cntvct_el0 on aarch64, clock_gettime on powerpc and s390x, rdtsc
 * on x86), decoded on the target and on the host, byte for byte alike:
 *
 *   cross-stream produce FILE   records a fixed set of events, dumps them
 *                               to FILE, decodes FILE, checks every record
 *                               and writes the decode as text to FILE.txt
 *   cross-stream decode FILE    writes the decode of FILE as text to stdout
 *
 * A cross build runs "produce" under qemu-user and then the host build's
 * "decode" on the same file (tests/roundtrip/CMakeLists.txt); the two texts
 * must be identical.
 */
#include <flightrec.h>
#include <flightrec/client.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EVENT_VALUE FLIGHTREC_USER(1)
#define EVENT_WORKER FLIGHTREC_USER(2)
#define EVENT_MARK FLIGHTREC_USER(3)
#define WORKER_EVENTS 100u

static int failures;

#define EXPECT(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "cross-stream: %s:%d: ", __FILE__, __LINE__);    \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            failures++;                                                      \
        }                                                                    \
    } while (0)

/* The stream format word this build must write (docs/format.md). */
static uint32_t expected_format(void)
{
#if defined(CROSS_EXPECT_FORMAT)
    return CROSS_EXPECT_FORMAT; /* the cross build names it outright */
#else
    int big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
    if (sizeof(uintptr_t) == 4)
        return big ? 0x33333333u : 0x11111111u;
    return big ? 0x44444444u : 0x22222222u;
#endif
}

/* Data words that cross every byte lane; on 32-bit targets the last is
 * the widest word there is. */
static const uint64_t value_data[] = {
    0, 1, 0x80, 0x1234, 0x7fffffffu, 0x80000000u, 0xfedcba98u,
#if UINTPTR_MAX > 0xffffffffu
    UINT64_C(0x0123456789abcdef), UINT64_MAX,
#else
    0xffffffffu,
#endif
};
#define VALUE_COUNT (sizeof(value_data) / sizeof(value_data[0]))

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "cross-worker");
    for (uint32_t i = 0; i < WORKER_EVENTS; i++)
        flightrec_produce(EVENT_WORKER, (uintptr_t)i * 3u);
    return NULL;
}

/* Clock readings around the two MARK events. */
struct marks {
    uint64_t before[2], after[2];
};

static void record(struct marks *marks)
{
    pthread_setname_np(pthread_self(), "cross-main");
    flightrec_event_set_name(EVENT_VALUE, "cross_value");
    for (size_t i = 0; i < VALUE_COUNT; i++)
        flightrec_produce(EVENT_VALUE, (uintptr_t)value_data[i]);
    for (int m = 0; m < 2; m++) {
        if (m == 1) {
            struct timespec pause = { 0, 20000000 };
            nanosleep(&pause, NULL);
        }
        marks->before[m] = monotonic_ns();
        flightrec_produce(EVENT_MARK, (uintptr_t)m);
        marks->after[m] = monotonic_ns();
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0 ||
        pthread_join(thread, NULL) != 0) {
        fprintf(stderr, "cross-stream: cannot run the worker thread\n");
        exit(2);
    }
}

/*=====   Decoding   =====*/

struct decoded {
    struct flightrec_record rec;
    char name[64];
    char thread[64];
    int64_t thread_id;
};

struct decode {
    struct decoded *list;
    size_t count, cap;
    flightrec_client *client;
};

static int keep(const struct flightrec_record *rec, void *arg)
{
    struct decode *d = arg;
    if (d->count == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 256;
        d->list = realloc(d->list, d->cap * sizeof(*d->list));
        if (d->list == NULL) {
            fprintf(stderr, "cross-stream: out of memory\n");
            exit(2);
        }
    }
    struct decoded *out = &d->list[d->count++];
    out->rec = *rec;
    out->rec.ring_info = NULL;
    out->rec.text = NULL;
    snprintf(out->name, sizeof(out->name), "%s",
             rec->type == FLIGHTREC_RECORD_EVENT
                 ? flightrec_client_event_name(d->client, rec->event)
                 : "-");
    snprintf(out->thread, sizeof(out->thread), "%s",
             rec->ring_info ? rec->ring_info->thread_name : "");
    out->thread_id = rec->ring_info ? rec->ring_info->thread_id : -1;
    return 0;
}

/* Decodes FILE merged; exits on an error the stream should not have. */
static void decode_file(const char *path, struct decode *d)
{
    memset(d, 0, sizeof(*d));
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "cross-stream: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    struct flightrec_client_options options = {
        .on_record = keep, .arg = d, .merge = 1, .merge_window_ns = 0,
    };
    if (flightrec_client_create(&d->client, &options) != 0) {
        fprintf(stderr, "cross-stream: cannot create a client\n");
        exit(2);
    }
    int rc = flightrec_client_read_fd(d->client, fd);
    close(fd);
    if (rc != 0) {
        fprintf(stderr, "cross-stream: %s: %s\n", path,
                flightrec_client_message(d->client));
        exit(1);
    }
}

/* The decode as text: header facts, totals, then every record.  Thread
 * ids and times differ from run to run but not between decoders. */
static void write_text(FILE *out, const struct decode *d)
{
    const struct flightrec_stream_info *info = flightrec_client_info(d->client);
    struct flightrec_client_totals totals;
    flightrec_client_totals(d->client, &totals);
    fprintf(out, "format 0x%08" PRIx32 " version %" PRIu32 " kind %" PRIu32
                 " frequency %" PRIu64 " items_per_ring %" PRIu32
                 " rings %" PRIu32 " pid %" PRId64 " realtime %d %" PRIu64 "\n",
            info->format, info->version, info->kind, info->frequency,
            info->items_per_ring, info->ring_count, info->process_id,
            info->has_realtime, info->realtime_ns_at_zero);
    fprintf(out, "totals bytes %" PRIu64 " items %" PRIu64 " events %" PRIu64
                 " overflow %" PRIu64 " discard %" PRIu64 " missing %" PRIu64
                 " untimed %" PRIu64 " late %" PRIu64 " rings %" PRIu32 "\n",
            totals.bytes, totals.items, totals.events, totals.overflow,
            totals.discard, totals.missing, totals.untimed, totals.late,
            totals.rings);
    for (size_t i = 0; i < d->count; i++) {
        const struct decoded *r = &d->list[i];
        fprintf(out, "%" PRIu32 " %" PRIu32 " %" PRIu64 " ring %" PRIu32
                     " %" PRIu32 " %s 0x%" PRIx64 " loss %" PRIu32 " %" PRIu64
                     " at %" PRIu64 " thread %" PRId64 " '%s'\n",
                r->rec.type, r->rec.flags, r->rec.time_ns, r->rec.ring,
                r->rec.event, r->name, r->rec.data, r->rec.loss_kind,
                r->rec.loss_count, r->rec.offset, r->thread_id, r->thread);
    }
}

/* Every record the producer made, exactly, and times within the clock
 * readings around them. */
static void check(const struct decode *d, const struct marks *marks)
{
    const struct flightrec_stream_info *info = flightrec_client_info(d->client);
    EXPECT(info->format == expected_format(), "format 0x%08x, expected 0x%08x",
           (unsigned)info->format, (unsigned)expected_format());
    EXPECT(info->process_id == (int64_t)getpid(), "process id %lld",
           (long long)info->process_id);
    EXPECT(info->frequency == flightrec_counter_frequency(),
           "frequency %llu, the runtime says %llu",
           (unsigned long long)info->frequency,
           (unsigned long long)flightrec_counter_frequency());
#if defined(__aarch64__)
    uint64_t cntfrq;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(cntfrq));
    EXPECT(info->frequency == cntfrq, "frequency %llu, cntfrq_el0 %llu",
           (unsigned long long)info->frequency, (unsigned long long)cntfrq);
    EXPECT(strcmp(FLIGHTREC__COUNTER_KIND, "cntvct_el0") == 0,
           "counter %s", FLIGHTREC__COUNTER_KIND);
#endif

    size_t values = 0, worker_events = 0, mark_at[2] = { 0, 0 }, marks_seen = 0;
    int64_t main_tid = -2, worker_tid = -2;
    uint64_t last_time = 0;
    for (size_t i = 0; i < d->count; i++) {
        const struct decoded *r = &d->list[i];
        EXPECT(r->rec.type == FLIGHTREC_RECORD_EVENT, "record %zu type %u",
               i, (unsigned)r->rec.type);
        EXPECT(r->rec.flags == 0, "record %zu flags 0x%x", i,
               (unsigned)r->rec.flags);
        EXPECT(r->rec.time_ns >= last_time, "record %zu at %llu before %llu",
               i, (unsigned long long)r->rec.time_ns,
               (unsigned long long)last_time);
        last_time = r->rec.time_ns;
        if (r->rec.event == EVENT_VALUE) {
            EXPECT(values < VALUE_COUNT && r->rec.data == value_data[values],
                   "value %zu: 0x%llx", values, (unsigned long long)r->rec.data);
            EXPECT(strcmp(r->name, "cross_value") == 0, "name '%s'", r->name);
            EXPECT(strcmp(r->thread, "cross-main") == 0, "thread '%s'",
                   r->thread);
            main_tid = r->thread_id;
            values++;
        } else if (r->rec.event == EVENT_MARK) {
            EXPECT(marks_seen < 2 && r->rec.data == marks_seen, "mark %zu: %llu",
                   marks_seen, (unsigned long long)r->rec.data);
            if (marks_seen < 2)
                mark_at[marks_seen] = i;
            marks_seen++;
        } else if (r->rec.event == EVENT_WORKER) {
            EXPECT(r->rec.data == worker_events * 3u, "worker %zu: %llu",
                   worker_events, (unsigned long long)r->rec.data);
            EXPECT(strcmp(r->thread, "cross-worker") == 0, "thread '%s'",
                   r->thread);
            worker_tid = r->thread_id;
            worker_events++;
        } else {
            EXPECT(0, "record %zu: event %u", i, (unsigned)r->rec.event);
        }
    }
    EXPECT(d->count == VALUE_COUNT + 2 + WORKER_EVENTS, "%zu records",
           d->count);
    EXPECT(values == VALUE_COUNT, "%zu values", values);
    EXPECT(marks_seen == 2, "%zu marks", marks_seen);
    EXPECT(worker_events == WORKER_EVENTS, "%zu worker events", worker_events);
    EXPECT(main_tid >= 0 && worker_tid >= 0 && main_tid != worker_tid,
           "thread ids %lld %lld", (long long)main_tid, (long long)worker_tid);

    struct flightrec_client_totals totals;
    flightrec_client_totals(d->client, &totals);
    EXPECT(totals.events == d->count && totals.overflow == 0 &&
               totals.discard == 0 && totals.missing == 0 &&
               totals.untimed == 0 && totals.late == 0,
           "totals: %llu events, losses %llu %llu %llu, untimed %llu",
           (unsigned long long)totals.events,
           (unsigned long long)totals.overflow,
           (unsigned long long)totals.discard,
           (unsigned long long)totals.missing,
           (unsigned long long)totals.untimed);

    if (marks_seen == 2) {
        /* The counter converted to nanoseconds agrees with the monotonic
         * clock: the decoded gap lies between the clock's shortest and
         * longest gap, give or take the rounding of one tick each side. */
        uint64_t tick_ns = 1000000000u / info->frequency + 1u;
        uint64_t gap = d->list[mark_at[1]].rec.time_ns -
                       d->list[mark_at[0]].rec.time_ns;
        uint64_t shortest = marks->before[1] - marks->after[0];
        uint64_t longest = marks->after[1] - marks->before[0];
        EXPECT(gap + 2 * tick_ns >= shortest && gap <= longest + 2 * tick_ns,
               "marks %llu ns apart, the clock says %llu..%llu",
               (unsigned long long)gap, (unsigned long long)shortest,
               (unsigned long long)longest);
        EXPECT(shortest >= 20000000u, "pause of %llu ns",
               (unsigned long long)shortest);
    }
}

static void free_decode(struct decode *d)
{
    flightrec_client_destroy(d->client);
    free(d->list);
}

int main(int argc, char **argv)
{
    if (argc != 3 ||
        (strcmp(argv[1], "produce") != 0 && strcmp(argv[1], "decode") != 0)) {
        fprintf(stderr, "usage: cross-stream produce|decode FILE\n");
        return 2;
    }
    struct decode d;
    if (strcmp(argv[1], "decode") == 0) {
        decode_file(argv[2], &d);
        write_text(stdout, &d);
        free_decode(&d);
        return fflush(stdout) == 0 ? 0 : 1;
    }

    struct marks marks;
    record(&marks);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || flightrec_dump(fd) != 0 || close(fd) != 0) {
        fprintf(stderr, "cross-stream: cannot dump to %s\n", argv[2]);
        return 1;
    }
    decode_file(argv[2], &d);
    check(&d, &marks);
    char text_path[4096];
    snprintf(text_path, sizeof(text_path), "%s.txt", argv[2]);
    FILE *text = fopen(text_path, "w");
    if (text == NULL) {
        fprintf(stderr, "cross-stream: %s: %s\n", text_path, strerror(errno));
        return 1;
    }
    write_text(text, &d);
    if (fclose(text) != 0) {
        fprintf(stderr, "cross-stream: cannot write %s\n", text_path);
        return 1;
    }
    free_decode(&d);
    if (failures != 0) {
        fprintf(stderr, "cross-stream: %d checks failed\n", failures);
        return 1;
    }
    return 0;
}
