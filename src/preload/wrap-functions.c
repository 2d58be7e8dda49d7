/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Functions under `flightrec record`: a program built with
 * -finstrument-functions calls __cyg_profile_func_enter/exit, which glibc
 * defines as empty stubs; these interpose them, so such a program is
 * traced without linking anything (docs/recording.md, "Functions").  The
 * loaded objects that name the addresses on the host
 * (include/flightrec/objects.h) are recorded at the first hook and after
 * each later dlopen(): a program that calls no hook records none, and its
 * recording is what it was without them.
 */
#include <dlfcn.h>
#include <stdatomic.h>

#include <flightrec/objects.h>

#include "preload.h"

/* Set once a hook ran: objects are recorded from then on. */
static atomic_int functions_seen;

__attribute__((no_instrument_function)) static void record_objects(void)
{
    int saved = errno;
    int busy = preload_busy;
    preload_busy = 1;
    (void)flightrec_objects_record();
    preload_busy = busy;
    errno = saved;
}

__attribute__((noinline, cold, no_instrument_function)) static void
first_hook(void)
{
    if (atomic_exchange_explicit(&functions_seen, 1, memory_order_relaxed) ==
        0)
        record_objects();
}

__attribute__((no_instrument_function)) static inline void
hook(uint32_t event, void *function)
{
    if (preload_groups == 0 || preload_busy)
        return;
    if (FLIGHTREC_UNLIKELY(
            !atomic_load_explicit(&functions_seen, memory_order_relaxed)))
        first_hook();
    rec1(event, (uintptr_t)function);
}

#pragma GCC visibility push(default)
__attribute__((no_instrument_function)) void
__cyg_profile_func_enter(void *function, void *call_site);
__attribute__((no_instrument_function)) void
__cyg_profile_func_exit(void *function, void *call_site);

void __cyg_profile_func_enter(void *function, void *call_site)
{
    (void)call_site;
    hook(FLIGHTREC_EV_FUNCTION_ENTRY, function);
}

void __cyg_profile_func_exit(void *function, void *call_site)
{
    (void)call_site;
    hook(FLIGHTREC_EV_FUNCTION_EXIT, function);
}

/* The loader takes this library for dlopen's caller (the RUNPATH it
 * searches); see docs/recording.md. */
__attribute__((no_instrument_function)) void *dlopen(const char *file,
                                                     int mode)
{
    static void *(*real_dlopen)(const char *, int);
    if (real_dlopen == NULL)
        real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT,
                                                         "dlopen");
    if (real_dlopen == NULL)
        return NULL;
    void *handle = real_dlopen(file, mode);
    if (handle != NULL && preload_groups != 0 && !preload_busy &&
        atomic_load_explicit(&functions_seen, memory_order_relaxed))
        record_objects();
    return handle;
}
#pragma GCC visibility pop
