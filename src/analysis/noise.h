// What a result's noise and speed say to do next (issue 7): whether a `pipette.result/1` record
// is noisy, what to try against the noise, whether its repetitions form two clusters, and whether
// its decode is bound by per-token overhead rather than by memory bandwidth.
//
// Pure functions of one record (DESIGN.md 5), tolerant of absent or mistyped fields like
// record_fields.h: a field that is not there gives no note rather than an error. Advice names the
// settings of a suite file and of the record (`max_reps`, `cpus`, `cooldown_s`,
// `max_busy_fraction`), never the flags of one command; callers print them as they are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette::analysis {

// True for an ok result whose headline interval stayed wider than its target
// (harness.ci_reached is false) when there is something to do about it: the flag is for what a
// user can act on. Never noisy: a soak (it runs for its time, not to a target, and always records
// ci_reached false), a kl_divergence result (deterministic: a rerun gives the same numbers, and
// its interval, over the text's positions, is compared as it is), an eval whose interval no
// option narrows (every question of its data set asked, and either 10 repeats or temperature 0,
// where every attempt is the same greedy text), a failed result, and a record without
// harness.ci_reached.
bool IsNoisy(const nlohmann::json& record);

// When the headline metric's per-repetition values (samples[].<headline metric>) form two
// clusters (FindTwoClusters in pipette/stats.h), e.g. "two clusters: about 360 and 470 tokens/s
// (6 and 4 repetitions)"; centers have 3 significant digits, bytes are in binary units. Whether
// or not the record is noisy. nullopt for fewer than 8 values or one cluster.
std::optional<std::string> TwoClustersNote(const nlohmann::json& record);

// Short remedies for a noisy record (IsNoisy), most useful first, each a noun phrase that reads
// after "try" or as a list item; empty when it is not noisy. Each names what the record's runtime
// takes. For measured benchmarks, each when it applies:
//   "more repetitions (max_reps 40; this run stopped at its max_reps 20)"  when reps hit max_reps;
//   pinning (first when the repetitions form two clusters: usually two speeds of CPU):
//     llamacpp, llamacpp-stock without cpus: "pinning the runtime to fixed CPUs (cpus, e.g. \"0\"
//       with threads 1)", or "(cpus, e.g. \"0-3\" for its threads 4)" for more threads;
//     openai with a server pipette started (runtime.settings.server) that no taskset or numactl
//       pins: "pinning the server to fixed CPUs in its command line (server = [\"taskset\",
//       \"-c\", \"0\", ...], with -t 1 for llama-server)";
//     openai at a URL: "pinning the server at URL to fixed CPUs where it is started, e.g.
//       taskset -c 0 llama-server ... -t 1 (pipette only connects to it)";
//   "a cool-down between cells (cooldown_s, e.g. 30)"                       when cooldown_s is 0;
//   "stopping other processes: they kept up to 45% of the CPUs busy during the readiness checks
//    (max_busy_fraction 0.30; a lower one waits for them)"  when an observation in
//    harness.readiness (passing or held, harness/readiness.h) saw at least 5% busy (when the load
//    criterion was waived it says so instead of naming max_busy_fraction);
//   "letting the CPU cool: it reached 82 C during the readiness checks (max_cpu_celsius 70)"
//    when an observation was above the threshold.
// For an imported result (imported.tool, e.g. llama-bench): "rerunning llama-bench with more
// repetitions and pinned to fixed CPUs, then importing it again (taskset -c 0 llama-bench ... -r
// 10 -t 1; this run had 5)" and "measuring it with pipette's llamacpp-stock runtime ...": the
// settings of a suite cannot change a run that another tool made.
// For an eval (noisy when its accuracy's 95% interval is wider than eval.accuracy_ci_target_pp):
// "more samples (limit about 420; this run had 40): ..." while the data set has more questions,
// and "more repeats (repeats 10): ..." below 10 repeats at a temperature above 0.
std::vector<std::string> NoiseAdvice(const nlohmann::json& record);

// Advice shared by a set of noisy records, said once (issue 27: the same remedies repeated on
// every row fill a screen). `common` holds the NoiseAdvice items every record of `records` has,
// in the first record's order, then what the readiness gate saw during two or more of them
// (other processes' load, the CPU's heat), said once with the largest value and, when not all
// saw it, how many did: "stopping other processes: they kept up to 12% of the CPUs busy during
// the readiness checks of 8 of them (max_busy_fraction 0.30; ...)"; `own[i]` the rest of record
// i's items and its TwoClustersNote (first, in parentheses), empty when it has nothing of its
// own. Records that are not noisy have no advice: callers pass the noisy ones.
struct GroupedAdvice {
  std::vector<std::string> common;
  std::vector<std::vector<std::string>> own;  // one entry per record, in order
};
GroupedAdvice GroupNoiseAdvice(const std::vector<nlohmann::json>& records);

// Advice items as one phrase: "a; b; c" ("" for none).
std::string JoinAdvice(const std::vector<std::string>& items);

// The noise floor of the devices the records ran on (device.noise_floor, platform/noise_floor.h),
// one sentence per device that has one, in the order first seen: "this machine's timing varies
// by about 2.4% run to run (about 1.1% pinned to one CPU with the runtime's cpus setting);
// differences smaller than that cannot be resolved here". The spread named first is the one
// that applies to the records: pinned where every record of that device set cpus, unpinned where
// none did, the larger where both; the other is added when it is lower by a fifth or more (what
// pinning would gain) or when both apply. Where some records are decode or end-to-end and the
// floor's memory mode varied more than a quarter above that spread, it follows: "(6.0% for
// memory-bound work such as decode)", and it is the spread the interval below is computed from. "this machine's" for `local_device_id`, else "device
// NAME's" (device.name, else the id's first 8 characters). When that spread is too large for the
// records' target, it says why they cannot reach it: ", and the 95% CI of a median of 10
// repetitions is about +-4.8% here, wider than the +-2% target: about 58 repetitions would reach
// it" (1.96 x 1.2533 x spread / sqrt(max_reps), the normal approximation of a median's interval;
// the most max_reps and the tightest ci_target of its timed results; evals and soaks aside).
// Records without a noise floor are skipped.
std::vector<std::string> NoiseFloorNotes(const std::vector<nlohmann::json>& records,
                                         const std::string& local_device_id);

// When decode runs below 10% of the memory-bandwidth limit (metrics.decode_roofline_efficiency
// median < 0.10), e.g. "overhead-bound: decode runs at 1.2% of the memory-bandwidth limit; of
// 0.617 ms per token about 0.61 ms is fixed per-token cost, so a smaller quantization will not
// make it faster". Per-token time is 1 / decode_throughput median; the weights' share is
// model.tensor_bytes (else model.size_bytes) / device.memory_bandwidth_bytes_per_s, or, without
// them, efficiency x per-token time (the same by the definition of the efficiency, DESIGN.md
// 4.3); the fixed cost is the difference. nullopt without both metrics or at >= 10%.
std::optional<std::string> OverheadBoundNote(const nlohmann::json& record);

}  // namespace pipette::analysis
