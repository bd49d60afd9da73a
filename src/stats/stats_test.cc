#include "pipette/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace pipette {
namespace {

const std::vector<double> kSkewed = {1, 2, 3, 4, 100};
const std::vector<double> kOneToTen = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

TEST(StatsTest, MeanMedianStddevByHand) {
  EXPECT_DOUBLE_EQ(Mean(kSkewed), 22.0);
  EXPECT_DOUBLE_EQ(Median(kSkewed), 3.0);
  // Deviations from 22: -21 -20 -19 -18 78; squares sum to 7610; 7610 / 4 = 1902.5.
  EXPECT_DOUBLE_EQ(SampleStddev(kSkewed), std::sqrt(1902.5));
  EXPECT_DOUBLE_EQ(Median(kOneToTen), 5.5);  // even count: mean of the middle two
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{7}), 7.0);
}

TEST(StatsTest, StddevOfFewerThanTwoSamplesIsZero) {
  EXPECT_EQ(SampleStddev(std::vector<double>{}), 0.0);
  EXPECT_EQ(SampleStddev(std::vector<double>{42}), 0.0);
}

TEST(StatsTest, EmptyInputGivesNaN) {
  const std::vector<double> empty;
  EXPECT_TRUE(std::isnan(Mean(empty)));
  EXPECT_TRUE(std::isnan(Median(empty)));
  EXPECT_TRUE(std::isnan(Percentile(empty, 50)));
  const Interval ci = BootstrapMedianCi(empty);
  EXPECT_TRUE(std::isnan(ci.low));
  EXPECT_TRUE(std::isnan(ci.high));
}

TEST(StatsTest, WelfordIsStableForLargeValuesWithSmallSpread) {
  // A naive sum-of-squares formula loses every digit here.
  const std::vector<double> x = {1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16};
  EXPECT_NEAR(SampleStddev(x), std::sqrt(30.0), 1e-9);
  EXPECT_DOUBLE_EQ(Mean(x), 1e9 + 10);
}

TEST(StatsTest, PercentileMatchesNumpyType7) {
  // numpy.percentile(range(1, 11), q): h = 9 q / 100, interpolated between ranks.
  EXPECT_DOUBLE_EQ(Percentile(kOneToTen, 50), 5.5);
  EXPECT_DOUBLE_EQ(Percentile(kOneToTen, 90), 9.1);
  EXPECT_DOUBLE_EQ(Percentile(kOneToTen, 99), 9.91);
  EXPECT_DOUBLE_EQ(Percentile(kOneToTen, 25), 3.25);
  EXPECT_DOUBLE_EQ(Percentile(kOneToTen, 0), 1.0);
  EXPECT_DOUBLE_EQ(Percentile(kOneToTen, 100), 10.0);
  // Order of the input does not matter; q outside [0, 100] is clamped.
  const std::vector<double> shuffled = {7, 3, 10, 1, 5, 9, 2, 8, 4, 6};
  EXPECT_DOUBLE_EQ(Percentile(shuffled, 90), 9.1);
  EXPECT_DOUBLE_EQ(Percentile(shuffled, 150), 10.0);
  EXPECT_DOUBLE_EQ(Percentile(shuffled, -5), 1.0);
  EXPECT_DOUBLE_EQ(Percentile(kSkewed, 50), Median(kSkewed));
  EXPECT_TRUE(std::isnan(Percentile(kSkewed, std::nan(""))));
}

TEST(StatsTest, BootstrapIsDeterministicForASeed) {
  const std::vector<double> x = {10.1, 9.8, 10.3, 10.0, 9.9, 10.2, 10.05, 9.7, 10.4};
  const Interval a = BootstrapMedianCi(x, 0.95, 2000, 123);
  const Interval b = BootstrapMedianCi(x, 0.95, 2000, 123);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  const Interval c = BootstrapMedianCi(x);
  const Interval d = BootstrapMedianCi(x);
  EXPECT_EQ(c.low, d.low);
  EXPECT_EQ(c.high, d.high);
}

TEST(StatsTest, BootstrapSequenceIsPinned) {
  // Pins the generator and the index mapping: a change here changes every stored interval.
  const std::vector<double> x = {1.5, 2.25, 3.0, 4.75, 5.0, 6.5};
  const Interval ci = BootstrapMedianCi(x, 0.9, 500, 7);
  EXPECT_DOUBLE_EQ(ci.low, 2.25);
  EXPECT_DOUBLE_EQ(ci.high, 5.625);
}

TEST(StatsTest, BootstrapIntervalContainsTheMedianAndLiesWithinTheData) {
  const std::vector<double> x = {10.1, 9.8, 10.3, 10.0, 9.9, 10.2, 10.05, 9.7, 10.4};
  const Interval ci = BootstrapMedianCi(x);
  EXPECT_LE(ci.low, Median(x));
  EXPECT_GE(ci.high, Median(x));
  EXPECT_GE(ci.low, 9.7);
  EXPECT_LE(ci.high, 10.4);
  EXPECT_LT(ci.low, ci.high);
  // A narrower confidence gives a narrower (or equal) interval.
  const Interval narrow = BootstrapMedianCi(x, 0.5);
  EXPECT_GE(narrow.low, ci.low);
  EXPECT_LE(narrow.high, ci.high);
}

TEST(StatsTest, BootstrapOfTwoSamplesSpansThem) {
  // Resample medians are 1, 2, 3 with probabilities 1/4, 1/2, 1/4: the 2.5% and 97.5%
  // percentiles are the two samples.
  const Interval ci = BootstrapMedianCi(std::vector<double>{1, 3});
  EXPECT_DOUBLE_EQ(ci.low, 1.0);
  EXPECT_DOUBLE_EQ(ci.high, 3.0);
}

TEST(StatsTest, BootstrapOfConstantOrSingleSampleIsDegenerate) {
  const Interval constant = BootstrapMedianCi(std::vector<double>{5, 5, 5, 5, 5});
  EXPECT_EQ(constant.low, 5.0);
  EXPECT_EQ(constant.high, 5.0);
  const Interval single = BootstrapMedianCi(std::vector<double>{42});
  EXPECT_EQ(single.low, 42.0);
  EXPECT_EQ(single.high, 42.0);
}

TEST(StatsTest, SummarizeFillsEveryField) {
  const Summary s = Summarize(kSkewed);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.mean, 22.0);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(1902.5));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(1902.5) / 22.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 100.0);
  EXPECT_LE(s.ci95_low, s.median);
  EXPECT_GE(s.ci95_high, s.median);
  EXPECT_FALSE(s.p50.has_value());
  EXPECT_FALSE(s.p90.has_value());
  EXPECT_FALSE(s.p99.has_value());
}

TEST(StatsTest, SummarizeWithPercentiles) {
  const Summary s = Summarize(kOneToTen, /*with_percentiles=*/true);
  ASSERT_TRUE(s.p50 && s.p90 && s.p99);
  EXPECT_DOUBLE_EQ(*s.p50, 5.5);
  EXPECT_DOUBLE_EQ(*s.p90, 9.1);
  EXPECT_DOUBLE_EQ(*s.p99, 9.91);
}

TEST(StatsTest, CvIsZeroWhenMeanIsZero) {
  const Summary s = Summarize(std::vector<double>{-1, 1});
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_EQ(s.cv, 0.0);
}

TEST(StatsTest, SummaryOfConstantDataMeetsAnyTarget) {
  const Summary s = Summarize(std::vector<double>{7, 7, 7, 7, 7});
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.ci95_low, 7.0);
  EXPECT_EQ(s.ci95_high, 7.0);
  EXPECT_TRUE(CiWithinTarget(s, 0.0));
}

TEST(StatsTest, CiWithinTarget) {
  Summary s;
  s.median = 100;
  s.ci95_low = 98.5;
  s.ci95_high = 101.5;
  EXPECT_TRUE(CiWithinTarget(s, 0.02));
  EXPECT_FALSE(CiWithinTarget(s, 0.01));
  s.ci95_low = 98;  // on the boundary counts as within
  s.ci95_high = 102;
  EXPECT_TRUE(CiWithinTarget(s, 0.02));
  s.ci95_low = 97.9;  // low end outside
  EXPECT_FALSE(CiWithinTarget(s, 0.02));
  s.ci95_low = 99;  // high end outside
  s.ci95_high = 102.1;
  EXPECT_FALSE(CiWithinTarget(s, 0.02));
  s.ci95_high = std::nan("");
  EXPECT_FALSE(CiWithinTarget(s, 0.02));
}

TEST(StatsTest, ToJsonWritesTheMetricsBlock) {
  const nlohmann::json j = ToJson(Summarize(kSkewed), "tokens/s");
  EXPECT_EQ(j["unit"], "tokens/s");
  EXPECT_EQ(j["n"], 5);
  EXPECT_DOUBLE_EQ(j["median"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j["mean"].get<double>(), 22.0);
  for (const char* key : {"stddev", "cv", "min", "max", "ci95_low", "ci95_high"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_FALSE(j.contains("p50"));
  EXPECT_EQ(j.size(), 10u);

  const nlohmann::json with_p = ToJson(Summarize(kOneToTen, true), "ms");
  EXPECT_DOUBLE_EQ(with_p["p90"].get<double>(), 9.1);
  EXPECT_DOUBLE_EQ(with_p["p99"].get<double>(), 9.91);
  EXPECT_EQ(with_p.size(), 13u);
}

TEST(StatsTest, ToJsonWritesNonFiniteValuesAsNull) {
  const nlohmann::json j = ToJson(Summarize(std::vector<double>{}), "ms");
  EXPECT_EQ(j["n"], 0);
  EXPECT_EQ(j.dump().find("NaN"), std::string::npos);
  EXPECT_NE(j.dump().find("\"median\":null"), std::string::npos);
}

}  // namespace
// Repetitions at about 360 and 470 tokens/s (issue 7's Q8_0 run), 6 and 4 of them.
TEST(FindTwoClustersTest, NamesTheTwoGroupsOfABimodalSample) {
  const std::vector<double> x = {471, 352, 360, 468, 355, 361, 480, 363, 371, 462};
  const auto c = FindTwoClusters(x);
  ASSERT_TRUE(c.has_value());
  // Sorted: 352 355 360 361 363 371 | 462 468 471 480; the largest gap is 371 -> 462.
  EXPECT_DOUBLE_EQ(c->low_center, 360.5);  // (360 + 361) / 2
  EXPECT_DOUBLE_EQ(c->high_center, 469.5);  // (468 + 471) / 2
  EXPECT_EQ(c->low_count, 6u);
  EXPECT_EQ(c->high_count, 4u);
  EXPECT_DOUBLE_EQ(c->gap, 91.0);
}

TEST(FindTwoClustersTest, UnimodalSamplesHaveNone) {
  EXPECT_FALSE(FindTwoClusters(std::vector<double>{490, 495, 498, 500, 501, 503, 505, 510}));
  EXPECT_FALSE(FindTwoClusters(kOneToTen));  // evenly spread: every gap is 1
  EXPECT_FALSE(FindTwoClusters(std::vector<double>(8, 100.0)));  // identical: no gap at all
}

TEST(FindTwoClustersTest, FewerThanEightSamplesHaveNone) {
  EXPECT_FALSE(FindTwoClusters(std::vector<double>{100, 101, 102, 200, 201, 202, 203}));
  EXPECT_TRUE(FindTwoClusters(std::vector<double>{100, 101, 102, 103, 200, 201, 202, 203}));
}

TEST(FindTwoClustersTest, OneOutlierIsNotACluster) {
  // 200 alone is 1 sample (< 2): the splits considered leave it with 103..106, gaps of 1.
  EXPECT_FALSE(FindTwoClusters(std::vector<double>{100, 101, 102, 103, 104, 105, 106, 200}));
  // Two of ten at 200 are 20%: a cluster.
  const auto c = FindTwoClusters(std::vector<double>{100, 101, 102, 103, 104, 105, 106, 107, 200,
                                                     202});
  ASSERT_TRUE(c.has_value());
  EXPECT_DOUBLE_EQ(c->low_center, 103.5);
  EXPECT_DOUBLE_EQ(c->high_center, 201.0);
  EXPECT_EQ(c->high_count, 2u);
}

TEST(FindTwoClustersTest, AGapBelowFivePercentOfTheMedianIsNotNamed) {
  // Two exact values 0.1% apart (a timer's resolution): separated, but not worth naming.
  EXPECT_FALSE(FindTwoClusters(std::vector<double>{100, 100, 100, 100, 100.1, 100.1, 100.1,
                                                   100.1}));
  // 4 apart: 4 < 5% of the median 102 (5.1).
  EXPECT_FALSE(FindTwoClusters(std::vector<double>{100, 100, 100, 100, 104, 104, 104, 104}));
  // 6 apart: 6 >= 5% of the median 103 (5.15).
  EXPECT_TRUE(FindTwoClusters(std::vector<double>{100, 100, 100, 100, 106, 106, 106, 106}));
}

TEST(FindTwoClustersTest, OneSpreadOutGroupIsNotTwo) {
  // A gap of 20 between groups that each spread over 30: Ashman's D is about 3, below 8.
  EXPECT_FALSE(FindTwoClusters(std::vector<double>{400, 410, 420, 430, 450, 460, 470, 480}));
}

// Normal draws from a seeded std::mt19937_64 (Box-Muller written out, so the samples do not
// depend on the standard library's distributions).
std::vector<double> NormalSample(std::mt19937_64& rng, size_t n, double mean, double sd) {
  const auto uniform = [&rng] {  // (0, 1) from the top 53 bits
    return (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0;
  };
  std::vector<double> x(n);
  for (double& v : x) {
    const double u1 = uniform(), u2 = uniform();  // in this order on every compiler
    v = mean + sd * std::sqrt(-2 * std::log(u1)) * std::cos(2 * 3.141592653589793 * u2);
  }
  return x;
}

TEST(FindTwoClustersTest, NoFalsePositivesOnNoisyUnimodalSamples) {
  std::mt19937_64 rng(7);
  int found = 0;
  for (size_t n : {10, 12, 20, 40}) {
    for (int trial = 0; trial < 500; ++trial) {
      found += FindTwoClusters(NormalSample(rng, n, 500, 15)).has_value();  // cv 3%
    }
  }
  EXPECT_EQ(found, 0);
}

TEST(FindTwoClustersTest, FindsSeparatedGroupsOfNoisySamples) {
  std::mt19937_64 rng(11);
  int found = 0;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<double> x = NormalSample(rng, 12, 360, 8);
    const std::vector<double> high = NormalSample(rng, 8, 470, 10);
    x.insert(x.end(), high.begin(), high.end());
    const auto c = FindTwoClusters(x);
    if (!c) continue;
    ++found;
    EXPECT_NEAR(c->low_center, 360, 12);
    EXPECT_NEAR(c->high_center, 470, 15);
  }
  EXPECT_GE(found, 95);
}

TEST(StatsTest, OrderStatisticMedianCiMatchesTheBinomialTable) {
  // n = 10: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024, so j = 2: [x(2), x(9)].
  std::vector<double> ten = {10, 3, 1, 7, 5, 2, 9, 4, 8, 6};
  Interval ci = OrderStatisticMedianCi(ten);
  EXPECT_EQ(ci.low, 2);
  EXPECT_EQ(ci.high, 9);
  // n = 100: the textbook ranks 40 and 61.
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  ci = OrderStatisticMedianCi(hundred);
  EXPECT_EQ(ci.low, 40);
  EXPECT_EQ(ci.high, 61);
  // Too few samples for 95%: the whole range; none: NaN.
  ci = OrderStatisticMedianCi(std::vector<double>{3, 1, 2, 5, 4});
  EXPECT_EQ(ci.low, 1);
  EXPECT_EQ(ci.high, 5);
  EXPECT_TRUE(std::isnan(OrderStatisticMedianCi(std::vector<double>{}).low));
}

TEST(StatsTest, OrderStatisticIntervalAgreesWithTheBootstrapOnALongSeries) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> d(0.6, 0.05);
  std::vector<double> x(5000);
  for (double& v : x) v = d(rng);
  const Interval os = OrderStatisticMedianCi(x);
  const Interval bs = BootstrapMedianCi(x, 0.95, 2000, 11);
  EXPECT_NEAR(os.low, bs.low, 0.002);
  EXPECT_NEAR(os.high, bs.high, 0.002);
  const Summary s = Summarize(x, true, MedianCi::kOrderStatistic);
  EXPECT_EQ(s.ci95_low, os.low);
  EXPECT_TRUE(s.p99.has_value());
}

TEST(StatsTest, ClusterBootstrapWidensWhenRunsDisagree) {
  // Three runs of one configuration: two near 11.48 and 11.45, a long one near 11.33.
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<std::vector<double>> runs(3);
  for (int i = 0; i < 6; ++i) runs[0].push_back(11.48 + noise(rng));
  for (int i = 0; i < 8; ++i) runs[1].push_back(11.45 + noise(rng));
  for (int i = 0; i < 40; ++i) runs[2].push_back(11.33 + noise(rng));
  std::vector<double> all;
  for (const auto& r : runs) all.insert(all.end(), r.begin(), r.end());
  const Interval flat = BootstrapMedianCi(all);
  const Interval cluster = ClusterBootstrapMedianCi(runs);
  // Pooling the repetitions alone leaves two of the three run medians outside the interval;
  // resampling the runs too covers them.
  EXPECT_LT(flat.high, 11.40);
  EXPECT_GE(cluster.high, 11.45);
  EXPECT_LE(cluster.low, 11.34);
  // One run: the plain bootstrap; deterministic; empty runs ignored.
  const Interval one = ClusterBootstrapMedianCi({runs[2], {}});
  const Interval plain = BootstrapMedianCi(runs[2]);
  EXPECT_EQ(one.low, plain.low);
  EXPECT_EQ(one.high, plain.high);
  EXPECT_EQ(ClusterBootstrapMedianCi(runs).low, cluster.low);
  EXPECT_TRUE(std::isnan(ClusterBootstrapMedianCi({{}, {}}).low));
}

TEST(StatsTest, RatioOfMediansIntervalCoversTheTrueRatio) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> a_dist(100, 2), b_dist(110, 2);
  std::vector<double> a(20), b(20);
  for (double& x : a) x = a_dist(rng);
  for (double& x : b) x = b_dist(rng);
  const Interval ci = BootstrapRatioOfMediansCi(a, b);
  EXPECT_LT(ci.low, 1.1);
  EXPECT_GT(ci.high, 1.1);
  EXPECT_GT(ci.low, 1.05);  // clearly faster: the interval excludes 1
  const Interval same = BootstrapRatioOfMediansCi(a, a);
  EXPECT_LT(same.low, 1.0);
  EXPECT_GT(same.high, 1.0);
  EXPECT_EQ(BootstrapRatioOfMediansCi(a, b).low, ci.low);  // deterministic
  EXPECT_TRUE(std::isnan(BootstrapRatioOfMediansCi({}, b).low));
}

TEST(StatsTest, WilsonIntervalOfAProportion) {
  // 491 of 511 positions agree: p = 0.9609; Wilson 95% [0.9403, 0.9746] (hand-computed).
  const Interval ci = WilsonInterval(491, 511);
  EXPECT_NEAR(ci.low, 0.9403, 5e-4);
  EXPECT_NEAR(ci.high, 0.9746, 5e-4);
  const Interval all = WilsonInterval(10, 10);  // not empty at 1
  EXPECT_LT(all.low, 1.0);
  EXPECT_DOUBLE_EQ(all.high, 1.0);
  EXPECT_TRUE(std::isnan(WilsonInterval(0, 0).low));
}

TEST(StatsTest, ClusterBootstrapProportionWidensWhenAttemptsAgree) {
  // 10 questions x 2 attempts: 5 answered right twice, 5 wrong twice. Attempts of one question
  // agree, so there are 10 independent observations, not 20: the clustered interval is wider than
  // Wilson's on 20 (hand-computed [0.299, 0.701]).
  std::vector<std::pair<int, int>> clusters;
  for (int i = 0; i < 5; ++i) clusters.push_back({2, 2});
  for (int i = 0; i < 5; ++i) clusters.push_back({0, 2});
  const Interval clustered = ClusterBootstrapProportionCi(clusters);
  const Interval wilson = WilsonInterval(10, 20);
  EXPECT_LT(clustered.low, wilson.low);
  EXPECT_GT(clustered.high, wilson.high);
  EXPECT_NEAR(clustered.low, 0.2, 1e-9);   // a binomial(10, 0.5) resample's 2.5th percentile
  EXPECT_NEAR(clustered.high, 0.8, 1e-9);
  EXPECT_EQ(ClusterBootstrapProportionCi(clusters).low, clustered.low);  // deterministic
  const Interval all = ClusterBootstrapProportionCi({{2, 2}, {2, 2}, {0, 0}});
  EXPECT_DOUBLE_EQ(all.low, 1.0);
  EXPECT_DOUBLE_EQ(all.high, 1.0);
  EXPECT_TRUE(std::isnan(ClusterBootstrapProportionCi({}).low));
}

TEST(StatsTest, McNemarExactPValue) {
  // 1 vs 9 discordant pairs: 2 x P(X <= 1 | n = 10, 1/2) = 2 x 11/1024.
  EXPECT_NEAR(McNemarExactP(1, 9), 22.0 / 1024.0, 1e-12);
  EXPECT_NEAR(McNemarExactP(9, 1), 22.0 / 1024.0, 1e-12);
  EXPECT_DOUBLE_EQ(McNemarExactP(5, 5), 1.0);
  EXPECT_DOUBLE_EQ(McNemarExactP(0, 0), 1.0);
  EXPECT_NEAR(McNemarExactP(0, 6), 2.0 / 64.0, 1e-12);
  EXPECT_LT(McNemarExactP(100, 200), 1e-7);  // large counts stay finite
}

}  // namespace pipette
