#!/usr/bin/env bash
# The decision funnel against the full matrix (issue 26), side by side in one run: the same
# decision file measured as a full matrix (`suite run`, then `select` with the file's limits) and
# through `pipette decide`; each one's choice and device time (the sum of its cells' wall time).
#
#   bench/decide_vs_matrix.sh DECISION.toml [OUT_DIR] [extra options for both, e.g. --no-readiness-load]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
  ""|-h|--help)
    echo "usage: bench/decide_vs_matrix.sh DECISION.toml [OUT_DIR] [--no-readiness-load ...]"
    echo "  OUT_DIR (default out/decide-vs-matrix/<name>) gets matrix.db and funnel.db, made afresh."
    exit 0 ;;
esac
file=$1; shift
[ -f "$file" ] || { echo "bench/decide_vs_matrix.sh: $file: no such decision file" >&2; exit 2; }
pipette=${PIPETTE_BUILD_DIR:-$root/build}/src/cli/pipette
name=$(python3 -c 'import sys,tomllib; print(tomllib.load(open(sys.argv[1],"rb"))["name"])' "$file")
out=$root/out/decide-vs-matrix/$name
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then out=$1; shift; fi
rm -rf "$out"; mkdir -p "$out"
# select's flags for the file's [decision.limits].
mapfile -t limits < <(python3 - "$file" <<'PY'
import sys, tomllib
l = tomllib.load(open(sys.argv[1], "rb")).get("decision", {}).get("limits", {})
flags = {"max_memory": "--max-memory", "min_decode_throughput": "--min-decode-throughput",
         "max_ttft_ms": "--max-ttft", "max_latency_ms": "--max-latency", "max_power_w": "--max-power",
         "max_energy_per_token_mj": "--max-energy-per-token", "max_quality_drop_pp": "--max-quality-drop"}
for k, v in l.items():
    if k in flags:
        print(flags[k]); print(v)
    elif k in ("min_accuracy", "max_accuracy_drop_pp"):
        for e, x in v.items():
            print("--min-accuracy" if k == "min_accuracy" else "--max-accuracy-drop"); print(f"{e}={x}")
PY
)
echo "full matrix: suite run $file" >&2
"$pipette" --store "$out/matrix.db" --json suite run "$file" --quiet --logs "$out/matrix-logs" "$@" \
  > "$out/matrix.json" || true   # a cell that cannot run (kl_divergence of the reference) is listed, not fatal
"$pipette" --store "$out/matrix.db" --json select "${limits[@]}" > "$out/select.json" || true
echo "funnel: decide $file" >&2
"$pipette" --store "$out/funnel.db" --json decide "$file" --restart --quiet "$@" > "$out/funnel.json" || true
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
matrix = json.load(open(os.path.join(out, "matrix.json")))
select = json.load(open(os.path.join(out, "select.json")))
funnel = json.load(open(os.path.join(out, "funnel.json")))
cells = [c for c in matrix["cells"] if c["status"] in ("ok", "failed")]
matrix_s = sum(c.get("seconds", 0) for c in cells)
ranked = [c for c in select["candidates"] if c.get("rank")]
def describe(c):
    s = c["settings"]
    return "%s threads=%s cpus=%s" % (c["model_file"].removesuffix(".gguf"), s.get("threads"), s.get("cpus", "-"))
matrix_choice = describe(ranked[0]) if ranked else "none"
funnel_s = sum(s["seconds"] for s in funnel["stages"])
chosen = next((c for c in funnel["configurations"] if c["stage"] == "chosen"), None)
funnel_choice = ("%s threads=%s cpus=%s" % (os.path.basename(chosen["model"]).removesuffix(".gguf"),
                 chosen["settings"].get("threads"), chosen["settings"].get("cpus", "-"))) if chosen else "none"
screen_measure = sum(s["seconds"] for s in funnel["stages"] if s["stage"] != "stabilize")
print("%-26s %-44s %10s %7s" % ("", "choice", "device s", "cells"))
print("%-26s %-44s %10.1f %7d" % ("full matrix + select", matrix_choice, matrix_s, len(cells)))
print("%-26s %-44s %10.1f %7d" % ("decide (all stages)", funnel_choice, funnel_s,
                                  sum(s["cells"] for s in funnel["stages"])))
for s in funnel["stages"]:
    print("%-26s %-44s %10.1f %7d" % ("  " + s["stage"], "", s["seconds"], s["cells"]))
print("same choice: %s; decide's screen+measure / matrix: %.2f; with stabilize: %.2f"
      % ("yes" if matrix_choice == funnel_choice else "NO", screen_measure / matrix_s, funnel_s / matrix_s))
PY
