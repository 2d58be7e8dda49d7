# Regenerates the event tables into OUT and compares them with the tree.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT}/include/flightrec ${OUT}/src/client)
execute_process(COMMAND ${PYTHON} ${SRC}/scripts/gen-event-table.py
                        ${SRC}/data/rtems-record ${OUT}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen-event-table.py failed: ${rc}")
endif()
foreach(f include/flightrec/events.h src/client/event-table.h
          src/client/event-table.c)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files
                          ${SRC}/${f} ${OUT}/${f} RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    message(FATAL_ERROR "${f} is not what scripts/gen-event-table.py makes "
                        "of data/rtems-record: regenerate it")
  endif()
endforeach()
