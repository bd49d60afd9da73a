#include "analysis/record_fields.h"

#include <fmt/format.h>

#include <cmath>

#include "pipette/benchmark.h"
#include "pipette/record.h"

namespace pipette::analysis {

using nlohmann::json;

namespace {

std::optional<BenchmarkSpec> ParsedId(const json& record) {
  auto spec = ParseBenchmarkId(record::BenchmarkId(record));
  if (!spec.ok()) return std::nullopt;
  return *spec;
}

int IntAt(const json& record, const char* pointer) {
  const json* v = record::Find(record, pointer);
  return v != nullptr && v->is_number() ? v->get<int>() : -1;
}

}  // namespace

std::string BenchmarkTypeOf(const json& record) {
  if (auto type = ParseTypeName(record::StringAt(record, "/benchmark/type"))) {
    return std::string(TypeName(*type));
  }
  if (auto spec = ParsedId(record)) return std::string(TypeName(spec->type));
  return {};
}

int PrefillTokensOf(const json& record) {
  if (int p = IntAt(record, "/benchmark/prefill_tokens"); p >= 0) return p;
  auto spec = ParsedId(record);
  return spec ? spec->prefill_tokens : 0;
}

int DecodeTokensOf(const json& record) {
  if (int d = IntAt(record, "/benchmark/decode_tokens"); d >= 0) return d;
  auto spec = ParsedId(record);
  return spec ? spec->decode_tokens : 0;
}

int ShapeContextOf(const json& record) {
  const std::string type = BenchmarkTypeOf(record);
  const int p = PrefillTokensOf(record), d = DecodeTokensOf(record);
  if (type == "memory") return p + 1;
  if (type == "prefill" || type == "kl_divergence") return p;
  if (type == "eval") {  // the model's training context (the harness's choice for an eval)
    const int train = IntAt(record, "/model/n_ctx_train");
    return train > 0 ? train : 4096;
  }
  if (type.empty()) return 0;
  return p + d;
}

std::string HeadlineMetricOf(const json& record) {
  auto type = ParseTypeName(BenchmarkTypeOf(record));
  return type ? std::string(HeadlineMetric(*type)) : std::string();
}

size_t PooledCountOf(const json& record) {
  const json* n = record::Find(record, "/pooled/results");
  return n != nullptr && n->is_number_unsigned() ? n->get<size_t>() : 1;
}

json ConfigurationSettings(const json& record) {
  const json* found = record::Find(record, "/runtime/settings");
  json settings = found != nullptr && found->is_object() ? *found : json::object();
  const int shape = ShapeContextOf(record);
  if (settings.contains("n_ctx") && settings["n_ctx"].is_number() && shape > 0 &&
      settings["n_ctx"].get<int>() == shape) {
    settings.erase("n_ctx");
  }
  return settings;
}

std::optional<std::string> ResidentSplitText(const json& record) {
  struct Parts {
    std::optional<double> peak, anon, file, shmem;
  } p;
  std::string what = "peak";
  if (record::MetricValue(record, "rss_file_at_peak")) {
    p = {record::MetricValue(record, "max_host_usage"),
         record::MetricValue(record, "rss_anon_at_peak"),
         record::MetricValue(record, "rss_file_at_peak"),
         record::MetricValue(record, "rss_shmem_at_peak")};
  } else {
    p = {record::NumberAt(record, "/logs/peak_host_bytes_during_cell"),
         record::NumberAt(record, "/logs/rss_anon_bytes_at_peak_during_cell"),
         record::NumberAt(record, "/logs/rss_file_bytes_at_peak_during_cell"),
         record::NumberAt(record, "/logs/rss_shmem_bytes_at_peak_during_cell")};
    what = "peak during the cell";
  }
  if (!p.peak || !p.anon || !p.file) return std::nullopt;
  std::string text = fmt::format("{} {} (anonymous {}, file-backed {}", what, FormatBytes(*p.peak),
                                 FormatBytes(*p.anon), FormatBytes(*p.file));
  if (p.shmem.value_or(0) > 0) text += ", shared " + FormatBytes(*p.shmem);
  if (const auto size = record::NumberAt(record, "/model/size_bytes")) {
    text += "; the model file " + FormatBytes(*size);
  }
  return text + ")";
}

std::string FormatBytes(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (std::abs(bytes) < 1024) return fmt::format("{:.0f} B", bytes);
  double v = bytes / 1024;
  size_t u = 0;
  while (std::abs(v) >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.2f} {}", v, kUnits[u]);
}

std::string FormatNumber(double value, int precision) {
  if (!std::isfinite(value)) return "-";
  if (std::abs(value) >= std::pow(10.0, precision)) return fmt::format("{:.0f}", value);
  return fmt::format("{:.{}g}", value, precision);
}

}  // namespace pipette::analysis
