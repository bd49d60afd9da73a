#!/usr/bin/env bash
# Builds pipette-llamacpp-driver for a device (DESIGN.md 8a): the pinned llama.cpp (libllama and
# the common library whose Jinja engine applies chat templates) and the driver, cross-compiled
# with Debian's toolchain and statically linked (libstdc++, OpenMP and the C library inside:
# nothing for LD_LIBRARY_PATH to miss on a phone), for one named CPU level.
#
#   scripts/build-device.sh --target aarch64-linux|x86_64-linux [--cpu LEVEL|all]
#
# Levels (the first is the default; `--cpu all` builds every level of the target):
#   aarch64-linux  armv8.2-a+dotprod+fp16 (recent phones, Raspberry Pi 5), armv8-a (any arm64)
#   x86_64-linux   x86-64-v3 (AVX2, FMA, F16C), x86-64-v2 (SSE4.2)
#
# Built on request only (never by scripts/build.sh). llama.cpp's build is cached under
# $PIPETTE_CACHE/device-build/<key> (key: commit, target, level, compiler), so a rerun only
# relinks the driver; the binary goes to $PIPETTE_CACHE/device-drivers/<target>/<level>/, where
# `pipette --device ...` looks for it (src/platform/driver_builds.h). Prints the binaries' paths.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${PIPETTE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pipette}

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
}
fail() { echo "pipette: error: $*" >&2; exit 1; }
log() { echo "pipette: $*" >&2; }

target=""; cpu=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --target) [ $# -ge 2 ] || fail "--target needs aarch64-linux or x86_64-linux"; target=$2; shift 2 ;;
    --target=*) target=${1#--target=}; shift ;;
    --cpu) [ $# -ge 2 ] || fail "--cpu needs a level (see --help)"; cpu=$2; shift 2 ;;
    --cpu=*) cpu=${1#--cpu=}; shift ;;
    *) fail "unknown argument '$1' (usage: scripts/build-device.sh --target aarch64-linux|x86_64-linux [--cpu LEVEL|all])" ;;
  esac
done
case "$target" in
  aarch64-linux) levels=("armv8.2-a+dotprod+fp16" "armv8-a"); triple=aarch64-linux-gnu; pkg=crossbuild-essential-arm64 ;;
  x86_64-linux) levels=("x86-64-v3" "x86-64-v2"); triple=x86_64-linux-gnu; pkg="" ;;
  "") fail "--target is required: aarch64-linux or x86_64-linux (see --help)" ;;
  *) fail "no device build for target '$target'; pipette builds aarch64-linux and x86_64-linux" ;;
esac
if [ -z "$cpu" ]; then
  chosen=("${levels[0]}")
elif [ "$cpu" = all ]; then
  chosen=("${levels[@]}")
else
  ok=""; for l in "${levels[@]}"; do [ "$l" = "$cpu" ] && ok=1; done
  [ -n "$ok" ] || fail "unknown CPU level '$cpu' for $target (known: ${levels[*]})"
  chosen=("$cpu")
fi

bash "$root/scripts/deps.sh"
if [ -n "$pkg" ] && ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
  log "installing Debian packages: $pkg"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
fi
if [ "$target" = x86_64-linux ] && [ "$(uname -m)" = x86_64 ]; then
  cc=gcc; cxx=g++
else
  cc=$triple-gcc; cxx=$triple-g++
fi
command -v "$cxx" >/dev/null || fail "$cxx is not installed (Debian: apt-get install $pkg)"
src=$(bash "$root/scripts/llama.sh" --source)
commit=$(git -C "$src" rev-parse HEAD)
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# nlohmann-json's headers alone, so the cross compiler never searches the host's /usr/include.
json_include=$cache/device-build/json-include
if [ ! -f "$json_include/nlohmann/json.hpp" ]; then
  mkdir -p "$json_include"
  cp -r /usr/include/nlohmann "$json_include/"
fi

for level in "${chosen[@]}"; do
  case "$level" in
    armv8*) march=$level; ggml_flags=(-DGGML_CPU_ARM_ARCH="$level") ;;
    x86-64-v3) march=x86-64-v3; ggml_flags=(-DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON) ;;
    x86-64-v2) march=x86-64-v2; ggml_flags=(-DGGML_SSE42=ON -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF) ;;
  esac
  flags=(
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=ON
    -DGGML_BACKEND_DL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
    -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_COMMON=ON
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_IS_DEV=OFF
    "${ggml_flags[@]}"
  )
  key=$(printf '%s\n' "$commit" "$target" "$level" "${flags[*]}" "$($cxx --version | head -1)" | sha256sum | cut -c1-16)
  work=$cache/device-build/$key
  prefix=$work/prefix
  mkdir -p "$work"
  # One build of a key at a time (a second one waits): two in one folder would corrupt both.
  exec 9>"$work/.lock"
  flock 9
  toolchain=$work/toolchain.cmake
  cat >"$toolchain" <<EOF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${target%%-*})
set(CMAKE_C_COMPILER $cc)
set(CMAKE_CXX_COMPILER $cxx)
set(CMAKE_C_FLAGS_INIT "-march=$march")
set(CMAKE_CXX_FLAGS_INIT "-march=$march")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
EOF
  [ "$cc" = gcc ] || echo "set(CMAKE_FIND_ROOT_PATH /usr/$triple)" >>"$toolchain"
  if [ ! -f "$prefix/.complete" ]; then
    log "building llama.cpp $commit for $target ($level) into $work (first time only: several minutes)"
    cmake -S "$src" -B "$work/llama" "${gen[@]}" "${flags[@]}" "${launcher[@]}" \
      -DCMAKE_TOOLCHAIN_FILE="$toolchain" >"$work/configure.log" 2>&1 \
      || { tail -20 "$work/configure.log" >&2; fail "configuring llama.cpp for $target failed (log: $work/configure.log)"; }
    cmake --build "$work/llama" -j"$(nproc)" --target llama llama-common >"$work/build.log" 2>&1 \
      || { tail -30 "$work/build.log" >&2; fail "building llama.cpp for $target failed (log: $work/build.log)"; }
    mkdir -p "$prefix/lib" "$prefix/include"
    cp -f "$work/llama/src/libllama.a" "$work"/llama/ggml/src/libggml*.a "$prefix/lib/"
    cp -f "$src"/include/*.h "$src"/ggml/include/*.h "$prefix/include/"
    # llama.cpp's common library: the driver applies chat templates with its Jinja engine, on a
    # device as on the host (cmake/llama_prefix.cmake, pipette::llama-common).
    cp -f "$work/llama/common/libllama-common.a" "$work/llama/common/libllama-common-base.a" "$prefix/lib/"
    mkdir -p "$prefix/include/common/jinja"
    cp -f "$src"/common/*.h "$prefix/include/common/"
    cp -f "$src"/common/jinja/*.h "$prefix/include/common/jinja/"
    echo ON >"$prefix/GGML_OPENMP"
    printf '%s\n' "$commit" >"$prefix/COMMIT"
    printf '%s\n' "${flags[*]}" >"$prefix/BUILD_FLAGS"
    touch "$prefix/.complete"
  fi
  log "building pipette-llamacpp-driver for $target ($level)"
  # The driver's build folder is this checkout's own (CMake ties a build folder to one source
  # tree); llama.cpp's prefix above is shared by every checkout.
  driver_build=$work/driver-$(printf '%s' "$root" | sha256sum | cut -c1-12)
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
  cmake -S "$root" -B "$driver_build" "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DPIPETTE_DRIVER_ONLY=ON -DPIPETTE_LLAMA_PREFIX="$prefix" \
    -DPIPETTE_JSON_INCLUDE="$json_include" -DPIPETTE_TARGET="$target" -DPIPETTE_CPU_LEVEL="$level" \
    >"$work/driver-configure.log" 2>&1 \
    || { tail -20 "$work/driver-configure.log" >&2; fail "configuring the driver for $target failed (log: $work/driver-configure.log)"; }
  cmake --build "$driver_build" -j"$(nproc)" --target pipette-llamacpp-driver >"$work/driver-build.log" 2>&1 \
    || { tail -30 "$work/driver-build.log" >&2; fail "building the driver for $target failed (log: $work/driver-build.log)"; }
  bin=$driver_build/src/driver/pipette-llamacpp-driver
  if readelf -d "$bin" 2>/dev/null | grep -q NEEDED; then
    fail "$bin is not statically linked: $(readelf -d "$bin" | grep NEEDED | head -3 | tr -s ' ')"
  fi
  out=$cache/device-drivers/$target/$level
  mkdir -p "$out"
  cp -f "$bin" "$out/pipette-llamacpp-driver.tmp"
  mv -f "$out/pipette-llamacpp-driver.tmp" "$out/pipette-llamacpp-driver"
  echo "$out/pipette-llamacpp-driver"
  exec 9>&-
done
