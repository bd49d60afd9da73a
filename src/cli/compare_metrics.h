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

// For two eval results with stored completions, turns the accuracy row of `rows` into a paired
// test on the same attempts (analysis PairAccuracy: completions matched by key): a_n = b_n =
// paired, p_value = exact McNemar on the discordant counts, verdict better/worse by which side is
// right more often among them ("no significant difference" unless p < alpha; "no attempts in
// common" when none pair), and adds test "mcnemar_exact", paired, a_only_correct (McNemar's b),
// b_only_correct (c), both_correct, both_wrong, unpaired_a/_b (counts of keys left out) with
// unpaired_keys_a/_b, paired_a/b_accuracy (fractions over the paired attempts), difference_pp
// and difference_pp_ci95 (B - A in percentage points, question-clustered bootstrap). Does
// nothing for other records. CompareMetrics calls it.
void PairAccuracyRow(const nlohmann::json& a, const nlohmann::json& b,
                     const CompareOptions& options, nlohmann::json& rows);

// One line per paired accuracy row of `rows`: how many attempts were paired, the discordant
// counts, the McNemar p-value, and how many unpaired attempts were left out.
void PrintPairedAccuracy(const nlohmann::json& rows, std::ostream& out);

// The table of `rows` (CompareMetrics) in the shape of llama.cpp's compare-llama-bench, with a
// leading benchmark column when `benchmark` is given per row (rows carry "benchmark_id").
void PrintCompareTable(const nlohmann::json& rows, bool with_benchmark, std::ostream& out);

// The closing line that says how a verdict is reached.
void PrintCompareFootnote(const CompareOptions& options, std::ostream& out);

}  // namespace pipette::cli
