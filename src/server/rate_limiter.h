// Requests per second per key (a client id, a client address): a token bucket each, in memory (a
// restart forgets them, which only lets a client burst once more). Thread-safe. Memory: a bucket
// per key seen, except that past kPruneAt keys the full buckets (keys idle long enough to have
// refilled, which a fresh bucket equals) are dropped, at most once a second.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace pipette::server {

class RateLimiter {
 public:
  // `rate` tokens per second, buckets of 2 * rate; rate <= 0 admits everything.
  explicit RateLimiter(double rate) : rate_(rate), burst_(2 * rate) {}

  // Takes a token from `client_id`'s bucket at `now`. 0 when admitted, else the whole seconds
  // (at least 1) until a token is there.
  int Take(const std::string& client_id, std::chrono::steady_clock::time_point now);

  // The wait Take would answer at `now`, taking nothing: 0 when a token is there.
  int Wait(const std::string& key, std::chrono::steady_clock::time_point now);

  static constexpr size_t kPruneAt = 65536;

 private:
  void Prune(std::chrono::steady_clock::time_point now);  // mu_ held

  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point at;
  };
  const double rate_, burst_;
  std::chrono::steady_clock::time_point last_prune_{};
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace pipette::server
