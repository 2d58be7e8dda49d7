/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Events a program defines (flightrec_event_define): spans, counters and
 * strings, from the user's side.  A stream with exactly known times goes
 * through `flightrec print` and `flightrec convert` into every format, each
 * read back by the real readers; a real program defines and records them
 * from two threads and dumps itself; a session read from outside
 * (`flightrec dump PID`) carries the kinds too.
 */
#include <flightrec.h>
#include <flightrec/client.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "stream-vector.h"
#include "test.h"

#define EV_REQUEST FLIGHTREC_USER(0)
#define EV_REQUEST_END FLIGHTREC_USER(1)
#define EV_PARSE FLIGHTREC_USER(2)
#define EV_PARSE_END FLIGHTREC_USER(3)
#define EV_DEPTH FLIGHTREC_USER(4)
#define EV_LOG FLIGHTREC_USER(5)
#define EV_PLAIN FLIGHTREC_USER(6)

static char scratch_dir[512];

static const char *scratch(const char *name)
{
    static char path[1024];
    snprintf(scratch_dir, sizeof scratch_dir, "%s/spans-%d", CLI_TEST_DIR,
             (int)getpid());
    mkdir(scratch_dir, 0700);
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    return path;
}

/* Runs a shell command; its stdout (and stderr) in a static buffer. */
static const char *run(const char *cmd, int *status)
{
    static char out[1 << 18];
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    return out;
}

static int lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        for (size_t i = 0; i + strlen(needle) <= len; i++) {
            if (memcmp(line + i, needle, strlen(needle)) == 0) {
                n++;
                break;
            }
        }
        line += len + (end != NULL);
    }
    return n;
}

/* Lines of @a text that begin with @a start and end with @a end. */
static int lines_between(const char *text, const char *start, const char *end)
{
    int n = 0;
    size_t ls = strlen(start), le = strlen(end);
    for (const char *line = text; *line != '\0';) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len >= ls + le && memcmp(line, start, ls) == 0 &&
            memcmp(line + len - le, end, le) == 0)
            n++;
        line += len + (nl != NULL);
    }
    return n;
}

static void name_record(struct fr_vec *v, uint32_t event, const char *name,
                        int with_kind, uint32_t kind)
{
    fr_vec_name(v, FLIGHTREC_EV_EVENT_NAME_ID, event, FLIGHTREC_EV_EVENT_NAME,
                name, strlen(name));
    if (with_kind)
        fr_vec_item(v, 0, FLIGHTREC_EV_EVENT_KIND, kind);
}

/*
 * Times in ns (frequency 1 GHz, uptime pairs at the chunks' starts):
 *   worker (tid 101, ring 0): request 1500..2000 (data 7), inside it parse
 *     1600..1800; depth = 3 at 1700; log "hello world" at 1900
 *   logger (tid 102, ring 1): request 1300..2500; depth = -2 at 1400;
 *     log "say \"hi\"\n" at 1450; a parse end without begin at 2600
 */
static const char *write_stream(const char *name, int with_kinds)
{
    struct fr_vec v;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 2, 1024, 777,
                            1600000000000000000ull);
    name_record(&v, EV_REQUEST, "request", with_kinds,
                FLIGHTREC_EVENT_SPAN_BEGIN);
    name_record(&v, EV_REQUEST_END, "request", with_kinds,
                FLIGHTREC_EVENT_SPAN_END_OF(EV_REQUEST));
    name_record(&v, EV_PARSE, "parse", with_kinds, FLIGHTREC_EVENT_SPAN_BEGIN);
    name_record(&v, EV_PARSE_END, "parse end", with_kinds,
                FLIGHTREC_EVENT_SPAN_END_OF(EV_PARSE));
    name_record(&v, EV_DEPTH, "queue depth", with_kinds,
                FLIGHTREC_EVENT_COUNTER);
    name_record(&v, EV_LOG, "log", with_kinds, FLIGHTREC_EVENT_STRING);
    fr_vec_flightrec_chunk(&v, 0, 101, "worker", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1000, 1000);
    fr_vec_item(&v, 1500, EV_REQUEST, 7);
    fr_vec_item(&v, 1600, EV_PARSE, 0);
    fr_vec_item(&v, 1700, EV_DEPTH, 3);
    fr_vec_item(&v, 1800, EV_PARSE_END, 0);
    fr_vec_packed(&v, 1900, EV_LOG, "hello world", 12);
    fr_vec_item(&v, 2000, EV_REQUEST_END, 0);
    fr_vec_flightrec_chunk(&v, 1, 102, "logger", 0, 0, 0, 0);
    fr_vec_uptime(&v, 1200, 1200);
    fr_vec_item(&v, 1300, EV_REQUEST, 0);
    fr_vec_item(&v, 1400, EV_DEPTH, (uint64_t)-2);
    fr_vec_packed(&v, 1450, EV_LOG, "say \"hi\"\n", 10);
    fr_vec_item(&v, 2500, EV_REQUEST_END, 0);
    fr_vec_item(&v, 2600, EV_PARSE_END, 0);
    const char *path = scratch(name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_EQ_U(fwrite(v.buf, 1, v.len, f), v.len);
    fclose(f);
    fr_vec_free(&v);
    static char copy[2][1024];
    snprintf(copy[with_kinds], sizeof copy[0], "%s", path);
    return copy[with_kinds];
}

/* The decoder's view: kinds, the begin an end closes, strings as text. */
struct seen {
    int records;
    int texts;
    char text[4][64];
    uint64_t text_ns[4];
};

static int on_record(const struct flightrec_record *r, void *arg)
{
    struct seen *s = arg;
    s->records++;
    if (r->text != NULL && s->texts < 4) {
        snprintf(s->text[s->texts], sizeof s->text[0], "%s", r->text);
        CHECK_EQ_U(r->text_len, strlen(r->text));
        s->text_ns[s->texts++] = r->time_ns;
    }
    return 0;
}

static flightrec_client *decode_file(const char *path, struct seen *s,
                                     int merge)
{
    memset(s, 0, sizeof *s);
    struct flightrec_client_options o = { .on_record = on_record, .arg = s,
                                          .merge = merge };
    flightrec_client *c;
    CHECK_EQ_I(flightrec_client_create(&c, &o), 0);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    CHECK_EQ_I(flightrec_client_read_fd(c, fd), 0);
    close(fd);
    return c;
}

TEST(decoder_gives_kinds_and_texts)
{
    const char *in = write_stream("kinds.rec", 1);
    for (int merge = 0; merge <= 1; merge++) {
        struct seen s;
        flightrec_client *c = decode_file(in, &s, merge);
        CHECK_EQ_U(flightrec_client_event_kind(c, EV_REQUEST),
                   FLIGHTREC_EVENT_SPAN_BEGIN);
        CHECK_EQ_U(flightrec_client_event_kind(c, EV_REQUEST_END),
                   FLIGHTREC_EVENT_SPAN_END);
        CHECK_EQ_I(flightrec_client_span_begin(c, EV_REQUEST_END),
                   (int)EV_REQUEST);
        CHECK_EQ_I(flightrec_client_span_begin(c, EV_PARSE_END),
                   (int)EV_PARSE);
        CHECK_EQ_I(flightrec_client_span_begin(c, EV_REQUEST), -1);
        CHECK_EQ_U(flightrec_client_event_kind(c, EV_DEPTH),
                   FLIGHTREC_EVENT_COUNTER);
        CHECK_EQ_U(flightrec_client_event_kind(c, EV_LOG),
                   FLIGHTREC_EVENT_STRING);
        CHECK_EQ_U(flightrec_client_event_kind(c, EV_PLAIN),
                   FLIGHTREC_EVENT_INSTANT);
        /* 9 single items and two strings of 2 items each: 11 records;
         * the counters still count the 13 items. */
        CHECK_EQ_I(s.records, 11);
        struct flightrec_client_totals t;
        flightrec_client_totals(c, &t);
        CHECK_EQ_U(t.events, 13);
        CHECK_EQ_I(s.texts, 2);
        int w = merge ? 1 : 0; /* merged: the logger's text comes first */
        CHECK_EQ_S(s.text[w], "hello world");
        CHECK_EQ_U(s.text_ns[w], 1900);
        CHECK_EQ_S(s.text[1 - w], "say \"hi\"\n");
        CHECK_EQ_U(s.text_ns[1 - w], 1450);
        flightrec_client_destroy(c);
    }
    /* Without EVENT_KIND the same stream decodes as before: instants, one
     * record per item, no text. */
    const char *plain = write_stream("plain.rec", 0);
    struct seen s;
    flightrec_client *c = decode_file(plain, &s, 1);
    CHECK_EQ_U(flightrec_client_event_kind(c, EV_REQUEST),
               FLIGHTREC_EVENT_INSTANT);
    CHECK_EQ_U(flightrec_client_event_kind(c, EV_LOG),
               FLIGHTREC_EVENT_INSTANT);
    CHECK_EQ_I(s.records, 13);
    CHECK_EQ_I(s.texts, 0);
    CHECK_EQ_S(flightrec_client_event_name(c, EV_LOG), "log");
    flightrec_client_destroy(c);
}

/* Feeds a vector byte by byte (the hardest split) into a client. */
static flightrec_client *decode_vec(const struct fr_vec *v, struct seen *s,
                                    int merge)
{
    memset(s, 0, sizeof *s);
    struct flightrec_client_options o = { .on_record = on_record, .arg = s,
                                          .merge = merge };
    flightrec_client *c;
    CHECK_EQ_I(flightrec_client_create(&c, &o), 0);
    for (size_t i = 0; i < v->len; i++)
        CHECK_EQ_I(flightrec_client_feed(c, v->buf + i, 1), 0);
    CHECK_EQ_I(flightrec_client_finish(c), 0);
    return c;
}

static int cut_seen;

static int on_cut(const struct flightrec_record *r, void *arg)
{
    (void)arg;
    if (r->text != NULL) {
        CHECK_EQ_U(r->text_len, FLIGHTREC_STRING_MAX - 1);
        CHECK(r->flags & FLIGHTREC_RECORD_TEXT_CUT);
        for (size_t i = 0; i < r->text_len; i++)
            CHECK_EQ_I(r->text[i], 'a' + (int)(i % 26));
        cut_seen++;
    }
    return 0;
}

TEST(decoder_edge_cases)
{
    for (int wide = 0; wide <= 1; wide++) {
        struct fr_vec v;
        fr_vec_init(&v, wide ? FLIGHTREC_FORMAT_LE_64 : FLIGHTREC_FORMAT_LE_32);
        fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 5, 0);
        /* EVENT_KIND that follows no name record is ignored. */
        fr_vec_item(&v, 0, FLIGHTREC_EV_EVENT_KIND, FLIGHTREC_EVENT_COUNTER);
        name_record(&v, EV_LOG, "log", 1, FLIGHTREC_EVENT_STRING);
        name_record(&v, EV_DEPTH, "depth", 1, FLIGHTREC_EVENT_COUNTER);
        fr_vec_flightrec_chunk(&v, 0, 9, "t", 0, 0, 0, 0);
        fr_vec_uptime(&v, 100, 100);
        /* Fills its items exactly, no NUL: ends at the record's last item
         * (another event follows). */
        size_t b = fr_vec_data_bytes(&v);
        fr_vec_packed(&v, 200, EV_LOG, "abcdefghijklmnop", 2 * b);
        fr_vec_item(&v, 210, EV_DEPTH, wide ? (uint64_t)-5 : 0xfffffffbu);
        /* Two texts of one id at one time: the NUL parts them. */
        fr_vec_packed(&v, 300, EV_LOG, "one", 4);
        fr_vec_packed(&v, 300, EV_LOG, "two", 4);
        /* Ends the stream without a NUL: delivered at finish. */
        fr_vec_packed(&v, 400, EV_LOG, "last", 4);
        for (int merge = 0; merge <= 1; merge++) {
            struct seen s;
            flightrec_client *c = decode_vec(&v, &s, merge);
            CHECK_EQ_U(flightrec_client_event_kind(c, FLIGHTREC_EV_EVENT_KIND),
                       FLIGHTREC_EVENT_INSTANT);
            CHECK_EQ_I(s.texts, 4);
            char want[17];
            snprintf(want, sizeof want, "%.*s", (int)(2 * b),
                     "abcdefghijklmnop");
            CHECK_EQ_S(s.text[0], want);
            CHECK_EQ_U(s.text_ns[0], 200);
            CHECK_EQ_S(s.text[1], "one");
            CHECK_EQ_S(s.text[2], "two");
            CHECK_EQ_S(s.text[3], "last");
            CHECK_EQ_U(s.text_ns[3], 400);
            /* 4 texts and one counter sample. */
            CHECK_EQ_I(s.records, 5);
            flightrec_client_destroy(c);
        }
        /* A counter is signed in the writer's word size. */
        char path[512], cmd[6000];
        snprintf(path, sizeof path, "%.500s", scratch(wide ? "e64.rec" : "e32.rec"));
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        CHECK_EQ_U(fwrite(v.buf, 1, v.len, f), v.len);
        fclose(f);
        snprintf(cmd, sizeof cmd, "%s print '%s'", FLIGHTREC_BIN, path);
        int st;
        const char *out = run(cmd, &st);
        CHECK_EQ_I(st, 0);
        CHECK_EQ_I(lines_with(out, " 9 t depth = -5"), 1);
        CHECK_EQ_I(lines_with(out, " 9 t log \"last\""), 1);
        snprintf(cmd, sizeof cmd, "%s convert --to json -o '%s.json' '%s' && "
                 "python3 '%s/check-json.py' '%s.json'", FLIGHTREC_BIN, path,
                 path, CONVERT_TEST_DIR, path);
        out = run(cmd, &st);
        CHECK_EQ_I(st, 0);
        CHECK_EQ_I(lines_with(out, "C 9 210 depth {\"value\": -5}"), 1);
        fr_vec_free(&v);
    }
    /* Longer than FLIGHTREC_STRING_MAX - 1 bytes: the beginning, flagged. */
    struct fr_vec v;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 5, 0);
    name_record(&v, EV_LOG, "log", 1, FLIGHTREC_EVENT_STRING);
    fr_vec_flightrec_chunk(&v, 0, 9, "t", 0, 0, 0, 0);
    fr_vec_uptime(&v, 100, 100);
    char longer[401];   /* 400 letters, 50 items of 8 (fr_vec_packed
                         * takes a C string) */
    for (size_t i = 0; i + 1 < sizeof longer; i++)
        longer[i] = (char)('a' + (int)(i % 26));
    longer[sizeof longer - 1] = '\0';
    fr_vec_packed(&v, 200, EV_LOG, longer, sizeof longer - 1);
    struct flightrec_client_options o = { .on_record = on_cut, .merge = 1 };
    flightrec_client *c;
    CHECK_EQ_I(flightrec_client_create(&c, &o), 0);
    CHECK_EQ_I(flightrec_client_feed(c, v.buf, v.len), 0);
    CHECK_EQ_I(flightrec_client_finish(c), 0);
    CHECK_EQ_I(cut_seen, 1);
    struct flightrec_client_totals t;
    flightrec_client_totals(c, &t);
    CHECK_EQ_U(t.events, (sizeof longer - 1) / 8);
    flightrec_client_destroy(c);
    fr_vec_free(&v);
}

TEST(print_shows_spans_counters_and_text)
{
    const char *in = write_stream("print.rec", 1);
    char cmd[2048];
    int st;
    snprintf(cmd, sizeof cmd, "%s print '%s' 2>&1", FLIGHTREC_BIN, in);
    const char *out = run(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(out, "0.000000200 [0] 101 worker request begin "
                               "0x7"), 1);
    CHECK_EQ_I(lines_with(out, "0.000000300 [0] 101 worker parse begin 0x0"),
               1);
    CHECK_EQ_I(lines_with(out, "0.000000400 [0] 101 worker queue depth = 3"),
               1);
    CHECK_EQ_I(lines_with(out, "0.000000500 [0] 101 worker parse end end "
                               "after 0.000000200 s"), 1);
    CHECK_EQ_I(lines_with(out, "0.000000600 [0] 101 worker log "
                               "\"hello world\""), 1);
    CHECK_EQ_I(lines_with(out, "0.000000700 [0] 101 worker request end "
                               "after 0.000000500 s"), 1);
    CHECK_EQ_I(lines_with(out, "0.000000000 [1] 102 logger request begin "
                               "0x0"), 1);
    CHECK_EQ_I(lines_with(out, "0.000001200 [1] 102 logger request end "
                               "after 0.000001200 s"), 1);
    CHECK_EQ_I(lines_with(out, "0.000001300 [1] 102 logger parse end end "
                               "(no open span)"), 1);
    CHECK_EQ_I(lines_with(out, "0.000000100 [1] 102 logger queue depth = -2"),
               1);
    /* Text is escaped: the quote and the newline never reach the
     * terminal raw. */
    CHECK_EQ_I(lines_with(out, "0.000000150 [1] 102 logger log "
                               "\"say \\\"hi\\\"\\n\""), 1);
    CHECK_EQ_I(lines_with(out, " [0] 101 worker "), 6);
    /* The durations do not depend on which records are printed. */
    snprintf(cmd, sizeof cmd, "%s print --event request '%s' 2>&1",
             FLIGHTREC_BIN, in);
    const char *only = run(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(only, "0.000000700 [0] 101 worker request end "
                                "after 0.000000500 s"), 1);
    CHECK_EQ_I(lines_with(only, " request "), 4);
    /* run() reuses its buffer: the whole print again. */
    snprintf(cmd, sizeof cmd, "%s print '%s' 2>&1", FLIGHTREC_BIN, in);
    out = run(cmd, &st);
    CHECK_EQ_I(lines_with(out, " [1] 102 logger "), 5);
    snprintf(cmd, sizeof cmd, "%s print --json '%s'", FLIGHTREC_BIN, in);
    out = run(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(out, "\"text\":\"hello world\""), 1);
    CHECK_EQ_I(lines_with(out, "\"text\":\"say \\\"hi\\\"\\n\""), 1);
}


/* Converts @a in to @a format at @a out; checks the exit status. */
static void convert_to(const char *format, const char *out, const char *in)
{
    char cmd[3000];
    int st;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'; %s convert --to %s -o '%s' '%s' "
             "2>&1", out, FLIGHTREC_BIN, format, out, in);
    const char *text = run(cmd, &st);
    if (st != 0)
        TEST_FAIL("convert --to %s: %s", format, text);
}

/* Runs tests/convert/SCRIPT on @a path with @a args. */
static const char *read_back(const char *script, const char *path,
                             const char *args, int *st)
{
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "python3 '%s/%s' '%s' %s", CONVERT_TEST_DIR,
             script, path, args);
    return run(cmd, st);
}

/* flightrec report: the declared spans' durations, by their begin's name;
 * the parse end without a begin is unpaired. */
TEST(report_gives_span_durations)
{
    const char *in = write_stream("report.rec", 1);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s report '%s'", FLIGHTREC_BIN, in);
    int st;
    const char *out = run(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK(strstr(out, "spans: 2\n") != NULL);
    CHECK_EQ_I(lines_between(out, "request ",
                             "2     1.70 µs     500 ns    1.20 µs    1.20 µs"),
               1);
    CHECK_EQ_I(lines_between(out, "parse ",
                             "1      200 ns     200 ns     200 ns     200 ns"),
               1);
    CHECK(strstr(out, "1 span ends without their begin") != NULL);
    /* Without EVENT_KIND they are instants: no spans. */
    const char *plain = write_stream("report-plain.rec", 0);
    snprintf(cmd, sizeof cmd, "%s report '%s'", FLIGHTREC_BIN, plain);
    out = run(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK(strstr(out, "\nspans: 0\n") != NULL);
}

TEST(perfetto_slices_and_counter_tracks)
{
    const char *in = write_stream("pf.rec", 1);
    char out[1024];
    snprintf(out, sizeof out, "%s", scratch("spans.pftrace"));
    convert_to("perfetto", out, in);
    int st;
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "protoc --proto_path='%s' "
             "--decode=perfetto.protos.Trace perfetto-trace.proto < '%s' "
             ">/dev/null", CONVERT_TEST_DIR, out);
    run(cmd, &st);
    CHECK_EQ_I(st, 0);
    const char *t = read_back("check-perfetto.py", out, "--detail", &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(t, "slice worker request 1500..2000 depth 0"), 1);
    CHECK_EQ_I(lines_with(t, "slice worker parse 1600..1800 depth 1"), 1);
    CHECK_EQ_I(lines_with(t, "slice logger request 1300..2500 depth 0"), 1);
    CHECK_EQ_I(lines_with(t, "slice "), 3);
    CHECK_EQ_I(lines_with(t, "counter queue depth 1700 3"), 1);
    CHECK_EQ_I(lines_with(t, "counter queue depth 1400 -2"), 1);
    CHECK_EQ_I(lines_with(t, "counter "), 2);
    CHECK_EQ_I(lines_with(t, "instant worker log 1900 text=\"hello world\""),
               1);
    CHECK_EQ_I(lines_with(t, "instant logger log 1450 "
                             "text=\"say \\\"hi\\\"\\n\""), 1);
}

TEST(json_complete_slices_and_counters)
{
    const char *in = write_stream("js.rec", 1);
    char out[1024];
    snprintf(out, sizeof out, "%s", scratch("spans.json"));
    convert_to("json", out, in);
    int st;
    const char *t = read_back("check-json.py", out, "", &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(t, "X 101 1500+500 request {\"data\": \"0x7\"}"), 1);
    CHECK_EQ_I(lines_with(t, "X 101 1600+200 parse {}"), 1);
    CHECK_EQ_I(lines_with(t, "X 102 1300+1200 request {}"), 1);
    CHECK_EQ_I(lines_with(t, "C 101 1700 queue depth {\"value\": 3}"), 1);
    CHECK_EQ_I(lines_with(t, "C 102 1400 queue depth {\"value\": -2}"), 1);
    CHECK_EQ_I(lines_with(t, "i 101 1900 log {\"text\": \"hello world\"}"), 1);
    CHECK_EQ_I(lines_with(t, "i 102 1450 log {\"text\": \"say \\\"hi\\\"\\n\"}"),
               1);
    /* The end without a begin stays visible, as an instant. */
    CHECK_EQ_I(lines_with(t, "i 102 2600 parse end {\"data\": \"0x0\"}"), 1);
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "node '%s/check-json-viewers.mjs' '%s' '%s' "
             "--detail 2>&1", CONVERT_TEST_DIR, NPM_MODULES, out);
    t = run(cmd, &st);
    if (st != 0)
        TEST_FAIL("the JSON readers failed (scripts/install-deps.sh test "
                  "installs them):\n%s", t);
    CHECK_EQ_I(lines_with(t, "devtools 101 worker: slices 2, entries 2, "
                             "depth 2"), 1);
    CHECK_EQ_I(lines_with(t, "devtools 102 logger: slices 1, entries 1, "
                             "depth 1"), 1);
    CHECK_EQ_I(lines_with(t, "devtools slice 101 request 1500+500"), 1);
    CHECK_EQ_I(lines_with(t, "devtools slice 101 parse 1600+200"), 1);
    CHECK_EQ_I(lines_with(t, "devtools slice 102 request 1300+1200"), 1);
    CHECK_EQ_I(lines_with(t, "devtools complaints: 0"), 1);
    /* speedscope times each profile from its first slice. */
    CHECK_EQ_I(lines_with(t, "worker (tid 101) request {\"data\":\"0x7\"} "
                             "0..500 depth 0"), 1);
    CHECK_EQ_I(lines_with(t, "worker (tid 101) parse 100..300 depth 1"), 1);
    CHECK_EQ_I(lines_with(t, "logger (tid 102) request 0..1200 depth 0"), 1);
    CHECK_EQ_I(lines_with(t, "speedscope warnings: 0"), 1);
}

TEST(ftrace_markers)
{
    const char *in = write_stream("ft.rec", 1);
    char out[1024];
    snprintf(out, sizeof out, "%s", scratch("spans.txt"));
    convert_to("ftrace", out, in);
    int st;
    const char *t = read_back("check-ftrace.py", out, "", &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(t, "worker 101 000 1500 "
                             "tracing_mark_write:B|777|request"), 1);
    CHECK_EQ_I(lines_with(t, "worker 101 000 1600 "
                             "tracing_mark_write:B|777|parse"), 1);
    CHECK_EQ_I(lines_with(t, "worker 101 000 1800 tracing_mark_write:E|777"),
               1);
    CHECK_EQ_I(lines_with(t, "worker 101 000 2000 tracing_mark_write:E|777"),
               1);
    CHECK_EQ_I(lines_with(t, "logger 102 000 1300 "
                             "tracing_mark_write:B|777|request"), 1);
    CHECK_EQ_I(lines_with(t, "logger 102 000 2500 tracing_mark_write:E|777"),
               1);
    CHECK_EQ_I(lines_with(t, ":E|777"), 3);
    CHECK_EQ_I(lines_with(t, "worker 101 000 1700 "
                             "tracing_mark_write:C|777|queue depth|3"), 1);
    CHECK_EQ_I(lines_with(t, "logger 102 000 1400 "
                             "tracing_mark_write:C|777|queue depth|-2"), 1);
    CHECK_EQ_I(lines_with(t, "worker 101 000 1900 "
                             "tracing_mark_write:I|777|log: hello world"), 1);
    /* The newline of the text does not break the line. */
    CHECK_EQ_I(lines_with(t, "logger 102 000 1450 "
                             "tracing_mark_write:I|777|log: say \"hi\"_"), 1);
}

TEST(ctf_fields)
{
    const char *in = write_stream("ctf.rec", 1);
    char out[1024];
    snprintf(out, sizeof out, "%s", scratch("spans-ctf"));
    convert_to("ctf", out, in);
    int st;
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "babeltrace2 --clock-cycles --no-delta '%s' "
             "2>&1", out);
    const char *t = run(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(t, "[00000000000000001500] flightrec:(777) request: "
               "{ cpu_id = 0, vtid = 101, procname = \"worker\" }, "
               "{ span = \"request\", data = 0x7 }"), 1);
    CHECK_EQ_I(lines_with(t, "[00000000000000001800] flightrec:(777) parse end: "
               "{ cpu_id = 0, vtid = 101, procname = \"worker\" }, "
               "{ span = \"parse\" }"), 1);
    CHECK_EQ_I(lines_with(t, "[00000000000000002000] flightrec:(777) request: "
               "{ cpu_id = 0, vtid = 101, procname = \"worker\" }, "
               "{ span = \"request\" }"), 1);
    CHECK_EQ_I(lines_with(t, "[00000000000000001700] flightrec:(777) queue "
               "depth: { cpu_id = 0, vtid = 101, procname = \"worker\" }, "
               "{ value = 3 }"), 1);
    CHECK_EQ_I(lines_with(t, "[00000000000000001400] flightrec:(777) queue "
               "depth: { cpu_id = 1, vtid = 102, procname = \"logger\" }, "
               "{ value = -2 }"), 1);
    CHECK_EQ_I(lines_with(t, "[00000000000000001900] flightrec:(777) log: "
               "{ cpu_id = 0, vtid = 101, procname = \"worker\" }, "
               "{ text = \"hello world\" }"), 1);
    CHECK_EQ_I(lines_with(t, "[00000000000000001450] flightrec:(777) log: "
               "{ cpu_id = 1, vtid = 102, procname = \"logger\" }, "
               "{ text = \"say \\\"hi\\\"\\n\" }"), 1);
    CHECK_EQ_I(lines_with(t, "] flightrec:(777) "), 11);
}

/*
 * The pairing rules (docs/format.md, "Event kinds"), on one thread p (tid 7):
 *   200 outer, 300 inner, 400 end (unpaired: the innermost), 500 end;
 *   600 outer, 700 inner, 800 outer's own end: inner ends with it;
 *   900 end with nothing open: an instant;
 *   1000 inner, never ended: ends with the trace (1100, a plain event).
 */
TEST(span_pairing_rules)
{
    enum { OUTER = FLIGHTREC_USER(20), INNER, END, OUTER_END, PLAIN };
    struct fr_vec v;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 1024, 7, 0);
    name_record(&v, OUTER, "outer", 1, FLIGHTREC_EVENT_SPAN_BEGIN);
    name_record(&v, INNER, "inner", 1, FLIGHTREC_EVENT_SPAN_BEGIN);
    name_record(&v, END, "end", 1, FLIGHTREC_EVENT_SPAN_END);
    name_record(&v, OUTER_END, "outer end", 1,
                FLIGHTREC_EVENT_SPAN_END_OF(OUTER));
    fr_vec_flightrec_chunk(&v, 0, 7, "p", 0, 0, 0, 0);
    fr_vec_uptime(&v, 100, 100);
    static const struct { uint32_t t, ev; } items[] = {
        { 200, OUTER }, { 300, INNER }, { 400, END }, { 500, END },
        { 600, OUTER }, { 700, INNER }, { 800, OUTER_END }, { 900, END },
        { 1000, INNER }, { 1100, PLAIN },
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
        fr_vec_item(&v, items[i].t, items[i].ev, 0);
    char in[1024];
    snprintf(in, sizeof in, "%s", scratch("pairing.rec"));
    FILE *f = fopen(in, "wb");
    CHECK(f != NULL);
    CHECK_EQ_U(fwrite(v.buf, 1, v.len, f), v.len);
    fclose(f);
    fr_vec_free(&v);

    char out[1024];
    snprintf(out, sizeof out, "%s", scratch("pairing.json"));
    convert_to("json", out, in);
    int st;
    const char *t = read_back("check-json.py", out, "", &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(t, "X 7 300+100 inner {}"), 1);
    CHECK_EQ_I(lines_with(t, "X 7 200+300 outer {}"), 1);
    CHECK_EQ_I(lines_with(t, "X 7 700+100 inner {}"), 1);
    CHECK_EQ_I(lines_with(t, "X 7 600+200 outer {}"), 1);
    CHECK_EQ_I(lines_with(t, "X 7 1000+100 inner {}"), 1);
    CHECK_EQ_I(lines_with(t, "X 7 "), 5);
    CHECK_EQ_I(lines_with(t, "i 7 900 end {\"data\": \"0x0\"}"), 1);
    snprintf(out, sizeof out, "%s", scratch("pairing.pftrace"));
    convert_to("perfetto", out, in);
    t = read_back("check-perfetto.py", out, "--detail", &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(t, "slice p inner 300..400 depth 1"), 1);
    CHECK_EQ_I(lines_with(t, "slice p outer 200..500 depth 0"), 1);
    CHECK_EQ_I(lines_with(t, "slice p inner 700..800 depth 1"), 1);
    CHECK_EQ_I(lines_with(t, "slice p outer 600..800 depth 0"), 1);
    CHECK_EQ_I(lines_with(t, "slice p inner 1000..1100 depth 0"), 1);
    CHECK_EQ_I(lines_with(t, "slice "), 5);
    snprintf(out, sizeof out, "%s", scratch("pairing.txt"));
    convert_to("ftrace", out, in);
    t = read_back("check-ftrace.py", out, "", &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(t, "tracing_mark_write:B|7|"), 5);
    CHECK_EQ_I(lines_with(t, "tracing_mark_write:E|7"), 4);
    CHECK_EQ_I(lines_with(t, "p 7 000 800 tracing_mark_write:E|7"), 2);
}

/*=====   A real program   =====*/

/* What one recording thread does: a request span with a parse span inside
 * (the scoped helper), a counter sample and a text. */
static void *recording_thread(void *arg)
{
    intptr_t n = (intptr_t)arg;
    {
        FLIGHTREC_SPAN(EV_REQUEST, EV_REQUEST_END);
        {
            FLIGHTREC_SPAN(EV_PARSE, EV_PARSE_END);
            flightrec_counter_set(EV_DEPTH, -n);
        }
        char text[64];
        snprintf(text, sizeof text, "thread %d says \"done\"", (int)n);
        flightrec_string(EV_LOG, text);
    }
    return NULL;
}

static void define_events(void)
{
    CHECK_EQ_I(flightrec_span_define(EV_REQUEST, EV_REQUEST_END, "request"),
               0);
    CHECK_EQ_I(flightrec_event_define(EV_PARSE, "parse",
                                      FLIGHTREC_EVENT_SPAN_BEGIN), 0);
    CHECK_EQ_I(flightrec_event_define(EV_PARSE_END, "parse end",
                                      FLIGHTREC_EVENT_SPAN_END_OF(EV_PARSE)),
               0);
    CHECK_EQ_I(flightrec_event_define(EV_DEPTH, "queue depth",
                                      FLIGHTREC_EVENT_COUNTER), 0);
    CHECK_EQ_I(flightrec_event_define(EV_LOG, "log", FLIGHTREC_EVENT_STRING),
               0);
}

/* The print lines every recording of record_two_threads() has, whatever
 * the times: per thread n (1, 2) ... */
static void check_printed(const char *rec)
{
    char cmd[3000];
    int st;
    snprintf(cmd, sizeof cmd, "%s print '%s' 2>&1", FLIGHTREC_BIN, rec);
    const char *out = run(cmd, &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(out, " request begin 0x0"), 2);
    CHECK_EQ_I(lines_with(out, " parse begin 0x0"), 2);
    CHECK_EQ_I(lines_with(out, " queue depth = -1"), 1);
    CHECK_EQ_I(lines_with(out, " queue depth = -2"), 1);
    CHECK_EQ_I(lines_with(out, " parse end end"), 2);
    CHECK_EQ_I(lines_with(out, " log \"thread 1 says \\\"done\\\"\""), 1);
    CHECK_EQ_I(lines_with(out, " log \"thread 2 says \\\"done\\\"\""), 1);
    CHECK_EQ_I(lines_with(out, " request end after "), 2);
    CHECK_EQ_I(lines_with(out, " parse end end after "), 2);
    /* Both threads' spans come out as slices, nested. */
    char pf[1024];
    snprintf(pf, sizeof pf, "%s.pftrace", rec);
    convert_to("perfetto", pf, rec);
    out = read_back("check-perfetto.py", pf, "--detail", &st);
    CHECK_EQ_I(st, 0);
    CHECK_EQ_I(lines_with(out, "slice "), 4);
    CHECK_EQ_I(lines_between(out, "slice ", " depth 0"), 2);
    CHECK_EQ_I(lines_between(out, "slice ", " depth 1"), 2);
    CHECK_EQ_I(lines_with(out, " request "), 2);
    CHECK_EQ_I(lines_with(out, " parse "), 2);
    CHECK_EQ_I(lines_with(out, "counter queue depth "), 2);
    CHECK_EQ_I(lines_with(out, " log "), 2);
}

/* Per thread, in order: the events decoded from a dump. */
struct program_view {
    int64_t tid[2];
    uint32_t ev[2][8];
    uint64_t ns[2][8];
    char text[2][64];
    int n[2];
};

static int on_program_record(const struct flightrec_record *r, void *arg)
{
    struct program_view *v = arg;
    if (r->type != FLIGHTREC_RECORD_EVENT || r->event < EV_REQUEST ||
        r->event > EV_LOG)
        return 0;
    int t = v->tid[0] == r->ring_info->thread_id ? 0 : 1;
    if (t == 1 && v->tid[1] != r->ring_info->thread_id) {
        CHECK(v->tid[0] == 0 || v->tid[1] == 0);
        t = v->tid[0] == 0 ? 0 : 1;
        v->tid[t] = r->ring_info->thread_id;
    }
    CHECK(v->n[t] < 8);
    v->ev[t][v->n[t]] = r->event;
    v->ns[t][v->n[t]++] = r->time_ns;
    if (r->text != NULL)
        snprintf(v->text[t], sizeof v->text[t], "%s", r->text);
    return 0;
}

static void check_program_dump(const char *rec)
{
    struct program_view v;
    memset(&v, 0, sizeof v);
    struct flightrec_client_options o = { .on_record = on_program_record,
                                          .arg = &v, .merge = 1 };
    flightrec_client *c;
    CHECK_EQ_I(flightrec_client_create(&c, &o), 0);
    int fd = open(rec, O_RDONLY);
    CHECK(fd >= 0);
    CHECK_EQ_I(flightrec_client_read_fd(c, fd), 0);
    close(fd);
    CHECK_EQ_U(flightrec_client_event_kind(c, EV_REQUEST),
               FLIGHTREC_EVENT_SPAN_BEGIN);
    CHECK_EQ_I(flightrec_client_span_begin(c, EV_REQUEST_END),
               (int)EV_REQUEST);
    CHECK_EQ_I(flightrec_client_span_begin(c, EV_PARSE_END), (int)EV_PARSE);
    CHECK_EQ_U(flightrec_client_event_kind(c, EV_DEPTH),
               FLIGHTREC_EVENT_COUNTER);
    CHECK_EQ_U(flightrec_client_event_kind(c, EV_LOG), FLIGHTREC_EVENT_STRING);
    CHECK_EQ_S(flightrec_client_event_name(c, EV_REQUEST_END), "request");
    /* Each thread: begin, begin, counter, end (inner), text, end (outer),
     * the scopes closing in order, times never decreasing. */
    static const uint32_t order[6] = { EV_REQUEST, EV_PARSE, EV_DEPTH,
                                       EV_PARSE_END, EV_LOG, EV_REQUEST_END };
    for (int t = 0; t < 2; t++) {
        CHECK_EQ_I(v.n[t], 6);
        for (int i = 0; i < 6; i++) {
            CHECK_EQ_U(v.ev[t][i], order[i]);
            if (i > 0)
                CHECK(v.ns[t][i] >= v.ns[t][i - 1]);
        }
        CHECK(strcmp(v.text[t], "thread 1 says \"done\"") == 0 ||
              strcmp(v.text[t], "thread 2 says \"done\"") == 0);
    }
    CHECK(strcmp(v.text[0], v.text[1]) != 0);
    flightrec_client_destroy(c);
}

static void record_two_threads(void)
{
    pthread_t th[2];
    for (intptr_t i = 0; i < 2; i++)
        CHECK_EQ_I(pthread_create(&th[i], NULL, recording_thread,
                                  (void *)(i + 1)), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ_I(pthread_join(th[i], NULL), 0);
}

TEST(program_defines_records_and_dumps)
{
    /* Bad kinds are refused. */
    CHECK_EQ_I(flightrec_event_define(EV_PLAIN, "x", 99),
               FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_I(flightrec_event_define(EV_PLAIN, "x",
                                      FLIGHTREC_EVENT_COUNTER |
                                          FLIGHTREC_EVENT_PAIRED),
               FLIGHTREC_EINVAL_CONFIG);
    CHECK_EQ_I(flightrec_span_define(EV_PLAIN, EV_PLAIN, "x"),
               FLIGHTREC_EINVAL_CONFIG);
    define_events();
    record_two_threads();
    char rec[1024];
    snprintf(rec, sizeof rec, "%s", scratch("program.rec"));
    int fd = open(rec, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK_EQ_I(flightrec_dump(fd), 0);
    close(fd);
    check_program_dump(rec);
    check_printed(rec);
}

TEST(dump_of_a_live_process_carries_the_kinds)
{
    char runtime[1024];
    snprintf(runtime, sizeof runtime, "%s", scratch("runtime"));
    mkdir(runtime, 0700);
    CHECK_EQ_I(setenv("XDG_RUNTIME_DIR", runtime, 1), 0);
    int ready[2], hold[2];
    CHECK_EQ_I(pipe(ready), 0);
    CHECK_EQ_I(pipe(hold), 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(ready[0]);
        close(hold[1]);
        define_events();
        record_two_threads();
        char c = 1;
        if (write(ready[1], &c, 1) != 1)
            _exit(3);
        /* Alive until the parent has dumped it. */
        while (read(hold[0], &c, 1) > 0)
            ;
        _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    char c;
    CHECK_EQ_I((int)read(ready[0], &c, 1), 1);
    char rec[1024], cmd[3000];
    snprintf(rec, sizeof rec, "%s", scratch("live.rec"));
    snprintf(cmd, sizeof cmd, "%s dump -o '%s' %d 2>&1", FLIGHTREC_BIN, rec,
             (int)child);
    int st;
    const char *out = run(cmd, &st);
    if (st != 0)
        TEST_FAIL("flightrec dump %d: %s", (int)child, out);
    close(hold[1]);
    int status;
    CHECK_EQ_I(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    check_program_dump(rec);
    check_printed(rec);
}

TEST_MAIN()
