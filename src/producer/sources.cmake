# libflightrec: the recording runtime (producer).  Depends on libc only.
flightrec_library(NAME flightrec SOURCES
  common/errors.c
  producer/config.c
  producer/port-linux.c
  producer/produce.c
  producer/registry.c
  producer/stream.c
  LIBS Threads::Threads
)
# POSIX and Linux interfaces (gettid, strnlen, pthread_atfork).
target_compile_definitions(flightrec_objects PRIVATE _GNU_SOURCE)
