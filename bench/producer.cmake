add_executable(bench-produce bench-produce.c)
target_link_libraries(bench-produce PRIVATE flightrec_static)
target_compile_definitions(bench-produce PRIVATE _GNU_SOURCE)
# Loops that differ by one instruction can differ by 40% in time depending
# on where their branches fall in the fetch blocks; aligning every loop
# and jump target alike measures the code rather than its placement.
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  target_compile_options(bench-produce PRIVATE -falign-loops=64
                         -falign-jumps=64)
endif()
# Registry and drain costs, against the public API only.
foreach(bench bench-attach bench-drain-idle bench-sustained)
  add_executable(${bench} ${bench}.c)
  target_link_libraries(${bench} PRIVATE flightrec_static)
  target_compile_definitions(${bench} PRIVATE _GNU_SOURCE)
endforeach()
# bench-sustained's lttng runs: the same program recording an LTTng-UST
# tracepoint, where liblttng-ust-dev is installed.
find_path(LTTNG_UST_INCLUDE_DIR lttng/tracepoint.h)
find_library(LTTNG_UST_LIBRARY lttng-ust)
if(LTTNG_UST_INCLUDE_DIR AND LTTNG_UST_LIBRARY)
  add_executable(bench-sustained-lttng bench-sustained.c)
  target_include_directories(bench-sustained-lttng PRIVATE
                             ${CMAKE_CURRENT_SOURCE_DIR} ${LTTNG_UST_INCLUDE_DIR})
  target_link_libraries(bench-sustained-lttng PRIVATE flightrec_static
                        ${LTTNG_UST_LIBRARY} ${CMAKE_DL_LIBS})
  target_compile_definitions(bench-sustained-lttng PRIVATE _GNU_SOURCE
                             BENCH_SUSTAINED_LTTNG)
endif()
# Function tracing: the hooks against the same events recorded by hand.
if(TARGET flightrec-functions)
  add_executable(bench-functions bench-functions.c bench-functions-leaf.c)
  set_source_files_properties(bench-functions-leaf.c PROPERTIES
                              COMPILE_OPTIONS -finstrument-functions)
  target_link_libraries(bench-functions PRIVATE flightrec-functions flightrec)
endif()
