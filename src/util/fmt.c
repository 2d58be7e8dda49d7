/* SPDX-License-Identifier: BSD-2-Clause */
#include "util/fmt.h"

const char fr_fmt_digits2[200] =
    "00010203040506070809"
    "10111213141516171819"
    "20212223242526272829"
    "30313233343536373839"
    "40414243444546474849"
    "50515253545556575859"
    "60616263646566676869"
    "70717273747576777879"
    "80818283848586878889"
    "90919293949596979899";

char *fr_fmt_seconds(char *p, uint64_t ns)
{
    p = fr_fmt_u64(p, ns / 1000000000u);
    *p++ = '.';
    return fr_fmt_ns9(p, (uint32_t)(ns % 1000000000u));
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static char *fmt_2(char *p, unsigned v)
{
    memcpy(p, fr_fmt_digits2 + 2 * (v % 100), 2);
    return p + 2;
}

char *fr_fmt_iso8601(char *p, uint64_t epoch_ns)
{
    uint64_t secs = epoch_ns / 1000000000u;
    uint32_t ns = (uint32_t)(epoch_ns % 1000000000u);
    int64_t y;
    unsigned mo, d;
    unsigned sod = (unsigned)(secs % 86400u);

    civil_from_days((int64_t)(secs / 86400u), &y, &mo, &d);
    p = fmt_2(p, (unsigned)(y / 100));
    p = fmt_2(p, (unsigned)(y % 100));
    *p++ = '-';
    p = fmt_2(p, mo);
    *p++ = '-';
    p = fmt_2(p, d);
    *p++ = 'T';
    p = fmt_2(p, sod / 3600);
    *p++ = ':';
    p = fmt_2(p, sod / 60 % 60);
    *p++ = ':';
    p = fmt_2(p, sod % 60);
    *p++ = '.';
    p = fr_fmt_ns9(p, ns);
    *p++ = 'Z';
    return p;
}
