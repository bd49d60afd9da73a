// Rewriting a GGUF header without its invalid token ids (gguf_patch.h).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gguf.h"
#include "models/gguf_patch.h"
#include "models/gguf_ptr.h"

namespace pipette {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The tokenizer.ggml.*_token_id keys of `g` whose id is not one of the n_vocab tokens.
std::vector<std::string> InvalidTokenIdKeys(const gguf_context* g, uint64_t n_vocab) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < gguf_get_n_kv(g); ++i) {
    const std::string key = gguf_get_key(g, i);
    if (key.rfind("tokenizer.ggml.", 0) != 0 || !EndsWith(key, "_token_id")) continue;
    const gguf_type type = gguf_get_kv_type(g, i);
    const bool bad = (type == GGUF_TYPE_UINT32 && gguf_get_val_u32(g, i) >= n_vocab) ||
                     (type == GGUF_TYPE_INT32 && (gguf_get_val_i32(g, i) < 0 ||
                                                  static_cast<uint64_t>(gguf_get_val_i32(g, i)) >=
                                                      n_vocab));
    if (bad) out.push_back(key);
  }
  return out;
}

// Writes `meta` and then the bytes of `from` from `offset` to its end into `to`, and syncs it.
Status WriteWithData(const std::vector<char>& meta, const std::string& from, uint64_t offset,
                     const std::string& to) {
  FilePtr in(std::fopen(from.c_str(), "rb"));
  if (!in) return MakeError(fmt::format("{}: cannot open ({})", from, std::strerror(errno)));
  FilePtr out(std::fopen(to.c_str(), "wb"));
  if (!out) return MakeError(fmt::format("{}: cannot create ({})", to, std::strerror(errno)));
  bool ok = std::fwrite(meta.data(), 1, meta.size(), out.get()) == meta.size() &&
            std::fseek(in.get(), static_cast<long>(offset), SEEK_SET) == 0;
  std::vector<char> buf(1 << 20);
  while (ok) {
    const size_t got = std::fread(buf.data(), 1, buf.size(), in.get());
    if (got == 0) {
      ok = !std::ferror(in.get());
      break;
    }
    ok = std::fwrite(buf.data(), 1, got, out.get()) == got;
  }
  ok = ok && std::fflush(out.get()) == 0 && ::fsync(::fileno(out.get())) == 0;
  if (!ok) return MakeError(fmt::format("{}: cannot write ({})", to, std::strerror(errno)));
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> DropInvalidTokenIds(const std::string& path) {
  gguf_init_params params = {/*no_alloc=*/true, /*ctx=*/nullptr};
  GgufPtr g(gguf_init_from_file(path.c_str(), params));
  if (!g) return MakeError(path + ": ggml could not read this GGUF file");
  const int64_t tokens = gguf_find_key(g.get(), "tokenizer.ggml.tokens");
  if (tokens < 0) return std::vector<std::string>{};  // no vocabulary to hold the ids against
  const std::vector<std::string> dropped =
      InvalidTokenIdKeys(g.get(), gguf_get_arr_n(g.get(), tokens));
  if (dropped.empty()) return dropped;
  const uint64_t data_offset = gguf_get_data_offset(g.get());
  for (const std::string& key : dropped) gguf_remove_key(g.get(), key.c_str());
  // The header without those keys, padded to the alignment, then the tensor data as it was: a
  // tensor's offset counts from the start of the data section, wherever that now is.
  std::vector<char> meta(gguf_get_meta_size(g.get()));
  gguf_get_meta_data(g.get(), meta.data());
  const std::string tmp = path + ".ids";
  Status s = WriteWithData(meta, path, data_offset, tmp);
  if (s.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    s = MakeError(fmt::format("{}: cannot rename the rewritten file into place", path));
  }
  if (!s.ok()) {
    std::remove(tmp.c_str());
    return s.error();
  }
  return dropped;
}

}  // namespace pipette
