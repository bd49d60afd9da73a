// Group commit for the SQLite fleet store: the writes of concurrent requests to one database file
// share a transaction, so a burst of submissions pays for one BEGIN/COMMIT and writes each B-tree
// page it touches once (the newest-first indexes put every new result on the same leaf pages)
// instead of once per result. A commit made here is as durable as one made alone, and nothing is
// acknowledged before its commit.
//
// The first writer to arrive leads: it takes every queued piece of work, runs each in its own
// SAVEPOINT on its own connection, commits, and wakes the others with their outcome. A piece that
// fails is rolled back to its savepoint and reports its own error; the rest still commit. When
// the transaction itself fails (BEGIN, COMMIT, or an error after which SQLite has rolled back,
// such as a full disk), every piece of the group reports that error and none is stored.
//
// A group is held briefly for writes that are on their way (Expect): under load the leader waits
// up to kGatherWindow for the expected writers to queue, so a commit carries several records and
// writes each index page once for all of them (each commit writes about a dozen pages besides the
// records themselves); a lone writer, or one whose peers are not writing, commits at once.
//
// It also checkpoints the write-ahead log: in a thread of its own, on a connection of its own,
// with PASSIVE checkpoints that never block a writer, once the log holds kCheckpointPages. Left
// to SQLite, the commit that crosses the threshold copies the log into the database and syncs
// both files while every other writer waits: the ingest's p99.
//
// Thread-safe; one GroupCommit per database file and process (GroupCommitFor), owned by a
// shared_ptr.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "fleet_store/expected_writers.h"
#include "pipette/status.h"
#include "store/sqlite.h"

namespace pipette::fleet_store {

class GroupCommit : public std::enable_shared_from_this<GroupCommit> {
 public:
  // `gather_window`: the longest a leader holds its group for expected writers.
  explicit GroupCommit(std::string path, std::chrono::microseconds gather_window = kGatherWindow);
  ~GroupCommit();
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Hands `db`'s write-ahead log to this GroupCommit's checkpointer (replaces SQLite's automatic
  // checkpoints on that connection). Call once per connection, before it writes.
  void Attach(store::Db& db);

  // Work on the leader's connection, inside the shared transaction. It must use `db`, not a
  // connection of its own, and must not begin or end transactions.
  using Work = std::function<Status(store::Db& db)>;

  // Runs `work` in the next group on `mine` (this caller's connection, used when it leads).
  // Returns the work's own error, the group's transaction error, or Ok once committed.
  Status Run(store::Db& mine, const std::string& doing, Work work);

  // Says that a write is on its way to Run (a submission being parsed and validated) until the
  // returned token is dropped: a leader waits up to kGatherWindow for it to join its group. The
  // token keeps this GroupCommit alive. REQUIRES: this GroupCommit is owned by a shared_ptr.
  std::shared_ptr<void> Expect();

  // Held while a write with its own transaction runs on the holder's connection: no group
  // runs meanwhile.
  class Exclusive {
   public:
    explicit Exclusive(GroupCommit& g);
    ~Exclusive();
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;

   private:
    GroupCommit& g_;
  };

  // The most pieces one group takes; the rest wait for the next.
  static constexpr size_t kMaxGroup = 64;
  // The longest a leader holds its group for expected writers (added to their latency at most).
  static constexpr std::chrono::microseconds kGatherWindow{2000};
  // Ten times SQLite's own threshold (wal_autocheckpoint), in pages: a page written by many
  // commits in between (an index's newest leaf) is copied into the database once, not once per
  // 1000 pages of log (measured: 10% less server CPU a submission); past kCatchUpPages the
  // leader of a group finishes the checkpoint before the next group writes, so the log stays
  // bounded.
  static constexpr int kCheckpointPages = 10000;
  static constexpr int kCatchUpPages = 4 * kCheckpointPages;

 private:
  struct Piece {
    Work* work;
    const std::string* doing;
    Status status = Status::Ok();
    bool done = false;
  };
  void RunGroup(store::Db& db, std::deque<Piece*>& group);
  static int OnCommit(void* self, sqlite3* db, const char* schema, int wal_pages);
  void Checkpoints();

  const std::string path_;
  const std::chrono::microseconds gather_window_;

  std::mutex mu_;
  std::condition_variable changed_;
  bool leading_ = false;  // a group, or an Exclusive holder, is writing
  std::deque<Piece*> queue_;
  ExpectedWriters expected_;  // under mu_

  std::mutex checkpoint_mu_;
  std::condition_variable checkpoint_due_;
  bool due_ = false, stopping_ = false;
  std::atomic<int> wal_pages_{0};  // frames in the log after the last commit
  std::thread checkpointer_;  // last: starts once the rest is built
};

// The GroupCommit of the database at `path` in this process (shared by its connections).
std::shared_ptr<GroupCommit> GroupCommitFor(const std::string& path);

}  // namespace pipette::fleet_store
