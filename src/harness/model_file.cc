#include "harness/model_file.h"

#include <filesystem>

#include "base/sha256.h"
#include "pipette/runtime.h"
#include "platform/device_access.h"

namespace pipette {

namespace {

bool NamesDeviceFile(const std::string& path) { return path.starts_with(kDeviceModelPrefix); }

std::string DevicePart(const std::string& path) { return path.substr(kDeviceModelPrefix.size()); }

}  // namespace

bool OnRemoteDevice(const std::string& path, const DeviceAccess* device) {
  return NamesDeviceFile(path) && device != nullptr && !device->IsHost();
}

std::string RuntimeModelPath(const std::string& path, const DeviceAccess* device) {
  if (!NamesDeviceFile(path) || OnRemoteDevice(path, device)) return path;
  return DevicePart(path);
}

std::string RecordModelPath(const std::string& path, const DeviceAccess* device) {
  if (OnRemoteDevice(path, device)) return path;
  return std::filesystem::absolute(RuntimeModelPath(path, device)).string();
}

Result<GgufInfo> ReadModelHeader(const std::string& path, DeviceAccess* device) {
  if (NamesDeviceFile(path) && DevicePart(path).empty()) {
    return MakeError("device: names no file; give device:/PATH, the model's path on the device");
  }
  if (!OnRemoteDevice(path, device)) return ReadGgufInfo(RuntimeModelPath(path, device));
  const std::string there = DevicePart(path);
  for (uint64_t head = 16ull << 20;; head *= 8) {
    auto file = device->DeviceFile(there, head);
    if (!file) return file.error();
    bool short_copy = false;
    auto info = ReadGgufInfoFromPrefix(file->head_path, there, file->size_bytes, &short_copy);
    // A header of more than 1 GiB is no model's: the error then stands.
    if (info.ok() || !short_copy || head >= (1ull << 30)) {
      if (!info.ok()) return Error{device->Uri() + ": device:" + info.error().message, "device"};
      return info;
    }
  }
}

Result<std::string> ModelSha256(
    const std::string& path, DeviceAccess* device,
    const std::function<Result<std::string>(const std::string&)>& hash_file) {
  if (OnRemoteDevice(path, device)) {
    auto file = device->DeviceFile(DevicePart(path), 0);
    if (!file) return file.error();
    return file->sha256;
  }
  const std::string host = RuntimeModelPath(path, device);
  return hash_file ? hash_file(host) : Sha256OfFile(host);
}

}  // namespace pipette
