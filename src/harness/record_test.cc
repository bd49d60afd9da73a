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

}  // namespace
}  // namespace pipette
