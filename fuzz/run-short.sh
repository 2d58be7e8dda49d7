#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Short fuzzing run for CI: fuzz/run-short.sh BUILD_DIR SECONDS
# BUILD_DIR must be configured with CC=clang -DFLIGHTREC_BUILD_FUZZ=ON.
set -eu
build=${1:?usage: run-short.sh BUILD_DIR SECONDS}
secs=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
cmake --build "$build" --target fuzz-client -j2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here"/corpus/* "$work"/
# New crashers land in the build dir as crash-*; copy them into
# fuzz/corpus to keep them as regression inputs.
"$build"/fuzz/fuzz-client -max_total_time="$secs" -max_len=4096 \
    -rss_limit_mb=2048 -artifact_prefix="$build"/ "$work"
# The region reader, seeded with a real session file.
cmake --build "$build" --target fuzz-region -j2
region_work=$(mktemp -d)
trap 'rm -rf "$work" "$region_work"' EXIT
cp "$here"/corpus-region/* "$region_work"/
"$build"/fuzz/fuzz-region -max_total_time="$((secs / 3 + 1))" -max_len=120000 \
    -rss_limit_mb=2048 -artifact_prefix="$build"/region- "$region_work"
# The loaded-object records and symbol lookups, seeded with a recording.
cmake --build "$build" --target fuzz-symbols -j2
symbols_work=$(mktemp -d)
trap 'rm -rf "$work" "$region_work" "$symbols_work"' EXIT
cp "$here"/corpus-symbols/* "$symbols_work"/
"$build"/fuzz/fuzz-symbols -max_total_time="$((secs / 3 + 1))" -max_len=8192 \
    -rss_limit_mb=2048 -artifact_prefix="$build"/symbols- "$symbols_work"
