#!/usr/bin/env python3
"""The tables of docs/findings.md from a store filled by bench/findings.sh: each published claim
beside what this device measured, with 95% confidence intervals. Ratios and their intervals come
from `pipette compare` (B/A on the raw samples); nothing is computed here but formatting.

    bench/findings_tables.py PIPETTE STORE
"""
import json
import subprocess
import sys

if len(sys.argv) != 3:
    sys.exit("usage: bench/findings_tables.py PIPETTE STORE  (e.g. build/src/cli/pipette "
             "out/findings/results.db, filled by bench/findings.sh)")
PIPETTE, STORE = sys.argv[1], sys.argv[2]


def cli(*args):
    run = subprocess.run([PIPETTE, "--store", STORE, "--json", *args], capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit(f"bench/findings_tables.py: {run.stderr.strip() or 'pipette failed'}")
    return json.loads(run.stdout)


results = [r for r in cli("results", "list", "--label", "findings") if r["status"] == "ok"]


def latest(model, benchmark):
    rows = [r for r in results
            if r["model_file"].startswith(model + "-") and r["benchmark_id"] == benchmark]
    return max(rows, key=lambda r: r["started_at"]) if rows else None


def ci(r, scale=1.0, digits=1):
    if r is None:
        return "not measured"
    f = f"{{:.{digits}f}}"
    return (f"{f.format(r['headline'] * scale)} [{f.format(r['headline_ci95_low'] * scale)}, "
            f"{f.format(r['headline_ci95_high'] * scale)}]")


def ratio(a, b, metric):
    """B/A of `metric` with its 95% CI, as pipette compare gives it."""
    if a is None or b is None:
        return "not measured"
    for m in cli("compare", a["result_id"], b["result_id"])["metrics"]:
        if m["metric"] == metric:
            if m["ratio_ci95_low"] is None:
                return f"{m['ratio']:.3f}"
            return f"{m['ratio']:.3f} [{m['ratio_ci95_low']:.3f}, {m['ratio_ci95_high']:.3f}]"
    return "-"


def metric_ci(record, name, scale):
    m = record["metrics"].get(name)
    if m is None:
        return "-"
    return f"{m['median'] * scale:.2f} [{m['ci95_low'] * scale:.2f}, {m['ci95_high'] * scale:.2f}]"


GIB = 1 / 2**30

print("## (a) Decode retention from 256 to 4096 tokens of context\n")
print("| model (synthetic, Q4_K_M) | decode at 256 (tokens/s) | decode at 4096 (tokens/s) "
      "| retention 4096/256 | published retention |")
print("|---|---|---|---|---|")
for model, published in (("granite-4.0-h-350m", "78.4 %"), ("granite-4.0-350m", "33.8 %")):
    short, deep = (latest(model, "decode_throughput_256_64"),
                   latest(model, "decode_throughput_4096_64"))
    print(f"| {model} | {ci(short)} | {ci(deep)} | {ratio(short, deep, 'decode_throughput')} "
          f"| {published} |")

print("\n## (b) Mixture of experts: decode speed at 2048 tokens and peak memory\n")
print("| model (synthetic, Q4_K_M) | decode at 2048 (tokens/s) | LFM2-8B-A1B / this model "
      "| published ratio | memory cell | peak (GiB) | anonymous (GiB) | file-backed (GiB) "
      "| model file (GiB) |")
print("|---|---|---|---|---|---|---|---|---|")
moe = latest("lfm2-8b-a1b", "decode_throughput_2048_32")
for model, published in (("lfm2-8b-a1b", "1 (5.29 GiB peak)"), ("qwen3.5-4b", "2.4x"),
                         ("ministral-3-3b", "2.6x")):
    dec = latest(model, "decode_throughput_2048_32")
    mem = latest(model, "max_memory_usage_2048") or latest(model, "max_memory_usage_256")
    speedup = "1" if model == "lfm2-8b-a1b" else ratio(dec, moe, "decode_throughput")
    peak = anon = filed = size = cell = "not measured"
    if mem is not None:
        rec = cli("results", "show", mem["result_id"])
        peak = metric_ci(rec, "max_host_usage", GIB)
        anon = metric_ci(rec, "rss_anon_at_peak", GIB)
        filed = metric_ci(rec, "rss_file_at_peak", GIB)
        size = f"{rec['model']['size_bytes'] * GIB:.2f}"
        cell = mem["benchmark_id"]
    print(f"| {model} | {ci(dec, digits=2)} | {speedup} | {published} | {cell} | {peak} "
          f"| {anon} | {filed} | {size} |")

print("\n## (c) End to end, 2048 tokens in and 256 out\n")
print("| model (synthetic, Q4_K_M) | end-to-end latency (s) | published (s) |")
print("|---|---|---|")
a, b = (latest("lfm2-1.2b", "end_to_end_latency_2048_256"),
        latest("minicpm5-1b", "end_to_end_latency_2048_256"))
print(f"| lfm2-1.2b | {ci(a, 1e-3, 2)} | 4.12 (LFM2.5-1.2B) |")
print(f"| minicpm5-1b | {ci(b, 1e-3, 2)} | 3.47 |")
print(f"\nMiniCPM5-1B / LFM2-1.2B end-to-end latency: {ratio(a, b, 'end_to_end_latency')} "
      "(published: 0.842, 15.8 % sooner)")
