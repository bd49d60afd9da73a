// `pipette benchmarks list|show`: see cmd_benchmarks.h.
#include "cli/cmd_benchmarks.h"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipette/benchmark.h"

namespace pipette::cli {
namespace {

struct BenchmarksOptions {
  std::string type;  // list: keep only this type (short or catalog name)
  std::string dir;   // user definitions; empty means DefaultUserBenchmarkDir() if it exists
  std::string id;    // show: the benchmark
};

// The built-in catalog plus the user's definitions.
Result<BenchmarkCatalog> LoadCatalog(const std::string& dir) {
  BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  std::string user_dir = dir;
  if (user_dir.empty()) {
    user_dir = DefaultUserBenchmarkDir();
    std::error_code ec;
    if (user_dir.empty() || !std::filesystem::exists(user_dir, ec)) return catalog;
  }
  if (Status added = catalog.AddDirectory(user_dir); !added.ok()) return added.error();
  return catalog;
}

nlohmann::json SpecJson(const BenchmarkSpec& spec) {
  nlohmann::json j = ToJson(spec);
  j["source"] = spec.source;
  return j;
}

std::string Count(int value) { return value > 0 ? std::to_string(value) : "-"; }

void PrintBenchmarkTable(const std::vector<const BenchmarkSpec*>& specs) {
  size_t id_width = 2;
  size_t type_width = 4;
  for (const BenchmarkSpec* spec : specs) {
    id_width = std::max(id_width, spec->id.size());
    type_width = std::max(type_width, TypeName(spec->type).size());
  }
  fmt::print("{:<{}}  {:<{}}  {:>7}  {:>7}\n", "ID", id_width, "TYPE", type_width, "P", "D");
  for (const BenchmarkSpec* spec : specs) {
    fmt::print("{:<{}}  {:<{}}  {:>7}  {:>7}\n", spec->id, id_width, TypeName(spec->type),
               type_width, Count(spec->prefill_tokens), Count(spec->decode_tokens));
  }
}

void PrintSpec(const BenchmarkSpec& spec) {
  const auto field = [](std::string_view name, const std::string& value) {
    fmt::print("{:<16}{}\n", std::string(name) + ":", value);
  };
  field("id", spec.id);
  const bool same_name = TypeName(spec.type) == CatalogTypeName(spec.type);
  field("type", same_name
                    ? std::string(TypeName(spec.type))
                    : fmt::format("{} ({})", TypeName(spec.type), CatalogTypeName(spec.type)));
  if (spec.prefill_tokens > 0) field("prefill_tokens", std::to_string(spec.prefill_tokens));
  if (spec.decode_tokens > 0) field("decode_tokens", std::to_string(spec.decode_tokens));
  if (spec.type == BenchmarkType::kMemory) {
    // Not a parameter of the id, so the definition and the record's benchmark block say 0.
    field("decoded_tokens", "1 (fixed for every memory benchmark; each result's samples say "
                            "tokens_out 1, its benchmark.decode_tokens stays 0)");
  }
  if (spec.minutes > 0) field("minutes", std::to_string(spec.minutes));
  if (spec.varied) {
    std::string shapes;  // "64/32, 8/16, ..." in the order requests cycle through them
    for (const SoakShape& s : SoakShapes(spec)) {
      shapes += fmt::format("{}{}/{}", shapes.empty() ? "" : ", ", s.prompt_tokens, s.decode_tokens);
    }
    field("shapes", shapes + " (prompt/generated tokens, in turn)");
  }
  if (!spec.eval_name.empty()) field("eval_name", spec.eval_name);
  if (!spec.eval_version.empty()) field("eval_version", spec.eval_version);
  if (spec.max_tokens > 0) field("max_tokens", std::to_string(spec.max_tokens));
  field("methodology", std::string(kMethodology));
  field("description", spec.description);
  field("source", spec.source);
}

void RunList(CliContext& ctx, const BenchmarksOptions& options) {
  std::optional<BenchmarkType> type;
  if (!options.type.empty()) {
    type = ParseTypeName(options.type);
    if (!type) {
      ReportError(ctx, MakeError("unknown benchmark type '" + options.type +
                                 "' (known: prefill, decode, e2e, memory, eval, soak, "
                                 "kl_divergence)"));
      return;
    }
  }
  Result<BenchmarkCatalog> catalog = LoadCatalog(options.dir);
  if (!catalog.ok()) {
    ReportError(ctx, catalog.error());
    return;
  }
  std::vector<const BenchmarkSpec*> specs;
  for (const BenchmarkSpec& spec : catalog->List()) {
    if (!type || spec.type == *type) specs.push_back(&spec);
  }
  if (ctx.json) {
    nlohmann::json array = nlohmann::json::array();
    for (const BenchmarkSpec* spec : specs) array.push_back(SpecJson(*spec));
    fmt::print("{}\n", array.dump(2));
    return;
  }
  PrintBenchmarkTable(specs);
}

void RunShow(CliContext& ctx, const BenchmarksOptions& options) {
  Result<BenchmarkCatalog> catalog = LoadCatalog(options.dir);
  if (!catalog.ok()) {
    ReportError(ctx, catalog.error());
    return;
  }
  Result<BenchmarkSpec> spec = catalog->Find(options.id);
  if (!spec.ok()) {
    ReportError(ctx, spec.error());
    return;
  }
  if (ctx.json) {
    fmt::print("{}\n", SpecJson(*spec).dump(2));
    return;
  }
  PrintSpec(*spec);
}

}  // namespace

void AddBenchmarksCommand(CLI::App& app, CliContext& ctx) {
  auto options = std::make_shared<BenchmarksOptions>();
  CLI::App* benchmarks = app.add_subcommand("benchmarks", "Browse the benchmark catalog");
  benchmarks->require_subcommand(1);

  CLI::App* list = benchmarks->add_subcommand("list", "List the benchmarks in the catalog");
  list->add_option("--type", options->type,
                   "Only this type: prefill, decode, e2e, memory, eval, soak, kl_divergence");
  list->add_option("--dir,--benchmarks-dir", options->dir,
                   "Directory of TOML definitions (default: the user benchmark directory)");
  list->callback([&ctx, options] { RunList(ctx, *options); });

  CLI::App* show = benchmarks->add_subcommand("show", "Show one benchmark definition");
  show->add_option("id", options->id, "Benchmark id, e.g. decode_throughput_512_100")->required();
  show->add_option("--dir,--benchmarks-dir", options->dir,
                   "Directory of TOML definitions (default: the user benchmark directory)");
  show->callback([&ctx, options] { RunShow(ctx, *options); });
}

}  // namespace pipette::cli
