# flightrec_test(NAME <target> SOURCES <files...> LIBS <libs...>
#                CASES <case...> [LABELS <labels...>] [TIMEOUT <s>])
# Builds one test program and registers one ctest test per case, so that
# each case runs in its own process with its own timeout.
function(flightrec_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;CASES;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS})
  target_compile_definitions(${T_NAME} PRIVATE _GNU_SOURCE)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  foreach(c ${T_CASES})
    add_test(NAME ${T_NAME}.${c} COMMAND ${T_NAME} ${c})
    set_tests_properties(${T_NAME}.${c} PROPERTIES TIMEOUT ${T_TIMEOUT}
                         LABELS "${T_LABELS}")
  endforeach()
endfunction()
