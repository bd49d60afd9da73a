// `/fleet` and `/plans/<id>`: the registered clients (status, labels, the capabilities of their
// last claim) and the plans with their progress; one plan's jobs with state and device.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "dashboard/html.h"
#include "dashboard/layout.h"
#include "dashboard/pages.h"

namespace pipette::dashboard {
namespace {

// Plans shown on /fleet with their progress (each costs a GetPlan), the newest.
constexpr size_t kMaxPlans = 50;

constexpr std::array<JobState, 5> kStates = {JobState::kDone, JobState::kLeased, JobState::kQueued,
                                             JobState::kFailed, JobState::kExpired};

std::string Capabilities(const nlohmann::json& c) {
  if (!c.is_object()) return "- (no claim yet)";
  std::vector<std::string> parts;
  if (c.contains("arch") && c["arch"].is_string()) parts.push_back(c["arch"].get<std::string>());
  if (c.contains("memory_bytes") && c["memory_bytes"].is_number()) {
    parts.push_back(FormatValue(c["memory_bytes"].get<double>(), "bytes"));
  }
  const auto list = [&](const char* key, const char* what) {
    if (!c.contains(key) || !c[key].is_array()) return;
    std::vector<std::string> v;
    for (const auto& e : c[key]) {
      if (e.is_string())
        v.push_back(std::string(key) == "models" ? Prefix(e.get<std::string>(), 8)
                                                 : e.get<std::string>());
    }
    if (!v.empty()) parts.push_back(fmt::format("{}: {}", what, fmt::join(v, ", ")));
  };
  list("labels", "labels");
  list("runtimes", "runtimes");
  list("models", "models");
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, ", "));
}

// Counts per state and the progress bar (done, leased, failed+expired as coloured spans).
std::string Progress(const std::vector<Job>& jobs) {
  std::array<size_t, 5> n{};
  for (const Job& j : jobs) {
    for (size_t i = 0; i < kStates.size(); ++i) {
      if (j.state == kStates[i]) ++n[i];
    }
  }
  const size_t total = jobs.size();
  std::string bar =
      fmt::format("<span class=\"bar\" role=\"img\" aria-label=\"{} of {} done\">", n[0], total);
  for (size_t i = 0; i < kStates.size(); ++i) {
    if (n[i] == 0 || kStates[i] == JobState::kQueued || total == 0) continue;
    bar += fmt::format("<span class=\"{}\" style=\"width:{:.2f}%\"></span>",
                       JobStateName(kStates[i]), 100.0 * n[i] / total);
  }
  bar += "</span> ";
  std::string counts = fmt::format("{}/{} done", n[0], total);
  for (size_t i = 1; i < kStates.size(); ++i) {
    if (n[i] > 0) counts += fmt::format(", {} {}", n[i], JobStateName(kStates[i]));
  }
  return bar + "<span class=\"counts\">" + counts + "</span>";
}

}  // namespace

DashboardResponse FleetPage(FleetStore& store) {
  auto clients = store.ListClients();
  if (!clients.ok()) return StoreError(clients.error());
  auto plans = store.ListPlans();
  if (!plans.ok()) return StoreError(plans.error());

  std::string body =
      fmt::format("<h2>Clients</h2>\n<p class=\"meta\">{} registered.</p>\n", clients->size());
  if (clients->empty()) {
    body += "<p class=\"empty\">No clients yet (pipette register).</p>\n";
  } else {
    std::string t =
        "<thead><tr><th>Label</th><th>Status</th><th>Client</th><th>Labels</th>"
        "<th>Device</th><th>Last capabilities</th><th>Registered (UTC)</th></tr>"
        "</thead><tbody>\n";
    for (const FleetClient& c : *clients) {
      const std::string device =
          c.profile.is_object() && c.profile.contains("id") && c.profile["id"].is_string()
              ? c.profile["id"].get<std::string>()
              : "";
      t += "<tr class=\"client\" data-client=\"" + Esc(c.client_id) + "\"><td>" + Esc(c.label) +
           "</td><td class=\"state-" + ClientStatusName(c.status) + "\">" +
           ClientStatusName(c.status) + "</td><td class=\"mono\" title=\"" + Esc(c.client_id) +
           "\">" + Esc(Prefix(c.client_id, 11)) + "</td><td>" +
           Esc(fmt::format("{}", fmt::join(c.labels, ", "))) + "</td><td>" +
           (device.empty() ? "-"
                           : "<a href=\"/devices/" + Esc(UrlEncode(device)) + "\">" +
                                 Esc(Prefix(device, 12)) + "</a>") +
           "</td><td class=\"wrap\">" + Esc(Capabilities(c.capabilities)) + "</td><td>" +
           Esc(UnixTime(c.created_at)) + "</td></tr>\n";
    }
    body += ScrollTable(t + "</tbody>", "clients");
  }

  std::vector<PlanStatus> list = std::move(*plans);
  std::stable_sort(list.begin(), list.end(), [](const PlanStatus& x, const PlanStatus& y) {
    return x.created_at > y.created_at;
  });
  body +=
      fmt::format("<h2>Plans</h2>\n<p class=\"meta\">Plans: {}{}.</p>\n", list.size(),
                  list.size() > kMaxPlans ? fmt::format(", the newest {} shown", kMaxPlans) : "");
  if (list.empty()) body += "<p class=\"empty\">No plans yet (pipette plan submit).</p>\n";
  if (list.size() > kMaxPlans) list.resize(kMaxPlans);
  if (!list.empty()) {
    std::string t =
        "<thead><tr><th>Plan</th><th>Name</th><th>Progress</th><th>Created (UTC)</th>"
        "</tr></thead><tbody>\n";
    for (const PlanStatus& p : list) {
      auto full = store.GetPlan(p.plan_id);
      if (!full.ok()) return StoreError(full.error());
      const std::vector<Job> jobs = *full ? (*full)->jobs : std::vector<Job>{};
      t += "<tr class=\"plan\" data-plan=\"" + Esc(p.plan_id) +
           "\"><td><a class=\"mono\" href=\"/plans/" + Esc(UrlEncode(p.plan_id)) + "\">" +
           Esc(Prefix(p.plan_id, 12)) + "</a></td><td>" + Esc(p.name) + "</td><td>" +
           Progress(jobs) + "</td><td>" + Esc(UnixTime(p.created_at)) + "</td></tr>\n";
    }
    body += ScrollTable(t + "</tbody>", "plans");
  }
  return PageResponse(Layout("Fleet", "fleet", body));
}

DashboardResponse PlanPage(FleetStore& store, const std::string& plan_id) {
  auto got = store.GetPlan(plan_id);
  if (!got.ok()) return StoreError(got.error());
  if (!*got) return NotFound("no plan " + plan_id + " in this fleet database");
  const PlanStatus& plan = **got;
  auto clients = store.ListClients();
  if (!clients.ok()) return StoreError(clients.error());
  const auto client_name = [&](const std::string& id) -> std::string {
    for (const FleetClient& c : *clients) {
      if (c.client_id == id) return c.label.empty() ? Prefix(id, 11) : c.label;
    }
    return Prefix(id, 11);
  };

  std::string body = "<p class=\"meta\"><span class=\"mono\">" + Esc(plan.plan_id) + "</span>, " +
                     "created " + Esc(UnixTime(plan.created_at)) + " UTC</p>\n<p>" +
                     Progress(plan.jobs) + "</p>\n";
  std::string t =
      "<thead><tr><th class=\"num\">#</th><th>Benchmark</th><th>Model</th><th>State"
      "</th><th>Device (client)</th><th class=\"num\">Attempts</th><th>Result</th>"
      "<th>Failures</th></tr></thead><tbody>\n";
  for (const Job& j : plan.jobs) {
    const nlohmann::json& s = j.spec;
    const std::string benchmark = s.contains("benchmark") && s["benchmark"].is_string()
                                      ? s["benchmark"].get<std::string>()
                                      : "";
    std::string model;
    if (s.contains("model") && s["model"].is_object()) {
      const auto& m = s["model"];
      model = m.contains("file_name") && m["file_name"].is_string()
                  ? m["file_name"].get<std::string>()
                  : "";
    }
    std::string failures;
    for (const JobFailure& f : j.failures) {
      failures +=
          (failures.empty() ? "" : "<br>") + Esc(client_name(f.client_id)) + ": " + Esc(f.reason);
    }
    const std::string state = JobStateName(j.state);
    t += "<tr class=\"job\" data-job=\"" + Esc(j.job_id) + "\" data-state=\"" + state +
         "\"><td class=\"num\">" + std::to_string(j.index) + "</td><td>" + Esc(benchmark) +
         "</td><td>" + Esc(model) + "</td><td class=\"state-" + state + "\">" + state +
         "</td><td>" + (j.client_id.empty() ? "-" : Esc(client_name(j.client_id))) +
         "</td><td class=\"num\">" + std::to_string(j.attempts) + "</td><td>" +
         (j.result_id.empty() ? "-"
                              : "<a href=\"/results/" + Esc(UrlEncode(j.result_id)) + "\">" +
                                    Esc(Prefix(j.result_id, kShortResultId)) + "</a>") +
         "</td><td class=\"wrap\">" + (failures.empty() ? "-" : failures) + "</td></tr>\n";
  }
  body += ScrollTable(t + "</tbody>", "jobs");
  return PageResponse(
      Layout("Plan " + (plan.name.empty() ? Prefix(plan.plan_id, 12) : plan.name), "fleet", body));
}

}  // namespace pipette::dashboard
