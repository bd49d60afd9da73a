#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pipette/benchmark.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A fresh directory under the system temp dir, removed with its contents at the end of a test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("pipette_benchmarks_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path file = path_ / name;
    std::ofstream(file) << text;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// Sets an environment variable for the lifetime of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// ---------------------------------------------------------------- types and the built-in ladder

TEST(BenchmarkTypeTest, NamesRoundTrip) {
  EXPECT_EQ(TypeName(BenchmarkType::kPrefill), "prefill");
  EXPECT_EQ(TypeName(BenchmarkType::kDecode), "decode");
  EXPECT_EQ(TypeName(BenchmarkType::kEndToEnd), "e2e");
  EXPECT_EQ(TypeName(BenchmarkType::kMemory), "memory");
  EXPECT_EQ(TypeName(BenchmarkType::kEval), "eval");
  EXPECT_EQ(TypeName(BenchmarkType::kSoak), "soak");
  EXPECT_EQ(TypeName(BenchmarkType::kKlDivergence), "kl_divergence");
  EXPECT_EQ(CatalogTypeName(BenchmarkType::kEndToEnd), "end_to_end_latency");
  EXPECT_EQ(CatalogTypeName(BenchmarkType::kMemory), "max_memory_usage");
  EXPECT_EQ(ParseTypeName("e2e"), BenchmarkType::kEndToEnd);
  EXPECT_EQ(ParseTypeName("decode_throughput"), BenchmarkType::kDecode);
  EXPECT_EQ(ParseTypeName("vl_throughput"), std::nullopt);
}

TEST(BenchmarkCatalogTest, BuiltInIsTheLadder) {
  const BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  ASSERT_EQ(catalog.List().size(), 30u);
  std::set<std::string> ids;
  for (const BenchmarkSpec& spec : catalog.List()) {
    ids.insert(spec.id);
    EXPECT_EQ(spec.source, "built-in");
    EXPECT_FALSE(spec.description.empty());
    EXPECT_TRUE(Validate(spec).ok()) << spec.id << ": " << Validate(spec).error().message;
  }
  EXPECT_EQ(ids.size(), 30u);
  // The published evals, with what the protocol fixes said (`benchmarks show`).
  const BenchmarkSpec math = *catalog.Find("eval_math_500_2026.06.1");
  EXPECT_EQ(math.source, "built-in");
  EXPECT_EQ(math.max_tokens, 8192);
  EXPECT_THAT(math.description, HasSubstr("03d8a41616e2b3f5"));
  EXPECT_THAT(catalog.Find("eval_gpqa_diamond_2026.06.1")->description, HasSubstr("198"));
  for (int p : {100, 256, 512, 1024, 2048, 4096, 8192}) {
    const std::string ps = std::to_string(p);
    for (const std::string& id : {"prefill_throughput_" + ps, "decode_throughput_" + ps + "_100",
                                  "end_to_end_latency_" + ps + "_256", "max_memory_usage_" + ps}) {
      EXPECT_TRUE(ids.count(id)) << id;
    }
  }
  EXPECT_EQ(catalog.List().front().id, "prefill_throughput_100");
  EXPECT_EQ(catalog.List()[27].id, "max_memory_usage_8192");

  const BenchmarkSpec decode = *catalog.Find("decode_throughput_512_100");
  EXPECT_EQ(decode.type, BenchmarkType::kDecode);
  EXPECT_EQ(decode.prefill_tokens, 512);
  EXPECT_EQ(decode.decode_tokens, 100);
  const BenchmarkSpec e2e = *catalog.Find("end_to_end_latency_8192_256");
  EXPECT_EQ(e2e.type, BenchmarkType::kEndToEnd);
  EXPECT_EQ(e2e.prefill_tokens, 8192);
  EXPECT_EQ(e2e.decode_tokens, 256);
  const BenchmarkSpec memory = *catalog.Find("max_memory_usage_100");
  EXPECT_EQ(memory.type, BenchmarkType::kMemory);
  EXPECT_EQ(memory.prefill_tokens, 100);
  EXPECT_EQ(memory.decode_tokens, 0);
}

// ---------------------------------------------------------------- ids

TEST(ParseBenchmarkIdTest, ParsesEveryShape) {
  Result<BenchmarkSpec> prefill = ParseBenchmarkId("prefill_throughput_8");
  ASSERT_TRUE(prefill.ok()) << prefill.error().message;
  EXPECT_EQ(prefill->type, BenchmarkType::kPrefill);
  EXPECT_EQ(prefill->prefill_tokens, 8);
  EXPECT_EQ(prefill->decode_tokens, 0);
  EXPECT_EQ(prefill->source, "pattern");
  EXPECT_FALSE(prefill->description.empty());

  Result<BenchmarkSpec> decode = ParseBenchmarkId("decode_throughput_8_8");
  ASSERT_TRUE(decode.ok());
  EXPECT_EQ(decode->type, BenchmarkType::kDecode);
  EXPECT_EQ(decode->prefill_tokens, 8);
  EXPECT_EQ(decode->decode_tokens, 8);

  Result<BenchmarkSpec> e2e = ParseBenchmarkId("end_to_end_latency_100_256");
  ASSERT_TRUE(e2e.ok());
  EXPECT_EQ(e2e->type, BenchmarkType::kEndToEnd);

  Result<BenchmarkSpec> memory = ParseBenchmarkId("max_memory_usage_1048576");
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ(memory->prefill_tokens, 1048576);

  Result<BenchmarkSpec> soak = ParseBenchmarkId("soak_256_64_30");
  ASSERT_TRUE(soak.ok());
  EXPECT_EQ(soak->type, BenchmarkType::kSoak);
  EXPECT_EQ(soak->prefill_tokens, 256);
  EXPECT_EQ(soak->decode_tokens, 64);
  EXPECT_EQ(soak->minutes, 30);

  Result<BenchmarkSpec> kl = ParseBenchmarkId("kl_divergence_512");
  ASSERT_TRUE(kl.ok());
  EXPECT_EQ(kl->type, BenchmarkType::kKlDivergence);
  EXPECT_EQ(kl->prefill_tokens, 512);

  Result<BenchmarkSpec> eval = ParseBenchmarkId("eval_math_500_2026.06.1");
  ASSERT_TRUE(eval.ok());
  EXPECT_EQ(eval->type, BenchmarkType::kEval);
  EXPECT_EQ(eval->eval_name, "math_500");
  EXPECT_EQ(eval->eval_version, "2026.06.1");
  EXPECT_EQ(eval->max_tokens, 0);
}

TEST(ParseBenchmarkIdTest, ErrorsSayWhatIsWrong) {
  const struct {
    const char* id;
    const char* reason;
  } cases[] = {
      {"foo_8", "starts with none of"},
      {"", "starts with none of"},
      {"Prefill_throughput_8", "starts with none of"},
      {"prefill_throughput_0", "P must be at least 1"},
      {"decode_throughput_8_0", "D must be at least 1"},
      {"soak_8_8_0", "minutes must be at least 1"},
      {"decode_throughput_512", "decode_throughput_<P>_<D> needs 2 number(s)"},
      {"prefill_throughput_8_8", "needs 1 number(s)"},
      {"prefill_throughput_abc", "P = 'abc' is not a number"},
      {"prefill_throughput_-1", "is not a number"},
      {"prefill_throughput_ 8", "is not a number"},
      {"prefill_throughput_", "P is empty"},
      {"decode_throughput_8_", "D is empty"},
      {"prefill_throughput_0100", "leading zero"},
      {"prefill_throughput_1048577", "P = 1048577 exceeds 1048576"},
      {"prefill_throughput_99999999999999999999", "exceeds 1048576"},
      {"eval_math", "eval_<name>_<version>"},
      {"eval__1", "eval_<name>_<version>"},
      {"eval_math_", "eval_<name>_<version>"},
      {"eval_ma th_1", "letters, digits"},
  };
  for (const auto& c : cases) {
    Result<BenchmarkSpec> spec = ParseBenchmarkId(c.id);
    ASSERT_FALSE(spec.ok()) << c.id;
    const std::string& message = spec.error().message;
    EXPECT_THAT(message, StartsWith("unknown benchmark id '" + std::string(c.id) + "': ")) << c.id;
    EXPECT_THAT(message, HasSubstr(c.reason)) << c.id;
    EXPECT_THAT(message, HasSubstr("`pipette benchmarks list` shows the catalog")) << c.id;
  }
}

TEST(ValidateTest, NamesTheContradictingField) {
  BenchmarkSpec spec = *ParseBenchmarkId("decode_throughput_256_100");
  EXPECT_TRUE(Validate(spec).ok());

  spec.prefill_tokens = 512;
  EXPECT_EQ(Validate(spec).error().message,
            "parameter_prefill_tokens = 512 contradicts id 'decode_throughput_256_100' (256)");
  spec.prefill_tokens = 256;
  spec.decode_tokens = 64;
  EXPECT_THAT(Validate(spec).error().message, StartsWith("parameter_decode_tokens = 64"));
  spec.decode_tokens = 100;
  spec.minutes = 5;
  EXPECT_EQ(Validate(spec).error().message,
            "parameter_minutes does not apply to benchmark_type 'decode_throughput'");
  spec.minutes = 0;
  spec.type = BenchmarkType::kEndToEnd;
  EXPECT_THAT(Validate(spec).error().message,
              StartsWith("benchmark_type 'end_to_end_latency' contradicts id"));
  spec.type = BenchmarkType::kDecode;
  spec.max_tokens = 10;
  EXPECT_THAT(Validate(spec).error().message, HasSubstr("apply only to benchmark_type 'eval'"));

  BenchmarkSpec eval = *ParseBenchmarkId("eval_math_500_2026.06.1");
  eval.max_tokens = 8192;
  EXPECT_TRUE(Validate(eval).ok());
  eval.eval_version = "2026.07.1";
  EXPECT_THAT(Validate(eval).error().message,
              StartsWith("parameter_dataset_name = '2026.07.1' contradicts id "
                         "'eval_math_500_2026.06.1' ('2026.06.1')"));
  eval.eval_name = "gpqa";
  EXPECT_THAT(Validate(eval).error().message, StartsWith("parameter_eval_id = 'gpqa'"));
}

// ---------------------------------------------------------------- TOML definitions

TEST(ParseBenchmarkTomlTest, ReadsThePublicCatalogFormat) {
  TempDir dir;
  const std::string decode_path = dir.Write("decode_throughput_1024_100.toml",
                                            "benchmark_type = \"decode_throughput\"\n"
                                            "parameter_prefill_tokens = 1024\n"
                                            "parameter_decode_tokens = 100\n");
  Result<BenchmarkSpec> decode = ParseBenchmarkToml(decode_path);
  ASSERT_TRUE(decode.ok()) << decode.error().message;
  EXPECT_EQ(decode->id, "decode_throughput_1024_100");
  EXPECT_EQ(decode->type, BenchmarkType::kDecode);
  EXPECT_EQ(decode->prefill_tokens, 1024);
  EXPECT_EQ(decode->decode_tokens, 100);
  EXPECT_EQ(decode->source, decode_path);
  EXPECT_FALSE(decode->description.empty());

  // The public catalog's eval ids may have '_' in the name and the version.
  Result<BenchmarkSpec> eval = ParseBenchmarkToml(dir.Write("eval_ifstruct_release_v1_0.toml",
                                                            "benchmark_type = \"eval\"\n"
                                                            "parameter_eval_id = \"ifstruct\"\n"
                                                            "parameter_dataset_name = "
                                                            "\"release_v1_0\"\n"
                                                            "parameter_max_tokens = 8192\n"));
  ASSERT_TRUE(eval.ok()) << eval.error().message;
  EXPECT_EQ(eval->eval_name, "ifstruct");
  EXPECT_EQ(eval->eval_version, "release_v1_0");
  EXPECT_EQ(eval->max_tokens, 8192);
}

TEST(ParseBenchmarkTomlTest, ReadsOurAdditionsAndOptionalFields) {
  TempDir dir;
  Result<BenchmarkSpec> soak = ParseBenchmarkToml(dir.Write("soak_256_64_30.toml",
                                                            "benchmark_type = \"soak\"\n"
                                                            "benchmark_id = \"soak_256_64_30\"\n"
                                                            "description = \"Half an hour\"\n"
                                                            "parameter_prefill_tokens = 256\n"
                                                            "parameter_decode_tokens = 64\n"
                                                            "parameter_minutes = 30\n"));
  ASSERT_TRUE(soak.ok()) << soak.error().message;
  EXPECT_EQ(soak->minutes, 30);
  EXPECT_EQ(soak->description, "Half an hour");

  Result<BenchmarkSpec> kl = ParseBenchmarkToml(dir.Write("kl_divergence_512.toml",
                                                          "benchmark_type = \"kl_divergence\"\n"
                                                          "parameter_prefill_tokens = 512\n"));
  ASSERT_TRUE(kl.ok()) << kl.error().message;
  EXPECT_EQ(kl->type, BenchmarkType::kKlDivergence);
  EXPECT_EQ(kl->prefill_tokens, 512);
}

// Writes `text` as `name` and returns the parse error message ("" when it parsed).
std::string TomlError(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.Write(name, text);
  Result<BenchmarkSpec> spec = ParseBenchmarkToml(path);
  if (spec.ok()) return "";
  EXPECT_THAT(spec.error().message, StartsWith(path + ":")) << "errors name the file";
  return spec.error().message;
}

TEST(ParseBenchmarkTomlTest, RejectsAnIdThatContradictsItsParameters) {
  TempDir dir;
  EXPECT_THAT(
      TomlError(dir, "prefill_throughput_256.toml",
                "benchmark_type = \"prefill_throughput\"\nparameter_prefill_tokens = 512\n"),
      HasSubstr("parameter_prefill_tokens = 512 contradicts id "
                "'prefill_throughput_256' (256)"));
  EXPECT_THAT(TomlError(dir, "decode_throughput_256_100.toml",
                        "benchmark_type = \"decode_throughput\"\n"
                        "parameter_prefill_tokens = 256\nparameter_decode_tokens = 10\n"),
              HasSubstr("parameter_decode_tokens = 10 contradicts id"));
  EXPECT_THAT(TomlError(dir, "decode_throughput_256_100.toml",
                        "benchmark_type = \"end_to_end_latency\"\n"
                        "parameter_prefill_tokens = 256\nparameter_decode_tokens = 100\n"),
              HasSubstr("benchmark_type 'end_to_end_latency' contradicts id"));
  EXPECT_THAT(TomlError(dir, "eval_math_500_2026.06.1.toml",
                        "benchmark_type = \"eval\"\nparameter_eval_id = \"math_500\"\n"
                        "parameter_dataset_name = \"2026.07.1\"\nparameter_max_tokens = 8192\n"),
              HasSubstr("parameter_dataset_name = '2026.07.1' contradicts id"));
  EXPECT_THAT(TomlError(dir, "prefill_throughput_256.toml",
                        "benchmark_type = \"prefill_throughput\"\nbenchmark_id = \"x\"\n"
                        "parameter_prefill_tokens = 256\n"),
              HasSubstr("benchmark_id 'x' contradicts the file name"));
  EXPECT_THAT(
      TomlError(dir, "my_prefill.toml",
                "benchmark_type = \"prefill_throughput\"\nparameter_prefill_tokens = 256\n"),
      HasSubstr("unknown benchmark id 'my_prefill'"));
}

TEST(ParseBenchmarkTomlTest, RejectsUnknownTypesMissingAndStrayFields) {
  TempDir dir;
  EXPECT_THAT(TomlError(dir, "vl_throughput_256x256.toml", "benchmark_type = \"vl_throughput\"\n"),
              HasSubstr("unknown benchmark_type 'vl_throughput'"));
  EXPECT_THAT(TomlError(dir, "prefill_throughput_8.toml",
                        "benchmark_type = \"prefill\"\nparameter_prefill_tokens = 8\n"),
              HasSubstr("unknown benchmark_type 'prefill'"));
  EXPECT_THAT(TomlError(dir, "prefill_throughput_8.toml", "parameter_prefill_tokens = 8\n"),
              HasSubstr("missing field 'benchmark_type'"));
  EXPECT_THAT(TomlError(dir, "decode_throughput_8_8.toml",
                        "benchmark_type = \"decode_throughput\"\nparameter_prefill_tokens = 8\n"),
              HasSubstr("missing field 'parameter_decode_tokens'"));
  EXPECT_THAT(TomlError(dir, "prefill_throughput_8.toml",
                        "benchmark_type = \"prefill_throughput\"\n"
                        "parameter_prefill_tokens = 8\nparameter_decode_tokens = 8\n"),
              HasSubstr("field 'parameter_decode_tokens' does not apply to benchmark_type "
                        "'prefill_throughput'"));
  EXPECT_THAT(TomlError(dir, "prefill_throughput_8.toml",
                        "benchmark_type = \"prefill_throughput\"\nparameter_prefil_tokens = 8\n"),
              HasSubstr("field 'parameter_prefil_tokens' does not apply"));
  EXPECT_THAT(
      TomlError(dir, "prefill_throughput_8.toml",
                "benchmark_type = \"prefill_throughput\"\nparameter_prefill_tokens = \"8\"\n"),
      HasSubstr("field 'parameter_prefill_tokens' must be an integer"));
  EXPECT_THAT(TomlError(dir, "prefill_throughput_8.toml", "benchmark_type = \n"),
              HasSubstr("prefill_throughput_8.toml:1:"));
}

TEST(ParseBenchmarkTomlTest, MissingFileIsAnError) {
  Result<BenchmarkSpec> spec = ParseBenchmarkToml("/nonexistent/prefill_throughput_8.toml");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message, StartsWith("/nonexistent/prefill_throughput_8.toml"));
}

// ---------------------------------------------------------------- catalog

TEST(BenchmarkCatalogTest, AddDirectoryAddsEveryTomlFile) {
  TempDir dir;
  dir.Write("soak_8_8_1.toml",
            "benchmark_type = \"soak\"\nparameter_prefill_tokens = 8\n"
            "parameter_decode_tokens = 8\nparameter_minutes = 1\n");
  dir.Write("eval_ifbench_2026.06.1.toml",
            "benchmark_type = \"eval\"\nparameter_eval_id = \"ifbench\"\n"
            "parameter_dataset_name = \"2026.06.1\"\nparameter_max_tokens = 4096\n");
  // Same definition as the built-in one: accepted, not duplicated.
  dir.Write("prefill_throughput_512.toml",
            "benchmark_type = \"prefill_throughput\"\nparameter_prefill_tokens = 512\n");
  dir.Write("README.md", "not a definition");
  BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  Status status = catalog.AddDirectory(dir.path());
  ASSERT_TRUE(status.ok()) << status.error().message;
  ASSERT_EQ(catalog.List().size(), 32u);
  EXPECT_EQ(catalog.List()[30].id, "eval_ifbench_2026.06.1");  // file-name order
  EXPECT_EQ(catalog.List()[31].id, "soak_8_8_1");
  EXPECT_EQ(catalog.Find("prefill_throughput_512")->source, "built-in");
  const BenchmarkSpec eval = *catalog.Find("eval_ifbench_2026.06.1");
  EXPECT_EQ(eval.max_tokens, 4096);
  EXPECT_EQ(eval.source, (fs::path(dir.path()) / "eval_ifbench_2026.06.1.toml").string());
}

TEST(BenchmarkCatalogTest, AddDirectoryIsAllOrNothing) {
  TempDir dir;
  dir.Write("a_good.toml", "");  // sorted first, but its stem is not an id
  dir.Write("soak_8_8_1.toml",
            "benchmark_type = \"soak\"\nparameter_prefill_tokens = 8\n"
            "parameter_decode_tokens = 8\nparameter_minutes = 1\n");
  BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  Status status = catalog.AddDirectory(dir.path());
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message, HasSubstr("a_good.toml"));
  EXPECT_EQ(catalog.List().size(), 30u);

  fs::remove(fs::path(dir.path()) / "a_good.toml");
  dir.Write("soak_8_9_1.toml",
            "benchmark_type = \"soak\"\nparameter_prefill_tokens = 8\n"
            "parameter_decode_tokens = 8\nparameter_minutes = 1\n");
  status = catalog.AddDirectory(dir.path());
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message, HasSubstr("soak_8_9_1.toml"));
  EXPECT_THAT(status.error().message, HasSubstr("parameter_decode_tokens = 8 contradicts"));
  EXPECT_EQ(catalog.List().size(), 30u);
}

TEST(BenchmarkCatalogTest, AddDirectoryOfAMissingDirectoryIsAnError) {
  BenchmarkCatalog catalog;
  Status status = catalog.AddDirectory("/nonexistent/pipette/benchmarks");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message,
              HasSubstr("'/nonexistent/pipette/benchmarks' does not exist"));
}

TEST(BenchmarkCatalogTest, AddRejectsConflictsAndInvalidDefinitions) {
  BenchmarkCatalog catalog;
  BenchmarkSpec eval = *ParseBenchmarkId("eval_math_500_2026.06.1");
  eval.max_tokens = 8192;
  ASSERT_TRUE(catalog.Add(eval).ok());
  EXPECT_TRUE(catalog.Add(eval).ok());  // the same again is fine
  EXPECT_EQ(catalog.List().size(), 1u);
  eval.max_tokens = 1024;
  Status conflict = catalog.Add(eval);
  ASSERT_FALSE(conflict.ok());
  EXPECT_THAT(conflict.error().message,
              HasSubstr("'eval_math_500_2026.06.1' is already defined by pattern"));

  BenchmarkSpec bad = *ParseBenchmarkId("prefill_throughput_8");
  bad.prefill_tokens = 9;
  EXPECT_FALSE(catalog.Add(bad).ok());
  EXPECT_EQ(catalog.List().size(), 1u);
}

TEST(BenchmarkCatalogTest, FindFallsBackToThePattern) {
  const BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  EXPECT_EQ(catalog.Find("prefill_throughput_512")->source, "built-in");
  Result<BenchmarkSpec> smoke = catalog.Find("prefill_throughput_8");
  ASSERT_TRUE(smoke.ok());
  EXPECT_EQ(smoke->source, "pattern");
  EXPECT_EQ(smoke->prefill_tokens, 8);
  Result<BenchmarkSpec> unknown = catalog.Find("throughput");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, StartsWith("unknown benchmark id 'throughput'"));
}

// ---------------------------------------------------------------- JSON and the user directory

TEST(BenchmarkJsonTest, WritesTheResultRecordBlock) {
  BenchmarkSpec decode = *ParseBenchmarkId("decode_throughput_8_8");
  nlohmann::json j = ToJson(decode);
  EXPECT_EQ(j["id"], "decode_throughput_8_8");
  EXPECT_EQ(j["type"], "decode");
  EXPECT_EQ(j["prefill_tokens"], 8);
  EXPECT_EQ(j["decode_tokens"], 8);
  EXPECT_EQ(j["methodology"], "pipette-method/1");
  EXPECT_FALSE(j.contains("minutes"));
  EXPECT_FALSE(j.contains("eval_name"));
  EXPECT_FALSE(j.contains("max_tokens"));
  EXPECT_FALSE(j.contains("source"));

  BenchmarkSpec eval = *ParseBenchmarkId("eval_ifbench_2026.06.1");
  eval.max_tokens = 4096;
  j = ToJson(eval);
  EXPECT_EQ(j["type"], "eval");
  EXPECT_EQ(j["eval_name"], "ifbench");
  EXPECT_EQ(j["eval_version"], "2026.06.1");
  EXPECT_EQ(j["max_tokens"], 4096);
  EXPECT_EQ(j["prefill_tokens"], 0);

  EXPECT_EQ(ToJson(*ParseBenchmarkId("soak_8_8_2"))["minutes"], 2);
}

TEST(DefaultUserBenchmarkDirTest, FollowsTheEnvironment) {
  ScopedEnv home("HOME", "/home/u");
  {
    ScopedEnv explicit_dir("PIPETTE_BENCHMARKS_DIR", "/opt/bench");
    EXPECT_EQ(DefaultUserBenchmarkDir(), "/opt/bench");
  }
  ScopedEnv no_explicit_dir("PIPETTE_BENCHMARKS_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", "/cfg");
    EXPECT_EQ(DefaultUserBenchmarkDir(), "/cfg/pipette/benchmarks");
  }
  ScopedEnv no_xdg("XDG_CONFIG_HOME", "");
  EXPECT_EQ(DefaultUserBenchmarkDir(), "/home/u/.config/pipette/benchmarks");
  ScopedEnv no_home("HOME", nullptr);
  EXPECT_EQ(DefaultUserBenchmarkDir(), "");
}

// Issue 26: a soak of varied prompt and output lengths, soak_varied_<P>_<D>_<minutes>.
TEST(VariedSoakTest, IdParsesToAVariedSoakAndThePlainSoakKeepsItsMeaning) {
  Result<BenchmarkSpec> varied = ParseBenchmarkId("soak_varied_256_64_30");
  ASSERT_TRUE(varied.ok()) << varied.error().message;
  EXPECT_EQ(varied->type, BenchmarkType::kSoak);
  EXPECT_EQ(varied->prefill_tokens, 256);
  EXPECT_EQ(varied->decode_tokens, 64);
  EXPECT_EQ(varied->minutes, 30);
  EXPECT_TRUE(varied->varied);
  EXPECT_EQ(varied->description,
            "Cycle end-to-end requests through 6 prompt/output shapes up to 256/64 for 30 minutes");
  EXPECT_TRUE(Validate(*varied).ok());
  const nlohmann::json j = ToJson(*varied);
  EXPECT_EQ(j["type"], "soak");
  EXPECT_EQ(j["varied"], true);

  Result<BenchmarkSpec> plain = ParseBenchmarkId("soak_256_64_30");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->varied);
  EXPECT_FALSE(ToJson(*plain).contains("varied"));
  EXPECT_FALSE(SameParameters(*plain, *varied));
  ASSERT_EQ(SoakShapes(*plain).size(), 1u);
  EXPECT_EQ(SoakShapes(*plain)[0].prompt_tokens, 256);
  EXPECT_EQ(SoakShapes(*plain)[0].decode_tokens, 64);
}

TEST(VariedSoakTest, ShapesSpanAnEighthToTheLongestAndAlternate) {
  std::vector<std::pair<int, int>> shapes;
  for (const SoakShape& s : SoakShapes(*ParseBenchmarkId("soak_varied_256_64_1"))) {
    shapes.emplace_back(s.prompt_tokens, s.decode_tokens);
  }
  const std::vector<std::pair<int, int>> expected = {{256, 64}, {32, 32}, {256, 8},
                                                     {64, 64},  {128, 16}, {32, 8}};
  EXPECT_EQ(shapes, expected);
  // The smallest varied soak: an eighth rounds to 1 prompt token and at least 2 generated.
  shapes.clear();
  for (const SoakShape& s : SoakShapes(*ParseBenchmarkId("soak_varied_8_8_1"))) {
    shapes.emplace_back(s.prompt_tokens, s.decode_tokens);
  }
  const std::vector<std::pair<int, int>> smallest = {{8, 8}, {1, 4}, {8, 2},
                                                     {2, 8}, {4, 2}, {1, 2}};
  EXPECT_EQ(shapes, smallest);
  // Nearest, halves up: 100 / 8 = 12.5 -> 13.
  EXPECT_EQ(SoakShapes(*ParseBenchmarkId("soak_varied_100_100_1"))[1].prompt_tokens, 13);
}

TEST(VariedSoakTest, ErrorsSayWhatIsWrong) {
  const auto message = [](const std::string& id) {
    Result<BenchmarkSpec> spec = ParseBenchmarkId(id);
    EXPECT_FALSE(spec.ok()) << id;
    return spec.ok() ? std::string() : spec.error().message;
  };
  EXPECT_EQ(message("soak_varied_4_64_1"),
            "unknown benchmark id 'soak_varied_4_64_1': a varied soak needs P and D of at least 8 "
            "(its shapes span P/8..P and D/8..D); use soak_<P>_<D>_<minutes> for one shape; "
            "`pipette benchmarks list` shows the catalog");
  EXPECT_THAT(message("soak_varied_64_32"),
              HasSubstr("soak_varied_<P>_<D>_<minutes> needs 3 number(s) after 'soak_varied_', "
                        "got 2"));
  EXPECT_THAT(message("soak_varied_64_32_0"), HasSubstr("minutes must be at least 1"));
  EXPECT_THAT(message("soak_varied_64_32_99999"), HasSubstr("minutes = 99999 exceeds 10080"));
}

TEST(VariedSoakTest, TomlSaysVariedAndTheIdMustAgree) {
  TempDir dir;
  const std::string body =
      "benchmark_type = \"soak\"\nparameter_prefill_tokens = 512\n"
      "parameter_decode_tokens = 128\nparameter_minutes = 60\n";
  Result<BenchmarkSpec> varied =
      ParseBenchmarkToml(dir.Write("soak_varied_512_128_60.toml", body + "parameter_varied = true\n"));
  ASSERT_TRUE(varied.ok()) << varied.error().message;
  EXPECT_TRUE(varied->varied);
  EXPECT_EQ(SoakShapes(*varied).size(), 6u);

  Result<BenchmarkSpec> missing = ParseBenchmarkToml(dir.Write("soak_varied_512_128_60.toml", body));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message,
              HasSubstr("parameter_varied = false contradicts id 'soak_varied_512_128_60' "
                        "(true: a soak_varied_ id)"));
  Result<BenchmarkSpec> plain =
      ParseBenchmarkToml(dir.Write("soak_512_128_60.toml", body + "parameter_varied = true\n"));
  ASSERT_FALSE(plain.ok());
  EXPECT_THAT(plain.error().message,
              HasSubstr("parameter_varied = true contradicts id 'soak_512_128_60'"));
  Result<BenchmarkSpec> wrong_type =
      ParseBenchmarkToml(dir.Write("soak_varied_512_128_60.toml", body + "parameter_varied = 1\n"));
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_THAT(wrong_type.error().message, HasSubstr("'parameter_varied' must be true or false"));
  Result<BenchmarkSpec> not_soak = ParseBenchmarkToml(
      dir.Write("decode_throughput_512_128.toml",
                "benchmark_type = \"decode_throughput\"\nparameter_prefill_tokens = 512\n"
                "parameter_decode_tokens = 128\nparameter_varied = true\n"));
  ASSERT_FALSE(not_soak.ok());
  EXPECT_THAT(not_soak.error().message, HasSubstr("field 'parameter_varied' does not apply"));
}

TEST(VariedSoakTest, CatalogFindsItByPattern) {
  const BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  Result<BenchmarkSpec> found = catalog.Find("soak_varied_64_32_1");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->source, "pattern");
  EXPECT_TRUE(found->varied);
}

}  // namespace
}  // namespace pipette
