// Conformance tests of FleetStore (pipette/fleet_store.h): the same tests against every backend,
// SQLite (a temporary file) and PostgreSQL (a real server this process starts; skipped, saying
// why, where none can run).
#include "pipette/fleet_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/ids.h"
#include "fleet_store/common.h"
#include "store/sqlite.h"
#ifdef PIPETTE_HAVE_TEST_POSTGRES
#include "tests/support/postgres_server.h"
#endif

namespace pipette {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int64_t kNow = 1'800'000'000;

// A real record (decode_throughput_256_100 on stories260K-Q8_0 by `pipette run`), trimmed to
// what the store reads plus some.
const json& TemplateRecord() {
  static const json record = json::parse(R"json({
  "schema": "pipette.result/1", "result_id": "01a2302f-4f4f-76ac-9af7-c4fd08d368c6",
  "config_id": "c36b2da726ebeb671bb6d8413efe95de0066e6702a6f8776fb7151b4429b37a9",
  "status": "ok", "started_at": "2026-12-01T05:58:56.591Z",
  "finished_at": "2026-12-01T05:58:59.883Z",
  "benchmark": {"decode_tokens": 100, "description": "Generate 100 tokens after a 256-token context",
                "id": "decode_throughput_256_100", "methodology": "pipette-method/1",
                "prefill_tokens": 256, "type": "decode"},
  "model": {"architecture": "llama", "file_name": "stories260K-Q8_0.gguf", "quant": "Q8_0",
            "quant_inferred": false,
            "sha256": "f2517e01a370b962a27d8950b2da710e940724c7862fc713c3dc78081a17bc82",
            "size_bytes": 379168, "tensor_types": {"f16": 5, "f32": 11, "q8_0": 32}},
  "runtime": {"name": "llamacpp", "version": "llama.cpp@80fb11a",
              "commit": "80fb11ac73e66d89eae2c6a91d8a77428fa733ed",
              "settings": {"flash_attn": "auto", "mmap": false, "n_batch": 2048, "n_ctx": 356,
                           "n_gpu_layers": 0, "n_ubatch": 512, "poll": 50, "threads": 1,
                           "type_k": "f16", "type_v": "f16"}},
  "device": {"id": "fd6a9c299ae33f9c4081567a9f467063d6a07cb9d728f66dd14bb4bcd44b79d7",
             "label": "", "memory_bytes": 25276510208,
             "os": {"arch": "x86_64", "name": "Debian GNU/Linux"},
             "cpu": {"model": "AMD EPYC", "logical_cores": 2}},
  "metrics": {"decode_throughput": {"ci95_high": 2105.499062442322, "ci95_low": 2059.653836451292,
              "cv": 0.04403716417091651, "max": 2111.314852994424, "mean": 2045.7876910072578,
              "median": 2066.067081603183, "min": 1847.1373075243669, "n": 7,
              "stddev": 90.09068840772682, "unit": "tokens/s"}},
  "samples": [{"decode_throughput": 2111.314852994424, "rep": 1},
              {"decode_throughput": 1847.1373075243669, "rep": 2},
              {"decode_throughput": 2066.067081603183, "rep": 3}],
  "harness": {"ci_reached": true, "ci_target": 0.02, "min_reps": 5, "max_reps": 20}})json");
  return record;
}

// The template with a new result_id, started `second` seconds after 2026-12-01T06:00:00Z.
json Record(int second) {
  json r = TemplateRecord();
  r["result_id"] = NewUuidV7();
  char started[40];
  std::snprintf(started, sizeof started, "2026-12-01T%02d:%02d:%02d.000Z", 6 + second / 3600,
                second / 60 % 60, second % 60);
  r["started_at"] = started;
  r["finished_at"] = started;
  return r;
}

FleetClient Client(const std::string& name, std::vector<std::string> labels = {}) {
  FleetClient c;
  c.public_key_hex = fleet_store::RandomHex(32);
  c.client_id = "pc_" + fleet_store::RandomHex(16);
  c.label = name;
  c.labels = std::move(labels);
  c.profile = {{"id", "device-of-" + name}, {"os", {{"arch", "x86_64"}}}};
  return c;
}

json Caps(std::vector<std::string> labels) {
  return {{"labels", labels},
          {"arch", "x86_64"},
          {"memory_bytes", 8'000'000'000LL},
          {"runtimes", {"llamacpp"}},
          {"models", json::array()}};
}

json Spec(const std::string& benchmark, std::vector<std::string> labels) {
  return {{"benchmark", benchmark},
          {"model", {{"sha256", std::string(64, 'a')}, {"file_name", "m.gguf"}}},
          {"runtime", "llamacpp"},
          {"settings", {{"threads", 1}}},
          {"requires", {{"labels", labels}, {"runtimes", {"llamacpp"}}}}};
}

class FleetStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      char dir[] = "/tmp/pipette-fleet-store-XXXXXX";
      ASSERT_NE(mkdtemp(dir), nullptr);
      dir_ = dir;
      db_ = dir_ + "/sub/fleet.db";
    } else {
#ifdef PIPETTE_HAVE_TEST_POSTGRES
      auto url = testing::FreshPostgresDatabase();
      if (!url.ok()) GTEST_SKIP() << url.error().message;
      db_ = *url;
#else
      GTEST_SKIP() << "this build has no test PostgreSQL server (tests/support)";
#endif
    }
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }

  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::unique_ptr<FleetStore> Open() {
    auto store = OpenFleetStore(db_);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Registers `client` approved (through a pre-authorization key); returns its id.
  std::string Approved(FleetClient client) {
    IssuedPreauthKey key = IssuePreauthKey({}, 0);
    EXPECT_TRUE(store_->AddPreauthKey(key.key).ok());
    auto outcome = store_->Register(client, key.token, kNow);
    EXPECT_TRUE(outcome.ok()) << outcome.error().message;
    EXPECT_EQ(*outcome, RegisterOutcome::kRegistered);
    return client.client_id;
  }

  void Put(const json& record, const std::string& client_id = "pc_test") {
    auto put = store_->PutResult(record, client_id, kNow);
    ASSERT_TRUE(put.ok()) << put.error().message;
    ASSERT_EQ(*put, PutOutcome::kStored);
  }

  std::vector<std::string> Ids(const ResultFilter& filter) {
    auto page = store_->ListResults(filter, 1000, "");
    EXPECT_TRUE(page.ok()) << page.error().message;
    std::vector<std::string> ids;
    if (!page.ok()) return ids;
    for (const FleetResultRow& r : page->rows) ids.push_back(r.row.result_id);
    EXPECT_EQ(page->total, static_cast<int64_t>(ids.size()));
    return ids;
  }

  PlanStatus Plan(const std::string& plan_id) {
    auto plan = store_->GetPlan(plan_id);
    EXPECT_TRUE(plan.ok() && plan->has_value());
    return plan.ok() && plan->has_value() ? **plan : PlanStatus{};
  }

  std::string dir_, db_;
  std::unique_ptr<FleetStore> store_;
};

// --- clients ---------------------------------------------------------------------------------

TEST_P(FleetStoreTest, OpensAndPings) {
  EXPECT_EQ(store_->backend(), GetParam());
  EXPECT_TRUE(store_->Ping().ok());
  auto again = Open();  // the schema exists now
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->Ping().ok());
  auto count = again->CountResults();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 0);
}

TEST_P(FleetStoreTest, RegisterWithoutKeyIsPending) {
  FleetClient c = Client("pixel", {"arm"});
  auto outcome = store_->Register(c, "", kNow);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(*outcome, RegisterOutcome::kRegistered);
  auto got = store_->GetClient(c.client_id);
  ASSERT_TRUE(got.ok() && got->has_value());
  const FleetClient& stored = **got;
  EXPECT_EQ(stored.status, ClientStatus::kPending);
  EXPECT_EQ(stored.public_key_hex, c.public_key_hex);
  EXPECT_EQ(stored.label, "pixel");
  EXPECT_EQ(stored.labels, std::vector<std::string>{"arm"});
  EXPECT_EQ(stored.profile, c.profile);
  EXPECT_TRUE(stored.capabilities.is_null());
  EXPECT_EQ(stored.created_at, kNow);

  ASSERT_TRUE(store_->SetClientStatus(c.client_id, ClientStatus::kApproved).ok());
  EXPECT_EQ((*store_->GetClient(c.client_id))->status, ClientStatus::kApproved);
  ASSERT_TRUE(store_->SetCapabilities(c.client_id, Caps({"arm"})).ok());
  EXPECT_EQ((*store_->GetClient(c.client_id))->capabilities, Caps({"arm"}));
  Status unknown = store_->SetClientStatus("pc_nobody", ClientStatus::kRevoked);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("pc_nobody"), std::string::npos);
  auto none = store_->GetClient("pc_nobody");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_P(FleetStoreTest, RegisterWithKeyIsApprovedAndSpendsTheKeyOnce) {
  IssuedPreauthKey key = IssuePreauthKey({"gpu"}, kNow + 3600);
  EXPECT_EQ(key.token, "preauth_" + key.key.key_id + "." + key.token.substr(25));
  ASSERT_TRUE(store_->AddPreauthKey(key.key).ok());
  EXPECT_FALSE(store_->AddPreauthKey(key.key).ok());  // the same key_id twice

  FleetClient a = Client("a", {"x86"});
  auto first = store_->Register(a, key.token, kNow);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, RegisterOutcome::kRegistered);
  auto got = store_->GetClient(a.client_id);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->status, ClientStatus::kApproved);
  EXPECT_EQ((*got)->labels, (std::vector<std::string>{"x86", "gpu"}));

  FleetClient b = Client("b");
  auto second = store_->Register(b, key.token, kNow);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, RegisterOutcome::kBadPreauthKey);
  EXPECT_FALSE(store_->GetClient(b.client_id)->has_value());  // nothing stored

  // The same public key again: already registered, with or without a key, nothing spent.
  IssuedPreauthKey other = IssuePreauthKey({}, 0);
  ASSERT_TRUE(store_->AddPreauthKey(other.key).ok());
  auto again = store_->Register(a, other.token, kNow);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, RegisterOutcome::kAlreadyRegistered);
  auto c = store_->Register(Client("c"), other.token, kNow);  // `other` was not spent
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, RegisterOutcome::kRegistered);

  auto clients = store_->ListClients();
  ASSERT_TRUE(clients.ok());
  EXPECT_EQ(clients->size(), 2u);
}

TEST_P(FleetStoreTest, RefusesExpiredWrongAndMalformedKeys) {
  IssuedPreauthKey expired = IssuePreauthKey({}, kNow - 1);
  ASSERT_TRUE(store_->AddPreauthKey(expired.key).ok());
  IssuedPreauthKey good = IssuePreauthKey({}, kNow + 10);
  ASSERT_TRUE(store_->AddPreauthKey(good.key).ok());
  std::string wrong_secret = good.token;
  wrong_secret.back() = wrong_secret.back() == '0' ? '1' : '0';
  for (const std::string& token :
       {expired.token, wrong_secret, std::string("preauth_nonsense"),
        "preauth_" + fleet_store::RandomHex(8) + "." + fleet_store::RandomHex(32)}) {
    auto outcome = store_->Register(Client("x"), token, kNow);
    ASSERT_TRUE(outcome.ok()) << outcome.error().message;
    EXPECT_EQ(*outcome, RegisterOutcome::kBadPreauthKey) << token;
  }
  EXPECT_EQ(store_->ListClients()->size(), 0u);
  auto ok = store_->Register(Client("y"), good.token, kNow);  // still unspent
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, RegisterOutcome::kRegistered);
}

TEST_P(FleetStoreTest, TwoRacingRegistrationsSpendAKeyOnce) {
  for (int round = 0; round < 5; ++round) {
    IssuedPreauthKey key = IssuePreauthKey({}, 0);
    ASSERT_TRUE(store_->AddPreauthKey(key.key).ok());
    std::atomic<int> registered{0}, refused{0}, errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&] {
        auto store = OpenFleetStore(db_);
        if (!store.ok()) {
          ++errors;
          return;
        }
        auto outcome = (*store)->Register(Client("racer"), key.token, kNow);
        if (!outcome.ok()) {
          ++errors;
        } else if (*outcome == RegisterOutcome::kRegistered) {
          ++registered;
        } else if (*outcome == RegisterOutcome::kBadPreauthKey) {
          ++refused;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(registered.load(), 1);
    EXPECT_EQ(refused.load(), 1);
  }
  EXPECT_EQ(store_->ListClients()->size(), 5u);
}

TEST_P(FleetStoreTest, ANonceIsUsedOnceAlsoAfterReopening) {
  const std::string nonce = fleet_store::RandomHex(16);
  EXPECT_TRUE(*store_->UseNonce("pc_a", nonce, kNow + 300));
  EXPECT_FALSE(*store_->UseNonce("pc_a", nonce, kNow + 300));
  EXPECT_TRUE(*store_->UseNonce("pc_b", nonce, kNow + 300));  // per client
  store_ = Open();
  auto reused = store_->UseNonce("pc_a", nonce, kNow + 300);
  ASSERT_TRUE(reused.ok()) << reused.error().message;
  EXPECT_FALSE(*reused);
  ASSERT_TRUE(store_->PruneNonces(kNow + 200).ok());  // not yet past its window
  EXPECT_FALSE(*store_->UseNonce("pc_a", nonce, kNow + 300));
  ASSERT_TRUE(store_->PruneNonces(kNow + 301).ok());
  EXPECT_TRUE(*store_->UseNonce("pc_a", nonce, kNow + 600));
}

// --- results ---------------------------------------------------------------------------------

TEST_P(FleetStoreTest, PutWithNonceSpendsItOnceWithTheRecord) {
  const std::string a = Approved(Client("a"));
  const json record = Record(0);
  const std::string text = record.dump();
  const std::string nonce = fleet_store::RandomHex(16);
  auto put = store_->PutResultWithNonce(record, text, a, nonce, kNow + 300, kNow);
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(*put, PutOutcome::kStored);
  // The same request again is a replay: refused, and nothing changes.
  const json other = Record(1);
  auto replay = store_->PutResultWithNonce(other, other.dump(), a, nonce, kNow + 300, kNow);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  EXPECT_EQ(*replay, PutOutcome::kReplayed);
  EXPECT_FALSE(store_->GetResult(other["result_id"])->has_value());
  EXPECT_EQ(*store_->CountResults(), 1);
  // Spent in the database: the plain nonce check agrees, also after reopening.
  store_ = Open();
  EXPECT_FALSE(*store_->UseNonce(a, nonce, kNow + 300));
  // Stored as submitted (compact), read back equal.
  auto texts = store_->RecordTexts({record["result_id"].get<std::string>()});
  ASSERT_TRUE(texts.ok()) << texts.error().message;
  ASSERT_EQ(texts->size(), 1u);
  EXPECT_EQ(json::parse((*texts)[0]), record);
  // Pretty-printed text is not kept as it is: what is stored stays compact.
  const json pretty = Record(2);
  put = store_->PutResultWithNonce(pretty, pretty.dump(2), a, fleet_store::RandomHex(16),
                                   kNow + 300, kNow);
  ASSERT_TRUE(put.ok()) << put.error().message;
  texts = store_->RecordTexts({pretty["result_id"].get<std::string>()});
  ASSERT_TRUE(texts.ok()) << texts.error().message;
  EXPECT_TRUE(fleet_store::IsCompactJson((*texts)[0])) << (*texts)[0].substr(0, 80);
  EXPECT_EQ(json::parse((*texts)[0]), pretty);
}

// A record is stored with a nonce only for a client approved when its transaction reads it: one
// revoked (or pending, or unknown) stores nothing and spends no nonce, whatever the server knew.
TEST_P(FleetStoreTest, PutWithNonceStoresNothingForAClientNotApproved) {
  FleetClient pending = Client("p");
  ASSERT_EQ(*store_->Register(pending, "", kNow), RegisterOutcome::kRegistered);
  const std::string revoked = Approved(Client("r"));
  ASSERT_TRUE(store_->SetClientStatus(revoked, ClientStatus::kRevoked).ok());
  int i = 0;
  for (const std::string& client : {pending.client_id, revoked, std::string("pc_nobody")}) {
    const json record = Record(i++);
    const std::string nonce = fleet_store::RandomHex(16);
    auto put = store_->PutResultWithNonce(record, record.dump(), client, nonce, kNow + 300, kNow);
    ASSERT_TRUE(put.ok()) << put.error().message;
    EXPECT_EQ(*put, PutOutcome::kClientNotApproved) << client;
    EXPECT_FALSE(store_->GetResult(record["result_id"])->has_value()) << client;
    EXPECT_TRUE(*store_->UseNonce(client, nonce, kNow + 300)) << client;  // not spent
  }
  EXPECT_EQ(*store_->CountResults(), 0);
  // Approved again: stored.
  ASSERT_TRUE(store_->SetClientStatus(revoked, ClientStatus::kApproved).ok());
  const json record = Record(7);
  auto put = store_->PutResultWithNonce(record, record.dump(), revoked, fleet_store::RandomHex(16),
                                        kNow + 300, kNow);
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(*put, PutOutcome::kStored);
}

TEST_P(FleetStoreTest, PutIsIdempotentAndRefusesOtherContent) {
  const json record = Record(0);
  Put(record, "pc_a");
  auto got = store_->GetResult(record["result_id"]);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, record);

  json reordered = json::parse(record.dump());  // same content
  auto same = store_->PutResult(reordered, "pc_b", kNow + 5);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, PutOutcome::kSame);
  json changed = record;
  changed["metrics"]["decode_throughput"]["median"] = 1.0;
  auto conflict = store_->PutResult(changed, "pc_a", kNow);
  ASSERT_TRUE(conflict.ok());
  EXPECT_EQ(*conflict, PutOutcome::kConflict);
  EXPECT_EQ(**store_->GetResult(record["result_id"]), record);
  EXPECT_EQ(*store_->CountResults(), 1);
  EXPECT_FALSE(store_->GetResult(NewUuidV7())->has_value());

  auto page = store_->ListResults({}, 10, "");
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 1u);
  const FleetResultRow& row = page->rows[0];
  EXPECT_EQ(row.client_id, "pc_a");  // the first submitter
  EXPECT_EQ(row.received_at, kNow);
  const ResultRow& r = row.row;
  EXPECT_EQ(r.result_id, record["result_id"]);
  EXPECT_EQ(r.short_id, r.result_id.substr(0, 8));  // alone in the store
  EXPECT_EQ(r.config_id, record["config_id"]);
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.benchmark_id, "decode_throughput_256_100");
  EXPECT_EQ(r.benchmark_type, "decode");
  EXPECT_EQ(r.model_file, "stories260K-Q8_0.gguf");
  EXPECT_EQ(r.model_sha256, record["model"]["sha256"]);
  EXPECT_EQ(r.quant, "Q8_0");
  EXPECT_EQ(r.quant_label, "Q8_0");
  EXPECT_EQ(r.runtime, "llamacpp");
  EXPECT_EQ(r.device_id, record["device"]["id"]);
  EXPECT_EQ(r.started_at, "2026-12-01T06:00:00.000Z");
  EXPECT_EQ(r.threads, 1);
  EXPECT_EQ(r.headline_metric, "decode_throughput");
  EXPECT_EQ(r.headline_unit, "tokens/s");
  ASSERT_TRUE(r.headline.has_value());
  EXPECT_DOUBLE_EQ(*r.headline, 2066.067081603183);
  EXPECT_DOUBLE_EQ(r.headline_ci95_low.value_or(0), 2059.653836451292);
  EXPECT_DOUBLE_EQ(r.headline_ci95_high.value_or(0), 2105.499062442322);
  EXPECT_EQ(r.headline_n, 7);
  EXPECT_TRUE(r.ci_reached);
  EXPECT_FALSE(row.profile_mismatch);  // pc_a is not registered: nothing to compare with
}

TEST_P(FleetStoreTest, RefusesARecordWithoutItsRequiredFields) {
  json bad = Record(0);
  bad.erase("started_at");
  auto put = store_->PutResult(bad, "pc_a", kNow);
  ASSERT_FALSE(put.ok());
  EXPECT_NE(put.error().message.find("started_at"), std::string::npos) << put.error().message;
}

TEST_P(FleetStoreTest, FlagsARecordFromAnotherDeviceThanRegistered) {
  FleetClient c = Client("pixel");
  c.profile["id"] = TemplateRecord()["device"]["id"];
  const std::string id = Approved(c);
  const json own = Record(0);
  json other = Record(1);
  other["device"]["id"] = "0123456789abcdef";
  Put(own, id);
  Put(other, id);
  auto page = store_->ListResults({}, 10, "");
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 2u);
  EXPECT_EQ(page->rows[0].row.result_id, other["result_id"]);
  EXPECT_TRUE(page->rows[0].profile_mismatch);
  EXPECT_FALSE(page->rows[1].profile_mismatch);
}

TEST_P(FleetStoreTest, SeveralBenchmarksPageNewestFirstAcrossThem) {
  // Three benchmarks interleaved in time, two wanted; the other filters still apply.
  const char* kIds[] = {"prefill_throughput_8", "prefill_throughput_16", "prefill_throughput_32"};
  std::vector<std::string> want;  // newest first
  for (int i = 0; i < 30; ++i) {
    json r = Record(i * 7);
    r["benchmark"]["id"] = kIds[i % 3];
    r["benchmark"]["type"] = "prefill";
    if (i % 5 == 0) r["model"]["quant"] = "Q4_0";
    Put(r);
    if (i % 3 != 2 && i % 5 != 0) want.insert(want.begin(), r["result_id"].get<std::string>());
  }
  ResultFilter f;
  f.benchmarks = {"prefill_throughput_16", "prefill_throughput_8", "prefill_throughput_8"};
  f.quants = {"Q8_0"};
  std::vector<std::string> got;
  std::string cursor;
  int pages = 0;
  do {
    auto page = store_->ListResults(f, 4, cursor);
    ASSERT_TRUE(page.ok()) << page.error().message;
    EXPECT_EQ(page->total, static_cast<int64_t>(want.size()));
    for (const FleetResultRow& r : page->rows) got.push_back(r.row.result_id);
    cursor = page->next;
    ++pages;
  } while (!cursor.empty() && pages < 20);
  EXPECT_EQ(got, want);
  EXPECT_EQ(pages, static_cast<int>((want.size() + 3) / 4));

  f.limit = 5;
  auto records = store_->Records(f);
  ASSERT_TRUE(records.ok()) << records.error().message;
  ASSERT_EQ(records->size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ((*records)[i]["result_id"], want[i]);

  // The summary: identity, configuration and metrics, as the whole record has them.
  auto summaries = store_->Records(f, RecordParts::kSummary);
  ASSERT_TRUE(summaries.ok()) << summaries.error().message;
  ASSERT_EQ(summaries->size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    const json& whole = (*records)[i];
    const json& summary = (*summaries)[i];
    for (const char* pointer :
         {"/result_id", "/status", "/benchmark/id", "/benchmark/type", "/model/file_name",
          "/model/sha256", "/model/quant", "/runtime/name", "/runtime/settings", "/device/id",
          "/device/label", "/metrics"}) {
      const json::json_pointer at(pointer);
      ASSERT_TRUE(summary.contains(at)) << pointer;
      EXPECT_EQ(summary[at], whole[at]) << pointer;
    }
    EXPECT_FALSE(summary.contains("samples"));
    EXPECT_FALSE(summary.contains("logs"));
  }
}

TEST_P(FleetStoreTest, RecentBenchmarkIdsAreTheNewestResultsDistinctIds) {
  // Oldest first: decode, prefill_throughput_8, kl_divergence_512 (on device beef), prefill.
  std::vector<json> r;
  for (int i = 0; i < 4; ++i) r.push_back(Record(i * 60));
  r[1]["benchmark"]["id"] = "prefill_throughput_8";
  r[2]["benchmark"]["id"] = "kl_divergence_512";
  r[2]["device"]["id"] = "beef0001";
  r[3]["benchmark"]["id"] = "prefill_throughput_8";
  for (const json& one : r) Put(one);
  auto all = store_->RecentBenchmarkIds({}, 100);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(*all, (std::vector<std::string>{"decode_throughput_256_100", "kl_divergence_512",
                                            "prefill_throughput_8"}));
  auto newest_two = store_->RecentBenchmarkIds({}, 2);
  ASSERT_TRUE(newest_two.ok()) << newest_two.error().message;
  EXPECT_EQ(*newest_two, (std::vector<std::string>{"kl_divergence_512", "prefill_throughput_8"}));
  ResultFilter on_beef;
  on_beef.devices = {"beef"};
  auto filtered = store_->RecentBenchmarkIds(on_beef, 100);
  ASSERT_TRUE(filtered.ok()) << filtered.error().message;
  EXPECT_EQ(*filtered, std::vector<std::string>{"kl_divergence_512"});
}

TEST_P(FleetStoreTest, ListsWithEveryFilter) {
  // 0: the template; the others each differ in one field.
  std::vector<json> r;
  for (int i = 0; i < 10; ++i) r.push_back(Record(i * 60));
  r[1]["benchmark"]["id"] = "prefill_throughput_8";
  r[1]["benchmark"]["type"] = "prefill";
  r[2]["model"]["sha256"] = "abcdef" + std::string(58, '0');
  r[2]["model"]["file_name"] = "llama-7b-Q4_K_M.gguf";
  r[2]["model"]["quant"] = "Q4_K_M";
  r[3]["status"] = "failed";
  r[3]["failure"] = {{"stage", "load"}, {"message", "no memory"}};
  r[4]["device"]["id"] = "beef0001";
  r[5]["runtime"]["name"] = "ollama";
  r[6]["device"]["label"] = "ci-x86";
  r[7]["runtime"]["settings"]["threads"] = 2;
  r[8]["runtime"]["settings"]["type_k"] = "q8_0";
  r[9]["runtime"]["settings"]["mmap"] = true;
  for (const json& x : r) Put(x);
  auto id = [&](int i) { return r[i]["result_id"].get<std::string>(); };
  auto ids = [&](std::vector<int> is) {
    std::vector<std::string> out;
    std::sort(is.rbegin(), is.rend());  // newest first
    for (int i : is) out.push_back(id(i));
    return out;
  };
  const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

  EXPECT_EQ(Ids({}), ids(all));
  ResultFilter f;
  f.benchmarks = {"prefill_throughput_8"};
  EXPECT_EQ(Ids(f), ids({1}));
  f = {};
  f.models = {"ABCDEF"};  // a digest prefix, any case
  EXPECT_EQ(Ids(f), ids({2}));
  f.models = {"llama-7b"};  // a file-name substring
  EXPECT_EQ(Ids(f), ids({2}));
  f.models = {"llama-7b", "stories260K"};
  EXPECT_EQ(Ids(f), ids(all));
  f = {};
  f.quants = {"q4_k_m"};
  EXPECT_EQ(Ids(f), ids({2}));
  f = {};
  f.status = "failed";
  EXPECT_EQ(Ids(f), ids({3}));
  f.status = "ok";
  EXPECT_EQ(Ids(f).size(), 9u);
  f = {};
  f.devices = {"BEEF"};
  EXPECT_EQ(Ids(f), ids({4}));
  f.devices = {"fd6a9c"};
  EXPECT_EQ(Ids(f).size(), 9u);
  f = {};
  f.runtimes = {"ollama"};
  EXPECT_EQ(Ids(f), ids({5}));
  f = {};
  f.labels = {"ci-x86"};
  EXPECT_EQ(Ids(f), ids({6}));
  f = {};
  f.settings = {"threads=2"};
  EXPECT_EQ(Ids(f), ids({7}));
  f.settings = {"threads=2.0", "threads = 1", "type_k=Q8_0"};  // (2 or 1) and q8_0
  EXPECT_EQ(Ids(f), ids({8}));
  f.settings = {"mmap=true"};
  EXPECT_EQ(Ids(f), ids({9}));
  f.settings = {"colour=red"};
  auto bad = store_->ListResults(f, 10, "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown setting 'colour'"), std::string::npos);
  f = {};
  f.since = "2026-12-01T06:07";
  EXPECT_EQ(Ids(f), ids({7, 8, 9}));
  f.since = "2026-13";
  EXPECT_FALSE(store_->ListResults(f, 10, "").ok());
  f = {};
  f.limit = 3;
  EXPECT_EQ(Ids(f), ids({9, 8, 7}));
  f = {};
  f.benchmarks = {"decode_throughput_256_100"};
  f.runtimes = {"llamacpp"};
  f.settings = {"threads=1"};
  EXPECT_EQ(Ids(f), ids({0, 2, 3, 4, 6, 8, 9}));

  auto records = store_->Records(f);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 7u);
  EXPECT_EQ((*records)[0], r[9]);
  f.limit = 2;
  EXPECT_EQ(store_->Records(f)->size(), 2u);
}

// Ids made in the same millisecond share a long prefix: each row's short id is the shortest
// prefix (8 at least) that reads that result alone.
TEST_P(FleetStoreTest, ShortIdsAreUniquePrefixes) {
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    json record = Record(i);
    ids.push_back(record["result_id"]);
    ASSERT_TRUE(store_->PutResult(record, "pc_a", kNow).ok());
  }
  auto page = store_->ListResults({}, 100, "");
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->rows.size(), 20u);
  for (const FleetResultRow& row : page->rows) {
    const std::string& s = row.row.short_id;
    EXPECT_GE(s.size(), 8u);
    EXPECT_EQ(row.row.result_id.rfind(s, 0), 0u);
    auto matches = store_->ResultIdsStartingWith(s, 3);
    ASSERT_TRUE(matches.ok()) << matches.error().message;
    EXPECT_EQ(*matches, std::vector<std::string>{row.row.result_id}) << s;
    if (s.size() > 8) {  // one character less would be ambiguous
      auto shorter = store_->ResultIdsStartingWith(s.substr(0, s.size() - 1), 3);
      ASSERT_TRUE(shorter.ok());
      EXPECT_GT(shorter->size(), 1u) << s;
    }
  }
}

TEST_P(FleetStoreTest, PagesCoverEveryRowOnce) {
  std::set<std::pair<std::string, std::string>> want;  // (started_at, result_id)
  for (int i = 0; i < 25; ++i) {
    // Pairs started at the same second: the result_id orders them.
    json r = Record(i / 2);
    want.insert({r["started_at"].get<std::string>(), r["result_id"].get<std::string>()});
    Put(r);
  }
  for (int limit : {0, 10}) {
    ResultFilter f;
    f.limit = limit;
    std::vector<std::string> seen;
    std::string cursor;
    int pages = 0;
    do {
      auto page = store_->ListResults(f, 7, cursor);
      ASSERT_TRUE(page.ok()) << page.error().message;
      EXPECT_EQ(page->total, limit == 0 ? 25 : 10);
      for (const FleetResultRow& r : page->rows) seen.push_back(r.row.result_id);
      cursor = page->next;
      ASSERT_LT(++pages, 10);
    } while (!cursor.empty());
    EXPECT_EQ(pages, limit == 0 ? 4 : 2);
    ASSERT_EQ(seen.size(), limit == 0 ? 25u : 10u);
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());
    std::vector<std::string> sorted;  // newest first
    for (auto it = want.rbegin(); it != want.rend(); ++it) sorted.push_back(it->second);
    sorted.resize(seen.size());
    EXPECT_EQ(seen, sorted);
  }
  // Totals stay exact as results arrive (the store may remember earlier counts).
  ResultFilter by_benchmark;
  by_benchmark.benchmarks = {"decode_throughput_256_100"};
  by_benchmark.models = {"stories260K"};
  EXPECT_EQ(store_->ListResults(by_benchmark, 7, "")->total, 25);
  Put(Record(100));
  json other = Record(101);
  other["benchmark"]["id"] = "prefill_throughput_8";
  Put(other);
  EXPECT_EQ(store_->ListResults(by_benchmark, 7, "")->total, 26);
  EXPECT_EQ(store_->ListResults({}, 7, "")->total, 27);
  auto bad = store_->ListResults({}, 7, "not-a-cursor");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad cursor"), std::string::npos);
}

// --- plans and jobs --------------------------------------------------------------------------

TEST_P(FleetStoreTest, ClaimsOnlyMatchingJobsOldestFirst) {
  const std::string gpu = Approved(Client("gpu"));
  const std::string cpu = Approved(Client("cpu"));
  auto plan_id = store_->CreatePlan(
      "mixed", {Spec("b0", {"gpu"}), Spec("b1", {"cpu"}), Spec("b2", {"gpu"})}, 0, kNow);
  ASSERT_TRUE(plan_id.ok()) << plan_id.error().message;

  auto job = store_->Claim(cpu, Caps({"cpu"}), kNow + 1, 60);
  ASSERT_TRUE(job.ok()) << job.error().message;
  ASSERT_TRUE(job->has_value());
  EXPECT_EQ((*job)->index, 1);
  EXPECT_EQ((*job)->plan_id, *plan_id);
  EXPECT_EQ((*job)->spec, Spec("b1", {"cpu"}));
  EXPECT_EQ((*job)->state, JobState::kLeased);
  EXPECT_EQ((*job)->client_id, cpu);
  EXPECT_EQ((*job)->lease_expires_at, kNow + 61);
  EXPECT_EQ((*job)->attempts, 1);
  EXPECT_EQ((*job)->job_id.substr(0, 4), "job_");
  EXPECT_FALSE(store_->Claim(cpu, Caps({"cpu"}), kNow + 1, 60)->has_value());
  EXPECT_EQ((*store_->GetClient(cpu))->capabilities, Caps({"cpu"}));  // kept from the claim

  auto g0 = store_->Claim(gpu, Caps({"gpu"}), kNow + 2, 60);
  auto g1 = store_->Claim(gpu, Caps({"gpu"}), kNow + 2, 60);
  ASSERT_TRUE(g0.ok() && g0->has_value() && g1.ok() && g1->has_value());
  EXPECT_EQ((*g0)->index, 0);
  EXPECT_EQ((*g1)->index, 2);

  const PlanStatus plan = Plan(*plan_id);
  EXPECT_EQ(plan.name, "mixed");
  EXPECT_EQ(plan.created_at, kNow);
  ASSERT_EQ(plan.jobs.size(), 3u);
  for (const Job& j : plan.jobs) EXPECT_EQ(j.state, JobState::kLeased);
  EXPECT_EQ(plan.jobs[1].client_id, cpu);
  auto plans = store_->ListPlans();
  ASSERT_TRUE(plans.ok());
  ASSERT_EQ(plans->size(), 1u);
  EXPECT_EQ((*plans)[0].plan_id, *plan_id);
  EXPECT_TRUE((*plans)[0].jobs.empty());
  EXPECT_FALSE(store_->GetPlan("plan_nothing")->has_value());
}

TEST_P(FleetStoreTest, HeartbeatAndCompleteAreIdempotent) {
  const std::string a = Approved(Client("a"));
  const std::string b = Approved(Client("b"));
  auto plan_id = store_->CreatePlan("p", {Spec("b0", {}), Spec("b1", {})}, 0, kNow);
  ASSERT_TRUE(plan_id.ok());
  auto job = store_->Claim(a, Caps({}), kNow, 60);
  ASSERT_TRUE(job.ok() && job->has_value());
  const std::string job_id = (*job)->job_id;

  EXPECT_TRUE(*store_->Heartbeat(job_id, a, kNow + 30, 60));
  EXPECT_FALSE(*store_->Heartbeat(job_id, b, kNow + 30, 60));
  EXPECT_FALSE(*store_->Heartbeat("job_nothing", a, kNow + 30, 60));
  EXPECT_EQ(Plan(*plan_id).jobs[0].lease_expires_at, kNow + 90);

  const json record = Record(0);
  auto done = store_->Complete(job_id, a, record, kNow + 40);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->put, PutOutcome::kStored);
  EXPECT_TRUE(done->lease_held);
  auto again = store_->Complete(job_id, a, record, kNow + 41);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->put, PutOutcome::kSame);
  EXPECT_TRUE(again->lease_held);
  EXPECT_FALSE(*store_->Heartbeat(job_id, a, kNow + 42, 60));  // done: no lease any more

  // b completes a job it does not hold: the record is kept, the job is not done.
  const json stray = Record(1);
  const std::string other_job = Plan(*plan_id).jobs[1].job_id;
  auto lost = store_->Complete(other_job, b, stray, kNow + 43);
  ASSERT_TRUE(lost.ok());
  EXPECT_FALSE(lost->lease_held);
  EXPECT_EQ(lost->put, PutOutcome::kStored);
  EXPECT_TRUE(store_->GetResult(stray["result_id"])->has_value());

  const PlanStatus plan = Plan(*plan_id);
  EXPECT_EQ(plan.jobs[0].state, JobState::kDone);
  EXPECT_EQ(plan.jobs[0].result_id, record["result_id"]);
  EXPECT_EQ(plan.jobs[0].client_id, a);
  EXPECT_EQ(plan.jobs[1].state, JobState::kQueued);
  EXPECT_EQ(*store_->CountResults(), 2);
}

TEST_P(FleetStoreTest, ARetriableFailureRequeuesForOtherDevicesOnly) {
  const std::string a = Approved(Client("a"));
  const std::string b = Approved(Client("b"));
  const std::string c = Approved(Client("c"));  // never claims: its capabilities are unknown
  auto plan_id = store_->CreatePlan("p", {Spec("b0", {"x86"})}, 0, kNow);
  ASSERT_TRUE(plan_id.ok());
  ASSERT_TRUE(store_->SetCapabilities(b, Caps({"x86"})).ok());

  auto job = store_->Claim(a, Caps({"x86"}), kNow, 60);
  ASSERT_TRUE(job.ok() && job->has_value());
  const std::string job_id = (*job)->job_id;
  auto not_held = store_->Fail(job_id, b, "not mine", true, kNow + 1);
  ASSERT_TRUE(not_held.ok());
  EXPECT_FALSE(not_held->second);
  EXPECT_EQ(not_held->first, JobState::kLeased);

  auto failed = store_->Fail(job_id, a, "out of memory", true, kNow + 2);
  ASSERT_TRUE(failed.ok()) << failed.error().message;
  EXPECT_TRUE(failed->second);
  EXPECT_EQ(failed->first, JobState::kQueued);                               // b may still run it
  EXPECT_FALSE(store_->Claim(a, Caps({"x86"}), kNow + 3, 60)->has_value());  // not a again

  auto second = store_->Claim(b, Caps({"x86"}), kNow + 4, 60);
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->job_id, job_id);
  EXPECT_EQ((*second)->attempts, 2);
  ASSERT_EQ((*second)->failures.size(), 1u);
  EXPECT_EQ((*second)->failures[0].client_id, a);
  auto last = store_->Fail(job_id, b, "crashed", true, kNow + 5);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->first, JobState::kFailed);  // every eligible device failed it

  const Job stored = Plan(*plan_id).jobs[0];
  EXPECT_EQ(stored.state, JobState::kFailed);
  ASSERT_EQ(stored.failures.size(), 2u);
  EXPECT_EQ(stored.failures[0].client_id, a);
  EXPECT_EQ(stored.failures[0].reason, "out of memory");
  EXPECT_EQ(stored.failures[0].at, kNow + 2);
  EXPECT_EQ(stored.failures[1].client_id, b);
  EXPECT_EQ(stored.failures[1].reason, "crashed");
  EXPECT_FALSE(store_->Claim(c, Caps({"x86"}), kNow + 6, 60)->has_value());  // failed for good
}

TEST_P(FleetStoreTest, ANonRetriableFailureFailsTheJob) {
  const std::string a = Approved(Client("a"));
  Approved(Client("b"));
  ASSERT_TRUE(store_->CreatePlan("p", {Spec("b0", {})}, 0, kNow).ok());
  auto job = store_->Claim(a, Caps({}), kNow, 60);
  ASSERT_TRUE(job.ok() && job->has_value());
  auto failed = store_->Fail((*job)->job_id, a, "model file is corrupt", false, kNow + 1);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->first, JobState::kFailed);
}

TEST_P(FleetStoreTest, AnExpiredLeaseReturnsToTheQueue) {
  const std::string a = Approved(Client("a"));
  const std::string b = Approved(Client("b"));
  auto plan_id = store_->CreatePlan("p", {Spec("b0", {})}, 0, kNow);
  ASSERT_TRUE(plan_id.ok());
  auto job = store_->Claim(a, Caps({}), kNow, 10);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_FALSE(store_->Claim(b, Caps({}), kNow + 10, 10)->has_value());  // held through +10
  EXPECT_EQ(*store_->RequeueExpired(kNow + 10), 0);
  EXPECT_EQ(*store_->RequeueExpired(kNow + 11), 1);
  EXPECT_EQ(Plan(*plan_id).jobs[0].state, JobState::kQueued);
  EXPECT_FALSE(*store_->Heartbeat((*job)->job_id, a, kNow + 12, 10));

  auto again = store_->Claim(b, Caps({}), kNow + 12, 10);
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->job_id, (*job)->job_id);
  EXPECT_EQ((*again)->attempts, 2);
  // a's lease ran out and b's expires too: the claim itself returns it.
  auto third = store_->Claim(a, Caps({}), kNow + 30, 10);
  ASSERT_TRUE(third.ok() && third->has_value());
  EXPECT_EQ((*third)->attempts, 3);
  auto late = store_->Complete((*job)->job_id, b, Record(0), kNow + 31);
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(late->lease_held);
}

TEST_P(FleetStoreTest, QueuedJobsExpireWithTheirPlan) {
  const std::string a = Approved(Client("a"));
  auto plan_id = store_->CreatePlan("p", {Spec("b0", {}), Spec("b1", {})}, kNow + 100, kNow);
  ASSERT_TRUE(plan_id.ok());
  auto job = store_->Claim(a, Caps({}), kNow + 50, 60);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_FALSE(store_->Claim(a, Caps({}), kNow + 101, 60)->has_value());
  const PlanStatus plan = Plan(*plan_id);
  EXPECT_EQ(plan.jobs[0].state, JobState::kLeased);  // running: not expired by the plan
  EXPECT_EQ(plan.jobs[1].state, JobState::kExpired);
  EXPECT_EQ(plan.jobs[1].expires_at, kNow + 100);
}

TEST_P(FleetStoreTest, FourWorkersClaimEveryJobExactlyOnce) {
  std::vector<std::string> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(Approved(Client(std::string("w").append(std::to_string(i)))));
  }
  std::vector<json> specs;
  for (int i = 0; i < 40; ++i) {
    specs.push_back(Spec(std::string("b").append(std::to_string(i)), {}));
  }
  auto plan_id = store_->CreatePlan("forty", specs, 0, kNow);
  ASSERT_TRUE(plan_id.ok());

  std::mutex mu;
  std::vector<std::string> claimed;
  std::map<std::string, int> per_client;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto store = OpenFleetStore(db_);
      if (!store.ok()) {
        ++errors;
        return;
      }
      for (;;) {
        auto job = (*store)->Claim(clients[t], Caps({}), kNow, 600);
        if (!job.ok()) {
          ++errors;
          return;
        }
        if (!job->has_value()) return;
        std::lock_guard<std::mutex> lock(mu);
        claimed.push_back((*job)->job_id);
        ++per_client[clients[t]];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(claimed.size(), 40u);
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()).size(), 40u);
  const PlanStatus plan = Plan(*plan_id);
  for (const Job& j : plan.jobs) {
    EXPECT_EQ(j.state, JobState::kLeased);
    EXPECT_EQ(j.attempts, 1);
  }
  for (const auto& [client, n] : per_client) EXPECT_GT(n, 0) << client;
}

INSTANTIATE_TEST_SUITE_P(Backends, FleetStoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// --- backend-independent ---------------------------------------------------------------------

TEST(JobMatchesTest, ChecksEveryRequirement) {
  const json caps = {{"labels", {"x86", "ci"}},
                     {"arch", "x86_64"},
                     {"memory_bytes", 1000},
                     {"runtimes", {"llamacpp"}},
                     {"models", {std::string(64, 'a')}}};
  std::string why;
  EXPECT_TRUE(JobMatches(json(), caps, &why));
  EXPECT_TRUE(JobMatches(json::object(), caps, &why));
  EXPECT_TRUE(JobMatches({{"labels", {"ci"}},
                          {"arch", "x86_64"},
                          {"min_memory_bytes", 1000},
                          {"runtimes", {"llamacpp"}},
                          {"models", {std::string(64, 'A')}}},
                         caps, &why));
  EXPECT_FALSE(JobMatches({{"labels", {"ci", "gpu"}}}, caps, &why));
  EXPECT_EQ(why, "needs label gpu");
  EXPECT_FALSE(JobMatches({{"arch", "aarch64"}}, caps, &why));
  EXPECT_EQ(why, "needs arch aarch64 (has x86_64)");
  EXPECT_TRUE(JobMatches({{"arch", ""}}, caps, &why));
  EXPECT_FALSE(JobMatches({{"min_memory_bytes", 1001}}, caps, &why));
  EXPECT_EQ(why, "needs 1001 bytes of memory (has 1000)");
  EXPECT_FALSE(JobMatches({{"runtimes", {"ollama"}}}, caps, &why));
  EXPECT_EQ(why, "needs runtime ollama");
  EXPECT_FALSE(JobMatches({{"models", {std::string(64, 'b')}}}, caps, &why));
  EXPECT_EQ(why, "needs model " + std::string(64, 'b'));
  EXPECT_FALSE(JobMatches({{"labels", {"x86"}}}, json(), nullptr));
}

TEST(FleetStoreNamesTest, CompactJsonHasNoWhitespaceOutsideStrings) {
  EXPECT_TRUE(fleet_store::IsCompactJson(R"({"a":[1,2],"b":"x y\n\" z"})"));
  EXPECT_TRUE(fleet_store::IsCompactJson(R"({"a":"\\","b":" "})"));
  EXPECT_FALSE(fleet_store::IsCompactJson(R"({"a": 1})"));
  EXPECT_FALSE(fleet_store::IsCompactJson("{\"a\":1}\n"));
  EXPECT_FALSE(fleet_store::IsCompactJson(R"({"a":"\\" ,"b":1})"));
  EXPECT_FALSE(fleet_store::IsCompactJson("\xef\xbb\xbf{}"));  // a byte-order mark
  EXPECT_TRUE(fleet_store::IsCompactJson(R"({"a":"\\\" x","b":"cafÃ©"})"));
  EXPECT_FALSE(fleet_store::IsCompactJson(R"({"a":"\\\\" ,"b":1})"));
  EXPECT_TRUE(fleet_store::IsCompactJson(R"(["","\"",""])"));
  EXPECT_FALSE(fleet_store::IsCompactJson(R"(["", ""])"));
}

TEST(FleetStoreNamesTest, NamesAndTokens) {
  EXPECT_STREQ(JobStateName(JobState::kExpired), "expired");
  EXPECT_STREQ(ClientStatusName(ClientStatus::kRevoked), "revoked");
  EXPECT_EQ(fleet_store::ParseJobState("leased"), JobState::kLeased);
  EXPECT_FALSE(fleet_store::ParseJobState("nope").has_value());
  const IssuedPreauthKey key = IssuePreauthKey({"a"}, 5);
  auto token = fleet_store::ParsePreauthToken(key.token);
  ASSERT_TRUE(token.has_value());
  EXPECT_EQ(token->key_id, key.key.key_id);
  EXPECT_TRUE(fleet_store::PreauthSecretMatches(token->secret_hex, key.key.secret_sha256));
  EXPECT_FALSE(fleet_store::PreauthSecretMatches(token->secret_hex, std::string(64, '0')));
  EXPECT_EQ(key.key.labels, std::vector<std::string>{"a"});
  EXPECT_EQ(key.key.expires_at, 5);
}

TEST(SqliteFleetStoreTest, RefusesAFileOfAnotherProgram) {
  char dir[] = "/tmp/pipette-fleet-store-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/not.db";
  std::ofstream(path) << "this is not a database, it is a poem\n";
  auto store = OpenFleetStore(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find(path), std::string::npos) << store.error().message;
  EXPECT_EQ(store.error().message.rfind("fleet store ", 0), 0u) << store.error().message;
  fs::remove_all(dir);
}

TEST(SqliteFleetStoreTest, UpgradesAVersion1DatabaseKeepingItsResults) {
  char dir[] = "/tmp/pipette-fleet-store-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/v1.db";
  const json record = Record(0);
  {
    auto store = OpenFleetStore(path);
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE((*store)->PutResult(record, "pc_a", kNow).ok());
  }
  {  // As version 1 made it: the newest-first index without benchmark_id.
    auto db = store::Db::Open(path, 10000);
    ASSERT_TRUE(db.ok()) << db.error().message;
    ASSERT_TRUE((*db)->Exec("DROP INDEX results_by_time; CREATE INDEX results_by_time ON results "
                            "(started_at DESC, result_id DESC); UPDATE meta SET value = '1' "
                            "WHERE key = 'schema_version'",
                            "downgrading")
                    .ok());
  }
  auto store = OpenFleetStore(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto page = (*store)->ListResults({}, 10, "");
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].row.result_id, record["result_id"]);
  auto db = store::Db::Open(path, 10000);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ((*db)->QueryText("SELECT value FROM meta WHERE key = 'schema_version'")->value_or(""),
            "2");
  const std::string index =
      (*db)
          ->QueryText("SELECT sql FROM sqlite_master WHERE name = 'results_by_time'")
          ->value_or("");
  EXPECT_NE(index.find("benchmark_id"), std::string::npos) << index;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipette
