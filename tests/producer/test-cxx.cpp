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

TEST_MAIN()
