#include "pipette/record.h"

#include <cmath>

namespace pipette::record {

using nlohmann::json;

const json* Find(const json& j, std::string_view pointer) {
  const json::json_pointer p{std::string(pointer)};
  return j.contains(p) ? &j.at(p) : nullptr;
}

json ValueAt(const json& j, std::string_view pointer) {
  const json* v = Find(j, pointer);
  return v != nullptr ? *v : json();
}

std::string StringAt(const json& j, std::string_view pointer) {
  const json* v = Find(j, pointer);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::string TextAt(const json& j, std::string_view pointer) {
  const json* v = Find(j, pointer);
  if (v == nullptr || v->is_null()) return {};
  return v->is_string() ? v->get<std::string>() : v->dump();
}

std::optional<double> NumberAt(const json& j, std::string_view pointer) {
  const json* v = Find(j, pointer);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  const double x = v->get<double>();
  return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
}

std::string BenchmarkId(const json& record) { return StringAt(record, "/benchmark/id"); }

std::string ConfigId(const json& record) { return StringAt(record, "/config_id"); }

bool IsOk(const json& record) { return StringAt(record, "/status") == "ok"; }

namespace {

// logs.<list> in order: a string as it is, any other entry as its JSON text.
std::vector<std::string> LogLines(const json& record, std::string_view pointer) {
  std::vector<std::string> out;
  const json* w = Find(record, pointer);
  if (w == nullptr || !w->is_array()) return out;
  for (const json& x : *w) out.push_back(x.is_string() ? x.get<std::string>() : x.dump());
  return out;
}

}  // namespace

std::vector<std::string> Warnings(const json& record) {
  std::vector<std::string> out;
  for (std::string& w : LogLines(record, "/logs/warnings")) {
    if (!IsEngineNote(w)) out.push_back(std::move(w));
  }
  return out;
}

std::vector<std::string> Notes(const json& record) {
  std::vector<std::string> out = LogLines(record, "/logs/notes");
  for (std::string& w : LogLines(record, "/logs/warnings")) {
    if (IsEngineNote(w)) out.push_back(std::move(w));
  }
  return out;
}

bool IsEngineNote(std::string_view line) {
  // llama-vocab.cpp's load(): an id past the vocabulary is ignored for the default, and a token
  // that looks like a control token gets that type; both logged at WARN.
  const auto has = [line](std::string_view part) { return line.find(part) != line.npos; };
  return (has("bad special token: '") && has(", using default id")) ||
         (has("control-looking token: ") && has("its type will be overridden"));
}

namespace {

// metrics.<metric> when it is an object, else nullptr.
const json* MetricObject(const json& record, std::string_view metric) {
  if (!record.is_object()) return nullptr;
  const auto metrics = record.find("metrics");
  if (metrics == record.end() || !metrics->is_object()) return nullptr;
  const auto m = metrics->find(std::string(metric));
  return m != metrics->end() && m->is_object() ? &*m : nullptr;
}

}  // namespace

std::optional<double> MetricValue(const json& record, std::string_view metric,
                                  std::string_view field) {
  const json* m = MetricObject(record, metric);
  if (m == nullptr) return std::nullopt;
  const auto v = m->find(std::string(field));
  if (v == m->end() || !v->is_number()) return std::nullopt;
  const double x = v->get<double>();
  return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
}

std::string MetricUnit(const json& record, std::string_view metric) {
  const json* m = MetricObject(record, metric);
  if (m == nullptr) return {};
  const auto unit = m->find("unit");
  return unit != m->end() && unit->is_string() ? unit->get<std::string>() : std::string();
}

}  // namespace pipette::record
