/* SPDX-License-Identifier: BSD-2-Clause */
/* Console logs: stream blocks in base64 between marker lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flightrec/client.h>

#include "decode-util.h"
#include "stream-vector.h"
#include "test.h"

#define BEGIN FLIGHTREC_CONSOLE_BEGIN "\n"
#define END FLIGHTREC_CONSOLE_END "\n"

struct bytes {
    unsigned char *p;
    size_t n, cap;
    int stop_at;    /* out returns 7 once this many bytes came (0: never) */
};

static int collect(void *arg, const void *data, size_t n)
{
    struct bytes *b = arg;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        CHECK(b->p != NULL);
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    return b->stop_at != 0 && b->n >= (size_t)b->stop_at ? 7 : 0;
}

/* Decodes @log in pieces of @piece bytes (0: whole); returns the finish
 * code, or the feed error. */
static int decode(const char *log, size_t len, size_t piece,
                  struct bytes *out, struct flightrec_console *c)
{
    memset(out, 0, sizeof(*out));
    flightrec_console_init(c, collect, out);
    size_t step = piece == 0 ? len : piece;
    for (size_t at = 0; at < len; at += step) {
        size_t n = len - at < step ? len - at : step;
        int rc = flightrec_console_feed(c, log + at, n);
        if (rc != 0)
            return rc;
    }
    return flightrec_console_finish(c);
}

/* RFC 4648 test vectors, padded and not, with CRLF line ends. */
TEST(rfc4648_vectors)
{
    static const struct {
        const char *encoded, *plain;
    } v[] = {
        { "Zg==", "f" }, { "Zm8=", "fo" }, { "Zm9v", "foo" },
        { "Zm9vYg==", "foob" }, { "Zm9vYmE=", "fooba" },
        { "Zm9vYmFy", "foobar" }, { "Zm9vYg", "foob" }, { "Zm9vYmE", "fooba" },
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        char log[256];
        snprintf(log, sizeof(log),
                 "boot\r\n" FLIGHTREC_CONSOLE_BEGIN "\r\n%s\r\n"
                 FLIGHTREC_CONSOLE_END "\r\n", v[i].encoded);
        struct bytes out;
        struct flightrec_console c;
        CHECK_EQ_I(decode(log, strlen(log), 0, &out, &c), 0);
        CHECK_EQ_U(out.n, strlen(v[i].plain));
        CHECK_EQ_MEM(out.p, v[i].plain, out.n);
        free(out.p);
    }
}

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Appends @n bytes as base64 lines of @line characters. */
static size_t put_base64(char *to, const unsigned char *p, size_t n,
                         size_t line)
{
    size_t k = 0, col = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t bits = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            bits |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            bits |= p[i + 2];
        for (size_t d = 0; d < 4; d++)
            to[k++] = d <= n - i ? alphabet[(bits >> (18 - 6 * d)) & 63]
                                 : '=';
        col += 4;
        if (col >= line) {
            to[k++] = '\n';
            col = 0;
        }
    }
    if (col != 0)
        to[k++] = '\n';
    return k;
}

/* A stream cut into three blocks among other output, with long lines:
 * decoded at every piece size, the blocks join into the same bytes, and
 * the client decodes them as the stream itself. */
TEST(blocks_join)
{
    struct fr_vec v;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_32);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 64, 1, 0);
    fr_vec_flightrec_chunk(&v, 0, 7, "cpu0", 0, 0, 0, 0);
    fr_vec_uptime(&v, 0, 1000);
    for (uint32_t i = 1; i <= 40; i++)
        fr_vec_item(&v, i * 10, FLIGHTREC_USER(0), i);
    size_t cut1 = 37, cut2 = v.len - 8;
    char *log = malloc(v.len * 2 + 1024);
    size_t n = 0;
    n += (size_t)sprintf(log + n, "flightrec-demo: start\n" BEGIN);
    n += put_base64(log + n, v.buf, cut1, 76);
    n += (size_t)sprintf(log + n, END "a line between blocks\n" BEGIN);
    n += put_base64(log + n, v.buf + cut1, cut2 - cut1, 400);
    n += (size_t)sprintf(log + n, END BEGIN);
    n += put_base64(log + n, v.buf + cut2, v.len - cut2, 4);
    n += (size_t)sprintf(log + n, END "done");
    CHECK(flightrec_console_detect(log, n));
    for (size_t piece = 0; piece < 100; piece += piece < 10 ? 1 : 13) {
        struct bytes out;
        struct flightrec_console c;
        CHECK_EQ_I(decode(log, n, piece, &out, &c), 0);
        CHECK_EQ_U(out.n, v.len);
        CHECK_EQ_MEM(out.p, v.buf, v.len);
        CHECK_EQ_U(c.blocks, 3);
        free(out.p);
    }
    struct tresult a, b;
    tdecode(&a, v.buf, v.len, NULL);
    struct bytes out;
    struct flightrec_console c;
    CHECK_EQ_I(decode(log, n, 0, &out, &c), 0);
    tdecode(&b, out.p, out.n, NULL);
    CHECK_EQ_U(b.n, 40);
    tcompare(&a, &b);
    tresult_free(&a);
    tresult_free(&b);
    free(out.p);
    free(log);
    fr_vec_free(&v);
}

TEST(detect)
{
    static const char yes[] = "noise\n" FLIGHTREC_CONSOLE_BEGIN "\nZg==\n";
    static const char first[] = FLIGHTREC_CONSOLE_BEGIN "\n";
    static const char mid_line[] = "x " FLIGHTREC_CONSOLE_BEGIN "\n";
    static const char cut[] = "-----BEGIN FLIGHTREC STRE";
    CHECK_EQ_I(flightrec_console_detect(yes, strlen(yes)), 1);
    CHECK_EQ_I(flightrec_console_detect(first, strlen(first)), 1);
    CHECK_EQ_I(flightrec_console_detect(mid_line, strlen(mid_line)), 0);
    CHECK_EQ_I(flightrec_console_detect(cut, strlen(cut)), 0);
    struct fr_vec v;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 64, 1, 0);
    CHECK_EQ_I(flightrec_console_detect(v.buf, v.len), 0);
    fr_vec_free(&v);
}

/* Text whose block may come after 64 KiB is a log; streams, even short
 * broken ones, are not. */
TEST(probe)
{
    static const char text[] = "server started\nrequest 1\n";
    static const char marker[] = FLIGHTREC_CONSOLE_BEGIN "\n";
    static const unsigned char no_line_end[] = { 0x55, 0x55, 0x55, 0x55,
                                                 0xc1, 0x4e, 0xe1, 0x82 };
    CHECK_EQ_I(flightrec_console_probe(text, strlen(text)), 1);
    CHECK_EQ_I(flightrec_console_probe(marker, strlen(marker)), 1);
    CHECK_EQ_I(flightrec_console_probe(no_line_end, sizeof(no_line_end)), 0);
    CHECK_EQ_I(flightrec_console_probe(text, 0), 0);
    struct fr_vec v;
    fr_vec_init(&v, FLIGHTREC_FORMAT_LE_64);
    fr_vec_flightrec_header(&v, 1000000000u, 1, 64, 1, 0);
    CHECK_EQ_I(flightrec_console_probe(v.buf, v.len), 0);
    fr_vec_free(&v);
    /* A NUL byte within the first 4 KiB: binary, whatever follows. */
    static char mostly_text[8192];
    memset(mostly_text, 'a', sizeof(mostly_text));
    mostly_text[100] = '\n';
    mostly_text[4095] = '\0';
    CHECK_EQ_I(flightrec_console_probe(mostly_text, sizeof(mostly_text)), 0);
    mostly_text[4095] = 'a';
    mostly_text[4096] = '\0';
    CHECK_EQ_I(flightrec_console_probe(mostly_text, sizeof(mostly_text)), 1);
}

/* Not base64 in a block: the line is named, the bytes before it kept, and
 * the error stays. */
TEST(bad_character)
{
    static const char log[] = "boot\n" BEGIN "Zm9vYmFy\nZm9v*mFy\n" END;
    struct bytes out;
    struct flightrec_console c;
    CHECK_EQ_I(decode(log, strlen(log), 0, &out, &c), FLIGHTREC_ESTREAM);
    CHECK_EQ_S(flightrec_console_message(&c),
               "line 4: not base64 in a stream block: '*'");
    CHECK_EQ_U(out.n, 9);
    CHECK_EQ_MEM(out.p, "foobarfoo", 9);
    CHECK_EQ_I(flightrec_console_feed(&c, "Zg==\n", 5), FLIGHTREC_ESTREAM);
    CHECK_EQ_I(flightrec_console_finish(&c), FLIGHTREC_ESTREAM);
    free(out.p);

    static const char control[] = BEGIN "Zm9v\x1b\n" END;
    CHECK_EQ_I(decode(control, strlen(control), 0, &out, &c),
               FLIGHTREC_ESTREAM);
    CHECK_EQ_S(flightrec_console_message(&c),
               "line 2: not base64 in a stream block: 0x1b");
    free(out.p);

    static const char after_pad[] = BEGIN "Zg==Zm9v\n" END;
    CHECK_EQ_I(decode(after_pad, strlen(after_pad), 0, &out, &c),
               FLIGHTREC_ESTREAM);
    CHECK_EQ_S(flightrec_console_message(&c),
               "line 2: base64 after the padding: 'Z'");
    CHECK_EQ_U(out.n, 1);
    free(out.p);

    static const char lone[] = BEGIN "Zm9vY\n" END;
    CHECK_EQ_I(decode(lone, strlen(lone), 0, &out, &c), FLIGHTREC_ESTREAM);
    CHECK_EQ_S(flightrec_console_message(&c),
               "line 3: the block's base64 ends with a lone digit");
    free(out.p);
}

/* A log that ends inside a block (the firmware died while dumping): what
 * came is delivered, and the end is an error naming the block. */
TEST(cut_off)
{
    static const char log[] = "boot\n" BEGIN "Zm9vYmFy\nZm9v";
    struct bytes out;
    struct flightrec_console c;
    CHECK_EQ_I(decode(log, strlen(log), 0, &out, &c), FLIGHTREC_ETRUNC);
    CHECK_EQ_S(flightrec_console_message(&c),
               "line 4: the log ends inside the stream block begun at "
               "line 2");
    CHECK_EQ_U(out.n, 9);
    CHECK_EQ_MEM(out.p, "foobarfoo", 9);
    free(out.p);

    static const char none[] = "just text\n";
    CHECK_EQ_I(decode(none, strlen(none), 0, &out, &c), FLIGHTREC_ETRUNC);
    CHECK_EQ_S(flightrec_console_message(&c),
               "no stream block (a line \"" FLIGHTREC_CONSOLE_BEGIN
               "\") in the log");
    CHECK_EQ_U(out.n, 0);
    free(out.p);
}

/* The receiver's non-zero answer stops the decoder with that value. */
TEST(receiver_stops)
{
    static const char log[] = BEGIN "Zm9vYmFyZm9v\n" END;
    struct bytes out;
    struct flightrec_console c;
    memset(&out, 0, sizeof(out));
    out.stop_at = 6;
    flightrec_console_init(&c, collect, &out);
    CHECK_EQ_I(flightrec_console_feed(&c, log, strlen(log)), 7);
    CHECK_EQ_U(out.n, 6);
    CHECK_EQ_S(flightrec_console_message(&c), "");
    free(out.p);
}

TEST_MAIN()
