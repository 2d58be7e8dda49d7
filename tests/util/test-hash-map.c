/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared hash map (src/util/hash-map.c) against a plain model: keys
 * that collide, wrap around the table, and include 0 and UINT64_MAX; dense
 * indexes in order of insertion; removal moving the last key; its memory.
 */
#include "util/hash-map.h"
#include "test.h"

#define KEYS 5000u

struct model {
    uint64_t keys[KEYS];
    uint32_t index[KEYS]; /* FR_HASH_NONE when absent */
};

/* Every key answers its model index; indexes are exactly 0 .. count-1. */
static void check_all(const struct fr_hash_map *m, const struct model *md)
{
    static unsigned char seen[KEYS];
    uint32_t present = 0;

    memset(seen, 0, sizeof seen);
    for (size_t k = 0; k < KEYS; k++) {
        uint32_t got = fr_hash_map_find(m, md->keys[k]);
        if (got != md->index[k])
            TEST_FAIL("key %#llx: index %u, want %u",
                      (unsigned long long)md->keys[k], got, md->index[k]);
        if (got == FR_HASH_NONE)
            continue;
        CHECK(got < fr_hash_map_count(m));
        CHECK(!seen[got]);
        seen[got] = 1;
        CHECK_EQ_U(fr_hash_map_key(m, got), md->keys[k]);
        present++;
    }
    CHECK_EQ_U(fr_hash_map_count(m), present);
}

TEST(model)
{
    static struct model md;
    struct fr_hash_map m;
    uint64_t state = 99;

    fr_hash_map_init(&m);
    CHECK_EQ_U(fr_hash_map_find(&m, 0), FR_HASH_NONE);
    CHECK_EQ_U(fr_hash_map_remove(&m, 0), FR_HASH_NONE);
    for (size_t k = 0; k < KEYS; k++) {
        md.keys[k] = k % 3 == 0   ? k / 3
                     : k % 3 == 1 ? UINT64_MAX - k
                                  : (uint64_t)k << 40;
        md.index[k] = FR_HASH_NONE;
    }
    for (unsigned round = 0; round < 100000; round++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        size_t k = (size_t)(state >> 33) % KEYS;
        if ((state >> 20) % 3 != 0) {
            int added = -1;
            uint32_t want = md.index[k] != FR_HASH_NONE
                                ? md.index[k]
                                : fr_hash_map_count(&m);
            CHECK_EQ_U(fr_hash_map_add(&m, md.keys[k], &added), want);
            CHECK_EQ_I(added, md.index[k] == FR_HASH_NONE);
            md.index[k] = want;
        } else {
            uint32_t last = fr_hash_map_count(&m) - 1;
            uint32_t got = fr_hash_map_remove(&m, md.keys[k]);
            CHECK_EQ_U(got, md.index[k]);
            if (got != FR_HASH_NONE) {
                /* The key that had the last index now has the freed one. */
                for (size_t j = 0; j < KEYS; j++)
                    if (md.index[j] == last)
                        md.index[j] = got;
                md.index[k] = FR_HASH_NONE;
            }
        }
        if (round % 10000 == 0)
            check_all(&m, &md);
    }
    check_all(&m, &md);
    for (size_t k = 0; k < KEYS; k++) {
        uint32_t last = fr_hash_map_count(&m) - 1;
        uint32_t got = fr_hash_map_remove(&m, md.keys[k]);
        CHECK_EQ_U(got, md.index[k]);
        if (got != FR_HASH_NONE)
            for (size_t j = 0; j < KEYS; j++)
                if (md.index[j] == last)
                    md.index[j] = got;
        md.index[k] = FR_HASH_NONE;
    }
    check_all(&m, &md);
    CHECK_EQ_U(fr_hash_map_count(&m), 0);
    fr_hash_map_free(&m);
}

/* A million keys in insertion order: exact indexes, and the memory the
 * header promises (8-byte keys, 4-byte slots, at most 3/4 full, both
 * doubling): at most 24 bytes a key at a power of two keys. */
TEST(dense_and_small)
{
    struct fr_hash_map m;
    const uint32_t n = 1u << 20;

    fr_hash_map_init(&m);
    for (uint32_t i = 0; i < n; i++)
        CHECK_EQ_U(fr_hash_map_add(&m, (uint64_t)i * 7919, NULL), i);
    for (uint32_t i = 0; i < n; i++)
        CHECK_EQ_U(fr_hash_map_find(&m, (uint64_t)i * 7919), i);
    CHECK_EQ_U(fr_hash_map_find(&m, 1), FR_HASH_NONE);
    /* keys: exactly 2^20 of 8 bytes; slots: 2^21 of 4 bytes. */
    CHECK_EQ_U(fr_hash_map_bytes(&m), (size_t)n * 8 + (size_t)2 * n * 4);
    fr_hash_map_free(&m);
    CHECK_EQ_U(fr_hash_map_bytes(&m), 0);
}

TEST_MAIN()
