// Eval accuracy in decisions (issue 9, item 5): the model family, paired attempts with McNemar,
// accuracy limits judged on their intervals, and accuracy as the quality objective.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/select_parts.h"
#include "pipette/analysis.h"

namespace pipette {
namespace {

using nlohmann::json;

struct Model {
  std::string file, sha, quant;
};
const Model kF32{"stories260K-F32.gguf", "aaaa", "F32"};
const Model kQ8{"stories260K-Q8_0.gguf", "cccc", "Q8_0"};
const Model kQ4{"stories260K-Q4_0.gguf", "bbbb", "Q4_0"};

// "q<q>#<k>".
std::string Key(int q, int k) {
  std::string key = "q";
  key += std::to_string(q);
  key += '#';
  key += static_cast<char>('0' + k);
  return key;
}

json Base(const Model& m, const std::string& benchmark, const std::string& type, int n_ctx) {
  static int serial = 0;
  ++serial;
  return {{"schema", "pipette.result/1"},
          {"result_id", "0190" + std::to_string(200000 + serial)},
          {"config_id", m.sha + benchmark},
          {"status", "ok"},
          {"started_at", "2026-12-01T00:00:00.000Z"},
          {"benchmark", {{"id", benchmark}, {"type", type}}},
          {"model",
           {{"file_name", m.file}, {"sha256", m.sha}, {"quant", m.quant}, {"n_ctx_train", 512}}},
          {"runtime",
           {{"name", "llamacpp"},
            {"version", "llama.cpp@abc1234"},
            {"commit", "abc1234"},
            {"settings", {{"threads", 2}, {"n_ctx", n_ctx}}}}},
          {"device", {{"id", "dev1"}}}};
}

json Decode(const Model& m, double tokens_per_s) {
  json r = Base(m, "decode_throughput_64_16", "decode", 80);
  r["metrics"]["decode_throughput"] = {{"median", tokens_per_s},
                                       {"ci95_low", tokens_per_s * 0.99},
                                       {"ci95_high", tokens_per_s * 1.01},
                                       {"n", 5},
                                       {"unit", "tokens/s"}};
  return r;
}

// An eval result over questions q1..q10, two attempts each; `right` lists the keys answered
// correctly. Its accuracy is given (median and interval) as the harness would have stored it.
json Eval(const Model& m, const std::vector<std::string>& right, double low, double high,
          const std::vector<std::string>& extra_keys = {}, int n_ctx = 512) {
  json r = Base(m, "eval_math_500_2026.06.1", "eval", n_ctx);
  r["eval"] = {{"dataset", "math_500"}, {"repeats", 2}};
  json completions = json::array();
  std::vector<std::string> keys;
  for (int q = 1; q <= 10; ++q) {
    for (int k = 0; k < 2; ++k) keys.push_back(Key(q, k));
  }
  keys.insert(keys.end(), extra_keys.begin(), extra_keys.end());
  int correct = 0;
  for (const std::string& key : keys) {
    const bool ok = std::find(right.begin(), right.end(), key) != right.end();
    correct += ok;
    completions.push_back({{"key", key},
                           {"id", key.substr(0, key.find('#'))},
                           {"attempt", key.back() - '0'},
                           {"correct", ok}});
  }
  const double acc = static_cast<double>(correct) / keys.size();
  r["completions"] = completions;
  r["metrics"]["accuracy"] = {{"unit", "ratio"},   {"n", keys.size()}, {"count", correct},
                              {"median", acc},     {"mean", acc},      {"ci95_low", low},
                              {"ci95_high", high}, {"questions", 10}};
  return r;
}

std::vector<std::string> Keys(int first_q, int last_q) {
  std::vector<std::string> out;
  for (int q = first_q; q <= last_q; ++q) {
    out.push_back(Key(q, 0));
    out.push_back(Key(q, 1));
  }
  return out;
}

// F32: q1..q6 right (12 of 20); Q8_0: the same but q6#1 (11 of 20); Q4_0: q1 and q2#0 (3 of 20).
std::vector<json> ThreeQuants() {
  std::vector<std::string> q8 = Keys(1, 6);
  q8.pop_back();
  return {Decode(kF32, 100),         Decode(kQ8, 200),
          Decode(kQ4, 300),          Eval(kF32, Keys(1, 6), 0.40, 0.80),
          Eval(kQ8, q8, 0.35, 0.75), Eval(kQ4, {"q1#0", "q1#1", "q2#0"}, 0.05, 0.30)};
}

const Candidate& Named(const SelectResult& s, const std::string& name) {
  for (const Candidate& c : s.candidates) {
    if (c.config->name == name) return c;
  }
  ADD_FAILURE() << "no candidate " << name;
  return s.candidates.front();
}

TEST(ModelFamily, DropsTheExtensionAndTheQuantization) {
  Configuration c;
  const auto family = [&](const std::string& file, const std::string& quant) {
    c.model_file = file;
    c.quant = quant;
    return ModelFamily(c);
  };
  EXPECT_EQ(family("stories260K-Q8_0.gguf", "Q8_0"), "stories260k");
  EXPECT_EQ(family("stories260K-F32.gguf", "F32"), "stories260k");
  EXPECT_EQ(family("Llama-3.2-1B-Instruct-Q4_K_M.gguf", "Q4_K_M"), "llama-3.2-1b-instruct");
  EXPECT_EQ(family("qwen2.5-0.5b-instruct.IQ2_XXS.gguf", "IQ2_XXS"), "qwen2.5-0.5b-instruct");
  EXPECT_EQ(family("model_f16.gguf", "F16"), "model");
  EXPECT_EQ(family("tinyllama-1.1b.gguf", "Q8_0"), "tinyllama-1.1b");  // nothing to drop
  EXPECT_EQ(family("Q8_0.gguf", "Q8_0"), "q8_0");  // the whole name is never dropped
}

TEST(PairAccuracy, MatchesAttemptsByKeyAndTestsTheDiscordantOnes) {
  // A right on q1..q6 (12), B right on q1..q2 and q3#0 (5): A only right 7 times, B never;
  // q11#0 only in A, q12#0 only in B (left out).
  std::vector<std::string> b_right = Keys(1, 2);
  b_right.push_back("q3#0");
  const json a = Eval(kF32, Keys(1, 6), 0, 1, {"q11#0"});
  const json b = Eval(kQ4, b_right, 0, 1, {"q12#0"});
  const auto p = PairAccuracy(a, b);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->paired, 20u);
  EXPECT_EQ(p->only_a, 7);
  EXPECT_EQ(p->only_b, 0);
  EXPECT_EQ(p->both_correct, 5);
  EXPECT_EQ(p->both_wrong, 8);
  EXPECT_EQ(p->only_in_a, std::vector<std::string>{"q11#0"});
  EXPECT_EQ(p->only_in_b, std::vector<std::string>{"q12#0"});
  EXPECT_DOUBLE_EQ(p->accuracy_a, 0.60);
  EXPECT_DOUBLE_EQ(p->accuracy_b, 0.25);
  EXPECT_DOUBLE_EQ(p->difference, -0.35);
  EXPECT_DOUBLE_EQ(p->p_value, 2.0 / 128);  // 2 x 0.5^7
  EXPECT_LT(p->ci95_low, -0.35);
  EXPECT_GT(p->ci95_high, -0.35);
  EXPECT_LT(p->ci95_high, 0);  // every resample of questions keeps B behind

  // One discordant pair each way: p = 1. No completions: nothing to pair.
  const auto q = PairAccuracy(Eval(kF32, {"q1#0"}, 0, 1), Eval(kQ8, {"q1#1"}, 0, 1));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->only_a, 1);
  EXPECT_EQ(q->only_b, 1);
  EXPECT_DOUBLE_EQ(q->p_value, 1.0);
  EXPECT_FALSE(PairAccuracy(Decode(kF32, 1), Eval(kQ8, {}, 0, 1)).has_value());
}

TEST(AccuracyLimits, DropFromTheBestOfTheSameModelIsPairedAndJudgedOnItsInterval) {
  const std::vector<json> records = ThreeQuants();
  const auto configs = GroupConfigurations(records);
  ASSERT_EQ(configs.size(), 3u);  // each eval joined its configuration's decode result
  for (const Configuration& c : configs) EXPECT_EQ(c.results.size(), 2u) << c.name;
  Limits limits;
  limits.max_accuracy_drop = {{"math_500", 10}};
  const SelectResult s = Select(configs, limits);

  const LimitCheck& f32 = Named(s, "F32").checks.at(0);
  EXPECT_EQ(f32.limit, "max_accuracy_drop");
  EXPECT_EQ(f32.eval, "math_500");
  EXPECT_EQ(f32.verdict, Verdict::kPass);  // the reference: exactly 0
  EXPECT_DOUBLE_EQ(f32.value, 0);
  EXPECT_DOUBLE_EQ(f32.ci95_high, 0);

  // Q8_0 misses one attempt F32 got: 5 pp, the paired interval [0, 15] crosses 10.
  const LimitCheck& q8 = Named(s, "Q8_0").checks.at(0);
  EXPECT_EQ(q8.verdict, Verdict::kBorderline);
  EXPECT_DOUBLE_EQ(q8.value, 5);
  EXPECT_DOUBLE_EQ(q8.ci95_low, 0);
  EXPECT_DOUBLE_EQ(q8.ci95_high, 15);
  EXPECT_EQ(q8.n, 20u);
  EXPECT_NE(q8.text.find("paired on 20 attempts, McNemar p = 1"), std::string::npos) << q8.text;

  // Q4_0: 45 pp down, the whole interval above 10.
  const Candidate& q4 = Named(s, "Q4_0");
  EXPECT_EQ(q4.verdict, Verdict::kFail);
  EXPECT_DOUBLE_EQ(q4.checks.at(0).value, 45);
  EXPECT_GT(q4.checks.at(0).ci95_low, 10);
  EXPECT_NE(q4.checks.at(0).text.find("McNemar p = 0.00391"), std::string::npos)
      << q4.checks.at(0).text;
  EXPECT_NE(q4.checks.at(0).text.find("misses it by 35 pp"), std::string::npos);

  // Accuracy is the quality objective: F32 (most accurate) and Q8_0 (faster) on the front.
  EXPECT_EQ(s.quality_metric, "accuracy");
  EXPECT_EQ(s.quality_benchmark, "eval_math_500_2026.06.1");
  EXPECT_DOUBLE_EQ(*Named(s, "F32").quality, 60);
  EXPECT_DOUBLE_EQ(*Named(s, "F32").quality_ci95_low, 40);
  EXPECT_EQ(Named(s, "F32").accuracy_attempts, 20u);
  EXPECT_TRUE(Named(s, "F32").on_front);
  EXPECT_TRUE(Named(s, "Q8_0").on_front);
  EXPECT_EQ(s.candidates.back().config->name, "Q4_0");  // failed: last
}

TEST(AccuracyLimits, ReferenceMinimumAndUnmeasured) {
  const std::vector<json> records = ThreeQuants();
  const auto configs = GroupConfigurations(records);
  auto q8 = ReferenceNamed(configs, "Q8_0");
  ASSERT_TRUE(q8.ok());
  EXPECT_EQ((*q8)->quant, "Q8_0");
  EXPECT_TRUE(ReferenceNamed(configs, "Q4_0.gguf").ok());  // by model file name
  auto none = ReferenceNamed(configs, "Q5_K");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message.rfind("--reference Q5_K names no configuration", 0), 0u);
  EXPECT_FALSE(ReferenceNamed(configs, "stories260K").ok());  // three files match

  Limits limits;
  limits.accuracy_reference = "Q8_0";
  limits.max_accuracy_drop = {{"eval_math_500_2026.06.1", 3}};
  limits.min_accuracy = {{"math_500", 0.5}, {"gpqa_diamond", 0.3}};
  const SelectResult s = Select(configs, limits);
  const Candidate& f32 = Named(s, "F32");
  ASSERT_EQ(f32.checks.size(), 3u);
  // min_accuracy 50%: F32 60% [40, 80] crosses it; gpqa_diamond was never measured.
  EXPECT_EQ(f32.checks[0].limit, "min_accuracy");
  EXPECT_EQ(f32.checks[0].verdict, Verdict::kBorderline);
  EXPECT_DOUBLE_EQ(f32.checks[0].threshold, 50);
  EXPECT_EQ(f32.checks[1].verdict, Verdict::kFail);
  EXPECT_FALSE(f32.checks[1].measured);
  EXPECT_EQ(f32.checks[1].text,
            "accuracy on gpqa_diamond not measured (no eval result): cannot check limit 30%");
  // Against Q8_0, F32 gains 5 points: a drop of -5 [-15, 0] passes a limit of 3.
  EXPECT_EQ(f32.checks[2].verdict, Verdict::kPass);
  EXPECT_DOUBLE_EQ(f32.checks[2].value, -5);
  EXPECT_DOUBLE_EQ(Named(s, "Q8_0").checks[2].value, 0);
  // Q4_0 at 15% [5, 30] is below 50% whatever the interval.
  EXPECT_EQ(Named(s, "Q4_0").checks[0].verdict, Verdict::kFail);
}

TEST(AccuracyLimits, EvalWithItsOwnContextIsAnotherConfigurationAndKlStaysQualityWithoutEvals) {
  // n_ctx 256 given for the eval (not the model's 512 training context): not the same
  // configuration as the decode result.
  const std::vector<json> records = {Decode(kQ8, 200), Eval(kQ8, {}, 0, 0, {}, 256)};
  EXPECT_EQ(GroupConfigurations(records).size(), 2u);
  const std::vector<json> speed_only = {Decode(kQ8, 200), Decode(kQ4, 300)};
  const SelectResult s = Select(GroupConfigurations(speed_only), Limits{});
  EXPECT_EQ(s.quality_metric, "");
  EXPECT_EQ(s.quality_benchmark, "");
}

}  // namespace
}  // namespace pipette
