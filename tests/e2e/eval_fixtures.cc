#include "eval_fixtures.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

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

CliResult RunAndActAt(const std::vector<std::string>& args, const std::string& marker,
                      const std::function<void(int)>& act) {
  std::thread watcher;
  std::atomic<bool> acted{false};
  auto r = RunPipette(args, [&](int pid, const std::string& err_path) {
    watcher = std::thread([&, pid, err_path] {
      for (int i = 0; i < 6000 && !acted; ++i) {
        if (ReadFile(err_path).find(marker) != std::string::npos) {
          act(pid);
          acted = true;
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  });
  if (watcher.joinable()) watcher.join();
  EXPECT_TRUE(acted) << "never saw '" << marker << "' in:\n" << r.err;
  return r;
}

nlohmann::json RecordOf(const CliResult& r) {
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out << r.err;
  return j.is_object() ? j : nlohmann::json::object();
}

}  // namespace pipette::testing_models
