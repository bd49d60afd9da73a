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

Summary Summarize(std::span<const double> samples, bool with_percentiles) {
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
  const Interval ci = BootstrapMedianCi(samples);
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
