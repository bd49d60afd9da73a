// One cell: one benchmark on one configuration, measured by the methodology pipette-method/1
// (DESIGN.md 4.2) and returned as a `pipette.result/1` record (DESIGN.md 5).
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/readiness.h"
#include "pipette/benchmark.h"
#include "pipette/status.h"

namespace pipette {

// Engine settings of the `llamacpp` runtime (DESIGN.md 4.2 step 2). Every field is recorded in
// `runtime.settings` as it was run, with defaults filled in.
struct RuntimeSettings {
  // CPU threads for prefill and decode. 0 = the number of physical cores (llama-bench's default).
  int threads = 0;
  // Layers offloaded to a GPU. -1 = all when the build has a GPU backend, else 0 (recorded as
  // resolved).
  int n_gpu_layers = -1;
  // Memory-map the weights. Off by default so that weights are resident and peak memory figures
  // are comparable between runs and devices.
  bool mmap = false;
  // Flash attention: "auto" (llama.cpp decides per backend; llama-bench's default), "on", "off".
  std::string flash_attn = "auto";
  // Tokens per llama_decode call during prefill (logical) and per compute graph (physical).
  int n_batch = 2048;
  int n_ubatch = 512;
  // KV cache element types, ggml names (f16, q8_0, ...).
  std::string type_k = "f16";
  std::string type_v = "f16";
  // Context size in tokens. 0 = exactly the benchmark's shape (P + D; P + 1 for memory).
  int n_ctx = 0;
  // Fault injection for testing the soak benchmark's leak detection: the runtime leaks this many
  // bytes per request on purpose. Never set in a real measurement (recorded, and warned).
  int64_t test_leak_bytes = 0;
  // CPUs the runtime may run on, in taskset -c syntax ("0", "0-3", "0,2"); empty: any. On CPUs of
  // unequal speed (big.LITTLE, some VMs) unpinned single-thread runs land on either and compare
  // badly. Recorded (canonical form, e.g. "0-3") only when set, and part of the config_id then.
  std::string cpus;
};

// Repetition policy (DESIGN.md 4.2 steps 4-5).
struct HarnessPolicy {
  int warmup_runs = 1;      // full-shape runs before measuring, discarded
  int min_reps = 5;         // measured repetitions always run
  int max_reps = 20;        // adaptive upper bound
  double ci_target = 0.02;  // stop once the 95% CI of the headline median is within +-ci_target
  // Longest wait for the runtime to answer one request (load, one repetition), seconds. A runtime
  // that is hung or stopped is killed then and the cell fails at that stage.
  int request_timeout_s = 600;
};

struct CellSpec {
  std::string model_path;
  BenchmarkSpec benchmark;
  RuntimeSettings settings;
  HarnessPolicy policy;
  std::string label;                    // device label recorded in device.label
  bool allow_context_overflow = false;  // allow P + D above the model's training context
  // The readiness gate before every measured repetition (DESIGN.md 4.5); recorded in
  // harness.readiness with every wait.
  ReadinessPolicy readiness;
  // kl_divergence_<ctx> only: the higher-precision model the quantized one is compared with
  // (same tokenizer required).
  std::string reference_model_path;
  std::string driver_path;              // empty: DefaultDriverPath()
  std::string log_path;                 // runtime stderr log; empty: a temporary file
};

struct CellHooks {
  // Progress lines ("warm-up 1/1", "rep 3: 1234.5 tokens/s"), for a terminal.
  std::function<void(const std::string&)> progress;
  // SHA-256 of a model file (the CLI caches it in the store). Empty: hash the file.
  std::function<Result<std::string>(const std::string& path)> hash_file;
  // Called with the driver's pid once it runs (tests use it to inject crashes).
  std::function<void(int pid)> on_driver_started;
};

// Runs the cell. Returns an Error only for bad input found before anything ran (missing or
// invalid model file, shape above the training context, invalid settings): nothing to store.
// Once the runtime starts, every outcome is a record: status "ok", or "failed" with
// failure{stage, message} (a crashed or killed runtime included; the harness survives it).
Result<nlohmann::json> RunCell(const CellSpec& spec, const CellHooks& hooks = {});

// config_id of DESIGN.md 5: SHA-256 of the canonical JSON (sorted keys, no spaces) of
// {model.sha256, model.quant, runtime.name, runtime.version, runtime.commit, runtime.settings,
// device.id, benchmark.id, benchmark.methodology} taken from `record`.
std::string ConfigId(const nlohmann::json& record);

// The config_id RunCell's record will carry, known before anything runs: resolves the cell as
// RunCell's first step does (model header, SHA-256 through hooks.hash_file, default settings,
// device fingerprint). Suites use it to skip cells already stored ok. Errors: the bad input
// RunCell would report before running.
Result<std::string> PlannedConfigId(const CellSpec& spec, const CellHooks& hooks = {});

}  // namespace pipette
