// One cell: one benchmark on one configuration, measured by the methodology pipette-method/1
// (DESIGN.md 4.2) and returned as a `pipette.result/1` record (DESIGN.md 5).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "pipette/benchmark.h"
#include "pipette/evals.h"
#include "pipette/readiness_policy.h"
#include "pipette/runtime.h"
#include "pipette/status.h"

namespace pipette {

class DeviceAccess;  // platform/device_access.h

// Repetition policy (DESIGN.md 4.2 steps 4-5).
struct HarnessPolicy {
  int warmup_runs = 1;      // full-shape runs before measuring, discarded
  int min_reps = 5;         // measured repetitions always run
  int max_reps = 20;        // adaptive upper bound
  double ci_target = 0.02;  // stop once the 95% CI of the headline median is within +-ci_target
  // Longest wait for the runtime to answer one request (load, one repetition), seconds. A runtime
  // that is hung or stopped is killed then and the cell fails at that stage.
  int request_timeout_s = 600;
  // Untimed work right after the readiness gate and before each timed repetition, ms (0: none):
  // the gate leaves the CPU idle (its load sample alone is 250 ms), and an idle core is clocked
  // down or given away by the host or the scheduler, which the first timed milliseconds would
  // then measure. A workload spins up with a short unit of its own kind (a 32-token prefill on
  // an in-process engine), repeated until this much time has passed; runtimes that start a
  // process per unit have no spin-up. Measured (bench/agreement_paired.sh, issue 8): prefill of
  // a 134M Q8_0 model against llama-bench 0.988 without, 0.995 with 100 ms; pipette's cv on
  // stories260K 1.8% without, 0.9% with.
  int spin_up_ms = 100;
};

struct CellSpec {
  // The GGUF file measured: a host path, or "device:/PATH" (kDeviceModelPrefix), a file already on
  // `device`, hashed there and its header read from a copy of its first bytes (on this machine,
  // the same as PATH).
  std::string model_path;
  BenchmarkSpec benchmark;
  // The runtime that measures the cell (pipette/runtimes.h OpenRuntime); required.
  std::shared_ptr<Runtime> runtime;
  // Settings given by name (the runtime's SettingDefs: "threads", "n_ctx", ...); the others take
  // their defaults. Recorded in runtime.settings as resolved, defaults filled in.
  nlohmann::json settings = nlohmann::json::object();
  HarnessPolicy policy;
  std::string label;                    // device label recorded in device.label
  // The device the cell runs on (DESIGN.md 8a): its fingerprint and every reading of the
  // readiness gate and the thermal series come from there. Null: this machine, read under the
  // readiness policy's roots. The runtime must run on the same device (RuntimeChoice::device).
  std::shared_ptr<DeviceAccess> device;
  bool allow_context_overflow = false;  // allow P + D above the model's training context
  // The readiness gate before every measured repetition (DESIGN.md 4.5); recorded in
  // harness.readiness with every wait.
  ReadinessPolicy readiness;
  // kl_divergence_<ctx> only: the higher-precision model the quantized one is compared with
  // (same tokenizer required); a host path or "device:/PATH" as model_path.
  std::string reference_model_path;
  std::string log_path;                 // runtime stderr log; empty: a temporary file
  // eval benchmarks only: the data set's folder, subset, repeats, sampling, doom-loop detector
  // and checkpoint folder (recorded in the result's `eval` block).
  EvalOptions eval;
};

struct CellHooks {
  // Progress lines ("warm-up 1/1", "rep 3: 1234.5 tokens/s"), for a terminal.
  std::function<void(const std::string&)> progress;
  // SHA-256 of a model file (the CLI caches it in the store). Empty: hash the file.
  std::function<Result<std::string>(const std::string& path)> hash_file;
  // Called with the runtime process's pid once it runs (tests use it to inject crashes).
  std::function<void(int pid)> on_runtime_started;
};

// Runs the cell. Returns an Error only for bad input found before anything ran (missing or
// invalid model file, shape above the training context, invalid settings, a benchmark the runtime
// cannot run): nothing to store.
// Once the runtime starts, every outcome is a record: status "ok", or "failed" with
// failure{stage, message} (a crashed or killed runtime included; the harness survives it).
Result<nlohmann::json> RunCell(const CellSpec& spec, const CellHooks& hooks = {});

// config_id of DESIGN.md 5: SHA-256 of the canonical JSON (sorted keys, no spaces) of
// {model.sha256, model.quant, runtime.name, runtime.version, runtime.commit, runtime.settings,
// device.id, benchmark.id, benchmark.methodology} taken from `record`.
std::string ConfigId(const nlohmann::json& record);

// The config_id RunCell's record will carry, known before anything runs: resolves the cell as
// RunCell's first step does (model header, SHA-256 through hooks.hash_file, the runtime's
// identity and resolved settings, device fingerprint), and RunCell stores exactly this id. Suites
// use it to skip cells already stored ok. Errors: the bad input RunCell would report.
Result<std::string> PlannedConfigId(const CellSpec& spec, const CellHooks& hooks = {});

}  // namespace pipette
