// The pieces Select is made of (internal to pipette_analysis; declared here for its tests).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/analysis.h"

namespace pipette::analysis {

// True when `a` dominates `b`: `a` measured every objective `b` has, is at least as good in each
// and strictly better in one. Objectives are oriented larger-is-better; NaN is unmeasured.
bool Dominates(const std::vector<double>& a, const std::vector<double>& b);

// The results of `config` that limits and objectives look at: all, or those whose benchmark id is
// in `benchmarks` when that is not empty.
std::vector<const nlohmann::json*> ResultsLookedAt(const Configuration& config,
                                                   const std::vector<std::string>& benchmarks);

// The largest (or smallest) median of `metric` over `results`, with the benchmark that gave it.
struct Extreme {
  double value = 0;
  std::string benchmark_id;
  const nlohmann::json* record = nullptr;  // the result it came from
};
std::optional<Extreme> Largest(const std::vector<const nlohmann::json*>& results,
                               const std::string& metric);
std::optional<Extreme> Smallest(const std::vector<const nlohmann::json*>& results,
                                const std::string& metric);

// A configuration's quality score (Limits::max_quality_drop), x 100 of top1_agreement.
struct Quality {
  double value = 0;                    // percent
  double ci95_low = 0, ci95_high = 0;  // percent; = value when the result has no interval
  std::string benchmark_id;            // the kl_divergence result; "" for a reference model
  bool noisy = false;
};

// Quality score of `config`: 100 x the lowest top1_agreement median of its kl_divergence results;
// 100 for a configuration without one whose model file is the reference
// (input.reference_model.sha256) of a kl_divergence result in `all` (it agrees with itself);
// nullopt otherwise.
std::optional<Quality> QualityScore(const Configuration& config,
                                    const std::vector<const nlohmann::json*>& results,
                                    const std::vector<Configuration>& all);

// One check per limit given (Limits order: ttft, latency, memory, decode, power, energy per token,
// quality drop).
std::vector<LimitCheck> CheckLimits(const std::vector<const nlohmann::json*>& results,
                                    const Limits& limits, const std::optional<Quality>& quality,
                                    std::optional<double> best_quality);

// An eval result's accuracy (metrics.accuracy), in percent.
struct EvalScore {
  double value = 0;                    // percent
  double ci95_low = 0, ci95_high = 0;  // percent; = value when the result has no interval
  size_t n = 0;                        // attempts
  std::string benchmark_id;
  const nlohmann::json* record = nullptr;
};
std::optional<EvalScore> AccuracyOf(const nlohmann::json& record);

// The accuracy limits of `limits` (min_accuracy, then max_accuracy_drop, each in the order
// given) checked for configs[i], whose results looked at are looked[i] (ResultsLookedAt).
// `reference`: the configuration --reference named, or nullptr for the best of the same model.
std::vector<LimitCheck> CheckAccuracyLimits(
    const std::vector<Configuration>& configs,
    const std::vector<std::vector<const nlohmann::json*>>& looked, size_t i, const Limits& limits,
    const Configuration* reference);

}  // namespace pipette::analysis
