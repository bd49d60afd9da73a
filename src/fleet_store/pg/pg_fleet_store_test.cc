// What is PostgreSQL's own in the fleet store: concurrent claimers on one database, a server that
// goes away mid-use and comes back, and URLs with passwords. The behaviour shared with SQLite is
// tested for both backends in ../fleet_store_test.cc. Each test gets a fresh database on a real
// server started by tests/support/postgres_server.h; without PostgreSQL installed they skip.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
#include "pipette/fleet_store.h"
#include "tests/support/postgres_server.h"

#include <pqxx/pqxx>

namespace pipette {
namespace {

using nlohmann::json;

#define FRESH_DATABASE_OR_SKIP(url)                                 \
  auto url##_made = testing::FreshPostgresDatabase();               \
  if (!url##_made.ok()) GTEST_SKIP() << url##_made.error().message; \
  const std::string url = *url##_made

std::unique_ptr<FleetStore> MustOpen(const std::string& url) {
  auto store = OpenFleetStore(url);
  EXPECT_TRUE(store.ok()) << store.error().message;
  return store.ok() ? std::move(*store) : nullptr;
}

json Spec(int i) {
  return {{"benchmark", "prefill_throughput_8"},
          {"model", {{"sha256", std::string(64, 'a')}, {"file_name", "m" + std::to_string(i)}}},
          {"runtime", "llamacpp"},
          {"settings", {{"threads", 1}}},
          {"requires", {{"runtimes", {"llamacpp"}}}}};
}

const json kCapabilities = {{"labels", json::array()},
                            {"arch", "x86_64"},
                            {"memory_bytes", 1 << 30},
                            {"runtimes", {"llamacpp"}},
                            {"models", json::array()}};

json Record(int i) {
  return {{"schema", "pipette.result/1"},
          {"result_id", NewUuidV7()},
          {"config_id", "cfg" + std::to_string(i % 7)},
          {"status", "ok"},
          {"started_at", "2026-11-29T10:00:00.000Z"},
          {"benchmark", {{"id", "prefill_throughput_8"}, {"type", "prefill"}}},
          {"model", {{"sha256", std::string(64, 'b')}, {"file_name", "m.gguf"}, {"quant", "Q8_0"}}},
          {"runtime", {{"name", "llamacpp"}, {"settings", {{"threads", 1 + i % 4}}}}},
          {"device", {{"id", "dev" + std::to_string(i % 3)}, {"label", "ci"}}},
          {"metrics",
           {{"prefill_throughput",
             {{"median", 100.0 + i},
              {"unit", "tokens/s"},
              {"ci95_low", 99.0},
              {"ci95_high", 101.5},
              {"n", 5}}}}}};
}

TEST(PgFleetStore, OpensAsPostgresqlAndNamesTheUrl) {
  FRESH_DATABASE_OR_SKIP(url);
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->backend(), "postgresql");
  EXPECT_EQ(store->where(), url);
  EXPECT_TRUE(store->Ping().ok());
  // A second store on the same database finds the schema made by the first.
  auto again = MustOpen(url);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(*again->CountResults(), 0);
}

// Where the server has lz4 (the Debian PostgreSQL of the tests does), records are compressed with
// it: pglz cost the server four times the CPU per record stored.
TEST(PgFleetStore, RecordsAreCompressedWithLz4WhereTheServerHasIt) {
  FRESH_DATABASE_OR_SKIP(url);
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  pqxx::connection c(url);
  pqxx::nontransaction tx(c);
  if (!tx.exec("SELECT EXISTS (SELECT 1 FROM pg_settings WHERE name = "
               "'default_toast_compression' AND 'lz4' = ANY (enumvals))")[0][0]
           .as<bool>()) {
    GTEST_SKIP() << "this PostgreSQL has no lz4";
  }
  EXPECT_EQ(tx.exec("SELECT attcompression FROM pg_attribute WHERE attrelid = "
                    "'results'::regclass AND attname = 'record'")[0][0]
                .as<std::string>(),
            "l");
  const json r = Record(1);
  ASSERT_TRUE(store->PutResult(r, "c", 1).ok());
  // A stored record long enough to be compressed is, with lz4, and reads back whole.
  json big = Record(2);
  big["logs"] = {{"runtime_stderr_tail", std::string(20000, 'x')}};
  ASSERT_TRUE(store->PutResult(big, "c", 1).ok());
  EXPECT_EQ(tx.exec("SELECT pg_column_compression(record) FROM results WHERE result_id = " +
                    tx.quote(big["result_id"].get<std::string>()))[0][0]
                .as<std::string>(),
            "lz4");
  auto back = store->GetResult(big["result_id"].get<std::string>());
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ(**back, big);
}

// The count is kept in shards, one per connection (pg_schema.cc): submissions from eight
// connections at once are all counted, by CountResults and by a listing's total.
TEST(PgFleetStore, ConcurrentSubmissionsAreCountedExactly) {
  FRESH_DATABASE_OR_SKIP(url);
  constexpr int kThreads = 8, kEach = 25;
  std::vector<std::thread> threads;
  std::atomic<int> stored{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto store = MustOpen(url);
      if (store == nullptr) return;
      for (int i = 0; i < kEach; ++i) {
        auto put = store->PutResult(Record(t * kEach + i), "c", 1);
        if (put.ok() && *put == PutOutcome::kStored) ++stored;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(stored.load(), kThreads * kEach);
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->CountResults(), kThreads * kEach);
  auto page = store->ListResults(ResultFilter{}, 10, "");
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->total, kThreads * kEach);
  // A stored duplicate is not counted again.
  const json again = Record(0);
  ASSERT_TRUE(store->PutResult(again, "c", 1).ok());
  ASSERT_EQ(*store->PutResult(again, "c", 1), PutOutcome::kSame);
  EXPECT_EQ(*store->CountResults(), kThreads * kEach + 1);
}

// Submissions from 16 connections at once are stored in batches (pg_put_batch.h); each still gets
// its own outcome: the same record sent twice at once is stored once (the other copy kSame), a
// nonce sent twice at once is spent once (the other kReplayed), and a row PostgreSQL refuses
// (jsonb has no NUL character) fails alone while the rest of its batch is stored.
TEST(PgFleetStore, BatchedSubmissionsEachGetTheirOwnOutcome) {
  FRESH_DATABASE_OR_SKIP(url);
  constexpr int kThreads = 16, kEach = 12;
  std::vector<json> records;
  for (int i = 0; i < kThreads * kEach; ++i) records.push_back(Record(i));
  json bad = Record(999);
  bad["runtime"]["settings"]["threads"] = std::string("a\0b", 3);
  {
    // The submitting client "c", registered and approved.
    auto store = MustOpen(url);
    ASSERT_NE(store, nullptr);
    IssuedPreauthKey key = IssuePreauthKey({}, 0);
    ASSERT_TRUE(store->AddPreauthKey(key.key).ok());
    FleetClient c;
    c.client_id = "c";
    c.public_key_hex = std::string(64, 'c');
    ASSERT_EQ(*store->Register(c, key.token, 1), RegisterOutcome::kRegistered);
  }
  std::mutex mu;
  std::map<std::string, std::vector<PutOutcome>> by_id;
  std::map<std::string, int> replays;  // nonce -> kReplayed outcomes
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto store = MustOpen(url);
      if (store == nullptr) return;
      for (int i = 0; i < kEach; ++i) {
        // Threads t and t ^ 1 send the same records, and pairs of them the same nonces.
        const json& r = records[(t / 2) * kEach + i];
        const std::string nonce =
            i % 3 == 0 ? "shared-" + std::to_string(t / 2) + "-" + std::to_string(i)
                       : "n-" + std::to_string(t) + "-" + std::to_string(i);
        const auto token = store->ExpectWrite();
        auto put = store->PutResultWithNonce(r, r.dump(), "c", nonce, 10, 1);
        std::lock_guard<std::mutex> lock(mu);
        if (!put.ok()) {
          errors.push_back(put.error().message);
        } else if (*put == PutOutcome::kReplayed) {
          ++replays[nonce];
        } else {
          by_id[r["result_id"].get<std::string>()].push_back(*put);
        }
      }
      if (t == 0) {
        auto put = store->PutResultWithNonce(bad, bad.dump(), "c", "bad", 10, 1);
        std::lock_guard<std::mutex> lock(mu);
        errors.push_back(put.ok() ? "stored" : put.error().message);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("storing a result"), std::string::npos) << errors[0];
  // Every record is stored exactly once; a record whose nonce was replayed has one outcome.
  ASSERT_EQ(by_id.size(), static_cast<size_t>(kThreads / 2 * kEach));
  int replayed = 0;
  for (const auto& [nonce, n] : replays) {
    EXPECT_EQ(n, 1) << nonce;
    replayed += n;
  }
  EXPECT_EQ(replayed, kThreads / 2 * (kEach / 3));
  for (const auto& [id, outcomes] : by_id) {
    EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), PutOutcome::kStored), 1) << id;
    EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), PutOutcome::kSame),
              static_cast<long>(outcomes.size()) - 1)
        << id;
  }
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->CountResults(), kThreads / 2 * kEach);
  auto back = store->GetResult(records[5]["result_id"].get<std::string>());
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ(**back, records[5]);
}

// A database made by schema version 1 (the count in meta, no metrics column) is migrated when a
// store opens it: its count carries over and its rows' summaries read their records' metrics.
TEST(PgFleetStore, ADatabaseOfSchemaVersion1IsMigrated) {
  FRESH_DATABASE_OR_SKIP(url);
  std::vector<json> records = {Record(1), Record(2), Record(3)};
  {
    auto store = MustOpen(url);
    ASSERT_NE(store, nullptr);
    for (const json& r : records) ASSERT_TRUE(store->PutResult(r, "c", 1).ok());
  }
  {
    pqxx::connection c(url);
    pqxx::work tx(c);
    tx.exec("ALTER TABLE results DROP COLUMN metrics; DROP TABLE result_counts; "
            "INSERT INTO meta (key, value) VALUES ('result_count', '3'); "
            "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
    tx.commit();
  }
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->CountResults(), 3);
  records.push_back(Record(4));
  ASSERT_TRUE(store->PutResult(records.back(), "c", 1).ok());
  EXPECT_EQ(*store->CountResults(), 4);
  auto summaries = store->Records(ResultFilter{}, RecordParts::kSummary);
  ASSERT_TRUE(summaries.ok()) << summaries.error().message;
  ASSERT_EQ(summaries->size(), 4u);
  for (const json& summary : *summaries) {
    const auto it = std::find_if(records.begin(), records.end(), [&](const json& r) {
      return r["result_id"] == summary["result_id"];
    });
    ASSERT_NE(it, records.end());
    EXPECT_EQ(summary["metrics"], (*it)["metrics"]);
  }
  pqxx::connection c(url);
  pqxx::nontransaction tx(c);
  EXPECT_EQ(tx.exec("SELECT value FROM meta WHERE key = 'schema_version'")[0][0].as<std::string>(),
            "2");
  EXPECT_TRUE(tx.exec("SELECT 1 FROM meta WHERE key = 'result_count'").empty());
  // Only the row stored after the migration has its metrics in the column.
  EXPECT_EQ(tx.exec("SELECT count(*) FROM results WHERE metrics IS NOT NULL")[0][0].as<int>(), 1);
}

// Four workers, each with its own store (connection), claim from one plan of 40 jobs at once:
// every job goes to exactly one of them, and none is left behind.
TEST(PgFleetStore, FourConcurrentClaimersNeverShareAJob) {
  FRESH_DATABASE_OR_SKIP(url);
  const int64_t now = 1'800'000'000;
  {
    auto store = MustOpen(url);
    ASSERT_NE(store, nullptr);
    std::vector<json> specs;
    for (int i = 0; i < 40; ++i) specs.push_back(Spec(i));
    auto plan = store->CreatePlan("concurrent", specs, 0, now);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
  }
  constexpr int kWorkers = 4;
  std::vector<std::vector<std::string>> claimed(kWorkers);
  std::vector<std::string> errors(kWorkers);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      // Opened at once too: the schema check must not race.
      auto store = OpenFleetStore(url);
      if (!store.ok()) {
        errors[w] = store.error().message;
        return;
      }
      while (!go) std::this_thread::yield();
      const std::string client = "pc_worker" + std::to_string(w);
      for (;;) {
        auto job = (*store)->Claim(client, kCapabilities, now, 60);
        if (!job.ok()) {
          errors[w] = job.error().message;
          return;
        }
        if (!job->has_value()) return;
        EXPECT_EQ((*job)->client_id, client);
        EXPECT_EQ((*job)->state, JobState::kLeased);
        EXPECT_EQ((*job)->attempts, 1);
        claimed[w].push_back((*job)->job_id);
      }
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  size_t total = 0;
  for (int w = 0; w < kWorkers; ++w) {
    EXPECT_EQ(errors[w], "") << "worker " << w;
    total += claimed[w].size();
    all.insert(claimed[w].begin(), claimed[w].end());
  }
  EXPECT_EQ(total, 40u);
  EXPECT_EQ(all.size(), 40u) << "a job was claimed twice";
}

// A pre-authorization key spent by one of several registrations running at once.
TEST(PgFleetStore, APreauthKeyIsSpentOnceUnderConcurrentRegistrations) {
  FRESH_DATABASE_OR_SKIP(url);
  const IssuedPreauthKey issued = IssuePreauthKey({"gpu"}, 0);
  {
    auto store = MustOpen(url);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->AddPreauthKey(issued.key).ok());
  }
  constexpr int kClients = 6;
  std::vector<std::string> outcomes(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      auto store = OpenFleetStore(url);
      if (!store.ok()) {
        outcomes[i] = store.error().message;
        return;
      }
      FleetClient c;
      c.client_id = "pc_" + std::string(31, 'a') + std::to_string(i);
      c.public_key_hex = std::string(63, 'b') + std::to_string(i);
      c.label = "c" + std::to_string(i);
      auto r = (*store)->Register(c, issued.token, 1'800'000'000);
      outcomes[i] = !r.ok()                                 ? r.error().message
                    : *r == RegisterOutcome::kRegistered    ? "registered"
                    : *r == RegisterOutcome::kBadPreauthKey ? "bad key"
                                                            : "already";
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), "registered"), 1);
  EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), "bad key"), kClients - 1);
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  auto clients = store->ListClients();
  ASSERT_TRUE(clients.ok());
  ASSERT_EQ(clients->size(), 1u);
  EXPECT_EQ(clients->front().status, ClientStatus::kApproved);
  EXPECT_EQ(clients->front().labels, std::vector<std::string>{"gpu"});
}

// The server stopped under an open store: each call fails with one line naming the database;
// once it is back, the same store works again without being reopened.
TEST(PgFleetStore, ServerGoneMidUseIsOneLineAndTheStoreRecoversAfterARestart) {
  FRESH_DATABASE_OR_SKIP(url);
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutResult(Record(1), "pc_x", 1).ok());

  ASSERT_TRUE(testing::StopTestPostgres().ok());
  for (int i = 0; i < 2; ++i) {  // the lost connection, then a refused one
    Status ping = store->Ping();
    ASSERT_FALSE(ping.ok());
    const std::string& m = ping.error().message;
    EXPECT_EQ(m.rfind("fleet store " + url + ": database is not answering: ", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  auto put = store->PutResult(Record(2), "pc_x", 2);
  ASSERT_FALSE(put.ok());
  EXPECT_NE(put.error().message.find("database is not answering"), std::string::npos);
  EXPECT_EQ(FleetStoreFaultOf(put.error()), FleetStoreFault::kUnavailable);
  auto opened = OpenFleetStore(url);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().message.rfind("fleet store " + url + ": database is not answering", 0),
            0u)
      << opened.error().message;

  ASSERT_TRUE(testing::StartTestPostgres().ok());
  EXPECT_TRUE(store->Ping().ok());
  auto stored = store->PutResult(Record(3), "pc_x", 3);
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(*stored, PutOutcome::kStored);
  EXPECT_EQ(*store->CountResults(), 2);
}

// A restart between two calls: the kept connection is dead, nothing was in flight, and the next
// call (a write, too) goes through on a new connection without an error.
// PostgreSQL's own full disk (SQLSTATE 53100), for real: the results table moved to a tablespace
// on a 256 KiB tmpfs (mounting needs root; elsewhere the test skips). Filling it fails one
// PutResult with the one line of a full disk, FleetStoreFault::kFull (the server's 507), and
// that result is not half stored.
TEST(PgFleetStore, AFullDiskUnderTheDatabaseIsDiskFullAndNothingIsHalfStored) {
  FRESH_DATABASE_OR_SKIP(url);
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  const std::string dir = "/tmp/pipette-pg-full-" + NewUuidV7().substr(24, 8);
  std::filesystem::create_directories(dir);
  // The server runs as postgres when this test runs as root, else as this user.
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (uid == 0) {
    if (const passwd* pw = getpwnam("postgres")) {
      uid = pw->pw_uid;
      gid = pw->pw_gid;
    }
  }
  const std::string options = "size=256k,mode=0700,uid=" + std::to_string(uid) +
                              ",gid=" + std::to_string(gid);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs at " << dir << " (" << std::strerror(errno)
                 << "; needs root)";
  }
  const std::string space = "full_" + NewUuidV7().substr(24, 8);
  pqxx::connection admin(url);
  const auto run = [&](const std::string& sql) {
    pqxx::nontransaction tx(admin);  // CREATE/DROP TABLESPACE cannot run in a transaction
    tx.exec(sql);
  };
  run("CREATE TABLESPACE " + space + " LOCATION '" + dir + "'");
  run("ALTER TABLE results SET TABLESPACE " + space);

  int stored = 0;
  Error full;
  for (int i = 0; i < 5000; ++i) {
    auto put = store->PutResult(Record(i), "pc_x", i);
    if (!put.ok()) {
      full = put.error();
      break;
    }
    ++stored;
  }
  EXPECT_GT(stored, 0);
  EXPECT_EQ(FleetStoreFaultOf(full), FleetStoreFault::kFull) << full.message;
  EXPECT_NE(full.message.find("disk full on the database server while "), std::string::npos)
      << full.message;
  EXPECT_EQ(full.message.find('\n'), std::string::npos) << full.message;
  auto count = store->CountResults();
  ASSERT_TRUE(count.ok()) << count.error().message;
  EXPECT_EQ(*count, stored);
  EXPECT_TRUE(store->Ping().ok());

  run("ALTER TABLE results SET TABLESPACE pg_default");
  run("DROP TABLESPACE " + space);
  umount2(dir.c_str(), MNT_DETACH);
  std::filesystem::remove_all(dir);
}

TEST(PgFleetStore, ARestartBetweenCallsIsInvisible) {
  FRESH_DATABASE_OR_SKIP(url);
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->UseNonce("pc_x", "n1", 100).ok());
  ASSERT_TRUE(testing::StopTestPostgres().ok());
  ASSERT_TRUE(testing::StartTestPostgres().ok());
  auto fresh = store->UseNonce("pc_x", "n2", 100);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  EXPECT_TRUE(*fresh);
  auto again = store->UseNonce("pc_x", "n1", 100);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(*again);
}

TEST(PgFleetStore, ThePasswordIsInNoMessage) {
  FRESH_DATABASE_OR_SKIP(url);
  // The test server trusts local connections: the password is accepted and ignored.
  const std::string secret = "s3cret-Pa55";
  std::string with_password = url;
  with_password.insert(with_password.find('@'), ":" + secret);
  auto store = MustOpen(with_password);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->where(), url);
  auto bad = store->ListResults({}, 10, "not-a-cursor");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "fleet store " + url + ": bad cursor; start from the first page");

  ASSERT_TRUE(testing::StopTestPostgres().ok());
  Status ping = store->Ping();
  ASSERT_TRUE(testing::StartTestPostgres().ok());
  ASSERT_FALSE(ping.ok());
  EXPECT_EQ(ping.error().message.find(secret), std::string::npos) << ping.error().message;

  // Nothing listens on port 1; a password given as a parameter is hidden too.
  for (const std::string& unreachable :
       {"postgresql://pipette:" + secret + "@127.0.0.1:1/db",
        "postgresql://pipette@127.0.0.1:1/db?password=" + secret + "&sslmode=disable"}) {
    auto refused = OpenFleetStore(unreachable);
    ASSERT_FALSE(refused.ok());
    const std::string& m = refused.error().message;
    EXPECT_EQ(m.find(secret), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(m.find("postgresql://pipette@127.0.0.1:1/db"), std::string::npos) << m;
    EXPECT_NE(m.find("database is not answering"), std::string::npos) << m;
  }
}

TEST(PgFleetStore, NamesAMissingDatabase) {
  FRESH_DATABASE_OR_SKIP(url);
  const std::string missing = url.substr(0, url.rfind('/')) + "/no_such_db";
  auto store = OpenFleetStore(missing);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().message, "fleet store " + missing +
                                       ": the server refused the connection: database "
                                       "\"no_such_db\" does not exist");
}

}  // namespace
}  // namespace pipette
