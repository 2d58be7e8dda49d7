/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Macros shared by the public headers: export, branch hints, C++.
 */
#ifndef FLIGHTREC_COMMON_H
#define FLIGHTREC_COMMON_H

#if defined(__GNUC__) || defined(__clang__)
#define FLIGHTREC_API __attribute__((visibility("default")))
#define FLIGHTREC_LIKELY(x) __builtin_expect(!!(x), 1)
#define FLIGHTREC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FLIGHTREC_COLD __attribute__((cold, noinline))
#define FLIGHTREC_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define FLIGHTREC_API
#define FLIGHTREC_LIKELY(x) (x)
#define FLIGHTREC_UNLIKELY(x) (x)
#define FLIGHTREC_COLD
#define FLIGHTREC_ALWAYS_INLINE inline
#endif

/** The library's version; FLIGHTREC_VERSION_NUMBER is major << 16 |
 * minor << 8 | patch (a region records the one that wrote it). */
#define FLIGHTREC_VERSION_MAJOR 0
#define FLIGHTREC_VERSION_MINOR 2
#define FLIGHTREC_VERSION_PATCH 0
#define FLIGHTREC_VERSION_NUMBER \
    ((FLIGHTREC_VERSION_MAJOR << 16) | (FLIGHTREC_VERSION_MINOR << 8) | \
     FLIGHTREC_VERSION_PATCH)

#ifdef __cplusplus
#define FLIGHTREC_BEGIN_DECLS extern "C" {
#define FLIGHTREC_END_DECLS }
#else
#define FLIGHTREC_BEGIN_DECLS
#define FLIGHTREC_END_DECLS
#endif

#endif
