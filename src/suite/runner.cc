// Running a suite's cells in order, resumable by config_id (see suite.h: RunSuite, PlanSuite).
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "base/ids.h"
#include "harness/readiness.h"
#include "pipette/store.h"
#include "pipette/suite.h"
#include "platform/device_access.h"
#include "platform/interrupt.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The suite's runtimes, each opened once, when its first cell needs it (opening reads the stock
// binaries' version or asks the server who it is). An entry that cannot be opened makes its cells
// invalid with the reason.
class SuiteRuntimes {
 public:
  SuiteRuntimes(const Suite& suite, const SuiteRunOptions& options)
      : suite_(suite), options_(options) {}

  // The device of a cell: connected (and its driver installed) when its first cell needs it.
  // A device that cannot be reached is tried again at its next cell (it may have been
  // rebooting): its cells in between are invalid with the reason, and a rerun resumes them.
  Result<std::shared_ptr<DeviceAccess>> Device(const SuiteCell& cell) {
    if (cell.device_uri == "local") return std::shared_ptr<DeviceAccess>();
    if (auto it = devices_.find(cell.device_uri); it != devices_.end()) return it->second;
    auto address = ParseDeviceAddress(cell.device_uri);
    if (!address) return address.error();
    const auto driver = suite_.device_drivers.find(cell.device_uri);
    auto d = DeviceAccess::Open(*address, {},
                                driver == suite_.device_drivers.end() ? "" : driver->second);
    if (!d) return d.error();
    devices_[cell.device_uri] = *d;
    return *d;
  }

  Result<std::shared_ptr<Runtime>> Get(const SuiteCell& cell) {
    const size_t index = cell.runtime;
    if (index >= suite_.runtimes.size()) return MakeError("no such runtime entry");
    const auto key = std::make_pair(index, cell.device_uri);
    if (auto it = opened_.find(key); it != opened_.end()) return it->second;
    RuntimeChoice choice = suite_.runtimes[index].choice;
    if (choice.name == "llamacpp" && choice.driver_path.empty() && cell.device_uri == "local") {
      choice.driver_path = options_.driver_path;
    }
    auto device = Device(cell);
    if (!device) return device.error();
    choice.device = *device;
    auto r = OpenRuntime(choice);
    if (!r) return r.error().Wrap(cell.runtime_label);
    opened_.emplace(key, *r);
    return *r;
  }

 private:
  const Suite& suite_;
  const SuiteRunOptions& options_;
  std::map<std::string, std::shared_ptr<DeviceAccess>> devices_;
  std::map<std::pair<size_t, std::string>, std::shared_ptr<Runtime>> opened_;
};

// Builds the cell's spec; errors for a benchmark id the catalog does not know, or a runtime that
// cannot be opened.
Result<CellSpec> Spec(const Suite& suite, const SuiteCell& cell, const BenchmarkCatalog& catalog,
                      SuiteRuntimes& runtimes, const std::string& store_path) {
  auto bench = catalog.Find(cell.benchmark_id);
  if (!bench) return bench.error();
  auto runtime = runtimes.Get(cell);
  if (!runtime) return runtime.error();
  CellSpec spec;
  spec.runtime = *runtime;
  spec.device = *runtimes.Device(cell);
  spec.model_path = cell.model_path;
  spec.benchmark = *bench;
  spec.settings = cell.settings;
  spec.policy = suite.policy;
  spec.readiness = suite.readiness;
  spec.label = suite.label;
  spec.allow_context_overflow = suite.allow_context_overflow;
  if (const auto it = suite.references.find(cell.model_path); it != suite.references.end()) {
    spec.reference_model_path = it->second;
  }
  if (bench->type == BenchmarkType::kEval) {
    spec.eval = suite.eval;
    if (spec.eval.max_tokens == 0) spec.eval.max_tokens = bench->max_tokens > 0 ? bench->max_tokens : 8192;
    spec.eval.data_dir = EvalDataDir(spec.eval.data_dir);
    if (spec.eval.checkpoint_dir.empty()) {
      spec.eval.checkpoint_dir =
          (fs::absolute(store_path).parent_path() / "eval-checkpoints").string();
    }
  }
  return spec;
}

Result<BenchmarkCatalog> Catalog(const Suite& suite) {
  BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  const std::string dir =
      suite.benchmarks_dir.empty() ? DefaultUserBenchmarkDir() : suite.benchmarks_dir;
  std::error_code ec;
  if (!suite.benchmarks_dir.empty() || fs::is_directory(dir, ec)) {
    if (auto s = catalog.AddDirectory(dir); !s) return s.error().Wrap(suite.path);
  }
  for (size_t i = 0; i < suite.benchmarks.size(); ++i) {
    if (auto b = catalog.Find(suite.benchmarks[i]); !b) {
      return b.error().Wrap(suite.path + ": benchmarks[" + std::to_string(i + 1) + "]");
    }
  }
  return catalog;
}

// "20261201T030501Z": the UTC second, for file names.
std::string CompactUtcNow() {
  std::string t = NowRfc3339().substr(0, 19);  // 2026-12-01T03:05:01
  std::erase(t, '-');
  std::erase(t, ':');
  return t + "Z";
}

// <logs_dir>/<index>-<config_id[0:12]>-<UTC second>.log: a rerun (a resumed failure,
// --rerun-noisy) keeps the earlier attempt's log beside the new one.
std::string CellLogPath(const std::string& logs_dir, const SuiteCell& cell,
                        const std::string& config_id) {
  const fs::path dir(logs_dir);
  const std::string stem =
      fmt::format("{:03d}-{}-{}", cell.index, config_id.substr(0, 12), CompactUtcNow());
  fs::path path = dir / (stem + ".log");
  std::error_code ec;
  for (int n = 2; fs::exists(path, ec); ++n) path = dir / fmt::format("{}-{}.log", stem, n);
  return path.string();
}

// A stored result that a rerun could change: noisy (its interval stayed wider than the target),
// and neither a soak (never has a target) nor a kl_divergence result (deterministic: a rerun
// gives the same numbers; a longer context narrows its interval).
bool WorthRerunning(const json& record) {
  const json harness = record.value("harness", json::object());
  if (harness.value("ci_reached", true) != false) return false;
  const std::string type = record.value("benchmark", json::object()).value("type", "");
  return type != "soak" && type != "kl_divergence";
}

// For the cell's line: what held the readiness gate while it ran, e.g. "readiness held by other
// processes busy up to 0.85 > 0.30"; "" when nothing did.
std::string ReadinessNote(const json& record) {
  const json harness = record.value("harness", json::object());
  const std::string held = DescribeHolds(harness.value("readiness", json::object()));
  return held.empty() ? held : "readiness held by " + held;
}

// For the cell's line of a noisy result: "noisy: 95% CI +-7.1% (target +-2%)", the wider side of
// the headline's interval (as `results list` shows it); "" when the target was reached, and for
// a soak or a kl_divergence result, never flagged noisy (analysis/noise.h).
std::string NoisyNote(const json& record) {
  const json harness = record.value("harness", json::object());
  const std::string type = record.value("benchmark", json::object()).value("type", "");
  if (harness.value("ci_reached", true) != false || type == "soak" || type == "kl_divergence") {
    return "";
  }
  const json metric =
      record.value("metrics", json::object()).value(HeadlineMetric(type), json::object());
  const double median = metric.value("median", 0.0);
  if (median == 0) return "";
  const double wider = std::max(median - metric.value("ci95_low", median),
                                metric.value("ci95_high", median) - median);
  return fmt::format("noisy: 95% CI +-{:.1f}% (target +-{:g}%)", 100 * wider / std::abs(median),
                     100 * harness.value("ci_target", 0.0));
}

std::string JoinNotes(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return b.empty() ? a : a + "; " + b;
}

void Headline(const json& record, SuiteCellOutcome& out) {
  const std::string metric = HeadlineMetric(record["benchmark"].value("type", ""));
  const json& m = record.value("metrics", json::object());
  if (metric.empty() || !m.contains(metric)) return;
  out.headline_metric = metric;
  out.headline_unit = m[metric].value("unit", "");
  if (m[metric].contains("median") && m[metric]["median"].is_number()) {
    out.headline = m[metric]["median"].get<double>();
  }
}

// Resolves `cell` to its config_id and looks for a stored ok result with it. Sets status
// "skipped" (found), "invalid" (bad input) or leaves it empty (to run). Without a store (a plan
// for a store not made yet) nothing is skipped and model files are hashed in full.
void Resolve(const Suite& suite, const SuiteCell& cell, const BenchmarkCatalog& catalog,
             SuiteRuntimes& runtimes, const SuiteRunOptions& options, ResultStore* store,
             SuiteCellOutcome& out, CellSpec* spec_out) {
  out.cell = cell;
  auto spec = Spec(suite, cell, catalog, runtimes,
                   options.store_path.empty() ? DefaultStorePath() : options.store_path);
  if (!spec) {
    out.status = "invalid";
    out.reason = spec.error().message;
    return;
  }
  CellHooks hooks;
  if (store) hooks.hash_file = [&](const std::string& path) { return CachedSha256(*store, path); };
  auto id = PlannedConfigId(*spec, hooks);
  if (!id) {
    out.status = "invalid";
    out.reason = id.error().message;
    return;
  }
  out.config_id = *id;
  if (!store) {
    if (spec_out) *spec_out = std::move(*spec);
    return;
  }
  auto ok = store->OkResultIds(*id);
  if (ok && !ok->empty() && !options.run_stored) {
    auto stored = store->Get(ok->back());
    const json* record = stored && stored->has_value() ? &**stored : nullptr;
    if (!(options.rerun_noisy && record && WorthRerunning(*record))) {
      out.status = "skipped";
      out.result_id = ok->back();
      if (record) Headline(*record, out);
    }
  }
  if (spec_out) *spec_out = std::move(*spec);
}

}  // namespace

int SuiteRun::Count(const std::string& status) const {
  int n = 0;
  for (const auto& o : outcomes) n += o.status == status;
  return n;
}

Result<std::vector<SuiteCellOutcome>> PlanSuite(const Suite& suite,
                                                const std::vector<SuiteCell>& cells,
                                                const SuiteRunOptions& options) {
  // A plan only reads: a store that does not exist yet is not created (nothing is stored there).
  const std::string path = options.store_path.empty() ? DefaultStorePath() : options.store_path;
  StoreOptions read_only;
  read_only.create_if_missing = false;
  std::unique_ptr<ResultStore> store;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    auto opened = ResultStore::Open(path, read_only);
    if (!opened) return opened.error();
    store = std::move(*opened);
  }
  auto catalog = Catalog(suite);
  if (!catalog) return catalog.error();
  std::vector<SuiteCellOutcome> plan;
  SuiteRuntimes runtimes(suite, options);
  for (const SuiteCell& cell : cells) {
    SuiteCellOutcome o;
    Resolve(suite, cell, *catalog, runtimes, options, store.get(), o, nullptr);
    if (o.status.empty()) o.status = "to run";
    plan.push_back(std::move(o));
  }
  return plan;
}

Result<SuiteRun> RunSuite(const Suite& suite, const std::vector<SuiteCell>& cells,
                          const SuiteRunOptions& options, const SuiteHooks& hooks) {
  const std::string path = options.store_path.empty() ? DefaultStorePath() : options.store_path;
  auto store = ResultStore::Open(path);
  if (!store) return store.error();
  auto catalog = Catalog(suite);
  if (!catalog) return catalog.error();
  std::error_code ec;
  fs::create_directories(options.logs_dir, ec);
  if (ec || !fs::is_directory(options.logs_dir)) {
    return MakeError(options.logs_dir + ": cannot create the suite's log folder (" +
                     ec.message() + "); choose another logs folder");
  }
  InstallInterruptHandler();
  const bool stop_on_failure = options.stop_on_failure || suite.stop_on_failure;
  const int total = static_cast<int>(cells.size());
  SuiteRun run;
  SuiteRuntimes runtimes(suite, options);
  bool stop = false;
  for (const SuiteCell& cell : cells) {
    SuiteCellOutcome out;
    out.cell = cell;
    stop = stop || Interrupted();
    if (stop) {
      out.status = "not run";
      run.outcomes.push_back(std::move(out));
      continue;
    }
    CellSpec spec;
    Resolve(suite, cell, *catalog, runtimes, options, store->get(), out, &spec);
    if (!out.status.empty()) {  // skipped or invalid
      run.outcomes.push_back(out);
      if (hooks.cell_finished) hooks.cell_finished(out, static_cast<int>(run.outcomes.size()), total);
      continue;
    }
    out.log_path = CellLogPath(options.logs_dir, cell, out.config_id);
    spec.log_path = out.log_path;
    if (hooks.cell_started) hooks.cell_started(cell);
    CellHooks cell_hooks;
    cell_hooks.hash_file = [&](const std::string& p) { return CachedSha256(**store, p); };
    cell_hooks.progress = hooks.cell_progress;
    if (spec.readiness.cooldown_s > 0 && !run.outcomes.empty()) {
      SteadyClock clock;
      CoolDown(spec.readiness, clock);
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto record = RunCell(spec, cell_hooks);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!record) {
      out.status = "invalid";
      out.reason = record.error().message;
    } else {
      if (auto s = (*store)->Put(*record); !s) {
        // Nothing lost: the record goes next to the log before the suite gives up.
        const std::string saved = out.log_path + ".result.json";
        std::ofstream(saved) << record->dump(2) << "\n";
        return s.error().Wrap("storing the result of cell " + std::to_string(cell.index) +
                              " (written to " + saved + ")");
      }
      out.result_id = (*record)["result_id"];
      // A finished eval is stored: its per-attempt checkpoint has done its job.
      if ((*record)["status"] == "ok" && record->contains("eval")) {
        fs::remove((*record)["eval"].value("checkpoint", ""), ec);
      }
      const json& timing = (*record)["harness"].value("timing", json::object());
      if (timing.contains("readiness_wait_ms") && timing["readiness_wait_ms"].is_number()) {
        out.readiness_wait_s = timing["readiness_wait_ms"].get<double>() / 1000;
      }
      if ((*record)["status"] == "ok") {
        out.status = "ok";
        out.reason = JoinNotes(NoisyNote(*record), ReadinessNote(*record));
        Headline(*record, out);
      } else {
        out.status = "failed";
        const json& f = (*record)["failure"];
        out.reason = f.value("stage", "") + ": " + f.value("message", "");
        // A readiness failure names its last observation already.
        if (f.value("stage", "") != "readiness") {
          out.reason = JoinNotes(out.reason, ReadinessNote(*record));
        }
        stop = stop_on_failure;
      }
    }
    stop = stop || Interrupted();
    run.outcomes.push_back(out);
    if (hooks.cell_finished) hooks.cell_finished(out, static_cast<int>(run.outcomes.size()), total);
  }
  run.interrupted = Interrupted();
  return run;
}

}  // namespace pipette
