#include "eval_fixtures.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace pipette::testing_models {

namespace fs = std::filesystem;

const std::vector<std::string> kShortContextDetector = {
    "--doom-loop", "min_bytes=256",       "--doom-loop", "block_min_period=16",
    "--doom-loop", "block_copies=2",      "--doom-loop", "long_block_bytes=32",
    "--doom-loop", "tail_bytes=16",       "--doom-loop", "tail_copies=3"};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int DriverPid(int parent) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string status = ReadFile(entry.path() / "status");
    if (status.find("pipette-llamacp") == std::string::npos) continue;
    const size_t at = status.find("PPid:");
    if (at != std::string::npos && std::stoi(status.substr(at + 5)) == parent) {
      return std::stoi(name);
    }
  }
  return -1;
}

}  // namespace pipette::testing_models
