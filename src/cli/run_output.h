// Human-readable output of a result record: the short table `pipette run` prints.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

namespace pipette::cli {

// Writes a header line (benchmark, model, quant, runtime, threads), one line per metric (median,
// 95% CI, cv, n, unit; "n < 3: no interval" instead of a CI from one or two values) and the
// failure if any. Values are formatted for people with at least three significant digits
// (bytes as MiB, KL as 0.000779 nats). Then, when they apply: for a memory benchmark the peak
// with the anonymous and file-backed parts of the resident set at it, the roofline line and the
// overhead-bound note, what held a readiness wait, two clusters among the repetitions, and the
// advice for a noisy result (analysis/noise.h).
void PrintResultTable(const nlohmann::json& record, std::ostream& out);

}  // namespace pipette::cli
