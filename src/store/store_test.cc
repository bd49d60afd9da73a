#include "pipette/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/ids.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

ResultFilter By(std::string ResultFilter::*field, const std::string& value,
                std::string ResultFilter::*field2 = nullptr, const std::string& value2 = "") {
  ResultFilter f;
  f.*field = value;
  if (field2 != nullptr) f.*field2 = value2;
  return f;
}

ResultFilter By(std::vector<std::string> ResultFilter::*field, const std::string& value,
                std::string ResultFilter::*field2 = nullptr, const std::string& value2 = "") {
  ResultFilter f;
  (f.*field).push_back(value);
  if (field2 != nullptr) f.*field2 = value2;
  return f;
}

ResultFilter Limited(ResultFilter f, int limit) {
  f.limit = limit;
  return f;
}

StoreOptions Options(int busy_timeout_ms, int64_t max_size_bytes) {
  StoreOptions o;
  o.busy_timeout_ms = busy_timeout_ms;
  o.max_size_bytes = max_size_bytes;
  return o;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("pipette_store_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    path_ = (dir_ / "sub" / "results.db").string();  // "sub" checks that Open makes parents
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ResultStore> OpenOrDie(const StoreOptions& options = {}) {
    auto store = ResultStore::Open(path_, options);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(store).value() : nullptr;
  }

  fs::path dir_;
  std::string path_;
};

// A complete, valid record; `seconds` orders started_at.
json MakeRecord(const std::string& id, int seconds, const std::string& type = "prefill",
                const std::string& quant = "Q4_K_M") {
  char started[32];
  std::snprintf(started, sizeof started, "2026-11-29T13:%02d:%02d.000Z", seconds / 60 % 60,
                seconds % 60);
  const std::string metric = HeadlineMetric(type);
  json r = {
      {"schema", kResultSchema},
      {"result_id", id},
      {"config_id", "cfg-" + quant},
      {"status", "ok"},
      {"benchmark",
       {{"id", type + "_256"},
        {"type", type},
        {"prefill_tokens", 256},
        {"decode_tokens", 0},
        {"methodology", "pipette-method/1"}}},
      {"model",
       {{"path", "/m/stories-" + quant + ".gguf"},
        {"file_name", "stories-" + quant + ".gguf"},
        {"sha256", quant == "F32" ? "aa11" + std::string(60, '0') : "bb22" + std::string(60, '1')},
        {"size_bytes", 1234},
        {"quant", quant}}},
      {"runtime",
       {{"name", "llamacpp"},
        {"version", "b1"},
        {"commit", "80fb11a"},
        {"settings", {{"threads", 2}}}}},
      {"device", {{"id", "dev0123456789"}, {"label", "laptop"}}},
      {"metrics",
       {{metric,
         {{"unit", "tokens/s"},
          {"n", 3},
          {"median", 1000.5},
          {"mean", 1001.25},
          {"stddev", 2.5},
          {"cv", 0.0025},
          {"min", 998.0},
          {"max", 1004.0},
          {"ci95_low", 998.0},
          {"ci95_high", 1004.0}}}}},
      {"samples", json::array({{{"rep", 0}, {metric, 998.0}, {"tokens_in", 256}},
                               {{"rep", 1}, {metric, 1000.5}, {"tokens_in", 256}},
                               {{"rep", 2}, {metric, 1004.0}, {"tokens_in", 256}}})},
      {"started_at", started},
      {"finished_at", started},
      {"logs", {{"warnings", json::array()}, {"runtime_stderr_tail", ""}}},
  };
  return r;
}

json MakeFailed(const std::string& id, int seconds) {
  json r = MakeRecord(id, seconds);
  r["status"] = "failed";
  r["failure"] = {{"stage", "load"}, {"message", "model file truncated, \"re-download\" it"}};
  r.erase("metrics");
  r["samples"] = json::array();
  return r;
}

TEST_F(StoreTest, PutGetRoundTrip) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  const json record = MakeRecord(NewUuidV7(), 1);
  ASSERT_TRUE(store->Put(record).ok());
  auto got = store->Get(record["result_id"]);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, record);

  // Reopening sees it too (the data is in the file, not the connection).
  store.reset();
  store = OpenOrDie();
  auto again = store->Get(record["result_id"]);
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ(**again, record);
  EXPECT_TRUE(store->CheckIntegrity().ok());
}

// Regression: a result whose type has no headline metric (eval, before it had accuracy) made
// every `results list` fail with "JSON path error" (the path '$.metrics..ci95_low').
TEST_F(StoreTest, ListCopesWithTypesWithoutHeadline) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->Put(MakeRecord(NewUuidV7(), 1, "a_type_of_a_later_version")).ok());
  ASSERT_TRUE(store->Put(MakeRecord(NewUuidV7(), 2, "prefill")).ok());
  auto rows = store->List({});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_TRUE((*rows)[0].headline_ci95_low.has_value());  // prefill, newest first
  EXPECT_FALSE((*rows)[1].headline_ci95_low.has_value());
}

TEST_F(StoreTest, EvalCompletionsLiveInTheirOwnTable) {
  auto store = OpenOrDie();
  json record = MakeRecord(NewUuidV7(), 1, "eval");
  record["eval"] = {{"dataset", "math_500"}};
  record["completions"] = json::array();
  for (int k = 0; k < 3; ++k) {
    record["completions"].push_back({{"key", "e7b7a0f871c3#" + std::to_string(k)},
                                     {"id", "e7b7a0f871c3"},
                                     {"attempt", k},
                                     {"stop", k == 2 ? "doom_loop" : "eos"},
                                     {"correct", k == 0},
                                     {"parsed", true},
                                     {"extracted", "\\frac{1}{2}"},
                                     {"method", "boxed"},
                                     {"completion", "so \\boxed{\\frac{1}{2}} " + std::string(k, '!')}});
  }
  ASSERT_TRUE(store->Put(record).ok());
  auto got = store->Get(record["result_id"]);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, record);                 // read back whole, in order
  EXPECT_TRUE(store->Put(record).ok());     // and idempotent
  auto records = store->Records({});
  ASSERT_TRUE(records.ok());
  EXPECT_EQ((*records)[0]["completions"], record["completions"]);
  // The record's JSON column does not repeat them: one row per attempt in `completions`.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT (SELECT count(*) FROM completions WHERE correct = 1), "
                               "(SELECT count(*) FROM completions), "
                               "(SELECT instr(record, 'boxed{') FROM results)",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 1);
  EXPECT_EQ(sqlite3_column_int(st, 1), 3);
  EXPECT_EQ(sqlite3_column_int(st, 2), 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(StoreTest, SamplesAreQueryable) {
  auto store = OpenOrDie();
  const json record = MakeRecord(NewUuidV7(), 1);
  ASSERT_TRUE(store->Put(record).ok());
  store.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT count(*), sum(value) FROM samples "
                               "WHERE metric = 'prefill_throughput'",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 3);
  EXPECT_DOUBLE_EQ(sqlite3_column_double(st, 1), 998.0 + 1000.5 + 1004.0);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(StoreTest, GetByPrefix) {
  auto store = OpenOrDie();
  const std::string a = "01930000-0000-7000-8000-00000000000a";
  const std::string b = "01930000-0000-7000-8000-00000000000b";
  const std::string c = "01940000-0000-7000-8000-00000000000c";
  for (const auto& id : {a, b, c}) ASSERT_TRUE(store->Put(MakeRecord(id, 1)).ok());

  auto unique = store->Get("0194");
  ASSERT_TRUE(unique.ok()) << unique.error().message;
  ASSERT_TRUE(unique->has_value());
  EXPECT_EQ((**unique)["result_id"], c);

  auto upper = store->Get("01930000-0000-7000-8000-00000000000A");
  ASSERT_TRUE(upper.ok() && upper->has_value());
  EXPECT_EQ((**upper)["result_id"], a);

  auto ambiguous = store->Get("0193");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.error().message.find("matches 2 results"), std::string::npos)
      << ambiguous.error().message;

  auto missing = store->Get("0195");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());

  EXPECT_FALSE(store->Get("").ok());

  // List shows the shortest unique prefix, at least 8 characters.
  auto rows = store->List({});
  ASSERT_TRUE(rows.ok());
  std::map<std::string, std::string> short_ids;
  for (const auto& r : *rows) short_ids[r.result_id] = r.short_id;
  EXPECT_EQ(short_ids[a], "01930000-0000-7000-8000-00000000000a");
  EXPECT_EQ(short_ids[c], "01940000");
}

TEST_F(StoreTest, PutIsIdempotentByResultId) {
  auto store = OpenOrDie();
  json record = MakeRecord(NewUuidV7(), 1);
  ASSERT_TRUE(store->Put(record).ok());
  EXPECT_TRUE(store->Put(record).ok());  // identical: accepted, nothing changes
  json changed = record;
  changed["metrics"]["prefill_throughput"]["median"] = 5.0;
  Status s = store->Put(changed);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("already stored with different content"), std::string::npos);
  auto rows = store->List({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(*(*rows)[0].headline, 1000.5);
}

TEST_F(StoreTest, PutRejectsInvalidRecords) {
  auto store = OpenOrDie();
  const json good = MakeRecord(NewUuidV7(), 1);
  struct Case {
    const char* field;
    json value;
  };
  const Case cases[] = {{"/schema", "pipette.result/2"},
                        {"/result_id", "not-a-uuid"},
                        {"/config_id", ""},
                        {"/status", "great"},
                        {"/benchmark/id", 7},
                        {"/started_at", "yesterday"},
                        {"/metrics", json::array()},
                        {"/samples", json::array({{{"rep", 1}}, {{"rep", 1}}})}};
  for (const Case& c : cases) {
    json bad = good;
    bad[json::json_pointer(c.field)] = c.value;
    Status s = store->Put(bad);
    EXPECT_FALSE(s.ok()) << c.field;
    if (!s.ok()) {
      EXPECT_NE(s.error().message.find("invalid result record"), std::string::npos);
    }
  }
  json failed_without_failure = good;
  failed_without_failure["status"] = "failed";
  EXPECT_FALSE(store->Put(failed_without_failure).ok());
  EXPECT_FALSE(store->Put(json::array()).ok());
  auto rows = store->List({});
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

TEST_F(StoreTest, PutToleratesOddButValidRecords) {
  auto store = OpenOrDie();
  // Invalid UTF-8 from a runtime's stderr is stored as U+FFFD, and storing it again is a no-op.
  json bad_utf8 = MakeRecord(NewUuidV7(), 1);
  bad_utf8["logs"]["runtime_stderr_tail"] = std::string("abc\xff\xfe def");
  ASSERT_TRUE(store->Put(bad_utf8).ok());
  EXPECT_TRUE(store->Put(bad_utf8).ok());
  auto got = store->Get(bad_utf8["result_id"]);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((**got)["logs"]["runtime_stderr_tail"], "abc\uFFFD\uFFFD def");
  // Optional sections of unexpected shapes are stored; their columns stay empty.
  json odd = MakeRecord(NewUuidV7(), 2);
  odd["model"] = "stories.gguf";
  odd["runtime"] = json::array({1, 2});
  odd["device"] = nullptr;
  odd["samples"] = json::array({{{"tokens_out", 8}, {"prefill_throughput", NAN}}});
  ASSERT_TRUE(store->Put(odd).ok());
  auto rows = store->List(By(&ResultFilter::models, "stories"));
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 1u);  // only bad_utf8 has a model file name
  auto records = store->Records({});
  ASSERT_TRUE(records.ok());
  std::ostringstream csv, jsonl;
  EXPECT_TRUE(ExportCsv(*records, csv).ok());
  EXPECT_TRUE(ExportJsonl(*records, jsonl).ok());
}

TEST_F(StoreTest, ListFiltersAndOrder) {
  auto store = OpenOrDie();
  const std::string id1 = "01930000-0000-7000-8000-000000000001";
  const std::string id2 = "01930000-0000-7000-8000-000000000002";
  const std::string id3 = "01930000-0000-7000-8000-000000000003";
  const std::string id4 = "01930000-0000-7000-8000-000000000004";
  ASSERT_TRUE(store->Put(MakeRecord(id1, 10, "prefill", "F32")).ok());
  ASSERT_TRUE(store->Put(MakeRecord(id2, 20, "decode", "Q4_K_M")).ok());
  json other_device = MakeRecord(id3, 30, "memory", "Q4_K_M");
  other_device["device"] = {{"id", "ffee00"}, {"label", "phone"}};
  other_device["runtime"]["name"] = "openai";
  other_device["metrics"] = {{"max_host_usage", {{"unit", "bytes"}, {"median", 1e9}}}};
  ASSERT_TRUE(store->Put(other_device).ok());
  ASSERT_TRUE(store->Put(MakeFailed(id4, 40)).ok());

  auto ids = [&](const ResultFilter& f) {
    std::vector<std::string> out;
    auto rows = store->List(f);
    EXPECT_TRUE(rows.ok());
    if (rows.ok()) {
      for (const auto& r : *rows) out.push_back(r.result_id);
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(ids({}), (V{id4, id3, id2, id1}));  // newest first
  EXPECT_EQ(ids(By(&ResultFilter::benchmarks, "decode_256")), (V{id2}));
  EXPECT_EQ(ids(By(&ResultFilter::models, "AA11")), (V{id1}));  // sha256 prefix, any case
  EXPECT_EQ(ids(By(&ResultFilter::models, "stories-Q4")),
            (V{id4, id3, id2}));  // file-name substring
  EXPECT_EQ(ids(By(&ResultFilter::quants, "q4_k_m")), (V{id4, id3, id2}));
  EXPECT_EQ(ids(By(&ResultFilter::status, "failed")), (V{id4}));
  EXPECT_EQ(ids(By(&ResultFilter::devices, "ffee")), (V{id3}));
  EXPECT_EQ(ids(By(&ResultFilter::runtimes, "openai")), (V{id3}));
  EXPECT_EQ(ids(By(&ResultFilter::labels, "laptop")), (V{id4, id2, id1}));
  EXPECT_EQ(ids(By(&ResultFilter::since, "2026-11-29T13:00:30")), (V{id4, id3}));
  // A full time with Z matches a result started at that very second (stored as ".000Z").
  EXPECT_EQ(ids(By(&ResultFilter::since, "2026-11-29T13:00:30Z")), (V{id4, id3}));
  EXPECT_EQ(ids(By(&ResultFilter::since, "2026-11-29T13:00:30.001Z")), (V{id4}));
  EXPECT_EQ(ids(By(&ResultFilter::since, "2026-11-29")), (V{id4, id3, id2, id1}));
  EXPECT_EQ(ids(By(&ResultFilter::since, "2026-11-30")), V{});
  auto garbage = store->Records(By(&ResultFilter::since, "garbage"));
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.error().message.find("'garbage' is not a date"), std::string::npos);
  EXPECT_EQ(ids(Limited(ResultFilter{}, 2)), (V{id4, id3}));
  EXPECT_EQ(ids(Limited(By(&ResultFilter::quants, "Q4_K_M", &ResultFilter::status, "ok"), 1)),
            (V{id3}));

  // Repeated values are alternatives; settings match the recorded value (issue 7).
  ResultFilter two_quants;
  two_quants.quants = {"F32", "q4_k_m"};
  two_quants.status = "ok";
  EXPECT_EQ(ids(two_quants), (V{id3, id2, id1}));
  EXPECT_EQ(ids(By(&ResultFilter::settings, "threads=2")), (V{id4, id3, id2, id1}));
  EXPECT_EQ(ids(By(&ResultFilter::settings, "threads=2.0")), (V{id4, id3, id2, id1}));
  EXPECT_EQ(ids(By(&ResultFilter::settings, "threads=1")), V{});
  EXPECT_EQ(ids(By(&ResultFilter::settings, "cpus=0")), V{});  // not recorded: no match
  ResultFilter either;
  either.settings = {"threads=1", "threads=2"};
  EXPECT_EQ(ids(either), (V{id4, id3, id2, id1}));
  either.settings = {"threads=2", "mmap=true"};
  EXPECT_EQ(ids(either), V{});
  auto bad_setting = store->List(By(&ResultFilter::settings, "threads"));
  ASSERT_FALSE(bad_setting.ok());
  EXPECT_EQ(bad_setting.error().message,
            "'threads' is not a setting filter: give KEY=VALUE, e.g. threads=2");
  EXPECT_FALSE(ParseSettingFilter("a.b=1").ok());

  auto rows = store->List(By(&ResultFilter::benchmarks, "memory_256"));
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  const ResultRow& row = (*rows)[0];
  EXPECT_EQ(row.headline_metric, "max_host_usage");
  EXPECT_EQ(row.headline_unit, "bytes");
  EXPECT_EQ(row.headline, 1e9);
  EXPECT_EQ(row.threads, 2);
  EXPECT_EQ(row.runtime, "openai");
  EXPECT_EQ(row.label, "phone");
  EXPECT_EQ(row.quant_label, "Q4_K_M");  // no tensor_types recorded: the label as it is

  auto failed = store->List(By(&ResultFilter::status, "failed"));
  ASSERT_TRUE(failed.ok());
  EXPECT_FALSE((*failed)[0].headline.has_value());

  auto records = store->Records(By(&ResultFilter::quants, "F32"));
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0]["result_id"], id1);
}

TEST_F(StoreTest, OkResultIdsOfConfig) {
  auto store = OpenOrDie();
  const std::string a = "01930000-0000-7000-8000-000000000001";
  const std::string b = "01930000-0000-7000-8000-000000000002";
  ASSERT_TRUE(store->Put(MakeRecord(a, 1, "prefill", "F32")).ok());
  ASSERT_TRUE(store->Put(MakeRecord(b, 2, "prefill", "Q4_K_M")).ok());
  json failed = MakeFailed("01930000-0000-7000-8000-000000000003", 3);
  failed["config_id"] = "cfg-F32";
  ASSERT_TRUE(store->Put(failed).ok());
  auto ids = store->OkResultIds("cfg-F32");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, std::vector<std::string>{a});
  auto none = store->OkResultIds("cfg-none");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(StoreTest, FileHashCacheHitsOnlyForSameSizeAndMtime) {
  auto store = OpenOrDie();
  const std::string sha(64, 'a');
  auto miss = store->CachedFileHash("/models/a.gguf", 100, 5);
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss->has_value());
  ASSERT_TRUE(store->PutFileHash("/models/a.gguf", 100, 5, sha).ok());
  auto hit = store->CachedFileHash("/models/./a.gguf", 100, 5);  // same file, other spelling
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->value_or(""), sha);
  auto touched = store->CachedFileHash("/models/a.gguf", 100, 6);
  ASSERT_TRUE(touched.ok());
  EXPECT_FALSE(touched->has_value());
  auto resized = store->CachedFileHash("/models/a.gguf", 101, 5);
  ASSERT_TRUE(resized.ok());
  EXPECT_FALSE(resized->has_value());
  // A new digest for the changed file replaces the old entry.
  const std::string sha2(64, 'b');
  ASSERT_TRUE(store->PutFileHash("/models/a.gguf", 100, 6, sha2).ok());
  EXPECT_EQ(store->CachedFileHash("/models/a.gguf", 100, 6)->value_or(""), sha2);
  EXPECT_FALSE(store->CachedFileHash("/models/a.gguf", 100, 5)->has_value());
  // Relative paths are keyed by their absolute form.
  ASSERT_TRUE(store->PutFileHash("rel.gguf", 1, 1, sha).ok());
  EXPECT_EQ(store->CachedFileHash((fs::current_path() / "rel.gguf").string(), 1, 1)->value_or(""),
            sha);
}

// Two processes writing the same (new) store at once lose nothing and corrupt nothing.
TEST_F(StoreTest, TwoProcessesWriteConcurrently) {
  constexpr int kPerProcess = 200;
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    children[c] = fork();
    ASSERT_GE(children[c], 0);
    if (children[c] == 0) {
      auto store = ResultStore::Open(path_);
      if (!store.ok()) {
        std::fprintf(stderr, "child %d: %s\n", c, store.error().message.c_str());
        _exit(2);
      }
      for (int i = 0; i < kPerProcess; ++i) {
        Status s = (*store)->Put(MakeRecord(NewUuidV7(), i, i % 2 ? "decode" : "prefill"));
        if (!s.ok()) {
          std::fprintf(stderr, "child %d: %s\n", c, s.error().message.c_str());
          _exit(3);
        }
      }
      _exit(0);
    }
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  auto store = OpenOrDie();
  auto rows = store->List({});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 2u * kPerProcess);
  EXPECT_TRUE(store->CheckIntegrity().ok());
}

TEST_F(StoreTest, BusyStoreGivesClearError) {
  auto store = OpenOrDie(Options(100, 0));
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  Status s = store->Put(MakeRecord(NewUuidV7(), 1));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, path_ + ": database is busy (another pipette is writing); retry");
  // Readers are not blocked by a writer (WAL).
  EXPECT_TRUE(store->List({}).ok());
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_TRUE(store->Put(MakeRecord(NewUuidV7(), 1)).ok());
}

TEST_F(StoreTest, FullDiskGivesClearErrorAndKeepsData) {
  auto store = OpenOrDie(Options(10000, 64 * 1024));
  const json kept = MakeRecord(NewUuidV7(), 1);
  ASSERT_TRUE(store->Put(kept).ok());
  json huge = MakeRecord(NewUuidV7(), 2);
  huge["logs"]["runtime_stderr_tail"] = std::string(256 * 1024, 'x');
  Status s = store->Put(huge);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(path_ + ": disk full"), std::string::npos) << s.error().message;
  auto rows = store->List({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].result_id, kept["result_id"]);
  EXPECT_TRUE(store->CheckIntegrity().ok());
  EXPECT_TRUE(store->Put(MakeRecord(NewUuidV7(), 3)).ok());  // still usable afterwards
}

TEST_F(StoreTest, OpenRejectsNonSqliteFile) {
  fs::create_directories(fs::path(path_).parent_path());
  std::ofstream(path_) << "GGUF this is not a database at all, just some text......\n";
  auto store = ResultStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().message,
            path_ +
                ": not a pipette store (not an SQLite database); move the file away or give "
                "another store path");
}

TEST_F(StoreTest, OpenRejectsOtherProgramsDatabase) {
  fs::create_directories(fs::path(path_).parent_path());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = ResultStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("not a pipette store"), std::string::npos);
}

TEST_F(StoreTest, OpenRejectsNewerSchema) {
  { ASSERT_TRUE(OpenOrDie()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = ResultStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("schema version 99, newer than this pipette"),
            std::string::npos)
      << store.error().message;
}

TEST_F(StoreTest, OpenRejectsDirectory) {
  fs::create_directories(path_);
  auto store = ResultStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("is a directory"), std::string::npos);
}

TEST_F(StoreTest, OpenWithoutCreateRefusesMissingFile) {
  StoreOptions read_only;
  read_only.create_if_missing = false;
  auto missing = ResultStore::Open(path_, read_only);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "no results store at " + path_ +
                " (`pipette run` and `pipette suite run` create one); check the store path");
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_FALSE(fs::exists(fs::path(path_).parent_path()));  // no folder made either
  ASSERT_TRUE(OpenOrDie());  // creates it
  auto existing = ResultStore::Open(path_, read_only);
  EXPECT_TRUE(existing.ok()) << existing.error().message;
}

TEST(ParseSinceTest, AcceptsRfc3339UtcAndItsPrefixes) {
  const std::pair<const char*, const char*> good[] = {
      {"2026", "2026"},
      {"2026-11", "2026-11"},
      {"2026-11-29", "2026-11-29"},
      {"2026-11-29T10", "2026-11-29T10"},
      {"2026-11-29t10", "2026-11-29T10"},
      {"2026-11-29T10:05", "2026-11-29T10:05"},
      {"2026-11-29T10:05:00", "2026-11-29T10:05:00"},
      {"2026-11-29T10:05:00Z", "2026-11-29T10:05:00"},
      {"2026-11-29T10:05:00z", "2026-11-29T10:05:00"},
      {"2026-11-29T10:05:00.5Z", "2026-11-29T10:05:00.5"},
      {"2026-11-29T10:05:00.123456", "2026-11-29T10:05:00.123456"},
      {"2024-02-29", "2024-02-29"},  // leap year
      {"2000-02-29", "2000-02-29"},
      {"2026-12-31T23:59:60Z", "2026-12-31T23:59:60"},  // leap second
      {"2026-01-01T00:00:00Z", "2026-01-01T00:00:00"},
  };
  for (const auto& [in, want] : good) {
    auto got = ParseSince(in);
    ASSERT_TRUE(got.ok()) << in << ": " << got.error().message;
    EXPECT_EQ(*got, want) << in;
  }
}

TEST(ParseSinceTest, RefusesAnythingElse) {
  for (const char* in :
       {"", "garbage", "yesterday", "-1", "1", "202", "20261", "2026-", "2026-1", "2026-13",
        "2026-00", "2026-13-45", "2026-11-31", "2026-02-29", "1900-02-29", "2026-11-00",
        "2026-11-29T", "2026-11-29T25:00:00Z", "2026-11-29T24", "2026-11-29T10:60",
        "2026-11-29T10:05:61Z", "2026-11-29T10:05:00.", "2026-11-29T10:05:00.Z",
        "2026-11-29T10Z", "2026-11-29T10:05Z", "2026-11-29T10:05:00+02:00",
        "2026-11-29T10:05:00ZZ", "2026-11-29 10:05:00", "2026-11-29T10:05:00Z ", " 2026",
        "2026/11/29", "+2026", "2026-11-29T1:05"}) {
    auto got = ParseSince(in);
    ASSERT_FALSE(got.ok()) << "'" << in << "' accepted as " << *got;
    std::string want(1, '\'');
    want.append(in).append(
        "' is not a date or RFC 3339 UTC time (e.g. 2026-11-29 or 2026-11-29T10:00:00Z)");
    EXPECT_EQ(got.error().message, want);
  }
}

TEST(DefaultStorePathTest, FollowsEnvironment) {
  const char* saved_store = std::getenv("PIPETTE_STORE");
  const char* saved_xdg = std::getenv("XDG_DATA_HOME");
  const std::string old_store = saved_store ? saved_store : "";
  const std::string old_xdg = saved_xdg ? saved_xdg : "";
  const std::string old_home = std::getenv("HOME") ? std::getenv("HOME") : "";
  setenv("PIPETTE_STORE", "/x/s.db", 1);
  EXPECT_EQ(DefaultStorePath(), "/x/s.db");
  setenv("PIPETTE_STORE", "", 1);
  setenv("XDG_DATA_HOME", "/xdg", 1);
  EXPECT_EQ(DefaultStorePath(), "/xdg/pipette/results.db");
  unsetenv("XDG_DATA_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultStorePath(), "/home/u/.local/share/pipette/results.db");
  saved_store ? setenv("PIPETTE_STORE", old_store.c_str(), 1) : unsetenv("PIPETTE_STORE");
  saved_xdg ? setenv("XDG_DATA_HOME", old_xdg.c_str(), 1) : unsetenv("XDG_DATA_HOME");
  setenv("HOME", old_home.c_str(), 1);
}

TEST(ExportTest, CsvQuotesPerRfc4180) {
  json ok = MakeRecord("01930000-0000-7000-8000-000000000001", 1);
  ok["device"]["label"] = "lab, \"bench\" 2";
  json failed = MakeFailed("01930000-0000-7000-8000-000000000002", 2);
  failed["failure"]["message"] = "line one\nline \"two\"";
  std::ostringstream out;
  ASSERT_TRUE(ExportCsv({ok, failed}, out).ok());
  const std::string header =
      "result_id,started_at,status,benchmark,type,prefill_tokens,decode_tokens,model_file,"
      "model_sha256,quant,runtime,runtime_commit,threads,device_id,label,metric,unit,n,median,"
      "mean,stddev,cv,min,max,ci95_low,ci95_high,failure_stage,failure_message\r\n";
  const std::string sha_q4 = "bb22" + std::string(60, '1');
  const std::string expected =
      header +
      "01930000-0000-7000-8000-000000000001,2026-11-29T13:00:01.000Z,ok,prefill_256,prefill,256,"
      "0,stories-Q4_K_M.gguf," +
      sha_q4 +
      ",Q4_K_M,llamacpp,80fb11a,2,dev0123456789,"
      "\"lab, \"\"bench\"\" 2\",prefill_throughput,tokens/s,3,1000.5,1001.25,2.5,0.0025,998.0,"
      "1004.0,998.0,1004.0,,\r\n"
      "01930000-0000-7000-8000-000000000002,2026-11-29T13:00:02.000Z,failed,prefill_256,prefill,"
      "256,0,stories-Q4_K_M.gguf," +
      sha_q4 +
      ",Q4_K_M,llamacpp,80fb11a,2,dev0123456789,laptop,"
      ",,,,,,,,,,,load,\"line one\nline \"\"two\"\"\"\r\n";
  EXPECT_EQ(out.str(), expected);
}

TEST(ExportTest, JsonlRoundTrips) {
  const std::vector<json> records = {MakeRecord("01930000-0000-7000-8000-000000000001", 1),
                                     MakeFailed("01930000-0000-7000-8000-000000000002", 2)};
  std::ostringstream out;
  ASSERT_TRUE(ExportJsonl(records, out).ok());
  std::istringstream in(out.str());
  std::vector<json> back;
  for (std::string line; std::getline(in, line);) back.push_back(json::parse(line));
  EXPECT_EQ(back, records);
}

TEST(ExportTest, ReportsFailedStream) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_FALSE(ExportJsonl({MakeRecord("01930000-0000-7000-8000-000000000001", 1)}, out).ok());
  EXPECT_FALSE(ExportCsv({}, out).ok());
}

}  // namespace
}  // namespace pipette
