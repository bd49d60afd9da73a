// Hard limits of `pipette select` and the per-configuration values they are checked against.
#include <fmt/format.h>

#include <algorithm>

#include "analysis/record_fields.h"
#include "analysis/select_parts.h"

namespace pipette::analysis {

using nlohmann::json;

std::vector<const json*> ResultsLookedAt(const Configuration& config,
                                         const std::vector<std::string>& benchmarks) {
  std::vector<const json*> out;
  for (const json& r : config.results) {
    if (benchmarks.empty() ||
        std::find(benchmarks.begin(), benchmarks.end(), BenchmarkIdOf(r)) != benchmarks.end()) {
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
    auto v = MetricValue(*r, metric);
    if (!v || (best && !better(*v, best->value))) continue;
    best = Extreme{*v, BenchmarkIdOf(*r)};
  }
  return best;
}

std::string Ms(double v) { return fmt::format("{:.2f} ms", v); }

}  // namespace

std::optional<Extreme> Largest(const std::vector<const json*>& results, const std::string& metric) {
  return Pick(results, metric, [](double a, double b) { return a > b; });
}

std::optional<Extreme> Smallest(const std::vector<const json*>& results, const std::string& metric) {
  return Pick(results, metric, [](double a, double b) { return a < b; });
}

std::optional<double> QualityScore(const Configuration& config,
                                   const std::vector<const json*>& results,
                                   const std::vector<Configuration>& all) {
  std::vector<const json*> kl;
  for (const json* r : results) {
    if (BenchmarkTypeOf(*r) == "kl_divergence") kl.push_back(r);
  }
  if (auto worst = Smallest(kl, "top1_agreement")) return 100 * worst->value;
  if (config.model_sha256.empty()) return std::nullopt;
  for (const Configuration& other : all) {
    for (const json& r : other.results) {
      if (BenchmarkTypeOf(r) == "kl_divergence" &&
          StringAt(r, "/input/reference_model/sha256") == config.model_sha256) {
        return 100.0;
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> LimitViolations(const std::vector<const json*>& results,
                                         const Limits& limits, std::optional<double> quality,
                                         std::optional<double> best_quality) {
  std::vector<std::string> out;
  const auto upper = [&](const std::optional<double>& limit, const std::string& metric,
                         const auto& format) {
    if (!limit) return;
    auto worst = Largest(results, metric);
    if (!worst) {
      out.push_back(fmt::format("{} not measured: cannot check limit {}", metric, format(*limit)));
    } else if (worst->value > *limit) {
      out.push_back(fmt::format("{} {} ({}) > limit {}", metric, format(worst->value),
                                worst->benchmark_id, format(*limit)));
    }
  };
  upper(limits.max_ttft_ms, "ttft", Ms);
  upper(limits.max_latency_ms, "end_to_end_latency", Ms);
  upper(limits.max_memory_bytes, "max_host_usage", FormatBytes);
  if (limits.min_decode_throughput) {
    const double limit = *limits.min_decode_throughput;
    auto worst = Smallest(results, "decode_throughput");
    if (!worst) {
      out.push_back(fmt::format("decode_throughput not measured: cannot check limit {} tokens/s",
                                FormatNumber(limit)));
    } else if (worst->value < limit) {
      out.push_back(fmt::format("decode_throughput {:.2f} tokens/s ({}) < limit {} tokens/s",
                                worst->value, worst->benchmark_id, FormatNumber(limit)));
    }
  }
  if (limits.max_quality_drop) {
    const double limit = *limits.max_quality_drop;
    if (!quality || !best_quality) {
      out.push_back(fmt::format("quality not measured (no kl_divergence result): cannot check "
                                "quality drop limit {} pp",
                                FormatNumber(limit)));
    } else if (*best_quality - *quality > limit) {
      out.push_back(fmt::format("quality drop {:.2f} pp (top1 agreement {:.2f}% vs best {:.2f}%) "
                                "> limit {} pp",
                                *best_quality - *quality, *quality, *best_quality,
                                FormatNumber(limit)));
    }
  }
  return out;
}

}  // namespace pipette::analysis
