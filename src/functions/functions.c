/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libflightrec-functions: the hooks GCC and Clang call on every function
 * entry and exit of code built with -finstrument-functions, recorded as
 * FUNCTION_ENTRY / FUNCTION_EXIT with the function's address, and the
 * loaded objects (at load and after each dlopen) that let a reader name
 * those addresses (docs/recording.md, "Functions").
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>

#include <flightrec.h>
#include <flightrec/objects.h>

#define HOOK __attribute__((no_instrument_function, visibility("default")))

/* Set while this thread is inside a hook: should the runtime itself have
 * been built with -finstrument-functions, its functions' hooks return at
 * once instead of recursing (they are not the program's calls). */
static _Thread_local int in_hook __attribute__((tls_model("initial-exec")));

HOOK void __cyg_profile_func_enter(void *function, void *call_site);
HOOK void __cyg_profile_func_exit(void *function, void *call_site);

/* A thread's first event attaches its ring, which makes system calls; an
 * instrumented function may have set errno for its caller, so it is kept
 * there (the other slow paths make none). */
__attribute__((noinline, cold, no_instrument_function)) static void
record_attaching(uint32_t event, void *function)
{
    int saved = errno;
    flightrec_produce(event, (uintptr_t)function);
    errno = saved;
}

__attribute__((always_inline, no_instrument_function)) static inline void
record(uint32_t event, void *function)
{
    if (in_hook)
        return;
    in_hook = 1;
    /* Head limit 0: no ring yet, or one of the slow path's rare stops. */
    if (FLIGHTREC_UNLIKELY(flightrec__self.main.head_limit == 0))
        record_attaching(event, function);
    else
        flightrec_produce(event, (uintptr_t)function);
    in_hook = 0;
}

HOOK void __cyg_profile_func_enter(void *function, void *call_site)
{
    (void)call_site;
    record(FLIGHTREC_EV_FUNCTION_ENTRY, function);
}

HOOK void __cyg_profile_func_exit(void *function, void *call_site)
{
    (void)call_site;
    record(FLIGHTREC_EV_FUNCTION_EXIT, function);
}

__attribute__((constructor, no_instrument_function)) static void
functions_init(void)
{
    in_hook = 1;
    (void)flightrec_objects_record();
    in_hook = 0;
}

/* dlopen() as the program calls it, then the objects it loaded.  The
 * loader takes the caller of the real dlopen (this library) for the
 * search path's RUNPATH; see docs/recording.md. */
HOOK void *dlopen(const char *file, int mode)
{
    static void *(*real_dlopen)(const char *, int);
    if (real_dlopen == NULL)
        real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT,
                                                         "dlopen");
    if (real_dlopen == NULL)
        return NULL;
    void *handle = real_dlopen(file, mode);
    if (handle != NULL) {
        int saved = errno;
        in_hook = 1;
        (void)flightrec_objects_record();
        in_hook = 0;
        errno = saved;
    }
    return handle;
}
