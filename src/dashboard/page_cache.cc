// PageCache (pipette/dashboard.h): pages by key, each with the version it was rendered at, least
// recently used first out.
#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "pipette/dashboard.h"

namespace pipette {

struct PageCache::Impl {
  struct Entry {
    std::string key;
    int64_t version = 0;
    DashboardResponse page;
  };
  size_t max_bytes = 0;
  size_t bytes = 0;
  std::mutex mu;
  std::list<Entry> lru;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> by_key;

  void Drop(std::list<Entry>::iterator it) {
    bytes -= it->key.size() + it->page.body.size();
    by_key.erase(it->key);
    lru.erase(it);
  }
};

PageCache::PageCache(size_t max_bytes) : impl_(std::make_unique<Impl>()) {
  impl_->max_bytes = max_bytes;
}

PageCache::~PageCache() = default;

std::optional<DashboardResponse> PageCache::Find(const std::string& key, int64_t version) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->by_key.find(key);
  if (it == impl_->by_key.end()) return std::nullopt;
  if (it->second->version != version) {
    impl_->Drop(it->second);
    return std::nullopt;
  }
  impl_->lru.splice(impl_->lru.begin(), impl_->lru, it->second);
  return it->second->page;
}

void PageCache::Keep(const std::string& key, int64_t version, const DashboardResponse& page) {
  const size_t size = key.size() + page.body.size();
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (size > impl_->max_bytes) return;
  if (auto it = impl_->by_key.find(key); it != impl_->by_key.end()) impl_->Drop(it->second);
  while (!impl_->lru.empty() && impl_->bytes + size > impl_->max_bytes) {
    impl_->Drop(std::prev(impl_->lru.end()));
  }
  impl_->lru.push_front(Impl::Entry{key, version, page});
  impl_->by_key[key] = impl_->lru.begin();
  impl_->bytes += size;
}

}  // namespace pipette
