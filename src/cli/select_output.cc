#include "cli/select_output.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/noise.h"
#include "cli/noise_notes.h"
#include "cli/text_table.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string Joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

// At least three significant digits: 1602, 377, 11.2, 0.000779.
std::string Sig3(double v) {
  if (!std::isfinite(v)) return "-";
  if (std::abs(v) >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:#.3g}", v);
}

std::string WithInterval(const std::optional<double>& v, const std::optional<double>& low,
                         const std::optional<double>& high) {
  if (!v) return "-";
  std::string out = Sig3(*v);
  if (low && high && *low != *high) out += " [" + Sig3(*low) + ", " + Sig3(*high) + "]";
  return out;
}

constexpr double kMiB = 1024.0 * 1024.0;

// Memory with two decimals: a limit is often a few hundredths of a MiB away (11.48 vs 11.50).
std::string MiB(const std::optional<double>& v, const std::optional<double>& low,
                const std::optional<double>& high) {
  if (!v) return "-";
  std::string out = fmt::format("{:.2f}", *v / kMiB);
  if (low && high && *low != *high) {
    out += fmt::format(" [{:.2f}, {:.2f}]", *low / kMiB, *high / kMiB);
  }
  return out;
}

// The records a decision rests on, once each: those a limit was judged on, those the decode
// speed is compared over, and the memory and quality results (notes about the others, a noisy
// prefill say, would only distract from the decision).
std::vector<const json*> RecordsOf(const SelectResult& s) {
  std::vector<const json*> out;
  std::set<const json*> seen;
  for (const Candidate& c : s.candidates) {
    std::set<std::string> judged(s.speed_benchmarks.begin(), s.speed_benchmarks.end());
    for (const LimitCheck& k : c.checks) judged.insert(k.benchmark_id);
    for (const json& r : c.config->results) {
      const json b = r.value("benchmark", json::object());
      const std::string type = b.value("type", "");
      const bool relevant = judged.count(b.value("id", "")) > 0 || type == "memory" ||
                            type == "kl_divergence" || b.value("id", "") == s.quality_benchmark;
      if (relevant && seen.insert(&r).second) out.push_back(&r);
    }
  }
  return out;
}

json DecodeNotCompared(const SelectResult& s) {
  json out = json::array();
  for (const auto& [name, lacks] : s.decode_not_compared) {
    out.push_back({{"configuration", name}, {"lacks", lacks}});
  }
  return out;
}

}  // namespace

void PrintSelection(const SelectResult& s, const Limits& limits, const std::string& limits_text,
                    std::ostream& out) {
  size_t ranked = 0;
  bool synthetic = false, quality = false, noisy = false, pooled = false;
  for (const Candidate& c : s.candidates) {
    ranked += c.verdict != Verdict::kFail ? 1 : 0;
    synthetic = synthetic || c.config->synthetic;
    quality = quality || c.quality.has_value();
    noisy = noisy || c.noisy;
    pooled = pooled || c.pooled_results > 1;
  }
  if (limits.any()) {
    out << "limits: " << limits_text
        << " (pass: the whole 95% CI meets a limit; fail: it breaks it; borderline: it crosses "
           "it)\n";
  }
  if (ranked == 0) out << "no configuration meets the limits\n";

  std::vector<std::vector<std::string>> table = {
      {"RANK", "CONFIGURATION", "VERDICT", "DECODE (tokens/s, 95% CI)", "PEAK MEMORY (MiB, 95% CI)",
       s.quality_metric == "accuracy" ? "ACCURACY (%, 95% CI)" : "QUALITY (%)", "PARETO"}};
  int rank = 0;
  for (const Candidate& c : s.candidates) {
    const bool failed = c.verdict == Verdict::kFail;
    std::string name = c.config->name + (c.config->synthetic ? " *" : "");
    if (c.pooled_results > 1) name += fmt::format(" (x{})", c.pooled_results);
    if (c.noisy) name += " !";
    table.push_back({failed ? "-" : std::to_string(++rank), name,
                     limits.any() ? VerdictName(c.verdict) : "-",
                     WithInterval(c.decode_throughput, c.decode_ci95_low, c.decode_ci95_high),
                     MiB(c.peak_memory_bytes, c.peak_memory_ci95_low, c.peak_memory_ci95_high),
                     WithInterval(c.quality, c.quality_ci95_low, c.quality_ci95_high),
                     failed       ? "-"
                     : c.on_front ? "front"
                                  : "dominated by " + Joined(c.dominated_by, ", ")});
  }
  PrintTable(table, out);

  if (limits.any()) {
    out << "\n";
    for (const Candidate& c : s.candidates) {
      out << c.config->name << ": " << VerdictName(c.verdict) << "\n";
      for (const LimitCheck& check : c.checks) out << "  " << check.text << "\n";
    }
  }

  std::vector<std::string> notes;
  if (!s.speed_benchmarks.empty()) {
    notes.push_back(
        "decode: " + std::string(s.speed_benchmarks.size() > 1 ? "geometric mean of " : "") +
        Joined(s.speed_benchmarks, ", "));
  }
  if (!s.without_decode.empty() && s.without_decode.size() < s.candidates.size()) {
    notes.push_back("no decode result (speed not compared): " + Joined(s.without_decode, ", "));
  }
  for (const auto& [name, lacks] : s.decode_not_compared) {
    notes.push_back("decode not compared for " + name + ": it lacks " + Joined(lacks, ", ") +
                    ", which the others share (a mean over other shapes is not like for like)");
  }
  notes.push_back("peak memory: largest max_host_usage median");
  if (limits.any()) {
    notes.push_back(
        "each limit is judged on the configuration's worst result with its metric "
        "(named in its line), not on these columns");
  }
  if (quality && s.quality_metric == "accuracy") {
    notes.push_back("quality: eval accuracy on " + s.quality_benchmark +
                    " (pass@1 over questions x repeats, 95% CI clustered by question)");
  } else if (quality) {
    notes.push_back("quality: top-1 agreement with the kl_divergence reference");
  }
  out << "\n" << Joined(notes, "; ") << "\n";
  if (s.speed_within_noise) {
    out << "the 95% intervals of the ranked decode speeds all overlap: their order is within "
           "the noise\n";
  }
  if (noisy)
    out << "!: noisy (its 95% CI stayed wider than the harness target); what to try below\n";
  if (pooled) {
    out << "(xN): N stored results of one configuration and benchmark pooled into one estimate "
           "(--newest uses the newest alone)\n";
  }
  if (synthetic) out << "* synthetic model: its speed stands for its shape, not for any quality\n";
  // Per result: where decode time goes; then what the noisy ones call for, said once.
  std::set<std::string> said, overhead_said;
  std::vector<std::pair<std::string, json>> noisy_results;
  for (const json* r : RecordsOf(s)) {
    const std::string id = r->value("benchmark", json::object()).value("id", "");
    std::string who;
    for (const Candidate& c : s.candidates) {
      for (const json& x : c.config->results) {
        if (&x == r) who = c.config->name;
      }
    }
    std::vector<std::string> lines;
    if (analysis::IsNoisy(*r)) noisy_results.emplace_back(who, *r);
    // Where the time goes, once per configuration.
    if (!overhead_said.count(who)) {
      if (auto note = analysis::OverheadBoundNote(*r)) {
        lines.push_back(who + " " + id + ": " + *note);
        overhead_said.insert(who);
      }
    }
    for (const std::string& l : lines) {
      if (said.insert(l).second) out << l << "\n";
    }
  }
  if (noisy_results.empty()) return;
  std::vector<json> records;
  for (const auto& [who, r] : noisy_results) records.push_back(r);
  for (const std::string& l : NoiseFloorLines(records)) out << "! " << l << "\n";
  for (const std::string& l : AdviceLines(noisy_results)) out << "! " << l << "\n";
}

json SelectionJson(const SelectResult& s) {
  json candidates = json::array();
  int rank = 0;
  for (const Candidate& c : s.candidates) {
    const Configuration& cfg = *c.config;
    json checks = json::array();
    for (const LimitCheck& k : c.checks) {
      checks.push_back(
          {{"limit", k.limit},
           {"metric", k.metric},
           {"eval", k.eval.empty() ? json() : json(k.eval)},
           {"unit", k.unit},
           {"upper", k.upper},
           {"threshold", k.threshold},
           {"measured", k.measured},
           {"benchmark_id", k.benchmark_id},
           {"value", k.measured ? json(k.value) : json(nullptr)},
           {"ci95_low", k.measured ? json(k.ci95_low) : json(nullptr)},
           {"ci95_high", k.measured ? json(k.ci95_high) : json(nullptr)},
           {"n", k.n},
           {"results_pooled", k.results},
           {"noisy", k.noisy},
           {"verdict", VerdictName(k.verdict)},
           {"margin", std::isfinite(k.margin) ? json(k.margin) : json(nullptr)},
           {"factor", std::isfinite(k.factor) && k.measured ? json(k.factor) : json(nullptr)},
           {"text", k.text}});
    }
    json benchmarks = json::array();
    json notes = json::array();
    for (const json& r : cfg.results) {
      benchmarks.push_back(r["benchmark"]["id"]);
      if (auto note = analysis::OverheadBoundNote(r)) notes.push_back(*note);
      if (analysis::IsNoisy(r)) {
        json noise = {{"benchmark_id", r["benchmark"]["id"]}, {"advice", analysis::NoiseAdvice(r)}};
        if (auto clusters = analysis::TwoClustersNote(r)) noise["clusters"] = *clusters;
        notes.push_back(noise);
      }
    }
    candidates.push_back(
        {{"rank", c.verdict != Verdict::kFail ? json(++rank) : json(nullptr)},
         {"name", cfg.name},
         {"key", cfg.key},
         {"model_file", cfg.model_file},
         {"model_sha256", cfg.model_sha256},
         {"quant", cfg.quant},
         {"quant_label", cfg.quant_label},
         {"model_size_bytes", cfg.model_size_bytes},
         {"synthetic", cfg.synthetic},
         {"runtime", cfg.runtime},
         {"runtime_version", cfg.runtime_version},
         {"device_id", cfg.device_id},
         {"settings", cfg.settings},
         {"benchmarks", benchmarks},
         {"decode_throughput", Optional(c.decode_throughput)},
         {"decode_throughput_ci95", {Optional(c.decode_ci95_low), Optional(c.decode_ci95_high)}},
         {"peak_memory_bytes", Optional(c.peak_memory_bytes)},
         {"peak_memory_ci95",
          {Optional(c.peak_memory_ci95_low), Optional(c.peak_memory_ci95_high)}},
         {"quality", Optional(c.quality)},
         {"quality_ci95", {Optional(c.quality_ci95_low), Optional(c.quality_ci95_high)}},
         {"accuracy_attempts",
          s.quality_metric == "accuracy" && c.quality ? json(c.accuracy_attempts) : json()},
         {"noisy", c.noisy},
         {"results_pooled", c.pooled_results},
         {"verdict", VerdictName(c.verdict)},
         {"passed", c.verdict == Verdict::kPass},
         {"checks", checks},
         {"on_front", c.on_front},
         {"dominated_by", c.dominated_by},
         {"excluded_because", c.excluded_because},
         {"borderline_because", c.borderline_because},
         {"notes", notes}});
  }
  return {{"speed_benchmarks", s.speed_benchmarks},
          {"without_decode", s.without_decode},
          {"decode_not_compared", DecodeNotCompared(s)},
          {"speed_within_noise", s.speed_within_noise},
          {"quality_metric", s.quality_metric.empty() ? json() : json(s.quality_metric)},
          {"quality_benchmark", s.quality_benchmark.empty() ? json() : json(s.quality_benchmark)},
          {"candidates", candidates}};
}

}  // namespace pipette::cli
