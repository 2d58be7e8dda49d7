/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief The one output buffer of the tree (the flightrec command and the
 * converters): bytes gathered in a large buffer and written with write(2)
 * in big blocks, so no syscall and no stdio call happens per record.
 * Internal; not installed.
 *
 * A failed write is remembered (failed, err) and everything after it is
 * discarded, so writers need not check each record; they check
 * fr_out::failed where they can stop early, and the result of
 * fr_out_flush() or fr_out_close() at the end.
 */
#ifndef FLIGHTREC_UTIL_OUT_BUFFER_H
#define FLIGHTREC_UTIL_OUT_BUFFER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** The buffer size of fr_out_open(). */
#define FR_OUT_CAP (256u * 1024u)
/** Room that fr_out_reserve() may always ask for. */
#define FR_OUT_RESERVE_MAX 4096u

struct fr_out {
    int fd;
    int own_fd;          /**< close at fr_out_close */
    char *final_path;    /**< renamed to at fr_out_close; NULL: written in
                          *   place (an fd, stdout, a device or a FIFO) */
    char *tmp_path;      /**< the file being written until then */
    int failed;          /**< a write failed: its errno is in err */
    int err;
    size_t len;
    size_t cap;
    unsigned char *buf;
};

/**
 * Opens @a path for writing ("-" = stdout).  A regular file is written
 * under a temporary name in the same directory (mode 0600) and takes its
 * place only at fr_out_close, so a failed conversion never leaves a partial
 * file nor destroys the previous one.  Returns NULL and sets errno.
 */
struct fr_out *fr_out_open(const char *path);
/** A buffer of @a cap bytes (at least 2 * FR_OUT_RESERVE_MAX) writing to
 * @a fd, which stays open at fr_out_close.  NULL when out of memory. */
struct fr_out *fr_out_fd(int fd, size_t cap);
/** Writes what is buffered; returns 0 or -1 (errno-style code in
 * out->err). */
int fr_out_flush(struct fr_out *out);
/** Flushes, closes and renames into place; returns 0 or -1 (the temporary
 * file is removed then, errno set); frees @a out (NULL is fine). */
int fr_out_close(struct fr_out *out);
/** Closes and removes what was written to a temporary file, without
 * flushing; frees @a out (NULL is fine). */
void fr_out_discard(struct fr_out *out);

/**
 * A temporary name beside @a path: "DIR/.BASE.XXXXXX" (for mkstemp or
 * mkdtemp).  Returns a malloc'd string or NULL.
 */
char *fr_temp_name(const char *path);

/** @a path, or what it names when it is a symbolic link (so that replacing
 * it replaces the file or directory, not the link).  malloc'd or NULL. */
char *fr_resolve_link(const char *path);

/** Room for @a n more bytes (n <= FR_OUT_RESERVE_MAX, or any n up to the
 * capacity); flushes when needed.  Advance out->len past what was used. */
static inline unsigned char *fr_out_reserve(struct fr_out *out, size_t n)
{
    if (out->cap - out->len < n)
        fr_out_flush(out);
    return out->buf + out->len;
}

/** Appends @a n bytes (any size). */
void fr_out_write_long(struct fr_out *out, const void *p, size_t n);

static inline void fr_out_write(struct fr_out *out, const void *p, size_t n)
{
    if (n > out->cap / 2) {
        fr_out_write_long(out, p, n);
        return;
    }
    memcpy(fr_out_reserve(out, n), p, n);
    out->len += n;
}

static inline void fr_out_str(struct fr_out *out, const char *s)
{
    fr_out_write(out, s, strlen(s));
}

/** printf into the buffer (lines are short: at most
 * FR_OUT_RESERVE_MAX - 1 bytes each, longer ones are cut). */
void fr_out_printf(struct fr_out *out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** snprintf into an error buffer; truncation is fine there. */
void fr_errorf(char *dst, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Writes the whole of @a n bytes to @a fd (retries short writes and
 * EINTR).  0, or -1 with errno set. */
int fr_write_all(int fd, const void *buf, size_t n);

#endif
