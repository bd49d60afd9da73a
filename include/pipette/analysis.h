// From stored results to decisions (DESIGN.md 6): configurations, derived views (context-scaling
// retention, speed ratios, memory vs file size) and selection under hard limits with a Pareto
// front. Everything here is a pure function of `pipette.result/1` records (DESIGN.md 5): no I/O,
// no clock, deterministic output order. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette {

// What a team ships: model file + quantization + runtime (name, version, commit) + settings +
// device. config_id (DESIGN.md 5) is this plus the benchmark; the key below leaves the benchmark
// out, so that one configuration gathers all its benchmarks.
// SHA-256 (lowercase hex) of the canonical JSON of {model.sha256, model.quant, runtime.name,
// runtime.version, runtime.commit, runtime.settings, device.id}, where runtime.settings leaves
// out n_ctx when it is the benchmark's own shape (the harness's default without --ctx-size: P + D,
// P + 1 for memory, P for prefill and kl_divergence), since that follows from the benchmark.
std::string ConfigurationKey(const nlohmann::json& record);

// One configuration and its ok results.
struct Configuration {
  std::string key;   // ConfigurationKey
  // Short display name, unique within the set GroupConfigurations returned: the fields that
  // differ between the configurations of the set, e.g. "Q8_0 t=2" or "stories260K-F32.gguf";
  // the model file name and quant when nothing differs.
  std::string name;
  std::string model_file;    // model.file_name
  std::string model_sha256;  // model.sha256
  std::string quant;         // model.quant, llama.cpp spelling ("Q4_K_M")
  uint64_t model_size_bytes = 0;  // model.size_bytes
  bool synthetic = false;         // a synthetic model (its speed stands for its shape only)
  std::string runtime;            // runtime.name
  std::string runtime_version;    // runtime.version
  std::string device_id;          // device.id
  nlohmann::json settings;        // runtime.settings as recorded, less a shape-default n_ctx
  // The newest ok record of each benchmark id, ordered by benchmark id.
  std::vector<nlohmann::json> results;

  // The newest ok record of `benchmark_id`, or nullptr.
  const nlohmann::json* Find(const std::string& benchmark_id) const;
};

// Groups `records` (any order, any mix) into configurations; records whose status is not "ok"
// are ignored. Ordered by model file name, then quant, then settings (canonical JSON), then key.
std::vector<Configuration> GroupConfigurations(const std::vector<nlohmann::json>& records);

// One point of a throughput-vs-context curve: the median and 95% CI of `metric` for a benchmark
// with this prompt length (P) and decode length (D; 0 for prefill).
struct ScalingPoint {
  std::string benchmark_id;
  int prefill_tokens = 0;
  int decode_tokens = 0;
  double median = 0;                 // tokens/s
  std::optional<double> ci95_low;    // tokens/s
  std::optional<double> ci95_high;   // tokens/s
  // Context-scaling retention (DESIGN.md 6): median / median at the smallest P of the same curve
  // (same D); 1 at the smallest P, NaN when that median is 0. Decode only; 1 for prefill points.
  double retention = 1;
};

// Prefill throughput vs P (prefill_throughput_<P> results), sorted by P.
std::vector<ScalingPoint> PrefillScaling(const Configuration& config);

// Decode throughput vs depth P for one D (decode_throughput_<P>_<D> results), one curve per D,
// curves sorted by D and points by P, each with its retention.
std::vector<std::vector<ScalingPoint>> DecodeScaling(const Configuration& config);

// Speed ratio of `other` to `base` on a benchmark both measured: other median / base median of the
// benchmark's headline metric (HeadlineMetric). For throughputs > 1 means `other` is faster; for
// latencies and memory < 1 means `other` is faster / smaller.
struct SpeedRatio {
  std::string benchmark_id;
  std::string metric;  // headline metric, e.g. "decode_throughput"
  std::string unit;
  double base = 0, other = 0, ratio = 0;
};
// One entry per benchmark id both configurations have with a headline median, ordered by benchmark
// id; ratio is NaN when base is 0.
std::vector<SpeedRatio> SpeedRatios(const Configuration& base, const Configuration& other);

// Peak memory against the size of the weights file.
struct MemoryVsSize {
  uint64_t file_bytes = 0;   // model.size_bytes
  double peak_bytes = 0;     // largest max_host_usage median over the configuration's results
  double ratio = 0;          // peak_bytes / file_bytes; NaN when file_bytes is 0
  double overhead_bytes = 0; // peak_bytes - file_bytes (KV cache, compute buffers, runtime)
  std::string benchmark_id;  // the result that gave peak_bytes
};
// nullopt when the configuration has no max_host_usage metric.
std::optional<MemoryVsSize> MemoryAgainstSize(const Configuration& config);

// Hard limits of `pipette select`; an absent limit is not applied. Each is checked against every
// result of the configuration that has the metric (the worst case over shapes), unless
// `benchmarks` narrows the results looked at. A configuration with no result that has the metric
// of a given limit cannot be checked and is excluded, saying so. A value equal to its limit passes.
struct Limits {
  std::optional<double> max_ttft_ms;             // ttft median
  std::optional<double> max_latency_ms;          // end_to_end_latency median
  std::optional<double> max_memory_bytes;        // max_host_usage median
  std::optional<double> min_decode_throughput;   // decode_throughput median, tokens/s
  // Quality drop in percentage points: the best quality score in the set minus this
  // configuration's. Quality score: top1_agreement x 100 of its kl_divergence_<ctx> results
  // (100 = agrees with the reference on every token); configurations without a quality metric
  // cannot be checked and are excluded with that reason when this limit is given.
  std::optional<double> max_quality_drop;
  std::vector<std::string> benchmarks;  // empty: all
};

// What Select decided about one configuration.
struct Candidate {
  const Configuration* config = nullptr;  // into the vector passed to Select
  // Objectives (DESIGN.md 6: speed, memory, quality); absent when not measured.
  std::optional<double> decode_throughput;  // tokens/s, geometric mean over the benchmarks in
                                            // common (see SelectResult::speed_benchmarks)
  std::optional<double> peak_memory_bytes;  // largest max_host_usage median
  std::optional<double> quality;            // quality score (see Limits::max_quality_drop);
                                            // 100 for the reference model of a kl_divergence
                                            // result in the set (it agrees with itself)
  // One line per violated limit, e.g. "max_host_usage 12.10 MiB (max_memory_usage_256) > limit
  // 11.00 MiB", "decode_throughput 80.50 tokens/s (decode_throughput_256_100) < limit 100
  // tokens/s", "quality drop 2.50 pp (top1 agreement 97.50% vs best 100.00%) > limit 1 pp", or
  // "ttft not measured: cannot check limit 30.00 ms"; empty when it passed every limit.
  std::vector<std::string> excluded_because;
  bool on_front = false;  // passed, and no other passing candidate dominates it
  // Names of passing candidates that dominate this one (better or equal in every objective both
  // have, strictly better in one).
  std::vector<std::string> dominated_by;
};

struct SelectResult {
  // Passing candidates first: Pareto front ordered by decode throughput (highest first), then the
  // dominated ones likewise; then the excluded ones in GroupConfigurations order.
  std::vector<Candidate> candidates;
  // The decode benchmark ids present in every passing candidate (every candidate when none
  // passed) that has a decode result, over which speed is compared. Sorted.
  std::vector<std::string> speed_benchmarks;
  // Names of those candidates without any decode result (no speed: the speed objective is
  // skipped when they are compared), in GroupConfigurations order.
  std::vector<std::string> without_decode;
};

// Applies `limits`, then ranks the passing configurations on the Pareto front of (decode
// throughput: higher is better, peak memory: lower, quality: higher). An objective that no
// passing candidate has is left out of the dominance test.
SelectResult Select(const std::vector<Configuration>& configs, const Limits& limits);

// Indices of the non-dominated points. `points[i][k]` is objective k of point i, oriented so that
// larger is better; NaN means unmeasured. A point dominates another when it has every objective the
// other has, is at least as good in each and better in one (objectives the other lacks are
// ignored): a point without a measurement never dominates one that has it. Ties (equal points)
// are all on the front. Result sorted ascending.
std::vector<size_t> ParetoFront(const std::vector<std::vector<double>>& points);

}  // namespace pipette
