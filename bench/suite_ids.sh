#!/usr/bin/env bash
# Runs a suite and checks that every cell's planned config_id (`suite run --dry-run --json`,
# before anything ran) is the config_id its stored result carries: the id is computed once, from
# the resolved settings, so a rerun recognises every cell.
#
#   bench/suite_ids.sh SUITE.toml [STORE]     (STORE default: a temporary one)
#
# Prints one line per cell (planned = stored, or both ids) and a summary; exits 1 on a mismatch.
set -euo pipefail
case "${1:-}" in -h|--help|"") sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
suite=$1
root=$(cd "$(dirname "$0")/.." && pwd)
pipette=${PIPETTE_BUILD_DIR:-$root/build}/src/cli/pipette
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
store=${2:-$work/ids.db}
"$pipette" --store "$store" --json suite run "$suite" --dry-run >"$work/plan.json"
"$pipette" --store "$store" --json suite run "$suite" >"$work/run.json" || true
python3 - "$work/plan.json" "$work/run.json" "$store" "$pipette" <<'PY'
import json, subprocess, sys
plan, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
cells = lambda j: j["cells"] if isinstance(j, dict) else j
planned = {c["index"]: c for c in cells(plan)}
bad = 0
for c in cells(run):
    p = planned[c["index"]]
    stored = None
    if c.get("result_id"):
        rec = json.loads(subprocess.run([sys.argv[4], "--store", sys.argv[3], "--json", "results", "show",
                                         c["result_id"]], capture_output=True, text=True).stdout)
        stored = rec.get("config_id")
    ok = stored == p["config_id"]
    bad += not ok
    print(f'{c["index"]:3} {c["status"]:8} {c["benchmark"]:28} {c.get("runtime", ""):16} '
          + (f'planned = stored {stored[:12]}' if ok else f'planned {p["config_id"]} stored {stored}'))
print(f"{len(cells(run))} cells, {bad} whose stored config_id differs from the planned one")
sys.exit(1 if bad else 0)
PY
