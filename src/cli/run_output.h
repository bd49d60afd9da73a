// Human-readable output of a result record: the short table `pipette run` prints.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

namespace pipette::cli {

// Writes a header line (benchmark, model, quant, runtime, threads), one line per metric (median,
// 95% CI, cv, n, unit) and the failure if any. Values are formatted for people (bytes as MiB).
void PrintResultTable(const nlohmann::json& record, std::ostream& out);

}  // namespace pipette::cli
