#include "cli_runner.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <atomic>

#include "model_fixtures.h"

namespace pipette::testing_models {

CliResult RunPipette(const std::vector<std::string>& args,
                     const std::function<void(int, const std::string&)>& on_started) {
  static std::atomic<int> counter{0};
  const std::string err_path = WorkDir() + "/stderr-" + std::to_string(counter++) + ".txt";
  std::vector<std::string> argv = {Binary("pipette")};
  argv.insert(argv.end(), args.begin(), args.end());
  CliResult r;
  auto child = ChildProcess::Start(argv, err_path);
  if (!child.ok()) {
    r.err = child.error().message;
    r.exit.exited = true;
    r.exit.code = 127;
    return r;
  }
  child->CloseStdin();
  if (on_started) on_started(child->Pid(), err_path);
  while (auto line = child->ReadLine()) r.out += *line + "\n";
  r.exit = *child->Wait();
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  return r;
}

int LineCount(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

const nlohmann::json* FindCandidate(const nlohmann::json& select, const std::string& quant) {
  if (!select.contains("candidates") || !select["candidates"].is_array()) return nullptr;
  for (const nlohmann::json& c : select["candidates"]) {
    if (c.value("quant", "") == quant) return &c;
  }
  return nullptr;
}

}  // namespace pipette::testing_models
