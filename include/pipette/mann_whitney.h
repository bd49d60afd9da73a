// The Mann-Whitney U test (Mann & Whitney 1947; the test google/benchmark's tools/compare.py uses
// to decide whether two runs differ): do two samples come from one distribution? It uses ranks
// only, so it suits skewed, outlier-prone timing samples.
#pragma once

#include <span>

namespace pipette {

struct MannWhitneyResult {
  double u = 0;        // U of the first sample: pairs (a, b) with a > b, ties counting 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // exact distribution (small samples without ties) or normal approximation
};

// Two-sided test. Exact p-value when both samples have at most 20 values and there are no ties;
// otherwise the normal approximation with tie correction and continuity correction (as
// scipy.stats.mannwhitneyu's "asymptotic" method). REQUIRES: both samples non-empty.
MannWhitneyResult MannWhitneyU(std::span<const double> a, std::span<const double> b);

}  // namespace pipette
