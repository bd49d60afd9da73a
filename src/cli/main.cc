// pipette: the command line. A thin layer: each subcommand lives in its own cmd_*.cc.
#include <CLI/CLI.hpp>
#include <iostream>
#include <utility>
#include <nlohmann/json.hpp>

#include "cli/cli_context.h"
#include "cli/cmd_benchmarks.h"
#include "cli/cmd_compare.h"
#include "cli/cmd_diff.h"
#include "cli/cmd_import.h"
#include "cli/cmd_evals.h"
#include "cli/cmd_fleet.h"
#include "cli/cmd_device.h"
#include "cli/cmd_models.h"
#include "cli/cmd_report.h"
#include "cli/cmd_results.h"
#include "cli/cmd_run.h"
#include "cli/cmd_score.h"
#include "cli/cmd_select.h"
#include "cli/cmd_serve.h"
#include "cli/cmd_plan.h"
#include "cli/cmd_worker.h"
#include "cli/cmd_suite.h"
#include "cli/cmd_decide.h"
#include "cli/flag_names.h"
#include "pipette/build_info.h"
#include "pipette/store.h"

namespace pipette::cli {

int ReportError(CliContext& ctx, const Error& error, int exit_code) {
  const std::string message =
      ctx.app != nullptr ? WithFlags(error.message, RunningCommand(*ctx.app)) : error.message;
  std::cerr << "pipette: error: " << message << std::endl;
  ctx.exit_code = exit_code;
  return exit_code;
}

namespace {

// `pipette --help` lists the commands in the groups the guide (docs/guide/) is written in, each
// group in the order its first command was added. A command not named here is listed under
// CLI11's own heading, "Subcommands".
void GroupCommands(CLI::App& app) {
  static constexpr std::pair<const char*, const char*> kGroups[] = {
      {"run", "Measuring"},
      {"suite", "Measuring"},
      {"benchmarks", "Measuring"},
      {"results", "Results and reports"},
      {"report", "Results and reports"},
      {"import", "Results and reports"},
      {"compare", "Comparing and deciding"},
      {"diff", "Comparing and deciding"},
      {"select", "Comparing and deciding"},
      {"decide", "Comparing and deciding"},
      {"evals", "Quality evals"},
      {"score", "Quality evals"},
      {"models", "Models and devices"},
      {"device", "Models and devices"},
      {"serve", "Fleet"},
      {"register", "Fleet"},
      {"submit", "Fleet"},
      {"plan", "Fleet"},
      {"worker", "Fleet"},
  };
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for (const auto& [name, group] : kGroups) {
      if (sub->get_name() == name) sub->group(group);
    }
  }
}

}  // namespace

}  // namespace pipette::cli

int main(int argc, char** argv) {
  using namespace pipette::cli;
  CLI::App app{"pipette: reproducible benchmarks of language-model configurations on devices"};
  app.set_version_flag("--version", std::string(pipette::build_info::kVersion) + " (" +
                                        pipette::build_info::kGitCommit + ", llama.cpp " +
                                        pipette::build_info::kLlamaCommit + ")");
  app.require_subcommand(1);
  app.fallthrough();
  CliContext ctx;
  ctx.app = &app;
  app.add_option("--store", ctx.store_path,
                 "results database (default: $PIPETTE_STORE or " + pipette::DefaultStorePath() + ")")
      ->check(CLI::Validator(
          [](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); },
          "PATH"));
  app.add_flag("--json", ctx.json, "print data as JSON");
  app.add_option("--ca-file", ctx.ca_file,
                 "for an https:// fleet server: a PEM file of the CA certificates that sign its "
                 "certificate (a private CA; default: the system's)")
      ->check(CLI::ExistingFile);
  // Added in the order `--help` lists them, group by group (GroupCommands).
  AddRunCommand(app, ctx);
  AddSuiteCommand(app, ctx);
  AddBenchmarksCommand(app, ctx);
  AddResultsCommand(app, ctx);
  AddReportCommand(app, ctx);
  AddImportCommand(app, ctx);
  AddCompareCommand(app, ctx);
  AddDiffCommand(app, ctx);
  AddSelectCommand(app, ctx);
  AddDecideCommand(app, ctx);
  AddEvalsCommand(app, ctx);
  AddScoreCommand(app, ctx);
  AddModelsCommand(app, ctx);
  AddDeviceCommand(app, ctx);
  AddServeCommand(app, ctx);
  AddFleetCommands(app, ctx);
  AddPlanCommand(app, ctx);
  AddWorkerCommand(app, ctx);
  GroupCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "pipette: error: " << e.what() << "; see `pipette --help`" << std::endl;
    return kExitBadInput;
  } catch (const nlohmann::json::exception& e) {
    // The last guard for JSON from outside (a server that is not pipette serve, a file edited
    // by hand) whose shape a reader did not check: one line, never an abort.
    std::cerr << "pipette: error: an answer or file was not in the shape pipette expects ("
              << e.what() << "); check that the server is pipette serve and the files are "
              << "pipette's" << std::endl;
    return kExitFailure;
  }
  // Data written to a full disk or a closed pipe must not pass for success.
  if (!std::cout.flush()) {
    std::cerr << "pipette: error: cannot write to standard output (disk full or closed pipe?)"
              << std::endl;
    return ctx.exit_code == kExitOk ? kExitFailure : ctx.exit_code;
  }
  return ctx.exit_code;
}
