// Settings resolution shared by the runtimes (pipette/runtime.h, Runtime::ResolveSettings).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/runtime.h"
#include "pipette/status.h"

namespace pipette {

// Definitions several runtimes share, spelled once (llama.cpp's names and ranges).
SettingDef ThreadsSetting();
SettingDef CpusSetting();
SettingDef KvTypeSetting(const std::string& name);  // type_k, type_v
SettingDef FlashAttnSetting();
SettingDef NBatchSetting();
SettingDef NUbatchSetting();
SettingDef NGpuLayersSetting();
SettingDef MmapSetting();
SettingDef PollSetting();

// The n_ctx check every runtime with a context size makes: Error when `n_ctx` (non-zero) is below
// what the cell needs.
Status CheckContextSize(int64_t n_ctx, int need);

}  // namespace pipette
