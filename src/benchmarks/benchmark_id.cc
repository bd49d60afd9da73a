// Benchmark ids: parsing an id into a definition, and checking a definition against its id.
#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <vector>

#include "benchmarks/description.h"
#include "pipette/benchmark.h"

namespace pipette {
namespace {

// One id shape: the prefix, then `names.size()` '_'-separated numbers (none for evals).
struct IdPattern {
  std::string_view prefix;
  BenchmarkType type;
  std::vector<std::string_view> names;  // what each number is, for messages
  std::string_view shape;
  bool varied = false;  // soak_varied_: requests of varied shapes (SoakShapes)
};

// A varied soak's shortest shapes are P/8 and D/8: below 8 they would not differ.
constexpr int kMinVariedSoakTokens = 8;

// The first pattern whose prefix an id starts with names it: soak_varied_ before soak_.
const std::array<IdPattern, 8>& Patterns() {
  static const std::array<IdPattern, 8> patterns = {{
      {"prefill_throughput_", BenchmarkType::kPrefill, {"P"}, "prefill_throughput_<P>"},
      {"decode_throughput_", BenchmarkType::kDecode, {"P", "D"}, "decode_throughput_<P>_<D>"},
      {"end_to_end_latency_", BenchmarkType::kEndToEnd, {"P", "D"}, "end_to_end_latency_<P>_<D>"},
      {"max_memory_usage_", BenchmarkType::kMemory, {"P"}, "max_memory_usage_<P>"},
      {"eval_", BenchmarkType::kEval, {}, "eval_<name>_<version>"},
      {"soak_varied_", BenchmarkType::kSoak, {"P", "D", "minutes"},
       "soak_varied_<P>_<D>_<minutes>", true},
      {"soak_", BenchmarkType::kSoak, {"P", "D", "minutes"}, "soak_<P>_<D>_<minutes>"},
      {"kl_divergence_", BenchmarkType::kKlDivergence, {"ctx"}, "kl_divergence_<ctx>"},
  }};
  return patterns;
}

const IdPattern* PatternOf(std::string_view id) {
  for (const IdPattern& pattern : Patterns()) {
    if (id.starts_with(pattern.prefix)) return &pattern;
  }
  return nullptr;
}

Error UnknownId(std::string_view id, const std::string& reason) {
  return MakeError("unknown benchmark id '" + std::string(id) + "': " + reason +
                   "; `pipette benchmarks list` shows the catalog");
}

// 'text', built with append (GCC 12 gives a false -Wrestrict for "'" + std::string).
std::string Quoted(std::string_view text) { return std::string("'").append(text).append("'"); }

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// A count in [1, max] written in canonical decimal. On error returns the reason.
Result<int> ParseCount(std::string_view text, std::string_view name, int max) {
  const std::string quoted = Quoted(text);
  if (text.empty()) return MakeError(std::string(name) + " is empty");
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return MakeError(std::string(name) + " = " + quoted + " is not a number");
  }
  if (text.size() > 1 && text[0] == '0') {
    return MakeError(std::string(name) + " = " + quoted + " has a leading zero");
  }
  long long value = 0;
  if (text.size() > 10 ||
      std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc()) {
    value = static_cast<long long>(max) + 1;
  }
  if (value < 1) return MakeError(std::string(name) + " must be at least 1");
  if (value > max) {
    return MakeError(std::string(name) + " = " + std::string(text) + " exceeds " +
                     std::to_string(max));
  }
  return static_cast<int>(value);
}

// Eval names and versions: letters, digits, '.', '-', '_'.
bool IsEvalToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
  });
}

Result<BenchmarkSpec> ParseEvalId(std::string_view id, std::string_view rest) {
  const size_t cut = rest.rfind('_');
  if (cut == std::string_view::npos || cut == 0 || cut + 1 == rest.size()) {
    return UnknownId(id, "eval ids have the form eval_<name>_<version>");
  }
  BenchmarkSpec spec;
  spec.type = BenchmarkType::kEval;
  spec.eval_name = std::string(rest.substr(0, cut));
  spec.eval_version = std::string(rest.substr(cut + 1));
  if (!IsEvalToken(spec.eval_name) || !IsEvalToken(spec.eval_version)) {
    return UnknownId(id, "eval names and versions use only letters, digits, '.', '-' and '_'");
  }
  return spec;
}

Result<BenchmarkSpec> ParseNumberedId(std::string_view id, const IdPattern& pattern) {
  const std::vector<std::string_view> parts = Split(id.substr(pattern.prefix.size()), '_');
  if (parts.size() != pattern.names.size()) {
    return UnknownId(id, std::string(pattern.shape) + " needs " +
                             std::to_string(pattern.names.size()) + " number(s) after '" +
                             std::string(pattern.prefix) + "', got " +
                             std::to_string(parts.size()));
  }
  std::vector<int> values;
  for (size_t i = 0; i < parts.size(); ++i) {
    const int max = pattern.names[i] == "minutes" ? kMaxSoakMinutes : kMaxShapeTokens;
    Result<int> value = ParseCount(parts[i], pattern.names[i], max);
    if (!value.ok()) return UnknownId(id, value.error().message);
    values.push_back(*value);
  }
  BenchmarkSpec spec;
  spec.type = pattern.type;
  spec.prefill_tokens = values[0];
  if (values.size() > 1) spec.decode_tokens = values[1];
  if (values.size() > 2) spec.minutes = values[2];
  spec.varied = pattern.varied;
  if (spec.varied && std::min(spec.prefill_tokens, spec.decode_tokens) < kMinVariedSoakTokens) {
    return UnknownId(id, "a varied soak needs P and D of at least " +
                             std::to_string(kMinVariedSoakTokens) +
                             " (its shapes span P/8..P and D/8..D); use soak_<P>_<D>_<minutes> "
                             "for one shape");
  }
  return spec;
}

// "<field> = <value> contradicts id '<id>' (<expected>)"
Error Contradiction(std::string_view field, const std::string& value, std::string_view id,
                    const std::string& expected) {
  return MakeError(std::string(field) + " = " + value + " contradicts id " + Quoted(id) + " (" +
                   expected + ")");
}

Status ValidateEval(const BenchmarkSpec& spec) {
  if (spec.prefill_tokens != 0 || spec.decode_tokens != 0 || spec.minutes != 0) {
    return MakeError(
        "parameter_prefill_tokens, parameter_decode_tokens and parameter_minutes "
        "do not apply to benchmark_type 'eval'");
  }
  if (!IsEvalToken(spec.eval_name)) {
    return MakeError("parameter_eval_id " + Quoted(spec.eval_name) +
                     " must be non-empty letters, digits, '.', '-' or '_'");
  }
  if (!IsEvalToken(spec.eval_version)) {
    return MakeError("parameter_dataset_name " + Quoted(spec.eval_version) +
                     " must be non-empty letters, digits, '.', '-' or '_'");
  }
  if (spec.max_tokens < 0 || spec.max_tokens > kMaxShapeTokens) {
    return MakeError("parameter_max_tokens = " + std::to_string(spec.max_tokens) +
                     " is outside [0, " + std::to_string(kMaxShapeTokens) + "]");
  }
  const std::string name_prefix = "eval_" + spec.eval_name + "_";
  if (!spec.id.starts_with(name_prefix)) {
    return Contradiction("parameter_eval_id", Quoted(spec.eval_name), spec.id,
                         "expected an id starting with " + Quoted(name_prefix));
  }
  if (spec.id != name_prefix + spec.eval_version) {
    return Contradiction("parameter_dataset_name", Quoted(spec.eval_version), spec.id,
                         Quoted(std::string_view(spec.id).substr(name_prefix.size())));
  }
  return Status::Ok();
}

}  // namespace

Result<BenchmarkSpec> ParseBenchmarkId(std::string_view id) {
  const IdPattern* pattern = PatternOf(id);
  if (pattern == nullptr) {
    return UnknownId(id,
                     "it starts with none of prefill_throughput_, decode_throughput_, "
                     "end_to_end_latency_, max_memory_usage_, eval_, soak_, kl_divergence_");
  }
  Result<BenchmarkSpec> spec = pattern->type == BenchmarkType::kEval
                                   ? ParseEvalId(id, id.substr(pattern->prefix.size()))
                                   : ParseNumberedId(id, *pattern);
  if (!spec.ok()) return spec;
  spec->id = std::string(id);
  spec->description = DefaultDescription(*spec);
  spec->source = "pattern";
  return spec;
}

Status Validate(const BenchmarkSpec& spec) {
  const IdPattern* pattern = PatternOf(spec.id);
  if (pattern != nullptr && pattern->type != spec.type) {
    return MakeError("benchmark_type " + Quoted(CatalogTypeName(spec.type)) + " contradicts id " +
                     Quoted(spec.id) + " (a " + std::string(CatalogTypeName(pattern->type)) +
                     " id)");
  }
  if (spec.varied && spec.type != BenchmarkType::kSoak) {
    return MakeError("parameter_varied applies only to benchmark_type 'soak'");
  }
  if (spec.type == BenchmarkType::kEval) return ValidateEval(spec);
  if (!spec.eval_name.empty() || !spec.eval_version.empty() || spec.max_tokens != 0) {
    return MakeError(
        "parameter_eval_id, parameter_dataset_name and parameter_max_tokens apply "
        "only to benchmark_type 'eval'");
  }
  Result<BenchmarkSpec> from_id = ParseBenchmarkId(spec.id);
  if (!from_id.ok()) return from_id.error();
  struct Field {
    std::string_view name;
    int value;
    int expected;
  };
  for (const Field& field :
       {Field{"parameter_prefill_tokens", spec.prefill_tokens, from_id->prefill_tokens},
        Field{"parameter_decode_tokens", spec.decode_tokens, from_id->decode_tokens},
        Field{"parameter_minutes", spec.minutes, from_id->minutes}}) {
    if (field.value == field.expected) continue;
    if (field.expected == 0) {
      return MakeError(std::string(field.name) + " does not apply to benchmark_type " +
                       Quoted(CatalogTypeName(spec.type)));
    }
    return Contradiction(field.name, std::to_string(field.value), spec.id,
                         std::to_string(field.expected));
  }
  if (spec.varied != from_id->varied) {
    return Contradiction("parameter_varied", spec.varied ? "true" : "false", spec.id,
                         spec.varied ? "false: only soak_varied_ ids are varied"
                                     : "true: a soak_varied_ id");
  }
  return Status::Ok();
}

}  // namespace pipette
