// The per-device bandwidth cache and the decode roofline (platform/bandwidth.h); the kernel that
// measures is bandwidth_kernel.cc.
#include "platform/bandwidth.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "platform/cache_dir.h"

namespace pipette {
namespace {

using nlohmann::json;

}  // namespace

std::string BandwidthCachePath(const std::string& device_id) {
  return DeviceCacheFile("bandwidth", device_id);
}

void AddCachedBandwidth(json& device) {
  const json& id = device.contains("id") ? device["id"] : json();
  const auto cached = id.is_string() ? CachedBandwidth(id.get<std::string>()) : std::nullopt;
  device["memory_bandwidth_bytes_per_s"] = cached ? json(cached->bytes_per_s) : json(nullptr);
}

std::optional<BandwidthResult> CachedBandwidth(const std::string& device_id) {
  const std::string path = BandwidthCachePath(device_id);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("schema", "") != "pipette.bandwidth/1" ||
      j.value("device_id", "") != device_id) {
    return std::nullopt;
  }
  BandwidthResult r;
  if (j.value("method", "") != r.method) return std::nullopt;
  try {
    r.bytes_per_s = j.at("bytes_per_s").get<double>();
    r.threads = j.at("threads").get<int>();
    r.array_bytes = j.at("array_bytes").get<size_t>();
    r.runs = j.at("runs").get<int>();
    r.sweeps = j.value("sweeps", 1);
    r.run_bytes_per_s = j.value("run_bytes_per_s", std::vector<double>{});
    r.cpus = j.value("cpus", std::vector<int>{});
    r.measured_at = j.value("measured_at", "");
  } catch (const json::exception&) {
    return std::nullopt;
  }
  if (!std::isfinite(r.bytes_per_s) || r.bytes_per_s <= 0) return std::nullopt;
  return r;
}

Status StoreBandwidth(const std::string& device_id, const BandwidthResult& result) {
  return StoreDeviceCacheFile("bandwidth", device_id, "pipette.bandwidth/1", BandwidthJson(result),
                              "the bandwidth cache");
}

std::optional<double> DecodeRooflineEfficiency(double decode_tokens_per_s, double bytes_per_token,
                                               double bandwidth_bytes_per_s) {
  for (double v : {decode_tokens_per_s, bytes_per_token, bandwidth_bytes_per_s}) {
    if (!std::isfinite(v) || v <= 0) return std::nullopt;
  }
  return decode_tokens_per_s * bytes_per_token / bandwidth_bytes_per_s;
}

}  // namespace pipette
