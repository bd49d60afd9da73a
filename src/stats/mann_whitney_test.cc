#include <gtest/gtest.h>

#include <vector>

#include "pipette/mann_whitney.h"

namespace pipette {
namespace {

TEST(MannWhitney, ExactSmallSamples) {
  // Completely separated samples of 5 and 5: U = 0, p = 2 / C(10, 5) = 2 / 252.
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {6, 7, 8, 9, 10};
  const MannWhitneyResult r = MannWhitneyU(a, b);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 0);
  EXPECT_NEAR(r.p_value, 2.0 / 252, 1e-12);
  // 3 and 3: p = 2 / C(6, 3) = 0.1; swapping the samples gives U = 9 and the same p.
  const std::vector<double> c = {1, 2, 3}, d = {4, 5, 6};
  EXPECT_NEAR(MannWhitneyU(c, d).p_value, 0.1, 1e-12);
  EXPECT_EQ(MannWhitneyU(d, c).u, 9);
  EXPECT_NEAR(MannWhitneyU(d, c).p_value, 0.1, 1e-12);
}

TEST(MannWhitney, ExactInterleaved) {
  // a = {1, 4}, b = {2, 3}: U_a = 2 (4 > 2, 4 > 3) = n1 n2 / 2, the centre: p = 1.
  const std::vector<double> a = {1, 4}, b = {2, 3};
  EXPECT_EQ(MannWhitneyU(a, b).u, 2);
  EXPECT_NEAR(MannWhitneyU(a, b).p_value, 1.0, 1e-12);
  // a = {1, 2, 4}, b = {3, 5, 6}: U_a = 1; P(U <= 1) = 2/20, two-sided 0.2.
  const std::vector<double> e = {1, 2, 4}, f = {3, 5, 6};
  EXPECT_EQ(MannWhitneyU(e, f).u, 1);
  EXPECT_NEAR(MannWhitneyU(e, f).p_value, 0.2, 1e-12);
}

TEST(MannWhitney, NormalApproximationWithTies) {
  // Hand-computed: a = {1, 2, 2, 3}, b = {2, 3, 3, 4} (n = 8). Mid-ranks: 1 -> 1, 2s -> 3,
  // 3s -> 6, 4 -> 8. R_a = 1 + 3 + 3 + 6 = 13, U_a = 13 - 10 = 3; mean 8.
  // Ties: t = 3 (2s) and t = 3 (3s): sum(t^3 - t) = 48.
  // sigma = sqrt(16/12 * (9 - 48/56)) = sqrt(10.857142...) = 3.295017...
  // z = (|3 - 8| - 0.5) / sigma = 1.365698...; p = erfc(z / sqrt 2) = 0.172031...
  const std::vector<double> a = {1, 2, 2, 3}, b = {2, 3, 3, 4};
  const MannWhitneyResult r = MannWhitneyU(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.u, 3);
  EXPECT_NEAR(r.p_value, 0.1720, 5e-4);
}

TEST(MannWhitney, IdenticalSamplesShowNoDifference) {
  const std::vector<double> a = {5, 5, 5}, b = {5, 5, 5};
  EXPECT_EQ(MannWhitneyU(a, b).p_value, 1.0);
  const std::vector<double> c = {1.0, 1.1, 0.9, 1.05, 0.95};
  EXPECT_NEAR(MannWhitneyU(c, c).p_value, 1.0, 1e-12);
}

}  // namespace
}  // namespace pipette
