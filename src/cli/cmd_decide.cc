// `pipette decide FILE.toml` (include/pipette/decide.h).
#include "cli/cmd_decide.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <fmt/ranges.h>
#include <iostream>
#include <memory>

#include "cli/fleet_connection.h"
#include "cli/flag_names.h"
#include "cli/suite_progress.h"
#include "cli/text_table.h"
#include "pipette/decide.h"
#include "pipette/identity.h"
#include "platform/transport.h"

namespace pipette::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct DecideArgs {
  std::string file;
  std::string state;
  std::string logs_dir;
  std::vector<std::string> devices;
  std::string server, identity, arch;
  std::vector<std::string> labels;
  bool restart = false;
  bool no_readiness_load = false;
  bool no_readiness_thermal = false;
  bool quiet = false;
};

int RunIt(const DecideArgs& a, const CLI::App& cmd, CliContext& ctx) {
  auto file = ParseDecisionFile(a.file);
  if (!file) return ReportError(ctx, file.error());
  if (a.no_readiness_load) file->suite.readiness.waive_load = true;
  if (a.no_readiness_thermal) file->suite.readiness.waive_thermal = true;
  if (!a.devices.empty()) {
    std::vector<std::string> uris;
    for (const std::string& d : a.devices) {
      auto address = ParseDeviceAddress(d);
      if (!address) return ReportError(ctx, address.error().Wrap("--device " + d));
      uris.push_back(address->Uri());
    }
    file->suite.devices = uris;
    // Part of what a resumed funnel must match.
    file->suite_json["devices (--device)"] = uris;
  }
  DecideOptions options;
  if (!a.server.empty()) {
    if (!a.devices.empty()) {
      return ReportError(ctx, MakeError("--device measures from this machine; with --server the "
                                        "fleet's workers measure their own devices: pick them "
                                        "with --requires-label"));
    }
    auto identity = LoadIdentity(a.identity.empty() ? DefaultIdentityPath() : a.identity);
    if (!identity) return ReportError(ctx, identity.error());
    FleetHttpClient client = FleetClientFor(a.server, *identity, ctx);
    if (auto s = client.Check(); !s) return ReportError(ctx, s.error());
    FunnelFleet fleet;
    fleet.server_url = client.server_url();
    fleet.identity = *identity;
    fleet.client = FleetOptions(ctx);
    fleet.requirements.labels = a.labels;
    fleet.requirements.arch = a.arch;
    options.fleet = fleet;
    // Part of what a resumed funnel must match: the same fleet, the same workers.
    file->suite_json["fleet (--server)"] = {{"server", fleet.server_url},
                                            {"requires_label", a.labels},
                                            {"requires_arch", a.arch}};
  } else if (!a.labels.empty() || !a.arch.empty()) {
    return ReportError(ctx, MakeError("--requires-label and --requires-arch choose a fleet's "
                                      "workers: give --server too"));
  }
  options.store_path = ctx.store_path;
  options.state_path = a.state.empty() ? "" : fs::absolute(a.state).string();
  options.logs_dir = a.logs_dir.empty() ? "" : fs::absolute(a.logs_dir).string();
  options.restart = a.restart;
  if (auto s = CheckFunnelState(*file, options); !s) return ReportError(ctx, s.error());
  DecideHooks hooks;
  // The position of the running cell in its stage and the stage's time left (an estimate from
  // its cells so far), shown when it settles.
  auto position = std::make_shared<std::string>();
  if (!a.quiet) {
    hooks.cell_finished = [&, position](const std::string& stage, const SuiteCellOutcome& o) {
      SuiteCellOutcome shown = o;
      shown.reason = WithFlags(o.reason, cmd);
      std::string line = CellLine(shown, 0);
      line = line.substr(line.find(']') + 1);  // the stage and its count replace the index
      std::cerr << fmt::format("[{} {}]{}", stage, *position, line) << std::endl;
    };
    hooks.cell_started = [&, position](const std::string& stage, const SuiteCell&, int index,
                                       int planned, double left) {
      *position = fmt::format("{}/{}", index, planned);
      if (left >= 0) *position += ", ~" + Duration(left) + " left";
      if (index == 1) std::cerr << fmt::format("{}: up to {} cells", stage, planned) << std::endl;
    };
    hooks.plan_progress = [](const std::string& line) { std::cerr << line << std::endl; };
    hooks.left = [&](const FunnelConfiguration& c) {
      std::cerr << fmt::format("  {} leaves at {}: {}", c.name, c.stage, c.reason) << std::endl;
    };
  }
  auto v = RunFunnel(*file, options, hooks);
  if (!v) return ReportError(ctx, v.error(), kExitFailure);
  if (ctx.json) {
    std::ifstream in(v->state_path);
    json state = json::parse(in, nullptr, false);
    std::cout << (state.is_discarded() ? json() : state["verdict"]).dump(2) << std::endl;
  } else {
    for (const std::string& n : v->notes) std::cout << "note: " << n << "\n";
    std::vector<std::vector<std::string>> rows = {{"CONFIGURATION", "STAGE", "EVIDENCE"}};
    for (const auto& c : v->configurations) {
      std::string stage = c.out ? "out at " + c.stage : c.stage;
      if (c.on_front && !c.out) stage += " (front)";
      std::string evidence = c.reason;
      if (!c.out && !c.open_limits.empty()) {
        evidence += (evidence.empty() ? "" : "; ") + std::string("borderline: ") + c.open_limits.front();
      }
      rows.push_back({c.name, stage, evidence});
    }
    PrintTable(rows, std::cout);
    std::string times;
    double total = 0;
    for (const auto& t : v->stages) {
      times += fmt::format("{}{} {} ({} cells)", times.empty() ? "" : ", ", t.stage,
                           Duration(t.seconds), t.cells);
      total += t.seconds;
    }
    std::cout << fmt::format("device time {}: {}\n", Duration(total), times);
    std::cout << fmt::format("intervals at {:.4g}% each (alpha {} over every look), screen of {} "
                             "repetitions; decided on {}",
                             100 * v->confidence, file->decision.alpha, v->screen_repetitions,
                             fmt::join(v->benchmarks, ", "));
    if (!v->benchmarks_skipped.empty()) {
      std::cout << fmt::format("; not measured (no limit or objective reads them): {}",
                               fmt::join(v->benchmarks_skipped, ", "));
    }
    std::cout << "\n";
    if (!v->chosen.empty()) std::cout << "chosen: " << v->chosen << "\n";
    std::cout << "state: " << v->state_path << "\n";
  }
  if (v->interrupted) {
    return ReportError(ctx, MakeError("interrupted; the funnel's state is saved: run the same "
                                      "command to resume"),
                       130);
  }
  if (v->chosen.empty()) {
    return ReportError(ctx, MakeError("no configuration chosen: " + v->why_none), kExitFailure);
  }
  return kExitOk;
}

}  // namespace

void AddDecideCommand(CLI::App& app, CliContext& ctx) {
  auto a = std::make_shared<DecideArgs>();
  CLI::App* cmd = app.add_subcommand(
      "decide",
      "Screen, measure and soak a suite's configurations against limits and objectives, and "
      "choose one (resumable; docs/deciding.md)");
  cmd->add_option("file", a->file, "decision TOML file: a suite plus [decision]")->required();
  cmd->add_option("--state", a->state,
                  "the funnel's state file (default: beside the store, decide/<name>.json)");
  cmd->add_flag("--restart", a->restart, "discard the saved state and start the funnel again");
  cmd->add_option("--logs", a->logs_dir,
                  "folder for each cell's runtime log (default: beside the store, "
                  "decide/<name>/logs)");
  cmd->add_option("--device", a->devices,
                  "measure on this device instead of the suite's [[devices]]: local, "
                  "ssh://[user@]host[:port] or adb://SERIAL (repeatable)");
  cmd->add_option("--server", a->server,
                  "run the cells as plans on this fleet server (http[s]://HOST:PORT): workers "
                  "that match the requirements measure them in parallel");
  cmd->add_option("--identity", a->identity,
                  "with --server: the key pair file that signs the plans (default: "
                  "$PIPETTE_IDENTITY or " + DefaultIdentityPath() + ")");
  cmd->add_option("--requires-label", a->labels,
                  "with --server: a label every job requires of a worker (repeatable)");
  cmd->add_option("--requires-arch", a->arch,
                  "with --server: the architecture (uname -m) every job requires");
  cmd->add_flag("--no-readiness-load", a->no_readiness_load,
                "waive the readiness gate's CPU-load criterion (recorded)");
  cmd->add_flag("--no-readiness-thermal", a->no_readiness_thermal,
                "waive the readiness gate's thermal criterion (recorded)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress output, only the verdict");
  cmd->callback([a, cmd, &ctx] { RunIt(*a, *cmd, ctx); });
}

}  // namespace pipette::cli
