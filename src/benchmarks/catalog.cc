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
  // The published quality evals (DESIGN.md 7, ../shared/docs/evals.md): their data comes from
  // the user's files; the fingerprints say which files the protocol means.
  const struct {
    const char* name;
    const char* description;
  } evals[] = {
      {"math_500",
       "MATH-500 (HuggingFaceH4/MATH-500 test split, 500 problems): the model solves step by step "
       "and boxes its answer, scored by pipette-math/3; data set fingerprint 03d8a41616e2b3f5...; "
       "5 attempts per problem at temperature 0.6, at most 8192 new tokens"},
      {"gpqa_diamond",
       "GPQA Diamond (Idavidrein/gpqa, 198 questions): four options in the protocol's shuffled "
       "order, the answer on an 'Answer: X' line, scored by pipette-gpqa/1; data set fingerprint "
       "60d4d93801f979b3...; 5 attempts per question at temperature 0.6, at most 8192 new tokens"},
  };
  for (const auto& e : evals) {
    BenchmarkSpec spec;
    spec.type = BenchmarkType::kEval;
    spec.eval_name = e.name;
    spec.eval_version = "2026.06.1";
    spec.id = "eval_" + spec.eval_name + "_" + spec.eval_version;
    spec.max_tokens = 8192;
    spec.description = e.description;
    spec.source = "built-in";
    catalog.specs_.push_back(std::move(spec));
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
