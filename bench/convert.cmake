# bench-convert: events/s of each converter format, sink alone and through
# the decoder, and babeltrace2 reading the CTF it wrote.
add_executable(bench-convert bench-convert.c)
target_link_libraries(bench-convert PRIVATE flightrec_convert)
if(TARGET flightrec-cli)
  target_compile_definitions(bench-convert PRIVATE
    FLIGHTREC_TOOL="$<TARGET_FILE:flightrec-cli>")
  add_dependencies(bench-convert flightrec-cli)
endif()
