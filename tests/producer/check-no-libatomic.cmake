# SPDX-License-Identifier: BSD-2-Clause
# Fails when LIBRARY calls libatomic's functions (__atomic_*): an atomic
# made of libatomic's locks excludes threads of one process only, and in a
# signal handler it can wait on its own thread.  The region's shared words
# and everything a handler touches must be lock-free atomics, inline.
#   cmake -DNM=... -DLIBRARY=... -P check-no-libatomic.cmake
execute_process(COMMAND ${NM} -u ${LIBRARY}
  OUTPUT_VARIABLE undefined ERROR_VARIABLE nm_error RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -u ${LIBRARY} failed (${rc}): ${nm_error}")
endif()
string(REGEX MATCHALL "__atomic_[a-z_0-9]+" calls "${undefined}")
if(calls)
  list(REMOVE_DUPLICATES calls)
  message(FATAL_ERROR "${LIBRARY} calls libatomic: ${calls}")
endif()
message(STATUS "${LIBRARY}: no call to libatomic")
