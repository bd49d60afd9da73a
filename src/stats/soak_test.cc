#include <gtest/gtest.h>

#include "pipette/soak.h"

namespace pipette {
namespace {

// 120 s, one request a second; throughput falls linearly from 100 to 80.5 tokens/s.
std::vector<SoakPoint> Decaying(uint64_t leak_per_request) {
  std::vector<SoakPoint> pts;
  for (int i = 0; i < 120; ++i) {
    pts.push_back({static_cast<double>(i), 100.0 - 0.1625 * i,
                   (100u << 20) + leak_per_request * static_cast<uint64_t>(i)});
  }
  return pts;
}

TEST(Soak, DriftSlopeAndFlags) {
  const SoakAnalysis a = AnalyzeSoak(Decaying(0));
  EXPECT_EQ(a.requests, 120);
  EXPECT_DOUBLE_EQ(a.duration_s, 119);
  // First tenth: requests 0..11, median of 100 - 0.1625*{0..11} = 100 - 0.1625*5.5.
  EXPECT_NEAR(a.first_tenth_tps, 100 - 0.1625 * 5.5, 1e-9);
  EXPECT_NEAR(a.last_tenth_tps, 100 - 0.1625 * 113.5, 1e-9);
  EXPECT_NEAR(a.drift, a.last_tenth_tps / a.first_tenth_tps - 1, 1e-12);
  EXPECT_NEAR(a.slope_tps_per_min, -0.1625 * 60, 1e-9);  // exact for a line
  EXPECT_TRUE(a.drift_flagged);                          // about -18%
  EXPECT_EQ(a.growth_bytes, 0);
  EXPECT_FALSE(a.growth_flagged);
}

TEST(Soak, LeakIsFlaggedSteadyStateIsNot) {
  const SoakAnalysis leak = AnalyzeSoak(Decaying(1u << 20));  // 1 MiB per request
  EXPECT_DOUBLE_EQ(leak.window_s, 29.75);                     // min(60, 119 / 4)
  // Highest peak in the first window (t <= 29.75): request 29; in the last (t >= 89.25): 119.
  EXPECT_EQ(leak.growth_bytes, static_cast<int64_t>(90u << 20));
  EXPECT_TRUE(leak.growth_flagged);
  std::vector<SoakPoint> flat;
  for (int i = 0; i < 100; ++i) flat.push_back({i * 1.0, 50.0, 200u << 20});
  const SoakAnalysis steady = AnalyzeSoak(flat);
  EXPECT_FALSE(steady.drift_flagged);
  EXPECT_FALSE(steady.growth_flagged);
  EXPECT_EQ(steady.drift, 0.0);
  EXPECT_EQ(steady.slope_tps_per_min, 0.0);
}

TEST(Soak, TooFewPoints) {
  EXPECT_EQ(AnalyzeSoak({}).requests, 0);
  EXPECT_FALSE(AnalyzeSoak({{0, 10, 1}}).drift_flagged);
}

}  // namespace
}  // namespace pipette
