#include "cli/compare_metrics.h"

#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "pipette/analysis.h"
#include "pipette/mann_whitney.h"
#include "pipette/stats.h"

namespace pipette::cli {

using nlohmann::json;

namespace {

// One value per repetition of `metric`. A per-token series (inter_token_latency) counts as its
// repetition's median: the tokens of one repetition are not independent samples (they share its
// machine state), and testing them one by one would report p-values of 1e-100 for noise.
std::vector<double> Samples(const json& record, const std::string& metric) {
  std::vector<double> out;
  for (const json& s : record.value("samples", json::array())) {
    if (!s.is_object() || !s.contains(metric)) continue;
    const json& v = s[metric];
    if (v.is_number()) out.push_back(v.get<double>());
    if (v.is_array()) {
      std::vector<double> tokens;
      for (const json& x : v) {
        if (x.is_number()) tokens.push_back(x.get<double>());
      }
      if (!tokens.empty()) out.push_back(Summarize(tokens).median);
    }
  }
  return out;
}

// A median as the table shows it, in the unit its column names (DisplayUnit): bytes in MiB.
std::string TableValue(double v, const std::string& unit) {
  if (unit == "bytes") return fmt::format("{:.3f}", v / (1 << 20));
  return fmt::format("{:.6g}", v);
}

std::string DisplayUnit(const std::string& unit) { return unit == "bytes" ? "MiB" : unit; }

bool HigherIsBetter(const std::string& metric) {
  return metric.ends_with("_throughput") || metric == "top1_agreement" ||
         metric == "decode_roofline_efficiency";
}

std::string Verdict(const std::string& metric, const std::string& unit, double ratio, double p,
                    const CompareOptions& o) {
  if (!(p < o.alpha) || std::abs(ratio - 1) <= o.noise) return "no significant difference";
  const bool better = HigherIsBetter(metric) ? ratio > 1 : ratio < 1;
  const bool speed = metric.ends_with("_throughput") || unit == "ms";
  if (speed) return better ? "faster" : "slower";
  return better ? "better" : "worse";
}

double MedianOrZero(const json& m) {
  return m.contains("median") && m["median"].is_number() ? m["median"].get<double>() : 0.0;
}

}  // namespace

json CompareMetrics(const json& a, const json& b, const CompareOptions& options) {
  json rows = json::array();
  const json ma_all = a.value("metrics", json::object()), mb_all = b.value("metrics", json::object());
  if (!ma_all.is_object() || !mb_all.is_object()) return rows;
  for (const auto& [metric, ma] : ma_all.items()) {
    if (!mb_all.contains(metric) || !ma.is_object() || !mb_all[metric].is_object()) continue;
    const json& mb = mb_all[metric];
    const std::vector<double> sa = Samples(a, metric), sb = Samples(b, metric);
    const double med_a = MedianOrZero(ma), med_b = MedianOrZero(mb);
    // B/A is undefined when A is 0 (null, shown "-"); the verdict then goes by the sign of B.
    const double ratio = med_a != 0                     ? med_b / med_a
                         : med_b == 0                   ? 1.0
                         : (med_b > 0) == (med_a >= 0) ? HUGE_VAL
                                                        : 0.0;
    json row = {{"metric", metric}, {"unit", ma.value("unit", "")}, {"a_median", med_a},
                {"b_median", med_b}, {"ratio", med_a != 0 ? json(ratio) : json(nullptr)},
                {"a_n", sa.size()}, {"b_n", sb.size()}};
    if (sa.size() >= 2 && sb.size() >= 2) {
      const MannWhitneyResult t = MannWhitneyU(sa, sb);
      row["p_value"] = t.p_value;
      row["verdict"] = Verdict(metric, row["unit"], ratio, t.p_value, options);
      const Interval ci = BootstrapRatioOfMediansCi(sa, sb);
      row["ratio_ci95_low"] = std::isfinite(ci.low) ? json(ci.low) : json(nullptr);
      row["ratio_ci95_high"] = std::isfinite(ci.high) ? json(ci.high) : json(nullptr);
    } else {
      row["p_value"] = nullptr;
      row["ratio_ci95_low"] = nullptr;
      row["ratio_ci95_high"] = nullptr;
      row["verdict"] = "not repeated (one value)";
    }
    rows.push_back(row);
  }
  PairAccuracyRow(a, b, options, rows);
  return rows;
}

void PairAccuracyRow(const json& a, const json& b, const CompareOptions& options, json& rows) {
  const auto paired = PairAccuracy(a, b);
  if (!paired) return;
  for (json& row : rows) {
    if (row.value("metric", "") != "accuracy") continue;
    row["test"] = "mcnemar_exact";
    row["paired"] = paired->paired;
    row["a_only_correct"] = paired->only_a;
    row["b_only_correct"] = paired->only_b;
    row["both_correct"] = paired->both_correct;
    row["both_wrong"] = paired->both_wrong;
    row["unpaired_a"] = paired->only_in_a.size();
    row["unpaired_b"] = paired->only_in_b.size();
    row["unpaired_keys_a"] = paired->only_in_a;
    row["unpaired_keys_b"] = paired->only_in_b;
    row["a_n"] = paired->paired;
    row["b_n"] = paired->paired;
    if (paired->paired == 0) {
      row["p_value"] = nullptr;
      row["verdict"] = "no attempts in common";
      continue;
    }
    row["paired_a_accuracy"] = paired->accuracy_a;
    row["paired_b_accuracy"] = paired->accuracy_b;
    row["difference_pp"] = 100 * paired->difference;
    row["difference_pp_ci95"] = {100 * paired->ci95_low, 100 * paired->ci95_high};
    row["p_value"] = paired->p_value;
    // The ratio interval of medians means nothing for one proportion per side.
    row["ratio_ci95_low"] = nullptr;
    row["ratio_ci95_high"] = nullptr;
    row["verdict"] = !(paired->p_value < options.alpha) ? "no significant difference"
                     : paired->only_b > paired->only_a ? "better"
                                                       : "worse";
  }
}

void PrintPairedAccuracy(const json& rows, std::ostream& out) {
  for (const json& r : rows) {
    if (!r.contains("test") || r["test"] != "mcnemar_exact") continue;
    const std::string where =
        r.contains("benchmark_id") ? r["benchmark_id"].get<std::string>() + " " : "";
    const size_t left = r.value("unpaired_a", size_t{0}) + r.value("unpaired_b", size_t{0});
    out << fmt::format("{}accuracy: paired test on the same attempts, {} paired by key", where,
                       r.value("paired", size_t{0}));
    if (r.value("paired", size_t{0}) > 0) {
      const json ci = r["difference_pp_ci95"];
      out << fmt::format(
          " (A {:.1f}%, B {:.1f}%; B - A {:+.1f} pp [{:+.1f}, {:+.1f}]); right only in A: {}, "
          "right only in B: {}; exact McNemar p = {:.3g}",
          100 * r["paired_a_accuracy"].get<double>(), 100 * r["paired_b_accuracy"].get<double>(),
          r["difference_pp"].get<double>(), ci[0].get<double>(), ci[1].get<double>(),
          r["a_only_correct"].get<int64_t>(), r["b_only_correct"].get<int64_t>(),
          r["p_value"].get<double>());
    }
    if (left > 0) {
      out << fmt::format("; {} unpaired attempts left out ({} only in A, {} only in B)", left,
                         r.value("unpaired_a", size_t{0}), r.value("unpaired_b", size_t{0}));
    }
    out << "\n";
  }
}

void PrintCompareTable(const json& rows, bool with_benchmark, std::ostream& out) {
  size_t bench_width = 9;
  if (with_benchmark) {
    for (const json& r : rows) bench_width = std::max(bench_width, r.value("benchmark_id", "").size());
  }
  const std::string bench_head =
      with_benchmark ? fmt::format("| {:<{}} ", "benchmark", bench_width) : "";
  std::string bench_rule;
  if (with_benchmark) bench_rule = fmt::format("|{:-<{}}", "", bench_width + 2);
  out << bench_head
      << fmt::format("| {:<36} | {:>14} | {:>14} | {:>7} | {:>16} | {:>9} | {:<26} |\n",
                     "metric", "A", "B", "B/A", "B/A 95% CI", "p", "verdict");
  out << bench_rule << "|" << std::string(38, '-') << "|" << std::string(16, '-') << "|"
      << std::string(16, '-') << "|" << std::string(9, '-') << "|" << std::string(18, '-') << "|"
      << std::string(11, '-') << "|" << std::string(28, '-') << "|\n";
  for (const json& r : rows) {
    if (with_benchmark) {
      out << fmt::format("| {:<{}} ", r.value("benchmark_id", ""), bench_width);
    }
    const json low = r.value("ratio_ci95_low", json()), high = r.value("ratio_ci95_high", json());
    const std::string ci = low.is_number() && high.is_number()
                               ? fmt::format("[{:.3f}, {:.3f}]", low.get<double>(),
                                             high.get<double>())
                               : "-";
    out << fmt::format(
        "| {:<36} | {:>14} | {:>14} | {:>7} | {:>16} | {:>9} | {:<26} |\n",
        r["metric"].get<std::string>() + " (" + DisplayUnit(r["unit"].get<std::string>()) + ")",
        TableValue(r["a_median"].get<double>(), r["unit"]),
        TableValue(r["b_median"].get<double>(), r["unit"]),
        r["ratio"].is_number() ? fmt::format("{:.3f}", r["ratio"].get<double>()) : "-", ci,
        r["p_value"].is_number() ? fmt::format("{:.3g}", r["p_value"].get<double>()) : "-",
        r["verdict"].get<std::string>());
  }
}

void PrintCompareFootnote(const CompareOptions& options, std::ostream& out) {
  out << fmt::format("A, B: the median of the samples, or the proportion for a rate (unit "
                     "ratio); B/A is \"-\" where A is 0\n"
                     "two-sided Mann-Whitney U on the raw samples (one per repetition; a "
                     "per-token series by its median); a difference needs p < {} and B/A outside "
                     "1 +- {}\n",
                     options.alpha, options.noise);
}

}  // namespace pipette::cli
