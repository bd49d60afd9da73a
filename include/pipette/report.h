// Reports (DESIGN.md 6 "Reports"): stored results as one self-contained HTML file with SVG charts,
// or as Markdown tables for pasting into a review. (CSV and JSONL are the store's exports,
// ExportCsv / ExportJsonl in pipette/store.h.)
//
// Both formats have the same sections, in this order; a section without data is left out and a
// one-line note says why ("no kl_divergence results: ..."):
//
//   Funnel        only with funnel states (ReportOptions::funnels: `pipette decide`'s state files,
//                 FunnelReport), one section per funnel ("Funnel: <name>"): the chosen
//                 configuration or why none was, what left where ("4 configurations: 1 left at
//                 screen, 3 at measure"), the interval confidence, a table of the configurations
//                 (where each left, or that it stayed: in / finalist / chosen, and the evidence),
//                 and the device time per stage (seconds and cells; a horizontal bar chart in HTML,
//                 a table in both). A state without a verdict yet (a funnel still running, or
//                 killed before its end) shows the cells run so far, and says so.
//   Decision      only with limits (ReportOptions::limits, those of `pipette select`): every
//                 configuration's verdict (pass, borderline, fail: each limit judged on the 95% CI
//                 of the median, Select()), its decode speed and peak memory with intervals, the
//                 reasons, and the Pareto front of those that do not fail. In every chart below,
//                 the configurations that fail are grey (class "excluded") and never on a front.
//   Summary       results read and failed, configurations, the estimates shown (one per
//                 configuration and benchmark: pooled, PoolResults, or the newest), configurations and results counted, the device(s), the time span, a notice when
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
//                 over the decode benchmarks all of them ran), y = eval accuracy (%, pass@1 with
//                 its question-clustered 95% CI) when there are eval results (the eval benchmark
//                 most configurations ran, SelectResult::quality_benchmark), else the quality
//                 score (top1_agreement x 100 of kl_divergence_<ctx> results: 100 = the same next
//                 token as the reference everywhere), both with their 95% CI as error bars, the
//                 Pareto front of (speed, memory, quality) from Select() with the limits
//                 highlighted and joined, and a notice when every two intervals overlap (the
//                 differences lie inside the noise). Needs eval or kl_divergence results, and
//                 decode results of the same configurations.
//   Results       one row per estimate (configuration and benchmark): its headline metric's
//                 median, 95% CI, repetitions, and "!" when its CI stayed wider than the harness
//                 target, with what to try and any two clusters of repetitions; notes where decode
//                 is overhead-bound; then failed results with their stage and message.
//   Provenance    per configuration: model file, SHA-256 prefix, size, quantization (QuantLabel:
//                 what the tensors hold when it differs from the label), runtime name, version and
//                 commit, settings, device id and label, harness version and commit, repetitions,
//                 and the distinct warnings its results logged (a warning every configuration
//                 logged is said once above the table).
//
// The HTML embeds its CSS and SVG; it has no scripts and loads nothing (its Content-Security-
// Policy forbids any fetch), so it works offline and from a mail attachment. Every string from a
// record is escaped (HTML / Markdown). Pure functions of their input (no clock, no I/O):
// thread-safe and deterministic.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/analysis.h"
#include "pipette/status.h"

namespace pipette {

// A decision funnel as the report shows it: what `pipette decide` writes beside the store
// (<store folder>/decide/<name>.json, schema "pipette.funnel/1"; pipette/decide.h), parsed by
// ParseFunnelState. Times are device time: the sum of the cells' wall-clock seconds.
struct FunnelReport {
  std::string name;           // the decision's name (its suite's `name`)
  std::string state_path;     // the file it was read from, as given (shown; "" when unknown)
  std::string decision_file;  // the decision TOML, absolute
  std::string store;          // the store its cells' results went to, absolute
  std::string started_at, updated_at;  // RFC 3339 UTC, as written
  // false: no verdict yet (the funnel is running, or was killed before its first verdict); the
  // configurations are then those its cells measured so far, and who left is from its log.
  bool has_verdict = false;
  // Cells run after the verdict was written: a resumed funnel still running (or killed); the
  // verdict shown is the previous run's.
  int cells_after_verdict = 0;
  std::string chosen;    // the chosen configuration's name; "" when none (yet)
  std::string why_none;  // when the verdict chose none, e.g. "no configuration meets the limits"
  bool interrupted = false;   // stopped by a signal: the same `pipette decide` command resumes it
  bool budget_spent = false;  // decision.budget_minutes ran out before every stage finished
  double confidence = 0;      // of each interval, in (0, 1); 0: unknown (no verdict)
  int screen_repetitions = 0;  // repetitions of a screen cell; 0: unknown

  struct Configuration {
    std::string name;  // short display name ("stories260K-Q8_0 threads=2")
    // out: the stage it left at, "screen", "measure" or "stabilize"; else "in" (survived
    // measure), "finalist" or "chosen" ("screen" or "measure" while the funnel runs).
    std::string stage;
    bool out = false;
    std::string reason;  // why it left, or a finalist's soak evidence; "" otherwise
    std::vector<std::string> open_limits;  // limits its intervals still cross (borderline)
    bool on_front = false;                 // on the Pareto front of the survivors
    std::string model, device;             // model file path, device URI
    nlohmann::json settings;               // runtime settings (an object)
  };
  std::vector<Configuration> configurations;  // in the funnel's order

  struct Stage {
    std::string stage;  // "screen", "measure", "stabilize"
    int cells = 0;
    double seconds = 0;  // device time of its cells
  };
  std::vector<Stage> stages;  // screen, measure, stabilize, in that order (a stage not run: 0)

  std::vector<std::string> benchmarks;          // the benchmarks the decision reads
  std::vector<std::string> benchmarks_skipped;  // the suite's others (no limit or objective)
  std::vector<std::string> notes;  // e.g. "the limits changed since the funnel started ..."
};

// `state` (a parsed state file) as a FunnelReport; `state_path` names it in errors and in the
// report. Pure. Errors (one line, "<state_path>: not a funnel state (why)", for the caller to say
// what to do): not a JSON object, a "schema" other than "pipette.funnel/1", a field of the wrong
// type.
Result<FunnelReport> ParseFunnelState(const nlohmann::json& state, const std::string& state_path);

struct ReportOptions {
  std::string title = "pipette report";
  // One line saying where the records came from, e.g. "store out/results.db, --quant Q8_0".
  std::string source;
  // When and by what the report was made, e.g. "2026-11-29T16:00:00Z" and "pipette 0.1.0
  // (commit 1234abc)"; shown as given, omitted when empty.
  std::string generated_at;
  std::string generator;
  // Hard limits, as `pipette select` takes them; with any, the report opens with a Decision
  // (after the Funnel sections, when there are any).
  Limits limits{};
  std::string limits_text{};  // the limits as given, e.g. "--max-memory 11.5MiB"
  Repeats repeats = Repeats::kPool;  // several ok results of one configuration and benchmark
  // Decision funnels to show (a Funnel section each, before everything else), in this order.
  // The caller reads them (the CLI: --funnel FILE and <store folder>/decide/*.json).
  std::vector<FunnelReport> funnels{};
};

// The HTML document (UTF-8). `records` are `pipette.result/1` records in any order (ok and
// failed; other shapes are skipped).
std::string RenderHtml(const std::vector<nlohmann::json>& records, const ReportOptions& options);

// The same content as GitHub-flavoured Markdown: headings, bullet lists and pipe tables (the
// charts' data as tables).
std::string RenderMarkdown(const std::vector<nlohmann::json>& records,
                           const ReportOptions& options);

}  // namespace pipette
