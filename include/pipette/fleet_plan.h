// Plans (DESIGN.md 8; docs/fleet-protocol.md "Plans and jobs"): a suite's cells as JobSpecs that
// any device of a fleet can run, and back: a JobSpec as the CellSpec a worker measures.
//
// A JobSpec names models by SHA-256 and file name (paths are machine-local: each worker finds the
// file in its own model folders), the runtime by name and settings, and carries the suite's
// harness, readiness and eval policies, so that the cell a worker runs is the cell `suite run`
// would have run on that device. Machine-local parts of the suite (the eval data folder, the
// checkpoint folder, sysfs roots, the llamacpp driver's path) are the worker's own.
//
// Pure functions over their arguments (no globals); thread-safe when the given callbacks are.
// Errors are one line naming the cell or the JobSpec field.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipette/cell.h"
#include "pipette/runtime.h"
#include "pipette/runtimes.h"
#include "pipette/status.h"
#include "pipette/suite.h"

namespace pipette {

// Requirements every job of a plan carries besides its runtime and models.
struct JobRequirements {
  std::vector<std::string> labels;  // labels a worker must all have (`--requires-label`)
  std::string arch;                 // `uname -m` a worker must report; empty: any
  int64_t min_memory_bytes = 0;     // MemTotal a worker must have at least; 0: any
};

// SHA-256 (lowercase hex) of a model file; errors name the file.
using HashFileFn = std::function<Result<std::string>(const std::string& path)>;

// One JobSpec per cell, in the cells' order: {benchmark, model {sha256, file_name},
// reference_model (kl_divergence cells), runtime, runtime_options (only for a runtime that needs
// its place: llamacpp-stock's dir, openai's url/server_command/api_model), settings, harness,
// readiness (with waive = [..]), eval (eval cells), label_note (the suite's label), cell {index,
// factor}, requires {labels, arch, min_memory_bytes, runtimes [name], models [sha256 of the
// model and reference]}, allow_context_overflow}. Errors: a model file that cannot be hashed.
Result<std::vector<nlohmann::json>> JobSpecsFromSuite(const Suite& suite,
                                                      const std::vector<SuiteCell>& cells,
                                                      const HashFileFn& hash_file,
                                                      const JobRequirements& defaults);

// What a worker brings to CellSpecFromJob.
struct JobContext {
  // The worker's model files: sha256 -> local path.
  std::map<std::string, std::string> models;
  // Makes the runtime of a choice (the worker's: OpenRuntime with its driver path).
  std::function<Result<std::shared_ptr<Runtime>>(const RuntimeChoice&)> open_runtime;
  std::string benchmarks_dir;  // user benchmark definitions; empty: DefaultUserBenchmarkDir()
  std::string eval_data_dir;   // empty: EvalDataDir("") ($PIPETTE_EVALS_DIR)
  std::string checkpoint_dir;  // eval checkpoints; required for eval jobs
  std::string label;           // device label when the job has no label_note
};

// Error stages of CellSpecFromJob: a job this device cannot run but another may (a model file it
// does not have, a runtime it cannot open) is kJobStageDevice: retriable; a malformed JobSpec or
// one no device can run (unknown benchmark, bad setting) is kJobStageSpec.
inline constexpr char kJobStageDevice[] = "device";
inline constexpr char kJobStageSpec[] = "spec";

// The cell of a JobSpec (without log_path). Errors (stage as above) name the field:
// "job spec: model 3f2a.. (stories260K-Q8_0.gguf) is not in this worker's model folders".
Result<CellSpec> CellSpecFromJob(const nlohmann::json& spec, const JobContext& context);

// The harness and readiness policies as JobSpecs carry them, and back (unknown keys are errors
// naming them; missing keys take the defaults).
nlohmann::json HarnessToJson(const HarnessPolicy& policy);
Result<HarnessPolicy> HarnessFromJson(const nlohmann::json& j);
nlohmann::json ReadinessToJson(const ReadinessPolicy& policy);
Result<ReadinessPolicy> ReadinessFromJson(const nlohmann::json& j);

}  // namespace pipette
