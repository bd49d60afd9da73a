#include <gtest/gtest.h>

#include "harness/fake_runtime.h"
#include "harness/record.h"

namespace pipette {
namespace {

using nlohmann::json;

json Skeleton() {
  return {{"model", {{"sha256", "ab"}, {"quant", "Q8_0"}}},
          {"runtime",
           {{"name", "llamacpp"}, {"version", "llama.cpp@80fb11a"}, {"commit", "80fb11a"},
            {"settings", {{"threads", 2}, {"mmap", false}}}}},
          {"device", {{"id", "dev"}, {"label", "x"}}},
          {"benchmark", {{"id", "decode_throughput_256_100"}, {"methodology", "pipette-method/1"}}},
          {"result_id", "r1"}};
}

TEST(Record, MetricUnits) {
  EXPECT_EQ(MetricUnit("prefill_throughput"), "tokens/s");
  EXPECT_EQ(MetricUnit("decode_throughput"), "tokens/s");
  EXPECT_EQ(MetricUnit("ttft"), "ms");
  EXPECT_EQ(MetricUnit("end_to_end_latency"), "ms");
  EXPECT_EQ(MetricUnit("max_host_usage"), "bytes");
}

TEST(Record, ConfigIdCoversConfigurationOnly) {
  const json a = Skeleton();
  json b = a;
  b["result_id"] = "r2";
  b["device"]["label"] = "other";  // not part of the configuration
  EXPECT_EQ(ConfigId(a), ConfigId(b));
  json c = a;
  c["runtime"]["settings"]["threads"] = 1;
  EXPECT_NE(ConfigId(a), ConfigId(c));
  json d = a;
  d["model"]["quant"] = "Q4_0";
  EXPECT_NE(ConfigId(a), ConfigId(d));
  EXPECT_EQ(ConfigId(a).size(), 64u);
}

TEST(Record, MissingModelIsBadInput) {
  testing::FakeScript script;
  CellSpec spec;
  spec.runtime = std::make_shared<testing::FakeRuntime>(script);
  spec.model_path = "/nonexistent/model.gguf";
  spec.benchmark = *ParseBenchmarkId("prefill_throughput_8");
  auto r = ResolveCell(spec, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/model.gguf"), std::string::npos);
}

TEST(Record, BadSettingsAreRejected) {
  testing::FakeScript script;
  CellSpec spec;
  spec.runtime = std::make_shared<testing::FakeRuntime>(script);
  spec.model_path = "/nonexistent/model.gguf";
  spec.benchmark = *ParseBenchmarkId("prefill_throughput_8");
  spec.settings["flash_attn"] = "maybe";
  auto r = ResolveCell(spec, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("flash_attn"), std::string::npos);
}

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

TEST(Record, WarningsAreKeptOnceEach) {
  nlohmann::json r = nlohmann::json::object();
  AddWarning(r, "a");
  AddWarning(r, "b");
  AddWarning(r, "a");
  EXPECT_EQ(r["logs"]["warnings"], nlohmann::json::array({"a", "b"}));
  LoadFacts facts;
  facts.warnings = {"b", "c"};
  facts.effective = {{"n_ctx", 512}};
  r["runtime"]["settings"] = {{"n_ctx", 0}};
  RecordLoadFacts(facts, r);
  const auto& w = r["logs"]["warnings"];
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[2], "c");
  EXPECT_EQ(r["runtime"]["effective"]["n_ctx"], 512);
  EXPECT_EQ(r["runtime"]["settings"]["n_ctx"], 0);  // as resolved, never overwritten
}

// Issue 27: llama.cpp's loader notes go to logs.notes, once each, not among the warnings.
TEST(Record, TheEnginesHarmlessNotesAreKeptApart) {
  nlohmann::json r = nlohmann::json::object();
  const std::string note =
      "load: bad special token: 'tokenizer.ggml.padding_token_id' = 4294967295, using default "
      "id -1";
  LoadFacts facts;
  facts.warnings = {note, "llama.cpp used n_batch = 256, not the 2048 asked for", note};
  RecordLoadFacts(facts, r);
  EXPECT_EQ(r["logs"]["warnings"],
            nlohmann::json::array({"llama.cpp used n_batch = 256, not the 2048 asked for"}));
  EXPECT_EQ(r["logs"]["notes"], nlohmann::json::array({note}));
}

TEST(BigCoresWarning, SaysWhenThreadsRunOnSlowerCores) {
  const nlohmann::json phone = {
      {"clusters", {{{"cpus", "0-3"}, {"max_khz", 1800000}}, {{"cpus", "4-7"}, {"max_khz", 2400000}}}}};
  EXPECT_EQ(BigCoresWarning(phone, {{"threads", 4}}), "");
  EXPECT_EQ(BigCoresWarning(phone, {{"threads", 6}}),
            "threads 6 exceed its 4 big cores (CPUs 4-7, up to 2400 MHz) on this big.LITTLE "
            "device; the other threads run on slower cores, which usually slows decode down");
  EXPECT_EQ(BigCoresWarning(phone, {{"threads", 2}, {"cpus", "3-4"}}),
            "threads 2 exceed the big cores: 1 of the given CPUs 3-4 are big cores (CPUs 4-7); "
            "the other threads run on slower cores, which usually slows decode down");
  EXPECT_EQ(BigCoresWarning(phone, {{"threads", 2}, {"cpus", "4-5"}}), "");
  const nlohmann::json uniform = {{"clusters", {{{"cpus", "0-7"}, {"max_khz", 3000000}}}}};
  EXPECT_EQ(BigCoresWarning(uniform, {{"threads", 8}}), "");
  EXPECT_EQ(BigCoresWarning(nlohmann::json::object(), {{"threads", 8}}), "");
}

}  // namespace
}  // namespace pipette
