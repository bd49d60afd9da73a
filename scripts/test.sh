#!/usr/bin/env bash
# Builds pipette (scripts/build.sh) and runs every test: unit tests and end-to-end tests on the
# real engine (the tiny stories260K model from ../shared when present, a synthetic model always).
# Installs the test-only packages first (scripts/deps.sh --test: chromium, for the report test;
# sshd, qemu-user and the arm64 cross toolchain, for the device tests) and builds the driver for
# two devices (scripts/build-device.sh: x86_64 and aarch64, static). Then runs each fuzzing
# harness for 10 s (bench/fuzz.sh; PIPETTE_FUZZ_SECONDS sets how long).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" --test
bash "$root/scripts/build.sh"
# The device builds of the driver that the device tests measure through (cached outside the tree
# like llama.cpp: seconds after the first time).
bash "$root/scripts/build-device.sh" --target x86_64-linux >/dev/null
bash "$root/scripts/build-device.sh" --target aarch64-linux --cpu armv8-a >/dev/null
build=${PIPETTE_BUILD_DIR:-$root/build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
# Every parser of outside input under libFuzzer with ASan and UBSan, briefly (bench/fuzz.sh runs
# them for as long as asked; its clang build is cached by ccache too).
bash "$root/bench/fuzz.sh" "${PIPETTE_FUZZ_SECONDS:-10}"
