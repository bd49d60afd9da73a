#!/usr/bin/env bash
# Eval attempts per hour at --parallel N = 1, 2, 4, 8 (N attempts decoded as sequences of one
# llama.cpp batch), on stories260K Q8_0 and on a synthetic SmolLM2-135M (llama-shaped, random
# weights, 2048-token context) in Q8_0 and Q4_0, MATH-500 through pipette's driver. Prints one table row per run:
# attempts, the generation time (the cell's attempts, the model's load excluded), attempts per
# hour over it and over the cell's whole wall time, the speed-up over N = 1, the attempts'
# median generation throughput and time to first token (each attempt's own while it shared the
# batch), accuracy, and how many completions differ from N = 1's. Then `pipette compare` of
# N = 4 against N = 1 per model: the paired accuracy test (exact McNemar over the attempts both
# ran) and the paired difference's interval.
#
#   bench/eval_parallel.sh [OUT_DIR]    (default out/eval-parallel; models and store go there)
#
# THREADS (default 1), CPUS (taskset -c list, default: none), NS (default "1 2 4 8"),
# MODELS (default "stories-q8 smol-q8 smol-q4"), ROUNDS (default 1: each round runs every N once,
# in order, and its speed-ups are over its own N = 1, so a machine that is busy for a while shows
# as rounds that disagree),
# STORIES_LIMIT/STORIES_REPEATS/STORIES_MAX_TOKENS (default 60/2/200),
# SMOL_LIMIT/SMOL_REPEATS/SMOL_MAX_TOKENS (default 10/2/160), TEMPERATURE (default 0.6), SEED (1),
# EXTRA (more `pipette run` options for every run, e.g. "--flash-attn off", which keeps the
# completions equal to N = 1's with THREADS > 1: docs/driver-protocol.md).
# Run it on an otherwise idle machine (`uptime`): the readiness gate does not guard evals.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/out/eval-parallel}
build=${PIPETTE_BUILD_DIR:-$root/build}
pipette=$build/src/cli/pipette
shared=${PIPETTE_SHARED_DIR:-$root/../shared}
evals=$shared/data/evals
stories=$shared/data/models/stories260K
[ -x "$pipette" ] || { echo "bench/eval_parallel.sh: no $pipette; build first (scripts/build.sh)" >&2; exit 2; }
[ -f "$evals/math500/test.jsonl" ] || { echo "bench/eval_parallel.sh: no $evals/math500/test.jsonl" >&2; exit 2; }
[ -f "$stories/stories260K.bin" ] || { echo "bench/eval_parallel.sh: no $stories" >&2; exit 2; }
threads=${THREADS:-1}
read -r -a ns <<<"${NS:-1 2 4 8}"
mkdir -p "$out"
store=$out/results.db
pin=()
[ -n "${CPUS:-}" ] && pin=(taskset -c "$CPUS")
read -r -a extra <<<"${EXTRA:-}"

f32=$out/stories260K-F32.gguf
st=$out/stories260K-Q8_0.gguf
smol=$out/smollm2-135m-Q8_0.gguf
smol4=$out/smollm2-135m-Q4_0.gguf
[ -f "$f32" ] || "$pipette" models import-llama2c --model "$stories/stories260K.bin" \
  --tokenizer "$stories/tok512.bin" -o "$f32" >/dev/null
[ -f "$st" ] || "$pipette" models quantize "$f32" Q8_0 -o "$st" >/dev/null
[ -f "$smol" ] || "$pipette" models synth --preset smollm2-135m --type Q8_0 --ctx 2048 \
  -o "$smol" >/dev/null 2>&1
[ -f "$smol4" ] || "$pipette" models synth --preset smollm2-135m --type Q4_0 --ctx 2048 \
  -o "$smol4" >/dev/null 2>&1

# stories260K loops within a few hundred bytes: the detector lowered for it, as in
# examples/suites/stories260k-evals.toml.
short_detector=(--doom-loop min_bytes=256 --doom-loop block_min_period=16 --doom-loop block_copies=2
  --doom-loop long_block_bytes=32 --doom-loop tail_bytes=16 --doom-loop tail_copies=3)

# run MODEL N ROUND LIMIT REPEATS MAX_TOKENS [extra options] -> prints the record's path
run() {
  local model=$1 n=$2 round=$3 limit=$4 repeats=$5 max=$6
  shift 6
  local rec
  rec=$out/$(basename "$model" .gguf)-p$n-r$round.json
  # A fresh checkpoint folder each time: a rerun measures, it does not resume.
  rm -rf "$out/ckpt"
  "${pin[@]}" "$pipette" --store "$store" --json run --quiet -m "$model" \
    -b eval_math_500_2026.06.1 -t "$threads" --data-dir "$evals" --limit "$limit" \
    --repeats "$repeats" --max-tokens "$max" --temperature "${TEMPERATURE:-0.6}" \
    --seed "${SEED:-1}" --parallel "$n" --checkpoint-dir "$out/ckpt" "$@" "${extra[@]}" >"$rec"
  echo "$rec"
}

table() {  # the rows of one model: records in N order, the first is the baseline
  python3 - "$@" <<'EOF'
import json, sys
recs = [json.load(open(p)) for p in sys.argv[1:]]
base = recs[0]
def texts(r):
    return {c["key"]: (c.get("completion"), c.get("stop")) for c in r["completions"]}
def med(r, m):
    x = r["metrics"].get(m)
    return x["median"] if x else float("nan")
b_rate = None
for r in recs:
    n = len(r["completions"])
    gen_s = r["harness"]["timing"]["warmup_and_measured_ms"] / 1000
    wall_s = r["harness"]["timing"]["cell_wall_ms"] / 1000
    rate = n / gen_s * 3600
    b_rate = b_rate or rate
    tb, tr = texts(base), texts(r)
    differ = sum(1 for k in tb if tb[k] != tr.get(k))
    acc = r["metrics"]["accuracy"]
    print("%-22s %3d %5d %8.1f %10.0f %10.0f %6.2fx %8.1f %8.1f %6.1f%% [%4.1f, %4.1f] %4d/%d" % (
        r["model"]["file_name"][:22], r["eval"].get("parallel", 1), n, gen_s, rate,
        n / wall_s * 3600, rate / b_rate, med(r, "generation_throughput"),
        med(r, "time_to_first_token"), 100 * acc["median"], 100 * acc["ci95_low"],
        100 * acc["ci95_high"], differ, n))
EOF
}

compare() {  # the paired accuracy row of `pipette compare` of two records
  local a b
  a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result_id"])' "$1")
  b=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result_id"])' "$2")
  "$pipette" --store "$store" --json compare "$a" "$b" 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)
for m in c["metrics"]:
    if m["metric"] == "accuracy":
        lo, hi = m["difference_pp_ci95"]
        print("  %d attempts paired (%d unpaired): both right %d, both wrong %d, only A right %d, "
              "only B right %d; %s p = %.3g; B - A = %+.1f pp, 95%% CI [%+.1f, %+.1f]: %s" % (
              m["paired"], m["unpaired_a"] + m["unpaired_b"], m["both_correct"], m["both_wrong"],
              m["a_only_correct"], m["b_only_correct"], m["test"], m["p_value"],
              m["difference_pp"], lo, hi, m["verdict"]))
'
}

echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) CPUs, threads $threads${CPUS:+, cpus $CPUS}${EXTRA:+, $EXTRA}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
header=$(printf "%-22s %3s %5s %8s %10s %10s %7s %8s %8s %22s %6s" model N tries gen_s \
  tries/h tries/h_wall speedup tok/s ttft_ms "accuracy [95% CI]" differ)
read -r -a names <<<"${MODELS:-stories-q8 smol-q8 smol-q4}"
for name in "${names[@]}"; do
  case $name in
    stories-q8) model=$st ;;
    smol-q8) model=$smol ;;
    smol-q4) model=$smol4 ;;
    *) echo "bench/eval_parallel.sh: unknown model $name (stories-q8, smol-q8, smol-q4)" >&2; exit 2 ;;
  esac
  if [ "$name" = stories-q8 ]; then
    args=("${STORIES_LIMIT:-60}" "${STORIES_REPEATS:-2}" "${STORIES_MAX_TOKENS:-200}" "${short_detector[@]}")
  else
    args=("${SMOL_LIMIT:-10}" "${SMOL_REPEATS:-2}" "${SMOL_MAX_TOKENS:-160}")
  fi
  for round in $(seq 1 "${ROUNDS:-1}"); do
    recs=()
    for n in "${ns[@]}"; do
      echo "running $(basename "$model") at --parallel $n, round $round (load $(cut -d' ' -f1 /proc/loadavg))" >&2
      recs+=("$(run "$model" "$n" "$round" "${args[@]}")")
    done
    echo
    echo "$header   (round $round)"
    table "${recs[@]}"
    for i in "${!ns[@]}"; do
      if [ "${ns[$i]}" = 4 ] && [ "$round" = 1 ]; then
        echo "compare --parallel ${ns[0]} (A) with --parallel 4 (B), accuracy paired by attempt:"
        compare "${recs[0]}" "${recs[$i]}"
      fi
    done
  done
done
