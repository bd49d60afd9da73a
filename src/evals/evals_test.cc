// Tests of the eval data sets (pipette/evals.h) and the CPython random port (cpython_random.h).
#include "pipette/evals.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evals/cpython_random.h"
#include "evals/csv.h"
#include "tests/support/test_data.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

const std::string kEvalsDir = pipette::testing::DataDir() + "/evals";

// The part of the data (tests/support/test_data.h) that holds `file`, for the skip reason.
std::string DataPart(const std::string& file) {
  if (file.starts_with("math500/")) return "MATH-500";
  if (file.starts_with("gpqa_diamond/")) return "GPQA Diamond";
  if (file.starts_with("ifbench/")) return "IFBench";
  return "the scorer verdict corpus";
}

#define SKIP_WITHOUT_SHARED(file)                                   \
  if (!fs::exists(kEvalsDir + "/" + (file))) {                      \
    GTEST_SKIP() << pipette::testing::NeedData(DataPart(file));      \
  }

// A temporary file holding `bytes`, removed with the object.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& bytes)
      : path_((fs::temp_directory_path() /
               ("pipette_evals_" + std::to_string(::getpid()) + "_" + name))
                  .string()) {
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Gzip(const std::string& bytes) {
  uLongf size = compressBound(bytes.size()) + 32;
  std::string out(size, '\0');
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = bytes.size();
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = out.size();
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// --- CPython's random, against values printed by CPython 3 ----------------------------------

TEST(CPythonRandomTest, GetRandBitsAndRandomMatchCPython) {
  // random.Random(0): [getrandbits(32) for _ in range(3)], then random()
  evals::CPythonRandom r(0);
  EXPECT_EQ(r.GetRandBits(32), 3626764237u);
  EXPECT_EQ(r.GetRandBits(32), 1654615998u);
  EXPECT_EQ(r.GetRandBits(32), 3255389356u);
  EXPECT_DOUBLE_EQ(r.Random(), 0.890243920837131);
}

TEST(CPythonRandomTest, SeedsWiderThan32BitsUseTwoKeyWords) {
  evals::CPythonRandom r((uint64_t{1} << 40) + 5);  // random.Random(2**40 + 5)
  EXPECT_EQ(r.GetRandBits(32), 2166296868u);
  EXPECT_EQ(r.GetRandBits(32), 2220160828u);
}

TEST(CPythonRandomTest, GetRandBitsOfEveryWidth) {
  evals::CPythonRandom r(7);  // [getrandbits(k) for k in (1, 5, 31, 33, 64)]
  EXPECT_EQ(r.GetRandBits(1), 0u);
  EXPECT_EQ(r.GetRandBits(5), 30u);
  EXPECT_EQ(r.GetRandBits(31), 323946139u);
  EXPECT_EQ(r.GetRandBits(33), 5990721294u);
  EXPECT_EQ(r.GetRandBits(64), 1336213610742710224u);
}

TEST(CPythonRandomTest, RandBelowRejectsAboveTheBound) {
  evals::CPythonRandom r(3);  // [r._randbelow(n) for n in (1, 2, 3, 7, 100, 1000003)]
  const std::vector<uint64_t> expected = {0, 0, 1, 4, 60, 656115};
  const std::vector<uint64_t> bounds = {1, 2, 3, 7, 100, 1000003};
  for (size_t i = 0; i < bounds.size(); ++i) EXPECT_EQ(r.RandBelow(bounds[i]), expected[i]) << i;
}

TEST(CPythonRandomTest, ShuffleMatchesCPython) {
  std::vector<int> items = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  evals::CPythonRandom(12345).Shuffle(items);  // random.Random(12345).shuffle(list(range(10)))
  EXPECT_EQ(items, (std::vector<int>{8, 7, 3, 5, 1, 2, 9, 4, 0, 6}));
  EXPECT_EQ(GpqaOptionOrder(1712365659), (std::array<int, 4>{1, 0, 2, 3}));
}

// --- CSV ----------------------------------------------------------------------------------------

TEST(CsvTest, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  auto records = evals::ParseCsv("a,b\n\"x,\"\"y\"\"\nz\",2\r\n\n3,\"\"\n", "t.csv");
  ASSERT_TRUE(records.ok()) << records.error().message;
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ((*records)[1].fields, (std::vector<std::string>{"x,\"y\"\nz", "2"}));
  EXPECT_EQ((*records)[1].line, 2);
  EXPECT_EQ((*records)[2].fields, (std::vector<std::string>{"3", ""}));
  EXPECT_EQ((*records)[2].line, 5);
}

TEST(CsvTest, AnUnclosedQuoteNamesItsLine) {
  auto records = evals::ParseCsv("a,b\n1,2\n3,\"open\n\n", "t.csv");
  ASSERT_FALSE(records.ok());
  EXPECT_EQ(records.error().message,
            "t.csv:3: quoted field not closed before the end of the file (truncated?)");
}

// --- the shared data sets -----------------------------------------------------------------------

TEST(EvalDataSetTest, Math500FingerprintIsThePublishedOne) {
  SKIP_WITHOUT_SHARED("math500/test.jsonl");
  auto set = LoadEvalDataSet(EvalDataset::kMath500, kEvalsDir);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->samples.size(), 500u);
  EXPECT_EQ(set->fingerprint, "03d8a41616e2b3f5e0c317e8de72d3a88b930186a0ef7d00686e90051004f588");
  EXPECT_EQ(set->MatchesPublished(), true);
  EXPECT_TRUE(set->warnings.empty());
  const EvalSample& first = set->samples.front();
  EXPECT_EQ(first.source_id, "test/precalculus/807.json");
  EXPECT_EQ(first.id, EvalSampleId(first.prompt));
  EXPECT_EQ(first.prompt.rfind("Solve the following math problem step by step.", 0), 0u);
  EXPECT_TRUE(first.prompt.ends_with("\n\nRemember to put your answer inside \\boxed{}."));
}

TEST(EvalDataSetTest, GpqaDiamondFingerprintIsThePublishedOne) {
  SKIP_WITHOUT_SHARED("gpqa_diamond/gpqa_diamond.csv.gz");
  auto set = LoadEvalDataSet(EvalDataset::kGpqaDiamond, kEvalsDir);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->samples.size(), 198u);
  EXPECT_EQ(set->fingerprint, "60d4d93801f979b3dc52847f1eadb9d14a495a427fbb4934858f18530fab9281");
  EXPECT_EQ(set->MatchesPublished(), true);
  EXPECT_TRUE(set->warnings.empty());
}

TEST(EvalDataSetTest, GpqaShuffleEqualsUpstreamForAll198Records) {
  SKIP_WITHOUT_SHARED("scoring/gpqa_shuffle.json");
  SKIP_WITHOUT_SHARED("gpqa_diamond/gpqa_diamond.csv.gz");
  auto set = LoadEvalDataSet(EvalDataset::kGpqaDiamond, kEvalsDir);
  ASSERT_TRUE(set.ok()) << set.error().message;
  const auto upstream =
      nlohmann::json::parse(std::ifstream(kEvalsDir + "/scoring/gpqa_shuffle.json"))["records"];
  ASSERT_EQ(upstream.size(), 198u);
  ASSERT_EQ(set->samples.size(), 198u);
  for (size_t row = 0; row < set->samples.size(); ++row) {
    const EvalSample& sample = set->samples[row];
    SCOPED_TRACE(sample.source_id);
    ASSERT_TRUE(upstream.contains(sample.source_id));
    const auto& want = upstream[sample.source_id];
    EXPECT_EQ(want["row_index"].get<size_t>(), row);
    EXPECT_EQ(want["seed"].get<uint32_t>(), sample.shuffle_seed);
    EXPECT_EQ(want["sample_id"].get<std::string>(), sample.id);
    EXPECT_EQ(want["correct_letter"].get<std::string>(), sample.gold);
    ASSERT_EQ(sample.option_columns.size(), 4u);
    for (int letter = 0; letter < 4; ++letter) {
      EXPECT_EQ(want["order"][std::string(1, 'A' + letter)].get<std::string>(),
                sample.option_columns[letter]);
    }
  }
}

TEST(EvalDataSetTest, IfBenchLoads) {
  SKIP_WITHOUT_SHARED("ifbench/IFBench_test.jsonl");
  auto set = LoadEvalDataSet(EvalDataset::kIfBench, kEvalsDir);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->samples.size(), 300u);
  EXPECT_EQ(set->MatchesPublished(), std::nullopt);
  EXPECT_TRUE(set->warnings.empty());
  EXPECT_EQ(set->samples.front().source_id, "0");
}

// --- bad input ----------------------------------------------------------------------------------

const std::string kMathLine =
    R"({"problem": "1+1?", "solution": "2", "answer": "2", "subject": "A", "level": 1, )"
    R"("unique_id": "test/a/1.json"})";

TEST(EvalDataSetTest, AMissingFileIsOneLineNamingIt) {
  auto set = LoadEvalDataSet(EvalDataset::kMath500, "/nonexistent-pipette-dir");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message,
            "/nonexistent-pipette-dir/math500/test.jsonl: cannot open: No such file or directory");
  auto gpqa = LoadEvalDataSet(EvalDataset::kGpqaDiamond, "/nonexistent-pipette-dir");
  ASSERT_FALSE(gpqa.ok());
  EXPECT_EQ(gpqa.error().message,
            "/nonexistent-pipette-dir/gpqa_diamond/gpqa_diamond.csv.gz: cannot open: No such file "
            "or directory");
}

TEST(EvalDataSetTest, AMalformedLineNamesFileAndLine) {
  TempFile file("bad.jsonl", kMathLine + "\n\n{\"problem\": \"x\",\n");
  auto set = LoadEvalDataSetFile(EvalDataset::kMath500, file.path());
  ASSERT_FALSE(set.ok());
  EXPECT_TRUE(set.error().message.starts_with(file.path() + ":3: not a JSON object: "))
      << set.error().message;
  EXPECT_EQ(set.error().message.find('\n'), std::string::npos);
}

TEST(EvalDataSetTest, AFieldOfTheWrongTypeNamesFileLineAndField) {
  TempFile file("type.jsonl",
                kMathLine + "\n" + R"({"problem": "2+2?", "answer": 4, "unique_id": "b"})" + "\n");
  auto set = LoadEvalDataSetFile(EvalDataset::kMath500, file.path());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message, file.path() + ":2: field \"answer\" is number, expected a string");
  TempFile missing("missing.jsonl", R"({"problem": "2+2?", "unique_id": "b"})");
  auto no_answer = LoadEvalDataSetFile(EvalDataset::kMath500, missing.path());
  ASSERT_FALSE(no_answer.ok());
  EXPECT_EQ(no_answer.error().message, missing.path() + ":1: no field \"answer\"");
  TempFile array("array.jsonl", "[1, 2]\n");
  auto not_object = LoadEvalDataSetFile(EvalDataset::kIfBench, array.path());
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.error().message, array.path() + ":1: a record is a JSON object, not array");
}

TEST(EvalDataSetTest, IfBenchInstructionShapeIsChecked) {
  TempFile file("if.jsonl",
                R"({"key": "0", "prompt": "p", "instruction_id_list": ["a"], "kwargs": []})");
  auto set = LoadEvalDataSetFile(EvalDataset::kIfBench, file.path());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(
      set.error().message,
      file.path() + ":1: field \"kwargs\" must be an array of 1 objects, one per instruction");
}

// The instructions are checked as the scorer reads them, at load time, naming the line.
TEST(EvalDataSetTest, IfBenchUnknownInstructionOrBadKwargsNamesTheLine) {
  const std::string good =
      R"({"key": "0", "prompt": "p", "instruction_id_list": ["count:numbers"], "kwargs": [{"N": 3.0, "word": null}]})";
  TempFile unknown("unknown.jsonl", good + "\n" +
                                        R"({"key": "1", "prompt": "q", "instruction_id_list": ["count:nope"], "kwargs": [{}]})");
  auto set = LoadEvalDataSetFile(EvalDataset::kIfBench, unknown.path());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message,
            unknown.path() + ":2: IFBench gold: unknown instruction id \"count:nope\"");
  TempFile bad_kwarg("kwarg.jsonl",
                     R"({"key": "0", "prompt": "p", "instruction_id_list": ["count:numbers"], "kwargs": [{"N": "three"}]})");
  auto bad = LoadEvalDataSetFile(EvalDataset::kIfBench, bad_kwarg.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.error().message.starts_with(bad_kwarg.path() + ":1: IFBench gold: count:numbers: "))
      << bad.error().message;
  EXPECT_EQ(bad.error().message.find('\n'), std::string::npos);
  TempFile fine("fine.jsonl", good);
  EXPECT_TRUE(LoadEvalDataSetFile(EvalDataset::kIfBench, fine.path()).ok());
}

TEST(EvalDataSetTest, ADuplicatePromptIsRefused) {
  TempFile file("dup.jsonl", kMathLine + "\n" + kMathLine + "\n");
  auto set = LoadEvalDataSetFile(EvalDataset::kMath500, file.path());
  ASSERT_FALSE(set.ok());
  EXPECT_TRUE(set.error().message.starts_with(file.path() + ":2: the same prompt (sample id "))
      << set.error().message;
  EXPECT_TRUE(set.error().message.ends_with(") as line 1"));
}

const std::string kGpqaHeader =
    "Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,Incorrect Answer 3,Record ID\n";

TEST(EvalDataSetTest, AGpqaRecordWithTheWrongFieldCountNamesItsLine) {
  TempFile file("short.csv.gz",
                Gzip(kGpqaHeader + "\"Q\nmultiline\",a,b,c,d,rec1\nQ2,a,b,c,rec2\n"));
  auto set = LoadEvalDataSetFile(EvalDataset::kGpqaDiamond, file.path());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message, file.path() + ":4: the record has 5 fields, the header 6");
}

TEST(EvalDataSetTest, AGpqaHeaderWithoutAColumnIsRefused) {
  TempFile file("header.csv.gz", Gzip("Question,Correct Answer\nq,a\n"));
  auto set = LoadEvalDataSetFile(EvalDataset::kGpqaDiamond, file.path());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message,
            file.path() + ":1: the header has no column \"Incorrect Answer 1\"");
}

TEST(EvalDataSetTest, ATruncatedGzipIsRefused) {
  const std::string gz = Gzip(kGpqaHeader + "q,a,b,c,d,r\n");
  TempFile file("trunc.csv.gz", gz.substr(0, gz.size() - 6));
  auto set = LoadEvalDataSetFile(EvalDataset::kGpqaDiamond, file.path());
  ASSERT_FALSE(set.ok());
  EXPECT_TRUE(set.error().message.starts_with(file.path() + ": cannot decompress: "))
      << set.error().message;
}

TEST(EvalDataSetTest, NonUtf8CsvTextNamesItsLine) {
  TempFile file("latin1.csv.gz", Gzip(kGpqaHeader + "q,a,b,c,d,r\nq\xe9,a,b,c,d,r2\n"));
  auto set = LoadEvalDataSetFile(EvalDataset::kGpqaDiamond, file.path());
  ASSERT_FALSE(set.ok());
  EXPECT_TRUE(set.error().message.starts_with(file.path() + ":3: not UTF-8 text"))
      << set.error().message;
}

TEST(EvalDataSetTest, AGpqaSampleIsBuiltAsTheProtocolSays) {
  TempFile file("one.csv.gz", Gzip(kGpqaHeader + "\"What, is \"\"x\"\"?\n\",right,w1,w2,w3,r1\n"));
  auto set = LoadEvalDataSetFile(EvalDataset::kGpqaDiamond, file.path());
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->samples.size(), 1u);
  const EvalSample& sample = set->samples[0];
  const std::string question = "What, is \"x\"?\n";
  EXPECT_EQ(sample.shuffle_seed, GpqaShuffleSeed(question));
  const std::array<int, 4> order = GpqaOptionOrder(sample.shuffle_seed);
  const std::array<std::string, 4> texts = {"right", "w1", "w2", "w3"};
  std::array<std::string, 4> shown;
  for (int i = 0; i < 4; ++i) shown[i] = texts[order[i]];
  EXPECT_EQ(sample.prompt, GpqaPrompt(question, shown));
  EXPECT_EQ(GpqaPrompt("Q", {"a", "b", "c", "d"}),
            "Answer the following multiple choice question. The last line of your response should "
            "be in the following format: 'Answer: A/B/C/D' (e.g. 'Answer: A').\n\nQ\n\nA) a\nB) "
            "b\nC) c\nD) d");
  for (int i = 0; i < 4; ++i) {
    if (order[i] == 0) {
      EXPECT_EQ(sample.gold, std::string(1, 'A' + i));
    }
  }
}

TEST(EvalDataSetTest, AFileThatIsNotThePublishedOneLoadsWithAWarningNamingBothDigests) {
  TempFile file("other.jsonl", kMathLine + "\n");
  auto set = LoadEvalDataSetFile(EvalDataset::kMath500, file.path());
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->MatchesPublished(), false);
  ASSERT_EQ(set->warnings.size(), 2u);
  EXPECT_EQ(set->warnings[0],
            "MATH-500 data set " + file.path() + " has fingerprint " + set->fingerprint +
                ", not the published "
                "03d8a41616e2b3f5e0c317e8de72d3a88b930186a0ef7d00686e90051004f588: it is not the "
                "published data set, so its scores are not comparable with published ones");
  EXPECT_EQ(set->warnings[1],
            "MATH-500 data set " + file.path() + " has 1 samples, the published one 500");
}

TEST(EvalDataSetTest, FingerprintIsOrderIndependentAndSeparatesPromptFromGold) {
  std::vector<EvalSample> a = {{.prompt = "p1", .gold = "g1"}, {.prompt = "p2", .gold = "g2"}};
  std::vector<EvalSample> b = {a[1], a[0]};
  EXPECT_EQ(EvalFingerprint(a), EvalFingerprint(b));
  // sha256("p1\x1fg1\np2\x1fg2")
  EXPECT_EQ(EvalFingerprint(a), "b332d03a22663b8aea94c643fe885313ecd3f1e8ea8b9c08036111be786388ae");
  EXPECT_EQ(EvalSampleId("hello"), "2cf24dba5fb0");
}

TEST(EvalDataSetTest, DatasetsAreFoundByNameOrBenchmarkId) {
  EXPECT_EQ(EvalDatasetNamed("math_500"), EvalDataset::kMath500);
  EXPECT_EQ(EvalDatasetNamed("eval_gpqa_diamond_2026.06.1"), EvalDataset::kGpqaDiamond);
  EXPECT_EQ(EvalDatasetNamed("ifbench"), EvalDataset::kIfBench);
  EXPECT_EQ(EvalDatasetNamed("mmlu"), std::nullopt);
}


// Found by fuzz/fuzz_completions_jsonl: a number beyond a double threw out of `pipette score`.
TEST(CompletionLine, EveryRefusalIsAnErrorNeverAnException) {
  const auto error = [](std::string_view line) {
    const auto r = ParseCompletionLine(line);
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(error(R"({"id": "a", "completion": "b", "x": 1e400})"),
            "not a JSON line: a number out of range");
  EXPECT_EQ(error(R"({"id": "a", "completion": "b"} x)"), "not a JSON line at byte 32");
  EXPECT_EQ(error(R"({"id": 1, "completion": "b"})"),
            "expected {\"id\": string, \"completion\": string}");
  EXPECT_EQ(error(std::string(100, '[')), "nested deeper than 64 levels (byte 64)");
  const auto ok = ParseCompletionLine(R"({"id": "e7b7a0f871c3#2", "completion": "\\boxed{1}"})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->id, "e7b7a0f871c3#2");
  EXPECT_EQ(ok->completion, "\\boxed{1}");
}

}  // namespace
}  // namespace pipette
