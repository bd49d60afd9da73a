// Analysis of a soak run (DESIGN.md 4.1, issues 3 and 26): end-to-end requests back to back for a
// fixed time, to expose thermal decay (decode throughput drifting down) and leaks (peak memory
// growing). A plain soak `soak_<P>_<D>_<minutes>` repeats one shape; a varied soak
// `soak_varied_<P>_<D>_<minutes>` cycles through several (SoakShapes in pipette/benchmark.h).
//
// Decode throughput depends on the context length, so a varied soak is judged shape by shape:
// each request's throughput is divided by the median of its own shape's first tenth of requests,
// and drift compares the first and the last tenth of the run on those ratios. Memory compares the
// highest peak of the first and of the last window, each window at least one full cycle of shapes
// long, so that both see the longest shape.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette {

// One request of the soak.
struct SoakPoint {
  double t_s = 0;             // request start, seconds since the soak started
  double decode_tps = 0;      // decode throughput of the request, tokens/s; 0: not measured
  uint64_t peak_bytes = 0;    // runtime process peak memory after the request (DESIGN.md 4.3)
  int shape = 0;              // the request's shape: index into the soak's shapes, >= 0
};

struct SoakThresholds {
  double max_drop = 0.05;             // flag drift when the last tenth is >5% slower than the first
  uint64_t min_growth_bytes = 8u << 20;  // flag growth above max(8 MiB, 5% of the first window)
  double min_growth_fraction = 0.05;
};

// One shape of a varied soak.
struct SoakShapeAnalysis {
  int requests = 0;            // requests of this shape
  double first_tenth_tps = 0;  // median decode throughput of its first 10% of requests (>= 1)
  double last_tenth_tps = 0;   // and of its last 10%, tokens/s
  double drift = 0;            // last_tenth / first_tenth - 1; 0 when first_tenth is 0
};

struct SoakAnalysis {
  int requests = 0;
  double duration_s = 0;
  int shapes = 1;               // distinct shapes: the highest SoakPoint::shape + 1
  // One shape: medians of decode throughput (tokens/s) of the first and the last 10% of requests
  // (at least one request each). Several: medians of the per-shape ratios (each request's
  // throughput / its shape's first_tenth_tps; 1 = as fast as at the start), a pure number.
  double first_tenth_tps = 0;
  double last_tenth_tps = 0;
  double drift = 0;             // last_tenth / first_tenth - 1 (negative: slowing down)
  // Least-squares slope over time: of decode throughput in tokens/s per minute for one shape, of
  // the per-shape ratio per minute (a fraction of the starting speed) for several.
  double slope_tps_per_min = 0;
  double window_s = 0;          // memory windows: min(60 s, duration / 4), at least one cycle
  uint64_t first_window_peak_bytes = 0;  // highest peak in the first window
  uint64_t last_window_peak_bytes = 0;   // highest peak in the last window
  int64_t growth_bytes = 0;     // last - first
  bool drift_flagged = false;
  bool growth_flagged = false;
  std::vector<SoakShapeAnalysis> per_shape;  // several shapes only: by shape index
};

// REQUIRES: points in time order. Fewer than 2 points give zeros and no flags. Points whose
// shape's first tenth has no throughput (decode_tps 0) do not count towards drift.
SoakAnalysis AnalyzeSoak(const std::vector<SoakPoint>& points, const SoakThresholds& t = {});

// The record's `soak` block. One shape: first_tenth_decode_throughput,
// last_tenth_decode_throughput (tokens/s) and slope_tokens_per_s_per_min. Several:
// drift_basis "per_shape", first_tenth_relative_throughput, last_tenth_relative_throughput,
// slope_relative_per_min and `shapes` [{requests, first_tenth_decode_throughput,
// last_tenth_decode_throughput, drift}] by index. Both: requests, duration_s, drift,
// memory_window_s, first/last_window_peak_bytes, memory_growth_bytes, drift_flagged and
// growth_flagged.
nlohmann::json ToJson(const SoakAnalysis& a);

}  // namespace pipette
