#include "server/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace pipette::server {

int RateLimiter::Take(const std::string& client_id, std::chrono::steady_clock::time_point now) {
  if (rate_ <= 0) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (buckets_.size() >= kPruneAt && now - last_prune_ >= std::chrono::seconds(1)) Prune(now);
  auto [it, fresh] = buckets_.try_emplace(client_id);
  Bucket& b = it->second;
  if (fresh) {
    b.tokens = burst_;
  } else {
    const double elapsed = std::chrono::duration<double>(now - b.at).count();
    b.tokens = std::min(burst_, b.tokens + std::max(0.0, elapsed) * rate_);
  }
  b.at = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return 0;
  }
  return std::max(1, static_cast<int>(std::ceil((1 - b.tokens) / rate_)));
}

int RateLimiter::Wait(const std::string& key, std::chrono::steady_clock::time_point now) {
  if (rate_ <= 0) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = buckets_.find(key);
  if (it == buckets_.end()) return 0;
  const double elapsed = std::chrono::duration<double>(now - it->second.at).count();
  const double tokens = std::min(burst_, it->second.tokens + std::max(0.0, elapsed) * rate_);
  return tokens >= 1 ? 0 : std::max(1, static_cast<int>(std::ceil((1 - tokens) / rate_)));
}

void RateLimiter::Prune(std::chrono::steady_clock::time_point now) {
  last_prune_ = now;
  std::erase_if(buckets_, [&](const auto& entry) {
    const Bucket& b = entry.second;
    return b.tokens + std::chrono::duration<double>(now - b.at).count() * rate_ >= burst_;
  });
}

}  // namespace pipette::server
