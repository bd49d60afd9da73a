#include "cli/run_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/noise.h"
#include "analysis/record_fields.h"
#include "cli/eval_output.h"
#include "harness/readiness.h"
#include "pipette/gguf.h"
#include "pipette/record.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

// `v` in fixed notation with at least `min_decimals` decimals and at least three significant
// digits: 1602.34 (2 decimals), 0.000779 (6), 0 (min_decimals).
std::string Fixed(double v, int min_decimals) {
  if (!std::isfinite(v)) return "-";
  int decimals = min_decimals;
  if (v != 0) {
    decimals = std::max(decimals, 2 - static_cast<int>(std::floor(std::log10(std::abs(v)))));
  }
  return fmt::format("{:.{}f}", v, std::min(decimals, 12));
}

std::string FormatValue(double v, const std::string& unit) {
  if (unit == "bytes") return Fixed(v / (1024.0 * 1024.0), 2) + " MiB";
  if (unit == "ms") return Fixed(v, 3) + " ms";
  if (unit == "perplexity") return Fixed(v, 3);
  if (unit == "nats" || unit == "ratio") return Fixed(v, 0) + " " + unit;
  return Fixed(v, 2) + " " + unit;
}

double Number(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : std::nan("");
}

void PrintMetric(const std::string& name, const json& v, std::ostream& out) {
  const std::string unit = v.value("unit", "");
  const int n = v.value("n", 0);
  // An interval of one or two samples says nothing (the harness never counts it as reached).
  const std::string ci = n < 3 ? std::string("n < 3: no interval")
                               : FormatValue(Number(v, "ci95_low"), unit) + " .. " +
                                     FormatValue(Number(v, "ci95_high"), unit);
  out << fmt::format("{:<22} {:>18} {:>38} {:>6.1f}% {:>5}\n", name,
                     FormatValue(Number(v, "median"), unit), ci, 100.0 * v.value("cv", 0.0), n);
  if (v.contains("p99")) {
    out << fmt::format("{:<22} p50 {}  p90 {}  p99 {}\n", "", FormatValue(Number(v, "p50"), unit),
                       FormatValue(Number(v, "p90"), unit), FormatValue(Number(v, "p99"), unit));
  }
}

// Proportions (unit "ratio": accuracy, failure_rate, ...) are counts, not medians of samples: one
// line each with the count and its 95% interval; no cv.
void PrintRates(const json& metrics, std::ostream& out) {
  for (const auto& [name, v] : metrics.items()) {
    if (v.value("unit", "") != "ratio") continue;
    const double p = Number(v, "median");
    std::string line = fmt::format("{:<22} {:>6}", name, Fixed(100 * p, 1) + "%");
    if (v.contains("count") && v.contains("n")) {
      line += fmt::format(" ({} of {})", v["count"].dump(), v["n"].dump());
    }
    const double low = Number(v, "ci95_low"), high = Number(v, "ci95_high");
    if (std::isfinite(low) && std::isfinite(high)) {
      line += fmt::format("  95% CI {}% .. {}%", Fixed(100 * low, 1), Fixed(100 * high, 1));
    }
    out << line << "\n";
  }
}

// The roofline line and, below 10% of it, why a smaller quantization will not help.
void PrintRoofline(const json& r, std::ostream& out) {
  const auto eff = record::MetricValue(r, "decode_roofline_efficiency");
  if (!eff) return;
  const json device = r.value("device", json::object());
  const double bw = Number(device, "memory_bandwidth_bytes_per_s");
  // The roofline of DESIGN.md 4.3: streaming the weights once per token at the probed bandwidth.
  out << fmt::format("decode runs at {}% of the memory-bandwidth limit (reading the weights "
                     "once per token at {:.1f} GB/s, from `pipette device probe`)\n",
                     analysis::FormatNumber(100 * *eff, 2), bw / 1e9);
  if (auto note = analysis::OverheadBoundNote(r)) out << *note << "\n";
}

// "waited 1m05s for the device to be ready: other processes busy up to 0.85 > 0.30".
void PrintReadinessWait(const json& h, std::ostream& out) {
  const json timing = h.value("timing", json::object());
  const double wait_s = Number(timing, "readiness_wait_ms") / 1000;
  const std::string held = DescribeHolds(h.value("readiness", json::object()));
  if (held.empty()) return;
  out << fmt::format("waited {:.0f} s for the device to be ready: {}\n",
                     std::isfinite(wait_s) ? wait_s : 0.0, held);
}

void PrintNoise(const json& r, std::ostream& out) {
  if (auto clusters = analysis::TwoClustersNote(r)) out << *clusters << "\n";
  const std::vector<std::string> advice = analysis::NoiseAdvice(r);
  if (advice.empty()) return;
  out << "noisy: the 95% CI stayed wider than the target; to try:\n";
  for (const std::string& line : advice) out << "  - " << line << "\n";
}

}  // namespace

namespace {

// The runtime's version, with its commit where the version does not already name it:
// "0.4.0 (build 1) commit 80fb11a", "llama.cpp@80fb11a".
std::string VersionText(const json& runtime) {
  const std::string version = runtime.value("version", "");
  const std::string commit = runtime.value("commit", "");
  const std::string short_commit = commit.substr(0, 7);
  if (short_commit.empty() || version.find(short_commit) != std::string::npos) return version;
  return version + " commit " + short_commit;
}

}  // namespace

void PrintResultTable(const json& r, std::ostream& out) {
  const json m = r.value("model", json::object());
  const json runtime = r.value("runtime", json::object());
  const json s = runtime.value("settings", json::object());
  // The threads are named where the runtime has the setting (a server's are its own).
  const std::string threads =
      s.contains("threads") ? fmt::format("  threads={}", s["threads"].dump()) : "";
  out << fmt::format("{}  {}  ({} {}, {} params)  {} {}{}\n",
                     r.value("benchmark", json::object()).value("id", ""), m.value("file_name", ""),
                     m.value("architecture", ""), QuantLabel(m), m.value("params", uint64_t{0}),
                     runtime.value("name", ""), VersionText(runtime), threads);
  if (m.value("synthetic", false)) {
    out << "note: synthetic model - its numbers stand for its shape, not for any quality\n";
  }
  const json h = r.value("harness", json::object());
  if (r.value("status", "") != "ok") {
    const json f = r.value("failure", json::object());
    out << fmt::format("FAILED at {}: {}\n", f.value("stage", ""), f.value("message", ""));
    PrintReadinessWait(h, out);
    return;
  }
  out << fmt::format("{:<22} {:>18} {:>38} {:>7} {:>5}\n", "metric", "median", "95% CI of median",
                     "cv", "n");
  const json metrics = r.value("metrics", json::object());
  for (const auto& [name, v] : metrics.items()) {
    if (v.value("unit", "") != "ratio") PrintMetric(name, v, out);
  }
  PrintRates(metrics, out);
  if (analysis::BenchmarkTypeOf(r) == "memory") {
    if (auto split = analysis::ResidentSplitText(r)) out << *split << "\n";
  }
  PrintRoofline(r, out);
  const std::string target = analysis::FormatNumber(100.0 * h.value("ci_target", 0.0), 3);
  const std::string reached = h.value("ci_reached", false) ? "yes" : "no";
  if (analysis::BenchmarkTypeOf(r) == "eval") {
    PrintEvalSummary(r, out);
    out << "`pipette results show " << r.value("result_id", "")
        << "` lists every completion with its verdict\n";
  } else if (analysis::BenchmarkTypeOf(r) == "kl_divergence") {
    const double positions = Number(metrics.value("kl_divergence", json::object()), "n");
    out << fmt::format("one evaluation of {} positions (deterministic); 95% CI of the median KL "
                       "within +-{}%: {}\n",
                       positions, target, reached);
  } else {
    out << fmt::format("{} measured reps after {} warm-up; 95% CI within +-{}%: {}\n",
                       h.value("reps", 0), h.value("warmup_runs", 0), target, reached);
  }
  PrintReadinessWait(h, out);
  PrintNoise(r, out);
}

}  // namespace pipette::cli
