// Internal to pipette_benchmarks: the one-line description of a definition that has none.
#pragma once

#include <string>

#include "pipette/benchmark.h"

namespace pipette {

// E.g. "Prefill 512 prompt tokens from an empty KV cache". REQUIRES: spec is valid.
std::string DefaultDescription(const BenchmarkSpec& spec);

}  // namespace pipette
