// Statistics of repeated measurements: see include/pipette/stats.h.
#include "pipette/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace pipette {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Median of `values`, reordering them. REQUIRES: non-empty.
double MedianInPlace(std::vector<double>& values) {
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return lower + (upper - lower) / 2;
}

// Type 7 percentile of already sorted values; q is clamped to [0, 100]. REQUIRES: non-empty.
double SortedPercentile(const std::vector<double>& sorted, double q) {
  if (std::isnan(q)) return kNaN;
  q = std::clamp(q, 0.0, 100.0);
  const double h = (sorted.size() - 1) * (q / 100.0);
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  const double fraction = h - lo;
  return sorted[lo] + fraction * (sorted[lo + 1] - sorted[lo]);
}

// Uniform index in [0, n) from one 64-bit draw (multiply-shift; bias below 2^-50 for small n).
// Written out so that the sequence does not depend on the standard library's distributions.
size_t DrawIndex(std::mt19937_64& rng, size_t n) {
  return static_cast<size_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

// Median of a sorted range [begin, end). REQUIRES: begin < end.
double RangeMedian(const std::vector<double>& sorted, size_t begin, size_t end) {
  const size_t n = end - begin, mid = begin + n / 2;
  return n % 2 == 1 ? sorted[mid] : sorted[mid - 1] + (sorted[mid] - sorted[mid - 1]) / 2;
}

}  // namespace

double Mean(std::span<const double> samples) {
  if (samples.empty()) return kNaN;
  double sum = 0;
  for (double x : samples) sum += x;
  return sum / samples.size();
}

double SampleStddev(std::span<const double> samples) {
  if (samples.size() < 2) return 0;
  // Welford: running mean and sum of squared deviations from it.
  double mean = 0;
  double m2 = 0;
  size_t k = 0;
  for (double x : samples) {
    ++k;
    const double delta = x - mean;
    mean += delta / k;
    m2 += delta * (x - mean);
  }
  return std::sqrt(m2 / (k - 1));
}

double Median(std::span<const double> samples) {
  if (samples.empty()) return kNaN;
  std::vector<double> copy(samples.begin(), samples.end());
  return MedianInPlace(copy);
}

double Percentile(std::span<const double> samples, double q) {
  if (samples.empty()) return kNaN;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return SortedPercentile(sorted, q);
}

Interval BootstrapMedianCi(std::span<const double> samples, double confidence, int resamples,
                           uint64_t seed) {
  if (samples.empty()) return {kNaN, kNaN};
  if (samples.size() == 1) return {samples[0], samples[0]};
  std::mt19937_64 rng(seed);
  const size_t n = samples.size();
  std::vector<double> medians(static_cast<size_t>(std::max(resamples, 1)));
  std::vector<double> resample(n);
  for (double& median : medians) {
    for (double& x : resample) x = samples[DrawIndex(rng, n)];
    median = MedianInPlace(resample);
  }
  std::sort(medians.begin(), medians.end());
  const double alpha = (1.0 - confidence) / 2.0;
  return {SortedPercentile(medians, 100.0 * alpha),
          SortedPercentile(medians, 100.0 * (1.0 - alpha))};
}

Interval ClusterBootstrapMedianCi(const std::vector<std::vector<double>>& runs, double confidence,
                                  int resamples, uint64_t seed) {
  std::vector<const std::vector<double>*> kept;
  for (const auto& run : runs) {
    if (!run.empty()) kept.push_back(&run);
  }
  if (kept.empty()) return {kNaN, kNaN};
  if (kept.size() == 1) return BootstrapMedianCi(*kept[0], confidence, resamples, seed);
  std::mt19937_64 rng(seed);
  const size_t k = kept.size();
  std::vector<double> medians(static_cast<size_t>(std::max(resamples, 1)));
  std::vector<double> resample;
  for (double& median : medians) {
    resample.clear();
    for (size_t g = 0; g < k; ++g) {
      const std::vector<double>& run = *kept[DrawIndex(rng, k)];
      for (size_t i = 0; i < run.size(); ++i) resample.push_back(run[DrawIndex(rng, run.size())]);
    }
    median = MedianInPlace(resample);
  }
  std::sort(medians.begin(), medians.end());
  const double alpha = (1.0 - confidence) / 2.0;
  return {SortedPercentile(medians, 100.0 * alpha),
          SortedPercentile(medians, 100.0 * (1.0 - alpha))};
}

Interval ClusterBootstrapProportionCi(const std::vector<std::pair<int, int>>& clusters,
                                      double confidence, int resamples, uint64_t seed) {
  std::vector<std::pair<int, int>> kept;
  for (const auto& c : clusters) {
    if (c.second > 0) kept.push_back(c);
  }
  if (kept.empty()) return {kNaN, kNaN};
  std::mt19937_64 rng(seed);
  std::vector<double> ratios(static_cast<size_t>(std::max(resamples, 1)));
  for (double& ratio : ratios) {
    int64_t hits = 0, trials = 0;
    for (size_t g = 0; g < kept.size(); ++g) {
      const auto& c = kept[DrawIndex(rng, kept.size())];
      hits += c.first;
      trials += c.second;
    }
    ratio = static_cast<double>(hits) / static_cast<double>(trials);
  }
  std::sort(ratios.begin(), ratios.end());
  const double alpha = (1.0 - confidence) / 2.0;
  return {SortedPercentile(ratios, 100.0 * alpha), SortedPercentile(ratios, 100.0 * (1.0 - alpha))};
}

double McNemarExactP(int64_t b, int64_t c) {
  const int64_t n = b + c;
  if (n <= 0) return 1.0;
  const int64_t k = std::min(b, c);
  // P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so that large n stays finite.
  double tail = 0;
  for (int64_t i = 0; i <= k; ++i) {
    const double log_term = std::lgamma(static_cast<double>(n) + 1) -
                            std::lgamma(static_cast<double>(i) + 1) -
                            std::lgamma(static_cast<double>(n - i) + 1) -
                            static_cast<double>(n) * std::log(2.0);
    tail += std::exp(log_term);
  }
  return std::min(1.0, 2.0 * tail);
}

Interval BootstrapRatioOfMediansCi(std::span<const double> a, std::span<const double> b,
                                   double confidence, int resamples, uint64_t seed) {
  if (a.empty() || b.empty()) return {kNaN, kNaN};
  std::mt19937_64 rng(seed);
  std::vector<double> ratios, ra(a.size()), rb(b.size());
  ratios.reserve(static_cast<size_t>(std::max(resamples, 1)));
  for (int i = 0; i < std::max(resamples, 1); ++i) {
    for (double& x : ra) x = a[DrawIndex(rng, a.size())];
    for (double& x : rb) x = b[DrawIndex(rng, b.size())];
    const double ma = MedianInPlace(ra);
    if (ma != 0) ratios.push_back(MedianInPlace(rb) / ma);
  }
  if (ratios.empty()) return {kNaN, kNaN};
  std::sort(ratios.begin(), ratios.end());
  const double alpha = (1.0 - confidence) / 2.0;
  return {SortedPercentile(ratios, 100.0 * alpha), SortedPercentile(ratios, 100.0 * (1.0 - alpha))};
}

Interval WilsonInterval(int64_t successes, int64_t trials, double z) {
  if (trials <= 0) return {kNaN, kNaN};
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(successes) / n;
  const double z2 = z * z;
  const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

Interval OrderStatisticMedianCi(std::span<const double> samples, double confidence) {
  const size_t n = samples.size();
  if (n == 0) return {kNaN, kNaN};
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const double tail = (1 - confidence) / 2;
  // P(B <= k) for k = 0, 1, ...: pmf(k) = C(n, k) / 2^n, accumulated in log space.
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  double cdf = 0;
  size_t j = 0;  // the largest j (1-based) with P(B <= j - 1) <= tail; 0: none
  for (size_t k = 0; k < n / 2 + 1; ++k) {
    const double log_pmf = std::lgamma(static_cast<double>(n) + 1) -
                           std::lgamma(static_cast<double>(k) + 1) -
                           std::lgamma(static_cast<double>(n - k) + 1) + log_half_n;
    cdf += std::exp(log_pmf);
    if (cdf > tail) break;
    j = k + 1;
  }
  if (j == 0) return {sorted.front(), sorted.back()};
  return {sorted[j - 1], sorted[n - j]};
}

Summary Summarize(std::span<const double> samples, bool with_percentiles, MedianCi method) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) {
    s.median = s.mean = s.stddev = s.cv = s.min = s.max = s.ci95_low = s.ci95_high = kNaN;
    return s;
  }
  s.median = Median(samples);
  s.mean = Mean(samples);
  s.stddev = SampleStddev(samples);
  s.cv = s.mean == 0 ? 0 : s.stddev / s.mean;
  const auto [min, max] = std::minmax_element(samples.begin(), samples.end());
  s.min = *min;
  s.max = *max;
  const Interval ci = method == MedianCi::kOrderStatistic ? OrderStatisticMedianCi(samples)
                                                          : BootstrapMedianCi(samples);
  s.ci95_low = ci.low;
  s.ci95_high = ci.high;
  if (with_percentiles) {
    s.p50 = Percentile(samples, 50);
    s.p90 = Percentile(samples, 90);
    s.p99 = Percentile(samples, 99);
  }
  return s;
}

bool CiWithinTarget(const Summary& summary, double relative) {
  const double tolerance = std::fabs(summary.median) * relative;
  // Written so that any NaN makes a comparison, and so the result, false.
  return summary.ci95_low >= summary.median - tolerance &&
         summary.ci95_high <= summary.median + tolerance;
}

std::optional<TwoClusters> FindTwoClusters(std::span<const double> samples) {
  constexpr size_t kMinSamples = 8;        // fewer: two groups of 2-3 arise by chance too often
  constexpr double kMinShare = 0.2;        // each side holds at least this share of the samples
  constexpr double kMinSeparation = 8;     // Ashman's D of the two sides
  constexpr double kMinSpreads = 4;        // gap / the larger side's standard deviation
  constexpr double kMinRelativeGap = 0.05;  // gap / |median of all samples|
  const size_t n = samples.size();
  if (n < kMinSamples) return std::nullopt;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const size_t min_side = std::max<size_t>(2, static_cast<size_t>(std::ceil(kMinShare * n)));
  // The largest gap between neighbours whose split leaves min_side samples on each side.
  size_t split = 0;
  double gap = 0;
  for (size_t k = min_side; k + min_side <= n; ++k) {
    if (sorted[k] - sorted[k - 1] > gap) {
      gap = sorted[k] - sorted[k - 1];
      split = k;
    }
  }
  if (split == 0) return std::nullopt;  // every candidate gap is 0
  const std::span<const double> low(sorted.data(), split), high(sorted.data() + split, n - split);
  const double sd_low = SampleStddev(low), sd_high = SampleStddev(high);
  // Ashman's D = sqrt(2) |mean difference| / sqrt(sd1^2 + sd2^2); above 2 the groups are
  // separated, and a chance split of one noisy group of 8-20 samples stays well below 8.
  const double pooled = std::sqrt(sd_low * sd_low + sd_high * sd_high);
  const double separation = std::sqrt(2.0) * (Mean(high) - Mean(low));
  const bool separated = separation >= kMinSeparation * pooled &&
                         gap >= kMinSpreads * std::max(sd_low, sd_high) &&
                         gap >= kMinRelativeGap * std::fabs(RangeMedian(sorted, 0, n));
  if (!separated) return std::nullopt;
  return TwoClusters{RangeMedian(sorted, 0, split), RangeMedian(sorted, split, n), split,
                     n - split, gap};
}

nlohmann::json ToJson(const Summary& summary, std::string_view unit) {
  nlohmann::json j = {
      {"unit", std::string(unit)},    {"n", summary.n},
      {"median", summary.median},     {"mean", summary.mean},
      {"stddev", summary.stddev},     {"cv", summary.cv},
      {"min", summary.min},           {"max", summary.max},
      {"ci95_low", summary.ci95_low}, {"ci95_high", summary.ci95_high},
  };
  if (summary.p50) j["p50"] = *summary.p50;
  if (summary.p90) j["p90"] = *summary.p90;
  if (summary.p99) j["p99"] = *summary.p99;
  return j;
}

}  // namespace pipette
