// EvalScorer (include/pipette/evals.h): the scorer of each data set, IFBench's with its model
// data read and checked once.
#include <fmt/format.h>

#include <unordered_map>

#include "base/sha256.h"
#include "evals/file_read.h"
#include "pipette/evals.h"

namespace pipette {
namespace {

// IFBench's checkers' model data, each file's digest checked against the pinned version's: a
// different stopword list or tagger would change verdicts silently.
Result<std::unordered_map<std::string, std::string>> ReadIfBenchData(const std::string& data_dir) {
  const std::string nlp = data_dir + "/ifbench/nlp/";
  std::unordered_map<std::string, std::string> files;
  for (const scorers::IfBenchDataFile& f : scorers::IfBenchDataFiles()) {
    const std::string path = nlp + f.path;
    auto bytes = ReadFile(path);
    if (!bytes) {
      return MakeError(fmt::format("{}; IFBench's checkers need the model data of "
                                   "ifbench/nlp/ beside IFBench_test.jsonl (its README: sources "
                                   "and versions)",
                                   bytes.error().message));
    }
    const std::string digest = Sha256Hex(*bytes);
    if (digest != f.sha256) {
      return MakeError(fmt::format("{}: SHA-256 {} is not the pinned version's {}; fetch that "
                                   "file again (ifbench/nlp/README.md names its source)",
                                   path, digest, f.sha256));
    }
    if (f.gzip) {
      auto text = ReadGzipFile(path);
      if (!text) return text.error();
      files[f.path] = std::move(*text);
    } else {
      files[f.path] = std::move(*bytes);
    }
  }
  return files;
}

}  // namespace

Result<EvalScorer> EvalScorer::Load(EvalDataset dataset, const std::string& data_dir,
                                    const EvalScoringOptions& options) {
  EvalScorer s;
  s.dataset_ = dataset;
  s.options_ = options;
  if (dataset == EvalDataset::kIfBench) {
    auto files = ReadIfBenchData(data_dir);
    if (!files) return files.error();
    auto scorer = scorers::IfBenchScorer::FromFiles(*files);
    if (!scorer) return scorer.error();
    s.ifbench_.emplace(std::move(*scorer));
  }
  return s;
}

Result<scorers::Verdict> EvalScorer::Score(std::string_view gold,
                                           std::string_view completion) const {
  switch (dataset_) {
    case EvalDataset::kMath500:
      return options_.upstream_compat ? scorers::ScoreMathUpstream(completion, gold)
                                      : scorers::ScoreMath(completion, gold);
    case EvalDataset::kGpqaDiamond: {
      const char letter = gold.empty() ? '?' : gold[0];
      return options_.upstream_compat ? scorers::ScoreGpqaUpstream(completion, letter)
                                      : scorers::ScoreGpqa(completion, letter);
    }
    case EvalDataset::kIfBench:
      break;
  }
  // Pipette's protocol scores the answer after the thinking, trimmed (upstream's is_correct).
  auto v = ifbench_->Score(gold, scorers::StripThinking(completion), options_.ifbench_profile);
  if (!v) return v.error();
  scorers::Verdict verdict;
  verdict.method = "loose";
  verdict.parsed = true;
  verdict.correct = v->prompt_loose;
  verdict.strict = std::move(v->strict);
  verdict.loose = std::move(v->loose);
  verdict.rule_set = RuleSet();
  return verdict;
}

std::string EvalScorer::RuleSet() const {
  switch (dataset_) {
    case EvalDataset::kMath500:
      return std::string(options_.upstream_compat ? scorers::kMathUpstreamRuleSet
                                                  : scorers::kMathRuleSet);
    case EvalDataset::kGpqaDiamond:
      return std::string(options_.upstream_compat ? scorers::kGpqaUpstreamRuleSet
                                                  : scorers::kGpqaRuleSet);
    case EvalDataset::kIfBench:
      break;
  }
  return std::string(scorers::kIfBenchRuleSet) +
         (options_.ifbench_profile == scorers::IfBenchProfile::kFixed ? " (fixed)" : "");
}

}  // namespace pipette
