// Runs the built `pipette` binary as a user would, capturing stdout, stderr and the exit status.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
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

// How many lines `text` holds (its newlines): a one-line error message is 1.
int LineCount(const std::string& text);

// The candidate of `pipette select --json` output `select` whose quantization is `quant`;
// nullptr when there is none.
const nlohmann::json* FindCandidate(const nlohmann::json& select, const std::string& quant);

}  // namespace pipette::testing_models
