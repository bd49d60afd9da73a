#!/usr/bin/env bash
# Fuzzes every parser of outside input (issue 24): builds the harnesses of fuzz/ with clang,
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer (a build folder of its own, cached
# by ccache like the main build), runs each on a copy of its seed corpus, and prints a table:
# inputs executed, inputs per second, corpus growth, crashes, per harness.
#
#   bench/fuzz.sh [SECONDS=60] [HARNESS...]     each harness for SECONDS (all when none named)
#   bench/fuzz.sh --runs N [HARNESS...]          each for N inputs instead
#
# A crash, a leak, a sanitizer report or an input running over 10 s stops that harness; its input
# is kept in $build/artifacts/<harness>/ (reproduce: $build/fuzz/<harness> FILE), and the script
# exits 1. The corpora in fuzz/corpus/ are never written to; what the fuzzer adds stays in
# $build/corpus/<harness>/. PIPETTE_FUZZ_BUILD_DIR sets the build folder (default build-fuzz).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PIPETTE_FUZZ_BUILD_DIR:-$root/build-fuzz}
limit=(-max_total_time=60)
case "${1:-}" in
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --runs) limit=(-runs="${2:?--runs N}"); shift 2 ;;
  0) echo "fuzz.sh: SECONDS must be at least 1 (libFuzzer reads 0 as no limit)" >&2; exit 2 ;;
  ''|*[!0-9]*) ;;
  *) limit=(-max_total_time="$1"); shift ;;
esac

command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang (scripts/deps.sh --test installs it)" >&2; exit 2; }
prefix=$(bash "$root/scripts/llama.sh")
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
gen=()
command -v ninja >/dev/null && [ ! -f "$build/Makefile" ] && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DPIPETTE_FUZZ=ON -DBUILD_TESTING=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DPIPETTE_LLAMA_PREFIX="$prefix" \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build "$build" --target pipette_fuzzers -j"$(nproc)" >"$build/build.log" 2>&1 ||
  { tail -30 "$build/build.log" >&2; echo "fuzz.sh: the build failed ($build/build.log)" >&2; exit 2; }

harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
  for d in "$root"/fuzz/corpus/*/; do harnesses+=("$(basename "$d")"); done
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$root/fuzz/lsan.supp:print_suppressions=0
failed=0
printf "%-24s %12s %10s %9s %8s  %s\n" harness inputs inputs/s corpus crashes result
for h in "${harnesses[@]}"; do
  bin=$build/fuzz/$h
  [ -x "$bin" ] || { echo "fuzz.sh: no harness $h (fuzz/$h.cc)" >&2; exit 2; }
  seeds=$root/fuzz/corpus/$h
  work=$build/corpus/$h artifacts=$build/artifacts/$h log=$build/logs/$h.log
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  before=$(find "$work" -type f | wc -l)
  artifacts_before=$(find "$artifacts" -type f | wc -l)
  start=$(date +%s.%N)
  rc=0
  "$bin" "$work" "$seeds" "${limit[@]}" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || rc=$?
  seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{print e-s}')
  runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)
  runs=${runs:-0}
  after=$(find "$work" -type f | wc -l)
  crashes=$(($(find "$artifacts" -type f | wc -l) - artifacts_before))
  result=ok
  if [ "$rc" -ne 0 ]; then
    failed=1
    reason=$(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$log" | cut -c1-90 || true)
    result="FAILED (exit $rc): ${reason:-no sanitizer report (killed?)}; log $log"
    ((crashes > 0)) || crashes=1
  fi
  printf "%-24s %12s %10.0f %9s %8s  %s\n" "$h" "$runs" "$(awk -v r="$runs" -v s="$seconds" 'BEGIN{print r/s}')" \
    "$before->$after" "$crashes" "$result"
done
exit "$failed"
