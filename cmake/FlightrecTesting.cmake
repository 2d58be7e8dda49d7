# flightrec_test(NAME <target> SOURCES <files...> LIBS <libs...>
#                [LABELS <labels...>] [TIMEOUT <s>] [CASES <case...>])
# Builds one test program and registers one ctest test, <target>.<case>,
# per case, so that each case runs in its own process with its own timeout.
#
# The cases are the TEST(name) definitions in SOURCES (lines starting with
# "TEST(name)", see tests/support/test.h): there is no list to keep.  CASES
# is optional and, when given, must name exactly those cases.  Editing a
# source re-runs the scan at the next build.
function(flightrec_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;CASES;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS})
  target_compile_definitions(${T_NAME} PRIVATE _GNU_SOURCE)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set(found)
  foreach(src ${T_SOURCES})
    get_filename_component(path ${src} ABSOLUTE)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
    file(STRINGS ${path} lines REGEX "^TEST\\([A-Za-z0-9_]+\\)")
    foreach(line ${lines})
      string(REGEX REPLACE "^TEST\\(([A-Za-z0-9_]+)\\).*" "\\1" c "${line}")
      list(APPEND found ${c})
    endforeach()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "${T_NAME}: no TEST(name) line in ${T_SOURCES}")
  endif()
  if(T_CASES)
    set(a ${T_CASES})
    set(b ${found})
    list(SORT a)
    list(SORT b)
    if(NOT a STREQUAL b)
      message(FATAL_ERROR "${T_NAME}: CASES (${T_CASES}) differ from the "
              "TEST(name) lines of the sources (${found}); drop CASES")
    endif()
  endif()
  foreach(c ${found})
    add_test(NAME ${T_NAME}.${c} COMMAND ${T_NAME} ${c})
    set_tests_properties(${T_NAME}.${c} PROPERTIES TIMEOUT ${T_TIMEOUT}
                         LABELS "${T_LABELS}")
  endforeach()
  # The program registers exactly the cases found here (none is missed by
  # the scan, e.g. an indented TEST).
  add_test(NAME ${T_NAME}.case-list COMMAND ${T_NAME} --expect ${found})
  set_tests_properties(${T_NAME}.case-list PROPERTIES TIMEOUT 30
                       LABELS "${T_LABELS}")
endfunction()
