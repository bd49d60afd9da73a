// The report: sections built once from the records (Document), then written as HTML or Markdown.
#include "pipette/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/noise.h"
#include "pipette/analysis.h"
#include "pipette/gguf.h"
#include "pipette/record.h"
#include "report/chart.h"

namespace pipette {
namespace {

using nlohmann::json;
using record::MetricValue;
using record::NumberAt;
using record::TextAt;
using report::XmlEscape;

// ---- reading records ---------------------------------------------------------------------------

// The metric a result is listed by (as store.h's HeadlineMetric, plus kl_divergence).
std::string HeadlineOf(const std::string& type) {
  if (type == "prefill") return "prefill_throughput";
  if (type == "decode") return "decode_throughput";
  if (type == "e2e" || type == "soak") return "end_to_end_latency";
  if (type == "memory") return "max_host_usage";
  if (type == "kl_divergence") return "kl_divergence";
  return {};
}

std::string Prefix(const std::string& s, size_t n) { return s.substr(0, std::min(n, s.size())); }

// ---- formatting values ---------------------------------------------------------------------------

std::string FormatBare(double v, const std::string& unit);

std::string FormatValue(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  if (unit == "bytes") return report::FormatBytes(v);
  if (unit == "ms" || unit == "tokens/s") return FormatBare(v, unit) + " " + unit;
  if (unit.empty() || unit == "ratio") return fmt::format("{:.4g}", v);
  return fmt::format("{:.4g} {}", v, unit);
}

// Without the unit, for table cells under a header that names it.
std::string FormatBare(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  if (unit == "bytes") return report::FormatBytes(v);
  // At least three significant digits: 0.0523 ms, 3.41 ms, 377.2 tokens/s.
  if (unit == "ms") return std::abs(v) >= 100 ? fmt::format("{:.2f}", v) : fmt::format("{:#.3g}", v);
  if (unit == "tokens/s") {
    return std::abs(v) >= 100 ? fmt::format("{:.1f}", v) : fmt::format("{:#.3g}", v);
  }
  return fmt::format("{:.4g}", v);
}

std::string CiText(const std::optional<double>& low, const std::optional<double>& high,
                   const std::string& unit) {
  if (!low || !high) return "-";
  return FormatBare(*low, unit) + " .. " + FormatBare(*high, unit);
}

std::string SettingsText(const json& settings) {
  if (!settings.is_object() || settings.empty()) return "defaults";
  std::string out;
  for (const auto& [key, value] : settings.items()) {
    if (!out.empty()) out += ' ';
    out += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

// "a, b, c" of the distinct non-empty values, in first-seen order.
std::string Distinct(const std::vector<std::string>& values) {
  std::vector<std::string> seen;
  for (const std::string& v : values) {
    if (!v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  }
  std::string out;
  for (const std::string& v : seen) out += (out.empty() ? "" : ", ") + v;
  return out.empty() ? "-" : out;
}

// ---- the document ----------------------------------------------------------------------------------

struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned in HTML
  std::vector<std::vector<std::string>> rows;
  std::string name{};       // HTML: the table's data-table attribute (for tests and readers)
  bool chart_data = false;  // HTML: folded under the section's charts, as "the chart's data"
};

struct Section {
  std::string id, title;
  std::string omitted;                  // non-empty: the section is only this one-line note
  std::vector<std::string> paragraphs;  // plain text
  std::vector<std::string> bullets;     // plain text
  std::string notice;                   // plain text, shown prominently
  std::vector<std::string> charts;      // SVG markup (HTML only)
  std::vector<Table> tables;
  bool tables_are_chart_data = false;   // HTML: tables folded under the charts
  bool tables_first = false;            // HTML: the (unfolded) tables before the charts
};

struct Document {
  std::string title;
  std::vector<std::string> meta;
  std::vector<Section> sections;
};

bool Noisy(const json& r) { return analysis::IsNoisy(r); }

// A curve of a scaling chart: a configuration's points for one D.
struct Curve {
  size_t config = 0;
  std::string name;
  int decode_tokens = 0;
  std::vector<ScalingPoint> points;
};

std::vector<double> DistinctPrefill(const std::vector<Curve>& curves) {
  std::set<double> ps;
  for (const Curve& c : curves) {
    for (const ScalingPoint& p : c.points) ps.insert(p.prefill_tokens);
  }
  return {ps.begin(), ps.end()};
}

bool AnyCurveOfTwo(const std::vector<Curve>& curves) {
  for (const Curve& c : curves) {
    if (c.points.size() >= 2) return true;
  }
  return false;
}

report::ChartSpec Spec(const std::string& id, const std::string& title, const std::string& x_title,
                       const std::string& y_title) {
  report::ChartSpec spec;
  spec.id = id;
  spec.title = title;
  spec.x.title = x_title;
  spec.y.title = y_title;
  return spec;
}

std::vector<Curve> DecodeCurves(const std::vector<Configuration>& configs) {
  std::vector<Curve> curves;
  std::set<int> ds;
  for (size_t i = 0; i < configs.size(); ++i) {
    for (auto& points : DecodeScaling(configs[i])) {
      if (points.empty()) continue;
      ds.insert(points.front().decode_tokens);
      curves.push_back({i, configs[i].name, points.front().decode_tokens, std::move(points)});
    }
  }
  if (ds.size() > 1) {
    for (Curve& c : curves) c.name += fmt::format(" D={}", c.decode_tokens);
  }
  return curves;
}

std::vector<Curve> PrefillCurves(const std::vector<Configuration>& configs) {
  std::vector<Curve> curves;
  for (size_t i = 0; i < configs.size(); ++i) {
    std::vector<ScalingPoint> points = PrefillScaling(configs[i]);
    if (!points.empty()) curves.push_back({i, configs[i].name, 0, std::move(points)});
  }
  return curves;
}

// The "throughput vs context" section of `curves` (decode or prefill).
Section ScalingSection(const std::string& id, const std::string& title, const std::string& metric,
                       const std::vector<Curve>& curves, bool decode,
                       const std::set<std::string>& muted, const Limits& limits) {
  Section s;
  s.id = id;
  s.title = title;
  if (curves.empty()) {
    s.omitted = fmt::format("no {} results ({}_<P>{} benchmarks).", metric, metric,
                            decode ? "_<D>" : "");
    return s;
  }
  if (!AnyCurveOfTwo(curves)) {
    s.omitted = "every configuration was measured at one context length only; see Throughput per "
                "quantization.";
    return s;
  }
  s.paragraphs.push_back(fmt::format(
      "Median {} (tokens/s) against the context length P{}, one line per configuration; the "
      "bars are the 95% confidence interval of the median (bootstrap, pipette-method/1).",
      metric, decode ? " that decoding starts from" : " (prompt tokens)"));
  std::vector<report::LineSeries> series;
  Table t{{"configuration", "P", "D", metric + " (tokens/s)", "95% CI"}, {false, true, true, true, true}, {}};
  if (decode) {
    t.header.push_back("retention");
    t.numeric.push_back(true);
  } else {
    t.header.erase(t.header.begin() + 2);
    t.numeric.erase(t.numeric.begin() + 2);
  }
  for (const Curve& c : curves) {
    report::LineSeries ls{c.name, {}};
    for (const ScalingPoint& p : c.points) {
      ls.points.push_back({static_cast<double>(p.prefill_tokens), p.median, p.ci95_low, p.ci95_high,
                           p.benchmark_id});
      std::vector<std::string> row = {c.name, std::to_string(p.prefill_tokens)};
      if (decode) row.push_back(std::to_string(p.decode_tokens));
      row.push_back(FormatBare(p.median, "tokens/s"));
      row.push_back(CiText(p.ci95_low, p.ci95_high, "tokens/s"));
      if (decode) row.push_back(fmt::format("{:.3f}", p.retention));
      t.rows.push_back(std::move(row));
    }
    series.push_back(std::move(ls));
  }
  report::ChartSpec spec = Spec(id + "-chart", title, "context length P (tokens, log scale)",
                                metric + " (tokens/s)");
  spec.muted = muted;
  if (decode && limits.min_decode_throughput) {
    spec.y_lines.push_back({*limits.min_decode_throughput,
                            fmt::format("limit {} tokens/s", *limits.min_decode_throughput)});
  }
  spec.x.log = true;
  spec.x.ticks = DistinctPrefill(curves);
  spec.y.units = report::Units::kSi;
  spec.y.include_zero = true;
  s.charts.push_back(report::LineChart(spec, series));
  s.tables.push_back(std::move(t));
  s.tables_are_chart_data = true;
  return s;
}

Section RetentionSection(const std::vector<Curve>& curves, const std::set<std::string>& muted) {
  Section s;
  s.id = "retention";
  s.title = "Context-scaling retention";
  std::vector<const Curve*> usable;
  for (const Curve& c : curves) {
    if (c.points.size() >= 2) usable.push_back(&c);
  }
  if (usable.empty()) {
    s.omitted = "needs decode_throughput results at two or more context lengths of one "
                "configuration.";
    return s;
  }
  s.paragraphs.push_back(
      "Decode throughput at context P divided by decode throughput at the smallest P measured "
      "(same configuration and D): how much speed a longer context costs. 1 = no loss.");
  std::vector<Curve> kept;
  for (const Curve* c : usable) kept.push_back(*c);
  const std::vector<double> ps = DistinctPrefill(kept);
  Table t{{"configuration"}, {false}, {}};
  for (double p : ps) {
    t.header.push_back(fmt::format("P={}", p));
    t.numeric.push_back(true);
  }
  std::vector<report::LineSeries> series;
  for (const Curve* c : usable) {
    report::LineSeries ls{c->name, {}};
    std::vector<std::string> row = {c->name};
    for (double p : ps) {
      const auto it = std::find_if(c->points.begin(), c->points.end(),
                                   [&](const ScalingPoint& sp) { return sp.prefill_tokens == p; });
      row.push_back(it == c->points.end() ? "-" : fmt::format("{:.3f}", it->retention));
    }
    for (const ScalingPoint& p : c->points) {
      ls.points.push_back({static_cast<double>(p.prefill_tokens), p.retention, {}, {}, p.benchmark_id});
    }
    t.rows.push_back(std::move(row));
    series.push_back(std::move(ls));
  }
  report::ChartSpec spec = Spec("retention-chart", s.title, "context length P (tokens, log scale)",
                                "retention (vs smallest P)");
  spec.muted = muted;
  spec.x.log = true;
  spec.x.ticks = ps;
  spec.y.include_zero = true;
  s.charts.push_back(report::LineChart(spec, series));
  s.tables.push_back(std::move(t));
  s.tables_are_chart_data = true;
  return s;
}

// One chart and table of the `type` throughput benchmarks, or nothing when none was run.
void ThroughputBars(const std::vector<Configuration>& configs, const std::string& type,
                    const std::set<std::string>& muted, const Limits& limits, Section& s) {
  const std::string metric = type + "_throughput";
  // Benchmarks by (P, D), then id.
  std::map<std::tuple<int, int, std::string>, bool> ids;
  for (const Configuration& c : configs) {
    for (const json& r : c.results) {
      if (TextAt(r, "/benchmark/type") != type || !MetricValue(r, metric, "median")) continue;
      const int p = static_cast<int>(NumberAt(r, "/benchmark/prefill_tokens").value_or(0));
      const int d = static_cast<int>(NumberAt(r, "/benchmark/decode_tokens").value_or(0));
      ids[{p, d, TextAt(r, "/benchmark/id")}] = true;
    }
  }
  if (ids.empty()) return;
  std::vector<std::string> names;
  for (const Configuration& c : configs) names.push_back(c.name);
  std::vector<report::BarGroup> groups;
  Table t{{"benchmark"}, {false}, {}};
  for (const Configuration& c : configs) {
    t.header.push_back(c.name + " (tokens/s, 95% CI)");
    t.numeric.push_back(true);
  }
  for (const auto& [key, unused] : ids) {
    const auto& [p, d, id] = key;
    report::BarGroup g{type == "decode" ? fmt::format("P={} D={}", p, d) : fmt::format("P={}", p), {}};
    std::vector<std::string> row = {id};
    for (const Configuration& c : configs) {
      const json* r = c.Find(id);
      const std::optional<double> median = r ? MetricValue(*r, metric, "median") : std::nullopt;
      if (!median) {
        g.bars.push_back(std::nullopt);
        row.push_back("-");
        continue;
      }
      const auto low = MetricValue(*r, metric, "ci95_low");
      const auto high = MetricValue(*r, metric, "ci95_high");
      g.bars.push_back(report::BarValue{*median, low, high});
      row.push_back(FormatBare(*median, "tokens/s") + " (" + CiText(low, high, "tokens/s") + ")");
    }
    groups.push_back(std::move(g));
    t.rows.push_back(std::move(row));
  }
  report::ChartSpec spec = Spec(type + "-bars", metric + " per configuration",
                                type == "decode" ? "benchmark (context P, decode length D)"
                                                 : "benchmark (prompt length P)",
                                metric + " (tokens/s)");
  spec.y.units = report::Units::kSi;
  spec.muted = muted;
  if (type == "decode" && limits.min_decode_throughput) {
    spec.y_lines.push_back({*limits.min_decode_throughput,
                            fmt::format("limit {} tokens/s", *limits.min_decode_throughput)});
  }
  s.charts.push_back(report::BarChart(spec, names, groups));
  s.tables.push_back(std::move(t));
}

Section MemorySection(const std::vector<Configuration>& configs,
                      const std::set<std::string>& muted, const Limits& limits) {
  Section s;
  s.id = "memory";
  s.title = "Peak memory vs model file size";
  std::vector<report::BarGroup> groups;
  Table t{{"configuration", "model file", "peak memory", "95% CI", "peak / file", "peak - file",
           "benchmark"},
          {false, true, true, true, true, true, false},
          {}};
  for (const Configuration& c : configs) {
    const std::optional<MemoryVsSize> m = MemoryAgainstSize(c);
    if (!m) continue;
    const json* r = c.Find(m->benchmark_id);
    std::optional<double> low, high;
    if (r) {
      low = MetricValue(*r, "max_host_usage", "ci95_low");
      high = MetricValue(*r, "max_host_usage", "ci95_high");
    }
    groups.push_back({muted.count(c.name) ? c.name + " (fails the limits)" : c.name,
                      {report::BarValue{static_cast<double>(m->file_bytes), {}, {}},
                       report::BarValue{m->peak_bytes, low, high}},
                      muted.count(c.name) > 0});
    t.rows.push_back({c.name, report::FormatBytes(static_cast<double>(m->file_bytes)),
                      report::FormatBytes(m->peak_bytes), CiText(low, high, "bytes"),
                      m->file_bytes ? fmt::format("{:.2f}", m->ratio) : "-",
                      report::FormatBytes(m->overhead_bytes), m->benchmark_id});
  }
  if (groups.empty()) {
    s.omitted = "no max_host_usage results (max_memory_usage_<P> benchmarks).";
    return s;
  }
  s.paragraphs.push_back(
      "Peak memory (the largest max_host_usage median over the max_memory_usage results, with its "
      "95% CI) beside the size of the model file: what the runtime needs beyond the weights (KV "
      "cache, compute buffers, the runtime itself).");
  report::ChartSpec spec = Spec("memory-chart", s.title, "configuration", "memory (binary units)");
  spec.y.units = report::Units::kBytes;
  if (limits.max_memory_bytes) {
    spec.y_lines.push_back({*limits.max_memory_bytes,
                            "limit " + report::FormatBytes(*limits.max_memory_bytes)});
  }
  s.charts.push_back(report::BarChart(spec, {"model file", "peak memory"}, groups));
  s.tables.push_back(std::move(t));
  s.tables_are_chart_data = false;
  return s;
}

// Speed ratios (DESIGN.md 6 derived views): every configuration against the one with the largest
// model file (the highest precision, the usual reference of a quantization), per benchmark both
// measured, on the benchmark's headline metric.
Section SpeedRatioSection(const std::vector<Configuration>& configs) {
  Section s;
  s.id = "speed-ratios";
  s.title = "Speed ratios";
  if (configs.size() < 2) {
    s.omitted = "one configuration: nothing to compare it with.";
    return s;
  }
  size_t base = 0;
  for (size_t i = 1; i < configs.size(); ++i) {
    if (configs[i].model_size_bytes > configs[base].model_size_bytes) base = i;
  }
  std::map<std::string, std::map<size_t, SpeedRatio>> by_benchmark;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (i == base) continue;
    for (const SpeedRatio& r : SpeedRatios(configs[base], configs[i])) {
      if (std::isfinite(r.ratio)) by_benchmark[r.benchmark_id][i] = r;
    }
  }
  if (by_benchmark.empty()) {
    s.omitted = "no benchmark measured on " + configs[base].name + " and another configuration.";
    return s;
  }
  Table t;
  t.header = {"benchmark", "metric", configs[base].name + " (reference)"};
  t.numeric = {false, false, true};
  std::vector<size_t> columns;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (i == base) continue;
    columns.push_back(i);
    t.header.push_back(configs[i].name);
    t.numeric.push_back(true);
  }
  for (const auto& [benchmark, ratios] : by_benchmark) {
    const SpeedRatio& any = ratios.begin()->second;
    std::vector<std::string> row = {benchmark, any.metric, FormatValue(any.base, any.unit)};
    for (size_t i : columns) {
      const auto it = ratios.find(i);
      row.push_back(it == ratios.end() ? "-" : fmt::format("{:.3f}x", it->second.ratio));
    }
    t.rows.push_back(std::move(row));
  }
  s.paragraphs.push_back(
      "Each configuration's median of the benchmark's headline metric divided by that of " +
      configs[base].name +
      " (the largest model file). Above 1 is faster for throughputs; below 1 is faster for "
      "latencies and smaller for memory. pipette compare tests whether a ratio is significant.");
  s.tables.push_back(std::move(t));
  return s;
}

// Intervals overlap pairwise: no ordering among `values` is outside the noise.
bool AllOverlap(const std::vector<std::pair<double, double>>& intervals) {
  for (const auto& a : intervals) {
    for (const auto& b : intervals) {
      if (a.second < b.first) return false;
    }
  }
  return intervals.size() > 1;
}

// The data set's title as its results record it ("IFBench", "MATH-500"); "eval" without one.
std::string EvalTitleOf(const SelectResult& sel) {
  for (const Candidate& c : sel.candidates) {
    for (const nlohmann::json& r : c.config->results) {
      if (r.value("benchmark", nlohmann::json::object()).value("id", "") != sel.quality_benchmark) {
        continue;
      }
      const nlohmann::json e = r.value("eval", nlohmann::json::object());
      if (e.is_object() && e.contains("title") && e["title"].is_string()) return e["title"];
    }
  }
  return "eval";
}

Section QualitySection(const SelectResult& sel, const std::set<std::string>& muted,
                       bool limits_given) {
  Section s;
  s.id = "quality";
  s.title = "Quality vs speed";
  bool any_quality = false;
  // The configurations that have both axes are drawn, marked with Select's verdict: a
  // configuration without a quality score never dominates one that has it (ParetoFront), so
  // whatever dominates a drawn point is drawn too. Those that fail the limits are grey and never
  // on the front (Select ranks only the others).
  std::vector<const Candidate*> drawn;
  for (const Candidate& c : sel.candidates) {
    any_quality = any_quality || c.quality.has_value();
    if (c.quality && c.decode_throughput) drawn.push_back(&c);
  }
  if (!any_quality) {
    s.omitted = "no quality metrics (the accuracy of eval results, or top1_agreement of "
                "kl_divergence_<ctx> results, which `pipette run` measures against a reference "
                "model).";
    return s;
  }
  const bool accuracy = sel.quality_metric == "accuracy";
  if (drawn.empty()) {
    s.omitted = accuracy ? "no configuration has both an eval accuracy (" +
                               sel.quality_benchmark +
                               ") and decode_throughput results in common with the others."
                         : "no configuration has both a quality score (kl_divergence) and "
                           "decode_throughput results in common with the others.";
    return s;
  }
  std::vector<report::ScatterPoint> points;
  std::vector<std::pair<double, double>> speed_ci, quality_ci;
  for (const Candidate* c : drawn) {
    report::ScatterPoint p;
    p.name = c->config->name;
    p.x = *c->decode_throughput;
    p.y = *c->quality;
    p.on_front = c->on_front;
    p.x_low = c->decode_ci95_low;
    p.x_high = c->decode_ci95_high;
    p.y_low = c->quality_ci95_low;
    p.y_high = c->quality_ci95_high;
    points.push_back(p);
    if (c->verdict == Verdict::kFail) continue;
    speed_ci.emplace_back(c->decode_ci95_low.value_or(*c->decode_throughput),
                          c->decode_ci95_high.value_or(*c->decode_throughput));
    quality_ci.emplace_back(c->quality_ci95_low.value_or(*c->quality),
                            c->quality_ci95_high.value_or(*c->quality));
  }
  std::string over;
  for (const std::string& b : sel.speed_benchmarks) over += (over.empty() ? "" : ", ") + b;
  const std::string what =
      accuracy ? fmt::format("its eval accuracy on {} (pass@1 over questions x repeats, in %; a "
                             "failed or unparsed answer counts as wrong; its interval resamples "
                             "questions)",
                             sel.quality_benchmark)
               : "its quality score (top1_agreement x 100: how often it predicts the same next "
                 "token as the reference; the reference itself scores 100)";
  s.paragraphs.push_back(fmt::format(
      "Each configuration's decode throughput (geometric mean over {}) against {}, with 95% "
      "confidence intervals on both axes. Highlighted: the "
      "Pareto front of speed, peak memory and quality among the configurations {} (no other is at "
      "least as good in all three and better in one; a configuration without a quality score is "
      "not drawn and dominates none).",
      over.empty() ? "the decode benchmarks all of them ran" : over, what,
      limits_given ? "that do not fail the limits (those that do are grey)" : "drawn"));
  const bool speed_noise = AllOverlap(speed_ci), quality_noise = AllOverlap(quality_ci);
  if (speed_noise && quality_noise) {
    s.notice = "All differences lie inside the noise: every two configurations' intervals overlap "
               "in both speed and quality, so neither axis orders them with confidence.";
  } else if (speed_noise) {
    s.notice = "The speed differences lie inside the noise: every two configurations' decode "
               "intervals overlap, so the horizontal order is not meaningful.";
  } else if (quality_noise) {
    s.notice = "The quality differences lie inside the noise: every two configurations' quality "
               "intervals overlap.";
  }
  Table t{{"configuration", "decode (tokens/s)", "95% CI",
           accuracy ? "accuracy (%)" : "quality (top1 %)", accuracy ? "95% CI" : "peak memory",
           accuracy ? "peak memory" : "Pareto front", accuracy ? "Pareto front" : "dominated by"},
          {false, true, true, true, true, accuracy, false},
          {}};
  if (accuracy) {
    t.header.push_back("dominated by");
    t.numeric.push_back(false);
  }
  for (const Candidate& c : sel.candidates) {
    const bool is_drawn = std::find(drawn.begin(), drawn.end(), &c) != drawn.end();
    std::string by;
    for (const std::string& name : c.dominated_by) by += (by.empty() ? "" : ", ") + name;
    std::vector<std::string> row = {
        c.config->name, c.decode_throughput ? FormatBare(*c.decode_throughput, "tokens/s") : "-",
        CiText(c.decode_ci95_low, c.decode_ci95_high, "tokens/s"),
        c.quality ? fmt::format("{:.2f}", *c.quality) : "-"};
    if (accuracy) {
      row.push_back(c.quality && c.quality_ci95_low && c.quality_ci95_high
                        ? fmt::format("{:.2f} .. {:.2f}", *c.quality_ci95_low,
                                      *c.quality_ci95_high)
                        : "-");
    }
    row.push_back(c.peak_memory_bytes ? report::FormatBytes(*c.peak_memory_bytes) : "-");
    row.push_back(!is_drawn                     ? "not drawn"
                  : c.verdict == Verdict::kFail ? "fails the limits"
                  : c.on_front                  ? "yes"
                                                : "no");
    row.push_back(by.empty() ? "-" : by);
    t.rows.push_back(std::move(row));
  }
  report::ChartSpec spec = Spec("quality-chart", s.title, "decode throughput (tokens/s)",
                                accuracy ? EvalTitleOf(sel) + " accuracy (%), " +
                                               sel.quality_benchmark
                                         : "quality: top1 agreement (%)");
  spec.y.ticks = {0, 20, 40, 60, 80, 100};  // the percent scale: never past 100 (issue 27)
  spec.x.units = report::Units::kSi;
  spec.muted = muted;
  s.charts.push_back(report::ParetoScatter(spec, points));
  s.tables.push_back(std::move(t));
  return s;
}

std::string Interval(const std::optional<double>& v, const std::optional<double>& low,
                     const std::optional<double>& high, const std::string& unit) {
  if (!v) return "-";
  std::string out = FormatBare(*v, unit);  // the column names the unit
  if (low && high && *low != *high) out += " [" + CiText(low, high, unit) + "]";
  return out;
}

// The decision (issue 7): every configuration judged against the limits on its 95% CIs.
Section DecisionSection(const SelectResult& sel, const ReportOptions& o) {
  Section s;
  s.id = "decision";
  s.title = "Decision";
  size_t pass = 0, borderline = 0, fail = 0;
  std::vector<std::string> shortlist;
  for (const Candidate& c : sel.candidates) {
    if (c.verdict == Verdict::kPass) ++pass;
    if (c.verdict == Verdict::kBorderline) ++borderline;
    if (c.verdict == Verdict::kFail) ++fail;
    if (c.verdict != Verdict::kFail && c.on_front) {
      shortlist.push_back(c.config->name + (c.verdict == Verdict::kBorderline ? " (borderline)" : ""));
    }
  }
  s.paragraphs.push_back(
      "Limits: " + o.limits_text +
      ". Each limit is judged on the 95% confidence interval of the median: pass when the whole "
      "interval meets it, fail when the whole interval breaks it, borderline when it crosses it "
      "(then more repetitions decide). A limit is checked against every result with its metric "
      "(the worst counts); a configuration that did not measure it fails.");
  std::string front;
  for (const std::string& n : shortlist) front += (front.empty() ? "" : ", ") + n;
  s.notice = pass + borderline == 0
                 ? fmt::format("No configuration meets the limits ({} fail).", fail)
                 : fmt::format("{} pass, {} borderline, {} fail. On the Pareto front of those that "
                               "do not fail: {}.",
                               pass, borderline, fail, front.empty() ? "-" : front);
  Table t{{"configuration", "verdict", "decode (tokens/s)", "peak memory",
           sel.quality_metric == "accuracy" ? "accuracy (%)" : "quality (top1 %)",
           "Pareto front", "why"},
          {false, false, true, true, true, false, false},
          {}};
  for (const Candidate& c : sel.candidates) {
    std::string why;
    for (const LimitCheck& k : c.checks) why += (why.empty() ? "" : "; ") + k.text;
    std::string name = c.config->name;
    if (c.pooled_results > 1) name += fmt::format(" (x{})", c.pooled_results);
    if (c.noisy) name += " !";
    t.rows.push_back(
        {name, VerdictName(c.verdict),
         Interval(c.decode_throughput, c.decode_ci95_low, c.decode_ci95_high, "tokens/s"),
         Interval(c.peak_memory_bytes, c.peak_memory_ci95_low, c.peak_memory_ci95_high, "bytes"),
         c.quality ? fmt::format("{:.2f}", *c.quality) : "-",
         c.verdict == Verdict::kFail ? "-"
         : c.on_front                ? "yes"
                                     : "dominated by " + [&] {
                                         std::string by;
                                         for (const std::string& n : c.dominated_by) {
                                           by += (by.empty() ? "" : ", ") + n;
                                         }
                                         return by;
                                       }(),
         why.empty() ? "-" : why});
  }
  s.tables.push_back(std::move(t));
  std::string over;
  for (const std::string& b : sel.speed_benchmarks) over += (over.empty() ? "" : ", ") + b;
  s.bullets.push_back(
      "decode: " + (over.empty() ? std::string("-") : "geometric mean over " + over) +
      "; peak memory: the largest max_host_usage median. Each limit is judged on the "
      "configuration's worst result with its metric, named under why, not on these columns.");
  bool pooled = false, noisy = false;
  for (const Candidate& c : sel.candidates) {
    pooled = pooled || c.pooled_results > 1;
    noisy = noisy || c.noisy;
  }
  if (pooled) {
    s.bullets.push_back("(xN): N stored results of one configuration and benchmark pooled into "
                        "one estimate.");
  }
  if (noisy) {
    s.bullets.push_back("!: a result it rests on is noisy (see Results for what to try).");
  }
  if (sel.speed_within_noise) {
    s.bullets.push_back("The 95% intervals of the decode speeds of the configurations that do not "
                        "fail all overlap: their speed order is within the noise.");
  }
  return s;
}

// ---- the decision funnel (pipette decide) ------------------------------------------------------

// "53.2 s", "2 min 14 s", "1 h 05 min": device time for people.
std::string Seconds(double s) {
  if (!std::isfinite(s) || s < 0) return "-";
  if (s < 100) return fmt::format("{:.1f} s", s);
  const long long whole = std::llround(s);
  if (whole < 3600) return fmt::format("{} min {:02d} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02d} min", whole / 3600, (whole % 3600) / 60);
}

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

bool IsStage(const std::string& s) { return s == "screen" || s == "measure" || s == "stabilize"; }

// Where a configuration that stayed stands: "in", "finalist", "chosen", or "still in" while the
// funnel runs (or after it was interrupted: its stage is then the one it was in).
std::string Stayed(const FunnelReport::Configuration& c) {
  return IsStage(c.stage) || c.stage.empty() ? "still in" : c.stage;
}

// Where a configuration stands, in words: "left at screen", "chosen", "still in (measure)".
std::string Outcome(const FunnelReport::Configuration& c) {
  if (c.out) return "left at " + c.stage;
  if (IsStage(c.stage)) return "still in (" + c.stage + ")";
  return Stayed(c);
}

// "4 configurations: 1 left at screen, 2 at measure, 1 chosen": who left where, then who stayed.
std::string LeftWhere(const FunnelReport& f) {
  std::vector<std::string> parts;
  bool said_left = false;
  for (const char* stage : {"screen", "measure", "stabilize"}) {
    const auto n = std::count_if(f.configurations.begin(), f.configurations.end(),
                                 [&](const auto& c) { return c.out && c.stage == stage; });
    if (n == 0) continue;
    parts.push_back(fmt::format("{} {}at {}", n, said_left ? "" : "left ", stage));
    said_left = true;
  }
  std::map<std::string, size_t> stayed;
  std::vector<std::string> order;
  for (const auto& c : f.configurations) {
    if (c.out) continue;
    const std::string what = Stayed(c);
    if (!stayed.count(what)) order.push_back(what);
    ++stayed[what];
  }
  // The verdict's words in the funnel's order: in, then finalists, then the chosen one.
  const std::vector<std::string> rank = {"still in", "in", "finalist", "chosen"};
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return std::find(rank.begin(), rank.end(), a) < std::find(rank.begin(), rank.end(), b);
  });
  for (const std::string& what : order) {
    const size_t n = stayed[what];
    parts.push_back(what == "finalist" && n > 1 ? fmt::format("{} finalists", n)
                                                : fmt::format("{} {}", n, what));
  }
  const size_t total = f.configurations.size();
  return fmt::format("{} configuration{}{}{}.", total, total == 1 ? "" : "s",
                     parts.empty() ? "" : ": ", Join(parts));
}

Section FunnelSection(const FunnelReport& f, size_t index) {
  Section s;
  s.id = index == 0 ? "funnel" : fmt::format("funnel-{}", index + 1);
  s.title = "Funnel: " + (f.name.empty() ? f.state_path : f.name);
  s.tables_first = true;
  if (!f.has_verdict) {
    s.notice = "No verdict yet: the funnel is still running, or was stopped before it finished "
               "(run the same `pipette decide` command to resume). Shown: the configurations its "
               "cells measured so far.";
  } else if (!f.chosen.empty()) {
    s.notice = "Chosen: " + f.chosen + ".";
  } else if (f.interrupted) {
    s.notice = "Interrupted before a choice: run the same `pipette decide` command to resume.";
  } else {
    s.notice = "No configuration chosen: " + (f.why_none.empty() ? "-" : f.why_none) + ".";
  }
  std::string where = f.decision_file.empty() ? "The decision funnel"
                                              : "The decision funnel of " + f.decision_file;
  if (!f.state_path.empty()) where += " (state " + f.state_path + ")";
  s.paragraphs.push_back(
      where + (f.updated_at.empty() ? "" : ", last written " + f.updated_at) +
      ": screen (every configuration on the cheapest benchmark of each judged metric), measure "
      "(the survivors on every benchmark of the decision, to the harness's CI target), stabilize "
      "(the finalists under a soak). A configuration leaves as soon as its intervals show it "
      "fails a limit or is dominated.");
  s.paragraphs.push_back(LeftWhere(f));
  if (f.confidence > 0) {
    std::string text = fmt::format(
        "Each interval at {:.4g}% confidence (the decision's alpha shared out over every "
        "configuration, metric and look){}.",
        100 * f.confidence,
        f.screen_repetitions > 0 ? fmt::format("; screen cells of {} repetitions",
                                               f.screen_repetitions)
                                 : "");
    if (!f.benchmarks.empty()) text += " Decided on " + Join(f.benchmarks) + ".";
    if (!f.benchmarks_skipped.empty()) {
      text += " Not measured (no limit or objective reads them): " + Join(f.benchmarks_skipped) +
              ".";
    }
    s.paragraphs.push_back(text);
  }
  if (f.interrupted && !f.chosen.empty()) {
    s.bullets.push_back("Interrupted: run the same `pipette decide` command to resume.");
  }
  if (f.cells_after_verdict > 0) {
    s.bullets.push_back(fmt::format(
        "{} cell{} ran after this verdict was written (a resumed funnel, still running or "
        "stopped): the verdict is the previous run's; the device time counts every cell.",
        f.cells_after_verdict, f.cells_after_verdict == 1 ? "" : "s"));
  }
  if (f.budget_spent) {
    s.bullets.push_back("The device-time budget (decision.budget_minutes) ran out before every "
                        "stage finished.");
  }
  for (const std::string& n : f.notes) {
    s.bullets.push_back("Note: " + n + (n.empty() || n.back() != '.' ? "." : ""));
  }

  Table t{{"configuration", "outcome", "why"}, {false, false, false}, {}};
  t.name = "funnel-configurations";
  for (const FunnelReport::Configuration& c : f.configurations) {
    std::vector<std::string> why;
    if (!c.reason.empty()) why.push_back(c.reason);
    if (!c.out && !c.open_limits.empty()) why.push_back("borderline: " + Join(c.open_limits, "; "));
    if (!c.out && c.on_front) why.push_back("on the Pareto front of the survivors");
    t.rows.push_back({c.name, Outcome(c), why.empty() ? "-" : Join(why, "; ")});
  }
  s.tables.push_back(std::move(t));

  // Device time per stage: a bar each, its seconds and cells at the end.
  double total = 0, longest = 0;
  int cells = 0;
  for (const FunnelReport::Stage& st : f.stages) {
    total += st.seconds;
    cells += st.cells;
    longest = std::max(longest, st.seconds);
  }
  // The axis in the unit that keeps its numbers short.
  const double unit = longest >= 7200 ? 3600 : longest >= 120 ? 60 : 1;
  const char* unit_name = unit == 3600 ? "h" : unit == 60 ? "min" : "s";
  Table times{{"stage", "left here", "cells", "device time", "share"},
              {false, true, true, true, true},
              {}};
  times.name = "funnel-stages";
  times.chart_data = true;
  std::vector<report::HBar> bars;
  for (const FunnelReport::Stage& st : f.stages) {
    const auto left = std::count_if(f.configurations.begin(), f.configurations.end(),
                                    [&](const auto& c) { return c.out && c.stage == st.stage; });
    const std::string cells_text = fmt::format("{} cell{}", st.cells, st.cells == 1 ? "" : "s");
    bars.push_back({st.stage, st.seconds / unit,
                    st.cells == 0 ? "not run" : Seconds(st.seconds) + ", " + cells_text});
    times.rows.push_back({st.stage, std::to_string(left), std::to_string(st.cells),
                          Seconds(st.seconds),
                          total > 0 ? fmt::format("{:.0f}%", 100 * st.seconds / total) : "-"});
  }
  times.rows.push_back({"total", std::to_string(std::count_if(
                                     f.configurations.begin(), f.configurations.end(),
                                     [](const auto& c) { return c.out; })),
                        std::to_string(cells), Seconds(total), total > 0 ? "100%" : "-"});
  report::ChartSpec spec = Spec(s.id + "-time", "Device time per stage",
                                fmt::format("device time ({})", unit_name), "");
  s.charts.push_back(report::HorizontalBarChart(spec, bars));
  s.paragraphs.push_back(fmt::format("Device time {} over {} cell{}, per stage below.",
                                     Seconds(total), cells, cells == 1 ? "" : "s"));
  s.tables.push_back(std::move(times));
  return s;
}

std::string DeviceText(const json& r) {
  std::vector<std::string> parts;
  const std::string label = TextAt(r, "/device/label");
  std::string head = Prefix(TextAt(r, "/device/id"), 12);
  if (!label.empty()) head += " (" + label + ")";
  parts.push_back(head);
  const std::string cpu = TextAt(r, "/device/cpu/model");
  const auto cores = NumberAt(r, "/device/cpu/logical_cores");
  if (!cpu.empty()) parts.push_back(cpu + (cores ? fmt::format(", {} logical cores", *cores) : ""));
  if (auto mem = NumberAt(r, "/device/memory_bytes")) {
    parts.push_back(report::FormatBytes(*mem) + " memory");
  }
  const std::string os = TextAt(r, "/device/os/pretty_name");
  if (!os.empty()) parts.push_back(os + " " + TextAt(r, "/device/os/arch"));
  if (const json* gpus = record::Find(r, "/device/gpus"); gpus != nullptr && gpus->is_array()) {
    for (const json& g : *gpus) {
      const std::string name = g.is_object() ? TextAt(g, "/name") : std::string();
      if (!name.empty()) parts.push_back("GPU " + name);
    }
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

Document Build(const std::vector<json>& all, const ReportOptions& o) {
  std::vector<json> records;
  for (const json& r : all) {
    if (r.is_object() && r.contains("status") && r["status"].is_string()) records.push_back(r);
  }
  const std::vector<Configuration> configs = GroupConfigurations(records, o.repeats);
  const SelectResult sel = Select(configs, o.limits);
  // Configurations that fail the limits, by their names and the names of their curves.
  std::set<std::string> muted;
  std::vector<bool> failed_config(configs.size(), false);
  if (o.limits.any()) {
    for (const Candidate& c : sel.candidates) {
      if (c.verdict != Verdict::kFail) continue;
      muted.insert(c.config->name);
      failed_config[static_cast<size_t>(c.config - configs.data())] = true;
    }
  }
  Document doc;
  doc.title = o.title;
  if (!o.source.empty()) doc.meta.push_back("Results from " + o.source + ".");
  if (!o.generated_at.empty() || !o.generator.empty()) {
    doc.meta.push_back("Generated" + (o.generated_at.empty() ? "" : " " + o.generated_at) +
                       (o.generator.empty() ? "" : " by " + o.generator) + ".");
  }

  for (size_t i = 0; i < o.funnels.size(); ++i) {
    doc.sections.push_back(FunnelSection(o.funnels[i], i));
  }
  if (o.limits.any() && !configs.empty()) doc.sections.push_back(DecisionSection(sel, o));

  // Summary.
  Section sum;
  sum.id = "summary";
  sum.title = "Summary";
  size_t charted = 0, noisy = 0, failed = 0;
  for (const Configuration& c : configs) {
    charted += c.results.size();
    for (const json& r : c.results) noisy += Noisy(r);
  }
  std::vector<const json*> failures;
  for (const json& r : records) {
    if (r["status"] != "ok") {
      ++failed;
      failures.push_back(&r);
    }
  }
  size_t pooled = 0;
  for (const Configuration& c : configs) {
    for (const json& r : c.results) pooled += r.contains("pooled") ? 1 : 0;
  }
  sum.bullets.push_back(fmt::format(
      "{} result{} ({} failed) in {} configuration{} (model file + quantization + runtime + "
      "settings + device): {} estimate{} shown, one per configuration and benchmark ({}).",
      records.size(), records.size() == 1 ? "" : "s", failed, configs.size(),
      configs.size() == 1 ? "" : "s", charted, charted == 1 ? "" : "s",
      o.repeats == Repeats::kNewest
          ? "the newest ok result of each"
          : pooled ? fmt::format("{} of them pool the repetitions of several ok results", pooled)
                   : "each from one ok result"));
  std::map<std::string, std::string> devices;
  std::set<std::string> runtimes;
  std::string first, last;
  for (const json& r : records) {
    const std::string id = TextAt(r, "/device/id");
    if (!devices.count(id)) devices[id] = DeviceText(r);
    const std::string rt = TextAt(r, "/runtime/name");
    if (!rt.empty()) {
      runtimes.insert(rt + " " + TextAt(r, "/runtime/version") + " (commit " +
                      Prefix(TextAt(r, "/runtime/commit"), 12) + ")");
    }
    const std::string started = TextAt(r, "/started_at");
    const std::string finished =
        TextAt(r, "/finished_at").empty() ? started : TextAt(r, "/finished_at");
    if (!started.empty() && (first.empty() || started < first)) first = started;
    if (!finished.empty() && finished > last) last = finished;
  }
  for (const auto& [id, text] : devices) {
    sum.bullets.push_back((devices.size() == 1 ? "Device: " : "Device ") + text + ".");
  }
  for (const std::string& rt : runtimes) sum.bullets.push_back("Runtime: " + rt + ".");
  if (!first.empty()) sum.bullets.push_back("Measured from " + first + " to " + last + " (UTC).");
  if (noisy) {
    sum.bullets.push_back(fmt::format(
        "{} result{} marked ! kept a 95% CI wider than the harness target: noisy measurements "
        "(Results says what to try for each).",
        noisy, noisy == 1 ? "" : "s"));
  }
  std::vector<std::string> synthetic;
  for (const Configuration& c : configs) {
    if (c.synthetic && std::find(synthetic.begin(), synthetic.end(), c.model_file) == synthetic.end()) {
      synthetic.push_back(c.model_file);
    }
  }
  if (!synthetic.empty()) {
    std::string files;
    for (const std::string& f : synthetic) files += (files.empty() ? "" : ", ") + f;
    sum.notice = fmt::format(
        "Synthetic model{}: {}. A synthetic model has a real architecture's shape with random "
        "weights: its speed and memory stand for that shape, not for any model's quality.",
        synthetic.size() == 1 ? "" : "s", files);
  }
  doc.sections.push_back(std::move(sum));

  if (configs.empty()) {
    Section none;
    none.id = "charts";
    none.title = "Charts";
    none.omitted = "no ok results to chart.";
    doc.sections.push_back(std::move(none));
  } else {
    const std::vector<Curve> decode = DecodeCurves(configs);
    const std::vector<Curve> prefill = PrefillCurves(configs);
    for (const std::vector<Curve>* curves : {&decode, &prefill}) {
      for (const Curve& c : *curves) {
        if (failed_config[c.config]) muted.insert(c.name);
      }
    }
    doc.sections.push_back(ScalingSection("decode-scaling", "Decode throughput vs context length",
                                          "decode_throughput", decode, true, muted, o.limits));
    doc.sections.push_back(ScalingSection("prefill-scaling", "Prefill throughput vs context length",
                                          "prefill_throughput", prefill, false, muted, o.limits));
    Section bars;
    bars.id = "throughput";
    bars.title = "Throughput per quantization";
    ThroughputBars(configs, "prefill", muted, o.limits, bars);
    ThroughputBars(configs, "decode", muted, o.limits, bars);
    if (bars.charts.empty()) {
      bars.omitted = "no prefill_throughput or decode_throughput results.";
    } else {
      bars.paragraphs.push_back(
          "Median throughput of each benchmark, one bar per configuration, with the 95% "
          "confidence interval of the median as whiskers.");
    }
    doc.sections.push_back(std::move(bars));
    doc.sections.push_back(SpeedRatioSection(configs));
    doc.sections.push_back(MemorySection(configs, muted, o.limits));
    doc.sections.push_back(RetentionSection(decode, muted));
    doc.sections.push_back(QualitySection(sel, muted, o.limits.any()));
    if (!muted.empty()) {
      for (Section& sec : doc.sections) {
        if (!sec.charts.empty() && sec.id != "quality") {
          sec.paragraphs.push_back("Grey: configurations that fail the limits (see Decision).");
        }
      }
    }
  }

  // Results.
  Section res;
  res.id = "results";
  res.title = "Results";
  if (charted) {
    Table t{{"configuration", "benchmark", "metric", "median", "95% CI", "reps", "started (UTC)"},
            {false, false, false, true, true, true, false},
            {}};
    for (const Configuration& c : configs) {
      for (const json& r : c.results) {
        const std::string metric = HeadlineOf(TextAt(r, "/benchmark/type"));
        const std::string unit = TextAt(r, "/metrics/" + metric + "/unit");
        const auto median = MetricValue(r, metric, "median");
        const auto reps = NumberAt(r, "/harness/reps");
        t.rows.push_back({c.name, TextAt(r, "/benchmark/id"), metric.empty() ? "-" : metric,
                          median ? FormatValue(*median, unit) + (Noisy(r) ? " !" : "") : "-",
                          CiText(MetricValue(r, metric, "ci95_low"),
                                 MetricValue(r, metric, "ci95_high"), unit),
                          reps ? fmt::format("{}", *reps) : "-", TextAt(r, "/started_at")});
        // Quality results: their agreement is the number a reader looks for.
        if (auto top1 = MetricValue(r, "top1_agreement", "median")) {
          t.rows.push_back({c.name, TextAt(r, "/benchmark/id"), "top1_agreement",
                            fmt::format("{:.2f}%", 100 * *top1), "-",
                            reps ? fmt::format("{}", *reps) : "-", TextAt(r, "/started_at")});
        }
      }
    }
    res.tables.push_back(std::move(t));
    if (noisy) {
      res.paragraphs.push_back("! the 95% CI of the median stayed wider than the harness target.");
    }
    // What the noisy results call for, said once for all of them (analysis::GroupNoiseAdvice),
    // after the noise floor of their devices.
    std::vector<json> noisy_records;
    std::vector<std::string> noisy_names;
    for (const Configuration& c : configs) {
      for (const json& r : c.results) {
        if (!analysis::IsNoisy(r)) continue;
        noisy_records.push_back(r);
        noisy_names.push_back(c.name + " " + TextAt(r, "/benchmark/id"));
      }
    }
    if (!noisy_records.empty()) {
      for (const std::string& line : analysis::NoiseFloorNotes(noisy_records, "")) {
        res.bullets.push_back(line);
      }
      const analysis::GroupedAdvice advice = analysis::GroupNoiseAdvice(noisy_records);
      if (!advice.common.empty()) {
        res.bullets.push_back(fmt::format("! {} noisy result{}: try {}", noisy_records.size(),
                                          noisy_records.size() == 1 ? "" : "s",
                                          analysis::JoinAdvice(advice.common)));
      }
      for (size_t i = 0; i < noisy_records.size(); ++i) {
        if (!advice.own[i].empty()) {
          res.bullets.push_back("! " + noisy_names[i] + ": " + analysis::JoinAdvice(advice.own[i]));
        }
      }
    }
    for (const Configuration& c : configs) {
      bool overhead_said = false;
      for (const json& r : c.results) {
        const std::string id = TextAt(r, "/benchmark/id");
        // Where the time goes, once per configuration: its first decode benchmark says it.
        if (!overhead_said && TextAt(r, "/benchmark/type") == "decode") {
          if (auto note = analysis::OverheadBoundNote(r)) {
            res.bullets.push_back(c.name + " " + id + ": " + *note);
            overhead_said = true;
          }
        }
      }
    }
  }
  if (!failures.empty()) {
    Table f{{"model", "quant", "benchmark", "stage", "message", "started (UTC)"},
            {false, false, false, false, false, false},
            {}};
    for (const json* r : failures) {
      f.rows.push_back({TextAt(*r, "/model/file_name"),
                        r->contains("model") ? QuantLabel((*r)["model"]) : std::string("-"),
                        TextAt(*r, "/benchmark/id"),
                        TextAt(*r, "/failure/stage"), TextAt(*r, "/failure/message"),
                        TextAt(*r, "/started_at")});
    }
    res.paragraphs.push_back(fmt::format("Failed results ({}):", failures.size()));
    res.tables.push_back(std::move(f));
  }
  if (res.tables.empty()) res.omitted = "no results.";
  doc.sections.push_back(std::move(res));

  // Provenance.
  if (!configs.empty()) {
    Section prov;
    prov.id = "provenance";
    prov.title = "Provenance";
    prov.paragraphs.push_back(
        "What each configuration is, and what measured it (the fields of pipette.result/1 that "
        "make results reproducible and comparable).");
    Table t{{"configuration", "model file", "sha256", "size", "quant", "runtime", "runtime commit",
             "settings", "device", "harness", "reps", "warnings"},
            {false, false, false, true, false, false, false, false, false, false, true, false},
            {}};
    // A warning every configuration logged (the vocabulary's, say) is said once, above the table.
    std::map<std::string, size_t> configs_with;
    for (const Configuration& c : configs) {
      std::set<std::string> seen;
      for (const json& r : c.results) {
        for (const std::string& w : record::Warnings(r)) seen.insert(w);
      }
      for (const std::string& w : seen) ++configs_with[w];
    }
    std::set<std::string> common;
    for (const auto& [w, n] : configs_with) {
      if (n == configs.size() && configs.size() > 1) common.insert(w);
    }
    for (const std::string& w : common) {
      prov.bullets.push_back("Every configuration logged: " + w);
    }
    for (const Configuration& c : configs) {
      std::vector<std::string> commits, harness, labels, warnings;
      double min_reps = 1e300, max_reps = 0;
      std::map<std::string, int> warning_count;
      for (const json& r : c.results) {
        commits.push_back(Prefix(TextAt(r, "/runtime/commit"), 12));
        harness.push_back(TextAt(r, "/harness/version") + " (" +
                          Prefix(TextAt(r, "/harness/commit"), 12) + ")");
        labels.push_back(TextAt(r, "/device/label"));
        if (auto reps = NumberAt(r, "/harness/reps")) {
          min_reps = std::min(min_reps, *reps);
          max_reps = std::max(max_reps, *reps);
        }
        for (const std::string& text : record::Warnings(r)) {
          if (common.count(text)) continue;
          if (!warning_count.count(text)) warnings.push_back(text);
          ++warning_count[text];
        }
      }
      std::string warning_text;
      for (const std::string& w : warnings) {
        warning_text += (warning_text.empty() ? "" : "; ") + w +
                        fmt::format(" ({} of {})", warning_count[w], c.results.size());
      }
      const std::string label = Distinct(labels);
      t.rows.push_back(
          {c.name, c.model_file, Prefix(c.model_sha256, 12),
           c.model_size_bytes ? report::FormatBytes(static_cast<double>(c.model_size_bytes)) : "-",
           c.quant_label, c.runtime + " " + c.runtime_version, Distinct(commits), SettingsText(c.settings),
           Prefix(c.device_id, 12) + (label == "-" ? "" : " (" + label + ")"), Distinct(harness),
           max_reps == 0 ? "-"
           : min_reps == max_reps ? fmt::format("{}", max_reps)
                                  : fmt::format("{}-{}", min_reps, max_reps),
           warning_text.empty() ? "-" : warning_text});
    }
    prov.tables.push_back(std::move(t));
    doc.sections.push_back(std::move(prov));
  }
  return doc;
}

// ---- HTML --------------------------------------------------------------------------------------------

constexpr const char* kCss = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1180px;
padding:16px 24px;color:#1b1b1b;background:#fff;line-height:1.45}
h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd;
padding-bottom:.2em}.meta{color:#555;margin:.2em 0}nav{margin:.8em 0;font-size:.95em}
nav a{margin-right:1em;color:#0a5ca8}.notice{background:#fff6e0;border-left:4px solid #E69F00;
padding:.6em .9em;margin:.8em 0}.omitted{color:#555;font-style:italic;margin:.6em 0}
svg.chart{max-width:100%;height:auto;display:block;margin:.8em 0}
table{border-collapse:collapse;margin:.6em 0;font-size:.88em}
th,td{border:1px solid #d5d5d5;padding:3px 7px;text-align:left;vertical-align:top}
td{overflow-wrap:anywhere}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr:nth-child(even) td{background:#fafafa}details{margin:.4em 0}summary{cursor:pointer;color:#0a5ca8}
.scroll{overflow-x:auto}footer{margin-top:2em;color:#666;font-size:.85em}
)";

std::string HtmlTable(const Table& t) {
  std::string out = "<div class=\"scroll\"><table" +
                    (t.name.empty() ? "" : " data-table=\"" + XmlEscape(t.name) + "\"") +
                    ">\n<thead><tr>";
  for (const std::string& h : t.header) {
    out += "<th>";
    out += XmlEscape(h);
    out += "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      const bool num = i < t.numeric.size() && t.numeric[i];
      out += num ? "<td class=\"num\">" : "<td>";
      out += XmlEscape(row[i]);
      out += "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string Html(const Document& doc) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"pipette report\">\n<title>" +
      XmlEscape(doc.title) + "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n<header>\n<h1>" +
      XmlEscape(doc.title) + "</h1>\n";
  for (const std::string& m : doc.meta) out += "<p class=\"meta\">" + XmlEscape(m) + "</p>\n";
  out += "<nav>";
  for (const Section& s : doc.sections) {
    if (s.omitted.empty()) out += "<a href=\"#" + s.id + "\">" + XmlEscape(s.title) + "</a>";
  }
  out += "</nav>\n</header>\n<main>\n";
  for (const Section& s : doc.sections) {
    if (!s.omitted.empty()) {
      out += "<p class=\"omitted\" data-section=\"" + s.id + "\"><b>" + XmlEscape(s.title) +
             "</b>: not shown, " + XmlEscape(s.omitted) + "</p>\n";
      continue;
    }
    out += "<section id=\"" + s.id + "\">\n<h2>" + XmlEscape(s.title) + "</h2>\n";
    if (!s.notice.empty()) out += "<p class=\"notice\">" + XmlEscape(s.notice) + "</p>\n";
    for (const std::string& p : s.paragraphs) out += "<p>" + XmlEscape(p) + "</p>\n";
    if (!s.bullets.empty()) {
      out += "<ul>\n";
      for (const std::string& b : s.bullets) out += "<li>" + XmlEscape(b) + "</li>\n";
      out += "</ul>\n";
    }
    const auto folded = [&](const Table& t) { return s.tables_are_chart_data || t.chart_data; };
    if (s.tables_first) {
      for (const Table& t : s.tables) {
        if (!folded(t)) out += HtmlTable(t);
      }
    }
    for (const std::string& c : s.charts) out += c;
    for (const Table& t : s.tables) {
      if (folded(t)) {
        out += "<details><summary>the chart's data</summary>\n" + HtmlTable(t) + "</details>\n";
      } else if (!s.tables_first) {
        out += HtmlTable(t);
      }
    }
    out += "</section>\n";
  }
  out += "</main>\n<footer>Made by <code>pipette report</code>: medians with 95% bootstrap "
         "confidence intervals of the median (pipette-method/1, DESIGN.md 4 and 6).</footer>\n"
         "</body>\n</html>\n";
  return out;
}

// ---- Markdown -----------------------------------------------------------------------------------------

// Text safe in a Markdown paragraph or table cell: | and the characters that start markup are
// escaped, < and > written as entities, line breaks folded.
std::string MdEscape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (c) {
      case '|': out += "\\|"; break;
      case '\\': out += "\\\\"; break;
      case '*': out += "\\*"; break;
      case '`': out += "\\`"; break;
      case '[': out += "\\["; break;
      case ']': out += "\\]"; break;
      case '<':
      case '>':
        // "<=" and ">=" (limits) cannot open or close a tag: kept readable.
        if (i + 1 < s.size() && s[i + 1] == '=') {
          out += c;
        } else {
          out += c == '<' ? "&lt;" : "&gt;";
        }
        break;
      case '\n':
      case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

std::string MdTable(const Table& t) {
  std::string out = "|";
  for (const std::string& h : t.header) {
    out += ' ';
    out += MdEscape(h);
    out += " |";
  }
  out += "\n|";
  for (size_t i = 0; i < t.header.size(); ++i) {
    out += i < t.numeric.size() && t.numeric[i] ? "---:|" : "---|";
  }
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const std::string& cell : row) {
      out += ' ';
      out += MdEscape(cell);
      out += " |";
    }
    out += "\n";
  }
  return out + "\n";
}

std::string Markdown(const Document& doc) {
  std::string out = "# " + MdEscape(doc.title) + "\n\n";
  for (const std::string& m : doc.meta) out += MdEscape(m) + "\n";
  if (!doc.meta.empty()) out += "\n";
  for (const Section& s : doc.sections) {
    if (!s.omitted.empty()) {
      out += "*" + MdEscape(s.title) + ": not shown, " + MdEscape(s.omitted) + "*\n\n";
      continue;
    }
    out += "## " + MdEscape(s.title) + "\n\n";
    if (!s.notice.empty()) out += "> **" + MdEscape(s.notice) + "**\n\n";
    for (const std::string& p : s.paragraphs) out += MdEscape(p) + "\n\n";
    for (const std::string& b : s.bullets) out += "- " + MdEscape(b) + "\n";
    if (!s.bullets.empty()) out += "\n";
    for (const Table& t : s.tables) out += MdTable(t);
  }
  return out;
}

}  // namespace

std::string RenderHtml(const std::vector<json>& records, const ReportOptions& options) {
  return Html(Build(records, options));
}

std::string RenderMarkdown(const std::vector<json>& records, const ReportOptions& options) {
  return Markdown(Build(records, options));
}

}  // namespace pipette
