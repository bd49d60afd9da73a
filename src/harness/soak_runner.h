// soak_<P>_<D>_<minutes>: stability over time (issue 3, DESIGN.md 4.1).
#pragma once

#include <nlohmann/json.hpp>

#include "pipette/cell.h"

namespace pipette {

// Loads the model once, warms up, then repeats the end-to-end request of P prompt tokens and D
// generated tokens until `minutes` have passed, reading the runtime's peak memory after each
// request (outside the timed region). Metrics: end_to_end_latency, ttft, decode_throughput over
// all requests, plus `soak` (pipette/soak.h: first vs last tenth, slope, memory growth, flags);
// a flagged drift or growth is also a warning. `record` comes from ResolveCell.
nlohmann::json RunSoak(const CellSpec& spec, const CellHooks& hooks, nlohmann::json record);

}  // namespace pipette
