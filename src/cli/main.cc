// pipette: the command line. A thin layer: each subcommand lives in its own cmd_*.cc.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_context.h"
#include "cli/cmd_benchmarks.h"
#include "cli/cmd_compare.h"
#include "cli/cmd_diff.h"
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
  AddRunCommand(app, ctx);
  AddModelsCommand(app, ctx);
  AddBenchmarksCommand(app, ctx);
  AddResultsCommand(app, ctx);
  AddDeviceCommand(app, ctx);
  AddCompareCommand(app, ctx);
  AddDiffCommand(app, ctx);
  AddSuiteCommand(app, ctx);
  AddDecideCommand(app, ctx);
  AddSelectCommand(app, ctx);
  AddReportCommand(app, ctx);
  AddEvalsCommand(app, ctx);
  AddScoreCommand(app, ctx);
  AddFleetCommands(app, ctx);
  AddServeCommand(app, ctx);
  AddPlanCommand(app, ctx);
  AddWorkerCommand(app, ctx);
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
