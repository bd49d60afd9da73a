// Setting filters of the reading commands (pipette/store.h ResultFilter::settings): which
// runtime.settings keys a result records, and "key=value" parsed. No SQLite here: analysis
// (compare's group filters) uses it without the store.
#include <algorithm>
#include <string>
#include <vector>

#include "pipette/store.h"

namespace pipette {

// The union of the runtimes' setting names (their SettingDefs, pipette/runtimes.h); the store
// sits below the runtimes, so the names are listed here and runtimes_test checks they agree.
const std::vector<std::string>& RecordedSettingNames() {
  static const std::vector<std::string> names = {
      "threads", "n_gpu_layers", "mmap",  "flash_attn", "n_batch", "n_ubatch",        "type_k",
      "type_v",  "n_ctx",        "poll",  "cpus",       "server",  "api_model", "test_leak_bytes"};
  return names;
}

Result<SettingFilter> ParseSettingFilter(const std::string& text) {
  const auto trim = [](std::string s) {
    const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  const size_t eq = text.find('=');
  const Error bad = MakeError("'" + text + "' is not a setting filter: give KEY=VALUE, e.g. threads=2");
  if (eq == std::string::npos) return bad;
  SettingFilter f{trim(text.substr(0, eq)), trim(text.substr(eq + 1))};
  if (f.key.empty() || f.value.empty()) return bad;
  const auto& names = RecordedSettingNames();
  if (std::find(names.begin(), names.end(), f.key) == names.end()) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    return MakeError("unknown setting '" + f.key + "' (settings: " + known + ")");
  }
  return f;
}

}  // namespace pipette
