#!/usr/bin/env bash
# Installs the Debian packages pipette builds and tests with. Idempotent: installs only what is
# missing, so a rerun costs one dpkg query.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git pkg-config python3
  nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev
  libsqlite3-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)

missing=()
# npm fetches llama.cpp's source (DESIGN.md 3); a machine that already has Node.js keeps its own.
command -v npm >/dev/null || packages+=(nodejs npm)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "pipette: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
