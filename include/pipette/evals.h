// Quality-eval data sets (DESIGN.md 7, ../shared/docs/evals.md 1): MATH-500, GPQA Diamond and
// IFBench read from the files the user provides (never from the repository), turned into samples
// byte for byte as the published Pipette protocol builds them, and fingerprinted as it does.
//
// A sample is one user message (no system prompt). Its id is upstream's: the first 12 hex digits
// of SHA-256 of the UTF-8 prompt. The data-set fingerprint is SHA-256 of the "\n"-join of the
// sorted strings `prompt + "\x1f" + gold`; for MATH-500 and GPQA Diamond the protocol publishes
// it, and a file whose fingerprint differs still loads, with a warning naming both digests.
//
// Thread-safety: every function here is pure or reads only the files named; all may be called
// from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipette/doom_loop.h"
#include "pipette/scorers.h"
#include "pipette/status.h"

namespace pipette {

enum class EvalDataset { kMath500, kGpqaDiamond, kIfBench };

// What the protocol fixes about one data set.
struct EvalDatasetInfo {
  EvalDataset dataset;
  std::string name;                   // "math_500", "gpqa_diamond", "ifbench"
  std::string title;                  // "MATH-500", ...
  std::string benchmark_id;           // "eval_math_500_2026.06.1", ...
  std::string file;                   // path below the data directory: "math500/test.jsonl"
  size_t published_samples = 0;       // 500, 198, 300
  std::string published_fingerprint;  // empty where the protocol publishes none (IFBench)
};

// The three data sets, in the order above.
const std::vector<EvalDatasetInfo>& EvalDatasets();
const EvalDatasetInfo& InfoOf(EvalDataset dataset);
// By `name` ("math_500") or benchmark id; nullopt for anything else.
std::optional<EvalDataset> EvalDatasetNamed(std::string_view name_or_id);

struct EvalSample {
  std::string id{};      // EvalSampleId(prompt)
  std::string prompt{};  // the user message, exactly as sent
  // MATH-500: the record's `answer`; GPQA: the letter A-D where the correct answer landed;
  // IFBench: the compact JSON {"instruction_id_list":[..],"kwargs":[..]} (keys sorted, pipette's
  // own convention: the protocol publishes no IFBench fingerprint).
  std::string gold{};
  std::string source_id{};  // MATH: `unique_id`; GPQA: `Record ID`; IFBench: `key`
  int line = 0;             // 1-based line of the file (GPQA: of the decompressed CSV) it starts on
  // GPQA only: option_columns[letter] is the CSV column shown under that letter (index 0 = A);
  // empty for the other data sets.
  std::vector<std::string> option_columns{};
  uint32_t shuffle_seed = 0;  // GPQA only: the seed of the option shuffle
};

struct EvalDataSet {
  EvalDataset dataset = EvalDataset::kMath500;
  std::string path;                 // the file read
  std::vector<EvalSample> samples;  // in file order
  std::string fingerprint;          // EvalFingerprint(samples)
  // One line each: the fingerprint differs from the published one (both digests named), or the
  // sample count from the published count. Empty when the file is the published one.
  std::vector<std::string> warnings;

  // True when the protocol publishes a fingerprint and this one equals it; nullopt when none is
  // published.
  std::optional<bool> MatchesPublished() const;
};

// Loads `dataset` from `path` (a MATH-500 or IFBench JSON Lines file; a GPQA Diamond CSV, gzip-
// compressed or not). Errors, one line each naming the file and, where there is one, the line
// ("PATH:LINE: ..."): the file cannot be read or decompressed; a line that is not a JSON object;
// a missing field or one of the wrong type; a CSV record with the wrong number of fields, an
// unterminated quoted field, a header without a needed column; two records with the same prompt
// (MATH, IFBench) or `Record ID` (GPQA); text that is not UTF-8. Blank lines of a JSON Lines file
// are skipped. A fingerprint or count differing from the published one is a warning (warnings),
// not an error.
Result<EvalDataSet> LoadEvalDataSetFile(EvalDataset dataset, const std::string& path);
// The data directory to read: `given`, else $PIPETTE_EVALS_DIR, else "" (none given).
std::string EvalDataDir(const std::string& given);

// The same with `path` = data_dir + "/" + InfoOf(dataset).file.
Result<EvalDataSet> LoadEvalDataSet(EvalDataset dataset, const std::string& data_dir);

// Upstream's sample id: the first 12 lowercase hex digits of SHA-256 of `prompt`.
std::string EvalSampleId(std::string_view prompt);
// SHA-256 (lowercase hex) of the "\n"-join of the sorted `prompt + "\x1f" + gold` strings.
std::string EvalFingerprint(const std::vector<EvalSample>& samples);

// The prompts of the protocol (evals.md 1), byte for byte.
std::string MathPrompt(std::string_view problem);
// `options` are shown in the order given, as "A) ..", "B) ..", "C) ..", "D) ..".
std::string GpqaPrompt(std::string_view question, const std::array<std::string, 4>& options);

// The GPQA shuffle seed: int(md5(question).hexdigest(), 16) mod 2^32, of the raw question bytes.
uint32_t GpqaShuffleSeed(std::string_view question);
// The option order: result[letter] = index into [Correct Answer, Incorrect Answer 1, 2, 3], as
// CPython's random.Random(seed).shuffle leaves that list.
std::array<int, 4> GpqaOptionOrder(uint32_t seed);

// ---- Running an eval (benchmark type eval, DESIGN.md 7) ---------------------------------------

// The most eval attempts generated together (EvalOptions::parallel).
inline constexpr int kMaxEvalParallel = 64;

// How an eval cell generates (recorded in the result's `eval` block).
struct EvalOptions {
  std::string data_dir;  // the folder holding InfoOf(dataset).file
  int limit = 0;         // 0: every sample; else this many, chosen by SelectEvalSamples
  int repeats = 5;       // attempts per sample (ids <id>#0 .. <id>#repeats-1)
  double temperature = 0.6;
  uint64_t seed = 0;     // selects the subset and seeds every attempt (AttemptSeed)
  int max_tokens = 8192;  // output tokens per attempt at most
  // Attempts generated together, 1..kMaxEvalParallel: the runtime decodes them as sequences of
  // one batch (RuntimeSession::StartCompletion; runtimes whose parallel_completions is 1 refuse
  // more than 1). Each attempt's text is the one it gets alone; its timings are per attempt
  // while sharing the batch. Recorded in the eval block (and so part of the checkpoint's key).
  int parallel = 1;
  DoomLoopOptions doom_loop;
  // Where the per-sample checkpoint lives (one JSON Lines file per cell digest); required.
  std::string checkpoint_dir;
  // The store the result goes to (its absolute path; empty when none): part of the checkpoint's
  // key, so that stores sharing a folder never resume each other's attempts.
  std::string store;
};

// The subset of `limit` samples for `seed`: the samples whose SHA-256("<seed>:<id>") sort first,
// returned in file order; all of them when limit is 0 or not below the data set's size. The same
// (data set, limit, seed) always selects the same samples.
std::vector<const EvalSample*> SelectEvalSamples(const EvalDataSet& data, int limit,
                                                 uint64_t seed);

// The sampling seed of attempt `attempt` of sample `id`: the first 4 bytes (big-endian) of
// SHA-256("<seed>:<id>#<attempt>"), so attempts are independent draws and a rerun repeats them.
uint32_t AttemptSeed(uint64_t seed, std::string_view id, int attempt);

// How completions are scored: pipette's rule set or, with upstream_compat, the reference scorer's
// (MATH-500, GPQA Diamond); IFBench's checkers with upstream's quirks or the fixed profile.
struct EvalScoringOptions {
  bool upstream_compat = false;
  scorers::IfBenchProfile ifbench_profile = scorers::IfBenchProfile::kUpstream;
};

// The scorer of one data set, with what it needs loaded once. MATH-500: scorers::ScoreMath (or
// ScoreMathUpstream); GPQA Diamond: ScoreGpqa (or ScoreGpqaUpstream); IFBench: the checkers over
// the model data in <data_dir>/ifbench/nlp/ (scorers::IfBenchDataFiles: each file's SHA-256
// checked, the weights decompressed), the completion's thinking removed and white space trimmed
// first (scorers::StripThinking); `correct` is loose prompt level, `strict`/`loose` per
// instruction. Copies share the loaded data; Score is thread-safe.
class EvalScorer {
 public:
  // Errors (one line naming the file and what to do): an IFBench data file missing, unreadable,
  // not gzip where it should be, or with another SHA-256 than the one of the pinned version.
  static Result<EvalScorer> Load(EvalDataset dataset, const std::string& data_dir,
                                 const EvalScoringOptions& options = {});
  // Errors: IFBench only, a gold of the wrong shape or naming an unknown instruction.
  Result<scorers::Verdict> Score(std::string_view gold, std::string_view completion) const;
  // The rule set the verdicts carry ("pipette-math/3", "pipette-ifbench/1 (fixed)", ...).
  std::string RuleSet() const;

 private:
  EvalDataset dataset_ = EvalDataset::kMath500;
  EvalScoringOptions options_;
  std::optional<scorers::IfBenchScorer> ifbench_;
};

// One line of a completions file (`pipette score --completions`, JSON Lines): {"id": string,
// "completion": string}, other members ignored.
struct CompletionLine {
  std::string id;
  std::string completion;
};

// Errors, one line without the file and line number (the caller adds them): nested deeper than
// kMaxJsonDepth levels, "not a JSON line at byte N", "text that is not UTF-8 at byte N", not of
// that shape.
Result<CompletionLine> ParseCompletionLine(std::string_view line);

}  // namespace pipette
