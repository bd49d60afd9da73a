// End-to-end: every synthetic preset's architecture (llama, granite, granitehybrid, lfm2,
// lfm2moe, qwen3, qwen3moe, qwen35, mistral3) loads in the pinned llama.cpp and gives ok results
// for every benchmark type, and for decode at a depth of 4096 tokens: a miniature of each preset
// (its architecture, layer pattern, experts and vocabulary at tiny widths), written directly in
// Q8_0, on the real engine. The full shapes are in examples/suites/published-findings.toml.
#include <gtest/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model_fixtures.h"
#include "pipette/cell.h"
#include "pipette/synth.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;

// The presets of real models beyond the llama shapes of earlier versions (those share one
// architecture and have tests of their own: run_test.cc, models_test.cc).
std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const SynthPreset& p : SynthPresets()) {
    if (p.n_vocab != 0) names.push_back(p.name);
  }
  return names;
}

class EveryPreset : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryPreset, MiniatureMeasuresEveryBenchmarkType) {
  const SynthPreset mini = SynthMiniature(*FindSynthPreset(GetParam()));
  SynthOptions o;
  o.type = "Q8_0";
  o.out_path = WorkDir() + "/" + mini.name + "-Q8_0.gguf";
  Status written = WriteSyntheticModel(mini, o);
  ASSERT_TRUE(written.ok()) << written.error().message;

  const uint32_t context = mini.n_ctx_train != 0 ? mini.n_ctx_train : 8192;
  ASSERT_GE(context, 4096u + 8);  // every preset's context holds the deep decode
  const std::map<std::string, std::string> headline = {
      {"prefill_throughput_8", "prefill_throughput"},
      {"decode_throughput_8_8", "decode_throughput"},
      {"end_to_end_latency_8_8", "end_to_end_latency"},
      {"max_memory_usage_8", "max_host_usage"},
      {"decode_throughput_4096_8", "decode_throughput"}};
  for (const auto& [id, metric] : headline) {
    CellSpec spec = QuickCell(o.out_path, id, 2, 2);
    if (id == "decode_throughput_4096_8") {
      // The deep one once, without warm-up: it proves the shape runs and stays finite (the
      // engine refuses NaN or infinite logits) at 4096 tokens; its speed is the example's job.
      spec.policy.warmup_runs = 0;
      spec.policy.min_reps = spec.policy.max_reps = 1;
    }
    auto r = RunCell(spec);
    ASSERT_TRUE(r.ok()) << id << ": " << r.error().message;
    const json& rec = *r;
    ASSERT_EQ(rec["status"], "ok") << id << ": " << rec.dump(1).substr(0, 3000);
    EXPECT_EQ(rec["model"]["architecture"], mini.arch) << id;
    EXPECT_EQ(rec["model"]["vocab_size"], mini.n_vocab != 0 ? mini.n_vocab : 32000u) << id;
    EXPECT_EQ(rec["model"]["quant"], "Q8_0") << id;
    EXPECT_EQ(rec["model"]["synthetic"], true) << id;
    ASSERT_TRUE(rec["metrics"].contains(metric)) << id << " lacks " << metric;
    EXPECT_GT(rec["metrics"][metric]["median"].get<double>(), 0) << id;
  }
}

INSTANTIATE_TEST_SUITE_P(Synthetic, EveryPreset, ::testing::ValuesIn(PresetNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace pipette
