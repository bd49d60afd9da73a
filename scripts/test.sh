#!/usr/bin/env bash
# Builds pipette (scripts/build.sh) and runs every test: unit tests and end-to-end tests on the
# real engine (the tiny stories260K model from ../shared when present, a synthetic model always).
# Installs the test-only packages first (scripts/deps.sh --test: chromium, for the report test).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" --test
bash "$root/scripts/build.sh"
build=${PIPETTE_BUILD_DIR:-$root/build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
