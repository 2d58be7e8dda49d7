# libflightrec: the recording runtime (producer).
flightrec_library(NAME flightrec SOURCES
  common/errors.c
  LIBS Threads::Threads
)
