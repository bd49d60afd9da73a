// Hand-made result records put straight into a store, for CLI tests that read results without
// measuring any (milliseconds instead of real cells).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pipette::testing_models {

// A valid ok record of `benchmark` on the model file `model_file` (quantization `quant`) with
// the given metric medians (three samples each, around the median), started `seconds` after
// 2026-11-29T10:00:00Z.
nlohmann::json StoredRecord(const std::string& model_file, const std::string& quant,
                            const std::string& benchmark, const nlohmann::json& medians,
                            int seconds);

// Creates the store at `path` (if needed) and puts `records` into it; fails the test on an error.
void PutRecords(const std::string& path, const std::vector<nlohmann::json>& records);

}  // namespace pipette::testing_models
