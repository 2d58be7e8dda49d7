// SPDX-License-Identifier: BSD-2-Clause
// A C++ program records with the same API (out of line, since C++ has no
// C11 _Atomic) and its items land like a C program's.
#include <flightrec.h>

#include <cstdio>
#include <cstdlib>

extern "C" {
#include "stream-parse.h"
}
#include "test.h"

TEST(cxx_records)
{
    flightrec_produce(FLIGHTREC_USER(1), 7);
    flightrec_ctx ctx;
    flightrec_prepare(&ctx);
    flightrec_add(&ctx, FLIGHTREC_USER(2), 8);
    flightrec_add(&ctx, FLIGHTREC_USER(3), 9);
    flightrec_commit(&ctx);
    CHECK(flightrec_event_enabled(FLIGHTREC_USER(1)));

    FILE *file = std::tmpfile();
    CHECK(file != NULL);
    CHECK_EQ_I(flightrec_dump(fileno(file)), 0);
    size_t len;
    unsigned char *bytes = sp_read_fd(fileno(file), &len);
    std::fclose(file);
    sp_stream *s = static_cast<sp_stream *>(std::malloc(sizeof(sp_stream)));
    sp_parse(s, bytes, len);
    std::free(bytes);
    const sp_chunk *c = &s->chunks[0];
    CHECK_EQ_U(c->count, 5); // sync pair + 3 items
    CHECK_EQ_U(c->items[2].data, 7);
    CHECK_EQ_U(c->items[3].data, 8);
    CHECK_EQ_U(c->items[4].event, FLIGHTREC_USER(3));
    CHECK_EQ_U(c->items[3].time22, c->items[4].time22);
    sp_free(s);
    std::free(s);
}

// The scope object and FLIGHTREC_SPAN record the begin where they are made
// and the end when the scope is left, innermost first.
static int spanned(int depth)
{
    FLIGHTREC_SPAN(FLIGHTREC_USER(20), FLIGHTREC_USER(21));
    if (depth == 0)
        return 1; // the end is recorded on return, too
    flightrec::span inner(FLIGHTREC_USER(22), FLIGHTREC_USER(23), 5);
    flightrec_string(FLIGHTREC_USER(24), "c++");
    return spanned(depth - 1) + 1;
}

TEST(cxx_spans)
{
    CHECK_EQ_I(flightrec_span_define(FLIGHTREC_USER(20), FLIGHTREC_USER(21),
                                     "outer"), 0);
    CHECK_EQ_I(flightrec_event_define(FLIGHTREC_USER(24), "text",
                                      FLIGHTREC_EVENT_STRING), 0);
    CHECK_EQ_I(spanned(1), 2);
    FILE *file = std::tmpfile();
    CHECK(file != NULL);
    CHECK_EQ_I(flightrec_dump(fileno(file)), 0);
    size_t len;
    unsigned char *bytes = sp_read_fd(fileno(file), &len);
    std::fclose(file);
    sp_stream *s = static_cast<sp_stream *>(std::malloc(sizeof(sp_stream)));
    sp_parse(s, bytes, len);
    std::free(bytes);
    const sp_chunk *c = &s->chunks[0];
    // sync pair, outer, inner (data 5), "c++\0" (one 8-byte item), outer,
    // outer end, inner end, outer end.
    static const uint32_t order[] = {
        FLIGHTREC_USER(20), FLIGHTREC_USER(22), FLIGHTREC_USER(24),
        FLIGHTREC_USER(20), FLIGHTREC_USER(21), FLIGHTREC_USER(23),
        FLIGHTREC_USER(21)
    };
    CHECK_EQ_U(c->count, 2 + 7);
    for (size_t i = 0; i < 7; i++)
        CHECK_EQ_U(c->items[2 + i].event, order[i]);
    CHECK_EQ_U(c->items[3].data, 5);
    CHECK_EQ_U(c->items[4].data, 0x2b2b63u); // "c++", LSB first, NUL
    // The kinds travel after the names.
    CHECK_EQ_S(s->event_names[FLIGHTREC_USER(21)], "outer");
    CHECK_EQ_U(s->event_kinds[FLIGHTREC_USER(20)], FLIGHTREC_EVENT_SPAN_BEGIN);
    CHECK_EQ_U(s->event_kinds[FLIGHTREC_USER(21)],
               FLIGHTREC_EVENT_SPAN_END_OF(FLIGHTREC_USER(20)));
    CHECK_EQ_U(s->event_kinds[FLIGHTREC_USER(24)], FLIGHTREC_EVENT_STRING);
    CHECK_EQ_U(s->event_kinds[FLIGHTREC_USER(22)], 0);
    sp_free(s);
    std::free(s);
}

TEST_MAIN()
