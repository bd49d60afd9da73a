// `pipette select`: hard limits first, then the Pareto front of what passed (DESIGN.md 6).
#include <algorithm>
#include <cmath>
#include <limits>
#include <iterator>
#include <set>

#include "analysis/record_fields.h"
#include "analysis/select_parts.h"

namespace pipette {

using nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Decode benchmark ids with a decode_throughput median among `results`.
std::set<std::string> DecodeBenchmarks(const std::vector<const json*>& results) {
  std::set<std::string> ids;
  for (const json* r : results) {
    if (analysis::BenchmarkTypeOf(*r) == "decode" &&
        analysis::MetricValue(*r, "decode_throughput")) {
      ids.insert(analysis::BenchmarkIdOf(*r));
    }
  }
  return ids;
}

// Geometric mean of the decode throughput over `benchmarks` (those of them the results have).
std::optional<double> DecodeSpeed(const std::vector<const json*>& results,
                                  const std::vector<std::string>& benchmarks) {
  double log_sum = 0;
  int n = 0;
  for (const json* r : results) {
    if (std::find(benchmarks.begin(), benchmarks.end(), analysis::BenchmarkIdOf(*r)) ==
        benchmarks.end()) {
      continue;
    }
    if (auto v = analysis::MetricValue(*r, "decode_throughput")) {
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
  std::optional<double> best_quality;
  for (size_t i = 0; i < n; ++i) {
    looked[i] = analysis::ResultsLookedAt(configs[i], limits.benchmarks);
    all[i].config = &configs[i];
    all[i].quality = analysis::QualityScore(configs[i], looked[i], configs);
    if (all[i].quality && (!best_quality || *all[i].quality > *best_quality)) {
      best_quality = all[i].quality;
    }
    if (auto peak = analysis::Largest(looked[i], "max_host_usage")) {
      all[i].peak_memory_bytes = peak->value;
    }
  }
  std::vector<size_t> passing;
  for (size_t i = 0; i < n; ++i) {
    all[i].excluded_because =
        analysis::LimitViolations(looked[i], limits, all[i].quality, best_quality);
    if (all[i].excluded_because.empty()) passing.push_back(i);
  }

  // Speed is compared over the decode shapes that every passing configuration (every one when
  // none passed) with a decode result measured. One without any decode result has no speed
  // (left out of that objective) rather than emptying the set for all.
  SelectResult out;
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
    all[i].decode_throughput = DecodeSpeed(looked[i], out.speed_benchmarks);
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
  std::vector<size_t> on_front, dominated;
  for (size_t i : passing) (all[i].on_front ? on_front : dominated).push_back(i);
  std::sort(on_front.begin(), on_front.end(), faster);
  std::sort(dominated.begin(), dominated.end(), faster);
  for (size_t i : on_front) out.candidates.push_back(all[i]);
  for (size_t i : dominated) out.candidates.push_back(all[i]);
  for (size_t i = 0; i < n; ++i) {
    if (!all[i].excluded_because.empty()) out.candidates.push_back(all[i]);
  }
  return out;
}

}  // namespace pipette
