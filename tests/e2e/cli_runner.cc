#include "cli_runner.h"

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

}  // namespace pipette::testing_models
