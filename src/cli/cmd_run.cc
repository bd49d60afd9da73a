#include "cli/number_range.h"
#include "cli/cmd_run.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/eval_options.h"
#include "cli/cmd_fleet.h"
#include "cli/run_output.h"
#include "cli/runtime_options.h"
#include "harness/readiness.h"
#include "pipette/benchmark.h"
#include "pipette/cell.h"
#include "pipette/store.h"
#include "platform/interrupt.h"

namespace pipette::cli {
namespace {

struct RunArgs {
  CellSpec spec;
  RuntimeArgs runtime;
  EvalArgs eval;
  std::string benchmark_id;
  std::string benchmarks_dir;
  std::string submit;  // --submit URL
  bool quiet = false;
};

Result<BenchmarkSpec> FindBenchmark(const RunArgs& a) {
  BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  const std::string dir = a.benchmarks_dir.empty() ? DefaultUserBenchmarkDir() : a.benchmarks_dir;
  if (!a.benchmarks_dir.empty() || std::filesystem::is_directory(dir)) {
    if (auto s = catalog.AddDirectory(dir); !s) return s.error();
  }
  return catalog.Find(a.benchmark_id);
}

int Run(RunArgs& a, CliContext& ctx) {
  auto bench = FindBenchmark(a);
  if (!bench) return ReportError(ctx, bench.error());
  a.spec.benchmark = *bench;
  auto runtime = ChooseRuntime(a.runtime);
  if (!runtime) return ReportError(ctx, runtime.error());
  a.spec.runtime = runtime->runtime;
  a.spec.device = runtime->device;
  a.spec.settings = runtime->settings;
  const HarnessPolicy& p = a.spec.policy;
  if (p.min_reps > p.max_reps) {
    return ReportError(ctx, MakeError("--min-reps " + std::to_string(p.min_reps) +
                                      " is above --max-reps " + std::to_string(p.max_reps)));
  }
  const std::string store_path = ctx.store_path.empty() ? DefaultStorePath() : ctx.store_path;
  if (bench->type == BenchmarkType::kEval) {
    auto eval = ResolveEvalArgs(a.eval, *bench, store_path);
    if (!eval) return ReportError(ctx, eval.error());
    a.spec.eval = std::move(*eval);
  }
  // Before the store: a refused --submit leaves nothing behind.
  std::unique_ptr<ResultSubmitter> submitter;
  if (!a.submit.empty() && !(submitter = ResultSubmitter::Create(a.submit, ctx))) {
    return ctx.exit_code;
  }
  auto store = ResultStore::Open(store_path);
  if (!store) return ReportError(ctx, store.error());

  InstallInterruptHandler();
  CellHooks hooks;
  hooks.hash_file = [&](const std::string& path) { return CachedSha256(**store, path); };
  const bool tty = isatty(STDERR_FILENO);
  if (!a.quiet) {
    hooks.progress = [tty](const std::string& line) {
      std::cerr << (tty ? "\r\033[K" : "") << "pipette: " << line << (tty ? "" : "\n") << std::flush;
    };
  }
  if (a.spec.readiness.cooldown_s > 0) {
    SteadyClock clock;
    if (hooks.progress) hooks.progress(fmt::format("cooling down for {:g} s", a.spec.readiness.cooldown_s));
    CoolDown(a.spec.readiness, clock);
  }
  auto record = RunCell(a.spec, hooks);
  if (tty && !a.quiet) std::cerr << "\r\033[K";
  if (!record) return ReportError(ctx, record.error());
  if (auto s = (*store)->Put(*record); !s) {
    std::cout << record->dump(2) << std::endl;  // nothing lost: the record goes to stdout
    return ReportError(ctx, s.error().Wrap("storing the result (printed above)"), kExitFailure);
  }
  // A finished eval is in the store now: its checkpoint has done its job (a rerun with the same
  // seed generates again, and reproduces the completions).
  if ((*record)["status"] == "ok" && record->contains("eval")) {
    std::error_code ec;
    std::filesystem::remove((*record)["eval"].value("checkpoint", ""), ec);
  }
  if (submitter) submitter->Submit(*record);  // after storing: a server never holds the only copy
  if (ctx.json) {
    std::cout << record->dump(2) << std::endl;
  } else {
    PrintResultTable(*record, std::cout);
    std::cout << "result " << (*record)["result_id"].get<std::string>() << " stored in "
              << store_path << "\n";
  }
  if ((*record)["status"] != "ok") {
    const auto& f = (*record)["failure"];
    ReportError(ctx, MakeError("cell failed at " + f.value("stage", "") + ": " +
                               f.value("message", "") + " (stored as " +
                               (*record)["result_id"].get<std::string>() + ")"),
                Interrupted() ? 130 : kExitFailure);
  }
  return ctx.exit_code;
}

}  // namespace

void AddRunCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Measure one benchmark on one configuration and store the result");
  HarnessPolicy& p = args->spec.policy;
  run->add_option("-m,--model", args->spec.model_path,
                  "GGUF model file: a host path (copied to --device once), or device:/PATH, a "
                  "file already on the device")
      ->required();
  run->add_option("-b,--benchmark", args->benchmark_id,
                  "benchmark id, e.g. decode_throughput_256_100 (`pipette benchmarks list`)")
      ->required();
  AddRuntimeOptions(run, args->runtime);
  AddEvalOptions(run, args->eval);
  run->add_option("--warmup", p.warmup_runs, "warm-up runs, discarded")->capture_default_str()
      ->check(NumberIn(0, 100));
  run->add_option("--min-reps", p.min_reps, "minimum measured repetitions")->capture_default_str()
      ->check(NumberIn(1, 10000));
  run->add_option("--max-reps", p.max_reps, "maximum measured repetitions (adaptive)")
      ->capture_default_str()->check(NumberIn(1, 10000));
  run->add_option("--ci-target", p.ci_target,
                  "stop when the 95% CI of the median is within +- this fraction")
      ->capture_default_str()->check(NumberIn(0.0001, 1.0))
      ->check(CLI::Validator([](std::string& v) {
        return std::isfinite(std::stod(v)) ? std::string() : std::string("must be a number");
      }, "FINITE"));
  run->add_option("--spin-up", p.spin_up_ms,
                  "ms of untimed work after the readiness gate, before each timed repetition")
      ->capture_default_str()->check(NumberIn(0, 60000));
  run->add_option("--request-timeout", p.request_timeout_s,
                  "seconds to wait for the runtime to answer one request before failing the cell")
      ->capture_default_str()->check(NumberIn(1, 7 * 24 * 3600));
  run->add_option("--reference", args->spec.reference_model_path,
                  "kl_divergence_<ctx>: the higher-precision GGUF to compare the model with");
  ReadinessPolicy& g = args->spec.readiness;
  run->add_option("--readiness-max-celsius", g.max_cpu_celsius,
                  "readiness gate: hottest CPU thermal zone at most this, C")
      ->capture_default_str()->check(NumberIn(0.0, 150.0));
  run->add_option("--readiness-max-busy", g.max_busy_fraction,
                  "readiness gate: other processes use at most this fraction of all CPUs")
      ->capture_default_str()->check(NumberIn(0.0, 1.0));
  run->add_option("--readiness-poll", g.poll_interval_s, "readiness gate: seconds between polls")
      ->capture_default_str()->check(NumberIn(0.01, 3600.0));
  run->add_option("--readiness-deadline", g.deadline_s,
                  "readiness gate: seconds before a device that is not ready fails the cell")
      ->capture_default_str()->check(NumberIn(0.0, 86400.0));
  run->add_flag("--no-readiness-thermal", g.waive_thermal, "waive the thermal criterion (recorded)");
  run->add_flag("--no-readiness-load", g.waive_load, "waive the CPU-load criterion (recorded)");
  run->add_flag("--no-readiness-throttle", g.waive_throttle,
                "waive the throttling criterion (recorded)");
  run->add_option("--cooldown", g.cooldown_s,
                  "seconds to rest before the cell starts (between cells of a script; recorded)")
      ->capture_default_str()->check(NumberIn(0.0, 86400.0));
  run->add_option("--sys-root", g.sys_root,
                  "read thermal zones and throttling from this sysfs root (test fixtures)")
      ->capture_default_str();
  run->add_option("--label", args->spec.label, "device label recorded with the result");
  run->add_flag("--allow-context-overflow", args->spec.allow_context_overflow,
                "allow a shape longer than the model's training context");
  run->add_option("--benchmarks-dir", args->benchmarks_dir,
                  "directory of user benchmark definitions (*.toml)");
  run->add_option("--runtime-log", args->spec.log_path, "where to keep the runtime's log");
  run->add_flag("-q,--quiet", args->quiet, "no progress lines");
  run->add_option("--submit", args->submit,
                  "also send the result to this pipette serve, http://HOST:PORT (through the "
                  "outbox: an unreachable server delays it, never loses it)");
  run->callback([args, &ctx] { Run(*args, ctx); });
}

}  // namespace pipette::cli
