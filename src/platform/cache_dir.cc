#include "platform/cache_dir.h"

#include <pwd.h>
#include <unistd.h>

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

}  // namespace pipette
