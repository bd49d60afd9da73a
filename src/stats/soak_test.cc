#include <gtest/gtest.h>

#include <functional>

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

// Issue 26: a varied soak cycles through shapes whose decode throughput differs several fold.
// 600 requests, one every 0.2 s (120 s), cycling through 5 shapes; shape s runs at base / (s + 1)
// tokens/s (5x apart), times `speed(t)`, plus a deterministic +-1% ripple.
std::vector<SoakPoint> Varied(const std::function<double(double)>& speed,
                              uint64_t leak_per_request = 0) {
  std::vector<SoakPoint> pts;
  for (int i = 0; i < 600; ++i) {
    const double t = 0.2 * i;
    const int shape = i % 5;
    const double ripple = 1 + 0.01 * ((i * 7) % 3 - 1);
    // The longest shape (0) has the highest peak; the others stay below it.
    const uint64_t peak = (shape == 0 ? 300u << 20 : 250u << 20) + leak_per_request * i;
    pts.push_back({t, 500.0 / (shape + 1) * speed(t) * ripple, peak, shape});
  }
  return pts;
}

TEST(Soak, VariedShapesWithoutDriftAreNotFlagged) {
  const SoakAnalysis a = AnalyzeSoak(Varied([](double) { return 1.0; }));
  EXPECT_EQ(a.requests, 600);
  EXPECT_EQ(a.shapes, 5);
  ASSERT_EQ(a.per_shape.size(), 5u);
  for (int s = 0; s < 5; ++s) {
    EXPECT_EQ(a.per_shape[s].requests, 120);
    EXPECT_NEAR(a.per_shape[s].first_tenth_tps, 500.0 / (s + 1), 500.0 / (s + 1) * 0.011);
    EXPECT_NEAR(a.per_shape[s].drift, 0, 0.021);
  }
  EXPECT_NEAR(a.first_tenth_tps, 1, 0.011);  // ratios to each shape's own start
  EXPECT_NEAR(a.last_tenth_tps, 1, 0.011);
  EXPECT_NEAR(a.drift, 0, 0.021);
  EXPECT_NEAR(a.slope_tps_per_min, 0, 0.005);
  EXPECT_FALSE(a.drift_flagged);
  EXPECT_FALSE(a.growth_flagged);
  EXPECT_EQ(a.growth_bytes, 0);  // both windows see the longest shape
  const nlohmann::json j = ToJson(a);
  EXPECT_EQ(j["drift_basis"], "per_shape");
  EXPECT_EQ(j["shapes"].size(), 5u);
  EXPECT_EQ(j["shapes"][4]["requests"], 120);
  EXPECT_FALSE(j.contains("first_tenth_decode_throughput"));
  EXPECT_TRUE(j.contains("first_tenth_relative_throughput"));
  EXPECT_TRUE(j.contains("slope_relative_per_min"));
}

TEST(Soak, VariedShapesAllTenPercentSlowerAreFlagged) {
  // Full speed for the first half, then 10% slower on every shape.
  const SoakAnalysis a = AnalyzeSoak(Varied([](double t) { return t < 60 ? 1.0 : 0.9; }));
  EXPECT_NEAR(a.drift, -0.10, 0.025);
  EXPECT_TRUE(a.drift_flagged);
  for (const SoakShapeAnalysis& s : a.per_shape) EXPECT_NEAR(s.drift, -0.10, 0.025);
  EXPECT_LT(a.slope_tps_per_min, 0);
  EXPECT_FALSE(a.growth_flagged);
}

TEST(Soak, VariedShapesGrowthIsFlagged) {
  const SoakAnalysis a = AnalyzeSoak(Varied([](double) { return 1.0; }, 256u << 10));  // 256 KiB
  EXPECT_TRUE(a.growth_flagged);
  EXPECT_FALSE(a.drift_flagged);
  EXPECT_DOUBLE_EQ(a.window_s, 29.95);  // min(60, 119.8 / 4)
  // First window ends at 29.95 s (request 149, shape 4); its highest peak is request 145's, the
  // last of shape 0 in it. The last window's is request 595's.
  EXPECT_EQ(a.growth_bytes, static_cast<int64_t>((595u - 145u) * (256u << 10)));
}

TEST(Soak, VariedWindowsHoldAFullCycleOfShapes) {
  // Six requests 10 s apart: a quarter of the run (12.5 s) would see one or two shapes; the
  // windows widen to a cycle (five requests, 40 s) and both see the longest shape.
  std::vector<SoakPoint> pts;
  for (int i = 0; i < 6; ++i) {
    pts.push_back({10.0 * i, 100.0, i % 5 == 0 ? 300u << 20 : 100u << 20, i % 5});
  }
  const SoakAnalysis a = AnalyzeSoak(pts);
  EXPECT_DOUBLE_EQ(a.window_s, 40);
  EXPECT_EQ(a.first_window_peak_bytes, 300u << 20);
  EXPECT_EQ(a.last_window_peak_bytes, 300u << 20);
  EXPECT_FALSE(a.growth_flagged);
}

TEST(Soak, OneShapeIsJudgedAsBefore) {
  // The plain soak's record keeps its fields (stored results stay comparable).
  const nlohmann::json j = ToJson(AnalyzeSoak(Decaying(0)));
  EXPECT_TRUE(j.contains("first_tenth_decode_throughput"));
  EXPECT_TRUE(j.contains("slope_tokens_per_s_per_min"));
  EXPECT_FALSE(j.contains("shapes"));
  EXPECT_FALSE(j.contains("drift_basis"));
}

}  // namespace
}  // namespace pipette
