#include "cli/cmd_score.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "pipette/evals.h"
#include "pipette/scorers.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct ScoreOptions {
  std::string eval;              // math_500 | gpqa_diamond
  std::string completions;       // JSON Lines file
  std::string data_dir;          // --data-dir; empty means $PIPETTE_EVALS_DIR
  bool upstream_compat = false;  // the reference scorer's rules
};

// Sample id -> gold answer.
using GoldAnswers = std::map<std::string, std::string>;

// Sample id -> gold answer (MATH: the `answer` field; GPQA: the letter the correct option lands
// on after the shuffle), from the data set as `pipette evals` loads it.
Result<GoldAnswers> LoadGold(const ScoreOptions& o) {
  const std::string dir = EvalDataDir(o.data_dir);
  if (dir.empty()) {
    return MakeError("no data directory: give --data-dir DIR or set $PIPETTE_EVALS_DIR");
  }
  const auto data = LoadEvalDataSet(
      o.eval == "math_500" ? EvalDataset::kMath500 : EvalDataset::kGpqaDiamond, dir);
  if (!data) return data.error();
  for (const std::string& warning : data->warnings)
    std::cerr << "pipette: warning: " << warning << "\n";
  GoldAnswers gold;
  for (const EvalSample& sample : data->samples) gold[sample.id] = sample.gold;
  return gold;
}

struct Scored {
  std::string id;
  scorers::Verdict verdict;
};

// Reads and scores the completions; the first bad line is an error naming file and line.
Result<std::vector<Scored>> ScoreFile(const ScoreOptions& o, const GoldAnswers& gold) {
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
    const std::string& completion = r->completion;
    const std::string& answer = g->second;
    scorers::Verdict verdict;
    if (o.eval == "math_500") {
      verdict = o.upstream_compat ? scorers::ScoreMathUpstream(completion, answer)
                                  : scorers::ScoreMath(completion, answer);
    } else {
      verdict = o.upstream_compat ? scorers::ScoreGpqaUpstream(completion, answer[0])
                                  : scorers::ScoreGpqa(completion, answer[0]);
    }
    scored.push_back({id, std::move(verdict)});
  }
  return scored;
}

void Print(const ScoreOptions& o, const std::vector<Scored>& scored, bool as_json) {
  size_t correct = 0;
  size_t unparsed = 0;
  for (const Scored& s : scored) {
    correct += s.verdict.correct ? 1 : 0;
    unparsed += s.verdict.parsed ? 0 : 1;
  }
  const double n = static_cast<double>(scored.size());
  const double accuracy = scored.empty() ? 0.0 : correct / n;
  const double unparsed_rate = scored.empty() ? 0.0 : unparsed / n;
  const bool math = o.eval == "math_500";
  const std::string rule_set(math && o.upstream_compat ? scorers::kMathUpstreamRuleSet
                             : math                    ? scorers::kMathRuleSet
                             : o.upstream_compat       ? scorers::kGpqaUpstreamRuleSet
                                                       : scorers::kGpqaRuleSet);
  if (!as_json) {
    std::cout << fmt::format(
        "{}: {} completions, accuracy {:.1f}% ({} correct), unparsed {:.1f}% ({}); rule set {}\n",
        o.eval, scored.size(), 100 * accuracy, correct, 100 * unparsed_rate, unparsed, rule_set);
    return;
  }
  json samples = json::array();
  for (const Scored& s : scored) {
    samples.push_back({{"id", s.id},
                       {"extracted", s.verdict.extracted},
                       {"method", s.verdict.method},
                       {"correct", s.verdict.correct}});
  }
  const json out = {{"eval", o.eval},
                    {"rule_set", rule_set},
                    {"completions", scored.size()},
                    {"correct", correct},
                    {"accuracy", accuracy},
                    {"unparsed", unparsed},
                    {"unparsed_rate", unparsed_rate},
                    {"samples", std::move(samples)}};
  // Extracted text need not be UTF-8: replace bad bytes rather than fail.
  std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

void Run(const ScoreOptions& o, CliContext& ctx) {
  const auto gold = LoadGold(o);
  if (!gold) {
    ReportError(ctx, gold.error());
    return;
  }
  const auto scored = ScoreFile(o, *gold);
  if (!scored) {
    ReportError(ctx, scored.error());
    return;
  }
  Print(o, *scored, ctx.json);
}

}  // namespace

void AddScoreCommand(CLI::App& app, CliContext& ctx) {
  auto o = std::make_shared<ScoreOptions>();
  CLI::App* cmd = app.add_subcommand(
      "score",
      "Score completions (JSON Lines {\"id\", \"completion\"}) with the deterministic "
      "MATH-500 / GPQA Diamond scorers");
  cmd->add_option("--eval", o->eval, "math_500 | gpqa_diamond")
      ->required()
      ->check(CLI::IsMember({"math_500", "gpqa_diamond"}));
  cmd->add_option("--completions", o->completions, "JSON Lines file of {\"id\", \"completion\"}")
      ->required();
  cmd->add_option("--data-dir", o->data_dir,
                  "folder of the eval data sets, as for `pipette evals` (default: "
                  "$PIPETTE_EVALS_DIR)");
  cmd->add_flag("--upstream-compat", o->upstream_compat,
                "grade as the reference scorer does (Liquid4All/pipette-scores d93e2e1), faults "
                "included, for parity checks");
  cmd->callback([o, &ctx] { Run(*o, ctx); });
}

}  // namespace pipette::cli
