// A suite file (`pipette suite run FILE.toml`, `plan submit`, `decide`): ParseSuiteToml, then the
// expansion into cells for what parses.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pipette/suite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  pipette::Result<pipette::Suite> suite =
      pipette::ParseSuiteToml(text, "/nonexistent-fuzz-dir", "fuzz.toml");
  if (suite.ok()) (void)pipette::ExpandSuite(*suite);
  return 0;
}
