#include "server/known_keys.h"

namespace pipette::server {

std::optional<std::string> KnownKeys::Find(const std::string& client_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = keys_.find(client_id);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

void KnownKeys::Remember(const std::string& client_id, const std::string& public_key_hex) {
  std::lock_guard<std::mutex> lock(mu_);
  if (keys_.size() >= kMaxKeys && !keys_.count(client_id)) keys_.clear();
  keys_[client_id] = public_key_hex;
}

void KnownKeys::Forget(const std::string& client_id) {
  std::lock_guard<std::mutex> lock(mu_);
  keys_.erase(client_id);
}

}  // namespace pipette::server
