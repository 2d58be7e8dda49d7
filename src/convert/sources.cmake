# flightrec_convert: viewer-format writers (CTF, Perfetto, ftrace, JSON) fed
# by the decoder.  Internal to the flightrec command; not installed.
add_library(flightrec_convert STATIC
  convert/convert.c
  convert/convert-run.c
  convert/convert-map.c
  convert/convert-events.c
  convert/convert-model.c
  convert/convert-model-sink.c
  convert/convert-ctf.c
  convert/convert-perfetto.c
  convert/convert-ftrace.c
  convert/convert-json.c
  convert/convert-symbols.c
)
target_include_directories(flightrec_convert PUBLIC
  ${CMAKE_CURRENT_SOURCE_DIR}/convert)
target_link_libraries(flightrec_convert PUBLIC flightrec-client_static
  flightrec_util)
# Symbol names of code addresses from the recorded objects' files: elfutils'
# libdwfl (Debian: libdw-dev).
# Cross builds (FLIGHTREC_CROSS) have no elfutils for their target here:
# they parse the object records but name no address, and say so.
if(FLIGHTREC_CROSS)
  target_compile_definitions(flightrec_convert PRIVATE FLIGHTREC_NO_ELFUTILS)
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
  target_link_libraries(flightrec_convert PUBLIC PkgConfig::LIBDW)
endif()
