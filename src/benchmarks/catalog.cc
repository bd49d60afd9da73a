// The benchmark catalog: built-in ladder, user TOML directories, and lookup by id.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "benchmarks/description.h"
#include "pipette/benchmark.h"

namespace pipette {
namespace {

// The standard ladder of prompt sizes (DESIGN.md 4.1), and the fixed D of each kind.
constexpr int kLadder[] = {100, 256, 512, 1024, 2048, 4096, 8192};
constexpr int kDecodeTokens = 100;
constexpr int kEndToEndTokens = 256;

BenchmarkSpec BuiltInSpec(BenchmarkType type, int prefill_tokens, int decode_tokens) {
  BenchmarkSpec spec;
  spec.type = type;
  spec.prefill_tokens = prefill_tokens;
  spec.decode_tokens = decode_tokens;
  spec.id = std::string(CatalogTypeName(type)).append("_").append(std::to_string(prefill_tokens));
  if (decode_tokens > 0) spec.id.append("_").append(std::to_string(decode_tokens));
  spec.description = DefaultDescription(spec);
  spec.source = "built-in";
  return spec;
}

std::string Getenv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

BenchmarkCatalog BenchmarkCatalog::BuiltIn() {
  BenchmarkCatalog catalog;
  const struct {
    BenchmarkType type;
    int decode_tokens;
  } kinds[] = {{BenchmarkType::kPrefill, 0},
               {BenchmarkType::kDecode, kDecodeTokens},
               {BenchmarkType::kEndToEnd, kEndToEndTokens},
               {BenchmarkType::kMemory, 0}};
  for (const auto& kind : kinds) {
    for (int p : kLadder) catalog.specs_.push_back(BuiltInSpec(kind.type, p, kind.decode_tokens));
  }
  return catalog;
}

Status BenchmarkCatalog::AddDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return MakeError("benchmark directory '" + dir + "' does not exist or is not a directory");
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".toml" && it->is_regular_file(ec)) files.push_back(it->path());
  }
  if (ec) return MakeError("cannot list benchmark directory '" + dir + "': " + ec.message());
  std::sort(files.begin(), files.end());

  BenchmarkCatalog updated = *this;  // all or nothing
  for (const fs::path& file : files) {
    Result<BenchmarkSpec> spec = ParseBenchmarkToml(file.string());
    if (!spec.ok()) return spec.error();
    if (Status added = updated.Add(std::move(spec).value()); !added.ok()) {
      return added.error().Wrap(file.string());
    }
  }
  *this = std::move(updated);
  return Status::Ok();
}

Status BenchmarkCatalog::Add(BenchmarkSpec spec) {
  if (Status valid = Validate(spec); !valid.ok()) return valid.error();
  if (const BenchmarkSpec* existing = Lookup(spec.id)) {
    if (SameParameters(*existing, spec)) return Status::Ok();
    return MakeError("benchmark '" + spec.id + "' is already defined by " + existing->source +
                     " with different parameters");
  }
  if (spec.description.empty()) spec.description = DefaultDescription(spec);
  specs_.push_back(std::move(spec));
  return Status::Ok();
}

Result<BenchmarkSpec> BenchmarkCatalog::Find(std::string_view id) const {
  if (const BenchmarkSpec* spec = Lookup(id)) return *spec;
  return ParseBenchmarkId(id);
}

const BenchmarkSpec* BenchmarkCatalog::Lookup(std::string_view id) const {
  const auto it = std::find_if(specs_.begin(), specs_.end(),
                               [&](const BenchmarkSpec& spec) { return spec.id == id; });
  return it == specs_.end() ? nullptr : &*it;
}

std::string DefaultUserBenchmarkDir() {
  if (std::string dir = Getenv("PIPETTE_BENCHMARKS_DIR"); !dir.empty()) return dir;
  if (std::string config = Getenv("XDG_CONFIG_HOME"); !config.empty()) {
    return config + "/pipette/benchmarks";
  }
  if (std::string home = Getenv("HOME"); !home.empty()) return home + "/.config/pipette/benchmarks";
  return {};
}

}  // namespace pipette
