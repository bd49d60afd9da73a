// Statistics of repeated measurements (DESIGN.md 4.2 step 6), after google/benchmark's
// src/statistics.cc: each statistic is a small pure function over the per-repetition samples.
//
// Units: every function returns values in the unit of its input samples (tokens/s, ms, bytes);
// the caller names the unit when it serializes a Summary. No function here keeps state or reads
// the clock, so all are thread-safe; the bootstrap is deterministic for a given seed.
// REQUIRES (all functions): samples are finite; the harness rejects NaN and infinite values
// before summarizing (DESIGN.md 4.2 step 5, validation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace pipette {

// The statistics of one metric over the repetitions of one cell. The median is the headline.
struct Summary {
  size_t n = 0;          // number of samples
  double median = 0;     // the headline value
  double mean = 0;       // arithmetic mean
  double stddev = 0;     // sample standard deviation (n - 1 denominator); 0 when n < 2
  double cv = 0;         // coefficient of variation, stddev / mean; 0 when mean == 0
  double min = 0;        // smallest sample
  double max = 0;        // largest sample
  double ci95_low = 0;   // 95% percentile-bootstrap confidence interval of the median
  double ci95_high = 0;  //   (fixed seed: the same samples always give the same interval)
  std::optional<double> p50, p90, p99;  // percentiles; only for per-token latencies
};

// Arithmetic mean. NaN for empty input.
double Mean(std::span<const double> samples);

// Sample standard deviation with the n - 1 denominator, computed with Welford's one-pass update
// (numerically stable for large values with small spread). 0 when fewer than 2 samples.
double SampleStddev(std::span<const double> samples);

// Middle value; the mean of the two middle values for an even count. NaN for empty input.
double Median(std::span<const double> samples);

// The q-th percentile, q in [0, 100] (clamped to it), linearly interpolated between the closest
// ranks: Hyndman & Fan type 7, numpy.percentile's default. Percentile(x, 50) == Median(x).
// NaN for empty input or a NaN q.
double Percentile(std::span<const double> samples, double q);

// A closed interval [low, high] in the unit of the samples.
struct Interval {
  double low = 0;
  double high = 0;
};

// Percentile-bootstrap confidence interval of the median: `resamples` resamples of size n drawn
// with replacement, each one's median taken, and the (1 - confidence) / 2 and (1 + confidence) / 2
// percentiles (type 7) of those medians returned. The generator is std::mt19937_64 seeded with
// `seed`, so the result depends only on the samples, confidence, resamples and seed (the same on
// every platform). n == 1 gives [x, x]; constant samples give [x, x]; empty input gives NaNs.
// Cost: O(resamples * n) time, O(resamples + n) memory.
// REQUIRES: 0 < confidence < 1; resamples >= 1 (fewer is treated as 1).
Interval BootstrapMedianCi(std::span<const double> samples, double confidence = 0.95,
                           int resamples = 10000, uint64_t seed = 0x9e3779b97f4a7c15);

// Percentile-bootstrap interval of the median of several runs' samples pooled, resampled in two
// stages (the cluster bootstrap, Davison & Hinkley, Bootstrap Methods and their Application,
// 1997, 3.8): each resample draws as many runs as there are, with replacement, then each drawn
// run's samples with replacement, and takes the median of them all. Unlike BootstrapMedianCi of
// the concatenation, the interval widens when the runs disagree (a rerun on a busier machine),
// since that variation is real. One run gives BootstrapMedianCi of it (same seed); empty runs are
// ignored; no sample at all gives NaNs. Deterministic for a given seed. Cost: O(resamples * n).
Interval ClusterBootstrapMedianCi(const std::vector<std::vector<double>>& runs,
                                  double confidence = 0.95, int resamples = 10000,
                                  uint64_t seed = 0x9e3779b97f4a7c15);

// Percentile-bootstrap interval of median(b) / median(a) for two independent samples: each
// resample draws a and b with replacement, separately, and takes the ratio of their medians
// (a resample whose median of a is 0 is skipped). How sure `compare`'s B/A is. Deterministic for
// a given seed; NaNs when either sample is empty or every resample was skipped.
// Cost: O(resamples * (|a| + |b|)).
Interval BootstrapRatioOfMediansCi(std::span<const double> a, std::span<const double> b,
                                   double confidence = 0.95, int resamples = 2000,
                                   uint64_t seed = 0x9e3779b97f4a7c15);

// Percentile-bootstrap interval of a proportion whose trials come in clusters (an eval's attempts
// of one question): each resample draws as many clusters as there are, with replacement, and takes
// sum(successes) / sum(trials) of them (the cluster bootstrap over questions of evals.md 4), so a
// question answered right on every attempt counts once, not R times. `clusters` holds
// (successes, trials) pairs; clusters with no trials are ignored; none at all gives NaNs.
// Deterministic for a given seed. Cost: O(resamples * clusters).
Interval ClusterBootstrapProportionCi(const std::vector<std::pair<int, int>>& clusters,
                                      double confidence = 0.95, int resamples = 10000,
                                      uint64_t seed = 0x9e3779b97f4a7c15);

// Exact McNemar test of paired binary outcomes (McNemar 1947; the exact binomial form): of the
// pairs that disagree, `b` went only to the first side and `c` only to the second; the two-sided
// p-value of b under Binomial(b + c, 1/2). 1 when b + c == 0.
double McNemarExactP(int64_t b, int64_t c);

// Wilson score interval of a proportion: `successes` of `trials` (Wilson 1927; the usual
// choice for a fraction such as top-1 agreement over positions: it stays inside [0, 1] and is
// not empty at 0 or 1). z = 1.96 for 95%. [NaN, NaN] when trials <= 0.
// REQUIRES: 0 <= successes <= trials.
Interval WilsonInterval(int64_t successes, int64_t trials, double z = 1.96);

// Distribution-free confidence interval of the median from order statistics (Conover, Practical
// Nonparametric Statistics, 3rd ed., 3.2): with the samples sorted, [x(j), x(n+1-j)] (1-based)
// for the largest j whose binomial tail P(B <= j - 1), B ~ Binomial(n, 1/2), is at most
// (1 - confidence) / 2; its coverage is at least `confidence`. Exact binomial tail, computed in
// log space. O(n log n), no resampling: for long series (thousands of per-token latencies) it is
// what the bootstrap converges to, at a thousandth of the cost. n small enough that no j
// qualifies (n <= 5 at 95%) gives [min, max]; empty input gives NaNs.
// REQUIRES: 0 < confidence < 1.
Interval OrderStatisticMedianCi(std::span<const double> samples, double confidence = 0.95);

// How Summarize takes the 95% interval of the median.
enum class MedianCi {
  kBootstrap,       // BootstrapMedianCi: the methodology's interval (DESIGN.md 4.2)
  kOrderStatistic,  // OrderStatisticMedianCi: for long pooled series (PoolResults)
};

// All statistics of one metric. `with_percentiles` fills p50/p90/p99 (per-token latencies).
// REQUIRES: samples is non-empty (an empty span gives n == 0 and NaN statistics).
Summary Summarize(std::span<const double> samples, bool with_percentiles = false,
                  MedianCi ci = MedianCi::kBootstrap);

// True when the 95% interval of the median lies within +-relative of the median:
// ci95_low >= median * (1 - relative) and ci95_high <= median * (1 + relative) (for a negative
// median the band is taken around |median|). The adaptive repetition loop stops when this holds
// (DESIGN.md 4.2 step 5; relative = 0.02 there). False when any value is NaN.
bool CiWithinTarget(const Summary& summary, double relative);

// Two groups of samples with a clear gap between them, e.g. repetitions that ran at about 360 and
// at about 470 tokens/s because the runtime moved between CPUs of unequal speed (FindTwoClusters).
struct TwoClusters {
  double low_center = 0;   // median of the lower group, in the unit of the samples
  double high_center = 0;  // median of the higher group
  size_t low_count = 0;    // samples in the lower group
  size_t high_count = 0;   // samples in the higher group
  double gap = 0;          // distance between the two groups: highest low to lowest high sample
};

// Detects a two-cluster (bimodal) sample: sorts the samples and splits them at the largest gap
// between neighbours that leaves at least 2 samples and at least 20% of them on each side (one
// outlier or a slow tail is not a cluster). The split counts only when all of these hold:
//   - n >= 8: groups of 2-3 among fewer samples arise by chance too often;
//   - Ashman's D, sqrt(2) (mean_high - mean_low) / sqrt(sd_low^2 + sd_high^2), is at least 8
//     (sample standard deviations, n - 1): the groups are separated, not one spread-out group
//     (chance splits of one normal, uniform or skewed group stay well below it);
//   - the gap is at least 4 times the larger of the two standard deviations;
//   - the gap is at least 5% of |median of all samples|: a split finer than that (a timer's
//     resolution, repeated identical values) is not worth naming.
// nullopt otherwise. Pure and deterministic.
std::optional<TwoClusters> FindTwoClusters(std::span<const double> samples);

// The metrics block of the result record (DESIGN.md 5):
// {unit, n, median, mean, stddev, cv, min, max, ci95_low, ci95_high[, p50, p90, p99]}.
// `unit` is written as given ("tokens/s", "ms", "bytes", "ratio"); non-finite values become null.
nlohmann::json ToJson(const Summary& summary, std::string_view unit);

}  // namespace pipette
