#!/usr/bin/env bash
# Paired, interleaved agreement with llama-bench, before and after a harness change: each round
# runs llama-bench and pipette once per variant, on the same model, threads and CPUs, so every
# pipette number has a llama-bench number from the same minutes to be divided by.
#
#   bench/agreement_paired.sh MODEL.gguf [ROUNDS] [P] [D] [REPS]
#
# VARIANTS: ;-separated lists of extra `pipette run` options (default "--spin-up 0;--spin-up 100",
# the readiness gate's idle CPU left as is vs spun up for 100 ms before each repetition).
# CPUS (default 0) pins both tools; THREADS (default 1). Prints per round and benchmark the ratio
# pipette/llama-bench of the medians (pipette's headline statistic; a mean is pulled by the slow
# repetitions llama-bench has on tiny models) and the coefficient of variation of each tool's
# repetitions, then the median ratio per variant. Odd rounds run llama-bench first, even rounds last (ABBA),
# so a machine that drifts over the minutes of a round biases neither tool: use an even ROUNDS.
# The machine's noise floor (`pipette device probe`) bounds what one ratio can resolve.
# Prefill of P tokens (default 256); decode of D (default 100) after a P-token context.
# pipette runs REPS after one warm-up repetition, each behind its readiness gate (load criterion
# waived: the other tool may still be exiting). llama-bench's own warm-up is one token of decode
# or 32 of prefill, and its first repetitions after it run slower (stories260K decode on this VM:
# 1238, 1280, 1292, 1274, 1452, then about 1540 tokens/s): so it runs LB_WARMUP (default REPS)
# more repetitions, the first LB_WARMUP of which are discarded as pipette discards its warm-up;
# the ratio to llama-bench's first REPS, as it would report them, is printed beside.
set -euo pipefail
case "${1:-}" in -h|--help|"") sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
model=$1
rounds=${2:-3}
P=${3:-256}
D=${4:-100}
reps=${5:-10}
threads=${THREADS:-1}
cpus=${CPUS:-0}
IFS=';' read -r -a variants <<<"${VARIANTS:---spin-up 0;--spin-up 100}"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PIPETTE_BUILD_DIR:-$root/build}
pipette=$build/src/cli/pipette
prefix=$(sed -n 's/^PIPETTE_LLAMA_PREFIX:PATH=//p' "$build/CMakeCache.txt")
llama_bench=$prefix/bin/llama-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

lb_warm=${LB_WARMUP:-$reps}
lb() {  # "median cv median_of_its_first_REPS": llama-bench's repetitions after LB_WARMUP discarded
  taskset -c "$cpus" "$llama_bench" -m "$model" -t "$threads" -r "$((reps + lb_warm))" -lm none -o json "$@" 2>/dev/null |
    python3 -c 'import json,sys,statistics as s; t=json.load(sys.stdin)[0]; a=t["samples_ts"]; w=int(sys.argv[1]); n=int(sys.argv[2]); x=a[w:]; print(s.median(x), s.stdev(x)/s.mean(x), s.median(a[:n]))' "$lb_warm" "$reps"
}
pp() {  # "median cv" of pipette's headline metric; $1 benchmark, $2 metric, rest: variant options
  local b=$1 m=$2; shift 2
  # shellcheck disable=SC2086
  "$pipette" --store "$work/paired.db" --json run -q --model "$model" --benchmark "$b" \
    --threads "$threads" --cpus "$cpus" --min-reps "$reps" --max-reps "$reps" \
    --no-readiness-load "$@" |
    python3 -c "import json,sys; m=json.load(sys.stdin)['metrics']['$m']; print(m['median'], m['cv'])"
}

out=$work/rows
llama_bench_pair() {
  read -r lpp lppcv lppown < <(lb -p "$P" -n 0)
  read -r ltg ltgcv ltgown < <(lb -p 0 -n "$D" -d "$P")
}
for ((r = 1; r <= rounds; r++)); do
  # Odd rounds run llama-bench first, even rounds last (ABBA): a machine that slows or speeds up
  # over minutes (a neighbour, a clock) then biases neither tool.
  ((r % 2 == 1)) && llama_bench_pair
  declare -a ppps=() pppcvs=() ptgs=() ptgcvs=()
  for v in "${!variants[@]}"; do
    # shellcheck disable=SC2086
    read -r "ppps[$v]" "pppcvs[$v]" < <(pp "prefill_throughput_$P" prefill_throughput ${variants[$v]})
    # shellcheck disable=SC2086
    read -r "ptgs[$v]" "ptgcvs[$v]" < <(pp "decode_throughput_${P}_$D" decode_throughput ${variants[$v]})
  done
  ((r % 2 == 0)) && llama_bench_pair
  for v in "${!variants[@]}"; do
    ppp=${ppps[$v]} pppcv=${pppcvs[$v]} ptg=${ptgs[$v]} ptgcv=${ptgcvs[$v]}
    echo "$r $v $lpp $lppcv $ppp $pppcv $ltg $ltgcv $ptg $ptgcv $lppown $ltgown" >>"$out"
    python3 -c 'import sys; r,v,a,acv,b,bcv,c,ccv,d,dcv=sys.argv[1:11]; print(f"round {r} [{sys.argv[11]}]: prefill {float(b)/float(a):.3f} (cv llama-bench {100*float(acv):.1f}%, pipette {100*float(bcv):.1f}%)  decode {float(d)/float(c):.3f} (cv {100*float(ccv):.1f}%, {100*float(dcv):.1f}%)")' \
      "$r" "$v" "$lpp" "$lppcv" "$ppp" "$pppcv" "$ltg" "$ltgcv" "$ptg" "$ptgcv" "${variants[$v]}" >&2
  done
done
python3 - "$out" "$(basename "$model") t=$threads cpus=$cpus reps=$reps P=$P D=$D" "${variants[@]}" <<'PY'
import random, sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
def ci(x):  # 95% bootstrap interval of the median ratio over rounds
    rng = random.Random(1)
    b = sorted(st.median(rng.choices(x, k=len(x))) for _ in range(4000))
    return f"(95% CI {b[100]:.3f}-{b[3899]:.3f})"
print(sys.argv[2])
for v, name in enumerate(sys.argv[3:]):
    sel = [list(map(float, r[2:])) for r in rows if int(r[1]) == v]
    pre = [r[2] / r[0] for r in sel]; dec = [r[6] / r[4] for r in sel]
    pre_own = [r[2] / r[8] for r in sel]; dec_own = [r[6] / r[9] for r in sel]
    print(f"  [{name}] prefill ratio median {st.median(pre):.3f} {ci(pre)} (range {min(pre):.3f}-{max(pre):.3f}), "
          f"pipette cv median {100*st.median(r[3] for r in sel):.1f}% vs llama-bench {100*st.median(r[1] for r in sel):.1f}% | "
          f"decode ratio median {st.median(dec):.3f} {ci(dec)} (range {min(dec):.3f}-{max(dec):.3f})")
    print(f"  [{name}] against llama-bench's first REPS repetitions, as it reports them (none "
          f"discarded): prefill {st.median(pre_own):.3f}, decode {st.median(dec_own):.3f}")
PY
