// Analysis of a soak run `soak_<P>_<D>_<minutes>` (DESIGN.md 4.1, issue 3): the same end-to-end
// request repeated for a fixed time, to expose thermal decay (throughput drifting down) and leaks
// (peak memory growing).
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette {

// One request of the soak.
struct SoakPoint {
  double t_s = 0;             // request start, seconds since the soak started
  double decode_tps = 0;      // decode throughput of the request, tokens/s
  uint64_t peak_bytes = 0;    // runtime process peak memory after the request (DESIGN.md 4.3)
};

struct SoakThresholds {
  double max_drop = 0.05;             // flag drift when the last tenth is >5% slower than the first
  uint64_t min_growth_bytes = 8u << 20;  // flag growth above max(8 MiB, 5% of the first window)
  double min_growth_fraction = 0.05;
};

struct SoakAnalysis {
  int requests = 0;
  double duration_s = 0;
  double first_tenth_tps = 0;   // median decode throughput of the first 10% of requests
  double last_tenth_tps = 0;    // and of the last 10% (at least one request each)
  double drift = 0;             // last_tenth / first_tenth - 1 (negative: slowing down)
  double slope_tps_per_min = 0; // least-squares slope of decode throughput over time
  double window_s = 0;          // memory windows: min(60 s, duration / 4)
  uint64_t first_window_peak_bytes = 0;  // highest peak in the first window
  uint64_t last_window_peak_bytes = 0;   // highest peak in the last window
  int64_t growth_bytes = 0;     // last - first
  bool drift_flagged = false;
  bool growth_flagged = false;
};

// REQUIRES: points in time order. Fewer than 2 points give zeros and no flags.
SoakAnalysis AnalyzeSoak(const std::vector<SoakPoint>& points, const SoakThresholds& t = {});

nlohmann::json ToJson(const SoakAnalysis& a);

}  // namespace pipette
