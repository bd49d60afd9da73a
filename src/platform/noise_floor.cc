// The per-device noise-floor cache (platform/noise_floor.h); the kernel that measures is
// noise_floor_kernel.cc.
#include "platform/noise_floor.h"

#include <cmath>
#include <fstream>

#include "platform/cache_dir.h"

namespace pipette {
namespace {

using nlohmann::json;

constexpr const char* kSchema = "pipette.noise_floor/1";

bool Plausible(const NoiseFloorMode& m) {
  return std::isfinite(m.spread) && m.spread >= 0 && std::isfinite(m.median_ms) && m.median_ms > 0;
}

}  // namespace

std::string NoiseFloorCachePath(const std::string& device_id) {
  return DeviceCacheFile("noise-floor", device_id);
}

std::optional<NoiseFloorResult> CachedNoiseFloor(const std::string& device_id) {
  const std::string path = NoiseFloorCachePath(device_id);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("schema", "") != kSchema || j.value("device_id", "") != device_id) {
    return std::nullopt;
  }
  NoiseFloorResult r = NoiseFloorFromJson(j);
  // The first method is this one without the memory mode: its compute spreads still hold.
  const bool known = r.method == NoiseFloorResult{}.method || r.method == "fma-l1-alternating/1";
  if (!known || !Plausible(r.pinned) || !Plausible(r.unpinned)) {
    return std::nullopt;
  }
  return r;
}

Status StoreNoiseFloor(const std::string& device_id, const NoiseFloorResult& result) {
  return StoreDeviceCacheFile("noise-floor", device_id, kSchema, NoiseFloorJson(result),
                              "the noise-floor cache");
}

json NoiseFloorSummary(const NoiseFloorResult& r) {
  json j = {{"pinned", r.pinned.spread},
            {"unpinned", r.unpinned.spread},
            {"cpu", r.pinned.cpu},
            {"measured_at", r.measured_at}};
  if (!r.memory.run_ms.empty()) j["memory"] = r.memory.spread;
  return j;
}

void AddCachedNoiseFloor(json& device) {
  const json& id = device.contains("id") ? device["id"] : json();
  const auto cached = id.is_string() ? CachedNoiseFloor(id.get<std::string>()) : std::nullopt;
  device["noise_floor"] = cached ? NoiseFloorSummary(*cached) : json(nullptr);
}

}  // namespace pipette
