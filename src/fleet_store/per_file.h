// One shared T per database file in this process, for what the connections to one file share (its
// group commit, its counts): made on first use, gone when the last holder lets go. Thread-safe.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace pipette::fleet_store {

// T is made as T(path). Paths that name the same file (weakly canonical) share one T.
template <typename T>
std::shared_ptr<T> PerFile(const std::string& path) {
  static std::mutex registry_mutex;
  static std::map<std::string, std::weak_ptr<T>> registry;
  std::error_code ec;
  const std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
  const std::string& key = ec ? path : canonical;
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::shared_ptr<T> shared = registry[key].lock();
  if (!shared) {
    shared = std::make_shared<T>(path);
    registry[key] = shared;
  }
  return shared;
}

}  // namespace pipette::fleet_store
