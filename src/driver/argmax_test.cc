#include "driver/argmax.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace pipette::driver {
namespace {

int32_t Reference(const std::vector<float>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

TEST(ArgMax, AgreesWithMaxElementOnEveryLengthAndPosition) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (int n = 1; n <= 70; ++n) {
    for (int at = 0; at < n; ++at) {
      std::vector<float> v(static_cast<size_t>(n));
      for (float& x : v) x = normal(rng);
      v[static_cast<size_t>(at)] = 100;
      ASSERT_EQ(ArgMax(v.data(), n), at) << "n " << n;
      ASSERT_EQ(ArgMax(v.data(), n), Reference(v));
    }
  }
  std::vector<float> vocab(32000);
  for (float& x : vocab) x = normal(rng);
  EXPECT_EQ(ArgMax(vocab.data(), 32000), Reference(vocab));
}

TEST(ArgMax, TiesGiveTheFirstIndexAndMaskedTokensAreSkipped) {
  std::vector<float> v = {1, 5, 3, 5, 5, 0, 5, 2, 5, -1};
  EXPECT_EQ(ArgMax(v.data(), 10), 1);
  std::vector<float> masked(17, -INFINITY);
  masked[12] = -3;
  EXPECT_EQ(ArgMax(masked.data(), 17), 12);
  std::vector<float> all_masked(9, -INFINITY);
  EXPECT_EQ(ArgMax(all_masked.data(), 9), 0);
  EXPECT_EQ(ArgMax(v.data(), 0), 0);
}

TEST(ArgMax, NaNIsNeverTheLargestAsWithMaxElement) {
  const float nan = std::nanf("");
  std::vector<float> v = {0, nan, 4, 2, nan, 4.5f, 1, 0, 3, nan, 4.4f};
  EXPECT_EQ(ArgMax(v.data(), 11), Reference(v));
  EXPECT_EQ(ArgMax(v.data(), 11), 5);
  std::vector<float> first = {nan, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(ArgMax(first.data(), 10), Reference(first));
}

}  // namespace
}  // namespace pipette::driver
