// `pipette plan submit|status` (see cmd_plan.h).
#include "cli/number_range.h"
#include "cli/cmd_plan.h"

#include <fmt/format.h>

#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <algorithm>
#include <utility>
#include <vector>

#include "cli/fleet_connection.h"
#include "pipette/fleet_client.h"
#include "pipette/fleet_plan.h"
#include "pipette/identity.h"
#include "pipette/store.h"
#include "pipette/suite.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct PlanArgs {
  std::string server, identity, suite_path, name, plan_id, arch;
  std::vector<std::string> labels;
  double expires_in_hours = 0;
};

Result<FleetHttpClient> Client(const PlanArgs& a, const CliContext& ctx) {
  const std::string path = a.identity.empty() ? DefaultIdentityPath() : a.identity;
  auto identity = LoadIdentity(path);
  if (!identity) return identity.error();
  FleetHttpClient client = FleetClientFor(a.server, *identity, ctx);
  if (auto s = client.Check(); !s) return s.error();
  return client;
}

int Submit(const PlanArgs& a, CliContext& ctx) {
  auto suite = ParseSuiteFile(a.suite_path);
  if (!suite) return ReportError(ctx, suite.error());
  auto cells = ExpandSuite(*suite);
  if (!cells) return ReportError(ctx, cells.error());
  auto store = ResultStore::Open(ctx.store_path.empty() ? DefaultStorePath() : ctx.store_path);
  if (!store) return ReportError(ctx, store.error());
  JobRequirements req;
  req.labels = a.labels;
  req.arch = a.arch;
  auto specs = JobSpecsFromSuite(
      *suite, *cells, [&](const std::string& p) { return CachedSha256(**store, p); }, req);
  if (!specs) return ReportError(ctx, specs.error());
  auto client = Client(a, ctx);
  if (!client) return ReportError(ctx, client.error());
  const int64_t expires_at =
      a.expires_in_hours > 0 ? static_cast<int64_t>(std::time(nullptr) + a.expires_in_hours * 3600)
                             : 0;
  FleetResult r = client->CreatePlan(a.name.empty() ? suite->name : a.name, *specs, expires_at);
  if (!r.ok()) return ReportError(ctx, r.error().ToError(), ExitStatusFor(r.error()));
  const json& body = r->body;
  if (ctx.json) {
    std::cout << body.dump(2) << std::endl;
    return ctx.exit_code;
  }
  const json unassignable = body.value("unassignable", json::array());
  std::cout << "plan " << body.value("plan_id", "?") << ": " << body.value("jobs", 0)
            << " jobs from " << a.suite_path << "\n";
  // One line per reason, not per job: before any worker has connected, every job has the same.
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  for (const json& u : unassignable) {
    const int index = u.value("index", -1);
    const std::string bench = index >= 0 && index < static_cast<int>(specs->size())
                                  ? (*specs)[index].value("benchmark", "?")
                                  : "?";
    const std::string reason = u.value("reason", "?");
    auto it = std::find_if(by_reason.begin(), by_reason.end(),
                           [&](const auto& r) { return r.first == reason; });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {reason, {}});
    it->second.push_back(fmt::format("{} ({})", index, bench));
  }
  for (const auto& [reason, jobs] : by_reason) {
    std::string listed;
    for (size_t i = 0; i < jobs.size() && i < 5; ++i) listed += (i ? ", " : "") + jobs[i];
    if (jobs.size() > 5) listed += fmt::format(" and {} more", jobs.size() - 5);
    if (jobs.size() == 1) {
      std::cout << fmt::format("  job {} is unassignable: {}\n", listed, reason);
    } else {
      std::cout << fmt::format("  {} jobs are unassignable: {}\n    jobs {}\n", jobs.size(), reason,
                               listed);
    }
  }
  if (!unassignable.empty()) {
    std::cout << unassignable.size() << " job(s) match no registered device yet\n";
  }
  return ctx.exit_code;
}

int ShowStatus(const PlanArgs& a, CliContext& ctx) {
  auto client = Client(a, ctx);
  if (!client) return ReportError(ctx, client.error());
  FleetResult r = client->GetPlan(a.plan_id);
  if (!r.ok()) return ReportError(ctx, r.error().ToError(), ExitStatusFor(r.error()));
  const json& p = r->body;
  if (ctx.json) {
    std::cout << p.dump(2) << std::endl;
    return ctx.exit_code;
  }
  const json counts = p.value("counts", json::object());
  std::cout << fmt::format("plan {} ({}): {} done, {} running, {} queued, {} failed, {} expired\n",
                           p.value("plan_id", a.plan_id), p.value("name", ""),
                           counts.value("done", 0), counts.value("leased", 0),
                           counts.value("queued", 0), counts.value("failed", 0),
                           counts.value("expired", 0));
  const json per_client = p.value("per_client", json::object());
  for (const auto& [client_id, c] : per_client.items()) {
    std::cout << fmt::format("  {}: {} done, {} running, {} failed\n", client_id,
                             c.value("done", 0), c.value("leased", 0), c.value("failed", 0));
  }
  const json jobs = p.value("jobs", json::array());
  for (const json& job : jobs) {
    const json failures = job.value("failures", json::array());
    for (const json& f : failures) {
      std::cout << fmt::format("  job {} ({}, {}): failed on {}: {}\n", job.value("index", -1),
                               job.value("benchmark", "?"), job.value("state", "?"),
                               f.value("client_id", "?"), f.value("reason", "?"));
    }
  }
  return ctx.exit_code;
}

}  // namespace

void AddPlanCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* plan = app.add_subcommand("plan", "Run a suite on a fleet: jobs that workers pull");
  plan->require_subcommand(1);
  const std::string identity_help =
      "the key pair file (default: $PIPETTE_IDENTITY or " + DefaultIdentityPath() + ")";

  CLI::App* submit = plan->add_subcommand("submit", "Turn a suite into a plan of jobs on a server");
  submit->add_option("suite", args->suite_path, "suite file (TOML)")->required();
  submit->add_option("--server", args->server, "the server, http://HOST:PORT or https://HOST:PORT")->required();
  submit->add_option("--requires-label", args->labels,
                     "a label every job requires of a worker (repeatable)");
  submit->add_option("--requires-arch", args->arch, "the architecture (uname -m) jobs require");
  submit
      ->add_option("--expires-in", args->expires_in_hours,
                   "hours after which jobs nobody claimed expire (0: never)")
      ->check(NumberIn(0.0, 24.0 * 365));
  submit->add_option("--name", args->name, "the plan's name (default: the suite's)");
  submit->add_option("--identity", args->identity, identity_help);
  submit->callback([args, &ctx] { Submit(*args, ctx); });

  CLI::App* status = plan->add_subcommand("status", "A plan's progress: per state, per device");
  status->add_option("id", args->plan_id, "plan id (plan submit printed it)")->required();
  status->add_option("--server", args->server, "the server, http://HOST:PORT or https://HOST:PORT")->required();
  status->add_option("--identity", args->identity, identity_help);
  status->callback([args, &ctx] { ShowStatus(*args, ctx); });
}

}  // namespace pipette::cli
