#include "model_fixtures.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <mutex>

#include "models/llama_tools.h"
#include "pipette/runtimes.h"
#include "pipette/synth.h"

namespace pipette::testing_models {
namespace fs = std::filesystem;

namespace {
const std::string kStoriesDir = pipette::testing::DataDir() + "/models/stories260K";
std::mutex g_mu;
}  // namespace

const std::string& WorkDir() {
  static const std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "pipette-e2e-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    // Device names the tests give stay out of the user's ~/.config, however a test is started
    // (ctest sets PIPETTE_CONFIG to the build folder's; a test binary run by hand gets this).
    setenv("PIPETTE_CONFIG", (tmpl + "/config").c_str(), 0);
    return tmpl;
  }();
  return dir;
}

const std::string& TinySynthetic() {
  static const std::string path = Synthetic("tiny", "F16");
  return path;
}

std::string Synthetic(const std::string& preset, const std::string& type) {
  std::lock_guard<std::mutex> lock(g_mu);
  static std::map<std::string, std::string> made;
  const std::string name = preset + "-" + type;
  if (auto it = made.find(name); it != made.end()) return it->second;
  SynthOptions o;
  o.preset = preset;
  o.type = type;
  o.n_ctx = 512;
  o.out_path = WorkDir() + "/" + name + ".gguf";
  if (const Status s = WriteSyntheticModel(o); !s.ok()) {
    ADD_FAILURE() << s.error().message;
    std::abort();
  }
  return made[name] = o.out_path;
}

std::string SharedMissingReason() {
  return pipette::testing::NeedData("stories260K");
}

std::string Stories260K(const std::string& quant) {
  if (!fs::exists(kStoriesDir + "/stories260K.bin")) return "";
  std::lock_guard<std::mutex> lock(g_mu);
  static std::map<std::string, std::string> made;
  if (auto it = made.find(quant); it != made.end()) return it->second;
  const std::string f32 = WorkDir() + "/stories260K-F32.gguf";
  if (!fs::exists(f32)) {
    const Status s = ImportLlama2c(kStoriesDir + "/stories260K.bin", kStoriesDir + "/tok512.bin", f32);
    if (!s.ok()) {
      ADD_FAILURE() << s.error().message;
      return "";
    }
  }
  std::string path = f32;
  if (quant != "F32") {
    path = WorkDir() + "/stories260K-" + quant + ".gguf";
    const Status s = QuantizeModel(f32, quant, path);
    if (!s.ok()) {
      ADD_FAILURE() << s.error().message;
      return "";
    }
  }
  made[quant] = path;
  return path;
}

std::string Binary(const std::string& name) {
  if (name == "pipette") return std::string(PIPETTE_BIN_DIR) + "/src/cli/pipette";
  return std::string(PIPETTE_BIN_DIR) + "/src/driver/" + name;
}

std::shared_ptr<Runtime> LlamaCpp() {
  RuntimeChoice choice;
  choice.driver_path = Binary("pipette-llamacpp-driver");
  auto r = OpenRuntime(choice);
  if (!r) ADD_FAILURE() << r.error().message;
  return r ? *r : nullptr;
}

CellSpec QuickCell(const std::string& model, const std::string& benchmark, int min_reps,
                   int max_reps) {
  CellSpec spec;
  spec.model_path = model;
  spec.benchmark = *ParseBenchmarkId(benchmark);
  spec.runtime = LlamaCpp();
  spec.settings["threads"] = 1;
  spec.policy.warmup_runs = 1;
  spec.policy.min_reps = min_reps;
  spec.policy.max_reps = max_reps;
  spec.readiness.waive_load = true;
  spec.readiness.sample_window_s = 0.02;
  return spec;
}

}  // namespace pipette::testing_models
