# libflightrec-client: the stream decoder (no dependency on the producer).
flightrec_library(NAME flightrec-client ABI 0 SOURCES
  common/errors.c
  common/name-match.c
  common/muldiv.c
  client/event-table.c
  client/client.c
  client/client-header.c
  client/client-chunk.c
  client/client-time.c
  client/client-merge.c
  client/client-names.c
  client/client-read.c
  client/console-log.c
  util/hash-map.c
)
