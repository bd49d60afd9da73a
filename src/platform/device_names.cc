#include "platform/device_names.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include <nlohmann/json.hpp>

#include "platform/output_path.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSchema = "pipette.device-names/1";

// A names file is small: a name per device.
constexpr uintmax_t kMaxNamesFileBytes = 1 << 20;

// `strict` (before writing it back): a file that is not a names file, or holds an entry that is
// not a valid name, is an error, so that nothing in it is lost; otherwise such entries are absent.
Result<std::map<std::string, std::string>> Read(bool strict) {
  std::map<std::string, std::string> out;
  const std::string path = DeviceNamesPath();
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) return out;
  const auto refuse = [&](const std::string& why) -> Result<std::map<std::string, std::string>> {
    if (!strict) return std::map<std::string, std::string>{};
    return MakeError(path + " " + why + "; move it away and name the devices again");
  };
  if (!fs::is_regular_file(status)) return refuse("is not a file");
  if (fs::file_size(path, ec) > kMaxNamesFileBytes) return refuse("is larger than 1 MiB");
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object() || j.value("schema", "") != kSchema || !j.contains("names") ||
      !j["names"].is_object()) {
    return refuse(std::string("is not a device names file (") + kSchema + ")");
  }
  for (const auto& [id, name] : j["names"].items()) {
    if (!name.is_string() || !CheckDeviceName(name.get<std::string>()).ok()) {
      if (strict) return refuse("holds an entry that is not a device name (" + id.substr(0, 12) + ")");
      continue;
    }
    out[id] = name.get<std::string>();
  }
  return out;
}

}  // namespace

std::string DeviceNamesPath() {
  if (const char* c = std::getenv("PIPETTE_CONFIG"); c && *c) {
    return std::string(c) + "/device-names.json";
  }
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x == '/') {
    return std::string(x) + "/pipette/device-names.json";
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.config/pipette/device-names.json";
}

std::map<std::string, std::string> ReadDeviceNames() {
  auto names = Read(false);
  return names ? *names : std::map<std::string, std::string>{};
}

std::optional<std::string> DeviceNameOf(const std::string& device_id) {
  const auto names = ReadDeviceNames();
  const auto it = names.find(device_id);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

Status CheckDeviceName(const std::string& name) {
  // The name as it can be shown in one line: what cannot be printed is a '?'; a long one is cut.
  std::string shown = name.size() > 80 ? name.substr(0, 77) + "..." : name;
  for (char& c : shown) {
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  }
  const auto refuse = [&](const std::string& why) {
    return MakeError("device name '" + shown + "' " + why +
                     "; give 1 to 64 letters, digits, inner spaces or . _ - ( ) + #, e.g. pixel-8");
  };
  if (name.empty() || name.size() > 64) return refuse("has " + std::to_string(name.size()) + " characters");
  if (name.front() == ' ' || name.back() == ' ') return refuse("starts or ends with a space");
  for (unsigned char c : name) {
    if (!std::isalnum(c) && std::string_view("._-()+# ").find(static_cast<char>(c)) ==
                                std::string_view::npos) {
      return refuse("has a character that is not allowed");
    }
  }
  return Status::Ok();
}

Status NameDevice(const std::string& device_id, const std::string& name) {
  if (auto s = CheckDeviceName(name); !s) return s;
  if (device_id.empty()) return MakeError("cannot name a device without an id");
  auto names = Read(true);
  if (!names) return names.error();
  for (const auto& [id, other] : *names) {
    if (other == name && id != device_id) {
      return MakeError("device name '" + name + "' is taken by device " + id.substr(0, 12) +
                       "; one name names one device: choose another");
    }
  }
  (*names)[device_id] = name;
  json j = {{"schema", kSchema}, {"names", json::object()}};
  for (const auto& [id, n] : *names) j["names"][id] = n;
  const std::string path = DeviceNamesPath();
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return MakeError("cannot create " + fs::path(path).parent_path().string() + " (" + ec.message() + ")");
  return WriteFileAtomically(path, "the device names", [&](std::ostream& out) {
    out << j.dump(2) << "\n";
    return Status::Ok();
  });
}

std::string DeviceShownAs(const std::string& device_id,
                          const std::map<std::string, std::string>& names) {
  const auto it = names.find(device_id);
  return it != names.end() ? it->second : device_id.substr(0, 8);
}

}  // namespace pipette
