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

#include "pipette/status.h"

namespace pipette {

// What a team ships: model file + quantization + runtime (name, version, commit) + settings +
// device. config_id (DESIGN.md 5) is this plus the benchmark; the key below leaves the benchmark
// out, so that one configuration gathers all its benchmarks.
// SHA-256 (lowercase hex) of the canonical JSON of {model.sha256, model.quant, runtime.name,
// runtime.version, runtime.commit, runtime.settings, device.id}, where runtime.settings leaves
// out n_ctx when it is the benchmark's own shape (the harness's default without --ctx-size: P + D,
// P + 1 for memory, P for prefill and kl_divergence, the model's training context for an eval),
// since that follows from the benchmark: an eval result and the speed results of one
// configuration share its key, although their config_ids differ.
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
  // quant as it is shown (QuantLabel in pipette/gguf.h): "Q4_K_M (no q4_K tensors: q5_0 x29,
  // q8_0 x3)" when the file's tensors do not carry it; the same as quant otherwise.
  std::string quant_label;
  uint64_t model_size_bytes = 0;  // model.size_bytes
  bool synthetic = false;         // a synthetic model (its speed stands for its shape only)
  std::string runtime;            // runtime.name
  std::string runtime_version;    // runtime.version
  std::string device_id;          // device.id
  nlohmann::json settings;        // runtime.settings as recorded, less a shape-default n_ctx
  // One record per benchmark id, ordered by benchmark id: the ok results of that benchmark pooled
  // (PoolResults; a lone result as it is), or the newest one (Repeats::kNewest).
  std::vector<nlohmann::json> results;

  // The record of `benchmark_id`, or nullptr.
  const nlohmann::json* Find(const std::string& benchmark_id) const;
};

// What the reading commands make of several ok results of one configuration and benchmark.
enum class Repeats {
  kPool,    // one estimate over all their repetitions (the default: a noisy rerun does not decide)
  kNewest,  // the newest result alone (`--newest`)
};

// Groups `records` (any order, any mix) into configurations; records whose status is not "ok"
// are ignored. Ordered by model file name, then quant, then settings (canonical JSON), then key.
std::vector<Configuration> GroupConfigurations(const std::vector<nlohmann::json>& records,
                                               Repeats repeats = Repeats::kPool);

// One estimate from several ok results of one config_id (`results` newest first, non-empty):
// the newest record with, for prefill, decode, e2e and memory benchmarks, every metric
// summarized again (pipette/stats.h Summarize: median, mean, ...) over the repetitions of all of
// them, its 95% CI from the two-stage bootstrap (ClusterBootstrapMedianCi: results, then their
// repetitions, so results that disagree widen it; a per-token series such as inter_token_latency
// takes the order-statistic interval of its median, MedianCi::kOrderStatistic) (samples[] concatenated, reps renumbered, each sample naming its result_id; a metric
// measured once per cell, such as load_time, contributes its value; a metric some result lacks
// keeps the newest result's estimate), harness.reps their total, harness.ci_reached judged again
// on the pooled headline interval against harness.ci_target (n >= 3), and
// "pooled": {results, result_ids[], reps, noisy_results}. A single result, or another benchmark
// type (soak: a time series; kl_divergence: deterministic), gives the newest record unchanged.
// Results without per-repetition values of the headline metric (a mean-only import, such as
// llama-bench's sql output) are left out of the pool when another result has them: the estimate
// is the others' (a lone one keeps its own numbers), and "pooled" says so with
// left_out[{result_id, reason}] (results then counts only those pooled, possibly 1); when none
// has them, the newest record unchanged.
nlohmann::json PoolResults(const std::vector<const nlohmann::json*>& results);

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

// Hard limits of `pipette select` and `pipette report`; an absent limit is not applied. Each is
// checked against every result of the configuration that has the metric (the worst case over
// shapes), unless `benchmarks` narrows the results looked at. A configuration with no result that
// has the metric of a given limit cannot be checked and fails, saying so.
struct Limits {
  std::optional<double> max_ttft_ms;             // ttft, ms
  std::optional<double> max_latency_ms;          // end_to_end_latency, ms
  std::optional<double> max_memory_bytes;        // max_host_usage, bytes
  std::optional<double> min_decode_throughput;   // decode_throughput, tokens/s
  // Power and energy, where the device reports them (RAPL, or a battery while discharging: the
  // average_power and energy_per_token metrics of timed benchmarks, DESIGN.md 8a). Judged on the
  // worst result of a configuration that has the metric; a configuration with none cannot be
  // checked and fails with that reason: absent is never read as 0 W.
  std::optional<double> max_power_w;              // average_power, W
  std::optional<double> max_energy_per_token_mj;  // energy_per_token, mJ/token
  // Quality drop in percentage points: the best quality score in the set minus this
  // configuration's. Quality score: top1_agreement x 100 of its kl_divergence_<ctx> results
  // (100 = agrees with the reference on every token); configurations without a quality metric
  // cannot be checked and fail with that reason when this limit is given.
  std::optional<double> max_quality_drop;
  // Eval accuracy limits (`--min-accuracy EVAL=X`, `--max-accuracy-drop EVAL=PP`), one per EVAL,
  // in the order given. `eval` names the data set ("math_500", "gpqa_diamond": every eval result
  // whose eval.dataset is that) or one benchmark id ("eval_math_500_2026.06.1").
  struct Accuracy {
    std::string eval;
    double value = 0;  // min_accuracy: a fraction in [0, 1]; max_accuracy_drop: percentage points
  };
  std::vector<Accuracy> min_accuracy;
  // The drop is the reference's accuracy minus this configuration's, in percentage points, on
  // the same eval benchmark. Reference: the configuration named by `accuracy_reference` when it
  // is given (ReferenceNamed), else the most accurate configuration on that benchmark among the
  // configurations of the same model (ModelFamily: the model file name without its
  // quantization, so the Q4_0 and F32 files of one model are one family; a kl_divergence
  // reference link is not used: an eval has none). Its interval is the paired difference over
  // the attempts both ran (PairAccuracy) when the two share attempt keys, else the
  // configuration's own accuracy interval shifted by the reference's accuracy. The reference
  // itself drops exactly 0.
  std::vector<Accuracy> max_accuracy_drop;
  std::string accuracy_reference;  // a configuration's name, key prefix or model file name
  std::vector<std::string> benchmarks;  // empty: all

  bool any() const {
    return max_ttft_ms || max_latency_ms || max_memory_bytes || min_decode_throughput ||
           max_power_w || max_energy_per_token_mj || max_quality_drop || !min_accuracy.empty() || !max_accuracy_drop.empty();
  }
};

// A limit judged with the uncertainty of the measurement: the 95% confidence interval of the
// median (DESIGN.md 4.2), not the median alone.
enum class Verdict {
  kPass,        // the whole interval meets the limit
  kBorderline,  // the interval crosses the limit: it may or may not hold (never a silent pass)
  kFail,        // the whole interval breaks the limit, or the metric was not measured
};
const char* VerdictName(Verdict v);  // "pass", "borderline", "fail"

// One limit against one configuration: the worst of its results with the metric (fail before
// borderline before pass, then the smallest margin).
struct LimitCheck {
  std::string limit;      // "max_ttft", "max_latency", "max_memory", "min_decode_throughput",
                          // "max_power", "max_energy_per_token", "max_quality_drop",
                          // "min_accuracy", "max_accuracy_drop"
  std::string metric;     // "ttft", "end_to_end_latency", "max_host_usage", "decode_throughput",
                          // "average_power", "energy_per_token", "quality_drop", "accuracy",
                          // "accuracy_drop"
  std::string eval;       // accuracy limits: the EVAL as given; "" otherwise
  // Of value, interval and threshold: "ms", "bytes", "tokens/s", "W", "mJ/token", "pp" (drops),
  // "%" (accuracy).
  std::string unit;
  bool upper = true;      // the limit is a maximum (value <= threshold); false: a minimum
  double threshold = 0;   // the limit
  bool measured = false;  // false: no result has the metric (verdict kFail)
  std::string benchmark_id;  // the result judged
  double value = 0;          // its median
  double ci95_low = 0, ci95_high = 0;  // its 95% CI (= value when it has none)
  size_t n = 0;              // repetitions behind it
  size_t results = 1;        // results pooled into it (PoolResults)
  bool noisy = false;        // its CI stayed wider than the harness target
  Verdict verdict = Verdict::kFail;
  // Room to the limit relative to it, by the median: (threshold - value) / threshold for a
  // maximum, (value - threshold) / threshold for a minimum; < 0 breaks it. NaN for threshold 0.
  double margin = 0;
  // What the median must be multiplied by to meet the limit: threshold / value (2.7 = "needs
  // 2.7x the decode speed"; 0.96 = "needs 0.96x the peak memory"). Quality: the pp it misses by
  // (negative: the room it has).
  double factor = 0;
  // One line, e.g. "decode_throughput 377 tokens/s [371, 383] (decode_throughput_256_100) >=
  // 1000 tokens/s: fail, needs 2.65x the decode speed".
  std::string text;
};

// What Select decided about one configuration.
struct Candidate {
  const Configuration* config = nullptr;  // into the vector passed to Select
  // Objectives (DESIGN.md 6: speed, memory, quality); absent when not measured.
  std::optional<double> decode_throughput;  // tokens/s, geometric mean over the benchmarks in
                                            // common (see SelectResult::speed_benchmarks)
  std::optional<double> decode_ci95_low, decode_ci95_high;  // the same mean of the CI bounds
  std::optional<double> peak_memory_bytes;  // largest max_host_usage median
  std::optional<double> peak_memory_ci95_low, peak_memory_ci95_high;  // that result's 95% CI
  std::optional<double> quality;            // quality score (see Limits::max_quality_drop);
                                            // 100 for the reference model of a kl_divergence
                                            // result in the set (it agrees with itself)
  std::optional<double> quality_ci95_low, quality_ci95_high;
  // When SelectResult::quality_metric is "accuracy", quality is instead the eval accuracy (%) on
  // SelectResult::quality_benchmark with its question-clustered 95% CI; questions x repeats
  // attempts behind it.
  size_t accuracy_attempts = 0;
  bool noisy = false;  // a result it was judged or ranked on (limits, decode speed, peak memory,
                       // quality) is noisy
  size_t pooled_results = 1;  // most results pooled into one of its estimates
  Verdict verdict = Verdict::kPass;  // the worst of its checks; kPass when no limit is given
  std::vector<LimitCheck> checks;    // one per limit given, in Limits order
  // The text of the failing checks, e.g. "max_host_usage 12.10 MiB [12.0, 12.2]
  // (max_memory_usage_256) > limit 11.00 MiB: fail, needs 0.91x the peak memory" or "ttft not
  // measured: cannot check limit 30.0 ms"; empty when no limit failed.
  std::vector<std::string> excluded_because;
  // The text of the borderline checks; such a configuration is ranked, marked borderline.
  std::vector<std::string> borderline_because;
  bool on_front = false;  // not failed, and no other such candidate dominates it
  // Names of ranked candidates that dominate this one (better or equal in every objective both
  // have, strictly better in one).
  std::vector<std::string> dominated_by;
};

struct SelectResult {
  // Ranked candidates first: those that pass, then the borderline ones, each the Pareto front
  // ordered by decode throughput (highest first), then the dominated ones likewise; then the
  // failed ones in GroupConfigurations order.
  std::vector<Candidate> candidates;
  // The decode benchmark ids present in every ranked candidate (every candidate when none
  // is ranked) that has a decode result, over which speed is compared. Sorted.
  std::vector<std::string> speed_benchmarks;
  // Names of those candidates without any decode result (no speed: the speed objective is
  // skipped when they are compared), in GroupConfigurations order.
  std::vector<std::string> without_decode;
  // Candidates with decode results that lack one of speed_benchmarks (typically one that failed
  // a limit and measured fewer shapes): a mean over fewer shapes is not comparable, so they get
  // no decode_throughput. name -> the speed benchmarks it lacks.
  std::vector<std::pair<std::string, std::vector<std::string>>> decode_not_compared;
  // True when every pair of ranked candidates with a decode speed has overlapping decode CIs:
  // their speed differences lie inside the noise (the ranking by speed is not meaningful).
  bool speed_within_noise = false;
  // The quality objective: "accuracy" (eval accuracy in %, when a configuration has an eval
  // result: the eval benchmark most configurations ran, among those the accuracy limits name
  // when any is given; ties by id), else "top1_agreement" (the kl_divergence quality score),
  // else "" (no quality measured).
  std::string quality_metric;
  std::string quality_benchmark;  // the eval benchmark id of "accuracy"; "" otherwise
};

// Judges `limits` (LimitCheck), then ranks the configurations that did not fail on the Pareto
// front of (decode throughput: higher is better, peak memory: lower, quality: higher), by
// medians. An objective that no ranked candidate has is left out of the dominance test.
SelectResult Select(const std::vector<Configuration>& configs, const Limits& limits);

// The model a configuration is a build of, for `--max-accuracy-drop`: model.file_name without
// its ".gguf" extension and without a trailing quantization ("-Q4_K_M", ".Q8_0", "_f16",
// "-F32": the configuration's quant, or any llama.cpp type name), compared case-insensitively.
// "stories260K-Q8_0.gguf" -> "stories260k".
std::string ModelFamily(const Configuration& config);

// The configuration `name` names among `configs`: its name exactly, else a unique key prefix,
// else the unique one whose model file name contains it. Error (one line naming --reference and
// listing the names) when none or several match.
Result<const Configuration*> ReferenceNamed(const std::vector<Configuration>& configs,
                                            const std::string& name);

// True when `record` is an eval result of `eval` (its eval.dataset or benchmark id).
bool IsEvalOf(const nlohmann::json& record, const std::string& eval);

// Two eval results on the same attempts: completions matched by their key ("<id>#<k>").
struct PairedAccuracy {
  size_t paired = 0;               // attempts (keys) in both
  int64_t both_correct = 0, both_wrong = 0;
  int64_t only_a = 0;              // A right, B wrong (McNemar's b)
  int64_t only_b = 0;              // A wrong, B right (McNemar's c)
  std::vector<std::string> only_in_a, only_in_b;  // keys left out (sorted)
  double accuracy_a = 0, accuracy_b = 0;  // fractions over the paired attempts; 0 when none
  double difference = 0;                  // accuracy_b - accuracy_a (fraction)
  // 95% percentile bootstrap of the difference resampling questions (a question's attempts
  // together; 10000 resamples, fixed seed); = difference when fewer than two questions.
  double ci95_low = 0, ci95_high = 0;
  double p_value = 1;  // McNemarExactP(only_a, only_b), two-sided; 1 when nothing is discordant
};
// nullopt when either record has no `completions` array. A completion without a key is keyed
// "<id>#<attempt>"; one without `correct` counts as wrong (a failed attempt).
std::optional<PairedAccuracy> PairAccuracy(const nlohmann::json& a, const nlohmann::json& b);

// Indices of the non-dominated points. `points[i][k]` is objective k of point i, oriented so that
// larger is better; NaN means unmeasured. A point dominates another when it has every objective the
// other has, is at least as good in each and better in one (objectives the other lacks are
// ignored): a point without a measurement never dominates one that has it. Ties (equal points)
// are all on the front. Result sorted ascending.
std::vector<size_t> ParetoFront(const std::vector<std::vector<double>>& points);

}  // namespace pipette
