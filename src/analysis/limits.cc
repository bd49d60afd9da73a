// Hard limits of `pipette select` / `pipette report`, judged against the confidence interval of
// each configuration's results (issue 7: pass, borderline, fail), and the per-configuration values
// they are checked against.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "analysis/noise.h"
#include "analysis/record_fields.h"
#include "analysis/select_parts.h"
#include "pipette/record.h"

namespace pipette {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kBorderline:
      return "borderline";
    case Verdict::kFail:
      return "fail";
  }
  return "fail";
}

}  // namespace pipette

namespace pipette::analysis {

using nlohmann::json;

std::vector<const json*> ResultsLookedAt(const Configuration& config,
                                         const std::vector<std::string>& benchmarks) {
  std::vector<const json*> out;
  for (const json& r : config.results) {
    if (benchmarks.empty() || std::find(benchmarks.begin(), benchmarks.end(),
                                        record::BenchmarkId(r)) != benchmarks.end()) {
      out.push_back(&r);
    }
  }
  return out;
}

namespace {

template <typename Better>
std::optional<Extreme> Pick(const std::vector<const json*>& results, const std::string& metric,
                            Better better) {
  std::optional<Extreme> best;
  for (const json* r : results) {
    auto v = record::MetricValue(*r, metric);
    if (!v || (best && !better(*v, best->value))) continue;
    best = Extreme{*v, record::BenchmarkId(*r), r};
  }
  return best;
}

// Three significant digits at least, without hundreds of digits for an absurd limit.
std::string Number(double v) {
  return std::abs(v) >= 1e7 ? fmt::format("{:.3g}", v) : FormatNumber(v, 3);
}

// A metric's value in the unit a person reads it in.
std::string Value(double v, const std::string& unit) {
  if (unit == "bytes") return std::abs(v) >= 1e15 ? fmt::format("{:.3g} B", v) : FormatBytes(v);
  if (unit == "%") return Number(v) + "%";
  return Number(v) + " " + unit;
}

std::string Interval(double low, double high, const std::string& unit) {
  if (unit == "bytes") return fmt::format("[{}, {}]", Value(low, unit), Value(high, unit));
  return fmt::format("[{}, {}]", Number(low), Number(high));
}

// A factor with enough digits not to read as 1 when it is not: 2.65, 1.20, 0.9994.
std::string Factor(double f) {
  for (int digits = 3; digits < 9; ++digits) {
    const std::string text = fmt::format("{:#.{}g}", f, digits);
    if (f == 1 || std::stod(text) != 1) return text;  // "1.00" only for exactly 1
  }
  return fmt::format("{:.9g}", f);
}

// A relative margin as a signed percentage that does not round to 0.0 when it is not 0.
std::string Margin(double m) {
  if (!std::isfinite(m)) return "-";
  const std::string text = fmt::format("{:+.1f}%", 100 * m);
  if (m != 0 && (text == "+0.0%" || text == "-0.0%")) return fmt::format("{:+.2g}%", 100 * m);
  return text;
}

const char* What(const std::string& metric) {
  if (metric == "decode_throughput") return "decode speed";
  if (metric == "max_host_usage") return "peak memory";
  if (metric == "ttft") return "time to first token";
  if (metric == "end_to_end_latency") return "end-to-end latency";
  if (metric == "accuracy") return "accuracy";
  if (metric == "average_power") return "power";
  if (metric == "energy_per_token") return "energy per token";
  return "value";
}

int Severity(Verdict v) { return v == Verdict::kFail ? 2 : v == Verdict::kBorderline ? 1 : 0; }

// Fills verdict, margin, factor and text of a measured check.
void Judge(LimitCheck& c) {
  const bool low_ok = c.upper ? c.ci95_low <= c.threshold : c.ci95_low >= c.threshold;
  const bool high_ok = c.upper ? c.ci95_high <= c.threshold : c.ci95_high >= c.threshold;
  c.verdict = low_ok && high_ok ? Verdict::kPass : !low_ok && !high_ok ? Verdict::kFail
                                                                         : Verdict::kBorderline;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.margin = c.threshold == 0 ? nan
             : c.upper        ? (c.threshold - c.value) / c.threshold
                              : (c.value - c.threshold) / c.threshold;
  const bool drop = c.metric == "quality_drop" || c.metric == "accuracy_drop";
  c.factor = drop ? c.value - c.threshold
             : c.value == 0             ? nan
                                        : c.threshold / c.value;
  std::string head = fmt::format("{} {}", c.metric, Value(c.value, c.unit));
  if (c.ci95_low != c.ci95_high) {
    head += " " + Interval(c.ci95_low, c.ci95_high, c.unit);
  } else if (c.n < 3 && !c.benchmark_id.empty()) {
    head += fmt::format(" (n={}: no interval)", c.n);
  }
  if (!c.benchmark_id.empty()) {
    head += " (" + c.benchmark_id;
    if (c.results > 1) head += fmt::format(", {} results pooled", c.results);
    if (c.noisy) head += ", noisy";
    head += ")";
  } else if (c.noisy) {
    head += " (noisy)";
  }
  head += fmt::format(" {} limit {}: {}", c.upper ? "<=" : ">=", Value(c.threshold, c.unit),
                      VerdictName(c.verdict));
  // A drop is in percentage points from a limit that is one too: its margin is the distance in
  // pp (a 0 pp drop under a 5 pp limit has 5 pp to spare, not "+100%").
  const std::string margin = drop ? Value(c.threshold - c.value, "pp") : Margin(c.margin);
  if (c.verdict == Verdict::kPass) {
    head += ", margin " + margin;
  } else if (c.verdict == Verdict::kBorderline && c.metric == "quality_drop") {
    // One evaluation is exact: only more positions narrow a proportion's interval.
    head += ", the interval crosses the limit (median margin " + margin +
            "): a longer kl_divergence context narrows it before relying on it";
  } else if (c.verdict == Verdict::kBorderline &&
             (c.metric == "accuracy" || c.metric == "accuracy_drop")) {
    head += ", the interval crosses the limit (median margin " + margin +
            "): more questions or repeats (run --limit, --repeats) narrow it before relying on it";
  } else if (c.verdict == Verdict::kBorderline) {
    head += ", the interval crosses the limit (median margin " + margin +
            "): measure it again with more repetitions before relying on it (a higher min_reps: "
            "the CI target alone can stop a run before a limit this close is settled)";
  } else if (drop) {
    head += fmt::format(", misses it by {}", Value(c.factor, "pp"));
  } else if (c.threshold <= 0) {
    head += ", a limit of 0 that nothing measured can meet";
  } else if (std::isfinite(c.factor)) {
    head += fmt::format(", needs {}x the {}", Factor(c.factor), What(c.metric));
  }
  c.text = head;
}

// A check of `limit` before it is judged: what it checks, against what.
LimitCheck Check(const char* limit, const std::string& metric, const std::string& unit,
                 bool upper, double threshold) {
  LimitCheck c;
  c.limit = limit;
  c.metric = metric;
  c.unit = unit;
  c.upper = upper;
  c.threshold = threshold;
  return c;
}

LimitCheck Unmeasured(const char* limit, const std::string& metric, const std::string& unit,
                      bool upper, double threshold) {
  LimitCheck c = Check(limit, metric, unit, upper, threshold);
  c.measured = false;
  c.verdict = Verdict::kFail;
  c.text = fmt::format("{} not measured: cannot check limit {}", metric, Value(threshold, unit));
  return c;
}

// The worst check of `metric` against `threshold` over `results`.
LimitCheck CheckMetric(const std::vector<const json*>& results, const char* limit,
                       const std::string& metric, const std::string& unit, bool upper,
                       double threshold) {
  std::optional<LimitCheck> worst;
  for (const json* r : results) {
    auto median = record::MetricValue(*r, metric);
    if (!median) continue;
    LimitCheck c = Check(limit, metric, unit, upper, threshold);
    c.measured = true;
    c.benchmark_id = record::BenchmarkId(*r);
    c.value = *median;
    c.ci95_low = record::MetricValue(*r, metric, "ci95_low").value_or(*median);
    c.ci95_high = record::MetricValue(*r, metric, "ci95_high").value_or(*median);
    c.n = static_cast<size_t>(record::MetricValue(*r, metric, "n").value_or(1));
    c.results = PooledCountOf(*r);
    c.noisy = IsNoisy(*r);
    Judge(c);
    // Every check has the same threshold, so the worst value is the smallest margin; compared
    // by value, which stays finite when a threshold of 0 makes margins NaN.
    const bool worse = !worst || Severity(c.verdict) > Severity(worst->verdict) ||
                       (Severity(c.verdict) == Severity(worst->verdict) &&
                        (upper ? c.value > worst->value : c.value < worst->value));
    if (worse) worst = std::move(c);
  }
  return worst ? *worst : Unmeasured(limit, metric, unit, upper, threshold);
}

}  // namespace

std::optional<Extreme> Largest(const std::vector<const json*>& results, const std::string& metric) {
  return Pick(results, metric, [](double a, double b) { return a > b; });
}

std::optional<Extreme> Smallest(const std::vector<const json*>& results, const std::string& metric) {
  return Pick(results, metric, [](double a, double b) { return a < b; });
}

std::optional<Quality> QualityScore(const Configuration& config,
                                    const std::vector<const json*>& results,
                                    const std::vector<Configuration>& all) {
  std::vector<const json*> kl;
  for (const json* r : results) {
    if (BenchmarkTypeOf(*r) == "kl_divergence") kl.push_back(r);
  }
  if (auto worst = Smallest(kl, "top1_agreement")) {
    const json& r = *worst->record;
    const auto low = record::MetricValue(r, "top1_agreement", "ci95_low");
    const auto high = record::MetricValue(r, "top1_agreement", "ci95_high");
    return Quality{100 * worst->value, 100 * low.value_or(worst->value),
                   100 * high.value_or(worst->value), worst->benchmark_id, IsNoisy(r)};
  }
  if (config.model_sha256.empty()) return std::nullopt;
  for (const Configuration& other : all) {
    for (const json& r : other.results) {
      if (BenchmarkTypeOf(r) == "kl_divergence" &&
          record::StringAt(r, "/input/reference_model/sha256") == config.model_sha256) {
        return Quality{100.0, 100.0, 100.0, "", false};
      }
    }
  }
  return std::nullopt;
}

std::vector<LimitCheck> CheckLimits(const std::vector<const json*>& results, const Limits& limits,
                                    const std::optional<Quality>& quality,
                                    std::optional<double> best_quality) {
  std::vector<LimitCheck> out;
  if (limits.max_ttft_ms) {
    out.push_back(CheckMetric(results, "max_ttft", "ttft", "ms", true, *limits.max_ttft_ms));
  }
  if (limits.max_latency_ms) {
    out.push_back(CheckMetric(results, "max_latency", "end_to_end_latency", "ms", true,
                              *limits.max_latency_ms));
  }
  if (limits.max_memory_bytes) {
    out.push_back(CheckMetric(results, "max_memory", "max_host_usage", "bytes", true,
                              *limits.max_memory_bytes));
  }
  if (limits.min_decode_throughput) {
    // Decode benchmarks only: an end-to-end result's decode rate includes detokenization and
    // is not the decode speed that select ranks on.
    std::vector<const json*> decode;
    for (const json* r : results) {
      if (BenchmarkTypeOf(*r) == "decode") decode.push_back(r);
    }
    out.push_back(CheckMetric(decode, "min_decode_throughput", "decode_throughput", "tokens/s",
                              false, *limits.min_decode_throughput));
  }
  for (const auto& [limit, metric, unit, threshold] :
       {std::tuple{"max_power", "average_power", "W", limits.max_power_w},
        std::tuple{"max_energy_per_token", "energy_per_token", "mJ/token",
                   limits.max_energy_per_token_mj}}) {
    if (!threshold) continue;
    LimitCheck c = CheckMetric(results, limit, metric, unit, true, *threshold);
    if (!c.measured) {
      c.text = fmt::format("{} not measured (the device reported no energy: RAPL counters or a "
                           "battery discharging while it ran): cannot check limit {}",
                           metric, Value(*threshold, unit));
    }
    out.push_back(c);
  }
  if (limits.max_quality_drop) {
    const double limit = *limits.max_quality_drop;
    if (!quality || !best_quality) {
      LimitCheck c = Unmeasured("max_quality_drop", "quality_drop", "pp", true, limit);
      c.text = fmt::format("quality not measured (no kl_divergence result): cannot check "
                           "quality drop limit {}",
                           Value(limit, "pp"));
      out.push_back(c);
    } else {
      // The drop from the best score; its interval from this configuration's top-1 agreement.
      LimitCheck c = Check("max_quality_drop", "quality_drop", "pp", true, limit);
      c.measured = true;
      c.benchmark_id = quality->benchmark_id;
      c.value = *best_quality - quality->value;
      c.ci95_low = *best_quality - quality->ci95_high;
      c.ci95_high = *best_quality - quality->ci95_low;
      c.n = 1;
      c.noisy = quality->noisy;
      Judge(c);
      c.text += quality->benchmark_id.empty()
                    ? std::string(" (the kl_divergence reference: it agrees with itself)")
                    : fmt::format(" (top-1 agreement {}% vs best {}%)",
                                  FormatNumber(quality->value, 4), FormatNumber(*best_quality, 4));
      out.push_back(c);
    }
  }
  return out;
}

std::optional<EvalScore> AccuracyOf(const json& record) {
  if (BenchmarkTypeOf(record) != "eval") return std::nullopt;
  const auto median = record::MetricValue(record, "accuracy");
  if (!median) return std::nullopt;
  EvalScore e;
  e.value = 100 * *median;
  e.ci95_low = 100 * record::MetricValue(record, "accuracy", "ci95_low").value_or(*median);
  e.ci95_high = 100 * record::MetricValue(record, "accuracy", "ci95_high").value_or(*median);
  e.n = static_cast<size_t>(record::MetricValue(record, "accuracy", "n").value_or(0));
  e.benchmark_id = record::BenchmarkId(record);
  e.record = &record;
  return e;
}

namespace {

// The worse of two checks of one limit: fail before borderline before pass, then the value.
bool Worse(const LimitCheck& c, const std::optional<LimitCheck>& worst) {
  if (!worst) return true;
  if (Severity(c.verdict) != Severity(worst->verdict)) {
    return Severity(c.verdict) > Severity(worst->verdict);
  }
  return c.upper ? c.value > worst->value : c.value < worst->value;
}

std::vector<EvalScore> ScoresOf(const std::vector<const json*>& results, const std::string& eval) {
  std::vector<EvalScore> out;
  for (const json* r : results) {
    if (!IsEvalOf(*r, eval)) continue;
    if (auto e = AccuracyOf(*r)) out.push_back(*e);
  }
  return out;
}

std::optional<EvalScore> ScoreOn(const std::vector<const json*>& results,
                                 const std::string& benchmark_id) {
  for (const json* r : results) {
    if (record::BenchmarkId(*r) != benchmark_id) continue;
    if (auto e = AccuracyOf(*r)) return e;
  }
  return std::nullopt;
}

LimitCheck MinAccuracy(const std::vector<const json*>& results, const Limits::Accuracy& limit) {
  std::optional<LimitCheck> worst;
  for (const EvalScore& e : ScoresOf(results, limit.eval)) {
    LimitCheck c = Check("min_accuracy", "accuracy", "%", false, 100 * limit.value);
    c.eval = limit.eval;
    c.measured = true;
    c.benchmark_id = e.benchmark_id;
    c.value = e.value;
    c.ci95_low = e.ci95_low;
    c.ci95_high = e.ci95_high;
    c.n = e.n;
    c.results = PooledCountOf(*e.record);
    Judge(c);
    c.text += fmt::format(" ({} attempts)", e.n);
    if (Worse(c, worst)) worst = std::move(c);
  }
  if (worst) return *worst;
  LimitCheck c = Unmeasured("min_accuracy", "accuracy", "%", false, 100 * limit.value);
  c.eval = limit.eval;
  c.text = fmt::format("accuracy on {} not measured (no eval result): cannot check limit {}",
                       limit.eval, Value(100 * limit.value, "%"));
  return c;
}

LimitCheck AccuracyDrop(const std::vector<Configuration>& configs,
                        const std::vector<std::vector<const json*>>& looked, size_t i,
                        const Limits::Accuracy& limit, const Configuration* reference) {
  std::optional<LimitCheck> worst;
  const std::string family = ModelFamily(configs[i]);
  for (const EvalScore& e : ScoresOf(looked[i], limit.eval)) {
    LimitCheck c = Check("max_accuracy_drop", "accuracy_drop", "pp", true, limit.value);
    c.eval = limit.eval;
    c.benchmark_id = e.benchmark_id;
    c.n = e.n;
    c.results = PooledCountOf(*e.record);
    // The reference and its score on this benchmark.
    size_t ref = configs.size();
    std::optional<EvalScore> ref_score;
    for (size_t j = 0; j < configs.size(); ++j) {
      if (reference != nullptr ? &configs[j] != reference : ModelFamily(configs[j]) != family) {
        continue;
      }
      auto s = ScoreOn(looked[j], e.benchmark_id);
      if (s && (!ref_score || s->value > ref_score->value)) {
        ref = j;
        ref_score = s;
      }
    }
    if (!ref_score) {  // only with --reference: the best of the family includes this one
      c = Unmeasured("max_accuracy_drop", "accuracy_drop", "pp", true, limit.value);
      c.eval = limit.eval;
      c.text = fmt::format("the reference {} has no {} result: cannot check accuracy drop "
                           "limit {}",
                           reference->name, e.benchmark_id, Value(limit.value, "pp"));
      if (Worse(c, worst)) worst = std::move(c);
      continue;
    }
    c.measured = true;
    std::string how;
    if (ref == i || ref_score->record == e.record) {
      c.value = c.ci95_low = c.ci95_high = 0;
      how = fmt::format("accuracy {}%: the reference{}", FormatNumber(e.value, 4),
                        reference != nullptr ? "" : ", the most accurate of " + family);
    } else if (auto p = PairAccuracy(*ref_score->record, *e.record); p && p->paired > 0) {
      c.value = -100 * p->difference + 0.0;  // + 0.0: no "-0 pp"
      c.ci95_low = -100 * p->ci95_high + 0.0;
      c.ci95_high = -100 * p->ci95_low + 0.0;
      c.n = p->paired;
      how = fmt::format("accuracy {}% vs {}% of {}, paired on {} attempts, McNemar p = {:.3g}",
                        FormatNumber(100 * p->accuracy_b, 4), FormatNumber(100 * p->accuracy_a, 4),
                        configs[ref].name, p->paired, p->p_value);
      const size_t left = p->only_in_a.size() + p->only_in_b.size();
      if (left > 0) how += fmt::format(", {} unpaired attempts left out", left);
    } else {
      c.value = ref_score->value - e.value;
      c.ci95_low = ref_score->value - e.ci95_high;
      c.ci95_high = ref_score->value - e.ci95_low;
      how = fmt::format("accuracy {}% vs {}% of {}, no attempts in common",
                        FormatNumber(e.value, 4), FormatNumber(ref_score->value, 4),
                        configs[ref].name);
    }
    Judge(c);
    c.text += " (" + how + ")";
    if (Worse(c, worst)) worst = std::move(c);
  }
  if (worst) return *worst;
  LimitCheck c = Unmeasured("max_accuracy_drop", "accuracy_drop", "pp", true, limit.value);
  c.eval = limit.eval;
  c.text = fmt::format("accuracy on {} not measured (no eval result): cannot check accuracy drop "
                       "limit {}",
                       limit.eval, Value(limit.value, "pp"));
  return c;
}

}  // namespace

std::vector<LimitCheck> CheckAccuracyLimits(const std::vector<Configuration>& configs,
                                            const std::vector<std::vector<const json*>>& looked,
                                            size_t i, const Limits& limits,
                                            const Configuration* reference) {
  std::vector<LimitCheck> out;
  for (const Limits::Accuracy& a : limits.min_accuracy) out.push_back(MinAccuracy(looked[i], a));
  for (const Limits::Accuracy& a : limits.max_accuracy_drop) {
    out.push_back(AccuracyDrop(configs, looked, i, a, reference));
  }
  return out;
}

}  // namespace pipette::analysis
