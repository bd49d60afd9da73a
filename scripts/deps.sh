#!/usr/bin/env bash
# Installs the Debian packages pipette builds and tests with. Idempotent: installs only what is
# missing, so a rerun costs one dpkg query.
#   scripts/deps.sh          what building and the quick start need
#   scripts/deps.sh --test   also what only the tests need (scripts/test.sh asks for it): chromium,
#                            which renders `pipette report`'s HTML in a headless-browser test. It
#                            is heavy (Debian 12: about 125 MB to download, 395 MB installed, a
#                            minute to install), so nothing else installs it; when it cannot be
#                            installed that test skips, saying why, and the rest still runs.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git pkg-config python3
  nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev
  libsqlite3-dev libssl-dev libcurl4-openssl-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev
  libginac-dev libsodium-dev libpqxx-dev rapidjson-dev libicu-dev
)
test_packages=(chromium)
# The fleet tests start their own PostgreSQL server (initdb in a temporary folder) and measure the
# server with wrk; faketime sets a worker's clock 10 minutes off; the device tests start their own
# sshd, run the aarch64 device build of the driver under qemu-user (binfmt) and cross-build it
# (scripts/build-device.sh); nginx and openssl run the fleet behind the deployment's TLS proxy
# (deploy/); clang with its sanitizer and libFuzzer runtimes builds the fuzzing harnesses
# (bench/fuzz.sh, run briefly by the tests): required for `scripts/test.sh`.
required_test_packages=(postgresql wrk faketime openssh-server openssh-client qemu-user-static
  binfmt-support crossbuild-essential-arm64 nginx openssl clang libclang-rt-14-dev)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
updated=0

# The packages named that are not installed yet.
missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

install_packages() {
  echo "pipette: installing Debian packages: $*"
  if [ "$updated" -eq 0 ]; then
    $SUDO apt-get update -qq
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# npm fetches llama.cpp's source (DESIGN.md 3); a machine that already has Node.js keeps its own.
command -v npm >/dev/null || packages+=(nodejs npm)
mapfile -t missing < <(missing_of "${packages[@]}")
if ((${#missing[@]})); then
  install_packages "${missing[@]}"
fi

# Opt-in test-only packages: a failure here is a warning, not an error.
install_test_packages() {
  local missing_test
  mapfile -t missing_test < <(missing_of "${test_packages[@]}")
  ((${#missing_test[@]})) || return 0
  install_packages "${missing_test[@]}" ||
    echo "pipette: warning: could not install ${missing_test[*]}; the headless-browser report test will skip" >&2
}

# Lets this machine run aarch64 binaries through qemu-user (the emulated device test). Needs
# binfmt_misc, which containers may lack: then a warning, and that test skips saying why.
enable_aarch64_binfmt() {
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && return 0
  if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    $SUDO mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
  fi
  $SUDO update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] ||
    echo "pipette: warning: cannot register qemu-aarch64 with binfmt_misc; the emulated aarch64 device test will skip" >&2
}

if [ "${1:-}" = "--test" ]; then
  mapfile -t missing < <(missing_of "${required_test_packages[@]}")
  if ((${#missing[@]})); then
    install_packages "${missing[@]}"
  fi
  install_test_packages
  enable_aarch64_binfmt
fi
