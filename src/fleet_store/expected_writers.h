// The writes announced as on their way to a group (SQLite's group commit, PostgreSQL's batches):
// a leader holds its group briefly for them, so one commit carries more. Not thread-safe by
// itself: every call is made under the owner's mutex (`mu`), which the tokens take when dropped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>

namespace pipette::fleet_store {

class ExpectedWriters {
 public:
  // Counts one write on its way until the returned token is dropped. The token keeps `owner` (the
  // object this is a member of) alive. REQUIRES: `mu` held.
  std::shared_ptr<void> Expect(std::mutex& mu, std::shared_ptr<void> owner) {
    ++expected_;
    return std::shared_ptr<void>(this, [this, &mu, owner = std::move(owner)](void*) {
      {
        std::lock_guard<std::mutex> lock(mu);
        --expected_;
      }
      arrived_.notify_one();
    });
  }

  // A piece was queued. REQUIRES: the owner's mutex held.
  void Arrived() { arrived_.notify_one(); }

  // Waits, under `lock`, while fewer than `most` pieces are queued (`queued()`) and some expected
  // writes have not queued theirs (those queued hold their tokens too), for at most `window`.
  template <typename Queued>
  void Gather(std::unique_lock<std::mutex>& lock, Queued queued, size_t most,
              std::chrono::microseconds window) {
    const auto deadline = std::chrono::steady_clock::now() + window;
    while (queued() < most && queued() < expected_ &&
           arrived_.wait_until(lock, deadline) != std::cv_status::timeout) {
    }
  }

 private:
  size_t expected_ = 0;              // announced by Expect and not yet withdrawn
  std::condition_variable arrived_;  // a piece was queued or an expected write withdrawn
};

}  // namespace pipette::fleet_store
