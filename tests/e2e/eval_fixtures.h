// What the eval end-to-end tests share: the doom-loop detector tuned for stories260K, a whole-file
// reader, and the pid of a running pipette's driver (to kill it mid-run).
#pragma once

#include <string>
#include <vector>

namespace pipette::testing_models {

// stories260K has a 512-token context and loops within a few hundred bytes: the detector's
// minimum and windows are lowered for it (recorded in the result), as `pipette run` flags.
extern const std::vector<std::string> kShortContextDetector;

// The file's bytes; "" when it cannot be read.
std::string ReadFile(const std::string& path);

// The pid of `parent`'s child named like the driver, or -1.
int DriverPid(int parent);

}  // namespace pipette::testing_models
