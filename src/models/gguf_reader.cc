// GGUF header parser (format: third_party/llama.cpp/ggml/include/gguf.h). Little-endian, versions
// 2 and 3 (64-bit counts and lengths). Every length and count read from the file is checked
// against the file size before it is used, so a corrupt file gives an error, never a huge
// allocation.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "ggml.h"
#include "models/gguf_patch.h"
#include "models/human_bytes.h"
#include "pipette/gguf.h"

namespace pipette {
namespace {

using nlohmann::json;

constexpr char kConvertHint[] =
    "give a GGUF model or convert a llama2.c checkpoint with `pipette models import-llama2c`";
constexpr char kCorruptHint[] = "the file is corrupt; download or convert it again";
constexpr char kCutOrCorruptHint[] =
    "the file is truncated or corrupt; download or convert it again";
constexpr uint64_t kDefaultAlignment = 32;         // GGUF_DEFAULT_ALIGNMENT
constexpr uint64_t kMaxKeyBytes = 65535;           // GGUF keys are at most 2^16-1 bytes
constexpr uint64_t kMaxKeptStringBytes = 1 << 20;  // longer string values are skipped, not kept
constexpr uint64_t kMaxKeptArrayItems = 1024;      // longer integer arrays are skipped, not kept
constexpr uint32_t kMaxDims = 4;                   // GGML_MAX_DIMS

// GGUF value types (enum gguf_type).
enum ValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
  kValueTypeCount = 13,
};

// Bytes of one scalar of `type`; 0 for string and array.
uint64_t ScalarSize(uint32_t type) {
  static constexpr uint64_t kSizes[kValueTypeCount] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  return kSizes[type];
}

std::string Printable(const char* bytes, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    out += (c >= 0x20 && c < 0x7f) ? std::string(1, static_cast<char>(c))
                                   : fmt::format("\\x{:02x}", c);
  }
  return out;
}

// Sequential reader over a file with its own buffer, so that skipping the many small strings of a
// token list costs no system calls. Every failure records a one-line message (without the path).
class Cursor {
 public:
  // `readable`: how many bytes of the file `fd` holds, when it is a copy of only the first bytes
  // of a file of `file_size` (a model on a device); reading past them fails with prefix_short().
  Cursor(int fd, uint64_t file_size, uint64_t readable = UINT64_MAX)
      : fd_(fd),
        size_(file_size),
        readable_(std::min(readable, file_size)),
        // Never larger than what can be read: a small file costs no 1 MiB buffer.
        buf_(static_cast<size_t>(std::clamp<uint64_t>(readable_, 1, 1 << 20))) {}

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }
  const std::string& error() const { return error_; }

  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }
  bool Corrupt(const std::string& what) { return Fail(what + "; " + kCorruptHint); }

  bool Read(void* dst, uint64_t n) {
    if (n > remaining()) return Truncated(n);
    char* out = static_cast<char*>(dst);
    while (n > 0) {
      if (pos_ < buf_start_ || pos_ >= buf_start_ + buf_len_) {
        if (!Fill()) return false;
      }
      const uint64_t in_buf = buf_start_ + buf_len_ - pos_;
      const uint64_t take = std::min(n, in_buf);
      std::memcpy(out, buf_.data() + (pos_ - buf_start_), take);
      out += take;
      pos_ += take;
      n -= take;
    }
    return true;
  }

  bool Skip(uint64_t n) {
    if (n > remaining()) return Truncated(n);
    pos_ += n;
    return true;
  }

  template <typename T>
  bool Get(T* value) {
    return Read(value, sizeof(T));
  }

  // Reads a GGUF string (u64 length + bytes). A length beyond the whole file is corruption; one
  // beyond its end is truncation. Strings longer than `keep_max` are skipped (`*out` left empty).
  bool GetString(std::string* out, const std::string& what,
                 uint64_t keep_max = kMaxKeptStringBytes) {
    const uint64_t at = pos_;
    uint64_t len = 0;
    if (!Get(&len)) return false;
    if (len > size_) {
      return Corrupt(fmt::format(
          "{} at byte {} claims a length of {} bytes, more than the whole file", what, at, len));
    }
    out->clear();
    last_length_ = len;
    if (len > keep_max) return Skip(len);
    out->resize(len);
    return Read(out->data(), len);
  }

  // Length of the last string read by GetString.
  uint64_t last_length() const { return last_length_; }
  // The header goes on past the copied prefix.
  bool prefix_short() const { return prefix_short_; }

 private:
  bool Truncated(uint64_t n) {
    return Fail(fmt::format(
        "file is truncated ({} of at least {} needed for the header); the download or copy is "
        "incomplete",
        HumanBytes(size_), HumanBytes(pos_ + n)));
  }

  bool Fill() {
    buf_start_ = pos_;
    buf_len_ = 0;
    if (pos_ >= readable_) {
      prefix_short_ = true;
      return Fail(fmt::format("the header goes on past the first {} copied", HumanBytes(readable_)));
    }
    const uint64_t want = std::min<uint64_t>({buf_.size(), remaining(), readable_ - pos_});
    while (buf_len_ < want) {
      const ssize_t got = ::pread(fd_, buf_.data() + buf_len_, want - buf_len_,
                                  static_cast<off_t>(buf_start_ + buf_len_));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return Fail(fmt::format("read error ({})", std::strerror(errno)));
      if (got == 0) return Fail("file shrank while being read; is it still being written?");
      buf_len_ += static_cast<uint64_t>(got);
    }
    return true;
  }

  int fd_;
  uint64_t size_;
  uint64_t readable_;
  bool prefix_short_ = false;
  std::vector<char> buf_;
  uint64_t buf_start_ = 0;
  uint64_t buf_len_ = 0;
  uint64_t pos_ = 0;
  uint64_t last_length_ = 0;
  std::string error_;
};

// Reads one scalar value of `type` as JSON.
bool ReadScalar(Cursor& in, uint32_t type, json* out) {
  switch (type) {
    case kU8: {
      uint8_t v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kI8: {
      int8_t v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kU16: {
      uint16_t v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kI16: {
      int16_t v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kU32: {
      uint32_t v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kI32: {
      int32_t v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kU64: {
      uint64_t v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kI64: {
      int64_t v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kF32: {
      float v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kF64: {
      double v;
      if (!in.Get(&v)) return false;
      *out = v;
      return true;
    }
    case kBool: {
      int8_t v;
      if (!in.Get(&v)) return false;
      *out = v != 0;
      return true;
    }
    default:
      return false;
  }
}

// The header's key-value pairs as far as pipette needs them: scalars (strings up to 1 MiB) and
// short integer arrays as JSON; every array's length.
struct KvTable {
  std::map<std::string, json> values;
  std::map<std::string, uint64_t> array_lengths;
  std::map<std::string, std::pair<uint32_t, uint64_t>> scalar_at;  // key -> {type, file offset}
};

bool ReadArray(Cursor& in, const std::string& key, KvTable* kv) {
  uint32_t type = 0;
  uint64_t n = 0;
  if (!in.Get(&type) || !in.Get(&n)) return false;
  if (type >= kValueTypeCount || type == kArray) {
    return in.Corrupt(fmt::format("key '{}' is an array of unknown value type {}", key, type));
  }
  // Every element takes at least one byte (a string at least its 8-byte length).
  const uint64_t min_item = type == kString ? 8 : ScalarSize(type);
  if (n > in.remaining() / min_item) {
    return in.Corrupt(
        fmt::format("array '{}' claims {} elements, more than the file can hold", key, n));
  }
  kv->array_lengths[key] = n;
  if (type == kString) {
    std::string skipped;
    for (uint64_t i = 0; i < n; ++i) {
      if (!in.GetString(&skipped, "an array string", /*keep_max=*/0)) return false;
    }
    return true;
  }
  const bool integer = type != kF32 && type != kF64 && type != kBool;
  if (!integer || n > kMaxKeptArrayItems) return in.Skip(n * ScalarSize(type));
  json items = json::array();
  for (uint64_t i = 0; i < n; ++i) {
    json item;
    if (!ReadScalar(in, type, &item)) return false;
    items.push_back(std::move(item));
  }
  kv->values[key] = std::move(items);
  return true;
}

bool ReadKv(Cursor& in, KvTable* kv) {
  std::string key;
  if (!in.GetString(&key, "a key name", kMaxKeyBytes)) return false;
  if (in.last_length() > kMaxKeyBytes) return in.Corrupt("a key name is longer than 65535 bytes");
  uint32_t type = 0;
  if (!in.Get(&type)) return false;
  if (type >= kValueTypeCount) {
    return in.Corrupt(fmt::format("key '{}' has unknown value type {}", key, type));
  }
  if (type == kArray) return ReadArray(in, key, kv);
  if (type == kString) {
    std::string value;
    if (!in.GetString(&value, fmt::format("the value of '{}'", key))) return false;
    kv->values[key] = std::move(value);
    return true;
  }
  json value;
  kv->scalar_at[key] = {type, in.pos()};
  if (!ReadScalar(in, type, &value)) return false;
  kv->values[key] = std::move(value);
  return true;
}

// A non-negative integer from a scalar, or the largest element of an integer array; 0 otherwise.
uint64_t UintOf(const KvTable& kv, const std::string& key) {
  const auto it = kv.values.find(key);
  if (it == kv.values.end()) return 0;
  const json& v = it->second;
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) return std::max<int64_t>(0, v.get<int64_t>());
  uint64_t best = 0;
  if (v.is_array()) {
    for (const json& item : v) {
      if (item.is_number_integer() && item.get<int64_t>() > 0) {
        best = std::max(best, item.get<uint64_t>());
      }
    }
  }
  return best;
}

std::string StringOf(const KvTable& kv, const std::string& key) {
  const auto it = kv.values.find(key);
  return it != kv.values.end() && it->second.is_string() ? it->second.get<std::string>() : "";
}

struct TensorRecord {
  uint32_t n_dims = 0;
  int type = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;
  uint64_t offset = 0;
};

bool ReadTensorInfo(Cursor& in, uint64_t alignment, TensorRecord* t) {
  std::string name;
  if (!in.GetString(&name, "a tensor name", kMaxKeyBytes)) return false;
  if (in.last_length() > kMaxKeyBytes)
    return in.Corrupt("a tensor name is longer than 65535 bytes");
  if (!in.Get(&t->n_dims)) return false;
  if (t->n_dims > kMaxDims) {
    return in.Corrupt(
        fmt::format("tensor '{}' has {} dimensions (at most {})", name, t->n_dims, kMaxDims));
  }
  int64_t ne[kMaxDims] = {1, 1, 1, 1};
  for (uint32_t d = 0; d < t->n_dims; ++d) {
    if (!in.Get(&ne[d])) return false;
    if (ne[d] < 0) return in.Corrupt(fmt::format("tensor '{}' has a negative dimension", name));
  }
  int32_t type = 0;
  if (!in.Get(&type) || !in.Get(&t->offset)) return false;
  if (type < 0 || type >= GGML_TYPE_COUNT || ggml_blck_size(static_cast<ggml_type>(type)) <= 0) {
    return in.Fail(
        fmt::format("tensor '{}' has ggml type {}, unknown to pipette's llama.cpp; the file is "
                    "corrupt or needs "
                    "a newer llama.cpp",
                    name, type));
  }
  t->type = type;
  const auto gtype = static_cast<ggml_type>(type);
  const int64_t block = ggml_blck_size(gtype);
  if (ne[0] % block != 0) {
    return in.Corrupt(
        fmt::format("tensor '{}' row of {} elements is not a multiple of the {} "
                    "block size {}",
                    name, ne[0], ggml_type_name(gtype), block));
  }
  // Element count and byte size, refusing anything that overflows 63 bits.
  constexpr uint64_t kLimit = std::numeric_limits<int64_t>::max();
  uint64_t elements = 1;
  for (uint32_t d = 0; d < kMaxDims; ++d) {
    const uint64_t n = static_cast<uint64_t>(ne[d]);
    if (n != 0 && elements > kLimit / n) {
      return in.Corrupt(fmt::format("tensor '{}' has an impossible element count", name));
    }
    elements *= n;
  }
  t->elements = elements;
  const uint64_t blocks = elements / static_cast<uint64_t>(block);
  const uint64_t type_size = ggml_type_size(gtype);
  if (type_size != 0 && blocks > kLimit / type_size) {
    return in.Corrupt(fmt::format("tensor '{}' has an impossible byte size", name));
  }
  t->bytes = blocks * type_size;
  if (t->offset % alignment != 0 || t->offset > kLimit - t->bytes) {
    return in.Corrupt(fmt::format("tensor '{}' has a bad data offset {}", name, t->offset));
  }
  return true;
}

// Checks magic and version. Returns false with an error when the file is not GGUF v2/v3.
bool ReadPreamble(Cursor& in, uint64_t file_size, uint32_t* version) {
  char magic[4] = {};
  const uint64_t n = std::min<uint64_t>(4, file_size);
  if (!in.Read(magic, n)) return false;
  if (file_size == 0) return in.Fail(fmt::format("empty file, not a GGUF model; {}", kConvertHint));
  if (n < 4 || std::memcmp(magic, "GGUF", 4) != 0) {
    return in.Fail(
        fmt::format("not a GGUF file (magic '{}'); {}", Printable(magic, n), kConvertHint));
  }
  if (!in.Get(version)) return false;
  const uint32_t swapped = __builtin_bswap32(*version);
  if (swapped >= 1 && swapped <= 3) {
    return in.Fail("big-endian GGUF file, not supported; use a little-endian (standard) GGUF file");
  }
  if (*version == 1) {
    return in.Fail(
        "GGUF version 1 (from 2023) is not supported; convert the model again with a "
        "current llama.cpp");
  }
  if (*version != 2 && *version != 3) {
    return in.Fail(
        fmt::format("GGUF version {} is not supported (2 or 3 expected); the file is "
                    "corrupt or needs a newer llama.cpp",
                    *version));
  }
  return true;
}

// Fills `info` from the key-value table.
void ApplyKv(const KvTable& kv, GgufInfo* info) {
  info->architecture = StringOf(kv, "general.architecture");
  info->name = StringOf(kv, "general.name");
  if (const auto it = kv.values.find("general.file_type");
      it != kv.values.end() && it->second.is_number_integer()) {
    info->file_type = it->second.get<int>();
  }
  const std::string a = info->architecture + ".";
  info->n_ctx_train = UintOf(kv, a + "context_length");
  info->n_embd = UintOf(kv, a + "embedding_length");
  info->n_layer = UintOf(kv, a + "block_count");
  info->n_head = UintOf(kv, a + "attention.head_count");
  info->n_head_kv = kv.values.count(a + "attention.head_count_kv")
                        ? UintOf(kv, a + "attention.head_count_kv")
                        : info->n_head;
  info->n_ff = UintOf(kv, a + "feed_forward_length");
  const auto tokens = kv.array_lengths.find("tokenizer.ggml.tokens");
  info->vocab_size =
      tokens != kv.array_lengths.end() ? tokens->second : UintOf(kv, a + "vocab_size");
  const auto synthetic = kv.values.find("pipette.synthetic");
  info->synthetic = synthetic != kv.values.end() && synthetic->second.is_boolean() &&
                    synthetic->second.get<bool>();
  if (info->synthetic) {
    info->synth = json::object();
    const std::string prefix = "pipette.synth.";
    for (const auto& [key, value] : kv.values) {
      if (key.rfind(prefix, 0) == 0) info->synth[key.substr(prefix.size())] = value;
    }
  }
}

// Opens `path` for reading, with one-line errors for the common mistakes.
Result<int> OpenModel(const std::string& path, uint64_t* size, int mode = O_RDONLY) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return MakeError(path + ": no such file; check the model path");
    return MakeError(fmt::format("{}: cannot access ({})", path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    return MakeError(path + ": is a directory, not a model file; give the path of a .gguf file");
  }
  if (!S_ISREG(st.st_mode)) {
    return MakeError(path + ": not a regular file; give the path of a .gguf file");
  }
  const int fd = ::open(path.c_str(), mode | O_CLOEXEC);
  if (fd < 0) return MakeError(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

// Parses and validates the header; `kv_out` (optional) receives the key-value table.
Result<GgufInfo> ParseHeader(int fd, const std::string& path, uint64_t size,
                             KvTable* kv_out = nullptr, uint64_t readable = UINT64_MAX,
                             bool* prefix_short = nullptr) {
  GgufInfo info;
  info.path = path;
  info.file_name = std::filesystem::path(path).filename().string();
  info.size_bytes = size;
  Cursor in(fd, size, readable);
  struct Report {  // tells the caller, whatever the way out, whether the prefix was too short
    Cursor& in;
    bool* out;
    ~Report() {
      if (out != nullptr) *out = in.prefix_short();
    }
  } report{in, prefix_short};
  const auto failed = [&]() { return MakeError(path + ": " + in.error()); };
  if (!ReadPreamble(in, size, &info.version)) return failed();

  int64_t n_tensors = 0, n_kv = 0;
  if (!in.Get(&n_tensors) || !in.Get(&n_kv)) return failed();
  // A tensor record takes at least 28 bytes (name length, n_dims, type, offset), a KV pair 13.
  if (n_tensors < 0 || static_cast<uint64_t>(n_tensors) > in.remaining() / 28) {
    in.Fail(fmt::format("the header claims {} tensors, more than a file of {} can hold; {}",
                        n_tensors, HumanBytes(size), kCutOrCorruptHint));
    return failed();
  }
  if (n_kv < 0 || static_cast<uint64_t>(n_kv) > in.remaining() / 13) {
    in.Fail(fmt::format("the header claims {} key-value pairs, more than a file of {} can hold; {}",
                        n_kv, HumanBytes(size), kCutOrCorruptHint));
    return failed();
  }

  KvTable kv;
  for (int64_t i = 0; i < n_kv; ++i) {
    if (!ReadKv(in, &kv)) return failed();
  }
  uint64_t alignment = kDefaultAlignment;
  if (kv.values.count("general.alignment")) {
    alignment = UintOf(kv, "general.alignment");
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      in.Corrupt(fmt::format("general.alignment {} is not a power of two", alignment));
      return failed();
    }
  }
  ApplyKv(kv, &info);

  std::map<std::string, uint64_t> matrix_bytes;  // ggml type -> bytes of tensors with >= 2 dims
  std::map<std::string, uint64_t> all_bytes;     // ggml type -> bytes of all tensors
  uint64_t data_end = 0;                         // end of the last tensor, relative to the section
  for (int64_t i = 0; i < n_tensors; ++i) {
    TensorRecord t;
    if (!ReadTensorInfo(in, alignment, &t)) return failed();
    const std::string type_name = ggml_type_name(static_cast<ggml_type>(t.type));
    info.tensor_types[type_name] += 1;
    info.params += t.elements;
    info.tensor_bytes += t.bytes;
    all_bytes[type_name] += t.bytes;
    if (t.n_dims >= 2) matrix_bytes[type_name] += t.bytes;
    data_end = std::max(data_end, t.offset + t.bytes);
  }
  const uint64_t data_start = (in.pos() + alignment - 1) / alignment * alignment;
  const uint64_t needed = n_tensors > 0 ? data_start + data_end : in.pos();
  if (needed > size) {
    return MakeError(fmt::format(
        "{}: file is truncated ({} of {} needed for tensor data); the download or copy is "
        "incomplete",
        path, HumanBytes(size), HumanBytes(needed)));
  }

  if (info.file_type >= 0) {
    info.quant = FtypeName(info.file_type);
  } else {
    info.quant_inferred = true;
    const auto& by_bytes = matrix_bytes.empty() ? all_bytes : matrix_bytes;
    const auto top =
        std::max_element(by_bytes.begin(), by_bytes.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top != by_bytes.end()) info.quant = QuantNameOfTensorType(top->first);
  }
  if (kv_out != nullptr) *kv_out = std::move(kv);
  return info;
}

}  // namespace

Result<GgufInfo> ReadGgufInfo(const std::string& path) {
  uint64_t size = 0;
  Result<int> fd = OpenModel(path, &size);
  if (!fd.ok()) return fd.error();
  Result<GgufInfo> info = ParseHeader(*fd, path, size);
  ::close(*fd);
  return info;
}

Result<GgufInfo> ReadGgufInfoFromPrefix(const std::string& prefix_path, const std::string& path,
                                        uint64_t file_size, bool* prefix_short) {
  uint64_t readable = 0;
  Result<int> fd = OpenModel(prefix_path, &readable);
  if (!fd.ok()) return fd.error();
  bool short_copy = false;
  Result<GgufInfo> info = ParseHeader(*fd, path, file_size, nullptr, readable, &short_copy);
  ::close(*fd);
  if (prefix_short != nullptr) *prefix_short = short_copy;
  return info;
}

Status PatchGgufU32(const std::string& path, const std::string& key, uint32_t value) {
  uint64_t size = 0;
  Result<int> fd = OpenModel(path, &size, O_RDWR);
  if (!fd.ok()) return fd.error();
  KvTable kv;
  Result<GgufInfo> info = ParseHeader(*fd, path, size, &kv);
  Status status;
  const auto it = kv.scalar_at.find(key);
  if (!info.ok()) {
    status = info.error();
  } else if (it == kv.scalar_at.end() || it->second.first != kU32) {
    status = MakeError(fmt::format("{}: has no uint32 key '{}' to set", path, key));
  } else if (::pwrite(*fd, &value, sizeof(value), static_cast<off_t>(it->second.second)) !=
                 static_cast<ssize_t>(sizeof(value)) ||
             ::fsync(*fd) != 0) {
    status = MakeError(fmt::format("{}: cannot write ({})", path, std::strerror(errno)));
  }
  ::close(*fd);
  return status;
}

json ToJson(const GgufInfo& info) {
  json tensor_types = json::object();
  for (const auto& [type, count] : info.tensor_types) tensor_types[type] = count;
  return json{
      {"path", info.path},
      {"file_name", info.file_name},
      {"size_bytes", info.size_bytes},
      {"gguf_version", info.version},
      {"architecture", info.architecture},
      {"name", info.name},
      {"params", info.params},
      {"quant", info.quant},
      {"quant_inferred", info.quant_inferred},
      {"file_type", info.file_type},
      {"tensor_types", tensor_types},
      {"tensor_bytes", info.tensor_bytes},
      {"n_ctx_train", info.n_ctx_train},
      {"vocab_size", info.vocab_size},
      {"n_embd", info.n_embd},
      {"n_layer", info.n_layer},
      {"n_head", info.n_head},
      {"n_head_kv", info.n_head_kv},
      {"n_ff", info.n_ff},
      {"synthetic", info.synthetic},
      {"synth", info.synth},
  };
}

}  // namespace pipette
