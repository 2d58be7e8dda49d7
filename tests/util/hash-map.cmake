# src/util/hash-map.c against a plain model (included from tests/).
flightrec_test(NAME test-hash-map
  SOURCES util/test-hash-map.c
  LIBS flightrec-client_static flightrec_test_support
  LABELS unit)
target_include_directories(test-hash-map PRIVATE
  ${PROJECT_SOURCE_DIR}/src)
