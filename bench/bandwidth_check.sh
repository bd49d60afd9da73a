#!/usr/bin/env bash
# Checks `pipette device probe` against an independent bandwidth tool on the same machine, in the
# same run, with the same threads, CPUs, working set and statistic. Target: within 25%.
#
#   bench/bandwidth_check.sh [ROUNDS] [RUNS]   (default 5 rounds of 3 runs; PIPETTE_BIN: binary)
#
# The reference is likwid-bench's `stream` kernel (Debian package `likwid`), because it is the
# same access pattern: STREAM's triad A(i) = B(i)*s + C(i) on doubles, two read streams and one
# write stream, counted as 24 bytes per element (likwid-bench -l stream_sse: "Bytes per element:
# 24, Load bytes per element: 16, Store bytes per element: 8": the write-allocate read of A is not
# counted, as in pipette and STREAM).
# stream_sse is preferred on x86-64: pipette's kernel is compiled for baseline x86-64, i.e. SSE2,
# so both issue the same loads and stores (neither uses non-temporal stores; the *_mem variants
# would). likwid's `triad` is A = B*C + D, four streams: a different pattern. mbw is not used: its
# MEMCPY is a copy (two arrays, memcpy's own instruction choice), it reports MiB/s of the bytes
# copied (counting each byte once where STREAM counts read and write), and it is single-threaded.
#
# Same placement: likwid-bench -W (not -w) makes each thread first-touch its own chunk, as pipette
# does; threads are placed compactly in domain N with a stride of the SMT width, i.e. one thread
# per physical core, which is pipette's default pinning. The CPU lists of both are printed.
# Same statistic: in each round pipette reports the best of RUNS runs of at least 0.5 s each, and
# likwid-bench runs RUNS times with -s 0.5 and the best is taken. Units: likwid prints MByte/s =
# 1e6 bytes/s; pipette prints bytes/s; both are shown in GB/s (1e9 bytes/s).
# A shared VM host moves its memory bandwidth by 2x within seconds, so the tools alternate round
# by round, each round's ratio compares measurements seconds apart, and the verdict is the median
# of the round ratios (the best of all rounds of each tool is printed too).
set -euo pipefail
rounds=${1:-5}
runs=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
pipette=${PIPETTE_BIN:-${PIPETTE_BUILD_DIR:-$root/build}/src/cli/pipette}
[[ -x $pipette ]] || { echo "bandwidth_check: $pipette not found; build first" >&2; exit 2; }
if ! command -v likwid-bench >/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    apt-get install -y likwid >/dev/null
  else
    echo "bandwidth_check: likwid-bench missing: apt-get install -y likwid" >&2
    exit 2
  fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PIPETTE_CACHE=$work/cache  # leave the user's cached bandwidth alone

kernel=stream
if [[ $(uname -m) == x86_64 ]] && likwid-bench -a 2>/dev/null | grep -q '^stream_sse '; then
  kernel=stream_sse
fi
smt=$(lscpu -p=CORE 2>/dev/null | grep -v '^#' | sort | uniq -c | awk 'NR == 1 {print $1}')
smt=${smt:-1}

best_pipette=0 best_likwid=0 ratios=()
for ((r = 1; r <= rounds; r++)); do
  "$pipette" --json device probe --runs "$runs" >"$work/p.json" 2>/dev/null
  read -r p_gbs threads total cpus < <(python3 - "$work/p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f'{d["bytes_per_s"] / 1e9:.3f} {d["threads"]} {3 * d["array_bytes"]}',
      ",".join(map(str, d["cpus"])) or "unpinned")
PY
  )
  expr="N:$((total / 1000))kB:$threads"
  [[ $smt -gt 1 ]] && expr="$expr:1:$smt"
  l_best=0 l_cpus=""
  for ((i = 0; i < runs; i++)); do
    likwid-bench -t "$kernel" -s 0.5 -W "$expr" >"$work/l.txt" 2>&1
    mbs=$(awk '/^MByte\/s:/ {print $2}' "$work/l.txt")
    [[ -n $mbs ]] || { cat "$work/l.txt" >&2; exit 1; }
    l_best=$(awk -v a="$l_best" -v b="$mbs" 'BEGIN {print (b / 1000 > a) ? b / 1000 : a}')
    l_cpus=$(grep -o 'running on hwthread [0-9]*' "$work/l.txt" | awk '{print $4}' | sort -n -u |
      paste -sd, -)
  done
  ratio=$(awk -v p="$p_gbs" -v l="$l_best" 'BEGIN {printf "%.3f", p / l}')
  ratios+=("$ratio")
  printf 'round %d: pipette %.2f GB/s (%s threads on CPUs %s) | likwid-bench %s %.2f GB/s' \
    "$r" "$p_gbs" "$threads" "$cpus" "$kernel" "$l_best"
  printf ' (-W %s, hwthreads %s) | ratio %s\n' "$expr" "$l_cpus" "$ratio"
  best_pipette=$(awk -v a="$best_pipette" -v b="$p_gbs" 'BEGIN {print (b > a) ? b : a}')
  best_likwid=$(awk -v a="$best_likwid" -v b="$l_best" 'BEGIN {print (b > a) ? b : a}')
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR] = $1} END {
  print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
best_ratio=$(awk -v p="$best_pipette" -v l="$best_likwid" 'BEGIN {print p / l}')
printf 'best of %d rounds: pipette %.2f GB/s, likwid-bench %.2f GB/s, ratio %.3f\n' "$rounds" \
  "$best_pipette" "$best_likwid" "$best_ratio"
awk -v m="$median" 'BEGIN {
  ok = m >= 0.75 && m <= 1.25
  printf "median round ratio pipette/likwid-bench: %.3f: %s\n", m, ok ? "within 25%" : "OUTSIDE 25%"
  exit ok ? 0 : 1
}'
