// Requests per second per client: a token bucket each, in memory (a restart forgets them, which
// only lets a client burst once more). Thread-safe.
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

 private:
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point at;
  };
  const double rate_, burst_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace pipette::server
