#include "cli/cmd_import.h"

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>

#include "cli/store_reading.h"
#include "pipette/import.h"
#include "pipette/record.h"
#include "pipette/store.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct ImportArgs {
  std::string file;
  LlamaBenchImportOptions options;
};

// "12345.6 tokens/s (median of 5, 95% CI 12001-12400)" or "... (llama-bench's mean; no samples)".
std::string Headline(const json& record) {
  const std::string metric = record::StringAt(record, "/benchmark/type") == "prefill"
                                 ? "prefill_throughput"
                                 : "decode_throughput";
  const auto median = record::MetricValue(record, metric);
  if (!median) return "";
  const json& m = record["metrics"][metric];
  if (m.value("estimate", "") == "mean") {
    return fmt::format("{:.6g} tokens/s (llama-bench's mean; no samples, no interval)", *median);
  }
  return fmt::format("{:.6g} tokens/s (median of {}, 95% CI {:.6g}-{:.6g})", *median,
                     m.value("n", 0), m.value("ci95_low", 0.0), m.value("ci95_high", 0.0));
}

int Run(const ImportArgs& args, CliContext& ctx) {
  const std::string store_path = StorePath(ctx);
  auto store = ResultStore::Open(store_path);
  if (!store) return ReportError(ctx, store.error(), kExitFailure);
  LlamaBenchImportOptions options = args.options;
  options.hash_file = [&](const std::string& path) { return CachedSha256(**store, path); };
  auto imported = ImportLlamaBench(args.file, options);
  if (!imported) return ReportError(ctx, imported.error());
  if (Status s = (*store)->PutAll(imported->records); !s) {
    return ReportError(ctx, s.error(), kExitFailure);
  }
  // Short ids as `results list` shows them.
  std::map<std::string, std::string> short_ids;
  if (auto rows = (*store)->List({}); rows) {
    for (const ResultRow& r : *rows) short_ids[r.result_id] = r.short_id;
  }
  if (ctx.json) {
    json out = {{"store", store_path}, {"format", imported->format}, {"results", json::array()},
                {"skipped", imported->skipped}};
    for (const json& r : imported->records) {
      out["results"].push_back({{"result_id", r["result_id"]},
                                {"benchmark", r["benchmark"]["id"]},
                                {"model", r["model"]["file_name"]},
                                {"row", r["imported"]["row"]}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  const json& first = imported->records.front();
  std::cout << fmt::format("imported {} result{} of llama-bench ({} output, build {}) from {} into "
                           "{}:\n",
                           imported->records.size(), imported->records.size() == 1 ? "" : "s",
                           imported->format, first["runtime"]["commit"].get<std::string>(),
                           args.file, store_path);
  for (const json& r : imported->records) {
    const std::string id = r["result_id"];
    std::cout << fmt::format("  {:<10} {:<28} {:<24} {}\n",
                             short_ids.count(id) ? short_ids[id] : id,
                             r["benchmark"]["id"].get<std::string>(),
                             r["model"]["file_name"].get<std::string>(), Headline(r));
  }
  for (const std::string& line : imported->skipped) std::cout << "skipped: " << line << "\n";
  if (!args.options.this_device) {
    std::cout << "no device fingerprint (llama-bench records only cpu_info and gpu_info); "
                 "--this-device records this machine's when the run was made here\n";
  }
  return kExitOk;
}

}  // namespace

void AddImportCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* cmd = app.add_subcommand("import", "bring results measured by other tools into the store");
  cmd->require_subcommand(1);
  auto args = std::make_shared<ImportArgs>();
  CLI::App* bench = cmd->add_subcommand(
      "llama-bench",
      "import llama-bench's -o json, -o jsonl or -o sql output as llamacpp-stock results: pp P -> "
      "prefill_throughput_P, tg D at depth P (-d P) -> decode_throughput_P_D; samples_ns become "
      "the result's samples (sql has none: its mean is stored, without an interval). All rows or "
      "none: a malformed file, an unknown field, a row of no pipette benchmark or a missing model "
      "file stops the import with one line and stores nothing");
  bench->add_option("file", args->file, "llama-bench's output file")->required();
  bench->add_option("--model", args->options.model_paths,
                    "the model file llama-bench measured, where it is now (when moved, renamed or "
                    "given relative to another folder; repeat for several, matched by file name)");
  bench->add_flag("--allow-unknown-fields", args->options.allow_unknown_fields,
                  "import rows with fields this pipette does not know (a newer llama-bench), "
                  "keeping them in the record; refused by default, since such a field may be a "
                  "setting that changes the measurement");
  bench->add_flag("--skip-unmatched", args->options.skip_unmatched,
                  "leave out rows that match no pipette benchmark (tg from an empty context, "
                  "-pg, pp at a depth), one line each, and import the rest; refused by default");
  bench->add_flag("--this-device", args->options.this_device,
                  "the llama-bench run was made on this machine: record its fingerprint (checked "
                  "against llama-bench's cpu_info); without it the results have no device id");
  bench->callback([args, &ctx] { Run(*args, ctx); });
}

}  // namespace pipette::cli
