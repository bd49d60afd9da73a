// kl_divergence_<ctx>: quantization quality measured on the device (issue 3, DESIGN.md 4.1).
#pragma once

#include <nlohmann/json.hpp>

#include "pipette/cell.h"

namespace pipette {

// Evaluates the same ctx-token text (the built-in prompt, exactly ctx tokens) with the reference
// model and with the model, each in its own runtime process, and compares their next-token
// distributions position by position: metrics kl_divergence (nats, per position: mean, median,
// p99), top1_agreement (fraction of positions whose greedy tokens agree), perplexity and
// reference_perplexity (over the text's own next tokens). Deterministic: one repetition.
// `record` comes from ResolveCell; every failure is returned as a failed record.
nlohmann::json RunKlDivergence(const CellSpec& spec, const CellHooks& hooks, nlohmann::json record);

}  // namespace pipette
