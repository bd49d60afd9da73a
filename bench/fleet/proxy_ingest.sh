#!/usr/bin/env bash
# Ingest straight to `pipette serve` against ingest through nginx with TLS (deploy/), alternating
# in one sitting so that both see the same machine: PAIRS pairs of ingest_load runs, then each
# pair's ratio (proxied / direct submissions/s) and p99s, and the median ratio.
#   bench/fleet/proxy_ingest.sh [PAIRS=5] [N=8000] [C=4]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${PIPETTE_BUILD_DIR:-$root/build}
pairs=${1:-5} n=${2:-8000} c=${3:-4}
tool=$build/bench/fleet/ingest_load
[ -x "$tool" ] || { echo "proxy_ingest: build first (scripts/build.sh): no $tool" >&2; exit 2; }
run() {  # prints "RATE P99"; a failed run stops the script with ingest_load's output
  local out
  out=$("$tool" --pipette "$build/src/cli/pipette" -n "$n" -c "$c" "$@" 2>&1) ||
    { echo "$out" >&2; echo "proxy_ingest: ingest_load $* failed" >&2; exit 1; }
  sed -nE 's/^ +([0-9]+) submissions\/s .* p99 ([0-9.]+) ms.*/\1 \2/p' <<<"$out"
}
ratios=()
printf "%-5s %12s %9s %12s %9s %7s\n" pair direct/s p99_ms nginx_tls/s p99_ms ratio
for i in $(seq "$pairs"); do
  direct=$(run) proxied=$(run --via-nginx)
  read -r d dp <<<"$direct"
  read -r p pp <<<"$proxied"
  r=$(awk -v a="$p" -v b="$d" 'BEGIN{printf "%.3f", a/b}')
  ratios+=("$r")
  printf "%-5s %12s %9s %12s %9s %7s\n" "$i" "$d" "$dp" "$p" "$pp" "$r"
done
printf "%s\n" "${ratios[@]}" | sort -n | awk '{v[NR]=$1} END{printf "median ratio (nginx+TLS / direct): %s over %d pairs\n", v[int((NR+1)/2)], NR}'
