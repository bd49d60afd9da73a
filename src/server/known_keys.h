// The public keys of the approved clients the server has authenticated, by client id: a
// submission from one of them is checked against its key without reading the client first (on
// PostgreSQL a round trip a submission, 9% of the server's CPU and a query's worth of the
// database's). A client's key never changes (its id is the key's digest), so a key kept here is
// never wrong; whether the client is still approved is checked by the store, in the transaction
// that stores the record (FleetStore::PutResultWithNonce). Holds at most kMaxKeys (emptied when
// full: every key is read again on next use). Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace pipette::server {

class KnownKeys {
 public:
  static constexpr size_t kMaxKeys = 4096;

  // The kept public key (64 lowercase hex digits) of `client_id`, or nullopt.
  std::optional<std::string> Find(const std::string& client_id) const;
  // Keeps the key of an approved client just authenticated.
  void Remember(const std::string& client_id, const std::string& public_key_hex);
  // Drops a client found not approved.
  void Forget(const std::string& client_id);

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> keys_;
};

}  // namespace pipette::server
