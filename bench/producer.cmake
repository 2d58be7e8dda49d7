add_executable(bench-produce bench-produce.c)
target_link_libraries(bench-produce PRIVATE flightrec_static)
target_compile_definitions(bench-produce PRIVATE _GNU_SOURCE)
# Registry and drain costs, against the public API only.
foreach(bench bench-attach bench-drain-idle bench-sustained)
  add_executable(${bench} ${bench}.c)
  target_link_libraries(${bench} PRIVATE flightrec_static)
  target_compile_definitions(${bench} PRIVATE _GNU_SOURCE)
endforeach()
