#include "server/store_pool.h"

namespace pipette::server {

StorePool::Lease::~Lease() {
  if (pool_ != nullptr && store_ != nullptr) pool_->Add(std::move(store_));
}

Result<StorePool::Lease> StorePool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<FleetStore> store = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(store));
    }
  }
  Result<std::unique_ptr<FleetStore>> opened = OpenFleetStore(db_, options_);
  if (!opened.ok()) return opened.error();
  return Lease(this, std::move(opened).value());
}

void StorePool::Add(std::unique_ptr<FleetStore> store) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(store));
}

}  // namespace pipette::server
