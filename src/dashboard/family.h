// Bounded reads for the chart pages: the benchmark ids of a family (all prefill_throughput_<P>,
// all kl_divergence_<ctx>, ...) and the newest rows of those benchmarks, never the whole store.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dashboard/params.h"
#include "pipette/fleet_store.h"

namespace pipette::dashboard {

// Rows read to find benchmark ids, and the most rows a chart page reads.
inline constexpr int kProbeRows = 500;
inline constexpr int kMaxChartRows = 1000;

// The ids `in_family` accepts among: `seeds` (e.g. the built-in catalog's), and the benchmarks of
// the newest kProbeRows rows matching `filters` (benchmark filter left out). When the filters
// name benchmarks, only those of them in the family. Sorted, unique. `probed` (optional) keeps
// the probe's benchmark ids for another family of the same page and filters: when it holds some,
// they are used instead of reading the rows again.
Result<std::vector<std::string>> FamilyIds(FleetStore& store, const Filters& filters,
                                           const std::function<bool(const std::string&)>& in_family,
                                           const std::vector<std::string>& seeds,
                                           std::vector<std::string>* probed = nullptr);

// The newest rows (at most `max_rows`, newest first) of `benchmark_ids` matching the other
// filters; `total` gets how many match in all.
Result<std::vector<FleetResultRow>> FamilyRows(FleetStore& store, const Filters& filters,
                                               const std::vector<std::string>& benchmark_ids,
                                               int max_rows, int64_t* total);

// The built-in catalog's ids whose type is `type` ("prefill", "decode", "eval", ...).
std::vector<std::string> CatalogIds(const std::string& type);

}  // namespace pipette::dashboard
