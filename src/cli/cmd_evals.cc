// `pipette evals fingerprint`: see cmd_evals.h.
#include "cli/cmd_evals.h"

#include <fmt/core.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/text_table.h"
#include "pipette/evals.h"

namespace pipette::cli {
namespace {

struct EvalsOptions {
  std::string data_dir;            // --data-dir; empty means $PIPETTE_EVALS_DIR
  std::vector<std::string> evals;  // --eval; empty means all three
};

std::string MatchText(const EvalDataSet& set) {
  const std::optional<bool> matches = set.MatchesPublished();
  if (!matches) return "none published";
  return *matches ? "yes" : "NO (published " + InfoOf(set.dataset).published_fingerprint + ")";
}

nlohmann::json SetJson(const EvalDataSet& set) {
  const EvalDatasetInfo& info = InfoOf(set.dataset);
  const std::optional<bool> matches = set.MatchesPublished();
  return {{"name", info.name},
          {"benchmark_id", info.benchmark_id},
          {"file", set.path},
          {"samples", set.samples.size()},
          {"fingerprint", set.fingerprint},
          {"published_fingerprint", info.published_fingerprint.empty()
                                        ? nlohmann::json()
                                        : nlohmann::json(info.published_fingerprint)},
          {"matches_published", matches ? nlohmann::json(*matches) : nlohmann::json()},
          {"warnings", set.warnings}};
}

void RunFingerprint(CliContext& ctx, const EvalsOptions& options) {
  const std::string dir = EvalDataDir(options.data_dir);
  if (dir.empty()) {
    ReportError(ctx, MakeError("no data directory: give --data-dir DIR or set $PIPETTE_EVALS_DIR"));
    return;
  }
  std::vector<EvalDataset> wanted;
  for (const std::string& name : options.evals) {
    const std::optional<EvalDataset> dataset = EvalDatasetNamed(name);
    if (!dataset) {
      ReportError(
          ctx, MakeError("unknown eval '" + name + "' (known: math_500, gpqa_diamond, ifbench)"));
      return;
    }
    wanted.push_back(*dataset);
  }
  if (wanted.empty()) {
    for (const EvalDatasetInfo& info : EvalDatasets()) wanted.push_back(info.dataset);
  }
  std::vector<EvalDataSet> sets;
  for (EvalDataset dataset : wanted) {
    Result<EvalDataSet> set = LoadEvalDataSet(dataset, dir);
    if (!set.ok()) {
      ReportError(ctx, set.error());  // the others are still shown
      continue;
    }
    for (const std::string& warning : set->warnings) {
      std::cerr << "pipette: warning: " << warning << std::endl;
    }
    sets.push_back(std::move(set).value());
  }
  if (ctx.json) {
    nlohmann::json array = nlohmann::json::array();
    for (const EvalDataSet& set : sets) array.push_back(SetJson(set));
    fmt::print("{}\n", nlohmann::json{{"data_dir", dir}, {"datasets", array}}.dump(2));
    return;
  }
  if (sets.empty()) return;  // the errors said why
  std::vector<std::vector<std::string>> rows = {
      {"DATA SET", "BENCHMARK", "SAMPLES", "FINGERPRINT", "PUBLISHED"}};
  for (const EvalDataSet& set : sets) {
    const EvalDatasetInfo& info = InfoOf(set.dataset);
    rows.push_back({info.name, info.benchmark_id, std::to_string(set.samples.size()),
                    set.fingerprint, MatchText(set)});
  }
  PrintTable(rows, std::cout);
}

}  // namespace

void AddEvalsCommand(CLI::App& app, CliContext& ctx) {
  auto options = std::make_shared<EvalsOptions>();
  CLI::App* evals = app.add_subcommand("evals", "Quality-eval data sets");
  evals->require_subcommand(1);
  CLI::App* fingerprint = evals->add_subcommand(
      "fingerprint",
      "Load the eval data sets and print each one's sample count and fingerprint, and whether "
      "it is the published one");
  fingerprint->add_option("--data-dir", options->data_dir,
                          "Directory holding math500/test.jsonl, "
                          "gpqa_diamond/gpqa_diamond.csv.gz and ifbench/IFBench_test.jsonl "
                          "(required unless $PIPETTE_EVALS_DIR is set)");
  fingerprint->add_option("--eval", options->evals,
                          "Only this data set (repeatable): math_500, gpqa_diamond, ifbench");
  fingerprint->callback([&ctx, options] { RunFingerprint(ctx, *options); });
}

}  // namespace pipette::cli
