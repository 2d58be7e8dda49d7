# The record server: producer cost with clients, serve against stream.
add_executable(bench-serve bench-serve.c)
target_link_libraries(bench-serve PRIVATE flightrec_static
                      flightrec-client_static Threads::Threads)
target_compile_definitions(bench-serve PRIVATE _GNU_SOURCE)
