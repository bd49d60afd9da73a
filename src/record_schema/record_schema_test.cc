#include "pipette/record_schema.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pipette/store.h"
#include "base/utf8.h"

namespace pipette {
namespace {

using nlohmann::json;

// A complete ok record of the shape src/harness/record.cc writes (values from a real
// stories260K decode cell, trimmed).
json GoodRecord() {
  return json::parse(R"({
    "schema": "pipette.result/1",
    "result_id": "019ad9f2-7c1e-7a3b-9f00-0123456789ab",
    "config_id": "5f1c9e0d2b7a4c3e8d6f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f",
    "status": "ok",
    "benchmark": {"id": "decode_throughput_8_16", "type": "decode", "prefill_tokens": 8,
                  "decode_tokens": 16, "methodology": "pipette-method/1"},
    "model": {"path": "/models/stories260K-Q8_0.gguf", "file_name": "stories260K-Q8_0.gguf",
              "sha256": "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90",
              "size_bytes": 300000, "gguf_version": 3, "architecture": "llama",
              "name": "stories260K", "params": 260000, "quant": "Q8_0",
              "quant_inferred": false, "file_type": 7, "tensor_types": {"q8_0": 12, "f32": 5},
              "tensor_bytes": 290000, "n_ctx_train": 512, "vocab_size": 512, "n_embd": 64,
              "n_layer": 5, "n_head": 8, "n_head_kv": 4, "n_ff": 172, "synthetic": false,
              "synth": null},
    "runtime": {"name": "llamacpp", "version": "b1-18a2580", "commit": "18a2580",
                "backends": [{"name": "CPU", "type": "cpu", "description": "x86"}],
                "build": {"GGML_NATIVE": "ON"},
                "settings": {"threads": 1, "n_gpu_layers": 0, "mmap": true, "flash_attn": "auto",
                             "n_batch": 2048, "n_ubatch": 512, "type_k": "f16",
                             "type_v": "f16", "n_ctx": 24, "poll": 50},
                "effective": {"n_ctx": 256, "n_batch": 256, "n_ubatch": 256,
                              "flash_attn": "on", "cpus": "0-1"}},
    "device": {"id": "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
               "label": "", "os": {"name": "Debian GNU/Linux", "version_id": "12",
               "pretty_name": null, "kernel": "6.1.0", "arch": "x86_64"},
               "cpu": {"model": "AMD EPYC", "vendor": "AuthenticAMD", "physical_cores": 2,
                       "logical_cores": 2, "smt": false, "flags_hash": null, "caches": []},
               "board": null, "frequency": null, "memory_bytes": 8589934592,
               "swap_bytes": 0, "governor": null, "gpus": [],
               "power": {"source": "unknown", "profile": null, "profile_source": null},
               "thermal_zones": [], "virtualized": true,
               "memory_bandwidth_bytes_per_s": null},
    "harness": {"version": "0.1.0", "commit": "9d32ca9", "compiler": "GNU 12.2.0",
                "build_type": "Release", "cxx_flags": "-O3", "warmup_runs": 1, "min_reps": 3,
                "max_reps": 3, "ci_target": 0.05, "request_timeout_s": 600, "spin_up_ms": 0,
                "environment": {},
                "readiness": {"policy": null, "waits": [{"waited_s": 0.5, "polls": 2,
                  "observation": {"hottest_cpu_celsius": null, "hottest_zone": "",
                                  "hottest_type": "", "busy_fraction": 0.1,
                                  "throttling": null, "ready": true}}]},
                "reps": 3, "ci_reached": true,
                "timing": {"cell_wall_ms": 812.5, "warmup_and_measured_ms": 40.1,
                           "readiness_wait_ms": 1500.0, "load_ms": 20.0}},
    "input": {"prompt_tokens": 8,
              "prompt_sha256": "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
              "text_sha256": "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"},
    "metrics": {"decode_throughput": {"unit": "tokens/s", "n": 3, "median": 2100.5,
                                      "mean": 2101.0, "stddev": 3.2, "cv": 0.0015,
                                      "min": 2097.0, "max": 2105.0, "ci95_low": 2097.0,
                                      "ci95_high": 2105.0}},
    "samples": [{"rep": 1, "started_at": "2026-12-01T10:00:00.100Z", "tokens_in": 8,
                 "tokens_out": 16, "thermal_before": [], "thermal_after": [],
                 "decode_throughput": 2100.5, "inter_token_latency": [0.47, 0.48]}],
    "started_at": "2026-12-01T10:00:00.000Z",
    "finished_at": "2026-12-01T10:00:01.000Z",
    "logs": {"warnings": [], "runtime_stderr_tail": ""}
  })");
}

// The verdict on `record`, from ValidateRecord and from ParseRecord over its text, which must
// agree.
std::string Check(const json& record) {
  const Status s = ValidateRecord(record);
  const std::string by_value = s.ok() ? "ok" : s.error().message;
  const Result<json> parsed = ParseRecord(record.dump());
  EXPECT_EQ(parsed.ok() ? "ok" : parsed.error().message, by_value)
      << "ParseRecord and ValidateRecord disagree";
  if (parsed.ok()) {
    EXPECT_EQ(*parsed, record);
  }
  return by_value;
}

std::string ParseError(const std::string& text) {
  const Result<json> parsed = ParseRecord(text);
  return parsed.ok() ? "ok" : parsed.error().message;
}

TEST(RecordSchema, AGoodRecordPasses) { EXPECT_EQ(Check(GoodRecord()), "ok"); }

// Found by fuzz/fuzz_record_schema: RapidJSON's full-precision reading shifted by an exponent
// of 300 million (undefined behaviour); no double holds such a number.
TEST(RecordSchema, ANumberWithAnExponentNoDoubleHoldsIsRefused) {
  const auto error = [](const std::string& text) {
    const auto r = ParseRecord(text);
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(error(R"({"a": 1e-303183745})"),
            "not valid JSON (byte 7: a number's exponent is out of range)");
  EXPECT_EQ(error(R"({"a": 0.5E+99999})"),
            "not valid JSON (byte 9: a number's exponent is out of range)");
  // In strings, and exponents a double can hold, nothing is refused for it.
  for (const char* fine : {R"({"a": "1e-303183745"})", R"({"a": 1e-0000300})"}) {
    EXPECT_EQ(error(fine).find("exponent"), std::string::npos) << fine;
  }
}

TEST(RecordSchema, TheEmbeddedTextIsThePublishedFile) {
  std::ifstream in(std::string(PIPETTE_SOURCE_DIR) + "/docs/schema/pipette.result-1.schema.json");
  ASSERT_TRUE(in) << "docs/schema/pipette.result-1.schema.json is missing";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(RecordSchemaText(), text.str());
  const json schema = json::parse(RecordSchemaText());
  EXPECT_EQ(schema["$schema"], "http://json-schema.org/draft-04/schema#");
}

TEST(RecordSchema, AMissingBenchmarkIdIsNamed) {
  json r = GoodRecord();
  r["benchmark"].erase("id");
  EXPECT_EQ(Check(r), "/benchmark/id: required but missing");
}

TEST(RecordSchema, AStringMedianIsNamed) {
  json r = GoodRecord();
  r["metrics"]["decode_throughput"]["median"] = "2100.5";
  EXPECT_EQ(Check(r), "/metrics/decode_throughput/median: expected a number, got a string");
}

TEST(RecordSchema, ABadStatusIsNamed) {
  json r = GoodRecord();
  r["status"] = "running";
  EXPECT_EQ(Check(r), "/status: expected one of \"ok\", \"failed\", got \"running\"");
}

TEST(RecordSchema, ANonUuidResultIdIsNamed) {
  json r = GoodRecord();
  r["result_id"] = "019AD9F2-7C1E-7A3B-9F00-0123456789AB";  // upper case
  EXPECT_EQ(Check(r),
            "/result_id: expected a lowercase UUID, got \"019AD9F2-7C1E-7A3B-9F00-0123456789AB\"");
  r["result_id"] = "r1";
  EXPECT_EQ(Check(r), "/result_id: expected a lowercase UUID, got \"r1\"");
}

TEST(RecordSchema, AFailedRecordNeedsItsFailure) {
  json r = GoodRecord();
  r["status"] = "failed";
  r["metrics"] = json::object();
  EXPECT_EQ(Check(r), "/failure: required but missing");
  r["failure"] = {{"stage", "load"}};
  EXPECT_EQ(Check(r), "/failure/message: required but missing");
  r["failure"]["message"] = "";
  EXPECT_EQ(Check(r), "/failure/message: expected a non-empty string");
  r["failure"]["message"] = "the driver exited with status 1 while loading the model";
  EXPECT_EQ(Check(r), "ok");
}

TEST(RecordSchema, AnOkRecordNeedsAMetric) {
  json r = GoodRecord();
  r["metrics"] = json::object();
  EXPECT_EQ(Check(r), "/metrics: expected at least one metric in an ok result");
}

// ParseRecord checks the root anyOf (ok has a metric, failed its failure) apart from the rest, on
// the members it names: the verdict and the failure named are those of the whole schema, where
// the root anyOf is checked last (Check compares both).
TEST(RecordSchema, TheRootRulesAreCheckedAfterEverythingElse) {
  json r = GoodRecord();
  r["metrics"] = json::object();
  r["samples"][0]["rep"] = 1.5;
  EXPECT_EQ(Check(r), "/samples/0/rep: expected an integer, got a number");
  r = GoodRecord();
  r["status"] = "failed";
  r.erase("benchmark");
  EXPECT_EQ(Check(r), "/benchmark: required but missing");
  r = GoodRecord();
  r["status"] = "failed";
  r["metrics"] = json::object();
  r["failure"] = 3;
  EXPECT_EQ(Check(r), "/failure: expected an object, got an integer");
  r["failure"] = {{"stage", "load"}, {"message", "no such file"}};
  EXPECT_EQ(Check(r), "ok");
  r["status"] = "ok";  // an ok record may carry a failure, but needs a metric
  EXPECT_EQ(Check(r), "/metrics: expected at least one metric in an ok result");
}

// The split check agrees with the whole schema on every root member missing or of each wrong
// kind, for both statuses (Check fails the test where ParseRecord and ValidateRecord differ).
TEST(RecordSchema, ParseRecordAgreesWithTheWholeSchemaAtTheRoot) {
  const json good = GoodRecord();
  int refused = 0;
  for (const char* status : {"ok", "failed"}) {
    for (const auto& [key, value] : good.items()) {
      for (const json& other : {json(), json(1), json(-2.5), json("x"), json::array(),
                                json::object(), json(true)}) {
        json r = good;
        r["status"] = status;
        if (other.is_null()) {
          r.erase(key);
        } else {
          r[key] = other;
        }
        refused += Check(r) != "ok";
      }
    }
  }
  EXPECT_GT(refused, 100);
}

TEST(RecordSchema, OtherFieldsAreNamedWithTheirPointer) {
  json r = GoodRecord();
  r["samples"][0]["rep"] = 1.5;
  EXPECT_EQ(Check(r), "/samples/0/rep: expected an integer, got a number");

  r = GoodRecord();
  r["schema"] = "pipette.result/2";
  EXPECT_EQ(Check(r), "/schema: expected \"pipette.result/1\", got \"pipette.result/2\"");

  r = GoodRecord();
  r["started_at"] = "yesterday";
  EXPECT_EQ(Check(r),
            "/started_at: expected an RFC 3339 time such as "
            "2026-12-01T10:00:00.000Z, got \"yesterday\"");

  r = GoodRecord();
  r["device"]["memory_bytes"] = -1;
  EXPECT_EQ(Check(r), "/device/memory_bytes: expected at least 0, got -1");

  r = GoodRecord();
  r["device"]["cpu"]["model"] = 7;
  EXPECT_EQ(Check(r), "/device/cpu/model: expected a string or null, got an integer");

  r = GoodRecord();
  r["model"]["tensor_types"]["q8_0"] = "12";
  EXPECT_EQ(Check(r), "/model/tensor_types/q8_0: expected an integer, got a string");

  r = GoodRecord();
  r["runtime"].erase("settings");
  EXPECT_EQ(Check(r), "/runtime/settings: required but missing");

  EXPECT_EQ(Check(json::array()), "/: expected an object, got an array");
}

// The resident set's split (issue 11): optional, so the records written before it stay valid;
// when present, byte counts.
TEST(RecordSchema, TheResidentSplitIsOptionalAndTyped) {
  json r = GoodRecord();
  EXPECT_EQ(Check(r), "ok");  // a record without it, as every record before it
  r["logs"]["peak_host_bytes_during_cell"] = 12000000;
  r["logs"]["rss_anon_bytes_at_peak_during_cell"] = 3000000;
  r["logs"]["rss_file_bytes_at_peak_during_cell"] = 8000000;
  r["logs"]["rss_shmem_bytes_at_peak_during_cell"] = 0;
  r["samples"][0]["rss_anon_at_peak"] = 3000000.0;
  r["samples"][0]["rss_file_at_peak"] = 8000000.0;
  r["samples"][0]["rss_shmem_at_peak"] = 0.0;
  EXPECT_EQ(Check(r), "ok");
  r["logs"]["rss_file_bytes_at_peak_during_cell"] = 8.5;
  EXPECT_EQ(Check(r),
            "/logs/rss_file_bytes_at_peak_during_cell: expected an integer, got a number");
  r["logs"]["rss_file_bytes_at_peak_during_cell"] = 8000000;
  r["samples"][0]["rss_anon_at_peak"] = -1.0;
  EXPECT_EQ(Check(r), "/samples/0/rss_anon_at_peak: expected at least 0, got -1.0");
}

TEST(RecordSchema, BlocksMayGrowButKeepTheirTypes) {
  json r = GoodRecord();
  r["device"]["new_sensor"] = {{"kind", "npu"}};
  r["harness"]["new_policy"] = 3;
  r["new_block"] = json::array();
  r["metrics"]["new_metric"] = {{"unit", "ms"}, {"n", 1}, {"median", 1.0}, {"p42", 1.0}};
  EXPECT_EQ(Check(r), "ok");
  r["metrics"]["new_metric"]["mean"] = "1.0";
  EXPECT_EQ(Check(r), "/metrics/new_metric/mean: expected a number or null, got a string");
}

TEST(RecordSchema, EvalBlocksAreChecked) {
  json r = GoodRecord();
  r["benchmark"] = {{"id", "eval_math_500_2026.06.1"},
                    {"type", "eval"},
                    {"prefill_tokens", 0},
                    {"decode_tokens", 0},
                    {"methodology", "pipette-method/1"},
                    {"eval_name", "math_500"},
                    {"eval_version", "2026.06.1"}};
  r["metrics"] = {{"accuracy",
                   {{"unit", "ratio"},
                    {"n", 2},
                    {"count", 1},
                    {"median", 0.5},
                    {"mean", 0.5},
                    {"ci95_low", 0.0},
                    {"ci95_high", 1.0},
                    {"questions", 2},
                    {"interval", "cluster bootstrap over questions"}}}};
  r["eval"] = {{"dataset", "math_500"},
               {"title", "MATH-500"},
               {"file", "/data/m.jsonl"},
               {"fingerprint", "abc"},
               {"samples_in_dataset", 500},
               {"limit", 2},
               {"selection", "first"},
               {"sample_ids", {"a", "b"}},
               {"repeats", 1},
               {"temperature", 0.0},
               {"seed", 0},
               {"max_tokens", 16},
               {"scorer", "pipette-math/3"}};
  r["completions"] = {{{"key", "a#0"},
                       {"id", "a"},
                       {"attempt", 0},
                       {"stop", "truncated"},
                       {"parsed", false},
                       {"correct", false},
                       {"completion", "Once upon"}}};
  EXPECT_EQ(Check(r), "ok");
  r["completions"][0]["stop"] = "length";
  EXPECT_EQ(Check(r),
            "/completions/0/stop: expected one of \"eos\", \"truncated\", "
            "\"doom_loop\", \"failure\", got \"length\"");
  r["completions"][0]["stop"] = "eos";
  r["completions"][0]["correct"] = 1;
  EXPECT_EQ(Check(r), "/completions/0/correct: expected a boolean, got an integer");
  r["completions"][0]["correct"] = true;
  r["eval"].erase("dataset");
  EXPECT_EQ(Check(r), "/eval/dataset: required but missing");
}

// Every record of the stores the project's own scripts fill, where they have been made here
// (bench/stories260k.sh, scripts/quickstart.sh).
TEST(RecordSchema, EveryRecordOfTheProjectsStoresValidates) {
  std::vector<std::string> stores;
  for (const char* rel : {"out/stories260k/results.db", "out/quickstart/results.db"}) {
    const std::string path = std::string(PIPETTE_SOURCE_DIR) + "/" + rel;
    if (std::filesystem::exists(path)) stores.push_back(path);
  }
  if (stores.empty()) {
    GTEST_SKIP() << "neither out/stories260k/results.db nor out/quickstart/results.db exists "
                    "(made by bench/stories260k.sh and scripts/quickstart.sh)";
  }
  for (const std::string& path : stores) {
    StoreOptions options;
    options.create_if_missing = false;
    auto store = ResultStore::Open(path, options);
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto records = (*store)->Records({});
    ASSERT_TRUE(records.ok()) << records.error().message;
    EXPECT_FALSE(records->empty()) << path;
    for (const json& r : *records) {
      EXPECT_EQ(Check(r), "ok") << path << " " << r.value("result_id", "?") << " ("
                                << r["benchmark"].value("id", "?") << ")";
    }
  }
}

TEST(RecordSchema, ParseRecordGivesWhatJsonParseGives) {
  json r = GoodRecord();
  r["new_block"] = {{"big", 18446744073709551615ULL}, {"negative", -9007199254740993LL},
                    {"tenth", 0.1},   {"tiny", 4.9e-324},  {"whole", 2.0},
                    {"text", "caf\u00e9 \u2603 \U0001F600"}, {"nothing", nullptr}};
  const std::string text = r.dump();
  const json expected = json::parse(text);
  const Result<json> parsed = ParseRecord(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(*parsed, expected);
  EXPECT_EQ(parsed->dump(), expected.dump());  // the same number types and the same digits
  EXPECT_EQ((*parsed)["device"]["memory_bytes"].type(), json::value_t::number_unsigned);
  EXPECT_EQ((*parsed)["new_block"]["negative"].type(), json::value_t::number_integer);
  EXPECT_EQ((*parsed)["new_block"]["whole"].type(), json::value_t::number_float);
}

// A member name given twice in one object is refused, naming it, whether or not each copy would
// pass: which copy counts is up to each JSON reader.
TEST(RecordSchema, ParseRecordRefusesARepeatedMember) {
  std::string text = GoodRecord().dump();
  text.insert(text.size() - 1, R"(,"new_block":{"a":1,"b":[{"c":1,"c":2}]})");
  EXPECT_EQ(ParseError(text),
            "/new_block/b/0/c: given twice (a member name may appear once in an object)");
  text = GoodRecord().dump();
  text.insert(1, R"("status":"running",)");  // the copy that fails comes first
  EXPECT_EQ(ParseError(text), "/status: given twice (a member name may appear once in an object)");
  text = GoodRecord().dump();
  const size_t benchmark = text.find(R"("benchmark":{)") + 13;
  text.insert(benchmark, R"("prefill_tokens":"abc",)");
  EXPECT_EQ(ParseError(text),
            "/benchmark/prefill_tokens: given twice (a member name may appear once in an object)");
  text.pop_back();  // and the text is broken at its end: that is said first
  EXPECT_EQ(ParseError(text).rfind("not valid JSON (byte ", 0), 0u) << ParseError(text);
  text = GoodRecord().dump();
  text.insert(1, R"("status":"ok",)");
  text.pop_back();
  EXPECT_EQ(ParseError(text).rfind("not valid JSON (byte ", 0), 0u) << ParseError(text);
}

// PostgreSQL's text and jsonb cannot hold U+0000: no record may, so both stores keep the same.
TEST(RecordSchema, ParseRecordRefusesAStringHoldingNul) {
  const std::string line =
      ": holds U+0000 (a NUL character), which no stored text may hold; leave it out";
  json r = GoodRecord();
  r["runtime"]["settings"]["flag"] = std::string("a\0b", 3);
  EXPECT_EQ(ParseError(r.dump()), "/runtime/settings/flag" + line);
  r = GoodRecord();
  r["logs"] = {{"warnings", {"fine", std::string("\0", 1)}}};
  EXPECT_EQ(ParseError(r.dump()), "/logs/warnings/1" + line);
  r = GoodRecord();
  r["runtime"]["settings"][std::string("k\0", 2)] = 1;
  EXPECT_EQ(ParseError(r.dump()), "/runtime/settings: a member name" + line);
}

TEST(RecordSchema, ParseRecordNamesTextThatIsNotJsonOrNotUtf8) {
  EXPECT_EQ(ParseError(""), "not valid JSON (byte 0: the document is empty)");
  EXPECT_EQ(ParseError(R"({"schema": })"), "not valid JSON (byte 11: invalid value)");
  EXPECT_EQ(ParseError(GoodRecord().dump() + "x"),
            "not valid JSON (byte " + std::to_string(GoodRecord().dump().size()) +
                ": the document root must not be followed by other values)");
  // A bad field early and broken text after it: the text is what is wrong first.
  std::string text = GoodRecord().dump();
  text.insert(1, R"("result_id":"r1",)");
  text.pop_back();
  EXPECT_EQ(ParseError(text).rfind("not valid JSON (byte ", 0), 0u) << ParseError(text);
  std::string latin1 = GoodRecord().dump();
  const size_t at = latin1.find("AMD EPYC");
  latin1[at] = '\xc9';
  EXPECT_EQ(ParseError(latin1), "not valid UTF-8 (byte " + std::to_string(at) + ")");
  const std::string nul = GoodRecord().dump() + std::string(1, '\0') + "trailing";
  EXPECT_EQ(ParseError(nul), "not valid JSON (byte " + std::to_string(GoodRecord().dump().size()) +
                                 ": a NUL byte)");
  EXPECT_EQ(ParseError("[]"), "/: expected an object, got an array");
}

// 64 levels are enough for any record (they nest 6 deep); deeper is refused early, whatever the
// schema says of the member.
TEST(RecordSchema, ParseRecordRefusesNestingDeeperThan64Levels) {
  std::string text = GoodRecord().dump();
  text.pop_back();
  const std::string fits =
      text + R"(,"new_block":)" + std::string(63, '[') + std::string(63, ']') + "}";
  EXPECT_EQ(ParseError(fits), "ok");
  const std::string deep =
      text + R"(,"new_block":)" + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_EQ(ParseError(deep).rfind("nested deeper than 64 levels (byte ", 0), 0u)
      << ParseError(deep);
}

// Issue 24: a body of 100,000 nested arrays (about 200 KB, well under --max-record) crashed the
// server with a stack overflow: the root is not an object, so the schema stops the reader at
// once, and wording that failure parsed the whole text without a depth limit. Refused with one
// line instead, at any depth and at either root, in a thread with a small stack as a server's.
TEST(RecordSchema, DeeplyNestedBodiesAreRefusedWithoutRecursion) {
  std::vector<std::string> bodies;
  for (size_t depth : {size_t{50000}, size_t{100000}, size_t{1000000}}) {
    bodies.push_back(std::string(depth, '[') + std::string(depth, ']'));
    bodies.push_back(std::string(depth, '['));  // never closed
    std::string objects;
    for (size_t i = 0; i < depth / 8; ++i) objects += "{\"a\":";
    bodies.push_back(objects + "1" + std::string(depth / 8, '}'));
    bodies.push_back("{\"schema\":" + std::string(depth, '[') + std::string(depth, ']') + "}");
  }
  std::vector<std::string> errors(bodies.size());
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  struct Work {
    std::vector<std::string>* bodies;
    std::vector<std::string>* errors;
  } work{&bodies, &errors};
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr,
                           [](void* p) -> void* {
                             auto* w = static_cast<Work*>(p);
                             for (size_t i = 0; i < w->bodies->size(); ++i) {
                               (*w->errors)[i] = ParseError((*w->bodies)[i]);
                             }
                             return nullptr;
                           },
                           &work),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  for (size_t i = 0; i < bodies.size(); ++i) {
    EXPECT_NE(errors[i], "ok") << i;
    EXPECT_EQ(errors[i].find('\n'), std::string::npos) << errors[i];
    EXPECT_LT(errors[i].size(), 300u) << errors[i];
  }
}

TEST(RecordSchemaUtf8, FindsTheFirstByteThatIsNotUtf8) {
  using pipette::FirstBadUtf8Byte;
  EXPECT_EQ(FirstBadUtf8Byte(""), std::nullopt);
  EXPECT_EQ(FirstBadUtf8Byte("plain ascii, longer than one word of eight"), std::nullopt);
  EXPECT_EQ(FirstBadUtf8Byte("caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"),
            std::nullopt);
  EXPECT_EQ(FirstBadUtf8Byte("abcdefgh\xff"), 8u);              // never a UTF-8 byte
  EXPECT_EQ(FirstBadUtf8Byte("a\xc0\xaf"), 1u);                // overlong "/"
  EXPECT_EQ(FirstBadUtf8Byte("a\xe0\x80\xaf"), 1u);            // overlong, three bytes
  EXPECT_EQ(FirstBadUtf8Byte("ab\xed\xa0\x80"), 2u);           // a UTF-16 surrogate
  EXPECT_EQ(FirstBadUtf8Byte("\xf4\x90\x80\x80"), 0u);         // past U+10FFFF
  EXPECT_EQ(FirstBadUtf8Byte("abc\xe2\x98"), 3u);              // cut short at the end
  EXPECT_EQ(FirstBadUtf8Byte("\xc3\xa9\xc3("), 2u);             // a continuation missing
  EXPECT_EQ(FirstBadUtf8Byte("\x80"), 0u);                      // a lone continuation byte
}

TEST(RecordSchema, ValidationIsThreadSafe) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        json r = GoodRecord();
        if (i % 2) r["benchmark"].erase("id");
        const std::string got = Check(r);
        if (got != (i % 2 ? "/benchmark/id: required but missing" : "ok")) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace pipette
