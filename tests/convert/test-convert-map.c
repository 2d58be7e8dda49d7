/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fr_map and fr_heap (src/convert/convert-map.c, over src/util/hash-map.c):
 * put, get and remove against a plain model, with keys chosen to collide
 * and to wrap around the table, so that removal's backward shift keeps
 * every other key findable; the heap table's byte count and its bound.
 */
#include "convert-map.h"
#include "test.h"

#define MODEL_KEYS 4096u

struct model {
    uint64_t keys[MODEL_KEYS];
    uintptr_t vals[MODEL_KEYS]; /* 0: absent */
};

static void check_all(const struct fr_map *m, const struct model *md)
{
    size_t present = 0;

    for (size_t i = 0; i < MODEL_KEYS; i++) {
        void *got = fr_map_get(m, md->keys[i]);
        if ((uintptr_t)got != md->vals[i])
            TEST_FAIL("key %#llx: got %p, want %#lx",
                      (unsigned long long)md->keys[i], got,
                      (unsigned long)md->vals[i]);
        present += md->vals[i] != 0;
    }
    CHECK_EQ_U(fr_map_count(m), present);
}

TEST(remove_keeps_others)
{
    static struct model md;
    struct fr_map m;
    uint64_t state = 12345;

    fr_map_init(&m);
    CHECK(fr_map_remove(&m, 7) == NULL); /* empty map */
    /* Heap-like keys (multiples of 16) and small ones, 0 included. */
    for (size_t i = 0; i < MODEL_KEYS; i++)
        md.keys[i] = i % 2 ? 0x7f0000001000ull + 16 * i : i / 2;
    for (unsigned round = 0; round < 200000; round++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        size_t i = (size_t)(state >> 33) % MODEL_KEYS;
        if ((state >> 20) % 3 != 0) {
            uintptr_t v = (uintptr_t)round + 1;
            CHECK(fr_map_put(&m, md.keys[i], (void *)v) == 0);
            md.vals[i] = v;
        } else {
            void *got = fr_map_remove(&m, md.keys[i]);
            CHECK_EQ_U((uintptr_t)got, md.vals[i]);
            md.vals[i] = 0;
        }
        if (round % 20000 == 0)
            check_all(&m, &md);
    }
    check_all(&m, &md);
    /* Remove everything: the map ends empty and still answers. */
    for (size_t i = 0; i < MODEL_KEYS; i++) {
        CHECK_EQ_U((uintptr_t)fr_map_remove(&m, md.keys[i]), md.vals[i]);
        md.vals[i] = 0;
    }
    check_all(&m, &md);
    CHECK_EQ_U(fr_map_count(&m), 0);
    fr_map_free(&m);
}

/* Bytes in use follow allocations and frees exactly; past its capacity
 * the table drops new pointers and says how many. */
TEST(heap_accounting)
{
    struct fr_heap h;
    const uint64_t base = 0x7f0000001000ull;

    CHECK_EQ_I(fr_heap_init(&h, 1000), 0);
    for (uint64_t i = 0; i < 1000; i++)
        fr_heap_alloc(&h, base + 16 * i, i + 1);
    CHECK_EQ_U(h.in_use, 1000 * 1001 / 2);
    CHECK_EQ_U(h.dropped, 0);
    fr_heap_alloc(&h, base + 16 * 1000, 5); /* full */
    CHECK_EQ_U(h.dropped, 1);
    CHECK_EQ_U(h.in_use, 1000 * 1001 / 2);
    CHECK_EQ_I(fr_heap_release(&h, base + 16 * 1000), 0);
    CHECK_EQ_U(h.unknown_frees, 1);
    /* Free the even ones; the odd ones keep their sizes. */
    for (uint64_t i = 0; i < 1000; i += 2)
        CHECK_EQ_I(fr_heap_release(&h, base + 16 * i), 1);
    CHECK_EQ_U(h.in_use, 500 * 500 + 500); /* sizes 2, 4, ..., 1000 */
    /* A pointer allocated again without a free: its new size counts. */
    fr_heap_alloc(&h, base + 16, 100);
    CHECK_EQ_U(h.in_use, 500 * 500 + 500 - 2 + 100);
    /* Room again for new pointers. */
    fr_heap_alloc(&h, base + 16 * 5000, 7);
    CHECK_EQ_U(h.dropped, 1);
    CHECK_EQ_U(h.in_use, 500 * 500 + 500 - 2 + 100 + 7);
    for (uint64_t i = 1; i < 1000; i += 2)
        CHECK_EQ_I(fr_heap_release(&h, base + 16 * i), 1);
    CHECK_EQ_I(fr_heap_release(&h, base + 16 * 5000), 1);
    CHECK_EQ_U(h.in_use, 0);
    fr_heap_free(&h);
}

TEST_MAIN()
