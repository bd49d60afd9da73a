#include "cli/run_output.h"

#include <fmt/format.h>

#include <string>

namespace pipette::cli {
namespace {

std::string FormatValue(double v, const std::string& unit) {
  if (unit == "bytes") return fmt::format("{:.2f} MiB", v / (1024.0 * 1024.0));
  if (unit == "ms") return fmt::format("{:.3f} ms", v);
  if (unit == "nats" || unit == "ratio") return fmt::format("{:.4g} {}", v, unit);
  if (unit == "perplexity") return fmt::format("{:.3f}", v);
  return fmt::format("{:.2f} {}", v, unit);
}

}  // namespace

void PrintResultTable(const nlohmann::json& r, std::ostream& out) {
  using nlohmann::json;
  const json m = r.value("model", json::object());
  const json runtime = r.value("runtime", json::object());
  const json s = runtime.value("settings", json::object());
  out << fmt::format("{}  {}  ({} {}, {} params)  {} {}  threads={}\n",
                     r.value("benchmark", json::object()).value("id", ""), m.value("file_name", ""),
                     m.value("architecture", ""), m.value("quant", ""), m.value("params", 0),
                     runtime.value("name", ""), runtime.value("version", ""),
                     s.value("threads", 0));
  if (m.value("synthetic", false)) {
    out << "note: synthetic model - its numbers stand for its shape, not for any quality\n";
  }
  if (r.value("status", "") != "ok") {
    const json f = r.value("failure", json::object());
    out << fmt::format("FAILED at {}: {}\n", f.value("stage", ""), f.value("message", ""));
    return;
  }
  out << fmt::format("{:<22} {:>18} {:>38} {:>7} {:>5}\n", "metric", "median", "95% CI of median",
                     "cv", "n");
  const json metrics = r.value("metrics", json::object());
  for (const auto& [name, v] : metrics.items()) {
    const std::string unit = v.value("unit", "");
    const std::string ci = FormatValue(v.value("ci95_low", 0.0), unit) + " .. " +
                           FormatValue(v.value("ci95_high", 0.0), unit);
    out << fmt::format("{:<22} {:>18} {:>38} {:>6.1f}% {:>5}\n", name,
                       FormatValue(v.value("median", 0.0), unit), ci, 100.0 * v.value("cv", 0.0),
                       v.value("n", 0));
    if (v.contains("p99")) {
      out << fmt::format("{:<22} p50 {}  p90 {}  p99 {}\n", "", FormatValue(v["p50"], unit),
                         FormatValue(v["p90"], unit), FormatValue(v["p99"], unit));
    }
  }
  if (metrics.contains("decode_roofline_efficiency")) {
    const double eff = metrics["decode_roofline_efficiency"].value("median", 0.0);
    const json device = r.value("device", json::object());
    const json bw_json = device.value("memory_bandwidth_bytes_per_s", json());
    const double bw = bw_json.is_number() ? bw_json.get<double>() : 0.0;
    // The roofline of DESIGN.md 4.3: streaming the weights once per token at the probed bandwidth.
    out << fmt::format("decode runs at {:.0f}% of the memory-bandwidth limit (reading the weights "
                       "once per token at {:.1f} GB/s, from `pipette device probe`)\n",
                       100 * eff, bw / 1e9);
  }
  const json h = r.value("harness", json::object());
  out << fmt::format("{} measured reps after {} warm-up; 95% CI within +-{:.0f}%: {}\n",
                     h.value("reps", 0), h.value("warmup_runs", 0),
                     100.0 * h.value("ci_target", 0.0), h.value("ci_reached", false) ? "yes" : "no");
}

}  // namespace pipette::cli
