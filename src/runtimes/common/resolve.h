// Settings resolution shared by the runtimes (pipette/runtime.h, Runtime::ResolveSettings).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/runtime.h"
#include "pipette/status.h"

namespace pipette {

// `given` checked against `defs` (CheckSettings), then every definition's value: the given one,
// else its default; a null default becomes `resolve_null(def)`; a setting recorded only when set
// is left out unless given; CPU lists become canonical ("0,1,2,3" -> "0-3") after checking that
// the CPUs are available here. Errors name the setting.
Result<nlohmann::json> ResolveByDefinitions(
    const std::string& runtime, const std::vector<SettingDef>& defs, const nlohmann::json& given,
    const std::function<nlohmann::json(const SettingDef&)>& resolve_null);

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
