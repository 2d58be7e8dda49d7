/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The loaded objects of the recorded program (include/flightrec/objects.h):
 * at start and after each dlopen(), so that `flightrec print` and
 * `convert` can name code addresses.
 */
#include <dlfcn.h>

#include <flightrec/objects.h>

#include "preload.h"

static void record_objects(void)
{
    int saved = errno;
    int busy = preload_busy;
    preload_busy = 1;
    (void)flightrec_objects_record();
    preload_busy = busy;
    errno = saved;
}

/* Before or after preload_init: the records wait in the rings for the
 * drain either way. */
__attribute__((constructor)) static void objects_init(void)
{
    if (preload_groups != 0)
        record_objects();
}

#pragma GCC visibility push(default)
/* The loader takes this library for dlopen's caller (the RUNPATH it
 * searches); see docs/recording.md. */
void *dlopen(const char *file, int mode)
{
    static void *(*real_dlopen)(const char *, int);
    if (real_dlopen == NULL)
        real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT,
                                                         "dlopen");
    if (real_dlopen == NULL)
        return NULL;
    void *handle = real_dlopen(file, mode);
    if (handle != NULL && preload_groups != 0 && !preload_busy)
        record_objects();
    return handle;
}
#pragma GCC visibility pop
