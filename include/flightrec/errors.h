/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Error codes: 0 is success, negative values are errors.
 *
 * System failures are -errno (a failed write() returns -ENOSPC, ...), and so
 * are the conditions errno already names: FLIGHTREC_EINVAL_CONFIG is
 * -EINVAL, FLIGHTREC_EBUSY_CONFIG -EBUSY, FLIGHTREC_ENOMEM -ENOMEM.  Only
 * conditions of flightrec's own have codes of their own, in -4000..-4099,
 * where no errno value reaches.  flightrec_strerror() gives a message for
 * any code, flightrec_err_name() its name.
 */
#ifndef FLIGHTREC_ERRORS_H
#define FLIGHTREC_ERRORS_H

#include <errno.h>

#include "common.h"

/* Names for errno values flightrec returns itself: X(name, errno value). */
#define FLIGHTREC_SYSTEM_ERRORS(X) \
    X(EINVAL_CONFIG, EINVAL) \
    X(EBUSY_CONFIG, EBUSY) \
    X(ENOMEM, ENOMEM)

/* flightrec's own conditions: X(name, value, message). */
#define FLIGHTREC_ERRNO_MAP(X) \
    X(ENOTPOW2, -4001, "item count is not a power of two") \
    X(ETOOSMALL, -4002, "item count is below 16") \
    X(EMODE, -4003, "unknown mode") \
    X(ETOOLARGE, -4005, "item count is above FLIGHTREC_MAX_ITEMS") \
    X(EBADMAGIC, -4010, "bad magic") \
    X(EFORMAT, -4011, "unknown format word") \
    X(EVERSION, -4012, "unsupported stream version") \
    X(ETRUNC, -4013, "stream ends inside an item") \
    X(ERING, -4014, "ring index out of range") \
    X(ECOUNT, -4015, "absurd count") \
    X(ESTREAM, -4016, "malformed stream") \
    X(ECALLBACK, -4019, "stopped by callback") \
    X(ESTATE, -4020, "call not allowed in this state")

enum flightrec_error {
#define FLIGHTREC__ERR_SYSTEM(name, errno_value) \
    FLIGHTREC_##name = -(errno_value),
    FLIGHTREC_SYSTEM_ERRORS(FLIGHTREC__ERR_SYSTEM)
#undef FLIGHTREC__ERR_SYSTEM
#define FLIGHTREC__ERR_ENUM(name, value, msg) FLIGHTREC_##name = (value),
    FLIGHTREC_ERRNO_MAP(FLIGHTREC__ERR_ENUM)
#undef FLIGHTREC__ERR_ENUM
    FLIGHTREC_OK = 0
};

FLIGHTREC_BEGIN_DECLS

/** A message for any return code: flightrec's own or -errno. Never NULL. */
FLIGHTREC_API const char *flightrec_strerror(int code);

/**
 * The name of a return code, for logs and tests: "FLIGHTREC_OK" for 0,
 * "FLIGHTREC_EMODE" for flightrec's own codes, the errno name ("ENOMEM",
 * "ENOSPC") for -errno.  Never NULL: "unknown" for other values.
 */
FLIGHTREC_API const char *flightrec_err_name(int code);

FLIGHTREC_END_DECLS

#endif
