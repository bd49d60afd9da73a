// What a benchmark is: the catalog of benchmark definitions (DESIGN.md 4.1).
//
// A benchmark is named by an id that encodes its parameters, following the public Pipette catalog
// so that results are comparable with its published data:
//
//   prefill_throughput_<P>          prefill   P prompt tokens
//   decode_throughput_<P>_<D>       decode    D tokens generated after a P-token context
//   end_to_end_latency_<P>_<D>      e2e       P prompt tokens, D generated, timed from the request
//   max_memory_usage_<P>            memory    peak memory of load + prefill P + decode 1
//   eval_<name>_<version>           eval      eval `name` on data set `version` (section 7)
//   soak_<P>_<D>_<minutes>          soak      an e2e P/D request repeated for `minutes` (ours)
//   soak_varied_<P>_<D>_<minutes>   soak      e2e requests cycling through SoakShapes, the longest
//                                             P/D, for `minutes` (ours; P and D at least 8)
//   kl_divergence_<ctx>             kl        KL divergence against a reference, ctx-token windows
//
// P, D and ctx are token counts in [1, kMaxShapeTokens]; minutes is in [1, kMaxSoakMinutes].
// Numbers are written in decimal without leading zeros, so an id names exactly one shape.
//
// Definitions come from three places, looked up in this order by BenchmarkCatalog::Find:
//   1. the built-in catalog, generated from the standard ladder (BuiltIn());
//   2. TOML files, one per benchmark, file stem = id (ParseBenchmarkToml, AddDirectory; the format
//      is described in docs/benchmarks.md);
//   3. any other well-formed id, parsed by ParseBenchmarkId (e.g. the smoke shape
//      prefill_throughput_8).
// A definition whose id contradicts its parameters is rejected everywhere.
//
// Nothing here measures or prints; every function is safe to call from several threads on
// distinct objects. Errors are returned as values (pipette/status.h), never thrown.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipette/status.h"

namespace pipette {

// The methodology every benchmark of this version is measured with (DESIGN.md 4).
inline constexpr std::string_view kMethodology = "pipette-method/1";
// Largest P, D or ctx an id may name, in tokens.
inline constexpr int kMaxShapeTokens = 1048576;
// Longest soak, in minutes (one week).
inline constexpr int kMaxSoakMinutes = 10080;

enum class BenchmarkType { kPrefill, kDecode, kEndToEnd, kMemory, kEval, kSoak, kKlDivergence };

// Short name used in result records and tables: "prefill", "decode", "e2e", "memory", "eval",
// "soak", "kl_divergence".
std::string_view TypeName(BenchmarkType type);

// The TOML `benchmark_type` value of the public catalog: "prefill_throughput",
// "decode_throughput", "end_to_end_latency", "max_memory_usage", "eval", "soak",
// "kl_divergence".
std::string_view CatalogTypeName(BenchmarkType type);

// Accepts either the short or the catalog name. nullopt for anything else.
std::optional<BenchmarkType> ParseTypeName(std::string_view name);

// The metric a benchmark type is ranked and listed by, whose 95% CI drives adaptive repetitions
// (DESIGN.md 4.2 step 5; names from 4.3): prefill -> "prefill_throughput", decode ->
// "decode_throughput", e2e and soak -> "end_to_end_latency", memory -> "max_host_usage",
// kl_divergence -> "kl_divergence", eval -> "accuracy" (pass@1; no adaptive repetitions).
std::string_view HeadlineMetric(BenchmarkType type);

// One benchmark definition. Fields that do not apply to `type` are 0 or empty.
struct BenchmarkSpec {
  std::string id;  // e.g. "decode_throughput_512_100"
  BenchmarkType type = BenchmarkType::kPrefill;
  int prefill_tokens = 0;    // P (prefill, decode, e2e, memory, soak); ctx for kl_divergence
  int decode_tokens = 0;     // D (decode, e2e, soak)
  int minutes = 0;           // soak duration
  bool varied = false;       // soak: requests cycle through varied shapes (soak_varied_ ids)
  std::string eval_name;     // eval: the eval id, e.g. "math_500"
  std::string eval_version;  // eval: the data set version, e.g. "2026.06.1"
  int max_tokens = 0;        // eval: completion budget per sample; 0 = the eval's default
  std::string description;   // one line for people; generated when a definition has none
  std::string source;        // "built-in", "pattern" or the path of the TOML file
};

// One request shape of a soak: prompt tokens and tokens generated.
struct SoakShape {
  int prompt_tokens = 0;
  int decode_tokens = 0;
};

// The request shapes a soak cycles through, in order; REQUIRES: spec is a valid soak. A plain soak
// has the one shape (P, D). A varied soak has six, spanning P/8..P prompt and D/8..D generated
// tokens (rounded to the nearest, at least 1 prompt and 2 generated tokens), long and short
// alternating and the longest first:
//   (P, D), (P/8, D/2), (P, D/8), (P/4, D), (P/2, D/4), (P/8, D/8).
std::vector<SoakShape> SoakShapes(const BenchmarkSpec& spec);

// True when a and b define the same measurement (type and parameters; id, description and source
// are not compared).
bool SameParameters(const BenchmarkSpec& a, const BenchmarkSpec& b);

// Checks that spec.id is well formed and agrees with the parameters, that the parameters are in
// range and that fields which do not apply to the type are unset. The error names the offending
// field by its TOML name, e.g. "parameter_prefill_tokens = 512 contradicts id
// 'prefill_throughput_256' (256)".
Status Validate(const BenchmarkSpec& spec);

// Builds the definition that a well-formed id names (source "pattern", generated description).
// For eval ids the version is the text after the last '_' ("eval_math_500_2026.06.1" is eval
// "math_500", version "2026.06.1"); an eval whose version contains '_' needs a TOML definition.
// Error: "unknown benchmark id 'X': <reason>; `pipette benchmarks list` shows the catalog".
Result<BenchmarkSpec> ParseBenchmarkId(std::string_view id);

// Reads one TOML definition; its id is the file stem. Fields: benchmark_type (required; the
// catalog names above), parameter_prefill_tokens, parameter_decode_tokens, parameter_minutes,
// parameter_eval_id, parameter_dataset_name, parameter_max_tokens (those its type needs, all
// required), and optionally description, benchmark_id (which must equal the stem) and, for a
// soak, parameter_varied (a boolean, default false; true exactly for soak_varied_ ids). A missing
// field, a field that does not apply to the type, a wrong value type, an unknown benchmark_type
// or an id that contradicts the parameters is an error; every message starts with the path.
Result<BenchmarkSpec> ParseBenchmarkToml(const std::string& path);

// A set of definitions with unique ids, in the order they were added.
class BenchmarkCatalog {
 public:
  // Empty catalog.
  BenchmarkCatalog() = default;

  // The standard ladder and the published evals, 30 definitions (source "built-in"): for P in
  // {100, 256, 512, 1024, 2048, 4096, 8192}: prefill_throughput_P, decode_throughput_P_100,
  // end_to_end_latency_P_256, max_memory_usage_P, listed by type, then by P; then
  // eval_math_500_2026.06.1 and eval_gpqa_diamond_2026.06.1 (max_tokens 8192).
  static BenchmarkCatalog BuiltIn();

  // Adds every *.toml file directly in `dir` (not recursive), in file-name order. All or
  // nothing: on error the catalog is unchanged and the message names the file. It is an error if
  // `dir` does not exist (callers that treat a missing directory as empty check first).
  Status AddDirectory(const std::string& dir);

  // Adds a validated definition. Adding an id that is already present with the same parameters
  // is not an error (the first definition is kept); with different parameters it is.
  Status Add(BenchmarkSpec spec);

  const std::vector<BenchmarkSpec>& List() const { return specs_; }

  // The catalog's definition of `id`, else ParseBenchmarkId(id) (source "pattern").
  Result<BenchmarkSpec> Find(std::string_view id) const;

 private:
  const BenchmarkSpec* Lookup(std::string_view id) const;

  std::vector<BenchmarkSpec> specs_;
};

// The `benchmark` block of the result record (DESIGN.md 5): {id, type, prefill_tokens,
// decode_tokens, methodology: "pipette-method/1"} plus minutes, varied, eval_name, eval_version,
// max_tokens and description only when set. `source` is not written (it is machine-local).
nlohmann::json ToJson(const BenchmarkSpec& spec);

// Where user definitions live: $PIPETTE_BENCHMARKS_DIR if set and non-empty, else
// $XDG_CONFIG_HOME/pipette/benchmarks, else $HOME/.config/pipette/benchmarks; empty when none of
// these variables is set. The directory may not exist; that is not an error.
std::string DefaultUserBenchmarkDir();

}  // namespace pipette
