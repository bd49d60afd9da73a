#include "pipette/soak.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "pipette/stats.h"

namespace pipette {
namespace {

// Medians of the first and the last max(1, n / 10) values.
std::pair<double, double> TenthMedians(const std::vector<double>& values) {
  const size_t tenth = std::max<size_t>(1, values.size() / 10);
  std::vector<double> first, last;
  for (size_t i = 0; i < tenth; ++i) {
    first.push_back(values[i]);
    last.push_back(values[values.size() - 1 - i]);
  }
  return {Median(first), Median(last)};
}

// Least-squares slope of y on time, per minute.
double SlopePerMinute(const std::vector<double>& t_s, const std::vector<double>& y) {
  double mt = 0, my = 0;
  for (size_t i = 0; i < t_s.size(); ++i) {
    mt += t_s[i] / 60;
    my += y[i];
  }
  mt /= static_cast<double>(t_s.size());
  my /= static_cast<double>(t_s.size());
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < t_s.size(); ++i) {
    sxy += (t_s[i] / 60 - mt) * (y[i] - my);
    sxx += (t_s[i] / 60 - mt) * (t_s[i] / 60 - mt);
  }
  return sxx > 0 ? sxy / sxx : 0;
}

// One shape: drift and slope of the throughput itself.
void DriftOfOneShape(const std::vector<SoakPoint>& points, SoakAnalysis& a) {
  std::vector<double> t_s, tps;
  for (const SoakPoint& p : points) {
    t_s.push_back(p.t_s);
    tps.push_back(p.decode_tps);
  }
  std::tie(a.first_tenth_tps, a.last_tenth_tps) = TenthMedians(tps);
  a.drift = a.first_tenth_tps > 0 ? a.last_tenth_tps / a.first_tenth_tps - 1 : 0;
  a.slope_tps_per_min = SlopePerMinute(t_s, tps);
}

// Several shapes: each request against its own shape's start, then drift and slope of the ratios.
void DriftPerShape(const std::vector<SoakPoint>& points, SoakAnalysis& a) {
  std::vector<std::vector<double>> by_shape(a.shapes);
  for (const SoakPoint& p : points) by_shape[p.shape].push_back(p.decode_tps);
  a.per_shape.resize(a.shapes);
  for (int s = 0; s < a.shapes; ++s) {
    SoakShapeAnalysis& shape = a.per_shape[s];
    shape.requests = static_cast<int>(by_shape[s].size());
    if (by_shape[s].empty()) continue;
    std::tie(shape.first_tenth_tps, shape.last_tenth_tps) = TenthMedians(by_shape[s]);
    shape.drift = shape.first_tenth_tps > 0 ? shape.last_tenth_tps / shape.first_tenth_tps - 1 : 0;
  }
  std::vector<double> t_s, ratios;
  for (const SoakPoint& p : points) {
    const double base = a.per_shape[p.shape].first_tenth_tps;
    if (base <= 0) continue;
    t_s.push_back(p.t_s);
    ratios.push_back(p.decode_tps / base);
  }
  if (ratios.size() < 2) return;
  std::tie(a.first_tenth_tps, a.last_tenth_tps) = TenthMedians(ratios);
  a.drift = a.first_tenth_tps > 0 ? a.last_tenth_tps / a.first_tenth_tps - 1 : 0;
  a.slope_tps_per_min = SlopePerMinute(t_s, ratios);
}

}  // namespace

SoakAnalysis AnalyzeSoak(const std::vector<SoakPoint>& points, const SoakThresholds& t) {
  SoakAnalysis a;
  a.requests = static_cast<int>(points.size());
  if (points.size() < 2) return a;
  a.duration_s = points.back().t_s - points.front().t_s;
  for (const SoakPoint& p : points) a.shapes = std::max(a.shapes, p.shape + 1);
  if (a.shapes == 1) {
    DriftOfOneShape(points, a);
  } else {
    DriftPerShape(points, a);
  }
  // Memory windows: a quarter of the run up to a minute, widened to hold a full cycle of shapes
  // at either end (the peak follows the longest shape).
  const double t0 = points.front().t_s, t1 = points.back().t_s;
  const size_t cycle = std::min<size_t>(points.size(), a.shapes) - 1;
  a.window_s = std::max({std::min(60.0, a.duration_s / 4), points[cycle].t_s - t0,
                         t1 - points[points.size() - 1 - cycle].t_s});
  for (const SoakPoint& p : points) {
    if (p.t_s <= t0 + a.window_s) a.first_window_peak_bytes = std::max(a.first_window_peak_bytes, p.peak_bytes);
    if (p.t_s >= t1 - a.window_s) a.last_window_peak_bytes = std::max(a.last_window_peak_bytes, p.peak_bytes);
  }
  a.growth_bytes = static_cast<int64_t>(a.last_window_peak_bytes) -
                   static_cast<int64_t>(a.first_window_peak_bytes);
  a.drift_flagged = a.drift < -t.max_drop;
  const double limit = std::max(static_cast<double>(t.min_growth_bytes),
                                t.min_growth_fraction * static_cast<double>(a.first_window_peak_bytes));
  a.growth_flagged = static_cast<double>(a.growth_bytes) > limit;
  return a;
}

nlohmann::json ToJson(const SoakAnalysis& a) {
  nlohmann::json j = {{"requests", a.requests}, {"duration_s", a.duration_s}};
  if (a.shapes == 1) {
    j["first_tenth_decode_throughput"] = a.first_tenth_tps;
    j["last_tenth_decode_throughput"] = a.last_tenth_tps;
    j["drift"] = a.drift;
    j["slope_tokens_per_s_per_min"] = a.slope_tps_per_min;
  } else {
    j["drift_basis"] = "per_shape";
    j["first_tenth_relative_throughput"] = a.first_tenth_tps;
    j["last_tenth_relative_throughput"] = a.last_tenth_tps;
    j["drift"] = a.drift;
    j["slope_relative_per_min"] = a.slope_tps_per_min;
    nlohmann::json shapes = nlohmann::json::array();
    for (const SoakShapeAnalysis& s : a.per_shape) {
      shapes.push_back({{"requests", s.requests},
                        {"first_tenth_decode_throughput", s.first_tenth_tps},
                        {"last_tenth_decode_throughput", s.last_tenth_tps},
                        {"drift", s.drift}});
    }
    j["shapes"] = shapes;
  }
  j.update({{"memory_window_s", a.window_s},
            {"first_window_peak_bytes", a.first_window_peak_bytes},
            {"last_window_peak_bytes", a.last_window_peak_bytes},
            {"memory_growth_bytes", a.growth_bytes},
            {"drift_flagged", a.drift_flagged},
            {"growth_flagged", a.growth_flagged}});
  return j;
}

}  // namespace pipette
