// The `llamacpp` runtime: pipette-llamacpp-driver, a process linked to the pinned llama.cpp that
// times every unit of work inside itself (DESIGN.md 4.4) and reports per-token timings.
#pragma once

#include <memory>
#include <string>

#include "pipette/runtime.h"
#include "pipette/status.h"

namespace pipette {

// The settings the runtime takes (Runtime::Settings()).
std::vector<SettingDef> LlamaCppSettingDefs();

// `driver_path` empty: DefaultDriverPath(). Errors: the driver is missing or not executable.
Result<std::shared_ptr<Runtime>> MakeLlamaCppRuntime(const std::string& driver_path);

}  // namespace pipette
