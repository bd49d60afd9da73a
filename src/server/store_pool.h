// Open FleetStores for the server's request threads. A FleetStore is not thread-safe, so each
// request borrows one for its duration; stores are kept open between requests (opening one
// checks the schema: too slow per request). Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pipette/fleet_store.h"
#include "pipette/status.h"

namespace pipette::server {

class StorePool {
 public:
  explicit StorePool(std::string db, FleetStoreOptions options = {})
      : db_(std::move(db)), options_(options) {}

  // A borrowed store: returned to the pool when destroyed, unless Discard() was called (after a
  // failure that may have left the connection broken: the next borrower opens a fresh one).
  class Lease {
   public:
    Lease(StorePool* pool, std::unique_ptr<FleetStore> store)
        : pool_(pool), store_(std::move(store)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = default;
    ~Lease();
    FleetStore& operator*() { return *store_; }
    FleetStore* operator->() { return store_.get(); }
    void Discard() { store_.reset(); }

   private:
    StorePool* pool_;
    std::unique_ptr<FleetStore> store_;
  };

  // A store from the pool, or a newly opened one (with the options given). Errors:
  // OpenFleetStore's.
  Result<Lease> Acquire();

  // Adds an already open store (Serve() opens the first one to check the database).
  void Add(std::unique_ptr<FleetStore> store);

 private:
  std::string db_;
  FleetStoreOptions options_;
  std::mutex mu_;
  std::vector<std::unique_ptr<FleetStore>> idle_;
};

}  // namespace pipette::server
