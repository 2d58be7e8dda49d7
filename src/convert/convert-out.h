/* SPDX-License-Identifier: BSD-2-Clause */
/* Buffered output to a file descriptor, shared by the text and protobuf
 * writers: one write(2) per 256 KiB keeps syscalls out of the hot path. */
#ifndef FLIGHTREC_CONVERT_OUT_H
#define FLIGHTREC_CONVERT_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FR_OUT_CAP (256u * 1024u)

struct fr_out {
    int fd;
    int own_fd;          /* close at fr_out_close */
    char *final_path;    /* renamed to at fr_out_close; NULL: written in
                          * place (stdout, a device or a FIFO) */
    char *tmp_path;      /* the file being written until then */
    int failed;          /* a write failed: errno kept in err */
    int err;
    size_t len;
    unsigned char buf[FR_OUT_CAP];
};

/*
 * Opens @a path for writing ("-" = stdout).  A regular file is written
 * under a temporary name in the same directory (mode 0600) and takes its
 * place only at fr_out_close, so a failed conversion never leaves a partial
 * file nor destroys the previous one.  Returns NULL and sets errno.
 */
struct fr_out *fr_out_open(const char *path);
/* Flushes; returns 0 or -1 (errno-style code in out->err). */
int fr_out_flush(struct fr_out *out);
/* Flushes, closes and renames into place; returns 0 or -1 (the temporary
 * file is removed then); frees @a out. */
int fr_out_close(struct fr_out *out);
/* Closes and removes what was written (NULL is fine); frees @a out. */
void fr_out_discard(struct fr_out *out);

/*
 * A temporary name beside @a path: "DIR/.BASE.XXXXXX" (for mkstemp or
 * mkdtemp).  Returns a malloc'd string or NULL.
 */
char *fr_temp_name(const char *path);

/* @a path, or what it names when it is a symbolic link (so that replacing
 * it replaces the file or directory, not the link).  malloc'd or NULL. */
char *fr_resolve_link(const char *path);

/* Room for @a n more bytes (n <= FR_OUT_CAP); flushes when needed. */
static inline unsigned char *fr_out_reserve(struct fr_out *out, size_t n)
{
    if (out->len + n > FR_OUT_CAP)
        fr_out_flush(out);
    return out->buf + out->len;
}

static inline void fr_out_write(struct fr_out *out, const void *p, size_t n)
{
    if (n > FR_OUT_CAP / 2) {
        fr_out_flush(out);
        const unsigned char *c = p;
        while (n > 0) {
            size_t k = n < FR_OUT_CAP ? n : FR_OUT_CAP;
            memcpy(out->buf, c, k);
            out->len = k;
            fr_out_flush(out);
            c += k;
            n -= k;
        }
        return;
    }
    memcpy(fr_out_reserve(out, n), p, n);
    out->len += n;
}

static inline void fr_out_str(struct fr_out *out, const char *s)
{
    fr_out_write(out, s, strlen(s));
}

/* printf into the buffer (lines are short; at most 4 KiB each). */
void fr_out_printf(struct fr_out *out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* snprintf into an error buffer; truncation is fine there. */
void fr_errorf(char *dst, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Writes the whole of @a n bytes to @a fd (retries short writes). */
int fr_write_all(int fd, const void *buf, size_t n);

#endif
