#include "pipette/soak.h"

#include <algorithm>

#include "pipette/stats.h"

namespace pipette {

SoakAnalysis AnalyzeSoak(const std::vector<SoakPoint>& points, const SoakThresholds& t) {
  SoakAnalysis a;
  a.requests = static_cast<int>(points.size());
  if (points.size() < 2) return a;
  a.duration_s = points.back().t_s - points.front().t_s;
  const size_t tenth = std::max<size_t>(1, points.size() / 10);
  std::vector<double> first, last;
  for (size_t i = 0; i < tenth; ++i) {
    first.push_back(points[i].decode_tps);
    last.push_back(points[points.size() - 1 - i].decode_tps);
  }
  a.first_tenth_tps = Median(first);
  a.last_tenth_tps = Median(last);
  a.drift = a.first_tenth_tps > 0 ? a.last_tenth_tps / a.first_tenth_tps - 1 : 0;
  // Least squares of throughput on time (minutes).
  double mt = 0, my = 0;
  for (const SoakPoint& p : points) {
    mt += p.t_s / 60;
    my += p.decode_tps;
  }
  mt /= static_cast<double>(points.size());
  my /= static_cast<double>(points.size());
  double sxy = 0, sxx = 0;
  for (const SoakPoint& p : points) {
    sxy += (p.t_s / 60 - mt) * (p.decode_tps - my);
    sxx += (p.t_s / 60 - mt) * (p.t_s / 60 - mt);
  }
  a.slope_tps_per_min = sxx > 0 ? sxy / sxx : 0;
  a.window_s = std::min(60.0, a.duration_s / 4);
  const double t0 = points.front().t_s, t1 = points.back().t_s;
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
  return {{"requests", a.requests},
          {"duration_s", a.duration_s},
          {"first_tenth_decode_throughput", a.first_tenth_tps},
          {"last_tenth_decode_throughput", a.last_tenth_tps},
          {"drift", a.drift},
          {"slope_tokens_per_s_per_min", a.slope_tps_per_min},
          {"memory_window_s", a.window_s},
          {"first_window_peak_bytes", a.first_window_peak_bytes},
          {"last_window_peak_bytes", a.last_window_peak_bytes},
          {"memory_growth_bytes", a.growth_bytes},
          {"drift_flagged", a.drift_flagged},
          {"growth_flagged", a.growth_flagged}};
}

}  // namespace pipette
