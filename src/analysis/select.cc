// `pipette select`: hard limits first, then the Pareto front of what passed (DESIGN.md 6).
#include <algorithm>
#include <cmath>
#include <limits>
#include <iterator>
#include <map>
#include <set>

#include "analysis/noise.h"
#include "analysis/record_fields.h"
#include "analysis/select_parts.h"
#include "pipette/record.h"

namespace pipette {

using nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Decode benchmark ids with a decode_throughput median among `results`.
std::set<std::string> DecodeBenchmarks(const std::vector<const json*>& results) {
  std::set<std::string> ids;
  for (const json* r : results) {
    if (analysis::BenchmarkTypeOf(*r) == "decode" &&
        record::MetricValue(*r, "decode_throughput")) {
      ids.insert(record::BenchmarkId(*r));
    }
  }
  return ids;
}

// Geometric mean of the decode throughput's `field` (median, ci95_low, ci95_high) over
// `benchmarks` (those of them the results have).
std::optional<double> DecodeSpeed(const std::vector<const json*>& results,
                                  const std::vector<std::string>& benchmarks,
                                  const char* field = "median") {
  double log_sum = 0;
  int n = 0;
  for (const json* r : results) {
    if (std::find(benchmarks.begin(), benchmarks.end(), record::BenchmarkId(*r)) ==
        benchmarks.end()) {
      continue;
    }
    auto v = record::MetricValue(*r, "decode_throughput", field);
    if (!v) v = record::MetricValue(*r, "decode_throughput");
    if (v && *v > 0) {
      log_sum += std::log(*v);
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return std::exp(log_sum / n);
}

}  // namespace

SelectResult Select(const std::vector<Configuration>& configs, const Limits& limits) {
  const size_t n = configs.size();
  std::vector<std::vector<const json*>> looked(n);
  std::vector<Candidate> all(n);
  std::vector<std::optional<analysis::Quality>> quality(n);
  std::optional<double> best_quality;
  for (size_t i = 0; i < n; ++i) {
    looked[i] = analysis::ResultsLookedAt(configs[i], limits.benchmarks);
    all[i].config = &configs[i];
    quality[i] = analysis::QualityScore(configs[i], looked[i], configs);
    if (quality[i]) {
      all[i].quality = quality[i]->value;
      all[i].quality_ci95_low = quality[i]->ci95_low;
      all[i].quality_ci95_high = quality[i]->ci95_high;
      if (!best_quality || quality[i]->value > *best_quality) best_quality = quality[i]->value;
      all[i].noisy = all[i].noisy || quality[i]->noisy;
    }
    if (auto peak = analysis::Largest(looked[i], "max_host_usage")) {
      all[i].peak_memory_bytes = peak->value;
      all[i].peak_memory_ci95_low =
          record::MetricValue(*peak->record, "max_host_usage", "ci95_low");
      all[i].peak_memory_ci95_high =
          record::MetricValue(*peak->record, "max_host_usage", "ci95_high");
      all[i].noisy = all[i].noisy || analysis::IsNoisy(*peak->record);
    }
    for (const json* r : looked[i]) {
      all[i].pooled_results = std::max(all[i].pooled_results, analysis::PooledCountOf(*r));
    }
  }
  const Configuration* reference = nullptr;
  if (!limits.accuracy_reference.empty()) {
    if (auto named = ReferenceNamed(configs, limits.accuracy_reference)) reference = *named;
  }
  SelectResult out;
  // Quality: eval accuracy when there is any (on the eval benchmark most configurations ran,
  // among those the accuracy limits name), else the kl_divergence score.
  std::map<std::string, size_t> eval_counts;
  for (size_t i = 0; i < n; ++i) {
    for (const json* r : looked[i]) {
      if (!analysis::AccuracyOf(*r)) continue;
      bool named = limits.min_accuracy.empty() && limits.max_accuracy_drop.empty();
      for (const auto* list : {&limits.min_accuracy, &limits.max_accuracy_drop}) {
        for (const Limits::Accuracy& a : *list) named = named || IsEvalOf(*r, a.eval);
      }
      if (named) ++eval_counts[record::BenchmarkId(*r)];
    }
  }
  for (const auto& [id, count] : eval_counts) {
    if (out.quality_benchmark.empty() || count > eval_counts[out.quality_benchmark]) {
      out.quality_benchmark = id;
    }
  }
  if (!out.quality_benchmark.empty()) {
    out.quality_metric = "accuracy";
    for (size_t i = 0; i < n; ++i) {
      Candidate& c = all[i];
      c.quality.reset();
      c.quality_ci95_low.reset();
      c.quality_ci95_high.reset();
      for (const json* r : looked[i]) {
        if (record::BenchmarkId(*r) != out.quality_benchmark) continue;
        if (auto e = analysis::AccuracyOf(*r)) {
          c.quality = e->value;
          c.quality_ci95_low = e->ci95_low;
          c.quality_ci95_high = e->ci95_high;
          c.accuracy_attempts = e->n;
        }
      }
    }
  } else if (best_quality) {
    out.quality_metric = "top1_agreement";
  }
  std::vector<size_t> passing;  // not failed: pass or borderline, ranked
  for (size_t i = 0; i < n; ++i) {
    Candidate& c = all[i];
    c.checks = analysis::CheckLimits(looked[i], limits, quality[i], best_quality);
    for (LimitCheck& check :
         analysis::CheckAccuracyLimits(configs, looked, i, limits, reference)) {
      c.checks.push_back(std::move(check));
    }
    c.verdict = Verdict::kPass;
    for (const LimitCheck& check : c.checks) {
      c.noisy = c.noisy || check.noisy;
      if (check.verdict == Verdict::kFail) {
        c.excluded_because.push_back(check.text);
        c.verdict = Verdict::kFail;
      } else if (check.verdict == Verdict::kBorderline) {
        c.borderline_because.push_back(check.text);
        if (c.verdict == Verdict::kPass) c.verdict = Verdict::kBorderline;
      }
    }
    if (c.excluded_because.empty()) passing.push_back(i);
  }

  // Speed is compared over the decode shapes that every passing configuration (every one when
  // none passed) with a decode result measured. One without any decode result has no speed
  // (left out of that objective) rather than emptying the set for all.
  std::optional<std::set<std::string>> common;
  for (size_t i = 0; i < n; ++i) {
    if (!passing.empty() && all[i].excluded_because.size() > 0) continue;
    std::set<std::string> ids = DecodeBenchmarks(looked[i]);
    if (ids.empty()) {
      out.without_decode.push_back(configs[i].name);
      continue;
    }
    if (!common) {
      common = std::move(ids);
      continue;
    }
    std::set<std::string> both;
    std::set_intersection(common->begin(), common->end(), ids.begin(), ids.end(),
                          std::inserter(both, both.begin()));
    common = std::move(both);
  }
  if (common) out.speed_benchmarks.assign(common->begin(), common->end());
  for (size_t i = 0; i < n; ++i) {
    // Like for like only: a configuration that lacks one of the shared shapes is not compared
    // (a mean over fewer shapes, one long-context decode missing say, would rank it wrongly).
    const std::set<std::string> has = DecodeBenchmarks(looked[i]);
    std::vector<std::string> lacks;
    for (const std::string& id : out.speed_benchmarks) {
      if (!has.count(id)) lacks.push_back(id);
    }
    if (!has.empty() && !lacks.empty()) {
      out.decode_not_compared.emplace_back(configs[i].name, std::move(lacks));
      continue;
    }
    all[i].decode_throughput = DecodeSpeed(looked[i], out.speed_benchmarks);
    all[i].decode_ci95_low = DecodeSpeed(looked[i], out.speed_benchmarks, "ci95_low");
    all[i].decode_ci95_high = DecodeSpeed(looked[i], out.speed_benchmarks, "ci95_high");
    for (const json* r : looked[i]) {
      const std::string id = record::BenchmarkId(*r);
      if (std::find(out.speed_benchmarks.begin(), out.speed_benchmarks.end(), id) !=
          out.speed_benchmarks.end()) {
        all[i].noisy = all[i].noisy || analysis::IsNoisy(*r);
      }
    }
  }
  // Inside the noise: every two ranked speeds have overlapping intervals.
  std::vector<size_t> with_speed;
  for (size_t i : passing) {
    if (all[i].decode_throughput) with_speed.push_back(i);
  }
  out.speed_within_noise = with_speed.size() > 1;
  for (size_t a : with_speed) {
    for (size_t b : with_speed) {
      if (a != b && (*all[a].decode_ci95_high < *all[b].decode_ci95_low)) {
        out.speed_within_noise = false;
      }
    }
  }

  // Pareto front of the passing ones: larger is better in every oriented objective.
  std::vector<std::vector<double>> points;
  for (size_t i : passing) {
    const Candidate& c = all[i];
    points.push_back({c.decode_throughput.value_or(kNaN),
                      c.peak_memory_bytes ? -*c.peak_memory_bytes : kNaN,
                      c.quality.value_or(kNaN)});
  }
  const std::vector<size_t> front = ParetoFront(points);
  for (size_t f : front) all[passing[f]].on_front = true;
  for (size_t a = 0; a < passing.size(); ++a) {
    for (size_t b = 0; b < passing.size(); ++b) {
      if (a != b && analysis::Dominates(points[b], points[a])) {
        all[passing[a]].dominated_by.push_back(configs[passing[b]].name);
      }
    }
  }

  const auto faster = [&](size_t a, size_t b) {
    const double sa = all[a].decode_throughput.value_or(-1);
    const double sb = all[b].decode_throughput.value_or(-1);
    if (sa != sb) return sa > sb;
    return a < b;  // GroupConfigurations order
  };
  // A sure pass ranks above a borderline one; within each, the front first, then by speed.
  std::vector<size_t> ranked = passing;
  std::sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    if (all[a].verdict != all[b].verdict) return all[a].verdict == Verdict::kPass;
    if (all[a].on_front != all[b].on_front) return all[a].on_front;
    return faster(a, b);
  });
  for (size_t i : ranked) out.candidates.push_back(all[i]);
  for (size_t i = 0; i < n; ++i) {
    if (!all[i].excluded_because.empty()) out.candidates.push_back(all[i]);
  }
  return out;
}

}  // namespace pipette
