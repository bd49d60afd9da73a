// ParseLlamaBenchFile on the three formats as the pinned llama-bench (80fb11a) prints them: the
// texts below are its json_printer, jsonl_printer and sql_printer output for one run of
// `-p 64 -n 16 -d 32 -r 3` on stories260K (values from a real run), and their faults.
#include "runtimes/llamacpp_stock/llama_bench_file.h"

#include <gtest/gtest.h>

#include <string>

namespace pipette {
namespace {

using nlohmann::json;

// The fields of one test in llama-bench's order, as json_printer writes them ("    "name": v,").
std::string JsonFields(int n_prompt, int n_gen, int n_depth, const std::string& samples) {
  return R"(    "build_commit": "80fb11a",
    "build_number": 1,
    "cpu_info": "AMD EPYC 7B13",
    "gpu_info": "",
    "backends": "CPU",
    "model_filename": "/tmp/stories260K-F32.gguf",
    "model_type": "llama ?B all F32",
    "model_size": 1185152,
    "model_n_params": 292352,
    "n_batch": 2048,
    "n_ubatch": 512,
    "n_threads": 1,
    "cpu_mask": "0x0",
    "cpu_strict": false,
    "poll": 50,
    "type_k": "f16",
    "type_v": "f16",
    "n_gpu_layers": -1,
    "n_cpu_moe": 0,
    "split_mode": "layer",
    "main_gpu": 0,
    "no_kv_offload": false,
    "flash_attn": -1,
    "devices": "auto",
    "tensor_split": "0.00",
    "tensor_buft_overrides": "none",
    "load_mode": "none",
    "lazy_mode": "auto",
    "embeddings": false,
    "no_op_offload": 0,
    "no_host": false,
    "fit_target": 0,
    "fit_min_ctx": 0,
    "n_prompt": )" + std::to_string(n_prompt) + R"(,
    "n_gen": )" + std::to_string(n_gen) + R"(,
    "n_depth": )" + std::to_string(n_depth) + R"(,
    "test_time": "2026-05-01T10:00:00Z",
    "avg_ns": 1500000,
    "stddev_ns": 100000,
    "avg_ts": 42666.666667,
    "stddev_ts": 2800.000000,
    "samples_ns": [ )" + samples + R"( ],
    "samples_ts": [ 42666.7, 40000, 45714.3 ]
)";
}

std::string JsonOutput() {
  return "[\n  {\n" + JsonFields(64, 0, 0, "1500000, 1600000, 1400000") + "  },\n  {\n" +
         JsonFields(0, 16, 32, "400000, 410000, 390000") + "  }\n]\n";
}

// jsonl_printer: each test's fields on one line.
std::string JsonlLine(const std::string& fields) {
  std::string line;
  for (char c : fields) {
    if (c != '\n') line += c;
  }
  return "{" + line + "}\n";
}

constexpr char kSqlRow[] =
    "INSERT INTO llama_bench (build_commit, build_number, cpu_info, gpu_info, backends, "
    "model_filename, model_type, model_size, model_n_params, n_batch, n_ubatch, n_threads, "
    "cpu_mask, cpu_strict, poll, type_k, type_v, n_gpu_layers, n_cpu_moe, split_mode, main_gpu, "
    "no_kv_offload, flash_attn, devices, tensor_split, tensor_buft_overrides, load_mode, "
    "lazy_mode, embeddings, no_op_offload, no_host, fit_target, fit_min_ctx, n_prompt, n_gen, "
    "n_depth, test_time, avg_ns, stddev_ns, avg_ts, stddev_ts) VALUES ('80fb11a', '1', 'AMD "
    "EPYC 7B13', '', 'CPU', '/tmp/stories260K-F32.gguf', 'llama ?B all F32', '1185152', "
    "'292352', '2048', '512', '1', '0x0', '0', '50', 'f16', 'f16', '-1', '0', 'layer', '0', "
    "'0', '-1', 'auto', '0.00', 'none', 'none', 'auto', '0', '0', '0', '0', '0', '64', '0', "
    "'0', '2026-05-01T10:00:00Z', '1500000', '100000', '42666.666667', '2800.000000');\n";

std::string SqlOutput() {
  return "CREATE TABLE IF NOT EXISTS llama_bench (\n  build_commit TEXT,\n  build_number "
         "INTEGER,\n  avg_ts REAL\n);\n\n" +
         std::string(kSqlRow);
}

TEST(LlamaBenchFile, ReadsJsonWithSamplesAndLines) {
  auto f = ParseLlamaBenchFile(JsonOutput(), "run.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->format, LlamaBenchFormat::kJson);
  ASSERT_EQ(f->rows.size(), 2u);
  EXPECT_EQ(f->rows[0].index, 1);
  EXPECT_EQ(f->rows[0].line, 2);
  EXPECT_EQ(f->rows[1].line, 47);  // its "  {"
  EXPECT_EQ(f->rows[0].fields["n_prompt"], 64);
  EXPECT_EQ(f->rows[1].fields["n_depth"], 32);
  EXPECT_EQ(f->rows[0].fields["samples_ns"], json::parse("[1500000, 1600000, 1400000]"));
  EXPECT_EQ(f->rows[0].fields["cpu_strict"], false);
  EXPECT_TRUE(f->rows[0].unknown.empty());
}

TEST(LlamaBenchFile, ReadsJsonlOneTestPerLine) {
  const std::string text = JsonlLine(JsonFields(64, 0, 0, "1500000, 1600000, 1400000")) +
                           JsonlLine(JsonFields(0, 16, 32, "400000, 410000, 390000"));
  auto f = ParseLlamaBenchFile(text, "run.jsonl");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->format, LlamaBenchFormat::kJsonl);
  ASSERT_EQ(f->rows.size(), 2u);
  EXPECT_EQ(f->rows[1].line, 2);
  EXPECT_EQ(f->rows[1].fields["n_gen"], 16);
}

TEST(LlamaBenchFile, ReadsSqlTypedAsJsonWithoutSamples) {
  auto f = ParseLlamaBenchFile(SqlOutput(), "run.sql");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->format, LlamaBenchFormat::kSql);
  ASSERT_EQ(f->rows.size(), 1u);
  const json& r = f->rows[0].fields;
  EXPECT_EQ(f->rows[0].line, 7);  // after the 5 lines of CREATE TABLE and a blank one
  EXPECT_EQ(r["n_prompt"], 64);
  EXPECT_EQ(r["build_number"], 1);
  EXPECT_EQ(r["cpu_strict"], false);
  EXPECT_EQ(r["flash_attn"], -1);
  EXPECT_DOUBLE_EQ(r["avg_ts"].get<double>(), 42666.666667);
  EXPECT_EQ(r["cpu_info"], "AMD EPYC 7B13");
  EXPECT_FALSE(r.contains("samples_ns"));
  // The same values as the json row, samples aside.
  auto j = ParseLlamaBenchFile(JsonOutput(), "run.json");
  ASSERT_TRUE(j.ok());
  json first = j->rows[0].fields;
  first.erase("samples_ns");
  first.erase("samples_ts");
  EXPECT_EQ(first, r);
}

TEST(LlamaBenchFile, SqlQuotesDoubledInsideAValue) {
  std::string text = kSqlRow;
  text.replace(text.find("'AMD EPYC 7B13'"), 15, "'AMD ''EPYC'' 7B13'");
  auto f = ParseLlamaBenchFile(text, "run.sql");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->rows[0].fields["cpu_info"], "AMD 'EPYC' 7B13");
}

TEST(LlamaBenchFile, OlderBuildsBooleansForFlashAttnAndMmap) {
  std::string fields = JsonFields(64, 0, 0, "1500000, 1600000, 1400000");
  fields.replace(fields.find("\"flash_attn\": -1"), 16, "\"flash_attn\": false");
  fields.replace(fields.find("\"load_mode\": \"none\""), 19, "\"use_mmap\": true");
  auto f = ParseLlamaBenchFile("[{" + fields + "}]", "old.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->rows[0].fields["flash_attn"], false);
  EXPECT_EQ(f->rows[0].fields["use_mmap"], true);
}

// ---- faults: one line each, naming the file and line --------------------------------------------

std::string ErrorOf(const std::string& text, bool allow_unknown = false) {
  auto f = ParseLlamaBenchFile(text, "run.out", allow_unknown);
  if (f.ok()) return "ok";
  EXPECT_EQ(f.error().message.find('\n'), std::string::npos) << f.error().message;
  return f.error().message;
}

TEST(LlamaBenchFile, InterruptedJsonSaysSo) {
  const std::string cut = "[\n  {\n" + JsonFields(64, 0, 0, "1500000, 1600000, 1400000") + "  },\n";
  const std::string e = ErrorOf(cut);
  EXPECT_NE(e.find("run.out:"), std::string::npos) << e;
  EXPECT_NE(e.find("not valid JSON (it ends before its closing \"]\"); was llama-bench "
                   "interrupted?"),
            std::string::npos)
      << e;
  EXPECT_NE(ErrorOf("[\n").find("interrupted"), std::string::npos);
  EXPECT_NE(ErrorOf("[]").find("holds no llama-bench tests"), std::string::npos);
}

TEST(LlamaBenchFile, MalformedFilesOneLineEach) {
  EXPECT_NE(ErrorOf("").find("run.out: the file is empty"), std::string::npos);
  EXPECT_NE(ErrorOf("| model | size |\n").find("not llama-bench output (it begins \"| model"),
            std::string::npos);
  const std::string jsonl = JsonlLine(JsonFields(64, 0, 0, "1500000, 1600000, 1400000")) + "{oops\n";
  EXPECT_NE(ErrorOf(jsonl).find("run.out:2: not a JSON object"), std::string::npos) << ErrorOf(jsonl);
  EXPECT_NE(ErrorOf("{\"n_prompt\": 1}\n").find("run.out:1: test 1 has no build_commit"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[1, 2]").find("test 1 is number, not an object"), std::string::npos);
  EXPECT_NE(ErrorOf("DROP TABLE x;").find("not llama-bench output"), std::string::npos);
  EXPECT_NE(ErrorOf("INSERT INTO other (a) VALUES ('1');").find("table \"other\""),
            std::string::npos);
  std::string open_quote = kSqlRow;
  open_quote.resize(open_quote.size() - 4);  // cut inside the last value
  EXPECT_NE(ErrorOf(open_quote).find("run.out:1: a value that is not quoted text"),
            std::string::npos)
      << ErrorOf(open_quote);
  std::string bad_int = kSqlRow;
  bad_int.replace(bad_int.find("'2048'"), 6, "'lots'");
  EXPECT_NE(ErrorOf(bad_int).find("n_batch = 'lots', expected an integer"), std::string::npos)
      << ErrorOf(bad_int);
}

TEST(LlamaBenchFile, FieldsOfTheWrongTypeOrMissing) {
  std::string fields = JsonFields(64, 0, 0, "1500000, 1600000, 1400000");
  std::string s = fields;
  s.replace(s.find("\"n_threads\": 1"), 14, "\"n_threads\": \"1\"");
  EXPECT_NE(ErrorOf("[{" + s + "}]").find("run.out:1: test 1 has n_threads = \"1\", expected an integer"),
            std::string::npos)
      << ErrorOf("[{" + s + "}]");
  s = fields;
  s.replace(s.find("1500000, 1600000"), 16, "1500000, -5");
  EXPECT_NE(ErrorOf("[{" + s + "}]").find("samples_ns"), std::string::npos);
  s = fields;
  s.erase(s.find("    \"model_filename\""), s.find("    \"model_type\"") - s.find("    \"model_filename\""));
  EXPECT_NE(ErrorOf("[{" + s + "}]").find("test 1 has no model_filename"), std::string::npos);
  EXPECT_NE(ErrorOf("[{" + JsonFields(0, 0, 0, "1") + "}]").find("n_prompt and n_gen both 0"),
            std::string::npos);
}

TEST(LlamaBenchFile, UnknownFieldsRefusedUnlessAllowed) {
  std::string fields = JsonFields(64, 0, 0, "1500000, 1600000, 1400000");
  fields.insert(fields.find("    \"n_prompt\""), "    \"n_spec\": 4,\n    \"kv_unified\": true,\n");
  const std::string text = "[\n  {\n" + fields + "  }\n]\n";
  const std::string e = ErrorOf(text);
  EXPECT_NE(e.find("run.out:2: unknown llama-bench fields kv_unified, n_spec"), std::string::npos)
      << e;
  EXPECT_NE(e.find("allow unknown fields"), std::string::npos) << e;
  auto f = ParseLlamaBenchFile(text, "run.out", /*allow_unknown=*/true);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->rows[0].unknown, json::parse(R"({"n_spec": 4, "kv_unified": true})"));
  EXPECT_FALSE(f->rows[0].fields.contains("n_spec"));
  // In sql, the unknown column is text.
  std::string sql = kSqlRow;
  sql.replace(sql.find("stddev_ts)"), 10, "stddev_ts, n_spec)");
  sql.replace(sql.find("'2800.000000')"), 14, "'2800.000000', '4')");
  EXPECT_NE(ErrorOf(sql).find("unknown llama-bench field n_spec"), std::string::npos) << ErrorOf(sql);
}

}  // namespace
}  // namespace pipette
