#!/usr/bin/env bash
# Installs what pipette needs (Debian packages, the pinned llama.cpp) and builds it into build/.
# Rerunning is cheap: packages already present are skipped, llama.cpp comes from the cache
# (scripts/llama.sh), and ccache serves unchanged objects.
set -euo pipefail
case "${1:-}" in
  -h|--help)
    echo "usage: scripts/build.sh   (no arguments; PIPETTE_BUILD_DIR=DIR builds elsewhere,"
    echo "       PIPETTE_LLAMA_CPP_DIR=DIR builds against your own llama.cpp checkout,"
    echo "       PIPETTE_WERROR=ON makes a compiler warning an error, as scripts/test.sh does,"
    echo "       PIPETTE_BUILD_TARGETS=\"pipette pipette-llamacpp-driver\" builds those alone,"
    echo "       PIPETTE_UNITY_BUILD=OFF compiles each source file on its own)"
    exit 0 ;;
  ?*) echo "scripts/build.sh takes no arguments (see --help)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/deps.sh
prefix=$(bash scripts/llama.sh)
build=${PIPETTE_BUILD_DIR:-$root/build}
# ccache hits across clones in other folders (CI clones afresh every time).
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
gen=()
command -v ninja >/dev/null && [ ! -f "$build/Makefile" ] && gen=(-G Ninja)
# Given, PIPETTE_WERROR sets the CMake option of that name; else the folder keeps what it has.
werror=()
[ -n "${PIPETTE_WERROR:-}" ] && werror=(-DPIPETTE_WERROR="$PIPETTE_WERROR")
# A unity build (each target's sources compiled in batches of 8) parses the heavy headers (JSON,
# fmt, CLI11, GoogleTest) once per batch instead of once per file: on 2 cores pipette and its
# driver build in about 5 minutes instead of 11. PIPETTE_UNITY_BUILD=OFF for a folder where one
# edited file should recompile alone; the fuzz build (bench/fuzz.sh) compiles file by file, so
# both ways stay clean.
unity=(-DCMAKE_UNITY_BUILD="${PIPETTE_UNITY_BUILD:-ON}")
cmake -S "$root" -B "$build" "${gen[@]}" "${werror[@]}" "${unity[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DPIPETTE_LLAMA_PREFIX="$prefix" \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
# Given, PIPETTE_BUILD_TARGETS names the targets to build (the quick start's: pipette and its
# driver, so a first run does not wait for the tests' programs); else everything is built.
targets=()
[ -n "${PIPETTE_BUILD_TARGETS:-}" ] && read -ra targets <<<"--target $PIPETTE_BUILD_TARGETS"
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
