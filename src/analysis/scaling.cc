// Derived views of one or two configurations: context scaling, speed ratios, memory vs size.
#include <algorithm>
#include <limits>
#include <map>

#include "analysis/record_fields.h"
#include "pipette/analysis.h"
#include "pipette/record.h"

namespace pipette {

using nlohmann::json;

namespace {

// A point from `record`'s `metric`, nullopt when the record lacks its median.
std::optional<ScalingPoint> Point(const json& record, const std::string& metric) {
  auto median = record::MetricValue(record, metric);
  if (!median) return std::nullopt;
  ScalingPoint p;
  p.benchmark_id = record::BenchmarkId(record);
  p.prefill_tokens = analysis::PrefillTokensOf(record);
  p.decode_tokens = analysis::DecodeTokensOf(record);
  p.median = *median;
  p.ci95_low = record::MetricValue(record, metric, "ci95_low");
  p.ci95_high = record::MetricValue(record, metric, "ci95_high");
  return p;
}

bool ByPrefill(const ScalingPoint& a, const ScalingPoint& b) {
  return a.prefill_tokens < b.prefill_tokens;
}

}  // namespace

std::vector<ScalingPoint> PrefillScaling(const Configuration& config) {
  std::vector<ScalingPoint> points;
  for (const json& r : config.results) {
    if (analysis::BenchmarkTypeOf(r) != "prefill") continue;
    if (auto p = Point(r, "prefill_throughput")) points.push_back(*p);
  }
  std::stable_sort(points.begin(), points.end(), ByPrefill);
  return points;
}

std::vector<std::vector<ScalingPoint>> DecodeScaling(const Configuration& config) {
  std::map<int, std::vector<ScalingPoint>> curves;  // by D
  for (const json& r : config.results) {
    if (analysis::BenchmarkTypeOf(r) != "decode") continue;
    if (auto p = Point(r, "decode_throughput")) curves[p->decode_tokens].push_back(*p);
  }
  std::vector<std::vector<ScalingPoint>> out;
  for (auto& [d, curve] : curves) {
    std::stable_sort(curve.begin(), curve.end(), ByPrefill);
    const double first = curve.front().median;
    for (ScalingPoint& p : curve) {
      p.retention = first != 0 ? p.median / first : std::numeric_limits<double>::quiet_NaN();
    }
    out.push_back(std::move(curve));
  }
  return out;
}

std::vector<SpeedRatio> SpeedRatios(const Configuration& base, const Configuration& other) {
  std::vector<SpeedRatio> out;
  for (const json& b : base.results) {
    const std::string id = record::BenchmarkId(b);
    const json* o = other.Find(id);
    if (o == nullptr) continue;
    const std::string metric = analysis::HeadlineMetricOf(b);
    if (metric.empty()) continue;
    auto mb = record::MetricValue(b, metric), mo = record::MetricValue(*o, metric);
    if (!mb || !mo) continue;
    SpeedRatio s;
    s.benchmark_id = id;
    s.metric = metric;
    s.unit = record::MetricUnit(b, metric);
    s.base = *mb;
    s.other = *mo;
    s.ratio = *mb != 0 ? *mo / *mb : std::numeric_limits<double>::quiet_NaN();
    out.push_back(s);
  }
  return out;  // base.results is ordered by benchmark id
}

std::optional<MemoryVsSize> MemoryAgainstSize(const Configuration& config) {
  std::optional<MemoryVsSize> best;
  for (const json& r : config.results) {
    auto peak = record::MetricValue(r, "max_host_usage");
    if (!peak || (best && *peak <= best->peak_bytes)) continue;
    best = MemoryVsSize{};
    best->peak_bytes = *peak;
    best->benchmark_id = record::BenchmarkId(r);
  }
  if (!best) return best;
  best->file_bytes = config.model_size_bytes;
  best->ratio = config.model_size_bytes > 0 ? best->peak_bytes / config.model_size_bytes
                                            : std::numeric_limits<double>::quiet_NaN();
  best->overhead_bytes = best->peak_bytes - static_cast<double>(config.model_size_bytes);
  return best;
}

}  // namespace pipette
