#!/usr/bin/env bash
# Agreement of pipette's prefill and decode throughput with llama.cpp's own llama-bench, built
# from the same llama.cpp tree, on the same model file and thread count, measured interleaved
# (round r: llama-bench pp, pipette prefill, llama-bench tg, pipette decode) so that drift of the
# machine affects both alike.
#
#   bench/agreement.sh MODEL.gguf [THREADS] [ROUNDS] [P] [D] [REPS]
#
# Both tools run REPS repetitions (default 20) after their own warm-up. On small models the first
# few repetitions of every new process run slower (seen with llama-bench alone: about 30% slower
# for the first 0.3 s of work), so few repetitions compare start-up transients, not throughput.
#
# Prints, per metric, llama-bench's mean tokens/s, pipette's mean tokens/s and the ratio
# pipette/llama-bench (1.00 = identical). Shapes: prefill of P tokens (default 256) from an empty
# KV cache; decode of D tokens (default 100) after a P-token context (llama-bench -n D -d P).
# CPUS=0 (a taskset list) pins both tools to the same CPUs: on some VMs one vCPU runs much slower
# than another (seen here: vCPU 1 about 30% slower than vCPU 0), so an unpinned one-thread run
# measures wherever the scheduler put it.
set -euo pipefail
model=${1:?usage: bench/agreement.sh MODEL.gguf [THREADS] [ROUNDS] [P] [D] [REPS]}
threads=${2:-2}
rounds=${3:-3}
P=${4:-256}
D=${5:-100}
reps=${6:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PIPETTE_BUILD_DIR:-$root/build}
pipette=$build/src/cli/pipette
prefix=$(sed -n 's/^PIPETTE_LLAMA_PREFIX:PATH=//p' "$build/CMakeCache.txt")
llama_bench=$prefix/bin/llama-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
store=$work/agreement.db

pin=()
[ -n "${CPUS:-}" ] && pin=(taskset -c "$CPUS")

lb() {  # llama-bench mean tokens/s for its args
  "${pin[@]}" "$llama_bench" -m "$model" -t "$threads" -r "$reps" -lm none -o json "$@" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])'
}
pp() {  # pipette mean tokens/s of a benchmark's headline metric
  "${pin[@]}" "$pipette" --store "$store" --json run -q --model "$model" --benchmark "$1" --threads "$threads" \
    --min-reps "$reps" --max-reps "$reps" | python3 -c "import json,sys; print(json.load(sys.stdin)['metrics']['$2']['mean'])"
}

rows=()
for ((r = 1; r <= rounds; r++)); do
  a=$(lb -p "$P" -n 0)
  b=$(pp "prefill_throughput_$P" prefill_throughput)
  c=$(lb -p 0 -n "$D" -d "$P")
  d=$(pp "decode_throughput_${P}_$D" decode_throughput)
  echo "round $r: prefill llama-bench $a pipette $b | decode llama-bench $c pipette $d" >&2
  rows+=("$a $b $c $d")
done
printf '%s\n' "${rows[@]}" | python3 -c '
import sys, statistics as st
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
name = sys.argv[1]
for label, i in (("prefill_throughput_" + sys.argv[2], 0), ("decode_throughput_" + sys.argv[2] + "_" + sys.argv[3], 2)):
    lb = st.mean(r[i] for r in rows); pp = st.mean(r[i + 1] for r in rows)
    print(f"{name}  {label:<28} llama-bench {lb:12.2f} tok/s  pipette {pp:12.2f} tok/s  ratio {pp / lb:.3f}")
' "$(basename "$model") t=$threads r=$reps cpus=${CPUS:-any}" "$P" "$D"
