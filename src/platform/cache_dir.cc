#include "platform/cache_dir.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "platform/output_path.h"

namespace pipette {

std::string PipetteCacheDir() {
  if (const char* p = std::getenv("PIPETTE_CACHE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') {
    return std::string(x) + "/pipette";
  }
  std::string home;
  if (const char* h = std::getenv("HOME"); h && *h) home = h;
  if (home.empty()) {
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) home = pw->pw_dir;
  }
  return (home.empty() ? std::string(".") : home) + "/.cache/pipette";
}

std::string DeviceCacheFile(const std::string& prefix, const std::string& device_id) {
  const bool hex = !device_id.empty() && device_id.size() <= 128 &&
                   std::all_of(device_id.begin(), device_id.end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  if (!hex) return {};
  return PipetteCacheDir() + "/" + prefix + "-" + device_id + ".json";
}

Status StoreDeviceCacheFile(const std::string& prefix, const std::string& device_id,
                            const std::string& schema, nlohmann::json body,
                            const std::string& what) {
  const std::string path = DeviceCacheFile(prefix, device_id);
  if (path.empty()) return MakeError("invalid device id '" + device_id + "' for " + what);
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::filesystem::create_directories(dir, ec);
  if (ec) return MakeError("cannot create the cache folder " + dir.string() + ": " + ec.message());
  body["schema"] = schema;
  body["device_id"] = device_id;
  return WriteFileAtomically(path, what, [&](std::ostream& out) {
    out << body.dump(2) << "\n";
    return Status::Ok();
  });
}

}  // namespace pipette
