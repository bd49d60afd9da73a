// The funnel's judge: intervals, limits, dominance, and its error rate under repeated looks by
// simulation (issue 26, "honest stopping").
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "pipette/funnel.h"
#include "pipette/stats.h"

namespace pipette {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

FunnelMeasure Reps(const std::string& bench, const std::string& metric, std::vector<double> v) {
  FunnelMeasure m;
  m.benchmark_id = bench;
  m.metric = metric;
  m.samples = std::move(v);
  return m;
}

std::vector<double> Around(double center, int n, double spread) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1 + spread * ((i % 5) - 2) / 2.0));
  return v;
}

FunnelRule MemoryAndDecode(double mib, double tps) {
  FunnelRule r;
  r.limits.max_memory_bytes = mib * kMiB;
  r.limits.min_decode_throughput = tps;
  r.objectives = {FunnelObjective::kDecode, FunnelObjective::kMemory};
  r.looks = 4;
  r.measures_per_candidate = 2;
  return r;
}

TEST(FunnelJudge, ConfidenceAndRepetitionsFollowTheNumberOfIntervals) {
  FunnelRule r;
  r.alpha = 0.05;
  r.looks = 4;
  r.measures_per_candidate = 5;
  EXPECT_DOUBLE_EQ(FunnelConfidence(r, 4), 1 - 0.05 / 80);
  EXPECT_EQ(FunnelMinRepetitions(0.95), 6);  // 2 / 64 = 0.031 <= 0.05; 2 / 32 > 0.05
  EXPECT_EQ(FunnelMinRepetitions(1 - 0.05 / 80), 12);
  // Too few repetitions: unbounded, so nothing is decided on them.
  const FunnelInterval few = FunnelIntervalOf(Reps("b", "decode_throughput", {1, 2, 3}), 0.999);
  EXPECT_FALSE(few.bounded());
  EXPECT_DOUBLE_EQ(few.point, 2);
  std::vector<double> v;
  for (int i = 1; i <= 30; ++i) v.push_back(i);
  const FunnelInterval many = FunnelIntervalOf(Reps("b", "decode_throughput", v), 0.999);
  ASSERT_TRUE(many.bounded());
  EXPECT_LT(many.low, 15.5);
  EXPECT_GT(many.high, 15.5);
  EXPECT_GT(many.low, 1);  // narrower than the range with 30 repetitions
}

TEST(FunnelJudge, WilsonAtTheFunnelsConfidenceIsWiderThanAt95) {
  FunnelMeasure m;
  m.kind = FunnelMeasure::Kind::kProportion;
  m.metric = "quality";
  m.benchmark_id = "kl_divergence_512";
  m.successes = 492;
  m.trials = 512;
  const FunnelInterval at95 = FunnelIntervalOf(m, 0.95);
  const FunnelInterval at999 = FunnelIntervalOf(m, 0.999);
  const Interval w = WilsonInterval(492, 512);
  EXPECT_NEAR(at95.low, 100 * w.low, 1e-3);  // z 1.959964 here, 1.96 there
  EXPECT_NEAR(at95.high, 100 * w.high, 1e-3);
  EXPECT_LT(at999.low, at95.low);
  EXPECT_GT(at999.high, at95.high);
}

TEST(FunnelJudge, MemoryOverTheLimitLeavesWithTheEvidence) {
  const FunnelRule rule = MemoryAndDecode(12.5, 1000);
  std::vector<FunnelCandidate> c(2);
  c[0].name = "F32";
  c[0].measures.push_back(Reps("max_memory_usage_256", "max_host_usage", Around(13.07 * kMiB, 15, 0.01)));
  c[1].name = "Q8_0";
  c[1].measures.push_back(Reps("max_memory_usage_256", "max_host_usage", Around(12.30 * kMiB, 15, 0.01)));
  const FunnelJudgement j = JudgeFunnel(c, rule);
  ASSERT_TRUE(j.standings[0].out);
  EXPECT_NE(j.standings[0].reason.find("fails max_memory: max_host_usage 13.07 MiB"), std::string::npos)
      << j.standings[0].reason;
  EXPECT_NE(j.standings[0].reason.find("> 12.50 MiB"), std::string::npos);
  EXPECT_FALSE(j.standings[1].out);
  // Q8_0 has not measured decode yet and is not complete: it waits, the decode limit is open.
  EXPECT_FALSE(j.standings[1].limits_met);
  // Complete without decode: it fails, saying so.
  c[1].complete = true;
  const FunnelJudgement k = JudgeFunnel(c, rule);
  ASSERT_TRUE(k.standings[1].out);
  EXPECT_EQ(k.standings[1].reason, "fails min_decode_throughput: decode_throughput not measured");
}

TEST(FunnelJudge, AnIntervalAcrossTheLimitIsUndecidedNotOut) {
  const FunnelRule rule = MemoryAndDecode(12.5, 1000);
  std::vector<FunnelCandidate> c(1);
  c[0].name = "Q4_0";
  c[0].measures.push_back(Reps("decode_throughput_256_100", "decode_throughput", Around(1010, 15, 0.05)));
  c[0].measures.push_back(Reps("max_memory_usage_256", "max_host_usage", Around(12.26 * kMiB, 15, 0.001)));
  const FunnelJudgement j = JudgeFunnel(c, rule);
  EXPECT_FALSE(j.standings[0].out);
  EXPECT_FALSE(j.standings[0].limits_met);
  EXPECT_EQ(j.standings[0].undecided, std::vector<std::string>{"decode_throughput_256_100"});
  ASSERT_EQ(j.standings[0].open_limits.size(), 1u);
  EXPECT_NE(j.standings[0].open_limits[0].find("min_decode_throughput"), std::string::npos);
}

TEST(FunnelJudge, DominanceNeedsSeparatedIntervalsOnEveryObjective) {
  const FunnelRule rule = MemoryAndDecode(20, 100);
  std::vector<FunnelCandidate> c(3);
  c[0].name = "fast-small";
  c[0].measures = {Reps("d", "decode_throughput", Around(2000, 15, 0.01)),
                   Reps("m", "max_host_usage", Around(10 * kMiB, 15, 0.01))};
  c[1].name = "slow-big";
  c[1].measures = {Reps("d", "decode_throughput", Around(1000, 15, 0.01)),
                   Reps("m", "max_host_usage", Around(15 * kMiB, 15, 0.01))};
  c[2].name = "tie";  // the same as fast-small: ties never remove anything
  c[2].measures = c[0].measures;
  // Not every benchmark measured yet: its limits may still fail on one, so it removes nothing.
  EXPECT_FALSE(JudgeFunnel(c, rule).standings[1].out);
  for (auto& x : c) x.complete = true;
  const FunnelJudgement j = JudgeFunnel(c, rule);
  EXPECT_FALSE(j.standings[0].out);
  EXPECT_FALSE(j.standings[2].out);
  ASSERT_TRUE(j.standings[1].out);
  EXPECT_EQ(j.standings[1].reason.rfind("dominated by fast-small", 0), 0u) << j.standings[1].reason;
  // A trade-off (faster but bigger) removes nothing.
  c[1].measures[0] = Reps("d", "decode_throughput", Around(3000, 15, 0.01));
  const FunnelJudgement k = JudgeFunnel(c, rule);
  EXPECT_FALSE(k.standings[1].out);
}

TEST(FunnelJudge, QualityDropAgainstTheBestWithTheReferenceExact) {
  FunnelRule rule;
  rule.limits.max_quality_drop = 5;  // no objective: F32 would dominate on quality alone
  std::vector<FunnelCandidate> c(3);
  c[0].name = "F32";
  FunnelMeasure ref;
  ref.kind = FunnelMeasure::Kind::kExact;
  ref.metric = "quality";
  ref.benchmark_id = "kl_divergence_512";
  ref.value = 100;
  c[0].measures = {ref};
  FunnelMeasure q8 = ref;
  q8.kind = FunnelMeasure::Kind::kProportion;
  q8.successes = 492;  // 96.1%
  q8.trials = 512;
  c[1].name = "Q8_0";
  c[1].measures = {q8};
  FunnelMeasure q4 = q8;
  q4.successes = 410;  // 80.1%
  c[2].name = "Q4_0";
  c[2].measures = {q4};
  const FunnelJudgement j = JudgeFunnel(c, rule);
  EXPECT_FALSE(j.standings[0].out);
  EXPECT_FALSE(j.standings[1].out);  // 3.9 pp, but its interval crosses 5 pp
  ASSERT_TRUE(j.standings[2].out);
  EXPECT_NE(j.standings[2].reason.find("fails max_quality_drop: drop 19.9 pp"), std::string::npos)
      << j.standings[2].reason;
}

// The funnel's error rate under repeated looks, by simulation. Each decision draws 6 synthetic
// configurations with known true medians of decode throughput and peak memory, some on a limit
// exactly, some tied with each other, some clearly out; repetitions are lognormal around the true
// median (heavy enough that a few repetitions mislead) with a per-configuration spread. The
// decision runs as the funnel does: a screen of `screen` repetitions, a measure step adding a
// second result, then up to 2 rounds on what is undecided, judging after each. A configuration
// "should win" when its true medians meet both limits and no configuration that meets them
// dominates it by its true medians. The rate of decisions that eliminated one of those must stay
// at most alpha = 5%, its 95% interval shown.
TEST(FunnelJudge, WrongEliminationsStayUnderAlpha) {
  constexpr int kDecisions = 2000;
  constexpr int kConfigs = 6;
  const double limit_mib = 12.5, limit_tps = 1000;
  FunnelRule rule = MemoryAndDecode(limit_mib, limit_tps);
  rule.alpha = 0.05;
  rule.looks = 4;  // screen, measure, 2 rounds
  rule.measures_per_candidate = 2;
  const double confidence = FunnelConfidence(rule, kConfigs);
  const int screen = FunnelMinRepetitions(confidence) + 3;
  std::mt19937_64 rng(20261206);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unit(0, 1);
  int wrong = 0, should_win_total = 0, eliminated_total = 0, clearly_out_total = 0,
      clearly_out_eliminated = 0;
  for (int d = 0; d < kDecisions; ++d) {
    struct Truth {
      double tps, bytes, spread;
    };
    std::vector<Truth> truth(kConfigs);
    for (int i = 0; i < kConfigs; ++i) {
      const double kind = unit(rng);
      Truth& t = truth[i];
      t.spread = 0.01 + 0.08 * unit(rng);
      if (kind < 0.2) {  // on the decode limit exactly
        t.tps = limit_tps;
        t.bytes = (11 + unit(rng)) * kMiB;
      } else if (kind < 0.4) {  // on the memory limit exactly
        t.tps = 1000 + 500 * unit(rng);
        t.bytes = limit_mib * kMiB;
      } else if (kind < 0.55 && i > 0) {  // a tie with the previous one
        t = truth[i - 1];
      } else {
        t.tps = 700 + 900 * unit(rng);
        t.bytes = (10 + 4 * unit(rng)) * kMiB;
      }
    }
    auto meets = [&](const Truth& t) { return t.tps >= limit_tps && t.bytes <= limit_mib * kMiB; };
    std::vector<bool> should_win(kConfigs, false);
    for (int w = 0; w < kConfigs; ++w) {
      if (!meets(truth[w])) continue;
      bool dominated = false;
      for (int x = 0; x < kConfigs; ++x) {
        if (x == w || !meets(truth[x])) continue;
        if (truth[x].tps >= truth[w].tps && truth[x].bytes <= truth[w].bytes &&
            (truth[x].tps > truth[w].tps || truth[x].bytes < truth[w].bytes)) {
          dominated = true;
        }
      }
      should_win[w] = !dominated;
    }
    std::vector<FunnelCandidate> c(kConfigs);
    for (int i = 0; i < kConfigs; ++i) {
      c[i].name = std::string("c").append(std::to_string(i));
      c[i].measures = {Reps("decode", "decode_throughput", {}), Reps("memory", "max_host_usage", {})};
    }
    auto draw = [&](int i, const std::string& bench, int reps) {
      for (FunnelMeasure& m : c[i].measures) {
        if (m.benchmark_id != bench) continue;
        const double center = bench == "decode" ? truth[i].tps : truth[i].bytes;
        for (int k = 0; k < reps; ++k) m.samples.push_back(center * std::exp(truth[i].spread * normal(rng)));
      }
    };
    std::vector<bool> out(kConfigs, false);
    auto judge = [&]() {
      const FunnelJudgement j = JudgeFunnel(c, rule);
      for (int i = 0; i < kConfigs; ++i) out[i] = out[i] || j.standings[i].out;
      return j;
    };
    // Screen: memory, then decode, judging after each configuration's cells.
    for (int i = 0; i < kConfigs; ++i) {
      draw(i, "memory", screen);
      if (judge().standings[i].out) continue;
      draw(i, "decode", screen);
      judge();
    }
    // Measure: a second result for every survivor, then rounds on what is undecided.
    for (int i = 0; i < kConfigs; ++i) {
      if (out[i]) continue;
      draw(i, "decode", 10);
      draw(i, "memory", 10);
      c[i].complete = true;
    }
    FunnelJudgement j = judge();
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < kConfigs; ++i) {
        if (out[i]) continue;
        for (const std::string& b : j.standings[i].undecided) draw(i, b, 10);
      }
      j = judge();
    }
    bool any_wrong = false;
    for (int i = 0; i < kConfigs; ++i) {
      should_win_total += should_win[i];
      eliminated_total += out[i];
      if (should_win[i] && out[i]) any_wrong = true;
      const bool clearly_out = truth[i].tps < 0.8 * limit_tps || truth[i].bytes > 1.1 * limit_mib * kMiB;
      clearly_out_total += clearly_out;
      clearly_out_eliminated += clearly_out && out[i];
    }
    wrong += any_wrong;
  }
  const Interval ci = WilsonInterval(wrong, kDecisions);
  std::printf("funnel simulation: %d decisions, %d with a wrong elimination: %.2f%% [%.2f%%, %.2f%%]"
              " (alpha 5%%); %d configurations should have won; %d of %d clearly failing ones"
              " eliminated; %d eliminated in all\n",
              kDecisions, wrong, 100.0 * wrong / kDecisions, 100 * ci.low, 100 * ci.high,
              should_win_total, clearly_out_eliminated, clearly_out_total, eliminated_total);
  EXPECT_LE(static_cast<double>(wrong) / kDecisions, 0.05);
  EXPECT_LE(ci.low, 0.05);
  // The funnel is not merely cautious: it removes most configurations that clearly fail.
  EXPECT_GE(clearly_out_eliminated, 0.9 * clearly_out_total);
}

}  // namespace
}  // namespace pipette
