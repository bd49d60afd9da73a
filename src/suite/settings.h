// Runtime settings by name, as suite files spell them (the keys of runtime.settings in a result
// record, DESIGN.md 5).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/cell.h"
#include "pipette/status.h"

namespace pipette {

// The setting names a suite may give: threads, n_gpu_layers, mmap, flash_attn, n_batch,
// n_ubatch, type_k, type_v, n_ctx, cpus.
const std::vector<std::string>& SettingNames();

// Sets `name` to `value` in `settings`. Errors (one line, without the key, which the caller
// names): an unknown setting (lists the known ones), a value of the wrong type ("expected an
// integer"), or out of range ("must be at least 1").
Status ApplySetting(RuntimeSettings& settings, const std::string& name,
                    const nlohmann::json& value);

}  // namespace pipette
