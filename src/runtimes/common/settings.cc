// Checking settings against their definitions (pipette/runtime.h).
#include <fmt/format.h>

#include "pipette/runtime.h"
#include "platform/cpu_affinity.h"

namespace pipette {

const SettingDef* FindSetting(const std::vector<SettingDef>& defs, const std::string& name) {
  for (const SettingDef& d : defs) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

Status CheckSetting(const SettingDef& def, const nlohmann::json& v) {
  const std::string& n = def.name;
  switch (def.kind) {
    case SettingKind::kInteger: {
      if (!v.is_number_integer()) return MakeError(n + ": expected an integer, not " + v.dump());
      const int64_t x = v.get<int64_t>();
      if (x < def.min || x > def.max) {
        return MakeError(fmt::format("{}: {} is out of range {}..{}", n, x, def.min, def.max));
      }
      return Status::Ok();
    }
    case SettingKind::kBoolean:
      if (!v.is_boolean()) return MakeError(n + ": expected true or false, not " + v.dump());
      return Status::Ok();
    case SettingKind::kChoice: {
      const std::string list = fmt::format("{}", fmt::join(def.choices, ", "));
      if (v.is_string()) {
        for (const auto& c : def.choices) {
          if (v.get<std::string>() == c) return Status::Ok();
        }
      }
      return MakeError(n + ": expected one of " + list + ", not " + v.dump());
    }
    case SettingKind::kCpuList: {
      if (!v.is_string()) return MakeError(n + ": expected a CPU list such as \"0-3\", not " + v.dump());
      if (auto cpus = ParseCpuList(v.get<std::string>()); !cpus) return cpus.error().Wrap(n);
      return Status::Ok();
    }
    case SettingKind::kText:
      if (!v.is_string() || v.get<std::string>().empty()) {
        return MakeError(n + ": expected a non-empty string, not " + v.dump());
      }
      return Status::Ok();
  }
  return Status::Ok();
}

Status CheckSettings(const std::string& runtime_name, const std::vector<SettingDef>& defs,
                     const nlohmann::json& given) {
  if (given.is_null()) return Status::Ok();
  if (!given.is_object()) return MakeError("settings must be a table of name = value");
  for (const auto& [name, value] : given.items()) {
    const SettingDef* def = FindSetting(defs, name);
    if (def != nullptr && def->from_choice) {
      return MakeError(fmt::format("runtime {} records {} from where it runs ({}), not as a "
                                   "setting",
                                   runtime_name, name, def->meaning));
    }
    if (def == nullptr) {
      std::vector<std::string> names;
      for (const SettingDef& d : defs) {
        if (!d.test_only && !d.from_choice) names.push_back(d.name);
      }
      return MakeError(fmt::format("runtime {} does not take the setting {}; it takes: {}",
                                   runtime_name, name,
                                   names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    }
    if (auto s = CheckSetting(*def, value); !s) return s;
  }
  return Status::Ok();
}

}  // namespace pipette
