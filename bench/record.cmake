# Workloads for record-overhead.sh (flightrec record against plain runs and
# other tracers); a plain program: the preload library does the recording.
add_executable(bench-record-workload bench-record-workload.c)
target_link_libraries(bench-record-workload PRIVATE Threads::Threads)
target_compile_definitions(bench-record-workload PRIVATE _GNU_SOURCE)
if(FLIGHTREC_SANITIZE)
  target_compile_options(bench-record-workload PRIVATE -fno-sanitize=all)
  target_link_options(bench-record-workload PRIVATE -fno-sanitize=all)
endif()
# bench-report-gen: recordings of N events for report-scale.sh.
add_executable(bench-report-gen bench-report-gen.c)
target_link_libraries(bench-report-gen PRIVATE flightrec_static)
