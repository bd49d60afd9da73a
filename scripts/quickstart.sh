#!/usr/bin/env bash
# The main job on an embedded default, with nothing to download: builds pipette, makes a
# synthetic model of a real architecture's shape (llama, shaped like stories15M, with llama.cpp's
# SentencePiece vocabulary), quantizes it to Q8_0 and Q4_0, measures prefill and decode at three
# context lengths, end-to-end latency and peak memory on each (a suite of 24 cells), prints the
# table of results (with this machine's noise floor, from `pipette device probe`) and writes them
# as a report
# (out/quickstart/report.html: one self-contained HTML file with charts; open it in a browser).
# A synthetic model's numbers stand for its shape, not for any quality.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# Only what the quick start runs (pipette, its driver, and of llama.cpp's programs llama-quantize):
# the tests' programs and llama.cpp's other tools are built by scripts/test.sh, so a first run
# measures sooner.
PIPETTE_LLAMA_TOOLS=llama-quantize PIPETTE_BUILD_TARGETS="pipette pipette-llamacpp-driver" \
  bash scripts/build.sh
pipette=${PIPETTE_BUILD_DIR:-$root/build}/src/cli/pipette
# The commands pipette suggests are spelled `pipette ...`: say where it is, at whatever exit
# (an interrupted suite's "rerun ... to resume" hint needs it too).
command -v pipette >/dev/null ||
  trap 'echo "pipette is $pipette: export PATH=\"$(dirname "$pipette"):\$PATH\" runs the commands it suggests as they are written."' EXIT
out=${PIPETTE_QUICKSTART_DIR:-$root/out/quickstart}
store=$out/results.db
mkdir -p "$out"
base=$out/synth-stories15m-F16.gguf
[ -f "$base" ] || "$pipette" models synth --preset stories15m --ctx 2048 --seed 1 -o "$base"
models=("$base")
for q in Q8_0 Q4_0; do
  m=$out/synth-stories15m-$q.gguf
  [ -f "$m" ] || "$pipette" models quantize "$base" "$q" -o "$m"
  models+=("$m")
done
# The machine first: its memory bandwidth (the decode roofline) and its noise floor (how much its
# timing varies run to run), which every result records and the table below states once.
echo "measuring this machine: pipette device probe (memory bandwidth, noise floor; $out/device-probe.txt)"
"$pipette" device probe >"$out/device-probe.txt" 2>&1 ||
  echo "pipette device probe failed (see $out/device-probe.txt): the results will not state this machine's noise floor"
# The measurements are a suite (docs/suites.md), written next to the models: rerunning this
# script resumes it (cells already stored ok are skipped), and it can be edited and rerun with
# `pipette suite run`.
suite=$out/quickstart.toml
# One thread pinned to the last CPU this script may use: at 2 threads on a 2-vCPU VM the runtime's
# threads share CPUs with pipette itself and repetitions split into two speeds (back to back
# there: 5 of 24 cells reached their +-2% target at 2 threads unpinned, 15 of 24 at 1 thread
# pinned, in the same time). The last CPU leaves the first to interrupts and to pipette.
cpus=$(taskset -cp $$ 2>/dev/null | sed 's/.*: *//')
cpu=${cpus##*[,-]}
[[ "$cpu" =~ ^[0-9]+$ ]] || cpu=0
cat >"$suite" <<EOF
# Written by scripts/quickstart.sh: a synthetic stories15M-shaped model in three quantizations.
# Rerun or edit and rerun: pipette --store $store suite run $suite
name = "quickstart"
label = "quickstart"
benchmarks = [
  "prefill_throughput_256", "prefill_throughput_512", "prefill_throughput_1024",
  "decode_throughput_256_100", "decode_throughput_512_100", "decode_throughput_1024_100",
  "end_to_end_latency_100_256", "max_memory_usage_256",
]
$(for m in "${models[@]}"; do printf '[[models]]\npath = "%s"\n' "$(basename "$m")"; done)

[[runtimes]]
name = "llamacpp"
settings = { threads = 1, cpus = "$cpu" }   # see scripts/quickstart.sh

[harness]
max_reps = 10   # keeps the quick start short; the methodology's default is 20
EOF
# A failed cell is listed by the suite; the table and the report still show what was measured.
status=0
"$pipette" --store "$store" suite run "$suite" || status=$?
echo
"$pipette" --store "$store" results list --label quickstart --limit 24
echo
echo "Results are in $store (pipette --store $store results show ID)."
"$pipette" --store "$store" report --label quickstart --title "pipette quick start" \
  -o "$out/report.html"
echo "Report: $out/report.html"
exit "$status"
