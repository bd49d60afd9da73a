// The groups of `pipette compare --a FILTER --b FILTER` (DESIGN.md 6): which results each side
// holds, and how the two sides are paired.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/analysis.h"
#include "pipette/status.h"
#include "pipette/store.h"

namespace pipette::analysis {

// "key=value[,key=value...]": every pair must match (ok results only). Keys and what they match,
// as `pipette results list` filters: quant (model.quant, case-insensitive), model (model.sha256
// prefix, case-insensitive, or part of model.file_name), benchmark (benchmark.id), runtime
// (runtime.name), device (a device.id prefix, the device's name as recorded in device.name, or its
// URI, device.uri: ssh://pi@board), label (device.label, the run's tag), and the runtime.settings
// entries threads, cpus, n_batch, n_ubatch, n_ctx, flash_attn, mmap, type_k, type_v,
// n_gpu_layers (the recorded value as text, e.g. threads=2, mmap=false, cpus=0).
struct GroupFilter {
  std::map<std::string, std::string> terms;
  std::string text;  // as given, for messages
};

// Errors name the bad part: an empty filter, a term without '=', an unknown key (listing the known
// ones), a key given twice, an empty value, threads that is not a positive integer.
Result<GroupFilter> ParseGroupFilter(std::string_view text);

// True when `record` is ok and matches every term.
bool Matches(const GroupFilter& filter, const nlohmann::json& record);

// The same selection as the store's filter (status ok), so the store narrows it, within `base`
// (the filters common to both groups): a term replaces base's field of its key, a setting term
// is added to base's settings.
ResultFilter ToResultFilter(const GroupFilter& filter, const ResultFilter& base = {});

// The two sides paired by benchmark id: on each side, the ok results of each benchmark id pooled
// into one estimate (PoolResults, those sharing the newest one's config_id), or with
// Repeats::kNewest the newest alone.
struct GroupPairs {
  struct Pair {
    std::string benchmark_id;
    nlohmann::json a;
    nlohmann::json b;
  };
  std::vector<Pair> pairs;          // ordered by benchmark id
  std::vector<std::string> only_a;  // benchmark ids measured in A only, ordered
  std::vector<std::string> only_b;  // and in B only
};
GroupPairs PairByBenchmark(const std::vector<nlohmann::json>& a,
                           const std::vector<nlohmann::json>& b,
                           Repeats repeats = Repeats::kPool);

}  // namespace pipette::analysis
