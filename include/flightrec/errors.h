/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Error codes: 0 is success, negative values are errors.
 *
 * System failures pass through as -errno; flightrec's own codes live in
 * -4000..-4099 where no errno value reaches.
 */
#ifndef FLIGHTREC_ERRORS_H
#define FLIGHTREC_ERRORS_H

#include "common.h"

/* X(name, value, message) */
#define FLIGHTREC_ERRNO_MAP(X) \
    X(EINVAL_CONFIG, -4000, "invalid configuration") \
    X(ENOTPOW2, -4001, "item count is not a power of two") \
    X(ETOOSMALL, -4002, "item count is below 16") \
    X(EMODE, -4003, "unknown mode") \
    X(EBUSY_CONFIG, -4004, "configuration cannot change while rings exist") \
    X(EBADMAGIC, -4010, "bad magic") \
    X(EFORMAT, -4011, "unknown format word") \
    X(EVERSION, -4012, "unsupported stream version") \
    X(ETRUNC, -4013, "stream ends inside an item") \
    X(ERING, -4014, "ring index out of range") \
    X(ECOUNT, -4015, "absurd count") \
    X(ESTREAM, -4016, "malformed stream") \
    X(ENOMEM, -4017, "out of memory") \
    X(EIO, -4018, "write failed") \
    X(ECALLBACK, -4019, "stopped by callback") \
    X(ESTATE, -4020, "call not allowed in this state")

enum flightrec_error {
#define FLIGHTREC__ERR_ENUM(name, value, msg) FLIGHTREC_##name = (value),
    FLIGHTREC_ERRNO_MAP(FLIGHTREC__ERR_ENUM)
#undef FLIGHTREC__ERR_ENUM
    FLIGHTREC_OK = 0
};

FLIGHTREC_BEGIN_DECLS

/** A message for any return code: flightrec's own or -errno. Never NULL. */
FLIGHTREC_API const char *flightrec_strerror(int code);

FLIGHTREC_END_DECLS

#endif
