#!/usr/bin/env bash
# The main job on real input: stories260K (../shared/data/models/stories260K) converted to F32 with
# llama.cpp's converter, quantized to Q8_0, Q4_0 and Q4_K_M, and every standard benchmark of the
# catalog that fits its 512-token context measured on each, then each quantization's quality
# against F32 (kl_divergence over the whole context). Results go to one store and are listed.
#
#   bench/stories260k.sh [STORE] [extra `pipette run` options, e.g. --threads 2]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
  -h|--help)
    echo "usage: bench/stories260k.sh [STORE] [extra \`pipette run\` options, e.g. --threads 1 --cpus 0]"
    echo "  STORE defaults to out/stories260k/results.db; the models go beside it."
    exit 0 ;;
  -*) set -- "$root/out/stories260k/results.db" "$@" ;;  # options only: the default store
esac
shared=${PIPETTE_SHARED_DIR:-$root/../shared}/data/models/stories260K
[ -f "$shared/stories260K.bin" ] || { echo "bench/stories260k.sh: $shared is absent" >&2; exit 2; }
pipette=${PIPETTE_BUILD_DIR:-$root/build}/src/cli/pipette
store=${1:-$root/out/stories260k/results.db}
shift || true
out=$(dirname "$store")
mkdir -p "$out"
f32=$out/stories260K-F32.gguf
[ -f "$f32" ] || "$pipette" models import-llama2c --model "$shared/stories260K.bin" \
  --tokenizer "$shared/tok512.bin" -o "$f32"
models=("$f32")
for q in Q8_0 Q4_0 Q4_K_M; do
  m=$out/stories260K-$q.gguf
  [ -f "$m" ] || "$pipette" models quantize "$f32" "$q" -o "$m"
  models+=("$m")
done
ctx=$("$pipette" --json models inspect "$f32" | python3 -c 'import json,sys; print(json.load(sys.stdin)["n_ctx_train"])')
# Standard speed benchmarks whose shape fits the context (P + D, or P + 1 for memory).
mapfile -t benchmarks < <("$pipette" --json benchmarks list | python3 -c '
import json, sys
ctx = int(sys.argv[1])
for b in json.load(sys.stdin):
    if b["type"] == "eval":
        continue  # quality, not a shape: examples/suites/stories260k-evals.toml
    need = b["prefill_tokens"] + (1 if b["type"] == "memory" else b.get("decode_tokens", 0))
    if need <= ctx:
        print(b["id"])
' "$ctx")
echo "stories260K: context $ctx, ${#benchmarks[@]} benchmarks x ${#models[@]} models" >&2
for m in "${models[@]}"; do
  for b in "${benchmarks[@]}"; do
    # One line per cell: what was measured and its headline with the 95% CI.
    "$pipette" --store "$store" --json run --quiet --model "$m" --benchmark "$b" \
      --label stories260k "$@" | python3 -c '
import json, sys
r = json.load(sys.stdin)
head = "%-28s %-26s" % (r["benchmark"]["id"], r["model"]["file_name"])
if r["status"] != "ok":
    f = r["failure"]
    print(head, "FAILED at %s: %s" % (f["stage"], f["message"]))
    sys.exit(0)
metric = {"prefill": "prefill_throughput", "decode": "decode_throughput",
          "e2e": "end_to_end_latency", "memory": "max_host_usage"}.get(r["benchmark"]["type"], "")
x = r["metrics"].get(metric)
if not x:
    print(head, "ok")
    sys.exit(0)
scale, unit = (1 / 1048576, "MiB") if x["unit"] == "bytes" else (1, x["unit"])
n = lambda v: "%.0f" % (v * scale) if abs(v * scale) >= 1000 else "%.4g" % (v * scale)
print(head, "%s %s %s [%s, %s]" % (metric, n(x["median"]), unit, n(x["ci95_low"]),
                                   n(x["ci95_high"])))
'
  done
done
# Quality on the device: each quantization against the F32 file over the whole context (top-1
# agreement and KL divergence; what select --max-quality-drop judges).
for m in "${models[@]:1}"; do
  "$pipette" --store "$store" --json run --quiet --model "$m" --reference "$f32" \
    --benchmark "kl_divergence_$ctx" --label stories260k "$@" | python3 -c '
import json, sys
r = json.load(sys.stdin)
head = "%-28s %-26s" % (r["benchmark"]["id"], r["model"]["file_name"])
if r["status"] != "ok":
    print(head, "FAILED at %s: %s" % (r["failure"]["stage"], r["failure"]["message"]))
    sys.exit(0)
m = r["metrics"]
a = m["top1_agreement"]
print(head, "top1_agreement %.2f%% [%.2f, %.2f], kl_divergence median %.3g nats" % (
    100 * a["median"], 100 * a["ci95_low"], 100 * a["ci95_high"], m["kl_divergence"]["median"]))
'
done
cells=$(( ${#models[@]} * ${#benchmarks[@]} + ${#models[@]} - 1 ))
"$pipette" --store "$store" results list --label stories260k --limit "$cells"
echo "Results are in $store (pipette --store $store results list)." >&2
