#include "fleet_store/group_commit.h"

#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>

#include <utility>

#include "fleet_store/per_file.h"

namespace pipette::fleet_store {

GroupCommit::GroupCommit(std::string path, std::chrono::microseconds gather_window)
    : path_(std::move(path)),
      gather_window_(gather_window),
      checkpointer_([this] { Checkpoints(); }) {}

GroupCommit::~GroupCommit() {
  {
    std::lock_guard<std::mutex> lock(checkpoint_mu_);
    stopping_ = true;
  }
  checkpoint_due_.notify_all();
  checkpointer_.join();
}

void GroupCommit::Attach(store::Db& db) { sqlite3_wal_hook(db.raw(), &GroupCommit::OnCommit, this); }

int GroupCommit::OnCommit(void* self, sqlite3*, const char*, int wal_pages) {
  auto* g = static_cast<GroupCommit*>(self);
  g->wal_pages_ = wal_pages;
  if (wal_pages >= kCheckpointPages) {
    {
      std::lock_guard<std::mutex> lock(g->checkpoint_mu_);
      g->due_ = true;
    }
    g->checkpoint_due_.notify_one();
  }
  return SQLITE_OK;
}

void GroupCommit::Checkpoints() {
  // Signals are the process's business (serve waits for SIGTERM in a thread of its own): this
  // thread may start before they are blocked, so it blocks them itself.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  sqlite3* db = nullptr;
  std::unique_lock<std::mutex> lock(checkpoint_mu_);
  while (true) {
    checkpoint_due_.wait(lock, [&] { return due_ || stopping_; });
    if (stopping_) break;
    due_ = false;
    lock.unlock();
    if (db == nullptr &&
        sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      sqlite3_close(db);  // the next commit past the threshold tries again
      db = nullptr;
    }
    // A connection opens the log on its first read; until then a checkpoint is a no-op.
    if (db != nullptr &&
        sqlite3_exec(db, "PRAGMA schema_version", nullptr, nullptr, nullptr) != SQLITE_OK) {
      sqlite3_close(db);
      db = nullptr;
    }
    // A failure (a full disk) leaves the log as it is: nothing is lost, the next try copies it.
    if (db != nullptr) {
      sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    }
    lock.lock();
  }
  lock.unlock();
  sqlite3_close_v2(db);
}

GroupCommit::Exclusive::Exclusive(GroupCommit& g) : g_(g) {
  std::unique_lock<std::mutex> lock(g_.mu_);
  g_.changed_.wait(lock, [&] { return !g_.leading_; });
  g_.leading_ = true;
}

GroupCommit::Exclusive::~Exclusive() {
  {
    std::lock_guard<std::mutex> lock(g_.mu_);
    g_.leading_ = false;
  }
  g_.changed_.notify_all();
}

std::shared_ptr<void> GroupCommit::Expect() {
  std::lock_guard<std::mutex> lock(mu_);
  return expected_.Expect(mu_, shared_from_this());
}

Status GroupCommit::Run(store::Db& mine, const std::string& doing, Work work) {
  Piece piece{&work, &doing};
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&piece);
  expected_.Arrived();
  while (!piece.done) {
    if (leading_) {
      changed_.wait(lock);
      continue;
    }
    leading_ = true;
    expected_.Gather(lock, [this] { return queue_.size(); }, kMaxGroup, gather_window_);
    std::deque<Piece*> group;
    while (!queue_.empty() && group.size() < kMaxGroup) {
      group.push_back(queue_.front());
      queue_.pop_front();
    }
    lock.unlock();
    RunGroup(mine, group);
    const bool catch_up = wal_pages_ >= kCatchUpPages;
    lock.lock();
    // The group is committed: its writers may go (and their pieces end) while this one copies.
    for (Piece* p : group) p->done = true;
    if (catch_up) {
      changed_.notify_all();
      lock.unlock();
      // Writers outpace the background checkpoint, and the log only starts again from its
      // beginning once all of it is copied: copy the rest now, while no writer appends.
      sqlite3_wal_checkpoint_v2(mine.raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      lock.lock();
    }
    leading_ = false;
    changed_.notify_all();
  }
  return piece.status;
}

namespace {

Status Step(store::Db& db, const std::string& sql, std::string_view doing) {
  auto stmt = db.Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  return stmt->Run(doing);
}

}  // namespace

void GroupCommit::RunGroup(store::Db& db, std::deque<Piece*>& group) {
  const auto fail_all = [&](const Status& s) {
    for (Piece* p : group) p->status = s;
  };
  store::WriteTransaction txn(db);
  if (Status s = txn.Begin(*group.front()->doing); !s.ok()) return fail_all(s);
  for (Piece* p : group) {
    if (Status s = Step(db, "SAVEPOINT piece", *p->doing); !s.ok()) return fail_all(s);
    p->status = (*p->work)(db);
    if (sqlite3_get_autocommit(db.raw()) != 0) {
      // SQLite ended the transaction (a full disk, an I/O error): nothing of the group stays.
      return fail_all(p->status.ok() ? db.ErrorFor(SQLITE_ABORT, *p->doing) : p->status);
    }
    if (!p->status.ok()) {
      if (Status s = Step(db, "ROLLBACK TO piece", *p->doing); !s.ok()) return fail_all(s);
    }
    if (Status s = Step(db, "RELEASE piece", *p->doing); !s.ok()) return fail_all(s);
  }
  if (Status s = txn.Commit(*group.front()->doing); !s.ok()) fail_all(s);
}

std::shared_ptr<GroupCommit> GroupCommitFor(const std::string& path) {
  return PerFile<GroupCommit>(path);
}

}  // namespace pipette::fleet_store
