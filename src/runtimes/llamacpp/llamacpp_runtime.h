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

class DeviceAccess;

// `driver_path` empty: DefaultDriverPath(). Errors: the driver is missing or not executable.
// `device` (null or this machine: the driver beside pipette) is where the driver runs: on another
// device it is the device build that DeviceAccess installed there; models are copied there once
// (by SHA-256) and memory is read there by the driver itself.
Result<std::shared_ptr<Runtime>> MakeLlamaCppRuntime(const std::string& driver_path,
                                                     std::shared_ptr<DeviceAccess> device = nullptr);

// The facts a load reply gives (effective settings, backends, build, warnings; load_ms left 0).
// Errors (stage "load"): a reply whose fields do not fit the protocol (docs/driver-protocol.md).
Result<LoadFacts> LoadFactsFromReply(const nlohmann::json& reply,
                                     const nlohmann::json& asked_settings);

}  // namespace pipette
