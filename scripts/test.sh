#!/usr/bin/env bash
# Builds pipette (scripts/build.sh) and runs every test: unit tests and end-to-end tests on the
# real engine (the tiny stories260K model from ../shared when present, a synthetic model always).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/build.sh"
build=${PIPETTE_BUILD_DIR:-$root/build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
