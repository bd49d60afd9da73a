#include "cli/cmd_score.h"

#include <fmt/format.h>

#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "pipette/evals.h"
#include "pipette/scorers.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct ScoreOptions {
  std::string eval;              // math_500 | gpqa_diamond | ifbench
  std::string completions;       // JSON Lines file
  std::string data_dir;          // --data-dir; empty means $PIPETTE_EVALS_DIR
  bool upstream_compat = false;  // the reference scorer's rules
  std::string profile = "upstream";  // IFBench: upstream | fixed
};

// Sample id -> gold answer.
using GoldAnswers = std::map<std::string, std::string>;

struct Scoring {
  GoldAnswers gold;
  std::optional<EvalScorer> scorer;
};

// The data set's gold answers by sample id (MATH: the `answer` field; GPQA: the letter the
// correct option lands on after the shuffle; IFBench: its instructions and their arguments), as
// `pipette evals` loads them, and the data set's scorer.
Result<Scoring> LoadScoring(const ScoreOptions& o) {
  const std::string dir = EvalDataDir(o.data_dir);
  if (dir.empty()) {
    return MakeError("no data directory: give --data-dir DIR or set $PIPETTE_EVALS_DIR");
  }
  const EvalDataset dataset = *EvalDatasetNamed(o.eval);
  const auto data = LoadEvalDataSet(dataset, dir);
  if (!data) return data.error();
  for (const std::string& warning : data->warnings)
    std::cerr << "pipette: warning: " << warning << "\n";
  EvalScoringOptions options;
  options.upstream_compat = o.upstream_compat;
  options.ifbench_profile =
      o.profile == "fixed" ? scorers::IfBenchProfile::kFixed : scorers::IfBenchProfile::kUpstream;
  auto scorer = EvalScorer::Load(dataset, dir, options);
  if (!scorer) return scorer.error();
  Scoring scoring;
  scoring.scorer.emplace(std::move(*scorer));
  for (const EvalSample& sample : data->samples) scoring.gold[sample.id] = sample.gold;
  return scoring;
}

struct Scored {
  std::string id;
  scorers::Verdict verdict;
};

// Reads and scores the completions; the first bad line is an error naming file and line.
Result<std::vector<Scored>> ScoreFile(const ScoreOptions& o, const Scoring& scoring) {
  const GoldAnswers& gold = scoring.gold;
  std::ifstream in(o.completions, std::ios::binary);
  if (!in) return MakeError("cannot read completions file " + o.completions);
  std::vector<Scored> scored;
  std::set<std::string> seen;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", o.completions, n);
    Result<CompletionLine> r = ParseCompletionLine(line);
    if (!r) return MakeError(where + ": " + r.error().message);
    const std::string& id = r->id;
    if (!seen.insert(id).second) return MakeError(where + ": duplicate id '" + id + "'");
    const std::string sample = id.substr(0, id.find('#'));
    const auto g = gold.find(sample);
    if (g == gold.end()) {
      return MakeError(where + ": unknown " + o.eval + " sample id '" + sample +
                       "'; ids are the protocol's: the first 12 hex digits of the SHA-256 of the "
                       "sample's prompt (e.g. e7b7a0f871c3), as `pipette evals` builds them");
    }
    auto verdict = scoring.scorer->Score(g->second, r->completion);
    if (!verdict) return MakeError(where + ": " + verdict.error().message);
    scored.push_back({id, std::move(*verdict)});
  }
  return scored;
}

// IFBench's four accuracies (counts): prompts whose instructions all pass, and instructions.
struct InstructionLevels {
  size_t prompt_strict = 0, prompt_loose = 0, strict = 0, loose = 0, instructions = 0;
};

InstructionLevels LevelsOf(const std::vector<Scored>& scored) {
  InstructionLevels l;
  for (const Scored& s : scored) {
    const auto& v = s.verdict;
    if (v.loose.empty()) continue;
    l.instructions += v.loose.size();
    l.strict += static_cast<size_t>(std::count(v.strict.begin(), v.strict.end(), true));
    l.loose += static_cast<size_t>(std::count(v.loose.begin(), v.loose.end(), true));
    l.prompt_strict += std::all_of(v.strict.begin(), v.strict.end(), [](bool b) { return b; });
    l.prompt_loose += std::all_of(v.loose.begin(), v.loose.end(), [](bool b) { return b; });
  }
  return l;
}

void Print(const ScoreOptions& o, const std::string& rule_set, const std::vector<Scored>& scored,
           bool as_json) {
  size_t correct = 0;
  size_t unparsed = 0;
  for (const Scored& s : scored) {
    correct += s.verdict.correct ? 1 : 0;
    unparsed += s.verdict.parsed ? 0 : 1;
  }
  const double n = static_cast<double>(scored.size());
  const double accuracy = scored.empty() ? 0.0 : correct / n;
  const double unparsed_rate = scored.empty() ? 0.0 : unparsed / n;
  const InstructionLevels levels = LevelsOf(scored);
  if (!as_json) {
    std::cout << fmt::format(
        "{}: {} completions, accuracy {:.1f}% ({} correct), unparsed {:.1f}% ({}); rule set {}\n",
        o.eval, scored.size(), 100 * accuracy, correct, 100 * unparsed_rate, unparsed, rule_set);
    if (levels.instructions > 0) {
      std::cout << fmt::format(
          "  prompt level: loose {:.1f}%, strict {:.1f}% ({} prompts); instruction level: loose "
          "{:.1f}%, strict {:.1f}% ({} instructions)\n",
          100.0 * levels.prompt_loose / n, 100.0 * levels.prompt_strict / n, scored.size(),
          100.0 * levels.loose / levels.instructions, 100.0 * levels.strict / levels.instructions,
          levels.instructions);
    }
    return;
  }
  json samples = json::array();
  for (const Scored& s : scored) {
    json sample = {{"id", s.id},
                   {"extracted", s.verdict.extracted},
                   {"method", s.verdict.method},
                   {"correct", s.verdict.correct}};
    if (!s.verdict.loose.empty()) {
      sample["strict"] = s.verdict.strict;
      sample["loose"] = s.verdict.loose;
    }
    samples.push_back(std::move(sample));
  }
  json out = {{"eval", o.eval},
                    {"rule_set", rule_set},
                    {"completions", scored.size()},
                    {"correct", correct},
                    {"accuracy", accuracy},
                    {"unparsed", unparsed},
                    {"unparsed_rate", unparsed_rate},
                    {"samples", std::move(samples)}};
  if (levels.instructions > 0) {
    out["prompt_level"] = {{"strict", levels.prompt_strict / n}, {"loose", levels.prompt_loose / n}};
    out["instruction_level"] = {
        {"strict", static_cast<double>(levels.strict) / levels.instructions},
        {"loose", static_cast<double>(levels.loose) / levels.instructions},
        {"instructions", levels.instructions}};
  }
  // Extracted text need not be UTF-8: replace bad bytes rather than fail.
  std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

void Run(const ScoreOptions& o, CliContext& ctx) {
  if (o.profile != "upstream" && o.eval != "ifbench") {
    ReportError(ctx, MakeError("a scoring profile is IFBench's (upstream or fixed); " + o.eval +
                               " has pipette's rules or, for parity checks, the reference "
                               "scorer's (--upstream-compat)"));
    return;
  }
  if (o.upstream_compat && o.eval == "ifbench") {
    ReportError(ctx, MakeError("IFBench is scored as upstream scores it by default (profile "
                               "upstream); --profile fixed corrects its quirks"));
    return;
  }
  const auto scoring = LoadScoring(o);
  if (!scoring) {
    ReportError(ctx, scoring.error());
    return;
  }
  const auto scored = ScoreFile(o, *scoring);
  if (!scored) {
    ReportError(ctx, scored.error());
    return;
  }
  Print(o, scoring->scorer->RuleSet(), *scored, ctx.json);
}

}  // namespace

void AddScoreCommand(CLI::App& app, CliContext& ctx) {
  auto o = std::make_shared<ScoreOptions>();
  CLI::App* cmd = app.add_subcommand(
      "score",
      "Score completions (JSON Lines {\"id\", \"completion\"}) with the deterministic "
      "MATH-500 / GPQA Diamond / IFBench scorers");
  cmd->add_option("--eval", o->eval, "math_500 | gpqa_diamond | ifbench")
      ->required()
      ->check(CLI::IsMember({"math_500", "gpqa_diamond", "ifbench"}));
  cmd->add_option("--completions", o->completions, "JSON Lines file of {\"id\", \"completion\"}")
      ->required();
  cmd->add_option("--data-dir", o->data_dir,
                  "folder of the eval data sets, as for `pipette evals` (default: "
                  "$PIPETTE_EVALS_DIR)");
  cmd->add_flag("--upstream-compat", o->upstream_compat,
                "grade as the reference scorer does (Liquid4All/pipette-scores d93e2e1), faults "
                "included, for parity checks");
  cmd->add_option("--profile", o->profile,
                  "IFBench: upstream (its verdicts, quirks included; the default) | fixed (the "
                  "quirks corrected)")
      ->check(CLI::IsMember({"upstream", "fixed"}));
  cmd->callback([o, &ctx] { Run(*o, ctx); });
}

}  // namespace pipette::cli
