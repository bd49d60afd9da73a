#!/usr/bin/env bash
# The published findings reproduced on this device (issue 11, docs/findings.md): writes the
# synthetic models the three suites name (Q4_K_M, directly, no F16 intermediate; about 10 GB in
# all, the 8B mixture-of-experts model 5 GB), then runs the suites into one store and writes the
# report. Write times and the models' sizes are printed; results go to out/findings/results.db.
#
#   bench/findings.sh [a|b|c ...]     (default: all three; a = hybrid retention, b = MoE speed
#                                      and memory, c = 1B end-to-end)
# The machine should be otherwise idle: these are throughput measurements.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pipette=${PIPETTE_BUILD_DIR:-$root/build}/src/cli/pipette
out=$root/out/findings
store=$out/results.db
[ $# -gt 0 ] || set -- a b c
for finding in "$@"; do  # all of them checked before an hour of work starts
  case $finding in
    a|b|c) ;;
    *) echo "bench/findings.sh: unknown finding '$finding'; use a, b or c" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"

synth() {  # preset
  local m=$out/$1-Q4_K_M.gguf
  if [ ! -f "$m" ]; then
    "$pipette" models synth --preset "$1" --type Q4_K_M -o "$m" 2>&1 | grep -v '^NOTE' >&2
  fi
}

for finding in "$@"; do
  case $finding in
    a) presets=(granite-4.0-h-350m granite-4.0-350m); suite=findings-hybrid-retention ;;
    b) presets=(lfm2-8b-a1b qwen3.5-4b ministral-3-3b); suite=findings-moe-speed-memory ;;
    c) presets=(minicpm5-1b lfm2-1.2b); suite=findings-e2e-1b ;;
    *) echo "bench/findings.sh: unknown finding '$finding'; use a, b or c" >&2; exit 2 ;;
  esac
  for p in "${presets[@]}"; do synth "$p"; done
  "$pipette" --store "$store" suite run "$root/examples/suites/$suite.toml"
done
"$pipette" --store "$store" results list --label findings
"$pipette" --store "$store" report --label findings -o "$out/report.html"
python3 "$root/bench/findings_tables.py" "$pipette" "$store"   # docs/findings.md's tables
