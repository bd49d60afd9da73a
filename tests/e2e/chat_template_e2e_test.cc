// Chat templates as the models carry them (issue 25), end to end: `pipette run` of GPQA Diamond on
// a synthetic SmolLM2 (its real vocabulary and its model's Jinja template, at tiny widths) records
// that llama.cpp's Jinja engine applied the template and the template's SHA-256, per attempt and
// in record["eval"]; a model without a template records the raw message and no engine. A few
// samples of a few tokens each. Needs ../shared's eval data (skipped with the reason when absent).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "cli_runner.h"
#include "model_fixtures.h"
#include "pipette/synth.h"

namespace pipette::testing_models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kEvalsDir = pipette::testing::DataDir() + "/evals";
const char* kGpqa = "eval_gpqa_diamond_2026.06.1";

class ChatTemplateE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kEvalsDir + "/gpqa_diamond/gpqa_diamond.csv.gz")) {
      GTEST_SKIP() << pipette::testing::NeedData("GPQA Diamond");
    }
    dir_ = WorkDir() + "/chat-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(dir_);
  }

  // The record of GPQA (3 samples, 1 attempt, 8 tokens) on `model`.
  json Run(const std::string& model) {
    auto r = RunPipette({"--store", dir_ + "/s.db", "--json", "run", "-m", model, "-b", kGpqa, "-t",
                         "1", "--data-dir", kEvalsDir, "--limit", "3", "--repeats", "1",
                         "--max-tokens", "8", "--seed", "3"});
    EXPECT_EQ(r.exit.code, 0) << r.err;
    const json j = json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_object()) << r.out << r.err;
    return j.is_object() ? j : json::object();
  }

  std::string dir_;
};

TEST_F(ChatTemplateE2e, AJinjaTemplateIsAppliedByLlamaCppAndRecorded) {
  const SynthPreset mini = SynthMiniature(*FindSynthPreset("smollm2-135m"));
  ASSERT_FALSE(mini.chat_template.empty());
  SynthOptions o;
  o.type = "Q8_0";
  o.n_ctx = 4096;
  o.out_path = dir_ + "/smollm2-mini.gguf";
  const Status written = WriteSyntheticModel(mini, o);
  ASSERT_TRUE(written.ok()) << written.error().message;

  const json rec = Run(o.out_path);
  ASSERT_EQ(rec.value("status", ""), "ok") << rec.dump(1).substr(0, 3000);
  const json& e = rec["eval"];
  const std::string sha = Sha256Hex(mini.chat_template);
  EXPECT_EQ(e["prompt_format"], "chat_template");
  EXPECT_EQ(e["template_engine"], "llama.cpp common jinja");
  EXPECT_EQ(e["chat_template_sha256"], sha);
  ASSERT_EQ(rec["completions"].size(), 3u);
  for (const json& c : rec["completions"]) {
    EXPECT_NE(c["stop"], "failure") << c.dump();
    EXPECT_EQ(c["prompt_format"], "chat_template");
    EXPECT_EQ(c["template_engine"], "llama.cpp common jinja");
    EXPECT_EQ(c["chat_template_sha256"], sha);
    EXPECT_LE(c.value("output_tokens", 0), 8);
  }
}

TEST_F(ChatTemplateE2e, AModelWithoutATemplateRecordsTheRawMessageAndNoEngine) {
  SynthOptions o;
  o.preset = "tiny";
  o.n_ctx = 4096;
  o.out_path = dir_ + "/tiny-4096.gguf";
  ASSERT_TRUE(WriteSyntheticModel(o).ok());
  const json rec = Run(o.out_path);
  ASSERT_EQ(rec.value("status", ""), "ok") << rec.dump(1).substr(0, 3000);
  EXPECT_EQ(rec["eval"]["prompt_format"], "raw");
  EXPECT_FALSE(rec["eval"].contains("template_engine"));
  EXPECT_FALSE(rec["eval"].contains("chat_template_sha256"));
  for (const json& c : rec["completions"]) EXPECT_FALSE(c.contains("template_engine"));
}

}  // namespace
}  // namespace pipette::testing_models
