# libflightrec: the recording runtime (producer).  Depends on libc only.
# The ring reader and stream writer (region/) work on a region's bytes
# alone; the next consumers of them read regions from other processes.
# server/ is the record server the in-process server thread runs (libc
# only, no decoder code).
# ABI 1: flightrec__filter and flightrec__running are gone (the hot path
# reads the hot page); programs built against libflightrec.so.0 must be
# rebuilt.
flightrec_library(NAME flightrec ABI 1 SOURCES
  common/errors.c
  common/filter-spec.c
  producer/control.c
  producer/dump.c
  producer/event-names.c
  producer/fatal.c
  producer/objects.c
  producer/filter.c
  producer/port-linux.c
  producer/produce.c
  producer/produce-calls.c
  producer/produce-multi.c
  producer/region.c
  producer/registry.c
  producer/server-thread.c
  producer/settings.c
  producer/startup.c
  producer/timebase.c
  region/region-check.c
  region/ring-reader.c
  region/session.c
  region/stream-writer.c
  server/server.c
  LIBS Threads::Threads
)
# POSIX and Linux interfaces (gettid, strnlen, pthread_atfork).
target_compile_definitions(flightrec_objects PRIVATE _GNU_SOURCE)

# The same runtime with the counter behind the port seam, driven by tests
# (they define flightrec_port_counter()): exact, repeatable times.
if(FLIGHTREC_BUILD_TESTS)
  get_target_property(producer_sources flightrec_objects SOURCES)
  add_library(flightrec_test_clock STATIC ${producer_sources})
  target_include_directories(flightrec_test_clock PUBLIC
    ${PROJECT_SOURCE_DIR}/include PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(flightrec_test_clock
    PUBLIC FLIGHTREC_PORT_COUNTER PRIVATE _GNU_SOURCE)
  target_link_libraries(flightrec_test_clock PUBLIC Threads::Threads)
endif()
