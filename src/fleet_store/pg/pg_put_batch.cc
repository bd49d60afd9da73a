#include "fleet_store/pg/pg_put_batch.h"

#include <map>
#include <set>
#include <utility>

namespace pipette::pg {

std::vector<PutBatcher::Piece*> PutBatcher::TakeBatch() {
  std::vector<Piece*> batch;
  std::set<std::string> ids;
  std::set<std::pair<std::string, std::string>> nonces;
  for (auto it = queue_.begin(); it != queue_.end() && batch.size() < kMaxBatch;) {
    const BatchedRow& row = *(*it)->row;
    if (ids.count(row.result_id()) || nonces.count({row.client_id(), row.nonce})) {
      ++it;  // the next batch's
      continue;
    }
    ids.insert(row.result_id());
    nonces.insert({row.client_id(), row.nonce});
    batch.push_back(*it);
    it = queue_.erase(it);
  }
  return batch;
}

std::shared_ptr<void> PutBatcher::Expect() {
  std::lock_guard<std::mutex> lock(mu_);
  return expected_.Expect(mu_, shared_from_this());
}

Result<BatchedOutcome> PutBatcher::Run(const BatchedRow& row, const Store& store) {
  Piece piece{&row, std::nullopt, {}};
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&piece);
  expected_.Arrived();
  while (!piece.outcome) {
    if (leading_) {
      // Woken alone: by the leader that stored this piece, or to lead the next batch. Waking every
      // waiter at each batch was 8 futex calls a submission.
      piece.wake.wait(lock);
      continue;
    }
    leading_ = true;
    expected_.Gather(lock, [this] { return queue_.size(); }, kMaxBatch, kGatherWindow);
    std::vector<Piece*> batch = TakeBatch();
    lock.unlock();
    std::vector<const BatchedRow*> rows;
    rows.reserve(batch.size());
    for (const Piece* p : batch) rows.push_back(p->row);
    Result<std::vector<BatchedOutcome>> stored = store(rows);
    lock.lock();
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!stored.ok()) {
        batch[i]->outcome = Result<BatchedOutcome>(stored.error());
      } else if (i < stored->size()) {
        batch[i]->outcome = (*stored)[i];
      } else {
        batch[i]->outcome = BatchedOutcome::kAlone;
      }
      if (batch[i] != &piece) batch[i]->wake.notify_one();
    }
    leading_ = false;
    if (!queue_.empty()) queue_.front()->wake.notify_one();  // the next leader
  }
  return *piece.outcome;
}

std::shared_ptr<PutBatcher> PutBatcherFor(const std::string& url) {
  static std::mutex registry_mutex;
  static std::map<std::string, std::weak_ptr<PutBatcher>> registry;
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::shared_ptr<PutBatcher> shared = registry[url].lock();
  if (!shared) {
    shared = std::make_shared<PutBatcher>();
    registry[url] = shared;
  }
  return shared;
}

}  // namespace pipette::pg
