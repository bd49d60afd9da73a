#include "pipette/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace pipette {
namespace {

// Number of arrangements of m + n values whose U (count of pairs first > second) equals u, for
// u = 0..m*n: the classic recursion f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u).
std::vector<double> ExactUDistribution(int m, int n) {
  // dp[i][j] is a vector over u for sizes (i, j); built row by row.
  std::vector<std::vector<std::vector<double>>> dp(
      m + 1, std::vector<std::vector<double>>(n + 1));
  for (int i = 0; i <= m; ++i) {
    for (int j = 0; j <= n; ++j) {
      dp[i][j].assign(static_cast<size_t>(i * j + 1), 0.0);
      if (i == 0 || j == 0) {
        dp[i][j][0] = 1;
        continue;
      }
      for (int u = 0; u <= i * j; ++u) {
        double c = 0;
        if (u - j >= 0 && u - j <= (i - 1) * j) c += dp[i - 1][j][static_cast<size_t>(u - j)];
        if (u <= i * (j - 1)) c += dp[i][j - 1][static_cast<size_t>(u)];
        dp[i][j][static_cast<size_t>(u)] = c;
      }
    }
  }
  return dp[m][n];
}

}  // namespace

MannWhitneyResult MannWhitneyU(std::span<const double> a, std::span<const double> b) {
  const size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  std::vector<std::pair<double, int>> all;
  for (double x : a) all.push_back({x, 0});
  for (double x : b) all.push_back({x, 1});
  std::sort(all.begin(), all.end());
  // Mid-ranks, and the tie term sum(t^3 - t).
  double rank_sum_a = 0, tie_term = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && all[j].first == all[i].first) ++j;
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    for (size_t k = i; k < j; ++k) {
      if (all[k].second == 0) rank_sum_a += mid_rank;
    }
    i = j;
  }
  MannWhitneyResult r;
  r.u = rank_sum_a - static_cast<double>(n1 * (n1 + 1)) / 2;
  const double mean_u = static_cast<double>(n1 * n2) / 2;
  if (n1 <= 20 && n2 <= 20 && tie_term == 0) {
    const std::vector<double> dist = ExactUDistribution(static_cast<int>(n1), static_cast<int>(n2));
    double total = 0;
    for (double c : dist) total += c;
    // Two-sided: twice the smaller tail at the observed U, capped at 1.
    const auto u = static_cast<size_t>(std::llround(std::min(r.u, static_cast<double>(n1 * n2) - r.u)));
    double tail = 0;
    for (size_t k = 0; k <= u; ++k) tail += dist[k];
    r.p_value = std::min(1.0, 2 * tail / total);
    r.exact = true;
    return r;
  }
  const double nd = static_cast<double>(n);
  const double sigma = std::sqrt(static_cast<double>(n1 * n2) / 12 *
                                 ((nd + 1) - tie_term / (nd * (nd - 1))));
  if (sigma == 0) return r;  // every value equal: no evidence of a difference
  const double z = (std::abs(r.u - mean_u) - 0.5) / sigma;
  r.p_value = std::min(1.0, std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));
  return r;
}

}  // namespace pipette
