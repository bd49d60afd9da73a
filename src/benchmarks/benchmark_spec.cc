// Type names, comparison, descriptions and JSON of benchmark definitions.
#include <algorithm>
#include <array>

#include "benchmarks/description.h"
#include "pipette/benchmark.h"

namespace pipette {
namespace {

struct TypeNames {
  BenchmarkType type;
  std::string_view short_name;
  std::string_view catalog_name;
};

constexpr std::array<TypeNames, 7> kTypeNames = {{
    {BenchmarkType::kPrefill, "prefill", "prefill_throughput"},
    {BenchmarkType::kDecode, "decode", "decode_throughput"},
    {BenchmarkType::kEndToEnd, "e2e", "end_to_end_latency"},
    {BenchmarkType::kMemory, "memory", "max_memory_usage"},
    {BenchmarkType::kEval, "eval", "eval"},
    {BenchmarkType::kSoak, "soak", "soak"},
    {BenchmarkType::kKlDivergence, "kl_divergence", "kl_divergence"},
}};

const TypeNames& NamesOf(BenchmarkType type) {
  for (const TypeNames& names : kTypeNames) {
    if (names.type == type) return names;
  }
  return kTypeNames[0];  // unreachable for valid enum values
}

}  // namespace

std::string_view TypeName(BenchmarkType type) { return NamesOf(type).short_name; }

std::string_view CatalogTypeName(BenchmarkType type) { return NamesOf(type).catalog_name; }

std::optional<BenchmarkType> ParseTypeName(std::string_view name) {
  for (const TypeNames& names : kTypeNames) {
    if (name == names.short_name || name == names.catalog_name) return names.type;
  }
  return std::nullopt;
}

std::vector<SoakShape> SoakShapes(const BenchmarkSpec& spec) {
  const int p = spec.prefill_tokens, d = spec.decode_tokens;
  if (!spec.varied) return {{p, d}};
  // Fractions of (P, D) in eighths: the longest first, then long and short alternating, so that
  // every stretch of the run sees both and a full cycle is six requests.
  static constexpr std::array<std::array<int, 2>, 6> kEighths = {
      {{8, 8}, {1, 4}, {8, 1}, {2, 8}, {4, 2}, {1, 1}}};
  const auto part = [](int n, int eighths, int least) {
    return std::max(std::min(least, n), (n * eighths + 4) / 8);  // nearest, halves up
  };
  std::vector<SoakShape> shapes;
  for (const auto& [pe, de] : kEighths) shapes.push_back({part(p, pe, 1), part(d, de, 2)});
  return shapes;
}

bool SameParameters(const BenchmarkSpec& a, const BenchmarkSpec& b) {
  return a.type == b.type && a.prefill_tokens == b.prefill_tokens &&
         a.decode_tokens == b.decode_tokens && a.minutes == b.minutes && a.varied == b.varied &&
         a.eval_name == b.eval_name && a.eval_version == b.eval_version &&
         a.max_tokens == b.max_tokens;
}

std::string DefaultDescription(const BenchmarkSpec& spec) {
  const std::string p = std::to_string(spec.prefill_tokens);
  const std::string d = std::to_string(spec.decode_tokens);
  switch (spec.type) {
    case BenchmarkType::kPrefill:
      return "Prefill " + p + " prompt tokens from an empty KV cache";
    case BenchmarkType::kDecode:
      return "Generate " + d + " tokens after a " + p + "-token context";
    case BenchmarkType::kEndToEnd:
      return "End-to-end request: " + p + " prompt tokens, " + d + " generated tokens";
    case BenchmarkType::kMemory:
      return "Peak memory of a fresh runtime process that loads the model, prefills " + p +
             " tokens and decodes 1 token";
    case BenchmarkType::kEval:
      return "Eval " + spec.eval_name + " on data set " + spec.eval_version;
    case BenchmarkType::kSoak:
      if (spec.varied) {
        return "Cycle end-to-end requests through " + std::to_string(SoakShapes(spec).size()) +
               " prompt/output shapes up to " + p + "/" + d + " for " +
               std::to_string(spec.minutes) + " minutes";
      }
      return "Repeat a " + p + "/" + d + " end-to-end request for " + std::to_string(spec.minutes) +
             " minutes";
    case BenchmarkType::kKlDivergence:
      return "KL divergence against the reference model over " + p + "-token windows";
  }
  return {};
}

nlohmann::json ToJson(const BenchmarkSpec& spec) {
  nlohmann::json j = {
      {"id", spec.id},
      {"type", std::string(TypeName(spec.type))},
      {"prefill_tokens", spec.prefill_tokens},
      {"decode_tokens", spec.decode_tokens},
      {"methodology", std::string(kMethodology)},
  };
  if (spec.minutes > 0) j["minutes"] = spec.minutes;
  if (spec.varied) j["varied"] = true;
  if (!spec.eval_name.empty()) j["eval_name"] = spec.eval_name;
  if (!spec.eval_version.empty()) j["eval_version"] = spec.eval_version;
  if (spec.max_tokens > 0) j["max_tokens"] = spec.max_tokens;
  if (!spec.description.empty()) j["description"] = spec.description;
  return j;
}

std::string_view HeadlineMetric(BenchmarkType type) {
  switch (type) {
    case BenchmarkType::kPrefill: return "prefill_throughput";
    case BenchmarkType::kDecode: return "decode_throughput";
    case BenchmarkType::kEndToEnd: return "end_to_end_latency";
    case BenchmarkType::kMemory: return "max_host_usage";
    case BenchmarkType::kSoak: return "end_to_end_latency";
    case BenchmarkType::kKlDivergence: return "kl_divergence";
    case BenchmarkType::kEval: return "accuracy";
    default: return "";
  }
}

}  // namespace pipette
