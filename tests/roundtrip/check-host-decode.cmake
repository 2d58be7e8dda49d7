# cmake -DDECODER=HOST_PROGRAM -DSTREAM=FILE -P check-host-decode.cmake
# The host's decode of a stream a cross build wrote must be the text the
# target's own decode wrote beside it (STREAM.txt), byte for byte.
if(NOT EXISTS "${DECODER}")
  message(FATAL_ERROR "host decoder ${DECODER} is missing: build the host "
          "(cmake --build --preset gcc) first or set FLIGHTREC_HOST_DECODER")
endif()
foreach(f "${STREAM}" "${STREAM}.txt")
  if(NOT EXISTS "${f}")
    message(FATAL_ERROR "${f} is missing: cross-stream.produce did not run")
  endif()
endforeach()
execute_process(COMMAND "${DECODER}" decode "${STREAM}"
  OUTPUT_FILE "${STREAM}.host.txt" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${DECODER} decode ${STREAM}: exit status ${rc}")
endif()
file(READ "${STREAM}.txt" target_text)
file(READ "${STREAM}.host.txt" host_text)
if(target_text STREQUAL "")
  message(FATAL_ERROR "${STREAM}.txt is empty")
endif()
if(NOT target_text STREQUAL host_text)
  execute_process(COMMAND diff -u "${STREAM}.txt" "${STREAM}.host.txt")
  message(FATAL_ERROR "the host decodes ${STREAM} differently from the "
          "target (${STREAM}.txt, ${STREAM}.host.txt)")
endif()
string(REGEX MATCHALL "\n" lines "${host_text}")
list(LENGTH lines line_count)
message(STATUS "host and target decodes agree: ${line_count} lines")
