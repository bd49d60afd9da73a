// Test and benchmark support: where the third-party data the tests read lies (docs/data.md).
// One place for every test: $PIPETTE_DATA_DIR when set (scripts/fetch-data.sh fills such a
// folder), else ../shared/data beside the source tree (the build's PIPETTE_SHARED_DIR). The
// layout below it is the same either way: models/stories260K/, evals/math500/, evals/ifbench/
// (nlp/ for the checkers' model data), evals/gpqa_diamond/, evals/scoring/.
//
// A test that needs a part that is absent skips with NeedData(part) as its reason: a test never
// fails for missing data. scripts/test.sh groups skips by the first line of the reason.
#pragma once

#include <cstdlib>
#include <string>

namespace pipette::testing {

// $PIPETTE_DATA_DIR, else ../shared/data beside the source tree. Not checked for existence.
inline std::string DataDir() {
  if (const char* env = std::getenv("PIPETTE_DATA_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
#ifdef PIPETTE_SHARED_DIR
  return std::string(PIPETTE_SHARED_DIR) + "/data";
#else
  return "../shared/data";
#endif
}

// The skip reason for a test that needs `part` of the data ("stories260K", "MATH-500",
// "IFBench", "IFBench's model data", "GPQA Diamond", "the scorer verdict corpus"). Its first line
// is stable ("need stories260K, see docs/data.md"); the second says where it was looked for.
inline std::string NeedData(const std::string& part) {
  return "need " + part + ", see docs/data.md\n(looked under " + DataDir() +
         ": set PIPETTE_DATA_DIR, or put ../shared beside the repository)";
}

}  // namespace pipette::testing
