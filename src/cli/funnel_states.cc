// Finding and reading `pipette decide`'s state files for `pipette report` (cli/funnel_states.h).
#include "cli/funnel_states.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace pipette::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// One spelling per file: absolute, with . and .. and symbolic links resolved where they exist.
std::string SamePath(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) p = fs::absolute(path, ec).lexically_normal();
  return p.string();
}

// The state at `path`, or why not (one line naming the file, without what to do).
Result<FunnelReport> Read(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return MakeError(path + ": a folder, not a funnel state file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(path + ": cannot read it (missing or unreadable)");
  std::stringstream text;
  text << in.rdbuf();
  const json state = json::parse(text.str(), nullptr, false);
  if (state.is_discarded()) return MakeError(path + ": not a funnel state (not JSON)");
  return ParseFunnelState(state, path);
}

}  // namespace

Result<FunnelReport> ReadFunnelState(const std::string& path) {
  auto state = Read(path);
  if (!state) {
    return MakeError(state.error().message +
                     "; --funnel takes the state file `pipette decide` wrote beside the store "
                     "(<store folder>/decide/<name>.json)");
  }
  return state;
}

std::vector<FunnelReport> FindFunnelStates(const std::string& store_path,
                                           const std::vector<std::string>& known,
                                           std::ostream& warnings) {
  std::vector<FunnelReport> out;
  std::error_code ec;
  const fs::path dir = fs::absolute(store_path, ec).parent_path() / "decide";
  if (!fs::is_directory(dir, ec)) return out;
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json" && e.is_regular_file(ec)) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> seen;
  for (const std::string& k : known) seen.push_back(SamePath(k));
  const std::string store = SamePath(store_path);
  for (const std::string& file : files) {
    if (std::find(seen.begin(), seen.end(), SamePath(file)) != seen.end()) continue;
    auto state = Read(file);
    if (!state) {
      warnings << "pipette: warning: " << state.error().message
               << "; not shown in the report (move it out of " << dir.string()
               << " if `pipette decide` did not write it)\n";
      continue;
    }
    // Another store's funnel (stores sharing a folder share decide/): not this report's.
    if (state->store.empty() || SamePath(state->store) != store) continue;
    out.push_back(std::move(*state));
  }
  return out;
}

}  // namespace pipette::cli
