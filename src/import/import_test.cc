// ImportLlamaBench on llama-bench output as the pinned build (80fb11a) writes it, for a real GGUF
// file (a synthetic tiny model written here): which rows become which benchmark, the records'
// samples, statistics and provenance, and every refusal as one line with nothing returned.
#include "pipette/import.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/sha256.h"
#include "pipette/gguf.h"
#include "pipette/record_schema.h"
#include "pipette/synth.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ImportLlamaBenchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string((fs::temp_directory_path() /
                            ("pipette-import-test-" + std::to_string(getpid())))
                               .string());
    fs::create_directories(*dir_);
    SynthOptions o;
    o.preset = "tiny";
    o.n_ctx = 512;
    o.out_path = *dir_ + "/tiny-F16.gguf";
    ASSERT_TRUE(WriteSyntheticModel(o).ok());
    auto info = ReadGgufInfo(o.out_path);
    ASSERT_TRUE(info.ok());
    params_ = info->params;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string Model() { return *dir_ + "/tiny-F16.gguf"; }

  // One test object as json_printer writes it.
  static json Row(int n_prompt, int n_gen, int n_depth, std::vector<int64_t> samples_ns) {
    json r = {{"build_commit", "80fb11a"},  {"build_number", 1},
              {"cpu_info", "Test CPU"},     {"gpu_info", ""},
              {"backends", "CPU"},          {"model_filename", Model()},
              {"model_type", "llama ?B F16"}, {"model_size", 1000},
              {"model_n_params", params_},  {"n_batch", 2048},
              {"n_ubatch", 512},            {"n_threads", 2},
              {"cpu_mask", "0x0"},          {"cpu_strict", false},
              {"poll", 50},                 {"type_k", "f16"},
              {"type_v", "f16"},            {"n_gpu_layers", -1},
              {"n_cpu_moe", 0},             {"split_mode", "layer"},
              {"main_gpu", 0},              {"no_kv_offload", false},
              {"flash_attn", -1},           {"devices", "auto"},
              {"tensor_split", "0.00"},     {"tensor_buft_overrides", "none"},
              {"load_mode", "none"},        {"lazy_mode", "auto"},
              {"embeddings", false},        {"no_op_offload", 0},
              {"no_host", false},           {"fit_target", 0},
              {"fit_min_ctx", 0},           {"n_prompt", n_prompt},
              {"n_gen", n_gen},             {"n_depth", n_depth},
              {"test_time", "2026-05-01T10:00:00Z"}};
    double sum = 0;
    json ts = json::array();
    for (int64_t ns : samples_ns) {
      sum += ns;
      ts.push_back(1e9 * (n_prompt + n_gen) / ns);
    }
    r["avg_ns"] = static_cast<int64_t>(sum / samples_ns.size());
    r["stddev_ns"] = 0;
    r["avg_ts"] = 1e9 * (n_prompt + n_gen) / (sum / samples_ns.size());
    r["stddev_ts"] = 0.0;
    r["samples_ns"] = samples_ns;
    r["samples_ts"] = ts;
    return r;
  }

  static std::string Write(const std::string& name, const std::string& text) {
    const std::string path = *dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  static std::string ErrorOf(const std::string& path, LlamaBenchImportOptions o = {}) {
    auto r = ImportLlamaBench(path, o);
    if (r.ok()) return "ok";
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
    return r.error().message;
  }

  static std::string* dir_;
  static uint64_t params_;
};

std::string* ImportLlamaBenchTest::dir_ = nullptr;
uint64_t ImportLlamaBenchTest::params_ = 0;

TEST_F(ImportLlamaBenchTest, PromptAndDepthRowsBecomePrefillAndDecodeResults) {
  const json rows = {Row(64, 0, 0, {1000000, 1100000, 900000, 1000000, 1050000}),
                     Row(0, 16, 32, {400000, 410000, 390000})};
  const std::string path = Write("run.json", rows.dump(2));
  auto r = ImportLlamaBench(path, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->format, "json");
  ASSERT_EQ(r->records.size(), 2u);
  const json& pp = r->records[0];
  const json& tg = r->records[1];
  EXPECT_EQ(pp["benchmark"]["id"], "prefill_throughput_64");
  EXPECT_EQ(tg["benchmark"]["id"], "decode_throughput_32_16");
  for (const json& rec : r->records) {
    EXPECT_TRUE(ValidateRecord(rec).ok()) << ValidateRecord(rec).error().message;
    EXPECT_EQ(rec["status"], "ok");
    EXPECT_EQ(rec["runtime"]["name"], "llamacpp-stock");
    EXPECT_EQ(rec["runtime"]["commit"], "80fb11a");
    EXPECT_EQ(rec["runtime"]["version"], "b1");
    EXPECT_EQ(rec["runtime"]["settings"],
              json::parse(R"({"threads": 2, "n_gpu_layers": -1, "n_batch": 2048, "n_ubatch": 512,
                 "type_k": "f16", "type_v": "f16", "poll": 50, "flash_attn": "auto",
                 "mmap": false})"));
    EXPECT_EQ(rec["model"]["sha256"], *Sha256OfFile(Model()));
    EXPECT_EQ(rec["model"]["params"], params_);
    EXPECT_FALSE(rec["device"].contains("id")) << "no fingerprint unless asked";
    EXPECT_EQ(rec["device"]["cpu_info"], "Test CPU");
    EXPECT_EQ(rec["imported"]["tool"], "llama-bench");
    EXPECT_EQ(rec["imported"]["file_sha256"].get<std::string>().size(), 64u);
    EXPECT_EQ(rec["imported"]["samples"], true);
    EXPECT_EQ(rec["started_at"], "2026-05-01T10:00:00Z");
    EXPECT_EQ(rec["result_id"].get<std::string>().substr(14, 1), "7");  // a UUIDv7
  }
  EXPECT_NE(pp["result_id"], tg["result_id"]);
  // Samples: tokens/s of each repetition; pipette's statistics over them.
  ASSERT_EQ(pp["samples"].size(), 5u);
  EXPECT_DOUBLE_EQ(pp["samples"][1]["prefill_throughput"].get<double>(), 64 * 1e9 / 1100000);
  EXPECT_DOUBLE_EQ(pp["samples"][1]["ttft"].get<double>(), 1.1);
  EXPECT_DOUBLE_EQ(pp["metrics"]["prefill_throughput"]["median"].get<double>(), 64000.0);
  EXPECT_EQ(pp["metrics"]["prefill_throughput"]["n"], 5);
  EXPECT_LT(pp["metrics"]["prefill_throughput"]["ci95_low"].get<double>(), 64000.0);
  EXPECT_EQ(pp["harness"]["reps"], 5);
  EXPECT_EQ(pp["harness"]["ci_reached"], false);  // +-10% spread: not within 2%
  EXPECT_DOUBLE_EQ(tg["metrics"]["decode_throughput"]["median"].get<double>(), 16 * 1e9 / 400000);
  EXPECT_EQ(tg["samples"][0]["tokens_out"], 16);
  // The same file again: the same records (ids included).
  auto again = ImportLlamaBench(path, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->records, r->records);
}

TEST_F(ImportLlamaBenchTest, SqlHasNoSamplesSoTheMeanWithoutAnInterval) {
  json row = Row(64, 0, 0, {1000000, 1100000, 900000});
  std::string names, values;
  for (const auto& [k, v] : row.items()) {
    if (k == "samples_ns" || k == "samples_ts") continue;
    names += (names.empty() ? "" : ", ") + k;
    std::string text = v.is_string() ? v.get<std::string>()
                       : v.is_boolean() ? (v.get<bool>() ? "1" : "0")
                                        : v.dump();
    values += (values.empty() ? "'" : ", '") + text + "'";
  }
  const std::string path =
      Write("run.sql", "INSERT INTO llama_bench (" + names + ") VALUES (" + values + ");\n");
  auto r = ImportLlamaBench(path, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const json& rec = r->records.at(0);
  EXPECT_TRUE(ValidateRecord(rec).ok()) << ValidateRecord(rec).error().message;
  const json& m = rec["metrics"]["prefill_throughput"];
  EXPECT_EQ(m["estimate"], "mean");
  EXPECT_EQ(m["n"], 0);
  EXPECT_DOUBLE_EQ(m["median"].get<double>(), row["avg_ts"].get<double>());
  EXPECT_TRUE(m["ci95_low"].is_null());
  EXPECT_TRUE(rec["samples"].empty());
  EXPECT_FALSE(rec["harness"].contains("ci_reached"));
  EXPECT_EQ(rec["imported"]["format"], "sql");
  EXPECT_EQ(rec["imported"]["samples"], false);
  EXPECT_NE(rec["logs"]["warnings"].dump().find("no per-repetition samples"), std::string::npos);
}

TEST_F(ImportLlamaBenchTest, RowsOfNoPipetteBenchmarkRefusedOrSkipped) {
  const json rows = {Row(64, 0, 0, {1000000, 1000000, 1000000}), Row(0, 16, 0, {400000, 400000, 400000})};
  const std::string path = Write("tg.json", rows.dump());
  const std::string e = ErrorOf(path);
  EXPECT_NE(e.find("tg.json:1: test 2 (tg16) matches no pipette benchmark: it generates 16 tokens "
                   "from an empty context"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("skip rows that match no benchmark"), std::string::npos) << e;
  LlamaBenchImportOptions skip;
  skip.skip_unmatched = true;
  auto r = ImportLlamaBench(path, skip);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->records.size(), 1u);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_NE(r->skipped[0].find("(tg16)"), std::string::npos);

  EXPECT_NE(ErrorOf(Write("pg.json", json::array({Row(64, 16, 0, {1000})}).dump()))
                .find("(pp64+tg16) matches no pipette benchmark: it times the prompt and the "
                      "generation together"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Write("ppd.json", json::array({Row(64, 0, 32, {1000})}).dump()))
                .find("(pp64 @ d32) matches no pipette benchmark"),
            std::string::npos);
  const std::string only_tg = Write("only-tg.json", json::array({Row(0, 16, 0, {1000})}).dump());
  EXPECT_NE(ErrorOf(only_tg, skip).find("none of its 1 tests matches a pipette benchmark"),
            std::string::npos);
}

TEST_F(ImportLlamaBenchTest, AModelFileThatIsGoneOrAnother) {
  json row = Row(64, 0, 0, {1000000, 1000000, 1000000});
  row["model_filename"] = "/nonexistent/models/tiny-F16.gguf";
  const std::string path = Write("moved.json", json::array({row}).dump());
  const std::string e = ErrorOf(path);
  EXPECT_NE(e.find("moved.json:1: test 1 (pp64): the model file /nonexistent/models/tiny-F16.gguf "
                   "that llama-bench measured no longer exists; give the path of the model file "
                   "it measured"),
            std::string::npos)
      << e;
  LlamaBenchImportOptions o;
  o.model_paths = {Model()};
  auto r = ImportLlamaBench(path, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->records[0]["model"]["path"], fs::absolute(Model()).string());
  EXPECT_EQ(r->records[0]["imported"]["model_filename"], "/nonexistent/models/tiny-F16.gguf");

  row["model_filename"] = Model();
  row["model_n_params"] = params_ + 1;
  EXPECT_NE(ErrorOf(Write("other.json", json::array({row}).dump())).find("parameters but "
                                                                        "llama-bench measured"),
            std::string::npos);
}

TEST_F(ImportLlamaBenchTest, SettingsPipetteDoesNotSetAreKeptAndSaid) {
  json row = Row(64, 0, 0, {1000000, 1000000, 1000000});
  row["no_kv_offload"] = true;
  row["flash_attn"] = 1;
  row["load_mode"] = "mmap";
  auto r = ImportLlamaBench(Write("nkvo.json", json::array({row}).dump()), {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const json& s = r->records[0]["runtime"]["settings"];
  EXPECT_EQ(s["no_kv_offload"], true);
  EXPECT_EQ(s["flash_attn"], "on");
  EXPECT_EQ(s["mmap"], true);
  EXPECT_NE(r->records[0]["logs"]["warnings"].dump().find("no_kv_offload = true"),
            std::string::npos);
}

TEST_F(ImportLlamaBenchTest, NothingReturnedWhenALaterRowIsBad) {
  json bad = Row(64, 0, 0, {1000000});
  bad["test_time"] = "yesterday";
  const std::string path =
      Write("later.json", json::array({Row(64, 0, 0, {1000000}), bad}).dump());
  EXPECT_NE(ErrorOf(path).find("test 2 (pp64): test_time \"yesterday\" is not an RFC 3339"),
            std::string::npos)
      << ErrorOf(path);
  EXPECT_NE(ErrorOf(*dir_ + "/absent.json").find("absent.json: no such file"), std::string::npos);
}

}  // namespace
}  // namespace pipette
