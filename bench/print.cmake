# bench-print: flightrec print throughput against a decode-only baseline.
add_executable(bench-print ${CMAKE_CURRENT_LIST_DIR}/bench-print.c)
target_link_libraries(bench-print PRIVATE flightrec-client_static)
if(TARGET flightrec-cli)
  target_compile_definitions(bench-print PRIVATE
    FLIGHTREC_BIN="$<TARGET_FILE:flightrec-cli>")
  add_dependencies(bench-print flightrec-cli)
endif()
