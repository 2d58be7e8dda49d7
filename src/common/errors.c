/* SPDX-License-Identifier: BSD-2-Clause */
#include <flightrec/errors.h>

#include <errno.h>
#include <string.h>

/* Own codes are far below any errno value. */
#define OWN_CODES_FIRST (-4000)

const char *flightrec_strerror(int code)
{
    switch (code) {
    case 0:
        return "success";
#define FLIGHTREC__ERR_CASE(name, value, msg) \
    case value: \
        return msg;
        FLIGHTREC_ERRNO_MAP(FLIGHTREC__ERR_CASE)
#undef FLIGHTREC__ERR_CASE
    default:
        break;
    }
    if (code < 0 && code > OWN_CODES_FIRST)
        return strerror(-code);
    return "unknown error";
}

/* errno names without relying on glibc's strerrorname_np(): the values
 * flightrec and its system calls return.  Values shared by two names on
 * some systems (EAGAIN/EWOULDBLOCK) are listed once. */
#define ERRNO_NAMES(X) \
    X(EPERM) X(ENOENT) X(EINTR) X(EIO) X(ENXIO) X(E2BIG) X(EBADF) \
    X(EAGAIN) X(ENOMEM) X(EACCES) X(EFAULT) X(EBUSY) X(EEXIST) X(ENODEV) \
    X(ENOTDIR) X(EISDIR) X(EINVAL) X(ENFILE) X(EMFILE) X(EFBIG) X(ENOSPC) \
    X(ESPIPE) X(EROFS) X(EPIPE) X(ERANGE) X(ENOSYS) X(EOVERFLOW) \
    X(ECANCELED) X(EDQUOT) X(ECONNRESET) X(ETIMEDOUT) X(EMSGSIZE)

const char *flightrec_err_name(int code)
{
    switch (code) {
    case 0:
        return "FLIGHTREC_OK";
#define FLIGHTREC__NAME_CASE(name, value, msg) \
    case value: \
        return "FLIGHTREC_" #name;
        FLIGHTREC_ERRNO_MAP(FLIGHTREC__NAME_CASE)
#undef FLIGHTREC__NAME_CASE
#define ERRNO_NAME_CASE(name) \
    case -(name): \
        return #name;
        ERRNO_NAMES(ERRNO_NAME_CASE)
#undef ERRNO_NAME_CASE
    default:
        return "unknown";
    }
}
