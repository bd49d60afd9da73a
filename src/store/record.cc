#include "store/record.h"

#include <cmath>
#include <set>

#include "pipette/benchmark.h"
#include "pipette/record.h"
#include "pipette/store.h"

namespace pipette::store {
namespace {

using nlohmann::json;

bool IsNonEmptyString(const json& record, const char* pointer) {
  return !record::StringAt(record, pointer).empty();
}

// "YYYY-MM-DDTHH:MM:SS" followed by anything (fraction, "Z" or an offset).
bool LooksLikeRfc3339(const std::string& s) {
  static constexpr char kShape[] = "dddd-dd-ddTdd:dd:dd";
  if (s.size() < sizeof(kShape) - 1) return false;
  for (size_t i = 0; i + 1 < sizeof(kShape); ++i) {
    const bool ok = kShape[i] == 'd' ? (s[i] >= '0' && s[i] <= '9') : s[i] == kShape[i];
    if (!ok) return false;
  }
  return true;
}

Status ValidateSamples(const json& samples) {
  if (!samples.is_array()) return MakeError("\"samples\" must be an array");
  std::set<int64_t> reps;
  for (size_t i = 0; i < samples.size(); ++i) {
    const json& s = samples[i];
    if (!s.is_object()) return MakeError("samples[" + std::to_string(i) + "] must be an object");
    const int64_t rep =
        s.contains("rep") && s["rep"].is_number_integer() ? s["rep"].get<int64_t>() : int64_t(i);
    if (s.contains("rep") && !s["rep"].is_number_integer()) {
      return MakeError("samples[" + std::to_string(i) + "].rep must be an integer");
    }
    if (!reps.insert(rep).second) {
      return MakeError("samples has rep " + std::to_string(rep) + " twice");
    }
  }
  return Status::Ok();
}

}  // namespace

bool IsLowercaseUuid(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

Status ValidateRecord(const json& record) {
  if (!record.is_object()) return MakeError("a result record must be a JSON object");
  if (!record.contains("schema") || record["schema"] != kResultSchema) {
    return MakeError(std::string("\"schema\" must be \"") + kResultSchema + "\"");
  }
  if (!IsNonEmptyString(record, "/result_id") ||
      !IsLowercaseUuid(record["result_id"].get<std::string>())) {
    return MakeError("\"result_id\" must be a lowercase UUID");
  }
  if (!IsNonEmptyString(record, "/config_id")) return MakeError("\"config_id\" is missing");
  const std::string status = record::StringAt(record, "/status");
  if (status != "ok" && status != "failed") {
    return MakeError("\"status\" must be \"ok\" or \"failed\"");
  }
  if (status == "failed" && !IsNonEmptyString(record, "/failure/message")) {
    return MakeError("a failed result needs \"failure\": {\"stage\", \"message\"}");
  }
  if (!IsNonEmptyString(record, "/benchmark/id")) return MakeError("\"benchmark.id\" is missing");
  if (!LooksLikeRfc3339(record::StringAt(record, "/started_at"))) {
    return MakeError("\"started_at\" must be an RFC 3339 time");
  }
  if (record.contains("metrics")) {
    const json& metrics = record["metrics"];
    if (!metrics.is_object()) return MakeError("\"metrics\" must be an object");
    for (const auto& [name, m] : metrics.items()) {
      if (!m.is_object()) return MakeError("metrics." + name + " must be an object");
    }
  }
  if (record.contains("samples")) return ValidateSamples(record["samples"]);
  return Status::Ok();
}

IndexedColumns ExtractColumns(const json& record) {
  IndexedColumns c;
  c.result_id = record::StringAt(record, "/result_id");
  c.config_id = record::ConfigId(record);
  c.status = record::StringAt(record, "/status");
  c.benchmark_id = record::BenchmarkId(record);
  c.benchmark_type = record::StringAt(record, "/benchmark/type");
  c.model_file = record::StringAt(record, "/model/file_name");
  c.model_sha256 = record::StringAt(record, "/model/sha256");
  c.quant = record::StringAt(record, "/model/quant");
  c.runtime = record::StringAt(record, "/runtime/name");
  c.runtime_version = record::StringAt(record, "/runtime/version");
  c.runtime_commit = record::StringAt(record, "/runtime/commit");
  c.device_id = record::StringAt(record, "/device/id");
  c.label = record::StringAt(record, "/device/label");
  c.started_at = record::StringAt(record, "/started_at");
  c.finished_at = record::StringAt(record, "/finished_at");
  const json* threads = record::Find(record, "/runtime/settings/threads");
  if (threads != nullptr && threads->is_number_integer()) c.threads = threads->get<int64_t>();
  c.headline_metric = HeadlineMetric(c.benchmark_type);
  if (!c.headline_metric.empty()) {
    c.headline_unit = record::MetricUnit(record, c.headline_metric);
    c.headline = record::MetricValue(record, c.headline_metric, "median");
  }
  return c;
}

std::vector<SampleValue> ExtractSamples(const json& record) {
  std::vector<SampleValue> out;
  if (!record.contains("samples")) return out;
  const json& samples = record["samples"];
  for (size_t i = 0; i < samples.size(); ++i) {
    const json& s = samples[i];
    const int64_t rep = s.contains("rep") ? s["rep"].get<int64_t>() : int64_t(i);
    for (const auto& [key, value] : s.items()) {
      if (key == "rep" || !value.is_number()) continue;
      const double v = value.get<double>();
      if (std::isfinite(v)) out.push_back({rep, key, v});
    }
  }
  return out;
}

}  // namespace pipette::store

namespace pipette {

std::string HeadlineMetric(const std::string& benchmark_type) {
  const auto type = ParseTypeName(benchmark_type);
  return type ? std::string(HeadlineMetric(*type)) : std::string();
}

}  // namespace pipette
