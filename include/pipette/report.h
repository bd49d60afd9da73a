// Reports (DESIGN.md 6 "Reports"): stored results as one self-contained HTML file with SVG charts,
// or as Markdown tables for pasting into a review. (CSV and JSONL are the store's exports,
// ExportCsv / ExportJsonl in pipette/store.h.)
//
// Both formats have the same sections, in this order; a section without data is left out and a
// one-line note says why ("no kl_divergence results: ..."):
//
//   Summary       configurations and results counted, the device(s), the time span, a notice when
//                 any model is synthetic (`pipette models synth`: its speed stands for its shape,
//                 not for any quality), how many results missed their CI target.
//   Decode throughput vs context length
//                 one curve per configuration (and per decode length D when several were run):
//                 x = the context P of decode_throughput_<P>_<D> (log axis, ticks at the measured
//                 P), y = the median decode_throughput (tokens/s) with its 95% CI (the bootstrap
//                 interval of the median, DESIGN.md 4.2) as error bars. From DecodeScaling().
//                 Needs a curve with two or more P.
//   Prefill throughput vs context length
//                 the same for prefill_throughput_<P> (PrefillScaling()).
//   Throughput per quantization
//                 grouped bars: one group per throughput benchmark (prefill, then decode), one bar
//                 per configuration (named by its quantization where that is what differs), the
//                 median with a 95% CI whisker. Prefill and decode get a chart each (their scales
//                 differ by an order of magnitude).
//   Peak memory vs model file size
//                 per configuration two bars: model.size_bytes and the peak memory (the largest
//                 max_host_usage median over its max_memory_usage_<P> results, with that result's
//                 95% CI), and in the table their ratio and the difference (KV cache, compute
//                 buffers, runtime). From MemoryAgainstSize().
//   Context-scaling retention
//                 DESIGN.md 6 derived view: decode throughput at P / decode throughput at the
//                 smallest P of the same curve (same configuration and D); 1 at the smallest P.
//                 Needs a curve with two or more P.
//   Quality vs speed
//                 a scatter of the configurations: x = decode throughput (tokens/s, geometric mean
//                 over the decode benchmarks all of them ran), y = quality score (top1_agreement x
//                 100 of kl_divergence_<ctx> results: 100 = the same next token as the reference
//                 everywhere), the Pareto front of (speed, memory, quality) from Select() without
//                 limits highlighted and joined. Needs kl_divergence results.
//   Results       one row per charted result (the newest ok result of each configuration and
//                 benchmark): its headline metric's median, 95% CI, repetitions, and "!" when
//                 its CI stayed wider than the harness target; then failed results with their
//                 stage and message.
//   Provenance    per configuration: model file, SHA-256 prefix, size, quantization, runtime name,
//                 version and commit, settings, device id and label, harness version and commit,
//                 repetitions, and the distinct warnings its results logged.
//
// The HTML embeds its CSS and SVG; it has no scripts and loads nothing (its Content-Security-
// Policy forbids any fetch), so it works offline and from a mail attachment. Every string from a
// record is escaped (HTML / Markdown). Pure functions of their input (no clock, no I/O):
// thread-safe and deterministic.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette {

struct ReportOptions {
  std::string title = "pipette report";
  // One line saying where the records came from, e.g. "store out/results.db, --quant Q8_0".
  std::string source;
  // When and by what the report was made, e.g. "2026-11-29T16:00:00Z" and "pipette 0.1.0
  // (commit 1234abc)"; shown as given, omitted when empty.
  std::string generated_at;
  std::string generator;
};

// The HTML document (UTF-8). `records` are `pipette.result/1` records in any order (ok and
// failed; other shapes are skipped).
std::string RenderHtml(const std::vector<nlohmann::json>& records, const ReportOptions& options);

// The same content as GitHub-flavoured Markdown: headings, bullet lists and pipe tables (the
// charts' data as tables).
std::string RenderMarkdown(const std::vector<nlohmann::json>& records,
                           const ReportOptions& options);

}  // namespace pipette
