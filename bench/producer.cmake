add_executable(bench-produce bench-produce.c)
target_link_libraries(bench-produce PRIVATE flightrec_static)
target_compile_definitions(bench-produce PRIVATE _GNU_SOURCE)
