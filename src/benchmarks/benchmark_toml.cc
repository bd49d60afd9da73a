// Benchmark definitions in TOML files (one per benchmark, file stem = id); see docs/benchmarks.md.
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "benchmarks/description.h"
#include "pipette/benchmark.h"

namespace pipette {
namespace {

// The parameter fields each type requires, by their TOML names.
std::vector<std::string_view> RequiredFields(BenchmarkType type) {
  switch (type) {
    case BenchmarkType::kPrefill:
    case BenchmarkType::kMemory:
    case BenchmarkType::kKlDivergence:
      return {"parameter_prefill_tokens"};
    case BenchmarkType::kDecode:
    case BenchmarkType::kEndToEnd:
      return {"parameter_prefill_tokens", "parameter_decode_tokens"};
    case BenchmarkType::kSoak:
      return {"parameter_prefill_tokens", "parameter_decode_tokens", "parameter_minutes"};
    case BenchmarkType::kEval:
      return {"parameter_eval_id", "parameter_dataset_name", "parameter_max_tokens"};
  }
  return {};
}

// Fields a type may give but need not: a soak's parameter_varied (default false).
std::vector<std::string_view> OptionalFields(BenchmarkType type) {
  if (type == BenchmarkType::kSoak) return {"parameter_varied"};
  return {};
}

bool IsStringField(std::string_view field) {
  return field == "parameter_eval_id" || field == "parameter_dataset_name";
}

std::string Join(const std::vector<std::string_view>& items) {
  std::string out;
  for (std::string_view item : items) out += (out.empty() ? "" : ", ") + std::string(item);
  return out;
}

Result<std::string> ReadString(const toml::table& table, std::string_view field) {
  const toml::node* node = table.get(field);
  if (node == nullptr) return MakeError("missing field '" + std::string(field) + "'");
  if (!node->is_string()) return MakeError("field '" + std::string(field) + "' must be a string");
  return node->as_string()->get();
}

Result<int> ReadInt(const toml::table& table, std::string_view field) {
  const toml::node* node = table.get(field);
  if (node == nullptr) return MakeError("missing field '" + std::string(field) + "'");
  if (!node->is_integer()) {
    return MakeError("field '" + std::string(field) + "' must be an integer");
  }
  const int64_t value = node->as_integer()->get();
  if (value < -kMaxShapeTokens || value > kMaxShapeTokens) {
    return MakeError("field '" + std::string(field) + "' = " + std::to_string(value) +
                     " is out of range");
  }
  return static_cast<int>(value);
}

// Fills the parameters of `spec` (whose type is set) from `table`.
Status ReadParameters(const toml::table& table, BenchmarkSpec& spec) {
  for (std::string_view field : RequiredFields(spec.type)) {
    if (IsStringField(field)) {
      Result<std::string> value = ReadString(table, field);
      if (!value.ok()) return value.error();
      (field == "parameter_eval_id" ? spec.eval_name : spec.eval_version) = *value;
      continue;
    }
    Result<int> value = ReadInt(table, field);
    if (!value.ok()) return value.error();
    if (field == "parameter_prefill_tokens") spec.prefill_tokens = *value;
    if (field == "parameter_decode_tokens") spec.decode_tokens = *value;
    if (field == "parameter_minutes") spec.minutes = *value;
    if (field == "parameter_max_tokens") spec.max_tokens = *value;
  }
  if (spec.type == BenchmarkType::kSoak && table.contains("parameter_varied")) {
    const auto* varied = table.get("parameter_varied")->as_boolean();
    if (varied == nullptr) return MakeError("field 'parameter_varied' must be true or false");
    spec.varied = varied->get();
  }
  return Status::Ok();
}

// Rejects keys that are neither common nor required by the type (typos, wrong type's fields).
Status CheckKnownFields(const toml::table& table, BenchmarkType type) {
  std::vector<std::string_view> allowed = {"benchmark_type", "benchmark_id", "description"};
  for (std::string_view field : RequiredFields(type)) allowed.push_back(field);
  for (std::string_view field : OptionalFields(type)) allowed.push_back(field);
  for (const auto& [key, value] : table) {
    if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) {
      return MakeError("field '" + std::string(key.str()) + "' does not apply to benchmark_type '" +
                       std::string(CatalogTypeName(type)) + "' (allowed: " + Join(allowed) + ")");
    }
  }
  return Status::Ok();
}

Result<BenchmarkSpec> SpecFromTable(const toml::table& table, const std::string& stem) {
  Result<std::string> type_name = ReadString(table, "benchmark_type");
  if (!type_name.ok()) return type_name.error();
  // Only the catalog names are accepted in files, not the short names.
  const std::optional<BenchmarkType> type = ParseTypeName(*type_name);
  if (!type || CatalogTypeName(*type) != *type_name) {
    return MakeError("unknown benchmark_type '" + *type_name +
                     "' (known: prefill_throughput, decode_throughput, end_to_end_latency, "
                     "max_memory_usage, eval, soak, kl_divergence)");
  }
  if (Status known = CheckKnownFields(table, *type); !known.ok()) return known.error();
  BenchmarkSpec spec;
  spec.id = stem;
  spec.type = *type;
  if (Status read = ReadParameters(table, spec); !read.ok()) return read.error();
  if (table.contains("benchmark_id")) {
    Result<std::string> id = ReadString(table, "benchmark_id");
    if (!id.ok()) return id.error();
    if (*id != stem) {
      return MakeError("benchmark_id '" + *id + "' contradicts the file name (id '" + stem + "')");
    }
  }
  if (table.contains("description")) {
    Result<std::string> description = ReadString(table, "description");
    if (!description.ok()) return description.error();
    spec.description = *description;
  }
  if (Status valid = Validate(spec); !valid.ok()) return valid.error();
  if (spec.description.empty()) spec.description = DefaultDescription(spec);
  return spec;
}

}  // namespace

Result<BenchmarkSpec> ParseBenchmarkToml(const std::string& path) {
  const std::string stem = std::filesystem::path(path).stem().string();
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const toml::source_position where = e.source().begin;
    if (where.line == 0) return MakeError(path + ": " + std::string(e.description()));
    return MakeError(path + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) +
                     ": " + std::string(e.description()));
  }
  Result<BenchmarkSpec> spec = SpecFromTable(table, stem);
  if (!spec.ok()) return spec.error().Wrap(path);
  spec->source = path;
  return spec;
}

}  // namespace pipette
