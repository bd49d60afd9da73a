// GroupCommit on a real SQLite file: concurrent writers share transactions, a piece that fails
// is rolled back alone, every committed piece is in the database, and the write-ahead log is
// checkpointed by the GroupCommit's own thread.
#include "fleet_store/group_commit.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"

namespace pipette::fleet_store {
namespace {

namespace fs = std::filesystem;

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pipette-group-" + NewUuidV7());
    fs::create_directories(dir_);
    path_ = (dir_ / "g.db").string();
    auto db = store::Db::Open(path_, 10000);
    ASSERT_TRUE(db.ok()) << db.error().message;
    ASSERT_TRUE((*db)->Exec("PRAGMA journal_mode = WAL; CREATE TABLE t (k INTEGER PRIMARY KEY, "
                            "v TEXT NOT NULL)",
                            "creating")
                    .ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  int64_t Count() {
    auto db = store::Db::Open(path_, 10000);
    auto n = (*db)->QueryInt("SELECT count(*) FROM t");
    return n.ok() ? n->value_or(-1) : -1;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(GroupCommitTest, AnExpectedWriterJoinsTheGroupUnderWay) {
  // A window long enough for any scheduling delay: only B's arrival ends A's wait.
  auto group = std::make_shared<GroupCommit>(path_, std::chrono::seconds(60));
  auto a = store::Db::Open(path_, 10000);
  auto b = store::Db::Open(path_, 10000);
  ASSERT_TRUE(a.ok() && b.ok());
  group->Attach(**a);
  group->Attach(**b);
  const auto insert = [](store::Db& db, int64_t key) -> Status {
    auto stmt = db.Prepare("INSERT INTO t (k, v) VALUES (?, 'x')");
    if (!stmt.ok()) return stmt.error();
    stmt->Bind(1, key);
    return stmt->Run("writing");
  };
  // Both announced (as two submissions being validated): A leads and holds its group until B,
  // which arrives well inside the window, has queued; B's piece then runs on A's connection.
  std::shared_ptr<void> expect_a = group->Expect(), expect_b = group->Expect();
  store::Db* b_ran_on = nullptr;
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    Status s = group->Run(**b, "writing b", [&](store::Db& leader) -> Status {
      b_ran_on = &leader;
      return insert(leader, 2);
    });
    EXPECT_TRUE(s.ok());
    expect_b.reset();
  });
  Status s = group->Run(**a, "writing a", [&](store::Db& leader) { return insert(leader, 1); });
  EXPECT_TRUE(s.ok());
  expect_a.reset();
  later.join();
  EXPECT_EQ(b_ran_on, a->get());  // one transaction for both
  EXPECT_EQ(Count(), 2);
}

TEST_F(GroupCommitTest, AWithdrawnExpectationEndsTheWait) {
  auto group = std::make_shared<GroupCommit>(path_, std::chrono::seconds(60));
  auto db = store::Db::Open(path_, 10000);
  ASSERT_TRUE(db.ok());
  group->Attach(**db);
  std::shared_ptr<void> expect_a = group->Expect(), expect_b = group->Expect();
  // B gives up (its record was refused) instead of writing: A commits without waiting 60 s.
  std::thread gives_up([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    expect_b.reset();
  });
  const auto start = std::chrono::steady_clock::now();
  Status s = group->Run(**db, "writing", [](store::Db& leader) {
    return leader.Exec("INSERT INTO t (k, v) VALUES (1, 'x')", "writing");
  });
  gives_up.join();
  EXPECT_TRUE(s.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(Count(), 1);
}

TEST_F(GroupCommitTest, ConcurrentWritersAllCommitAndAFailingPieceIsRolledBackAlone) {
  constexpr int kThreads = 8, kEach = 200;
  std::shared_ptr<GroupCommit> group = GroupCommitFor(path_);
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto db = store::Db::Open(path_, 10000);
      ASSERT_TRUE(db.ok());
      group->Attach(**db);
      for (int i = 0; i < kEach; ++i) {
        const int64_t key = t * kEach + i;
        // Every 10th piece writes its row, then fails: that row must not stay.
        const bool fails = key % 10 == 0;
        Status s = group->Run(**db, "writing", [&](store::Db& leader) -> Status {
          auto insert = leader.Prepare("INSERT INTO t (k, v) VALUES (?, ?)");
          if (!insert.ok()) return insert.error();
          insert->Bind(1, key);
          insert->Bind(2, std::string(300, 'x'));
          if (Status s = insert->Run("writing"); !s.ok()) return s;
          return fails ? Status(MakeError("piece " + std::to_string(key) + " failed")) : Status::Ok();
        });
        if (s.ok()) {
          ++ok;
        } else {
          EXPECT_EQ(s.error().message, "piece " + std::to_string(key) + " failed");
          ++failed;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok, kThreads * kEach * 9 / 10);
  EXPECT_EQ(failed, kThreads * kEach / 10);
  EXPECT_EQ(Count(), ok.load());
  auto db = store::Db::Open(path_, 10000);
  auto failed_rows = (*db)->QueryInt("SELECT count(*) FROM t WHERE k % 10 = 0");
  EXPECT_EQ(failed_rows->value_or(-1), 0);
}

TEST_F(GroupCommitTest, TheLogIsCheckpointedWithoutTheWriters) {
  std::shared_ptr<GroupCommit> group = GroupCommitFor(path_);
  auto db = store::Db::Open(path_, 10000);
  group->Attach(**db);
  // About 3 pages per row: well past the threshold.
  const int rows = 3 * GroupCommit::kCatchUpPages / 3 * 2;  // 8000 rows, ~24,000 pages
  for (int i = 0; i < rows; ++i) {
    ASSERT_TRUE(group
                    ->Run(**db, "writing",
                          [&](store::Db& leader) -> Status {
                            auto insert = leader.Prepare("INSERT INTO t (v) VALUES (?)");
                            insert->Bind(1, std::string(10000, 'y'));
                            return insert->Run("writing");
                          })
                    .ok());
  }
  // The database file itself (not only its log) holds the rows once a checkpoint has run.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (fs::file_size(path_) < static_cast<uintmax_t>(rows) * 10000 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(fs::file_size(path_), static_cast<uintmax_t>(rows) * 10000 / 2);
  EXPECT_EQ(Count(), rows);
  // The log started again from its beginning: it stayed near kCatchUpPages (a catch-up that
  // meets the background checkpoint at work waits for the next group), not the 24,000 written.
  const uintmax_t frame = 4096 + 24;
  EXPECT_LE(fs::file_size(path_ + "-wal"),
            static_cast<uintmax_t>(2 * GroupCommit::kCatchUpPages) * frame);
}

}  // namespace
}  // namespace pipette::fleet_store
