// A batch of the funnel's cells as one fleet plan (fleet_cells.h).
#include "decide/fleet_cells.h"

#include <fmt/format.h>

#include <algorithm>

#include "pipette/fleet_plan.h"
#include "platform/interrupt.h"

namespace pipette {

using nlohmann::json;

FleetCells::FleetCells(const FunnelFleet& fleet)
    : client_(fleet.server_url, fleet.identity, fleet.client),
      requirements_(fleet.requirements),
      poll_interval_s_(fleet.poll_interval_s > 0 ? fleet.poll_interval_s : 2) {}

Result<std::string> FleetCells::Submit(const Suite& suite, const std::vector<SuiteCell>& cells,
                                       const std::string& name, ResultStore& store,
                                       std::vector<std::string>* unassignable) const {
  auto specs = JobSpecsFromSuite(
      suite, cells, [&](const std::string& p) { return CachedSha256(store, p); }, requirements_);
  if (!specs) return specs.error();
  FleetResult r = client_.CreatePlan(name, *specs);
  if (!r.ok()) return r.error().ToError();
  const json& body = r->body;
  if (!body.is_object() || !body.contains("plan_id") || !body["plan_id"].is_string()) {
    return MakeError(client_.server_url() + ": the answer to a new plan names no plan_id");
  }
  if (unassignable) {
    std::vector<std::pair<std::string, int>> reasons;
    for (const json& u : body.value("unassignable", json::array())) {
      const std::string why = u.is_object() ? u.value("reason", "?") : "?";
      auto it = std::find_if(reasons.begin(), reasons.end(),
                             [&](const auto& x) { return x.first == why; });
      if (it == reasons.end()) {
        reasons.emplace_back(why, 1);
      } else {
        ++it->second;
      }
    }
    for (const auto& [why, n] : reasons) {
      unassignable->push_back(fmt::format("{} of {} jobs match no registered worker yet ({}); "
                                          "they wait for one",
                                          n, cells.size(), why));
    }
  }
  return body["plan_id"].get<std::string>();
}

namespace {

bool Settled(const std::string& state) {
  return state == "done" || state == "failed" || state == "expired";
}

}  // namespace

Result<std::vector<SuiteCellOutcome>> FleetCells::Await(
    const std::string& plan_id, const std::vector<SuiteCell>& cells, ResultStore& store,
    const std::function<void(const std::string&)>& progress, bool* interrupted) const {
  *interrupted = false;
  std::string last_line;
  auto say = [&](const std::string& line) {
    if (line != last_line && progress) progress(line);
    last_line = line;
  };
  json jobs;
  for (;;) {
    if (Interrupted()) {
      *interrupted = true;
      return std::vector<SuiteCellOutcome>{};
    }
    FleetResult r = client_.GetPlan(plan_id);
    if (!r.ok()) {
      if (!r.error().retriable()) return r.error().ToError().Wrap("plan " + plan_id);
      say(fmt::format("plan {}: {}; trying again every {:g} s", plan_id, r.error().message,
                      poll_interval_s_));
    } else {
      jobs = r->body.is_object() ? r->body.value("jobs", json::array()) : json::array();
      if (!jobs.is_array() || jobs.size() != cells.size()) {
        return MakeError(fmt::format("plan {}: the server lists {} jobs, the funnel submitted {}",
                                     plan_id, jobs.is_array() ? jobs.size() : 0, cells.size()));
      }
      const json counts = r->body.value("counts", json::object());
      say(fmt::format("plan {}: {} done, {} running, {} queued, {} failed", plan_id,
                      counts.value("done", 0), counts.value("leased", 0),
                      counts.value("queued", 0),
                      counts.value("failed", 0) + counts.value("expired", 0)));
      bool all = true;
      for (const json& j : jobs) all = all && Settled(j.value("state", ""));
      if (all) break;
    }
    if (!SleepUnlessInterrupted(poll_interval_s_)) {
      *interrupted = true;
      return std::vector<SuiteCellOutcome>{};
    }
  }
  std::vector<SuiteCellOutcome> out(cells.size());
  for (const json& j : jobs) {
    const int index = j.value("index", -1);
    if (index < 0 || index >= static_cast<int>(cells.size())) {
      return MakeError(fmt::format("plan {}: a job with index {} of {}", plan_id, index,
                                   cells.size()));
    }
    SuiteCellOutcome& o = out[index];
    o.cell = cells[index];
    o.status = "failed";
    const std::string state = j.value("state", "");
    if (state != "done") {
      const json failures = j.value("failures", json::array());
      o.reason = state == "expired" ? "expired: no worker claimed the job in time"
                 : failures.empty()
                     ? "failed on the fleet"
                     : "failed on " + failures.back().value("client_id", std::string("?")) + ": " +
                           failures.back().value("reason", std::string("?"));
      continue;
    }
    const std::string result_id = j.value("result_id", "");
    FleetResult got = client_.GetResult(result_id);
    if (!got.ok()) return got.error().ToError().Wrap("result " + result_id + " of plan " + plan_id);
    const json& record = got->body;
    if (auto s = store.Put(record); !s) return s.error().Wrap("result " + result_id);
    o.result_id = result_id;
    o.config_id = record.value("config_id", "");
    o.status = record.value("status", "failed");
    if (o.status != "ok") {
      const json failure = record.value("failure", json::object());
      o.reason = failure.value("stage", std::string("run")) + ": " +
                 failure.value("message", std::string("?"));
    }
    const json timing = record.value("harness", json::object()).value("timing", json::object());
    o.seconds = timing.value("cell_wall_ms", 0.0) / 1e3;
  }
  return out;
}

}  // namespace pipette
