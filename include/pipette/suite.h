// Suites (DESIGN.md 6): a TOML matrix of models x runtimes x settings x benchmarks, expanded into
// cells that run one after another, resumable by config_id. The file format is documented in
// docs/suites.md; examples are in examples/suites/.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/cell.h"
#include "pipette/evals.h"
#include "pipette/runtimes.h"
#include "pipette/status.h"

namespace pipette {

// One [[runtimes]] entry: which runtime and where it lives (name, dir, url, server, api_model;
// pipette/runtimes.h), and `settings`, mapping a setting the runtime takes (its SettingDefs:
// threads, n_batch, ...) to its values: a setting given as a list is a dimension of the matrix;
// a scalar is one value. Each list holds at least one value.
struct SuiteRuntime {
  RuntimeChoice choice;
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> settings;  // name order
  // How cells and messages name this entry: the runtime's name, plus its dir or URL when the
  // suite lists that runtime more than once ("llamacpp-stock (/opt/llama-b7000/bin)").
  std::string label;
  // `cpus` given as a table keyed by the threads values (cpus = { 1 = "4", 2 = "4-5" }): each
  // threads value -> its CPU list. Not in `settings` and not a dimension: on big.LITTLE chips a
  // thread count is only meaningful with the cores it runs on, so the two vary together and
  // each cell takes the CPU list of its threads value. Empty: cpus (if any) is in `settings`.
  std::map<int64_t, std::string> cpus_by_threads;
};

// [baseline] of mode "one-factor": the configuration every step varies one dimension of.
struct SuiteBaseline {
  std::string model;    // a path listed in [[models]] (resolved like them); empty: the first
  std::string runtime;  // a [[runtimes]] name (listed once); empty: the first
  nlohmann::json settings = nlohmann::json::object();  // setting -> one value; missing settings
                                                       // take the first value of their list
};

enum class SuiteMode { kMatrix, kOneFactor };

// A parsed suite file. Paths are absolute (relative ones are taken from the suite file's folder).
struct Suite {
  std::string path;  // the suite file
  std::string name;
  SuiteMode mode = SuiteMode::kMatrix;
  std::vector<std::string> benchmarks;  // ids: built-in, smoke shapes, or from benchmarks_dir
  std::string benchmarks_dir;           // user benchmark definitions (*.toml); empty: the default
  // GGUF files, in file order; "device:/PATH" (kDeviceModelPrefix) names a file already on each
  // device, kept as written and checked there when its cells run.
  std::vector<std::string> models;
  // kl_divergence_<ctx>: model path -> the higher-precision model it is compared with
  // ([[models]] reference = "FILE").
  std::map<std::string, std::string> references;
  bool allow_context_overflow = false;  // run shapes longer than a model's training context
  std::vector<SuiteRuntime> runtimes;
  // [[devices]] uri = "ssh://pi@board": the devices every configuration is measured on
  // (DESIGN.md 8a), canonical URIs (platform/transport.h); empty: this machine alone. Each cell
  // runs on every device in turn before the next cell (interleaved), so that drift over the
  // suite falls on every device alike.
  std::vector<std::string> devices;
  // [[devices]] driver = "FILE": the driver build to copy to that device (by URI), instead of the
  // one scripts/build-device.sh made for its architecture (an absolute path).
  std::map<std::string, std::string> device_drivers;
  SuiteBaseline baseline;
  HarnessPolicy policy;       // [harness]: warmup_runs, min_reps, max_reps, ci_target,
                              // request_timeout_s
  ReadinessPolicy readiness;  // [readiness]: max_cpu_celsius, max_busy_fraction, poll_interval_s,
                              // deadline_s, cooldown_s, waive = ["thermal", "load", "throttle"]
  // [eval]: data_dir (default $PIPETTE_EVALS_DIR), limit, repeats, temperature, seed, max_tokens
  // (0: the benchmark's), doom_loop = { KEY = VALUE }, checkpoint_dir (default: eval-checkpoints
  // beside the store), for the suite's eval benchmarks.
  EvalOptions eval;
  std::string label;          // device label recorded with every result
  bool stop_on_failure = false;
  // Within each model, run each benchmark on every configuration before the next benchmark
  // (instead of every benchmark of a configuration together), so that drift of the machine over
  // the suite falls on all configurations alike: for comparing runtimes or builds.
  bool interleave = false;
};

// Reads and validates a suite file. Errors name the file and the key, e.g. "suite.toml: models[2]
// (/m/x.gguf): no such file; fix the path", "suite.toml: runtimes[1].settings.threads: expected
// an integer or a list of integers, not a string", "suite.toml: unknown key 'modes'". Model files
// must exist and be readable; whether each benchmark fits each model is checked per cell.
// A decision file's [decision] table (pipette/decide.h) is ignored: `suite run` on a decision
// file measures its full matrix.
Result<Suite> ParseSuiteFile(const std::string& path);

// Same, from TOML text; relative model paths are taken from `base_dir`, and errors start with
// `source_name`. `other_tables`: top-level keys another reader of the same file owns (a decision
// file's "decision", pipette/decide.h), ignored here instead of refused as unknown.
Result<Suite> ParseSuiteToml(const std::string& text, const std::string& base_dir,
                             const std::string& source_name,
                             const std::vector<std::string>& other_tables = {});

// The most cells a suite may expand to (a suite of this size runs for days even at a second a
// cell; more is almost surely a mistake in a list).
inline constexpr int kMaxSuiteCells = 10000;

// One cell of a suite: one benchmark on one configuration.
struct SuiteCell {
  int index = 0;  // 1-based position in run order
  std::string model_path;
  size_t runtime = 0;         // index into Suite::runtimes
  std::string runtime_label;  // SuiteRuntime::label
  nlohmann::json settings = nlohmann::json::object();  // the suite's values for this cell
  std::string benchmark_id;
  size_t device = 0;               // index into Suite::devices (0 when it lists none)
  std::string device_uri = "local";  // that device's URI
  // mode "one-factor": "baseline", or the one varied dimension and its value ("threads=4",
  // "model=stories260K-Q4_0.gguf"); mode "matrix": empty.
  std::string factor;
};

// Expands `suite` into cells, ordered so that each model's cells run together (consecutive
// loads of one file come from the page cache): models in file order, then runtime settings
// (by setting name, alphabetically: the first name varies slowest; each list in its order), then
// benchmarks in file order.
//   matrix:      the full cross product models x runtimes x settings x benchmarks.
//   one-factor:  the baseline configuration, then for each dimension (the models, then each
//                setting given as a list, by name) every value other than the baseline's
//                with all other dimensions at the baseline; each configuration x benchmarks.
//                A configuration is never listed twice.
// A cpus table (SuiteRuntime::cpus_by_threads) is not a dimension: each cell's cpus is the list
// of its threads value, in both modes (one-factor's "threads=4" step runs on 4's CPU list).
// With several [[devices]], each cell is then repeated on every device, one after the other.
// Errors: more than kMaxSuiteCells cells (the message names the factors), a setting value of the
// wrong type or out of range, a baseline naming a model or runtime the suite does not list, a
// baseline setting that is not a setting, a baseline cpus (or threads value without a CPU list)
// for a runtime whose cpus is a table.
Result<std::vector<SuiteCell>> ExpandSuite(const Suite& suite);

// What happened to one cell in a suite run.
struct SuiteCellOutcome {
  SuiteCell cell;
  std::string config_id;   // empty when the cell could not be resolved (see status "invalid")
  // "ok", "failed" (stored as a failed result), "skipped" (an ok result with this config_id was
  // already stored: resume), "invalid" (bad input found before running, e.g. a shape longer than
  // the model's training context; nothing stored), "not run" (after an interrupt or a failure
  // with stop_on_failure).
  std::string status;
  std::string result_id;   // stored result (ok/failed), or the stored ok result that was reused
  std::string reason;      // failed: "<stage>: <message>"; invalid: the error; ok: a note, if any
  std::string log_path;    // the runtime's raw log of this cell (ok/failed)
  double seconds = 0;      // wall time of the cell in this run (0 for skipped)
  double readiness_wait_s = 0;  // of which waiting at the readiness gate (DESIGN.md 4.5)
  std::optional<double> headline;  // median of the headline metric (ok, skipped)
  std::string headline_metric, headline_unit;
};

// Progress events of RunSuite, for a progress bar or plain lines.
struct SuiteHooks {
  // A cell is about to start (not called for skipped/invalid cells).
  std::function<void(const SuiteCell&)> cell_started;
  // Within a cell: the harness's progress lines ("rep 3: 1234.5 tokens/s").
  std::function<void(const std::string&)> cell_progress;
  // A cell ended in any way, `done` cells of `total` are now settled.
  std::function<void(const SuiteCellOutcome&, int done, int total)> cell_finished;
};

struct SuiteRunOptions {
  std::string store_path;  // results store (DefaultStorePath() when empty)
  // Each cell's runtime log, one file per attempt (a rerun keeps the earlier ones):
  // <logs_dir>/<index>-<config_id[0:12]>-<UTC start, 20261201T031136Z>.log, and for a
  // kl_divergence cell the reference's beside it as <...>.reference.log.
  std::string logs_dir;
  std::string driver_path; // the llamacpp runtime's driver; empty: beside pipette
  bool stop_on_failure = false;  // or Suite::stop_on_failure
  // Measure again the cells whose newest stored ok result is noisy (its 95% CI stayed wider
  // than the target: harness.ci_reached false, the ! of `results list`) instead of skipping them.
  bool rerun_noisy = false;
  // Run every cell even when an ok result with its config_id is stored: the decision funnel
  // (pipette/decide.h) adds results to a configuration by design, and keeps its own record of
  // which cells it ran.
  bool run_stored = false;
};

struct SuiteRun {
  std::vector<SuiteCellOutcome> outcomes;  // one per cell, in run order
  bool interrupted = false;  // SIGINT/SIGTERM/SIGHUP arrived; the current cell was stored as
                             // failed ("interrupted") and the rest were not run
  int Count(const std::string& status) const;
};

// Runs the cells in order. For each: resolves it (model header, cached SHA-256, settings, device)
// to its config_id; skips it when the store already holds an ok result with that config_id
// (unless rerun_noisy and that result is noisy);
// otherwise runs it (RunCell) with its own runtime log and stores the record. A failed cell does
// not stop the suite unless stop_on_failure. Installs the interrupt handler: after an interrupt
// it stores the current cell (as "interrupted") and returns. Errors: the store cannot be opened,
// the logs folder cannot be created, or a record cannot be stored (the message says where the
// record was written instead: nothing is lost).
Result<SuiteRun> RunSuite(const Suite& suite, const std::vector<SuiteCell>& cells,
                          const SuiteRunOptions& options, const SuiteHooks& hooks = {});

// The plan without running: each cell's config_id and whether it would be skipped (status
// "skipped" with the stored result_id), is invalid, or would run (status "to run"). Only reads
// the store; a store that does not exist yet is not created (every valid cell is "to run").
Result<std::vector<SuiteCellOutcome>> PlanSuite(const Suite& suite,
                                                const std::vector<SuiteCell>& cells,
                                                const SuiteRunOptions& options);

}  // namespace pipette
