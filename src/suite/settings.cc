// Runtime settings by name (see settings.h).
#include "suite/settings.h"

#include <functional>
#include <map>

#include "platform/cpu_affinity.h"

namespace pipette {
namespace {

using nlohmann::json;

Status Integer(const json& v, int lo, int hi, int& out) {
  if (!v.is_number_integer()) return MakeError("expected an integer, not " + v.dump());
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) {
    return MakeError(v.dump() + " is out of range " + std::to_string(lo) + ".." +
                     std::to_string(hi));
  }
  out = static_cast<int>(x);
  return {};
}

Status OneOf(const json& v, const std::vector<std::string>& allowed, std::string& out) {
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  if (!v.is_string()) return MakeError("expected one of " + list + ", not " + v.dump());
  for (const auto& a : allowed) {
    if (v.get<std::string>() == a) {
      out = a;
      return {};
    }
  }
  return MakeError("expected one of " + list + ", not " + v.dump());
}

// KV cache element types llama.cpp accepts for type_k/type_v (its common/arg.cpp list).
const std::vector<std::string> kKvTypes = {"f32",  "f16",  "bf16", "q8_0",  "q4_0",
                                           "q4_1", "iq4_nl", "q5_0", "q5_1"};

using Setter = std::function<Status(RuntimeSettings&, const json&)>;

const std::map<std::string, Setter>& Setters() {
  static const std::map<std::string, Setter> setters = {
      {"threads", [](RuntimeSettings& s, const json& v) { return Integer(v, 1, 1024, s.threads); }},
      {"n_gpu_layers",
       [](RuntimeSettings& s, const json& v) { return Integer(v, -1, 100000, s.n_gpu_layers); }},
      {"mmap",
       [](RuntimeSettings& s, const json& v) -> Status {
         if (!v.is_boolean()) return MakeError("expected true or false, not " + v.dump());
         s.mmap = v.get<bool>();
         return {};
       }},
      {"flash_attn",
       [](RuntimeSettings& s, const json& v) { return OneOf(v, {"auto", "on", "off"}, s.flash_attn); }},
      {"n_batch", [](RuntimeSettings& s, const json& v) { return Integer(v, 1, 1 << 20, s.n_batch); }},
      {"n_ubatch",
       [](RuntimeSettings& s, const json& v) { return Integer(v, 1, 1 << 20, s.n_ubatch); }},
      {"type_k", [](RuntimeSettings& s, const json& v) { return OneOf(v, kKvTypes, s.type_k); }},
      {"type_v", [](RuntimeSettings& s, const json& v) { return OneOf(v, kKvTypes, s.type_v); }},
      {"n_ctx", [](RuntimeSettings& s, const json& v) { return Integer(v, 1, 1 << 24, s.n_ctx); }},
      {"cpus",
       [](RuntimeSettings& s, const json& v) -> Status {
         if (!v.is_string()) return MakeError("expected a CPU list such as \"0-3\", not " + v.dump());
         if (auto cpus = ParseCpuList(v.get<std::string>()); !cpus) return cpus.error();
         s.cpus = v.get<std::string>();
         return {};
       }},
  };
  return setters;
}

}  // namespace

const std::vector<std::string>& SettingNames() {
  static const std::vector<std::string> names = {"threads", "n_gpu_layers", "mmap",
                                                 "flash_attn", "n_batch", "n_ubatch",
                                                 "type_k", "type_v", "n_ctx", "cpus"};
  return names;
}

Status ApplySetting(RuntimeSettings& settings, const std::string& name, const json& value) {
  const auto it = Setters().find(name);
  if (it == Setters().end()) {
    std::string list;
    for (const auto& n : SettingNames()) list += (list.empty() ? "" : ", ") + n;
    return MakeError("unknown setting; the settings are " + list);
  }
  return it->second(settings, value);
}

}  // namespace pipette
