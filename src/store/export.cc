// Result records out as JSON lines or CSV (one row per result and metric).
#include <ostream>
#include <string>
#include <vector>

#include "pipette/record.h"
#include "pipette/store.h"

namespace pipette {
namespace {

using nlohmann::json;

constexpr const char* kCsvColumns[] = {"result_id",     "started_at",
                                       "status",        "benchmark",
                                       "type",          "prefill_tokens",
                                       "decode_tokens", "model_file",
                                       "model_sha256",  "quant",
                                       "runtime",       "runtime_commit",
                                       "threads",       "device_id",
                                       "label",         "metric",
                                       "unit",          "n",
                                       "median",        "mean",
                                       "stddev",        "cv",
                                       "min",           "max",
                                       "ci95_low",      "ci95_high",
                                       "failure_stage", "failure_message"};
constexpr const char* kStatColumns[] = {"n",   "median", "mean",     "stddev",   "cv",
                                        "min", "max",    "ci95_low", "ci95_high"};

// RFC 4180: a field with a comma, quote, CR or LF is quoted, and its quotes doubled.
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// A scalar as CSV text: strings as they are, numbers in their shortest exact form, booleans as
// true/false, anything else (missing, null, arrays, objects) empty.
std::string ScalarText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return {};
}

std::string At(const json& r, const char* pointer) {
  const json* v = record::Find(r, pointer);
  return v != nullptr ? ScalarText(*v) : std::string();
}

void WriteRow(const std::vector<std::string>& fields, std::ostream& out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out << ',';
    out << CsvField(fields[i]);
  }
  out << "\r\n";
}

Status StreamStatus(const std::ostream& out) {
  if (out) return Status::Ok();
  return MakeError("writing the export failed (disk full or output closed?)");
}

}  // namespace

Status ExportJsonl(const std::vector<json>& records, std::ostream& out) {
  for (const json& record : records) {
    if (!record.is_object()) return MakeError("cannot export: a result record is not an object");
    out << record.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  }
  out.flush();
  return StreamStatus(out);
}

Status ExportCsv(const std::vector<json>& records, std::ostream& out) {
  WriteRow(std::vector<std::string>(std::begin(kCsvColumns), std::end(kCsvColumns)), out);
  for (const json& r : records) {
    const std::vector<std::string> head = {At(r, "/result_id"),
                                           At(r, "/started_at"),
                                           At(r, "/status"),
                                           At(r, "/benchmark/id"),
                                           At(r, "/benchmark/type"),
                                           At(r, "/benchmark/prefill_tokens"),
                                           At(r, "/benchmark/decode_tokens"),
                                           At(r, "/model/file_name"),
                                           At(r, "/model/sha256"),
                                           At(r, "/model/quant"),
                                           At(r, "/runtime/name"),
                                           At(r, "/runtime/commit"),
                                           At(r, "/runtime/settings/threads"),
                                           At(r, "/device/id"),
                                           At(r, "/device/label")};
    const std::vector<std::string> failure = {At(r, "/failure/stage"), At(r, "/failure/message")};
    auto row_for = [&](const std::string& metric, const json& m) {
      std::vector<std::string> row = head;
      row.push_back(metric);
      row.push_back(m.contains("unit") ? ScalarText(m["unit"]) : "");
      for (const char* stat : kStatColumns)
        row.push_back(m.contains(stat) ? ScalarText(m[stat]) : "");
      row.insert(row.end(), failure.begin(), failure.end());
      WriteRow(row, out);
    };
    const json metrics = r.contains("metrics") && r["metrics"].is_object() ? r["metrics"] : json();
    if (metrics.empty()) {
      row_for("", json::object());
      continue;
    }
    for (const auto& [name, m] : metrics.items()) row_for(name, m.is_object() ? m : json::object());
  }
  out.flush();
  return StreamStatus(out);
}

}  // namespace pipette
