// `pipette suite run FILE [--dry-run]` (DESIGN.md 6; format in docs/suites.md).
#include "cli/cmd_suite.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "cli/cmd_fleet.h"
#include "cli/flag_names.h"
#include "cli/suite_progress.h"
#include "pipette/store.h"
#include "pipette/suite.h"

namespace pipette::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct SuiteArgs {
  std::string file;
  std::string logs_dir;
  bool dry_run = false;
  bool stop_on_failure = false;
  bool rerun_noisy = false;
  bool no_readiness_load = false;
  bool no_readiness_thermal = false;
  bool quiet = false;
  std::string submit;  // --submit URL
};

// <store folder>/suites/<name>/logs, the name made safe for a path.
std::string DefaultLogsDir(const std::string& store_path, const std::string& name) {
  std::string safe;
  for (char c : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    safe += keep ? c : '_';
  }
  if (safe.empty() || safe == "." || safe == "..") safe = "suite";
  return (fs::absolute(store_path).parent_path() / "suites" / safe / "logs").string();
}

// The log folder must be a folder we can write, or creatable: checked before anything runs (and
// in a dry run, without creating it).
Status CheckLogsDir(const std::string& dir) {
  std::error_code ec;
  fs::path p(dir);
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  if (p.empty()) p = ".";
  if (!fs::is_directory(p, ec)) {
    return MakeError("--logs " + dir + ": " + p.string() + " is not a folder; choose another");
  }
  if (access(p.c_str(), W_OK | X_OK) != 0) {
    return MakeError("--logs " + dir + ": " + p.string() + " is not writable; choose another");
  }
  return {};
}

// An outcome as the user reads it: its reason with the flags of `cmd` (flag_names.h). The JSON
// output keeps the reason as stored.
SuiteCellOutcome ForReading(SuiteCellOutcome o, const CLI::App& cmd) {
  o.reason = WithFlags(o.reason, cmd);
  return o;
}

json OutcomeJson(const SuiteCellOutcome& o) {
  json j = {{"index", o.cell.index},
            {"model", o.cell.model_path},
            {"runtime", o.cell.runtime_label},
            {"settings", o.cell.settings},
            {"benchmark", o.cell.benchmark_id},
            {"status", o.status},
            {"config_id", o.config_id.empty() ? json(nullptr) : json(o.config_id)},
            {"result_id", o.result_id.empty() ? json(nullptr) : json(o.result_id)}};
  if (!o.cell.factor.empty()) j["factor"] = o.cell.factor;
  if (!o.reason.empty()) j["reason"] = o.reason;
  if (!o.log_path.empty()) j["log"] = o.log_path;
  if (o.seconds > 0) j["seconds"] = o.seconds;
  if (o.readiness_wait_s > 0) j["readiness_wait_s"] = o.readiness_wait_s;
  if (o.headline) {
    j["headline"] = {{"metric", o.headline_metric}, {"unit", o.headline_unit},
                     {"median", *o.headline}};
  }
  return j;
}

int DryRun(const Suite& suite, const std::vector<SuiteCell>& cells, const SuiteRunOptions& options,
           const CLI::App& cmd, CliContext& ctx) {
  auto plan = PlanSuite(suite, cells, options);
  if (!plan) return ReportError(ctx, plan.error());
  if (ctx.json) {
    json out = {{"suite", suite.name}, {"file", suite.path}, {"dry_run", true},
                {"cells", json::array()}};
    for (const auto& o : *plan) out["cells"].push_back(OutcomeJson(o));
    std::cout << out.dump(2) << std::endl;
    return kExitOk;
  }
  std::map<std::string, int> counts;
  for (const auto& o : *plan) {
    ++counts[o.status];
    std::cout << CellLine(ForReading(o, cmd), static_cast<int>(plan->size())) << "\n";
  }
  std::cout << fmt::format("{}: {} cells; {} to run, {} already stored ok in {}, {} invalid (dry "
                           "run: nothing measured)\n",
                           suite.name, plan->size(), counts["to run"], counts["skipped"],
                           options.store_path, counts["invalid"]);
  return kExitOk;
}

int RunIt(const SuiteArgs& a, const CLI::App& cmd, CliContext& ctx) {
  if (cmd.count("--logs") && a.logs_dir.empty()) {
    return ReportError(ctx, MakeError("--logs is empty; give a folder or leave the option out"));
  }
  auto suite = ParseSuiteFile(a.file);
  if (!suite) return ReportError(ctx, suite.error());
  if (a.no_readiness_load) suite->readiness.waive_load = true;
  if (a.no_readiness_thermal) suite->readiness.waive_thermal = true;
  auto cells = ExpandSuite(*suite);
  if (!cells) return ReportError(ctx, cells.error());
  SuiteRunOptions options;
  options.store_path = ctx.store_path.empty() ? DefaultStorePath() : ctx.store_path;
  options.logs_dir = a.logs_dir.empty() ? DefaultLogsDir(options.store_path, suite->name)
                                        : fs::absolute(a.logs_dir).string();
  options.stop_on_failure = a.stop_on_failure;
  options.rerun_noisy = a.rerun_noisy;
  if (auto s = CheckLogsDir(options.logs_dir); !s) return ReportError(ctx, s.error());
  if (a.dry_run) return DryRun(*suite, *cells, options, cmd, ctx);

  // The plan first: bad input (a benchmark the catalog lacks, an unreadable store) stops the
  // suite before anything runs, and the estimate of the time left counts only cells to run.
  std::unique_ptr<ResultSubmitter> submitter;
  if (!a.submit.empty() && !(submitter = ResultSubmitter::Create(a.submit, ctx))) {
    return ctx.exit_code;
  }
  auto plan = PlanSuite(*suite, *cells, options);
  if (!plan) return ReportError(ctx, plan.error());
  std::unique_ptr<ResultStore> submit_store;  // reads back each stored record to submit it
  if (submitter) {
    auto opened = ResultStore::Open(options.store_path);
    if (!opened) return ReportError(ctx, opened.error());
    submit_store = std::move(*opened);
  }
  SuiteProgress progress(*plan, !a.quiet && isatty(STDERR_FILENO), a.quiet, std::cerr);
  progress.Start(*suite, options);
  SuiteHooks hooks;
  hooks.cell_started = [&](const SuiteCell& c) { progress.CellStarted(c); };
  hooks.cell_progress = [&](const std::string& line) { progress.CellProgress(line); };
  hooks.cell_finished = [&](const SuiteCellOutcome& o, int done, int) {
    progress.CellFinished(ForReading(o, cmd), done);
    if (submitter && !o.result_id.empty()) {
      auto record = submit_store->Get(o.result_id);
      progress.Clear();
      if (record.ok() && record->has_value()) {
        submitter->Submit(**record);
      } else {
        std::cerr << "pipette: warning: cannot read result " << o.result_id
                  << " back to submit it; pipette submit --server " << a.submit << " sends it\n";
      }
    }
  };
  auto run = RunSuite(*suite, *cells, options, hooks);
  progress.Clear();
  if (!run) return ReportError(ctx, run.error(), kExitFailure);
  if (ctx.json) {
    json out = {{"suite", suite->name},     {"file", suite->path},
                {"store", options.store_path}, {"logs", options.logs_dir},
                {"interrupted", run->interrupted}, {"cells", json::array()}};
    for (const auto& o : run->outcomes) out["cells"].push_back(OutcomeJson(o));
    std::cout << out.dump(2) << std::endl;
  } else {
    SuiteRun shown = *run;
    for (SuiteCellOutcome& o : shown.outcomes) o = ForReading(std::move(o), cmd);
    PrintSummary(*suite, shown, options, std::cout);
  }
  if (run->interrupted) {
    return ReportError(ctx,
                       MakeError(fmt::format("interrupted; the current cell is stored as failed "
                                             "(interrupted); rerun `pipette suite run {}` to "
                                             "resume",
                                             a.file)),
                       130);
  }
  const int bad = run->Count("failed") + run->Count("invalid");
  if (bad > 0) {
    return ReportError(ctx, MakeError(fmt::format("{} of {} cells did not measure (listed above)",
                                                  bad, run->outcomes.size())),
                       kExitFailure);
  }
  return kExitOk;
}

}  // namespace

void AddSuiteCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* suite = app.add_subcommand("suite", "Run a matrix of configurations x benchmarks");
  suite->require_subcommand(1);
  auto args = std::make_shared<SuiteArgs>();
  CLI::App* run = suite->add_subcommand(
      "run", "Run a suite file's cells (resumes: cells stored ok for the same config are skipped)");
  run->add_option("file", args->file, "suite TOML file (docs/suites.md)")->required();
  run->add_flag("--dry-run", args->dry_run,
                "list the cells and which would be skipped (--json: with their config ids); "
                "measure nothing");
  run->add_flag("--rerun-noisy", args->rerun_noisy,
                "measure again the cells whose stored result is noisy (marked ! in `results "
                "list`: its 95% CI stayed wider than the target); not kl_divergence cells "
                "(deterministic: a rerun gives the same numbers) nor soak cells");
  run->add_option("--logs", args->logs_dir,
                  "folder for each cell's runtime log (default: next to the store, "
                  "suites/<name>/logs)");
  run->add_flag("--stop-on-failure", args->stop_on_failure,
                "stop at the first failed cell (default: go on and list failures at the end)");
  run->add_flag("--no-readiness-load", args->no_readiness_load,
                "waive the readiness gate's CPU-load criterion (recorded)");
  run->add_flag("--no-readiness-thermal", args->no_readiness_thermal,
                "waive the readiness gate's thermal criterion (recorded)");
  run->add_flag("-q,--quiet", args->quiet, "no progress output, only the summary");
  run->add_option("--submit", args->submit,
                  "also send each cell's result to this pipette serve, http://HOST:PORT (through "
                  "the outbox: an unreachable server delays them, never loses them)");
  run->callback([args, run, &ctx] { RunIt(*args, *run, ctx); });
}

}  // namespace pipette::cli
