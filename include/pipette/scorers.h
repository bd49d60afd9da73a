// Deterministic, model-blind scorers for the quality evals (DESIGN.md 7, docs evals.md 3).
//
// A scorer is a pure function of one completion's text and the sample's gold answer, which the
// caller looks up by sample id in the data set (the scorer never sees the question, the options or
// the model). Same input, same verdict, on every machine: no randomness, no clock, no globals.
// Thread-safe: the functions share no state. Any byte string is accepted, including text that is
// not UTF-8, 1 MB long or pathologically nested: the cost is linear in the completion's length
// (nesting is capped), and such input gets a verdict, never a crash or a hang.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pipette/status.h"

namespace pipette::scorers {

// Versioned rule sets, recorded with every verdict. A change to any rule that can change a verdict
// bumps the version.
inline constexpr std::string_view kGpqaRuleSet = "pipette-gpqa/1";
inline constexpr std::string_view kMathRuleSet = "pipette-math/3";
// The reference scorer's GPQA rules (Liquid4All/pipette-scores d93e2e1), for parity checks.
inline constexpr std::string_view kGpqaUpstreamRuleSet = "upstream-gpqa/d93e2e1";

// One completion's verdict.
struct Verdict {
  std::string extracted;  // the answer the completion commits to, as extracted; empty if none
  std::string method;     // the rule of the chain that matched ("answer_label", "boxed", ...);
                          // "none" when nothing matched
  bool correct = false;   // equal to the gold answer; false when not parsed
  bool parsed = false;    // an answer was extracted (unparsed is reported apart from wrong)
  std::string rule_set;   // kGpqaRuleSet, kMathRuleSet, ...
  // IFBench only: one verdict per instruction, in the data set's order (strict and loose).
  std::vector<bool> strict;
  std::vector<bool> loose;
};

// The shared preprocessing of evals.md 3, in order: removes <think>...</think> and
// [THINK]...[/THINK] blocks (any case, non-greedy); drops everything up to an orphan closing tag;
// drops from an orphan opening tag to the end; keeps what follows `assistant...final` in a GPT-OSS
// transcript; strips a trailing <|end|> / <|return|>; trims white space.
std::string StripThinking(std::string_view completion);

// GPQA Diamond. `gold_letter` is the letter (A-D) where the correct option landed after the
// data set's shuffle. The letter is extracted with this chain, the first rule that
// matches deciding (`method` names it):
//   single_letter  the whole answer is one letter A-D (any case)
//   answer_label   the last `Answer:` / `Final choice:` label (any case, markdown `*`/`_` around
//                  the label or the letter, optional parentheses) followed by a letter A-D that
//                  is not followed by a letter or digit
//   boxed          the last \boxed{...} whose content is one letter A-D in any case, optionally
//                  inside \text{} and parentheses
//   answer_phrase  the last "answer/choice/option is [always] X", "answer is (X)", "go with X",
//                  "I choose/pick X", "X is the correct answer/choice/option", "X is correct":
//                  X an upper-case letter A-D standing alone
//   choice_paren   the last "X)" choice mention, X upper-case A-D standing alone
// Anything else (hedges, refusals, truncation, acronyms such as "DNA") is unparsed.
Verdict ScoreGpqa(std::string_view completion, char gold_letter);

// GPQA Diamond as the reference scorer grades it (--upstream-compat), its known faults included
// ("the answer is a bit subtle" reads as A, lower-case \boxed{c} is missed, "DNA " gives A):
// the same preprocessing; a one-letter answer; else the last `Answer:` label followed by any
// letter; else, unless the text hedges between two letters ("B or C"), the first of these
// fallbacks that matches, each taking its last match: boxed (upper case), answer_is,
// answer_is_paren, choice_format ("X)"), correct_answer, letter_end, letter_period, letter_nonword.
// `method` names the rule as upstream's verdict files do; rule_set is kGpqaUpstreamRuleSet.
Verdict ScoreGpqaUpstream(std::string_view completion, char gold_letter);

// MATH-500. `gold` is the data set's `answer` field (LaTeX). Extraction (`method`): "boxed", the
// last \boxed{}, \fbox{}, \framebox{} (also `\boxed {`), brace-balanced to 256 levels; else
// "final_statement": the last "answer is/are/was/would be", "answer:", "answer =" or "Final
// Answer" heading line (any case, markdown around the words: "**Final Answer:** 7", "The answer:
// 12 apples"), or a later "the result/solution/value is X" when its sentence ends the text; the
// answer is the rest of that sentence (math spans kept whole, so "$\frac{1}{2}$. I hope it is
// correct." gives \frac{1}{2}), without a trailing clause (", which ...", " because ..."); never
// the last number of the text. Both sides are then normalized:
//   - Unicode math as LaTeX: √ ∛ (a radicand of digits braced: √12 is \sqrt{12}), superscript
//     and subscript digits (x² is x^{2}, 52₈ is 52_{8}), ½-style vulgar fractions (2½ is the mixed
//     number 2\frac{1}{2}), π × ÷ · − ± ≤ ≥ ≠ ∞ ∪ ∈ °, digits with a combining overline, Unicode
//     spaces;
//   - thousands separators: "{,}" and ",\!" before three digits, commas inside a brace group
//     holding one grouped number (\frac{3,600}{7}), and every comma of an answer without brackets
//     when all of them separate thousands (3,600\pi); a tuple, interval or list keeps its commas;
//   - repeating decimals as exact values: 0.\overline{3}, 0.1\overline{6}, \bar{3}, 0.(3),
//     0.\dot{3} and 0.\dot{1}4\dot{2}, and "0.1666..." (\ldots, \dots, …) when the tail visibly
//     repeats (a period of at most 6 digits seen twice, one digit three times); 0.33 stays a
//     rounded decimal;
//   - units after a value: trailing words ("12 square meters", "3 hours", "60 miles per hour",
//     "12 apples"), abbreviations (cm, ft, kg, mph, ...), one-letter SI symbols when spaced from
//     the number ("12 m^2", 12\text{ m}^2), a unit power; degree signs, percent, dollar signs;
//   - wrappers (\text, \mathbf, \textcolor, \underline, \displaystyle, enclosing braces), spacing
//     commands, \left/\right, \dfrac, relations in one spelling (\leq, <=, ≤ are \le), "x =" and
//     "x \in" prefixes, mixed numbers, matrices as tuples; an inequality chain around one
//     variable is the interval it denotes (x \ge 2 is [2,\infty)); a base subscript must match
//     when both sides have one.
// Equal when the strings are equal; else two equations are equal when one is the other
// rearranged or scaled (x - 2y = 0 and y = x/2, numerically: f - g of one a non-zero constant
// multiple of the other's), compared before "y =" prefixes are dropped; else tuples, intervals
// and vectors are compared element-wise in order, unordered lists ("3, 5, 7", "\pm", unions) in
// any order, and each pair of scalars (fractions, radicals, pi, powers, i, one-letter variables,
// implicit products) is decided so:
//   1. numerically: the complex values at three fixed points for the variables (relative
//      tolerance 1e-9; exponents at most 64). "Different" here is final.
//   2. symbolically, with GiNaC: decimals as exact rationals, radicals of rationals written over
//      primes (sqrt(12) = 2 sqrt(3)), then normal(expand(a - b)). 0 is equal (x^2-1 and
//      (x-1)(x+1), 2^{100} and its 31 digits, 0.\overline{3} and 1/3); an exact non-zero number is
//      different, overriding a numeric "equal" (2^{64}+1 against 2^{64}, 0.3333333333 against
//      1/3, 20-digit integers); anything else (nested radicals, \infty, words) leaves the numeric
//      verdict.
//   Time limit: GiNaC cannot be interrupted, so each side is bounded before any algebra starts
//   (math_symbolic.h: at most 1000 characters, 400 nodes, 64 levels of nesting, constant exponents
//   up to 10^4, an estimated 1000 terms after expansion and 20000 bits per exact number); over a
//   bound it is "not comparable" and the numeric verdict stands. Within the bounds a comparison
//   measured at most about 25 ms ((x+y)^{990}), MATH answers microseconds; GiNaC calls are
//   serialized by one mutex (its reference counts are not thread-safe).
// A multiple of the identity written with \mathbf{I} ("-\mathbf{I}") against a square pmatrix gold
// is compared entry by entry (the multiple on the diagonal, 0 elsewhere). Notation neither check
// can evaluate (words, other matrix names) is equal only as a string.
Verdict ScoreMath(std::string_view completion, std::string_view gold);

// MATH-500 as the reference scorer grades it (--upstream-compat; Liquid4All/pipette-scores
// d93e2e1 with the PRM800K grader), its known faults included. After upstream's own thinking-tag
// removal (as StripThinking, but an orphan closing tag cuts through the first one, GPT-OSS's
// "assistantfinal" is the first and case-sensitive, one trailing <|end|>/<|return|>): the last
// \boxed{}/\fbox{}/\framebox{} whose content has at most one inner brace level (a nested box is
// skipped, `\boxed {` is not matched), else the last number of the text (so "checked 2 ways"
// grades 2); nothing: method "failed", not parsed. Then "prm800k" when the Hendrycks MATH
// normalizations (\text{} unwrapped, \left/\right, \dfrac, degrees, units after "\text{ ",
// "k =" prefixes, \frac12 and a/b forms) are equal, or the PRM800K normalizations (units and
// wrappers dropped, LaTeX rendered as text as pylatexenc does, mixed numbers, lower case) are
// equal, or element by element (tuples and intervals with the same brackets) the values are
// equal: reduced fractions as strings, an integer only to an integer, else the difference
// evaluated numerically at three points where sympy would simplify it (at most two letters, no
// "^{", no two-digit exponents). Else "robust_boxed" when the leading integers (or the floats)
// of both sides are equal (3.2 is accepted for 3.21); else "no_match". rule_set is
// kMathUpstreamRuleSet.
inline constexpr std::string_view kMathUpstreamRuleSet = "upstream-math/d93e2e1";
Verdict ScoreMathUpstream(std::string_view completion, std::string_view gold);

// ---- IFBench (pipette-ifbench/1) -------------------------------------------------------------
//
// The 58 instruction checkers of IFBench (allenai/IFBench db69a6f, ifbench/instructions.py),
// reimplemented from their behaviour (../shared/docs/reference/ifbench-checkers.md), with NLTK's
// Punkt sentence splitter, Treebank word tokenizer and averaged-perceptron tagger, its English
// stopwords, syllapy's syllable counts and the emoji package's table rebuilt over the third-party
// model data the user provides beside the data set (ifbench/nlp/, SHA-256 checked by the loader).
//
// Strict: an instruction passes when the response is not blank and its checker passes on the raw
// response. Loose: when its checker passes on any of the 8 variants of upstream (the response,
// with its first and/or last line dropped, with every `*` deleted), blank variants skipped.
// Prompt level: every instruction passes. Pipette's `correct` is loose prompt level.
inline constexpr std::string_view kIfBenchRuleSet = "pipette-ifbench/1";

enum class IfBenchProfile {
  kUpstream,  // upstream's verdicts, its quirks included (a crash of custom:csv_quotes on an
              // empty field is a failed instruction, never an abort)
  kFixed,     // the quirks listed in ifbench-checkers.md section 6 corrected
};

struct IfBenchVerdict {
  std::vector<bool> strict;  // one verdict per instruction, in the data set's order
  std::vector<bool> loose;
  bool prompt_strict = false;  // all of strict
  bool prompt_loose = false;   // all of loose: the sample's `correct`
};

// One of the files IfBenchScorer reads: its path below the nlp/ folder, the SHA-256 of the file
// as stored, and whether it is stored gzip-compressed (the loader decompresses it).
struct IfBenchDataFile {
  std::string path;
  std::string sha256;
  bool gzip = false;
};
const std::vector<IfBenchDataFile>& IfBenchDataFiles();

// Checks one sample's gold as Score reads it (shape, instruction ids, each instruction's kwargs),
// without the model data: the data-set loader calls it so that a bad data file is refused at
// load time, naming its line. Errors: as Score's gold errors.
Status CheckIfBenchGold(std::string_view gold);

// Immutable once built; Score is thread-safe. Copies share the parsed data.
class IfBenchScorer {
 public:
  // `files`: path (as IfBenchDataFiles names it) -> contents, decompressed. Errors: a file
  // missing or not of its format (one line naming it).
  static Result<IfBenchScorer> FromFiles(const std::unordered_map<std::string, std::string>& files);

  // `gold`: the sample's gold as the data-set loader builds it, the compact JSON
  // {"instruction_id_list": [...], "kwargs": [...]} (null kwargs are ignored). `response` is
  // checked as given (the eval strips thinking tags and white space first). Errors, one line: the
  // gold is not of that shape, an unknown instruction id, a kwarg missing or of the wrong type.
  // Any response gets a verdict: text that is not UTF-8 is decoded with U+FFFD replacements, and
  // the cost is linear in its length.
  Result<IfBenchVerdict> Score(std::string_view gold, std::string_view response,
                               IfBenchProfile profile = IfBenchProfile::kUpstream) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace pipette::scorers
