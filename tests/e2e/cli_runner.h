// Runs the built `pipette` binary as a user would, capturing stdout, stderr and the exit status.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "platform/process.h"

namespace pipette::testing_models {

struct CliResult {
  ExitInfo exit;
  std::string out;
  std::string err;
};

// `on_started` receives the pipette pid and the path its stderr goes to, before output is read.
CliResult RunPipette(const std::vector<std::string>& args,
                     const std::function<void(int pid, const std::string& err_path)>& on_started = {});

}  // namespace pipette::testing_models
