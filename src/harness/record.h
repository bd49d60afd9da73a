// Building the pipette.result/1 record (DESIGN.md 5) around a cell's measurements.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "pipette/cell.h"
#include "pipette/status.h"

namespace pipette {

// The shape's context need in tokens: prompt plus generated tokens (P + 1 for memory, P for
// prefill and kl_divergence).
int ContextNeed(const BenchmarkSpec& b);

// Unit of a metric name (DESIGN.md 4.3): "tokens/s", "ms" or "bytes".
std::string MetricUnit(const std::string& metric);

// Step 1 of DESIGN.md 4.2: reads and verifies the model (GGUF header, SHA-256), checks the shape
// against the model's training context and the runtime's capabilities, resolves the runtime's
// settings, fingerprints the device, and returns the record's skeleton (status "running") with
// its config_id, which never changes afterwards. Errors: bad input, nothing was run.
Result<nlohmann::json> ResolveCell(const CellSpec& spec, const CellHooks& hooks);

// Turns `record` into a failed result (DESIGN.md 4.2 step 7): status "failed", failure{stage,
// message} (stage from `error`, else `default_stage`), no metrics, samples kept (empty if none),
// finished_at set.
void MarkFailed(nlohmann::json& record, const Error& error, const std::string& default_stage);

// The record's warning when `settings` (resolved: threads, cpus) put threads beyond the fastest
// cores of a big.LITTLE `device` (its `clusters`, slowest first); "" when they fit, or the device
// has one cluster or says nothing of its clusters.
std::string BigCoresWarning(const nlohmann::json& device, const nlohmann::json& settings);

// Appends `warning` to record.logs.warnings unless it is already there.
void AddWarning(nlohmann::json& record, const std::string& warning);

// Copies what the runtime said while loading (backends, effective settings, build facts) into
// record.runtime, and its warnings into record.logs.warnings, less the engine's harmless notes
// (record::IsEngineNote), which go to record.logs.notes. runtime.settings stays as resolved.
void RecordLoadFacts(const LoadFacts& facts, nlohmann::json& record);

}  // namespace pipette
