// Models for end-to-end tests, made once per test process in a private temporary folder:
// a tiny synthetic llama (always available) and stories260K from the data folder (../shared, or
// $PIPETTE_DATA_DIR: tests/support/test_data.h) in F32 and quantized
// (absent outside the workspace: tests that need it skip, saying why).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "pipette/cell.h"
#include "tests/support/test_data.h"

namespace pipette::testing_models {

// Folder private to this test process.
const std::string& WorkDir();

// Synthetic "tiny" preset (context 512). Aborts the test on failure.
const std::string& TinySynthetic();

// A synthetic model of `preset` (pipette/synth.h) written directly in `type` ("F32", "Q4_0",
// ...), context 512, named "<preset>-<type>.gguf"; made once per test process, always available.
// Where a test needs quantizations whose peak memory differs by far more than run-to-run noise:
// stories15m's F32 and Q4_0 differ by about 80 MiB of weights, stories260K's by 0.8 MiB, within
// reach of the 0.4 MiB that address-space randomization moves a process's mapped library pages.
// Aborts the test on failure.
std::string Synthetic(const std::string& preset, const std::string& type);

// stories260K converted with llama.cpp's converter; "F32", "Q8_0", "Q4_0", "Q4_K_M".
// Empty string when stories260K is absent from the data folder (pipette::testing::DataDir()).
std::string Stories260K(const std::string& quant);

// Why Stories260K() is empty, for GTEST_SKIP: NeedData("stories260K").
std::string SharedMissingReason();

// A short real cell of `benchmark` on `model`: one thread, one warm-up, `min_reps` to `max_reps`
// repetitions, the built driver, the readiness gate's load criterion waived (ctest runs tests in
// parallel: the CPUs are busy on purpose).
CellSpec QuickCell(const std::string& model, const std::string& benchmark, int min_reps = 3,
                   int max_reps = 3);

// The `llamacpp` runtime with the built driver.
std::shared_ptr<Runtime> LlamaCpp();

// Path of a built binary: "pipette" or "pipette-llamacpp-driver".
std::string Binary(const std::string& name);

}  // namespace pipette::testing_models
