// A decision funnel's state file (`pipette decide`, schema pipette.funnel/1) as the report's
// FunnelReport (pipette/report.h). The file is written by src/decide/funnel.cc: its "verdict"
// appears when a run ends (and stays, stale, while a resumed run adds cells), so a state without
// one is read from its cells and its "left" log instead.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "pipette/report.h"

namespace pipette {
namespace {

using nlohmann::json;

constexpr const char* kFunnelSchema = "pipette.funnel/1";
constexpr const char* kStages[] = {"screen", "measure", "stabilize"};

std::vector<std::string> Strings(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  for (const json& s : j.at(key)) out.push_back(s.get<std::string>());
  return out;
}

// A field of the wrong shape (nlohmann's own exceptions cover the rest).
struct BadShape : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json& ArrayAt(const json& j, const char* key) {
  static const json kEmpty = json::array();
  if (!j.contains(key) || j[key].is_null()) return kEmpty;
  if (!j[key].is_array()) throw BadShape(std::string("\"") + key + "\" is not a list");
  return j[key];
}

// Device time per stage from the cells: what they ran, whether or not a verdict says so.
std::vector<FunnelReport::Stage> StagesOfCells(const json& cells) {
  std::vector<FunnelReport::Stage> out;
  for (const char* stage : kStages) out.push_back({stage, 0, 0});
  for (const json& c : cells) {
    const std::string stage = c.value("stage", "");
    for (FunnelReport::Stage& s : out) {
      if (s.stage != stage) continue;
      ++s.cells;
      s.seconds += c.value("seconds", 0.0);
    }
  }
  return out;
}

void FromVerdict(const json& v, FunnelReport& f) {
  f.has_verdict = true;
  f.chosen = v.value("chosen", "");
  f.why_none = v.value("why_none", "");
  f.interrupted = v.value("interrupted", false);
  f.budget_spent = v.value("budget_spent", false);
  f.confidence = v.value("confidence", 0.0);
  f.screen_repetitions = v.value("screen_repetitions", 0);
  f.benchmarks = Strings(v, "benchmarks");
  f.benchmarks_skipped = Strings(v, "benchmarks_skipped");
  f.notes = Strings(v, "notes");
  for (const json& c : ArrayAt(v, "configurations")) {
    FunnelReport::Configuration k;
    k.name = c.value("name", "");
    k.stage = c.value("stage", "");
    k.out = c.value("out", false);
    k.reason = c.value("reason", "");
    k.open_limits = Strings(c, "open_limits");
    k.on_front = c.value("on_front", false);
    k.model = c.value("model", "");
    k.device = c.value("device", "");
    k.settings = c.value("settings", json::object());
    f.configurations.push_back(std::move(k));
  }
  for (const json& s : ArrayAt(v, "stages")) {
    f.stages.push_back({s.value("stage", ""), s.value("cells", 0), s.value("seconds", 0.0)});
  }
}

// No verdict yet: the configurations its cells measured, in first-run order, and who left.
void FromCells(const json& state, FunnelReport& f) {
  const json& left = state.contains("left") && state["left"].is_object() ? state["left"]
                                                                         : json::object();
  std::map<std::string, size_t> index;  // config key -> configurations[i]
  for (const json& cell : ArrayAt(state, "cells")) {
    const std::string key = cell.value("config", "");
    if (index.count(key)) continue;
    index[key] = f.configurations.size();
    FunnelReport::Configuration k;
    k.name = cell.value("configuration", key);
    k.stage = cell.value("stage", "");
    if (left.contains(key)) {
      k.out = true;
      k.stage = left[key].value("stage", "");
      k.reason = left[key].value("reason", "");
    }
    f.configurations.push_back(std::move(k));
  }
  // A configuration that is still in stands at the last stage it ran a cell in.
  for (const json& cell : ArrayAt(state, "cells")) {
    FunnelReport::Configuration& k = f.configurations[index[cell.value("config", "")]];
    if (!k.out) k.stage = cell.value("stage", k.stage);
  }
}

}  // namespace

Result<FunnelReport> ParseFunnelState(const json& state, const std::string& state_path) {
  if (!state.is_object()) {
    return MakeError(state_path + ": not a funnel state (not a JSON object)");
  }
  const json schema = state.value("schema", json());
  if (!schema.is_string() || schema.get<std::string>() != kFunnelSchema) {
    return MakeError(fmt::format("{}: not a funnel state (schema {}, expected \"{}\")", state_path,
                                 schema.is_null() ? "missing" : schema.dump(), kFunnelSchema));
  }
  FunnelReport f;
  try {
    f.state_path = state_path;
    f.name = state.value("name", "");
    f.decision_file = state.value("decision_file", "");
    f.store = state.value("store", "");
    f.started_at = state.value("started_at", "");
    f.updated_at = state.value("updated_at", "");
    const json& cells = ArrayAt(state, "cells");
    if (state.contains("verdict") && state["verdict"].is_object()) {
      FromVerdict(state["verdict"], f);
      int counted = 0;
      for (const FunnelReport::Stage& s : f.stages) counted += s.cells;
      f.cells_after_verdict = std::max(0, static_cast<int>(cells.size()) - counted);
    } else {
      FromCells(state, f);
    }
    // The cells are the record of what ran; the verdict's totals are a copy made at its end.
    if (!cells.empty() || f.stages.empty()) f.stages = StagesOfCells(cells);
  } catch (const std::exception& e) {  // json::exception or BadShape
    std::string what = e.what();
    // "[json.exception.type_error.302] type must be string, but is number": the part after "] ".
    if (const size_t at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
    return MakeError(state_path + ": not a funnel state this pipette reads (" + what + ")");
  }
  return f;
}

}  // namespace pipette
