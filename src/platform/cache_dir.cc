#include "platform/cache_dir.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

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

}  // namespace pipette
