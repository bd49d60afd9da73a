#!/usr/bin/env bash
# Obtains the pinned llama.cpp (DESIGN.md section 3) and builds it into a cache outside the tree.
#
#   scripts/llama.sh            -> prints the install prefix of the built llama.cpp
#
# Source: npm package node-llama-cpp@3.21.1, whose llama/gitRelease.bundle holds llama.cpp at
# commit 80fb11a. Both the package tarball and the bundle are SHA-256 verified; the bundle is
# cloned to third_party/llama.cpp (git-ignored). The build (static libllama/libggml for the CPU,
# plus llama-bench, llama-quantize, llama-convert-llama2c-to-ggml and llama-server) is installed
# under $PIPETTE_CACHE/llama.cpp/<key>, where <key> hashes the commit, the build flags, the
# compiler and the CPU, so a rerun is instant and a different machine or flag set rebuilds.
#
# PIPETTE_LLAMA_CPP_DIR=/path/to/llama.cpp uses that checkout instead of the pinned one (its
# commit is recorded in every result like the pinned one's).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${PIPETTE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pipette}
pkg_version=3.21.1
pkg_sha=7a231d6bafa14142a1cbed9893d4ec5bc6041b2a5f5939a623accaab4203c11f
bundle_sha=9336d8aab8f8e6a8919380f3641fe92e57b02fb55df1b6bd083b82491a6293b8
pinned_commit=80fb11ac73e66d89eae2c6a91d8a77428fa733ed
mkdir -p "$cache/npm"

log() { echo "pipette: $*" >&2; }
fail() { echo "pipette: error: $*" >&2; exit 1; }

verify() {  # file expected-sha256
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] || fail "$1 has SHA-256 $got, expected $2; delete it and rerun"
}

fetch_pinned() {
  local src=$root/third_party/llama.cpp
  if [ -d "$src/.git" ] && [ "$(git -C "$src" rev-parse HEAD 2>/dev/null)" = "$pinned_commit" ]; then
    echo "$src"; return
  fi
  local tgz=$cache/npm/node-llama-cpp-$pkg_version.tgz
  if [ ! -f "$tgz" ]; then
    log "fetching node-llama-cpp@$pkg_version from the npm registry"
    (cd "$cache/npm" && npm pack --silent "node-llama-cpp@$pkg_version" >/dev/null) \
      || fail "npm pack node-llama-cpp@$pkg_version failed; check that the npm registry is reachable"
  fi
  verify "$tgz" "$pkg_sha"
  local bundle=$cache/npm/gitRelease-$pkg_version.bundle
  if [ ! -f "$bundle" ]; then
    tar -xzf "$tgz" -O package/llama/gitRelease.bundle >"$bundle.tmp"
    mv "$bundle.tmp" "$bundle"
  fi
  verify "$bundle" "$bundle_sha"
  rm -rf "$src"
  mkdir -p "$root/third_party"
  git -c advice.detachedHead=false clone -q "$bundle" "$src"
  [ "$(git -C "$src" rev-parse HEAD)" = "$pinned_commit" ] || fail "bundle is not at commit $pinned_commit"
  echo "$src"
}

if [ -n "${PIPETTE_LLAMA_CPP_DIR:-}" ]; then
  src=$(cd "$PIPETTE_LLAMA_CPP_DIR" && pwd) || fail "PIPETTE_LLAMA_CPP_DIR=$PIPETTE_LLAMA_CPP_DIR does not exist"
  [ -f "$src/include/llama.h" ] || fail "$src is not a llama.cpp checkout (no include/llama.h)"
  commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
  dirty=$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null | head -c1)
  [ -z "$dirty" ] || commit="$commit-dirty"
else
  src=""  # fetched below, only when the cache lacks this build
  commit=$pinned_commit
fi

flags=(
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=ON -DLLAMA_BUILD_TOOLS=ON
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_OPENSSL=OFF -DLLAMA_TOOLS_INSTALL=ON -DLLAMA_BUILD_IS_DEV=OFF
)
cpu=$(grep -m1 -E '^(model name|flags)' /proc/cpuinfo 2>/dev/null; grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
key=$(printf '%s\n' "$commit" "${flags[*]}" "$(c++ --version | head -1)" "$cpu" "$(uname -m)" | sha256sum | cut -c1-16)
prefix=$cache/llama.cpp/$key
if [[ "$commit" != *-dirty && -f "$prefix/.complete" ]]; then
  echo "$prefix"; exit 0
fi

[ -n "$src" ] || src=$(fetch_pinned)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
log "building llama.cpp $commit into $prefix (first time only: several minutes)"
build=$prefix/build
mkdir -p "$prefix"
cmake -S "$src" -B "$build" "${gen[@]}" "${flags[@]}" "${launcher[@]}" \
  -DCMAKE_INSTALL_PREFIX="$prefix" >"$prefix/configure.log" 2>&1 \
  || { tail -20 "$prefix/configure.log" >&2; fail "configuring llama.cpp failed (log: $prefix/configure.log)"; }
cmake --build "$build" -j"$(nproc)" --target llama llama-bench llama-quantize \
  llama-convert-llama2c-to-ggml llama-server >"$prefix/build.log" 2>&1 \
  || { tail -30 "$prefix/build.log" >&2; fail "building llama.cpp failed (log: $prefix/build.log)"; }
# Assemble the prefix by hand: llama.cpp's own install step also installs every example, most of
# which we do not build. cmake/llama_prefix.cmake turns this layout into imported targets.
mkdir -p "$prefix/lib" "$prefix/include" "$prefix/bin"
cp -f "$build/src/libllama.a" "$build"/ggml/src/libggml*.a "$prefix/lib/"
cp -f "$src"/include/*.h "$src"/ggml/include/*.h "$prefix/include/"
grep -q '^GGML_OPENMP_ENABLED:INTERNAL=ON' "$build/CMakeCache.txt" && echo ON >"$prefix/GGML_OPENMP" || echo OFF >"$prefix/GGML_OPENMP"
for t in llama-bench llama-quantize llama-convert-llama2c-to-ggml llama-server; do
  cp -f "$build/bin/$t" "$prefix/bin/$t"
done
mkdir -p "$prefix/share/pipette"
cp -f "$src"/models/ggml-vocab-*.gguf "$prefix/share/pipette/" 2>/dev/null || true
printf '%s\n' "$commit" >"$prefix/COMMIT"
printf '%s\n' "${flags[*]}" >"$prefix/BUILD_FLAGS"
[[ "$commit" == *-dirty ]] || touch "$prefix/.complete"
echo "$prefix"
