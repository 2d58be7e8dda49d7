/* SPDX-License-Identifier: BSD-2-Clause */
#define _POSIX_C_SOURCE 200809L
#include "convert-out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int fr_write_all(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

struct fr_out *fr_out_open(const char *path)
{
    struct fr_out *out = malloc(sizeof *out);
    if (out == NULL)
        return NULL;
    out->len = 0;
    out->failed = 0;
    out->err = 0;
    if (strcmp(path, "-") == 0) {
        out->fd = STDOUT_FILENO;
        out->own_fd = 0;
    } else {
        out->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (out->fd < 0) {
            int e = errno;
            free(out);
            errno = e;
            return NULL;
        }
        out->own_fd = 1;
    }
    return out;
}

int fr_out_flush(struct fr_out *out)
{
    if (out->len > 0 && !out->failed &&
        fr_write_all(out->fd, out->buf, out->len) != 0) {
        out->failed = 1;
        out->err = errno;
    }
    /* After a failure keep discarding so callers need not check each
     * write; the error surfaces at the next flush or close. */
    out->len = 0;
    return out->failed ? -1 : 0;
}

int fr_out_close(struct fr_out *out)
{
    if (out == NULL)
        return 0;
    int rc = fr_out_flush(out);
    int e = out->err;
    if (out->own_fd && close(out->fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    free(out);
    if (rc != 0)
        errno = e;
    return rc;
}

void fr_out_printf(struct fr_out *out, const char *fmt, ...)
{
    char *p = (char *)fr_out_reserve(out, 4096);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p, 4096, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    out->len += (size_t)n < 4096 ? (size_t)n : 4095;
}

void fr_errorf(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}
