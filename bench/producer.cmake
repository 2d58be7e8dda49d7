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
