/* SPDX-License-Identifier: BSD-2-Clause */
#define _XOPEN_SOURCE 700 /* realpath */
#include "util/out-buffer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

char *fr_resolve_link(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *real = realpath(path, NULL);
        if (real != NULL)
            return real;
    }
    return strdup(path);
}

char *fr_temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dir_len;
    size_t n = strlen(path) + 16;
    char *name = malloc(n);
    if (name != NULL)
        snprintf(name, n, "%.*s.%s.XXXXXX", (int)dir_len, path, base);
    return name;
}

/* Whether @a path names something that must be written in place: a device
 * (/dev/null), a FIFO or a socket is never replaced by a rename. */
static int write_in_place(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* A buffer of @a cap bytes, no file yet. */
static struct fr_out *out_new(size_t cap)
{
    struct fr_out *out = malloc(sizeof *out);
    if (out == NULL)
        return NULL;
    out->buf = malloc(cap);
    if (out->buf == NULL) {
        free(out);
        errno = ENOMEM;
        return NULL;
    }
    out->cap = cap;
    out->len = 0;
    out->failed = 0;
    out->err = 0;
    out->final_path = NULL;
    out->tmp_path = NULL;
    out->fd = -1;
    out->own_fd = 1;
    return out;
}

struct fr_out *fr_out_fd(int fd, size_t cap)
{
    if (cap < 2 * FR_OUT_RESERVE_MAX)
        cap = 2 * FR_OUT_RESERVE_MAX;
    struct fr_out *out = out_new(cap);
    if (out != NULL) {
        out->fd = fd;
        out->own_fd = 0;
    }
    return out;
}

struct fr_out *fr_out_open(const char *path)
{
    if (strcmp(path, "-") == 0)
        return fr_out_fd(STDOUT_FILENO, FR_OUT_CAP);
    struct fr_out *out = out_new(FR_OUT_CAP);
    if (out == NULL)
        return NULL;
    if (write_in_place(path)) {
        out->fd = open(path, O_WRONLY | O_CLOEXEC);
    } else {
        /* Through a link: the file it names is replaced, not the link. */
        out->final_path = fr_resolve_link(path);
        out->tmp_path = out->final_path ? fr_temp_name(out->final_path)
                                        : NULL;
        if (out->final_path == NULL || out->tmp_path == NULL) {
            errno = ENOMEM;
            out->fd = -1;
        } else {
            out->fd = mkstemp(out->tmp_path);
        }
    }
    if (out->fd < 0) {
        int e = errno;
        free(out->final_path);
        free(out->tmp_path);
        free(out->buf);
        free(out);
        errno = e;
        return NULL;
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

static void release(struct fr_out *out, int remove_tmp)
{
    if (remove_tmp && out->tmp_path != NULL)
        unlink(out->tmp_path);
    free(out->final_path);
    free(out->tmp_path);
    free(out->buf);
    free(out);
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
    if (rc == 0 && out->tmp_path != NULL &&
        rename(out->tmp_path, out->final_path) != 0) {
        rc = -1;
        e = errno;
    }
    release(out, rc != 0);
    if (rc != 0)
        errno = e;
    return rc;
}

void fr_out_discard(struct fr_out *out)
{
    if (out == NULL)
        return;
    if (out->own_fd)
        close(out->fd);
    release(out, 1);
}

void fr_out_write_long(struct fr_out *out, const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n > 0) {
        if (out->len == out->cap)
            fr_out_flush(out);
        size_t room = out->cap - out->len;
        size_t k = n < room ? n : room;
        memcpy(out->buf + out->len, c, k);
        out->len += k;
        c += k;
        n -= k;
    }
}

void fr_out_printf(struct fr_out *out, const char *fmt, ...)
{
    char *p = (char *)fr_out_reserve(out, FR_OUT_RESERVE_MAX);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p, FR_OUT_RESERVE_MAX, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    out->len += (size_t)n < FR_OUT_RESERVE_MAX ? (size_t)n
                                               : FR_OUT_RESERVE_MAX - 1;
}

void fr_errorf(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}
