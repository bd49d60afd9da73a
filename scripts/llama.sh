#!/usr/bin/env bash
# Obtains the pinned llama.cpp (DESIGN.md section 3) and builds it into a cache outside the tree.
#
#   scripts/llama.sh                      -> prints the install prefix of the built pinned llama.cpp
#   scripts/llama.sh --release VERSION    -> the same for another known release (see --help)
#   scripts/llama.sh --source             -> the path of the pinned source tree (fetched and
#                                            verified if needed; built by nothing: for
#                                            scripts/build-device.sh's own builds)
#
# Source: npm package node-llama-cpp@3.21.1, whose llama/gitRelease.bundle holds llama.cpp at
# commit 80fb11a. Both the package tarball and the bundle are SHA-256 verified; the bundle is
# cloned to third_party/llama.cpp (git-ignored). The build (static libllama/libggml for the CPU,
# llama.cpp's common library with its headers under include/common/ for the driver's chat
# templates, plus llama-bench, llama-quantize, llama-convert-llama2c-to-ggml and llama-server) is
# installed under $PIPETTE_CACHE/llama.cpp/<key>, where <key> hashes the commit, the build flags,
# the compiler and the CPU, so a rerun is instant and a different machine or flag set rebuilds.
# A prefix installed before the common library was (no lib/libllama-common.a) gets it from its
# own build folder: that one target is built there (seconds: llama-server already built it) and
# installed, the key and everything else unchanged.
#
# --release VERSION builds another node-llama-cpp release from the table below the same way
# (hash-checked, cached under its own key since the key hashes the commit), cloned to
# third_party/llama.cpp-VERSION so that the pinned tree pipette builds against stays as it is.
# Only on request: scripts/build.sh and CI build the pinned release alone. Its prefix's bin/ is
# what `--runtime llamacpp-stock --runtime-dir PREFIX/bin` runs.
#
# PIPETTE_LLAMA_CPP_DIR=/path/to/llama.cpp uses that checkout instead of the pinned one (its
# commit is recorded in every result like the pinned one's).
#
# PIPETTE_LLAMA_TOOLS="llama-quantize" builds and installs the libraries and those programs alone
# (any of llama-bench, llama-quantize, llama-convert-llama2c-to-ggml, llama-server; default: all
# four). The quick start asks for llama-quantize, the one program it runs, so that a first run
# measures sooner (llama-server and its multimodal library are about a third of the build); a
# later call without it builds the rest in the same build folder under the same key (the same
# build, more of its targets) and only then marks the prefix complete.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${PIPETTE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pipette}
# Known releases of node-llama-cpp: version, package tarball SHA-256, package/llama/
# gitRelease.bundle SHA-256, llama.cpp commit the bundle holds. The first one is the pinned default.
releases=(
  "3.21.1 7a231d6bafa14142a1cbed9893d4ec5bc6041b2a5f5939a623accaab4203c11f 9336d8aab8f8e6a8919380f3641fe92e57b02fb55df1b6bd083b82491a6293b8 80fb11ac73e66d89eae2c6a91d8a77428fa733ed"
  "3.22.1 a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f 5f5d1105d5df040738d87b8290e5d17e7362131cdcfdb0831618e0ea528b4a51 de3ff815ea7d559ee917f063901b8986f038abc6"
)
pinned_version=${releases[0]%% *}
known=$(for r in "${releases[@]}"; do printf '%s ' "${r%% *}"; done); known=${known% }

usage() {
  echo "usage: scripts/llama.sh [--release VERSION]"
  echo "  builds llama.cpp from the npm package node-llama-cpp@VERSION (default: the pinned"
  echo "  $pinned_version) into the cache and prints its install prefix (binaries in PREFIX/bin)"
  echo "  PIPETTE_LLAMA_CPP_DIR=DIR builds that checkout instead; PIPETTE_CACHE=DIR moves the cache"
  echo "known releases (node-llama-cpp -> llama.cpp commit):"
  local r f
  for r in "${releases[@]}"; do
    read -ra f <<<"$r"
    if [ "${f[0]}" = "$pinned_version" ]; then
      echo "  ${f[0]}  ${f[3]}  (pinned default, third_party/llama.cpp)"
    else
      echo "  ${f[0]}  ${f[3]}  (third_party/llama.cpp-${f[0]})"
    fi
  done
}

release=$pinned_version; release_given=""; source_only=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --source) source_only=1; shift ;;
    --release) [ $# -ge 2 ] || { echo "pipette: error: --release needs a VERSION (known: $known)" >&2; exit 2; }
               release=$2; release_given=1; shift 2 ;;
    --release=*) release=${1#--release=}; release_given=1; shift ;;
    *) echo "pipette: error: unknown argument '$1' (usage: scripts/llama.sh [--release VERSION]; see --help)" >&2; exit 2 ;;
  esac
done
pkg_version=""
for r in "${releases[@]}"; do
  read -r v pkg_sha bundle_sha release_commit <<<"$r"
  [ "$v" = "$release" ] && { pkg_version=$v; break; }
done
[ -n "$pkg_version" ] || { echo "pipette: error: unknown node-llama-cpp release '$release' (known: $known)" >&2; exit 2; }
if [ -n "$release_given" ] && [ -n "${PIPETTE_LLAMA_CPP_DIR:-}" ]; then
  echo "pipette: error: --release and PIPETTE_LLAMA_CPP_DIR exclude each other; unset one" >&2; exit 2
fi
# The pinned release keeps third_party/llama.cpp (pipette's own build); another one gets its own tree.
tree=$root/third_party/llama.cpp
[ "$pkg_version" = "$pinned_version" ] || tree=$root/third_party/llama.cpp-$pkg_version
mkdir -p "$cache/npm"

log() { echo "pipette: $*" >&2; }
fail() { echo "pipette: error: $*" >&2; exit 1; }

verify() {  # file expected-sha256
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] || fail "$1 has SHA-256 $got, expected $2; delete it and rerun"
}

fetch_release() {
  local src=$tree
  if [ -d "$src/.git" ] && [ "$(git -C "$src" rev-parse HEAD 2>/dev/null)" = "$release_commit" ]; then
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
  [ "$(git -C "$src" rev-parse HEAD)" = "$release_commit" ] || fail "bundle is not at commit $release_commit"
  echo "$src"
}

if [ -n "$source_only" ]; then
  if [ -n "${PIPETTE_LLAMA_CPP_DIR:-}" ]; then
    (cd "$PIPETTE_LLAMA_CPP_DIR" && pwd) || fail "PIPETTE_LLAMA_CPP_DIR=$PIPETTE_LLAMA_CPP_DIR does not exist"
  else
    fetch_release
  fi
  exit 0
fi

if [ -n "${PIPETTE_LLAMA_CPP_DIR:-}" ]; then
  src=$(cd "$PIPETTE_LLAMA_CPP_DIR" && pwd) || fail "PIPETTE_LLAMA_CPP_DIR=$PIPETTE_LLAMA_CPP_DIR does not exist"
  [ -f "$src/include/llama.h" ] || fail "$src is not a llama.cpp checkout (no include/llama.h)"
  commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
  dirty=$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null | head -c1)
  [ -z "$dirty" ] || commit="$commit-dirty"
else
  src=""  # fetched below, only when the cache lacks this build
  commit=$release_commit
fi

all_tools=(llama-bench llama-quantize llama-convert-llama2c-to-ggml llama-server)
read -ra tools <<<"${PIPETTE_LLAMA_TOOLS:-${all_tools[*]}}"
for t in "${tools[@]}"; do
  [[ " ${all_tools[*]} " == *" $t "* ]] ||
    { echo "pipette: error: PIPETTE_LLAMA_TOOLS names '$t', which is not one of: ${all_tools[*]}" >&2; exit 2; }
done

flags=(
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=ON -DLLAMA_BUILD_TOOLS=ON
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_OPENSSL=OFF -DLLAMA_TOOLS_INSTALL=ON -DLLAMA_BUILD_IS_DEV=OFF
)
cpu=$(grep -m1 -E '^(model name|flags)' /proc/cpuinfo 2>/dev/null; grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
key=$(printf '%s\n' "$commit" "${flags[*]}" "$(c++ --version | head -1)" "$cpu" "$(uname -m)" | sha256sum | cut -c1-16)
prefix=$cache/llama.cpp/$key

# llama.cpp's common library (chat.h: chat templates through its Jinja engine) as the driver links
# it: the static libraries and the headers chat.h includes, under include/common/ so that its own
# names (log.h, json.h, ...) never shadow anything on the include path.
common_target() {  # source tree -> the library's target ("common" before llama.cpp renamed it)
  if grep -q 'set(TARGET llama-common)' "$1/common/CMakeLists.txt" 2>/dev/null; then
    echo llama-common
  else
    echo common
  fi
}
has_common() { [ -f "$prefix/lib/libllama-common.a" ] && [ -f "$prefix/include/common/chat.h" ]; }
install_common() {  # source tree, build folder
  local s=$1 b=$2
  mkdir -p "$prefix/lib" "$prefix/include/common/jinja"
  if [ -f "$b/common/libllama-common.a" ]; then
    cp -f "$b/common/libllama-common.a" "$prefix/lib/"
  else
    cp -f "$b/common/libcommon.a" "$prefix/lib/libllama-common.a"
  fi
  [ ! -f "$b/common/libllama-common-base.a" ] || cp -f "$b/common/libllama-common-base.a" "$prefix/lib/"
  cp -f "$s"/common/*.h "$prefix/include/common/"
  [ ! -d "$s/common/jinja" ] || cp -f "$s"/common/jinja/*.h "$prefix/include/common/jinja/"
}

# The libraries and the programs asked for, installed by an earlier call that built only some of
# the programs (PIPETTE_LLAMA_TOOLS): nothing to do.
has_tools() {
  local t
  for t in "${tools[@]}"; do [ -x "$prefix/bin/$t" ] || return 1; done
}
if [[ "$commit" != *-dirty && ! -f "$prefix/.complete" && -f "$prefix/.libraries" ]] &&
  has_common && has_tools; then
  echo "$prefix"; exit 0
fi

if [[ "$commit" != *-dirty && -f "$prefix/.complete" ]]; then
  has_common && { echo "$prefix"; exit 0; }
  # One upgrade at a time (a second caller waits, then finds it done).
  exec 9>"$prefix/.common.lock"
  flock 9
  has_common && { echo "$prefix"; exit 0; }
  built_src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$prefix/build/CMakeCache.txt" 2>/dev/null || true)
  if [ -n "$built_src" ] && [ -f "$built_src/common/chat.h" ]; then
    log "adding llama.cpp's common library to $prefix (from its build folder)"
    cmake --build "$prefix/build" -j"$(nproc)" --target "$(common_target "$built_src")" \
      >"$prefix/build-common.log" 2>&1 \
      || { tail -30 "$prefix/build-common.log" >&2; fail "building llama.cpp's common library failed (log: $prefix/build-common.log); delete $prefix and rerun"; }
    install_common "$built_src" "$prefix/build"
    echo "$prefix"; exit 0
  fi
  log "$prefix lacks llama.cpp's common library and the source of its build folder: rebuilding"
  rm -rf "$prefix/.complete" "$prefix/build"
  exec 9>&-
fi

[ -n "$src" ] || src=$(fetch_release)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [ -f "$prefix/.libraries" ]; then
  log "building llama.cpp's ${tools[*]} into $prefix (beside the libraries built before)"
elif [ ${#tools[@]} -lt ${#all_tools[@]} ]; then
  log "building llama.cpp $commit into $prefix: its libraries and ${tools[*]} (first time only: several minutes)"
else
  log "building llama.cpp $commit into $prefix (first time only: several minutes)"
fi
build=$prefix/build
mkdir -p "$prefix"
cmake -S "$src" -B "$build" "${gen[@]}" "${flags[@]}" "${launcher[@]}" \
  -DCMAKE_INSTALL_PREFIX="$prefix" >"$prefix/configure.log" 2>&1 \
  || { tail -20 "$prefix/configure.log" >&2; fail "configuring llama.cpp failed (log: $prefix/configure.log)"; }
cmake --build "$build" -j"$(nproc)" --target llama "$(common_target "$src")" "${tools[@]}" \
  >"$prefix/build.log" 2>&1 \
  || { tail -30 "$prefix/build.log" >&2; fail "building llama.cpp failed (log: $prefix/build.log)"; }
# Assemble the prefix by hand: llama.cpp's own install step also installs every example, most of
# which we do not build. cmake/llama_prefix.cmake turns this layout into imported targets.
mkdir -p "$prefix/lib" "$prefix/include" "$prefix/bin"
cp -f "$build/src/libllama.a" "$build"/ggml/src/libggml*.a "$prefix/lib/"
cp -f "$src"/include/*.h "$src"/ggml/include/*.h "$prefix/include/"
install_common "$src" "$build"
grep -q '^GGML_OPENMP_ENABLED:INTERNAL=ON' "$build/CMakeCache.txt" && echo ON >"$prefix/GGML_OPENMP" || echo OFF >"$prefix/GGML_OPENMP"
for t in "${tools[@]}"; do  # copied, then renamed: a program in bin/ is a whole one
  cp -f "$build/bin/$t" "$prefix/bin/.$t.tmp"
  mv -f "$prefix/bin/.$t.tmp" "$prefix/bin/$t"
done
mkdir -p "$prefix/share/pipette"
cp -f "$src"/models/ggml-vocab-*.gguf "$prefix/share/pipette/" 2>/dev/null || true
printf '%s\n' "$commit" >"$prefix/COMMIT"
printf '%s\n' "${flags[*]}" >"$prefix/BUILD_FLAGS"
if [[ "$commit" != *-dirty ]]; then
  touch "$prefix/.libraries"
  tools=("${all_tools[@]}")
  ! has_tools || touch "$prefix/.complete"
fi
echo "$prefix"
