// SHA-256 of model files through the store's cache (see store.h: CachedSha256).
#include <sys/stat.h>

#include <filesystem>

#include "base/sha256.h"
#include "pipette/store.h"

namespace pipette {

Result<std::string> CachedSha256(ResultStore& store, const std::string& path) {
  struct stat st{};
  const std::string abs = std::filesystem::absolute(path).string();
  if (stat(abs.c_str(), &st) != 0) return Sha256OfFile(path);
  const int64_t mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  const auto size = static_cast<uint64_t>(st.st_size);
  auto cached = store.CachedFileHash(abs, size, mtime_ns);
  if (cached.ok() && cached->has_value()) return **cached;
  auto sha = Sha256OfFile(path);
  if (sha.ok()) store.PutFileHash(abs, size, mtime_ns, *sha);  // a miss next time is harmless
  return sha;
}

}  // namespace pipette
