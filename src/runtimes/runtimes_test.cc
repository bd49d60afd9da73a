// The runtimes of this build: their setting definitions agree with what the readers filter on,
// and choices are checked before anything is touched.
#include <gtest/gtest.h>

#include <algorithm>

#include "pipette/runtimes.h"
#include "pipette/store.h"
#include "runtimes/llamacpp/driver_client.h"
#include "runtimes/llamacpp/llamacpp_runtime.h"
#include "runtimes/llamacpp/protocol.h"

namespace pipette {
namespace {

// Found by fuzz/fuzz_driver_reply.cc's first runs: replies whose fields had other types threw out
// of the runtime (a driver on a device is outside input).
TEST(DriverReplies, AReplyOfAnotherShapeIsAnErrorOfItsStageNeverAnException) {
  namespace p = protocol;
  const auto line = [](const char* text) { return ReplyFromLine(text, "decode"); };
  EXPECT_EQ(line(R"({"ok": 1})").error().message, "unknown runtime error");
  EXPECT_EQ(line(R"({"ok": false, "error": 7, "stage": []})").error().stage, "decode");
  EXPECT_EQ(line(R"({"ok": false, "error": "no room", "stage": "context"})").error().stage,
            "context");
  EXPECT_EQ(line("[1]").error().message, "runtime process sent an unreadable reply during decode");
  ASSERT_TRUE(line(R"({"ok": true, "step_ns": "x"})").ok());

  const auto decode = p::ReadReply<p::DecodeReply>(*line(R"({"ok": true, "step_ns": "x"})"),
                                                   p::kDecode);
  ASSERT_FALSE(decode.ok());
  EXPECT_EQ(decode.error().stage, "decode");
  EXPECT_NE(decode.error().message.find("the runtime's decode reply does not fit the protocol"),
            std::string::npos);
  EXPECT_FALSE(p::ReadReply<p::PrefillReply>(nlohmann::json::parse(R"({"prefill_ns": 1e300})"),
                                             p::kPrefill)
                   .ok());
  EXPECT_FALSE(p::ReadReply<p::TokenizeReply>(nlohmann::json::parse(R"({"tokens": [1, "2"]})"),
                                              "input")
                   .ok());
  const auto good = p::ReadReply<p::GenerateReply>(
      nlohmann::json::parse(R"({"ok": true, "token_ns": [5, 9], "text": "hi"})"), p::kGenerate);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->token_ns.size(), 2u);

  const nlohmann::json asked = {{"n_batch", 2048}, {"n_ubatch", 512}, {"n_ctx", 0}};
  EXPECT_FALSE(LoadFactsFromReply(nlohmann::json::parse(R"({"effective": {"n_batch": "x"}})"),
                                  asked)
                   .ok());
  EXPECT_FALSE(LoadFactsFromReply(nlohmann::json::parse(R"({"runtime": {"system_info": 3}})"),
                                  asked)
                   .ok());
  const auto facts = LoadFactsFromReply(
      nlohmann::json::parse(R"({"effective": {"n_batch": 512}, "warnings": ["w", 3]})"), asked);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->warnings.size(), 2u);  // "w", and n_batch 512 where 2048 was asked
}

// Parallel completions (eval --parallel): the seq_* requests carry the slot and the check
// interval, their replies are checked like every other, and llama.cpp's cap of n_batch at the
// whole context counts every sequence's n_ctx.
TEST(DriverReplies, ParallelCompletionRepliesAreCheckedAndTheBatchCapCountsEverySequence) {
  namespace p = protocol;
  p::CompleteRequest r;
  r.message = "2+2?";
  r.max_tokens = 64;
  r.n = 32;
  const nlohmann::json start = p::SeqStartRequest(r, 3, 32);
  EXPECT_EQ(start["cmd"], p::kSeqStart);
  EXPECT_EQ(start["slot"], 3);
  EXPECT_EQ(start["check_every"], 32);
  EXPECT_FALSE(start.contains("n"));
  EXPECT_EQ(start["max_tokens"], 64);

  const auto step = p::ReadReply<p::SeqStepReply>(
      nlohmann::json::parse(R"({"ok": true, "slots": [{"slot": 1, "text": "ab", "tokens": 2,
        "checks": [{"tokens": 32, "bytes": 1, "decode_ns": 7}]}, {"slot": 2, "done": true,
        "stop": "eos"}]})"),
      p::kSeqStep);
  ASSERT_TRUE(step.ok());
  ASSERT_EQ(step->slots.size(), 2u);
  EXPECT_EQ(step->slots[0].checks.at(0).bytes, 1);
  EXPECT_EQ(step->slots[1].stop, "eos");
  for (const char* bad : {R"({"slots": [{"slot": "x"}]})",
                          R"({"slots": [{"checks": [{"bytes": 1.5}]}]})", R"({"slots": 3})"}) {
    const auto r = p::ReadReply<p::SeqStepReply>(nlohmann::json::parse(bad), p::kSeqStep);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().stage, p::kSeqStep);
  }
  const auto started = p::ReadReply<p::SeqStartReply>(
      nlohmann::json::parse(R"({"prompt_tokens": 9, "prompt_format": "raw",
        "chunk": {"slot": 0, "text": "x", "tokens": 1, "first_token_ns": 5}})"),
      p::kSeqStart);
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(started->chunk.first_token_ns, 5);

  // n_ctx 512 per sequence, 4 sequences: llama.cpp keeps n_batch 2048 (its whole context), which
  // is no change worth a warning; with one sequence it caps it at 512.
  const nlohmann::json four = {{"n_batch", 2048}, {"n_ubatch", 512}, {"n_ctx", 512}, {"n_seq", 4}};
  const auto kept = LoadFactsFromReply(
      nlohmann::json::parse(R"({"effective": {"n_batch": 2048, "n_ubatch": 512}})"), four);
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->warnings.empty());
  const nlohmann::json one = {{"n_batch", 2048}, {"n_ubatch", 512}, {"n_ctx", 512}};
  const auto capped = LoadFactsFromReply(
      nlohmann::json::parse(R"({"effective": {"n_batch": 512, "n_ubatch": 512}})"), one);
  ASSERT_TRUE(capped.ok());
  EXPECT_TRUE(capped->warnings.empty());
}

TEST(Runtimes, EverySettingOfEveryRuntimeCanBeFilteredOn) {
  const auto& known = RecordedSettingNames();
  for (const std::string& name : RuntimeNames()) {
    auto defs = RuntimeSettingDefs(name);
    ASSERT_TRUE(defs.ok()) << name << ": " << defs.error().message;
    for (const SettingDef& d : *defs) {
      EXPECT_NE(std::find(known.begin(), known.end(), d.name), known.end())
          << name << "'s setting " << d.name << " is missing from RecordedSettingNames()";
      EXPECT_FALSE(d.meaning.empty()) << name << "." << d.name;
    }
  }
}

TEST(Runtimes, ASettingSharedByRuntimesHasOneDefinition) {
  auto a = RuntimeSettingDefs("llamacpp");
  auto b = RuntimeSettingDefs("llamacpp-stock");
  ASSERT_TRUE(a.ok() && b.ok());
  for (const SettingDef& d : *b) {
    const SettingDef* same = FindSetting(*a, d.name);
    if (same == nullptr) continue;
    EXPECT_EQ(same->default_value, d.default_value) << d.name;
    EXPECT_EQ(same->min, d.min) << d.name;
    EXPECT_EQ(same->max, d.max) << d.name;
    EXPECT_EQ(same->choices, d.choices) << d.name;
  }
}

TEST(Runtimes, ChoicesAreCheckedBeforeAnythingRuns) {
  RuntimeChoice c;
  c.name = "vllm";
  EXPECT_EQ(CheckRuntimeChoice(c).error().message,
            "unknown runtime 'vllm'; the runtimes are: llamacpp, llamacpp-stock, openai");
  c.name = "llamacpp-stock";
  EXPECT_NE(CheckRuntimeChoice(c).error().message.find("needs the runtime directory"),
            std::string::npos);
  c.name = "openai";
  c.dir = "/opt/llama/bin";
  EXPECT_EQ(CheckRuntimeChoice(c).error().message, "runtime openai takes no runtime directory");
}

TEST(Runtimes, ASettingTheRuntimeDoesNotTakeIsNamed) {
  auto defs = RuntimeSettingDefs("openai");
  ASSERT_TRUE(defs.ok());
  const Status s = CheckSettings("openai", *defs, {{"type_k", "q8_0"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "runtime openai does not take the setting type_k; it takes: none");
  const Status server = CheckSettings("openai", *defs, {{"server", "/bin/true"}});
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.error().message.find("records server from where it runs"), std::string::npos)
      << server.error().message;
}

}  // namespace
}  // namespace pipette
