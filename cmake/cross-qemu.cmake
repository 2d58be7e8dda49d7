# Cross builds run under qemu-user, one file for every target CI checks:
#   armhf  32-bit little-endian ARM (32-bit data words, the LE_32 format),
#          the architecture family the firmware port aims at
#   s390x  64-bit big-endian (BE_64)
#   aarch64  64-bit little-endian ARM, the cntvct_el0 counter (LE_64)
#   powerpc  32-bit big-endian (BE_32), no lock-free 64-bit atomics: the
#            region's shared words are 32-bit there (include/flightrec/
#            region.h, FLIGHTREC_REGION_WORD)
# Use: -DCMAKE_TOOLCHAIN_FILE=cmake/cross-qemu.cmake -DFLIGHTREC_CROSS=armhf
# (or the presets of the same names in CMakePresets.json).
if(NOT FLIGHTREC_CROSS)
  # try_compile() projects re-read this file: they get the value from the
  # environment set below.
  set(FLIGHTREC_CROSS "$ENV{FLIGHTREC_CROSS}")
endif()
if(FLIGHTREC_CROSS STREQUAL "armhf")
  set(CMAKE_SYSTEM_PROCESSOR arm)
  set(cross_triplet arm-linux-gnueabihf)
  set(cross_qemu qemu-arm)
elseif(FLIGHTREC_CROSS STREQUAL "s390x")
  set(CMAKE_SYSTEM_PROCESSOR s390x)
  set(cross_triplet s390x-linux-gnu)
  set(cross_qemu qemu-s390x)
elseif(FLIGHTREC_CROSS STREQUAL "aarch64")
  set(CMAKE_SYSTEM_PROCESSOR aarch64)
  set(cross_triplet aarch64-linux-gnu)
  set(cross_qemu qemu-aarch64)
elseif(FLIGHTREC_CROSS STREQUAL "powerpc")
  set(CMAKE_SYSTEM_PROCESSOR powerpc)
  set(cross_triplet powerpc-linux-gnu)
  set(cross_qemu qemu-ppc)
else()
  message(FATAL_ERROR "cmake/cross-qemu.cmake: set FLIGHTREC_CROSS to armhf, "
          "s390x, aarch64 or powerpc (got '${FLIGHTREC_CROSS}')")
endif()
set(ENV{FLIGHTREC_CROSS} "${FLIGHTREC_CROSS}")
set(FLIGHTREC_CROSS "${FLIGHTREC_CROSS}" CACHE STRING
    "Cross target: armhf, s390x, aarch64 or powerpc")

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${cross_triplet}-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/${cross_triplet})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
if(FLIGHTREC_CROSS STREQUAL "powerpc")
  # Programs with 64-bit atomics of their own (tests' counters) get them
  # from libatomic; the libraries need none (tests/producer: no-libatomic).
  set(CMAKE_C_STANDARD_LIBRARIES
      "-Wl,--push-state,--as-needed -latomic -Wl,--pop-state")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR ${cross_qemu} -L /usr/${cross_triplet})
