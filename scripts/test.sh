#!/usr/bin/env bash
# Builds pipette (scripts/build.sh) and runs every test: unit tests and end-to-end tests on the
# real engine (the tiny stories260K model from ../shared, or $PIPETTE_DATA_DIR as filled by
# scripts/fetch-data.sh, when present; a synthetic model always: docs/data.md).
# Installs the test-only packages first (scripts/deps.sh --test: chromium, for the report test;
# sshd, qemu-user and the arm64 cross toolchain, for the device tests) and builds the driver for
# two devices (scripts/build-device.sh: x86_64 and aarch64, static). Then runs each fuzzing
# harness for 10 s (bench/fuzz.sh; PIPETTE_FUZZ_SECONDS sets how long).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" --test
# Warning-free, and kept so: a compiler warning fails the build here (PIPETTE_WERROR=OFF lifts it).
PIPETTE_BUILD_TARGETS= PIPETTE_WERROR=${PIPETTE_WERROR:-ON} bash "$root/scripts/build.sh"
# The device builds of the driver that the device tests measure through (cached outside the tree
# like llama.cpp: seconds after the first time).
bash "$root/scripts/build-device.sh" --target x86_64-linux >/dev/null
bash "$root/scripts/build-device.sh" --target aarch64-linux --cpu armv8-a >/dev/null
build=${PIPETTE_BUILD_DIR:-$root/build}
# Then one line per reason for the tests that skipped ("168 tests skipped: need stories260K, see
# docs/data.md"): scripts/skip_summary.py reads ctest's JUnit file, which keeps each test's output.
rc=0
rm -f "$build/ctest-junit.xml"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --output-junit "$build/ctest-junit.xml" \
  --test-output-size-passed 65536 "$@" || rc=$?
[ -f "$build/ctest-junit.xml" ] && python3 "$root/scripts/skip_summary.py" "$build/ctest-junit.xml"
[ "$rc" -eq 0 ] || exit "$rc"
# Every parser of outside input under libFuzzer with ASan and UBSan, briefly (bench/fuzz.sh runs
# them for as long as asked; its clang build is cached by ccache too).
bash "$root/bench/fuzz.sh" "${PIPETTE_FUZZ_SECONDS:-10}"
