# Decoder throughput (not a ctest test): bench-decode [MILLIONS [RUNS [FMT]]]
add_executable(bench-decode bench-decode.c)
target_link_libraries(bench-decode PRIVATE flightrec-client_static)
