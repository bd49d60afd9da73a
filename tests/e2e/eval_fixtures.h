// What the eval end-to-end tests share: the doom-loop detector tuned for stories260K, a whole-file
// reader, the pid of a running pipette's driver (to kill it mid-run), acting on a run at a point
// of its output, and the record a --json run printed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace pipette::testing_models {

// stories260K has a 512-token context and loops within a few hundred bytes: the detector's
// minimum and windows are lowered for it (recorded in the result), as `pipette run` flags.
extern const std::vector<std::string> kShortContextDetector;

// The file's bytes; "" when it cannot be read.
std::string ReadFile(const std::string& path);

// The pid of `parent`'s child named like the driver, or -1.
int DriverPid(int parent);

// Runs pipette with `args`; once its stderr shows `marker`, calls act(pipette's pid) (e.g. to
// interrupt it there). A test failure when the marker never shows.
CliResult RunAndActAt(const std::vector<std::string>& args, const std::string& marker,
                      const std::function<void(int)>& act);

// The record a `--json` run printed; an empty object, and a test failure, when it printed none.
nlohmann::json RecordOf(const CliResult& r);

}  // namespace pipette::testing_models
