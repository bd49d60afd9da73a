// Deterministic, model-blind scorers for the quality evals (DESIGN.md 7, docs evals.md 3).
//
// A scorer is a pure function of one completion's text and the sample's gold answer, which the
// caller looks up by sample id in the data set (the scorer never sees the question, the options or
// the model). Same input, same verdict, on every machine: no randomness, no clock, no globals.
// Thread-safe: the functions share no state. Any byte string is accepted, including text that is
// not UTF-8, 1 MB long or pathologically nested: the cost is linear in the completion's length
// (nesting is capped), and such input gets a verdict, never a crash or a hang.
#pragma once

#include <string>
#include <string_view>

namespace pipette::scorers {

// Versioned rule sets, recorded with every verdict. A change to any rule that can change a verdict
// bumps the version.
inline constexpr std::string_view kGpqaRuleSet = "pipette-gpqa/1";
inline constexpr std::string_view kMathRuleSet = "pipette-math/2";
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
// "final_statement", the rest of the line after the last "answer is" / "answer:" ("The answer is
// X", "Final answer: X", "**Answer:** X"); never the last number of the text. Both sides are then
// normalized: wrappers (\text, \mathbf, \textcolor, \underline, \displaystyle, enclosing braces),
// spacing commands, \left/\right, \dfrac, degree signs, percent, dollar signs, unit words, "x ="
// and "x \in" prefixes, Unicode π √ − ∞ ∪, mixed numbers, matrices as tuples; a base subscript
// must match when both sides have one. Equal when the strings are equal; else tuples, intervals
// and vectors are compared element-wise in order, unordered lists ("3, 5, 7", "\pm", unions) in
// any order, equations up to a non-zero factor (numerically), and each pair of scalars
// (fractions, radicals, pi, powers, i, one-letter variables, implicit products) is decided so:
//   1. numerically: the complex values at three fixed points for the variables (relative
//      tolerance 1e-9; exponents at most 64). "Different" here is final.
//   2. symbolically, with GiNaC: decimals as exact rationals, radicals of rationals written over
//      primes (sqrt(12) = 2 sqrt(3)), then normal(expand(a - b)). 0 is equal (x^2-1 and
//      (x-1)(x+1), 2^{100} and its 31 digits); an exact non-zero number is different, overriding
//      a numeric "equal" (2^{64}+1 against 2^{64}, 0.3333333333 against 1/3, 20-digit integers);
//      anything else (nested radicals, \infty, words) leaves the numeric verdict.
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

}  // namespace pipette::scorers
