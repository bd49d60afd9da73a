#!/usr/bin/env bash
# Where a cell's time goes. A cell loads its model once (DESIGN.md 4.2 step 2), so the wall time of
# `pipette run` should be little more than its warm-up plus measured time.
#
#   bench/cell_overhead.sh MODEL.gguf BENCHMARK [pipette run options...]
#
# Prints: process wall time (start, hashing, load, input construction, measurement, store),
# the cell's wall time inside pipette, the warm-up + measured time, the model load time, the
# ratio cell/measured, and the fixed cost = process wall - warm-up and measured time.
set -euo pipefail
model=${1:?usage: bench/cell_overhead.sh MODEL.gguf BENCHMARK [options]}
benchmark=${2:?usage: bench/cell_overhead.sh MODEL.gguf BENCHMARK [options]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
pipette=${PIPETTE_BUILD_DIR:-$root/build}/src/cli/pipette
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t0=$(date +%s%N)
"$pipette" --store "$work/r.db" --json run -q --model "$model" --benchmark "$benchmark" "$@" >"$work/r.json"
t1=$(date +%s%N)
python3 - "$work/r.json" "$(( (t1 - t0) / 1000000 ))" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); wall = float(sys.argv[2]); t = r["harness"]["timing"]
m = t["warmup_and_measured_ms"]
print(f'{r["model"]["file_name"]} {r["benchmark"]["id"]} status={r["status"]} reps={r["harness"]["reps"]}')
print(f'process wall {wall:.0f} ms | cell wall {t["cell_wall_ms"]:.0f} ms | warm-up+measured {m:.0f} ms'
      f' | load {t["load_ms"]:.0f} ms')
print(f'cell wall / warm-up+measured = {t["cell_wall_ms"] / m:.3f};'
      f' process wall / warm-up+measured = {wall / m:.3f}; fixed cost = {wall - m:.0f} ms')
PY
