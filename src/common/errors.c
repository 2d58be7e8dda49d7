/* SPDX-License-Identifier: BSD-2-Clause */
#include <flightrec/errors.h>

#include <string.h>

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
    if (code < 0 && code > -4000)
        return strerror(-code);
    return "unknown error";
}
