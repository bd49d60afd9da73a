#include "runtimes/common/resolve.h"

#include <fmt/format.h>

#include "platform/cpu_affinity.h"

namespace pipette {

using nlohmann::json;

Result<json> ResolveByDefinitions(const std::string& runtime, const std::vector<SettingDef>& defs,
                                  const json& given,
                                  const std::function<json(const SettingDef&)>& resolve_null,
                                  int device_cpus) {
  if (auto s = CheckSettings(runtime, defs, given); !s) return s.error();
  json out = json::object();
  for (const SettingDef& d : defs) {
    json v;
    if (given.is_object() && given.contains(d.name)) {
      v = given[d.name];
    } else if (d.recorded_only_when_set) {
      continue;
    } else {
      v = d.default_value.is_null() ? resolve_null(d) : d.default_value;
    }
    if (d.kind == SettingKind::kCpuList) {
      auto cpus = ParseCpuList(v.get<std::string>());
      if (!cpus) return cpus.error().Wrap(d.name);
      if (device_cpus > 0) {
        if (cpus->back() >= device_cpus) {
          return MakeError(fmt::format("{} {}: CPU {} is not on the device (it has CPUs 0-{})",
                                       d.name, v.get<std::string>(), cpus->back(),
                                       device_cpus - 1));
        }
      } else if (auto s = CheckCpusAvailable(*cpus); !s) {
        return s.error().Wrap(d.name + " " + v.get<std::string>());
      }
      v = FormatCpuList(*cpus);
    }
    out[d.name] = v;
  }
  return out;
}

namespace {
SettingDef Integer(std::string name, int64_t min, int64_t max, json def, std::string unit,
                   std::string meaning) {
  SettingDef d;
  d.name = std::move(name);
  d.kind = SettingKind::kInteger;
  d.min = min;
  d.max = max;
  d.default_value = std::move(def);
  d.unit = std::move(unit);
  d.meaning = std::move(meaning);
  return d;
}
SettingDef Choice(std::string name, std::vector<std::string> choices, std::string def,
                  std::string meaning) {
  SettingDef d;
  d.name = std::move(name);
  d.kind = SettingKind::kChoice;
  d.choices = std::move(choices);
  d.default_value = std::move(def);
  d.meaning = std::move(meaning);
  return d;
}
}  // namespace

SettingDef ThreadsSetting() {
  SettingDef d = Integer("threads", 1, 1024, nullptr, "threads", "CPU threads for prefill and decode");
  d.resolution = "the physical cores (llama-bench's default)";
  return d;
}

SettingDef CpusSetting() {
  SettingDef d;
  d.name = "cpus";
  d.kind = SettingKind::kCpuList;
  d.meaning =
      "CPUs the runtime may run on, taskset -c syntax (\"0\", \"0-3\"); unpinned single-thread "
      "runs on CPUs of unequal speed compare badly";
  d.recorded_only_when_set = true;
  return d;
}

SettingDef KvTypeSetting(const std::string& name) {
  // llama.cpp's common/arg.cpp `kv_cache_types`.
  return Choice(name, {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"},
                "f16", std::string("KV cache element type of ") + (name == "type_k" ? "K" : "V"));
}

SettingDef FlashAttnSetting() {
  return Choice("flash_attn", {"auto", "on", "off"}, "auto",
                "flash attention (auto: llama.cpp decides per backend)");
}

SettingDef NBatchSetting() {
  return Integer("n_batch", 1, 1 << 20, 2048, "tokens", "logical batch: tokens per llama_decode call during prefill");
}

SettingDef NUbatchSetting() {
  return Integer("n_ubatch", 1, 1 << 20, 512, "tokens", "physical batch: tokens per compute graph");
}

SettingDef NGpuLayersSetting() {
  SettingDef d = Integer("n_gpu_layers", -1, 100000, -1, "layers",
                         "layers offloaded to a GPU (-1: all when the build has a GPU backend)");
  d.resolution = "-1 becomes 999 with a GPU backend, else 0";
  return d;
}

SettingDef MmapSetting() {
  SettingDef d;
  d.name = "mmap";
  d.kind = SettingKind::kBoolean;
  d.default_value = false;
  d.meaning = "memory-map the weights (off: resident, so memory figures compare)";
  return d;
}

SettingDef PollSetting() {
  return Integer("poll", 0, 100, 50, "", "threadpool busy-poll level (llama-bench's default 50)");
}

Status CheckContextSize(int64_t n_ctx, int need) {
  if (n_ctx != 0 && n_ctx < need) {
    return MakeError(fmt::format("n_ctx {} is smaller than the {} tokens this benchmark needs; "
                                 "raise it or leave it out",
                                 n_ctx, need));
  }
  return Status::Ok();
}

}  // namespace pipette
