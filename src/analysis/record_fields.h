// Reading the fields of a `pipette.result/1` record (DESIGN.md 5) that the analysis needs,
// tolerating absent or mistyped fields (an analysis reads records written by other versions).
// Plain fields and metrics are read with pipette/record.h; these derive from them.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace pipette::analysis {

// The benchmark's type name ("prefill", "decode", "e2e", "memory", "kl_divergence", ...):
// benchmark.type, else what benchmark.id parses to; "" when neither says.
std::string BenchmarkTypeOf(const nlohmann::json& record);

// P and D of the benchmark (benchmark.prefill_tokens / decode_tokens, else from the id); 0 when
// unknown or not applicable.
int PrefillTokensOf(const nlohmann::json& record);
int DecodeTokensOf(const nlohmann::json& record);

// The context a cell of this benchmark gets when --ctx-size is not given (the harness's default):
// P + D; P + 1 for memory; P (ctx) for prefill and kl_divergence; for an eval the model's
// training context (model.n_ctx_train; 4096 when unknown), so that an eval and the speed results
// of one configuration group together. 0 when unknown.
int ShapeContextOf(const nlohmann::json& record);

// The headline metric of the record's benchmark type (HeadlineMetric), "" for none.
std::string HeadlineMetricOf(const nlohmann::json& record);

// How many ok results an estimate pools (PoolResults: pooled.results); 1 for a plain result.
size_t PooledCountOf(const nlohmann::json& record);

// runtime.settings without the fields that follow from the benchmark's shape rather than from a
// choice: n_ctx when it equals ShapeContextOf (the default). An object (empty when absent).
nlohmann::json ConfigurationSettings(const nlohmann::json& record);

// The peak host memory with the parts of the resident set at it, for people:
// "peak 812.00 MiB (anonymous 40.00 MiB, file-backed 770.00 MiB; the model file 760.00 MiB)",
// shared memory named only when there was some. From the medians of max_host_usage and
// rss_*_at_peak (memory benchmarks), else from logs.peak_host_bytes_during_cell and
// logs.rss_*_bytes_at_peak_during_cell ("peak during the cell ..."); nullopt when the record has
// no split.
std::optional<std::string> ResidentSplitText(const nlohmann::json& record);

// Bytes in binary units for messages: "512 B", "12.1 MiB", "1.50 GiB" (3 significant digits).
std::string FormatBytes(double bytes);

// A number with up to `precision` significant digits, without trailing zeros ("11", "0.8",
// "97.5").
std::string FormatNumber(double value, int precision = 4);

}  // namespace pipette::analysis
