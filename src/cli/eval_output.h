// How an eval result (benchmark type eval) reads on a terminal: its data set, subset and sampling
// in one paragraph, and its completions with their verdicts.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

namespace pipette::cli {

// "MATH-500 (fingerprint 03d8a416..., the published one): 20 samples x 2 attempts = 40, seed 0,
// temperature 0.6, max 200 tokens, ..." and the accuracy, stop reasons and unparsed count.
// Nothing for a record without an `eval` block.
void PrintEvalSummary(const nlohmann::json& record, std::ostream& out);

// One row per attempt: key, stop, output tokens, verdict, method, extracted answer, and the
// completion's first characters (line breaks shown as "\n").
void PrintCompletions(const nlohmann::json& record, std::ostream& out);

}  // namespace pipette::cli
