// What the one cell loop (cell_loop.cc) runs: a workload says how to prepare its input, how one
// repetition goes, when to stop, and what its record adds. Every benchmark type is a workload of
// the same loop (warm-up, readiness gate, repetitions, validation, statistics, thermal series),
// on any runtime.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/cell.h"
#include "pipette/runtime.h"
#include "pipette/status.h"

namespace pipette {

// One repetition's typed measurements: metric name -> value (units per DESIGN.md 4.3), plus the
// per-token latencies (ms) pooled into inter_token_latency.
struct Rep {
  std::map<std::string, double> values;
  std::vector<double> inter_token_ms;
  nlohmann::json thermal_before, thermal_after;  // zones around the timed work (DESIGN.md 4.2)
  int tokens_in = 0;
  int tokens_out = 0;
  std::string started_at;
  nlohmann::json extra = nlohmann::json::object();  // workload-specific sample fields
  // The runtime may have died during this repetition (a failed eval attempt): the loop starts a
  // new session before the next one.
  bool restart_session = false;
};

// What a workload may ask of the loop.
struct WorkloadContext {
  const CellSpec& spec;
  // Starts another session of the cell's runtime on `model` with the cell's settings, its log at
  // `log_path` (kl_divergence's reference model).
  std::function<Result<std::unique_ptr<RuntimeSession>>(const std::string& model,
                                                        const std::string& log_path)>
      start_session;
  std::function<void(const std::string&)> progress;
};

class Workload {
 public:
  virtual ~Workload() = default;
  // A fresh runtime session for every repetition, with its memory sampled (memory benchmarks).
  virtual bool FreshSessionPerRep() const { return false; }
  // Whether the readiness gate runs before each measured repetition.
  virtual bool Gated() const { return true; }
  virtual int WarmupRuns(const HarnessPolicy& policy) const { return policy.warmup_runs; }
  // Work before the cell's session starts (kl_divergence: the reference model's evaluation).
  virtual Status BeforeStart(nlohmann::json& record) {
    (void)record;
    return Status::Ok();
  }
  // Untimed work of about `ms` right before a timed repetition (HarnessPolicy::spin_up_ms).
  virtual Status SpinUp(RuntimeSession& session, int ms) {
    (void)session, (void)ms;
    return Status::Ok();
  }
  // Builds the input with the session's tokenizer and records it in record.input.
  virtual Status Prepare(RuntimeSession& session, nlohmann::json& record) = 0;
  // One repetition (a warm-up too). Errors fail the cell with their stage.
  virtual Result<Rep> Once(RuntimeSession& session) = 0;
  // Whether to stop after `reps`; sets *ci_reached when the stop is the CI target's.
  virtual bool Done(const std::vector<Rep>& reps, const HarnessPolicy& policy,
                    bool* ci_reached) = 0;
  // Progress line after a repetition.
  virtual std::string RepLine(const std::vector<Rep>& reps) const = 0;
  // Adds to the ok record after the generic metrics (may replace metrics).
  virtual void Finish(const std::vector<Rep>& reps, nlohmann::json& record,
                      nlohmann::json& metrics) {
    (void)reps, (void)record, (void)metrics;
  }
};

// The workloads, by benchmark type.
std::unique_ptr<Workload> MakeTimedWorkload(const BenchmarkSpec& b, const RuntimeCapabilities& c);
std::unique_ptr<Workload> MakeSoakWorkload(const WorkloadContext& context);
std::unique_ptr<Workload> MakeKlWorkload(const WorkloadContext& context);
std::unique_ptr<Workload> MakeEvalWorkload(const WorkloadContext& context);

// Checks an eval cell's input before anything runs (bad input, one line): a data set pipette
// knows and can score, its file loads, options in range, a checkpoint folder.
Status CheckEvalCell(const CellSpec& spec);

// The adaptive stop (DESIGN.md 4.2 step 5) on `metric`: at least max(min_reps, 3) repetitions,
// then stop once the 95% CI of the median is within ci_target, or at max_reps.
bool AdaptiveDone(const std::vector<Rep>& reps, const std::string& metric,
                  const HarnessPolicy& policy, bool* ci_reached);

// "rep 4: decode_throughput median 1602.3 tokens/s, 95% CI +-1.2%".
std::string AdaptiveRepLine(const std::vector<Rep>& reps, const std::string& metric);

}  // namespace pipette
