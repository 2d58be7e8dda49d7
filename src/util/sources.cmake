# flightrec_util: small internal helpers shared by the decoder's users (the
# converters and the flightrec command): the number formatter and the
# output buffer.  Not installed; position-independent so that a shared
# library may link it too.
add_library(flightrec_util STATIC
  util/fmt.c
  util/out-buffer.c
)
set_target_properties(flightrec_util PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(flightrec_util PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
