// The per-metric comparison of two results that `pipette compare` prints, for one pair of
// result ids and for every pair of two groups (DESIGN.md 6).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette::cli {

struct CompareOptions {
  double alpha = 0.05;  // significance level of the two-sided test
  double noise = 0.02;  // ratios within 1 +- noise are never called a difference
};

// One row per metric both records have, in metric-name order: {metric, unit, a_median, b_median,
// ratio (B/A of the medians; 0 when A's is 0), a_n, b_n (repetitions), p_value (two-sided
// Mann-Whitney U on the raw per-repetition samples, a per-token series such as
// inter_token_latency taken as its repetition's median; null with fewer than 2 samples on a
// side), ratio_ci95_low/high (BootstrapRatioOfMediansCi of those samples: how sure B/A is; null
// with fewer than 2 samples on a side), verdict ("faster"/"slower" for
// throughputs and times, "better"/"worse" otherwise, "no significant difference" unless p < alpha
// and the ratio is outside 1 +- noise, or "not repeated (one value)")}.
nlohmann::json CompareMetrics(const nlohmann::json& a, const nlohmann::json& b,
                              const CompareOptions& options);

// The table of `rows` (CompareMetrics) in the shape of llama.cpp's compare-llama-bench, with a
// leading benchmark column when `benchmark` is given per row (rows carry "benchmark_id").
void PrintCompareTable(const nlohmann::json& rows, bool with_benchmark, std::ostream& out);

// The closing line that says how a verdict is reached.
void PrintCompareFootnote(const CompareOptions& options, std::ostream& out);

}  // namespace pipette::cli
