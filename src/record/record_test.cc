#include "pipette/record.h"

#include <gtest/gtest.h>

#include <limits>

namespace pipette {
namespace {

using nlohmann::json;

json Sample() {
  return json::parse(R"({
    "schema": "pipette.result/1",
    "result_id": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
    "config_id": "ab12",
    "status": "ok",
    "benchmark": {"id": "decode-p512-d128", "type": "decode", "prefill_tokens": 512},
    "model": {"quant": "Q8_0", "size_bytes": 1024, "synthetic": false, "sha256": null},
    "runtime": {"backends": ["CPU", "CUDA"], "settings": {"threads": 4, "flash_attn": true}},
    "device": {"gpus": [{"name": "H200"}], "cpu": {"logical_cores": 16}},
    "harness": {"ci_target": 0.02},
    "metrics": {
      "decode_throughput": {"unit": "tokens/s", "n": 5, "median": 101.5, "ci95_low": 99.0,
                            "ci95_high": 103.25, "cv": 0.01},
      "max_host_usage": {"unit": 7, "median": "big"},
      "broken": 3
    },
    "logs": {"warnings": ["offload: 2 layers on the CPU", 42, {"op": "ROPE"}]}
  })");
}

TEST(RecordFind, PointsIntoTheRecordOrIsNull) {
  const json r = Sample();
  const json* threads = record::Find(r, "/runtime/settings/threads");
  ASSERT_NE(threads, nullptr);
  EXPECT_EQ(threads, &r["runtime"]["settings"]["threads"]);
  ASSERT_NE(record::Find(r, "/device/gpus/0/name"), nullptr);  // through an array
  EXPECT_EQ(*record::Find(r, "/device/gpus/0/name"), "H200");
  EXPECT_EQ(record::Find(r, "/device/gpus/1/name"), nullptr);
  EXPECT_EQ(record::Find(r, "/runtime/settings/n_ctx"), nullptr);
  EXPECT_EQ(record::Find(r, "/benchmark/id/deeper"), nullptr);  // below a string: nothing
  ASSERT_NE(record::Find(r, "/model/sha256"), nullptr);         // a stored null is there
  EXPECT_TRUE(record::Find(r, "/model/sha256")->is_null());
}

TEST(RecordFind, AnythingButAnObjectOrArrayHasNoFields) {
  for (const json& j : {json(), json(3), json("text"), json(true), json::array()}) {
    EXPECT_EQ(record::Find(j, "/status"), nullptr) << j.dump();
    EXPECT_EQ(record::StringAt(j, "/status"), "") << j.dump();
    EXPECT_EQ(record::TextAt(j, "/status"), "") << j.dump();
    EXPECT_EQ(record::NumberAt(j, "/status"), std::nullopt) << j.dump();
    EXPECT_EQ(record::MetricValue(j, "decode_throughput"), std::nullopt) << j.dump();
    EXPECT_EQ(record::MetricUnit(j, "decode_throughput"), "") << j.dump();
    EXPECT_TRUE(record::Warnings(j).empty()) << j.dump();
    EXPECT_FALSE(record::IsOk(j)) << j.dump();
  }
}

TEST(RecordFind, AMalformedPointerThrows) {
  EXPECT_THROW(record::Find(Sample(), "status"), json::parse_error);
  EXPECT_THROW(record::StringAt(Sample(), "/a~2"), json::parse_error);
}

TEST(RecordValueAt, CopiesTheValueOrNull) {
  const json r = Sample();
  EXPECT_EQ(record::ValueAt(r, "/runtime/backends"), json::parse(R"(["CPU", "CUDA"])"));
  EXPECT_TRUE(record::ValueAt(r, "/runtime/version").is_null());
  EXPECT_TRUE(record::ValueAt(r, "/model/sha256").is_null());
}

TEST(RecordStringAt, OnlyStrings) {
  const json r = Sample();
  EXPECT_EQ(record::StringAt(r, "/model/quant"), "Q8_0");
  EXPECT_EQ(record::StringAt(r, "/benchmark/prefill_tokens"), "");  // a number is not converted
  EXPECT_EQ(record::StringAt(r, "/model/sha256"), "");              // null
  EXPECT_EQ(record::StringAt(r, "/runtime/backends"), "");
  EXPECT_EQ(record::StringAt(r, "/runtime/version"), "");  // absent
}

TEST(RecordTextAt, StringsAsTheyAreOtherValuesAsJson) {
  const json r = Sample();
  EXPECT_EQ(record::TextAt(r, "/model/quant"), "Q8_0");
  EXPECT_EQ(record::TextAt(r, "/benchmark/prefill_tokens"), "512");
  EXPECT_EQ(record::TextAt(r, "/runtime/settings/flash_attn"), "true");
  EXPECT_EQ(record::TextAt(r, "/harness/ci_target"), "0.02");
  EXPECT_EQ(record::TextAt(r, "/runtime/backends"), R"(["CPU","CUDA"])");
  EXPECT_EQ(record::TextAt(r, "/model/sha256"), "");  // null
  EXPECT_EQ(record::TextAt(r, "/runtime/version"), "");
}

TEST(RecordNumberAt, FiniteNumbersOnly) {
  json r = Sample();
  EXPECT_EQ(record::NumberAt(r, "/benchmark/prefill_tokens"), 512.0);
  EXPECT_EQ(record::NumberAt(r, "/harness/ci_target"), 0.02);
  EXPECT_EQ(record::NumberAt(r, "/model/quant"), std::nullopt);
  EXPECT_EQ(record::NumberAt(r, "/model/synthetic"), std::nullopt);  // a boolean is no number
  EXPECT_EQ(record::NumberAt(r, "/harness/reps"), std::nullopt);
  r["harness"]["reps"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(record::NumberAt(r, "/harness/reps"), std::nullopt);
  r["harness"]["reps"] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(record::NumberAt(r, "/harness/reps"), std::nullopt);
}

TEST(RecordNamedFields, BenchmarkIdConfigIdStatus) {
  json r = Sample();
  EXPECT_EQ(record::BenchmarkId(r), "decode-p512-d128");
  EXPECT_EQ(record::ConfigId(r), "ab12");
  EXPECT_TRUE(record::IsOk(r));
  r["status"] = "failed";
  EXPECT_FALSE(record::IsOk(r));
  r["status"] = "OK";
  EXPECT_FALSE(record::IsOk(r));
  r.erase("status");
  r["benchmark"]["id"] = 7;
  r["config_id"] = nullptr;
  EXPECT_FALSE(record::IsOk(r));
  EXPECT_EQ(record::BenchmarkId(r), "");
  EXPECT_EQ(record::ConfigId(r), "");
}

TEST(RecordWarnings, InOrderNonStringsAsJson) {
  json r = Sample();
  EXPECT_EQ(record::Warnings(r),
            (std::vector<std::string>{"offload: 2 layers on the CPU", "42", R"({"op":"ROPE"})"}));
  r["logs"]["warnings"] = "one string, not a list";
  EXPECT_TRUE(record::Warnings(r).empty());
  r.erase("logs");
  EXPECT_TRUE(record::Warnings(r).empty());
}

// Issue 27: "load: bad special token: ..." showed as a warning box; the loader's harmless notes
// are read apart from the warnings, from logs.notes and from older records' logs.warnings alike.
TEST(RecordNotes, TheEnginesHarmlessLinesAreNotesNotWarnings) {
  const std::string bad_token =
      "load: bad special token: 'tokenizer.ggml.seperator_token_id' = 4294967295, using default "
      "id -1";
  const std::string control =
      "load: control-looking token:    106 '<end_of_turn>' was not control-type; this is "
      "probably a bug in the model. its type will be overridden";
  EXPECT_TRUE(record::IsEngineNote(bad_token));
  EXPECT_TRUE(record::IsEngineNote(control));
  EXPECT_FALSE(record::IsEngineNote("llama.cpp used n_batch = 256, not the 2048 asked for"));
  EXPECT_FALSE(record::IsEngineNote("load: special_eos_id is not in special_eog_ids - the "
                                    "tokenizer config may be incorrect"));
  json r = {{"logs", {{"warnings", {"offload: 2 layers on the CPU", bad_token}},
                      {"notes", {control}}}}};
  EXPECT_EQ(record::Warnings(r), std::vector<std::string>{"offload: 2 layers on the CPU"});
  EXPECT_EQ(record::Notes(r), (std::vector<std::string>{control, bad_token}));
  r.erase("logs");
  EXPECT_TRUE(record::Notes(r).empty());
}

TEST(RecordMetricValue, FieldsOfAMetricObject) {
  const json r = Sample();
  EXPECT_EQ(record::MetricValue(r, "decode_throughput"), 101.5);  // median by default
  EXPECT_EQ(record::MetricValue(r, "decode_throughput", "ci95_low"), 99.0);
  EXPECT_EQ(record::MetricValue(r, "decode_throughput", "ci95_high"), 103.25);
  EXPECT_EQ(record::MetricValue(r, "decode_throughput", "n"), 5.0);
  EXPECT_EQ(record::MetricValue(r, "decode_throughput", "cv"), 0.01);
  EXPECT_EQ(record::MetricValue(r, "decode_throughput", "p99"), std::nullopt);
  EXPECT_EQ(record::MetricValue(r, "decode_throughput", "unit"), std::nullopt);
  EXPECT_EQ(record::MetricValue(r, "max_host_usage"), std::nullopt);  // not a number
  EXPECT_EQ(record::MetricValue(r, "broken"), std::nullopt);          // not an object
  EXPECT_EQ(record::MetricValue(r, "prefill_throughput"), std::nullopt);
}

TEST(RecordMetricValue, NoMetricsOrNonFiniteValues) {
  json r = Sample();
  r["metrics"]["decode_throughput"]["median"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(record::MetricValue(r, "decode_throughput"), std::nullopt);
  r["metrics"] = json::array();
  EXPECT_EQ(record::MetricValue(r, "decode_throughput"), std::nullopt);
  r.erase("metrics");
  EXPECT_EQ(record::MetricValue(r, "decode_throughput"), std::nullopt);
}

TEST(RecordMetricValue, NamesAreKeysNotPointers) {
  json r = Sample();
  r["metrics"]["a/b~c"] = {{"unit", "ms"}, {"median", 2.5}};
  EXPECT_EQ(record::MetricValue(r, "a/b~c"), 2.5);
  EXPECT_EQ(record::MetricUnit(r, "a/b~c"), "ms");
}

TEST(RecordMetricUnit, StringsOnly) {
  const json r = Sample();
  EXPECT_EQ(record::MetricUnit(r, "decode_throughput"), "tokens/s");
  EXPECT_EQ(record::MetricUnit(r, "max_host_usage"), "");  // a number is no unit
  EXPECT_EQ(record::MetricUnit(r, "broken"), "");
  EXPECT_EQ(record::MetricUnit(r, "prefill_throughput"), "");
}

}  // namespace
}  // namespace pipette
