// Tests of the scorers: unit cases, hostile input, and agreement with the hand-derived verdicts
// of the shared corpus (../shared/data/evals/scoring, skipped with the reason when absent).
#include "pipette/scorers.h"
#include "tests/support/scoring_corpus.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pipette::scorers {
namespace {

const std::string kScoringDir = pipette::testing::ScoringDir();

#define SKIP_WITHOUT_CORPUS(file)                                                             \
  if (!std::filesystem::exists(kScoringDir + "/" file)) {                                     \
    GTEST_SKIP() << pipette::testing::NeedData("the scorer verdict corpus");                \
  }

TEST(StripThinking, RemovesBlocksOrphansAndMarkers) {
  EXPECT_EQ(StripThinking("<think>x</think> A"), "A");
  EXPECT_EQ(StripThinking("<THINK>x</THINK>\nB <think>y</think>C"), "B C");
  EXPECT_EQ(StripThinking("reasoning </think> final"), "final");
  EXPECT_EQ(StripThinking("ok <think> truncated"), "ok");
  EXPECT_EQ(StripThinking("[THINK]a[/THINK]b"), "b");
  EXPECT_EQ(StripThinking("analysis blah assistantfinalThe end<|return|>"), "The end");
  EXPECT_EQ(StripThinking("  x <|end|>"), "x");
}

TEST(Gpqa, Ladder) {
  EXPECT_EQ(ScoreGpqa("c", 'C').method, "single_letter");
  EXPECT_TRUE(ScoreGpqa("Answer: A\nwait\nAnswer: C", 'C').correct);
  EXPECT_TRUE(ScoreGpqa("**Answer:** c", 'C').correct);
  EXPECT_TRUE(ScoreGpqa("so $\\boxed{\\text{(c)}}$", 'C').correct);
  EXPECT_EQ(ScoreGpqa("the answer is a bit subtle. The answer is (C).", 'C').extracted, "C");
  EXPECT_FALSE(ScoreGpqa("more about the DNA sample is needed.", 'A').parsed);
  EXPECT_FALSE(ScoreGpqa("It could be B or C, I'm not sure.", 'C').parsed);
  EXPECT_EQ(ScoreGpqa("Answer: Both", 'B').method, "none");
  EXPECT_EQ(ScoreGpqa("x", 'A').rule_set, kGpqaRuleSet);
}

TEST(Gpqa, HostileInputIsFast) {
  const std::string huge(1 << 20, 'A');
  std::string braces = "\\boxed";
  for (int i = 0; i < 100000; ++i) braces += '{';
  const std::string binary =
      "Answer: \xff\xfe\x00C"
      "\x80";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ScoreGpqa(huge, 'A').parsed);
  EXPECT_FALSE(ScoreGpqa(braces, 'A').parsed);
  ScoreGpqa(binary, 'C');
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(Math, ExtractionAndEquivalence) {
  EXPECT_EQ(ScoreMath("so $\\boxed{\\frac{3\\sqrt{3}}{4}}$.", "x").extracted,
            "\\frac{3\\sqrt{3}}{4}");
  EXPECT_TRUE(ScoreMath("$\\boxed {p - q}$", "-q+p").correct);
  EXPECT_EQ(ScoreMath("\\boxed{1} then \\fbox{2}", "2").method, "boxed");
  EXPECT_TRUE(ScoreMath("\\boxed{1} then \\fbox{2}", "2").correct);
  EXPECT_TRUE(ScoreMath("Final answer: 14/3", "\\frac{14}{3}").correct);
  EXPECT_EQ(ScoreMath("Final answer: 14/3", "1").method, "final_statement");
  EXPECT_FALSE(ScoreMath("\\boxed{3.2}", "3.21").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{70}", "70\\sqrt{2}").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{1.732}", "\\sqrt{3}").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{6+5i}", "6-5i").correct);
  EXPECT_TRUE(ScoreMath("\\boxed{\\sqrt{117}}", "3\\sqrt{13}").correct);
  EXPECT_TRUE(
      ScoreMath("\\boxed{(3, \\infty) \\cup (-\\infty, 2)}", "(-\\infty, 2) \\cup (3, \\infty)")
          .correct);
  EXPECT_FALSE(ScoreMath("\\boxed{(2,1)}", "(1,2)").correct);
  EXPECT_TRUE(ScoreMath("\\boxed{7, 5, 3}", "3, 5, 7").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{52_{10}}", "52_8").correct);
  EXPECT_TRUE(ScoreMath("\\boxed{25\\%}", "\\frac14").correct);
  EXPECT_FALSE(ScoreMath("I checked it 2 ways.", "2").parsed);
  EXPECT_FALSE(ScoreMath("<think>\\boxed{2}", "2").parsed);
  EXPECT_EQ(ScoreMath("x", "2").rule_set, kMathRuleSet);
}

TEST(Math, HostileInputIsFast) {
  std::string deep = "\\boxed{";
  for (int i = 0; i < 100000; ++i) deep += "{(";
  std::string deep_ok = "\\boxed{";
  for (int i = 0; i < 200; ++i) deep_ok += "\\frac{1}{";
  deep_ok += '2';
  deep_ok.append(201, '}');
  std::string parens = "\\boxed{";
  parens.append(5000, '(').append("1").append(5000, ')').append("}");
  const std::string huge(1 << 20, '9');
  const std::string huge_statement = "The answer is " + std::string(1 << 20, '(');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ScoreMath(deep, "1").correct);
  EXPECT_FALSE(ScoreMath(deep_ok, "1").correct);
  EXPECT_FALSE(ScoreMath(parens, "2").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{2^{2^{2^{2^{99999}}}}}", "4").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{10^{100000000}}", "1").correct);
  EXPECT_FALSE(ScoreMath(huge, "1").parsed);
  EXPECT_FALSE(ScoreMath(huge_statement, "1").correct);
  ScoreMath("\\boxed{\xff\xfe\x80}", "1");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(GpqaCorpus, AgreesWithTrueVerdicts) {
  SKIP_WITHOUT_CORPUS("gpqa_verdicts.jsonl.gz");
  const auto records = pipette::testing::ReadScoringCorpus("gpqa_verdicts.jsonl.gz");
  ASSERT_GT(records.size(), 300u);
  int agree = 0;
  for (const auto& r : records) {
    const std::string gold = r["correct_letter"];
    const Verdict v = ScoreGpqa(r["completion"].get<std::string>(), gold[0]);
    if (v.correct == r["true_is_correct"].get<bool>()) {
      ++agree;
    } else {
      ADD_FAILURE() << r["completion_id"] << " " << r["kind"] << "/" << r["variant"]
                    << ": extracted '" << v.extracted << "' by " << v.method;
    }
  }
  const double rate = static_cast<double>(agree) / records.size();
  std::printf("GPQA agreement with true_is_correct: %d/%zu = %.4f\n", agree, records.size(), rate);
  EXPECT_GE(rate, 0.995);
}

TEST(GpqaCorpus, UpstreamCompatAgreesWithUpstreamVerdicts) {
  SKIP_WITHOUT_CORPUS("gpqa_verdicts.jsonl.gz");
  const auto records = pipette::testing::ReadScoringCorpus("gpqa_verdicts.jsonl.gz");
  ASSERT_GT(records.size(), 300u);
  int agree = 0;
  int same_rule = 0;
  for (const auto& r : records) {
    const std::string gold = r["correct_letter"];
    const Verdict v = ScoreGpqaUpstream(r["completion"].get<std::string>(), gold[0]);
    if (v.correct == r["upstream_is_correct"].get<bool>()) {
      ++agree;
    } else {
      ADD_FAILURE() << r["completion_id"] << " " << r["kind"] << "/" << r["variant"]
                    << ": extracted '" << v.extracted << "' by " << v.method;
    }
    const std::string upstream_rule =
        r["upstream_pattern"].is_null() ? "none" : r["upstream_pattern"].get<std::string>();
    same_rule += v.method == upstream_rule ? 1 : 0;
  }
  const double rate = static_cast<double>(agree) / records.size();
  std::printf(
      "GPQA --upstream-compat agreement with upstream_is_correct: %d/%zu = %.4f (same rule "
      "%d)\n",
      agree, records.size(), rate, same_rule);
  EXPECT_GE(rate, 0.99);
  EXPECT_EQ(ScoreGpqaUpstream("the answer is a bit subtle", 'C').extracted, "A");
  EXPECT_FALSE(ScoreGpqaUpstream("so $\\boxed{c}$", 'C').correct);
}

TEST(MathCorpus, AgreesWithTrueVerdicts) {
  SKIP_WITHOUT_CORPUS("math500_verdicts.jsonl.gz");
  const auto records = pipette::testing::ReadScoringCorpus("math500_verdicts.jsonl.gz");
  ASSERT_GT(records.size(), 900u);
  int agree = 0;
  for (const auto& r : records) {
    const Verdict v = ScoreMath(r["completion"].get<std::string>(), r["gold"].get<std::string>());
    if (v.correct == r["true_is_correct"].get<bool>()) {
      ++agree;
    } else {
      std::printf("MATH differs: %s %s/%s gold '%s' extracted '%s' by %s, true %d\n",
                  r["completion_id"].get<std::string>().c_str(),
                  r["kind"].get<std::string>().c_str(), r["variant"].get<std::string>().c_str(),
                  r["gold"].get<std::string>().c_str(), v.extracted.c_str(), v.method.c_str(),
                  r["true_is_correct"].get<bool>());
    }
  }
  const double rate = static_cast<double>(agree) / records.size();
  std::printf("MATH agreement with true_is_correct: %d/%zu = %.4f\n", agree, records.size(), rate);
  EXPECT_GE(rate, 0.995);
}

TEST(MathCorpus, UpstreamCompatAgreesWithUpstreamVerdicts) {
  SKIP_WITHOUT_CORPUS("math500_verdicts.jsonl.gz");
  const auto records = pipette::testing::ReadScoringCorpus("math500_verdicts.jsonl.gz");
  ASSERT_GT(records.size(), 900u);
  int agree = 0;
  int same_method = 0;
  int same_extracted = 0;
  for (const auto& r : records) {
    const Verdict v =
        ScoreMathUpstream(r["completion"].get<std::string>(), r["gold"].get<std::string>());
    EXPECT_EQ(v.rule_set, kMathUpstreamRuleSet);
    const std::string upstream_extracted =
        r["upstream_extracted"].is_null() ? "" : r["upstream_extracted"].get<std::string>();
    same_method += v.method == r["upstream_method"].get<std::string>() ? 1 : 0;
    same_extracted += v.extracted == upstream_extracted ? 1 : 0;
    if (v.correct == r["upstream_is_correct"].get<bool>()) {
      ++agree;
    } else {
      std::printf("MATH --upstream-compat differs: %s gold '%s' extracted '%s' by %s, "
                  "upstream %s\n",
                  r["completion_id"].get<std::string>().c_str(),
                  r["gold"].get<std::string>().c_str(), v.extracted.c_str(), v.method.c_str(),
                  r["upstream_method"].get<std::string>().c_str());
    }
  }
  const double rate = static_cast<double>(agree) / records.size();
  std::printf(
      "MATH --upstream-compat agreement with upstream_is_correct: %d/%zu = %.4f (same method %d, "
      "same extracted %d)\n",
      agree, records.size(), rate, same_method, same_extracted);
  EXPECT_GE(rate, 0.99);
}

TEST(MathUpstream, KnownFaults) {
  // A box with two brace levels is skipped: an earlier box, or the last number, is graded.
  const Verdict nested =
      ScoreMathUpstream("First $\\boxed{7}$, then $\\boxed{\\frac{3\\sqrt{3}}{4}}$.",
                        "\\frac{3\\sqrt{3}}{4}");
  EXPECT_EQ(nested.extracted, "7");
  EXPECT_FALSE(nested.correct);
  // `\boxed {X}` is not matched.
  EXPECT_EQ(ScoreMathUpstream("so $\\boxed {12}$ and 5", "12").extracted, "5");
  // Without a box the last number is graded: "checked 2 ways" gives 2.
  const Verdict last = ScoreMathUpstream("The answer is 5, checked 2 ways.", "2");
  EXPECT_EQ(last.extracted, "2");
  EXPECT_TRUE(last.correct);
  // robust_boxed compares leading integers only.
  const Verdict near = ScoreMathUpstream("$\\boxed{3.2}$", "3.21");
  EXPECT_TRUE(near.correct);
  EXPECT_EQ(near.method, "robust_boxed");
  EXPECT_TRUE(ScoreMathUpstream("$\\boxed{70}$", "70 \\sqrt{2}").correct);
  // Nothing to extract.
  const Verdict none = ScoreMathUpstream("<think>never closed $\\boxed{3}$", "3");
  EXPECT_EQ(none.method, "failed");
  EXPECT_FALSE(none.parsed);
  // Upstream's tag removal cuts through the first orphan closing tag, not the last.
  EXPECT_EQ(ScoreMathUpstream("$\\boxed{5}$ </think> $\\boxed{7}$ </think> no box", "7").method,
            "prm800k");
  // Equal forms the grader accepts, and one it rejects (a different order of roots).
  EXPECT_EQ(ScoreMathUpstream("$\\boxed{\\dfrac{3}{4}}$", "\\frac34").method, "prm800k");
  EXPECT_TRUE(ScoreMathUpstream("$\\boxed{4 \\frac{2}{3}}$", "\\frac{14}{3}").correct);
  EXPECT_TRUE(ScoreMathUpstream("$\\boxed{2(k+1)}$", "2k+2").correct);
  EXPECT_TRUE(ScoreMathUpstream("$\\boxed{(2, \\infty)}$", "(2,\\infty)").correct);
  EXPECT_FALSE(ScoreMathUpstream("$\\boxed{7, 5, 3}$", "3, 5, 7").correct);
}

// Found by fuzz/fuzz_scorers: an underscore first in a/b read the byte before the text (Python's
// int("_1") is an error: no fraction made of it).
TEST(MathUpstream, AnUnderscoreFirstIsNoNumber) {
  EXPECT_FALSE(ScoreMathUpstream("The answer is \\boxed{_1/2}", "\\frac{1}{2}").correct);
  EXPECT_TRUE(ScoreMathUpstream("The answer is \\boxed{1_0/2}", "\\frac{10}{2}").correct);
}

TEST(MathUpstream, HostileInputIsLinear) {
  std::string big(1 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 97) big[i] = '{';
  const std::string deep = "\\boxed{" + std::string(100000, '{') + "1" + std::string(100000, '}');
  std::string boxes;
  while (boxes.size() < (1 << 20)) boxes += "\\boxed{\\frac{1}{";
  std::string fracs = "\\boxed{";
  while (fracs.size() < (1 << 20)) fracs += "\\sqrt{\\frac";
  fracs += "}";
  const std::string power = "$\\boxed{2^{99999999999}}$";
  const std::string parens = "\\boxed{" + std::string(200000, '(') + "}";
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& text : {big, deep, boxes, fracs, power, parens}) {
    const Verdict v = ScoreMathUpstream(text, "1");
    EXPECT_EQ(v.rule_set, kMathUpstreamRuleSet);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace pipette::scorers

// Symbolic equivalence (GiNaC, math_symbolic.h): exact where the numeric check is approximate or
// cannot evaluate, never making an answer right that the numeric check calls different.
#include "scorers/math_symbolic.h"

namespace pipette::scorers {
namespace {

TEST(MathSymbolic, ExactVerdicts) {
  EXPECT_EQ(SymbolicallyEqual("\\frac{\\sqrt{6}}{3}", "\\sqrt{\\frac{2}{3}}"), true);
  EXPECT_EQ(SymbolicallyEqual("\\sqrt{12}", "2\\sqrt{3}"), true);
  EXPECT_EQ(SymbolicallyEqual("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt2}{2}"), true);
  EXPECT_EQ(SymbolicallyEqual("\\sqrt{-4}", "2i"), true);
  EXPECT_EQ(SymbolicallyEqual("\\sqrt[3]{\\frac{-27}{8}}", "-\\frac{3}{2}"), std::nullopt);
  EXPECT_EQ(SymbolicallyEqual("x^2-1", "(x-1)(x+1)"), true);
  EXPECT_EQ(SymbolicallyEqual("\\frac{x^2-1}{x-1}", "x+1"), true);
  EXPECT_EQ(SymbolicallyEqual("\\frac{\\pi}{2}", "0.5\\pi"), true);
  EXPECT_EQ(SymbolicallyEqual("i^2", "-1"), true);
  EXPECT_EQ(SymbolicallyEqual("2^{100}", "1267650600228229401496703205376"), true);
  EXPECT_EQ(SymbolicallyEqual("0.33", "\\frac13"), false);
  EXPECT_EQ(SymbolicallyEqual("2^{64}+1", "18446744073709551616"), false);
  EXPECT_EQ(SymbolicallyEqual("6+5i", "6-5i"), false);
  EXPECT_EQ(SymbolicallyEqual("x^2+1", "x^2-1"), false);
  EXPECT_EQ(SymbolicallyEqual("x+1", "x"), false);
  // Undecided: GiNaC does not denest radicals; infinity and words are not its grammar.
  EXPECT_EQ(SymbolicallyEqual("\\sqrt{3+2\\sqrt{2}}", "1+\\sqrt{2}"), std::nullopt);
  EXPECT_EQ(SymbolicallyEqual("\\infty", "\\infty"), std::nullopt);
  // No value: undefined, never an exception out of GiNaC (which leaked the power it had made).
  EXPECT_EQ(SymbolicallyEqual("0^0", "1"), std::nullopt);
  EXPECT_EQ(SymbolicallyEqual("0^{-2}", "x"), std::nullopt);
  EXPECT_EQ(SymbolicallyEqual("\\frac{1}{0}", "x"), std::nullopt);
  EXPECT_EQ(SymbolicallyEqual("\\frac{x}{x-x}", "1"), std::nullopt);
  EXPECT_EQ(SymbolicallyEqual("\\sqrt[0]{4}", "2"), std::nullopt);
  EXPECT_EQ(SymbolicallyEqual("0^{2}", "0"), true);
  EXPECT_EQ(SymbolicallyEqual("\\frac{1}{0}", "1"), std::nullopt);
}

TEST(MathSymbolic, ScoreMathVerdicts) {
  EXPECT_TRUE(ScoreMath("\\boxed{\\frac{\\sqrt{6}}{3}}", "\\sqrt{\\frac{2}{3}}").correct);
  EXPECT_TRUE(ScoreMath("\\boxed{(x-1)(x+1)}", "x^2-1").correct);
  EXPECT_TRUE(ScoreMath("\\boxed{2^{100}}", "1267650600228229401496703205376").correct);
  EXPECT_TRUE(
      ScoreMath("\\boxed{(2^{100}, \\sqrt{12})}", "(1267650600228229401496703205376, 2\\sqrt{3})")
          .correct);
  EXPECT_TRUE(ScoreMath("\\boxed{-\\sqrt{8}, 2\\sqrt2}", "\\pm 2\\sqrt{2}").correct);
  EXPECT_TRUE(ScoreMath("\\boxed{2\\frac{1}{2}}", "\\frac{5}{2}").correct);  // a mixed number
  // Rounding and near misses stay wrong (the numeric check's tolerance accepted the last three).
  EXPECT_FALSE(ScoreMath("\\boxed{0.33}", "\\frac13").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{0.3333333333}", "\\frac{1}{3}").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{2^{64}+1}", "18446744073709551616").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{12345678901234567891}", "12345678901234567890").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{2^{100}+1}", "1267650600228229401496703205376").correct);
  EXPECT_EQ(ScoreMath("\\boxed{1}", "1").rule_set, "pipette-math/3");
}

TEST(MathSymbolic, PathologicalInputIsBounded) {
  std::string long_sum = "\\boxed{1";
  while (long_sum.size() < (1 << 20)) long_sum += "+1";
  long_sum += "}";
  std::string nested = "\\boxed{";
  nested.append(10000, '{').append("2").append(10000, '}').append("}");
  std::string binomials;
  for (char c = 'a'; c <= 'z'; ++c) binomials += std::string("(") + c + "+1)";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ScoreMath(long_sum, "524288").correct);
  EXPECT_FALSE(ScoreMath(nested, "3").correct);
  EXPECT_FALSE(ScoreMath("\\boxed{2^{2^{2^{99}}}}", "4").correct);
  EXPECT_EQ(SymbolicallyEqual("2^{2^{2^{99}}}", "4"), std::nullopt);  // exponent over the cap
  EXPECT_EQ(SymbolicallyEqual("99^{9999}", "1"), std::nullopt);       // over kSymbolicMaxBits
  EXPECT_EQ(SymbolicallyEqual("(x+y+z+w)^{60}", "1"), std::nullopt);  // over kSymbolicMaxTerms
  EXPECT_EQ(SymbolicallyEqual(binomials, "1"), std::nullopt);         // 2^26 terms expanded
  EXPECT_EQ(SymbolicallyEqual("(x+1)^{100000}", "x"), std::nullopt);
  // Just under the caps the work is still decided, quickly.
  EXPECT_EQ(SymbolicallyEqual("2^{10000}", "4^{5000}"), true);
  EXPECT_EQ(SymbolicallyEqual("(x+1)^{40}-(x+1)^{40}", "0"), true);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace pipette::scorers

namespace pipette::scorers {
namespace {

TEST(MathSymbolic, IdentityMatrixMultiple) {
  const std::string minus_identity = "\\begin{pmatrix} -1 & 0 \\\\ 0 & -1 \\end{pmatrix}";
  EXPECT_TRUE(ScoreMath("\\boxed{-\\mathbf{I}}", minus_identity).correct);
  EXPECT_FALSE(ScoreMath("\\boxed{\\mathbf{I}}", minus_identity).correct);
  EXPECT_FALSE(
      ScoreMath("\\boxed{-\\mathbf{I}}", "\\begin{pmatrix} -1 & 1 \\\\ 0 & -1 \\end{pmatrix}")
          .correct);
  EXPECT_TRUE(ScoreMath("\\boxed{\\frac{1}{2}\\mathbf{I}}",
                        "\\begin{pmatrix} 1/2 & 0 & 0 \\\\ 0 & 0.5 & 0 \\\\ 0 & 0 & \\frac12 "
                        "\\end{pmatrix}")
                  .correct);
  EXPECT_FALSE(
      ScoreMath("\\boxed{-\\mathbf{I}}", "\\begin{pmatrix} -1 \\\\ 0 \\\\ 0 \\end{pmatrix}")
          .correct);  // not square
}

}  // namespace
}  // namespace pipette::scorers

// pipette-math/3: answers a person accepts, by family (Unicode math, thousands separators,
// repeating decimals, unit words, rearranged equations, plain-text final answers), each with
// wrong answers of the same shape that must stay wrong.
namespace pipette::scorers {
namespace {

bool Accepts(std::string_view completion, std::string_view gold) {
  return ScoreMath(completion, gold).correct;
}

TEST(MathRules3, UnicodeMath) {
  EXPECT_TRUE(Accepts("Final answer: 3\u221a3/4", "\\frac{3\\sqrt{3}}{4}"));
  EXPECT_TRUE(Accepts("$\\boxed{\u221a12}$", "2\\sqrt{3}"));  // the radicand is 12, not 1
  EXPECT_TRUE(Accepts("The answer is 2\u03c0.", "2\\pi"));
  EXPECT_TRUE(Accepts("\\boxed{x\u00b2 + 2x + 1}", "(x+1)^2"));
  EXPECT_TRUE(Accepts("\\boxed{2\u00b3 \u00d7 3}", "24"));
  EXPECT_TRUE(Accepts("\\boxed{3\u00b7\u221a2}", "3\\sqrt{2}"));
  EXPECT_TRUE(Accepts("\\boxed{\u22125}", "-5"));
  EXPECT_TRUE(Accepts("\\boxed{12 \u00f7 16}", "\\frac34"));
  EXPECT_TRUE(Accepts("\\boxed{2\u00bd}", "\\frac{5}{2}"));
  EXPECT_TRUE(Accepts("\\boxed{\u00be}", "0.75"));
  EXPECT_TRUE(Accepts("\\boxed{10\u207b\u00b9}", "\\frac{1}{10}"));
  EXPECT_TRUE(Accepts("\\boxed{1 \u00b1 \u221a19}", "1 \\pm \\sqrt{19}"));
  EXPECT_TRUE(Accepts("\\boxed{52\u2088}", "52_8"));
  EXPECT_TRUE(Accepts("\\boxed{x \u2265 2}", "[2,\\infty)"));
  EXPECT_TRUE(Accepts("\\boxed{\u22122 \u2264 x \u2264 7}", "x \\in [-2,7]"));
  EXPECT_TRUE(Accepts("\\boxed{-2 \\leq x < 7}", "[-2, 7)"));
  EXPECT_TRUE(
      Accepts("\\boxed{(\u2212\u221e, 2) \u222a (3, \u221e)}", "(-\\infty, 2) \\cup (3, \\infty)"));
  EXPECT_TRUE(Accepts("\\boxed{120\u00b0}", "120^\\circ"));
  // Wrong answers written the same way stay wrong.
  EXPECT_FALSE(Accepts("$\\boxed{\u221a12}$", "2"));
  EXPECT_FALSE(Accepts("\\boxed{2\u221a3}", "3\\sqrt{2}"));
  EXPECT_FALSE(Accepts("\\boxed{x\u00b2}", "2x"));
  EXPECT_FALSE(Accepts("\\boxed{\u2153}", "0.33"));
  EXPECT_FALSE(Accepts("\\boxed{x > 2}", "[2,\\infty)"));
  EXPECT_FALSE(Accepts("\\boxed{x \u2264 2}", "[2,\\infty)"));
  EXPECT_FALSE(Accepts("\\boxed{52\u2087}", "52_8"));
  EXPECT_FALSE(Accepts("\\boxed{1\u00bd}", "\\frac{5}{2}"));
}

TEST(MathRules3, ThousandsSeparators) {
  EXPECT_TRUE(Accepts("\\boxed{1{,}000{,}000}", "1000000"));
  EXPECT_TRUE(Accepts("\\boxed{\\frac{3,600}{7}}", "\\frac{3600}{7}"));
  EXPECT_TRUE(Accepts("\\boxed{\\dfrac{3{,}600}{7}}", "\\frac{3600}{7}"));
  EXPECT_TRUE(Accepts("\\boxed{10,\\!000}", "10000"));
  EXPECT_TRUE(Accepts("\\boxed{10080}", "10,\\!080"));
  EXPECT_TRUE(Accepts("\\boxed{3{,}600\\pi}", "3600\\pi"));
  EXPECT_TRUE(Accepts("\\boxed{2,500\\sqrt{2}}", "2500\\sqrt2"));
  EXPECT_TRUE(Accepts("\\boxed{\\$1,250.50}", "1250.5"));
  EXPECT_TRUE(Accepts("The answer is 58,500 dollars.", "58,500"));
  // Not separators: a decimal comma, a list, a wrong number.
  EXPECT_FALSE(Accepts("\\boxed{1{,}000{,}001}", "1000000"));
  EXPECT_FALSE(Accepts("\\boxed{\\frac{3,600}{7}}", "\\frac{360}{7}"));
  EXPECT_FALSE(Accepts("\\boxed{1{,}5}", "15"));
  EXPECT_FALSE(Accepts("\\boxed{3,60}", "360"));
  EXPECT_FALSE(Accepts("\\boxed{(1,000)}", "1000"));  // a pair (1, 0) is no number
  EXPECT_FALSE(Accepts("\\boxed{10,\\!000}", "1000"));
}

TEST(MathRules3, RepeatingDecimals) {
  EXPECT_TRUE(Accepts("\\boxed{0.\\overline{3}}", "\\frac13"));
  EXPECT_TRUE(Accepts("\\boxed{0.1\\overline{6}}", "\\frac{1}{6}"));
  EXPECT_TRUE(Accepts("\\boxed{0.\\dot{3}}", "\\frac{1}{3}"));
  EXPECT_TRUE(Accepts("\\boxed{0.(3)}", "\\frac{1}{3}"));
  EXPECT_TRUE(Accepts("\\boxed{0.\\overline{142857}}", "\\frac{1}{7}"));
  EXPECT_TRUE(Accepts("\\boxed{1.\\overline{27}}", "\\frac{14}{11}"));
  EXPECT_TRUE(Accepts("\\boxed{0.\\dot{1}4\\dot{2}}", "\\frac{142}{999}"));
  EXPECT_TRUE(Accepts("\\boxed{-0.\\bar{6}}", "-\\frac{2}{3}"));
  EXPECT_TRUE(Accepts("\\boxed{.\\overline{5}}", "\\frac59"));
  EXPECT_TRUE(Accepts("\\boxed{0.3\u0305}", "\\frac13"));  // a combining overline
  EXPECT_TRUE(Accepts("The answer is 0.1666...", "\\frac16"));
  EXPECT_TRUE(Accepts("\\boxed{0.142857142857\\ldots}", "\\frac17"));
  EXPECT_TRUE(Accepts("\\boxed{\\frac{5}{9}}", "0.\\overline{5}"));  // the gold written so
  // Rounded or different repeating decimals stay wrong.
  EXPECT_FALSE(Accepts("\\boxed{0.33}", "\\frac13"));
  EXPECT_FALSE(Accepts("\\boxed{0.167}", "\\frac16"));
  EXPECT_FALSE(Accepts("\\boxed{0.\\overline{3}}", "\\frac{3}{10}"));
  EXPECT_FALSE(Accepts("\\boxed{0.\\overline{16}}", "\\frac16"));
  EXPECT_FALSE(Accepts("\\boxed{0.(3)}", "0.3"));
  EXPECT_FALSE(Accepts("\\boxed{3.14159...}", "\\pi"));
  EXPECT_FALSE(Accepts("\\boxed{0.1\\overline{6}}", "\\frac{16}{99}"));
}

TEST(MathRules3, UnitWords) {
  EXPECT_TRUE(Accepts("\\boxed{12 square meters}", "12\\text{ m}^2"));
  EXPECT_TRUE(Accepts("The answer is 12 m\u00b2.", "12\\text{ m}^2"));
  EXPECT_TRUE(Accepts("\\boxed{12}", "12\\text{ m}^2"));
  EXPECT_TRUE(Accepts("\\boxed{5 cm}", "5"));
  EXPECT_TRUE(Accepts("\\boxed{5\\text{cm}}", "5"));
  EXPECT_TRUE(Accepts("\\boxed{3 hours}", "3"));
  EXPECT_TRUE(Accepts("\\boxed{\\$12.50 dollars}", "\\$12.50"));
  EXPECT_TRUE(Accepts("\\boxed{45 degrees}", "45^\\circ"));
  EXPECT_TRUE(Accepts("\\boxed{60 miles per hour}", "60"));
  EXPECT_TRUE(Accepts("\\boxed{9.8\\,\\text{m/s}^2}", "9.8"));
  EXPECT_TRUE(Accepts("\\boxed{864 sq. in.}", "864 \\mbox{ inches}^2"));
  EXPECT_TRUE(Accepts("\\boxed{\\frac{\\pi}{4} radians}", "\\frac{\\pi}{4}"));
  EXPECT_TRUE(Accepts("Final answer: 40 students", "40"));
  // The number decides; words are not numbers.
  EXPECT_FALSE(Accepts("\\boxed{12 square meters}", "13"));
  EXPECT_FALSE(Accepts("\\boxed{5 cm}", "50"));
  EXPECT_FALSE(Accepts("\\boxed{3 hours}", "180"));
  EXPECT_FALSE(Accepts("\\boxed{6 apples}", "12"));
  EXPECT_FALSE(Accepts("\\boxed{2 x}", "2"));                         // a variable, not a unit
  EXPECT_TRUE(Accepts("\\boxed{\\text{Evelyn}}", "\\text{Evelyn}"));  // words are no units
  EXPECT_FALSE(Accepts("\\boxed{\\text{Devon}}", "\\text{Evelyn}"));
}

TEST(MathRules3, RearrangedEquations) {
  EXPECT_TRUE(Accepts("\\boxed{x - 2y = 0}", "y = \\frac{x}{2}"));
  EXPECT_TRUE(Accepts("\\boxed{2x+4y=8}", "y = -\\frac{x}{2} + 2"));
  EXPECT_TRUE(Accepts("\\boxed{x = 2y}", "y = x/2"));
  EXPECT_TRUE(Accepts("\\boxed{2x - y + 3 = 0}", "y = 2x + 3"));
  EXPECT_TRUE(Accepts("\\boxed{y - 3 = 2x}", "y = 2x + 3"));
  EXPECT_TRUE(Accepts("\\boxed{y = 3 + 2x}", "y = 2x + 3"));
  EXPECT_TRUE(Accepts("\\boxed{-10x + 14y - 22z = 8}", "5x - 7y + 11z + 4 = 0"));
  // Different lines stay different.
  EXPECT_FALSE(Accepts("\\boxed{x + 2y = 0}", "y = x/2"));
  EXPECT_FALSE(Accepts("\\boxed{2x+4y=9}", "y = -\\frac{x}{2} + 2"));
  EXPECT_FALSE(Accepts("\\boxed{y = 2x - 3}", "y = 2x + 3"));
  EXPECT_FALSE(Accepts("\\boxed{2y = x + 3}", "y = 2x + 3"));
  EXPECT_FALSE(Accepts("\\boxed{0 = 0}", "y = 2x + 3"));
}

TEST(MathRules3, PlainTextFinalAnswers) {
  const auto extracted = [](std::string_view completion) {
    return ScoreMath(completion, "0").extracted;
  };
  EXPECT_TRUE(Accepts("Adding them up.\n\nSo the answer is 42.", "42"));
  EXPECT_TRUE(
      Accepts("Therefore, the final answer is $\\frac{1}{2}$. I hope it is correct.", "\\frac12"));
  EXPECT_TRUE(Accepts("**Final Answer:** 7", "7"));
  EXPECT_TRUE(Accepts("## Final Answer\n\n$7$", "7"));
  EXPECT_TRUE(Accepts("The answer: 12 apples", "12"));
  EXPECT_TRUE(Accepts("We divide 3 by 4.\nAfter simplifying, the result is 3/4.", "\\frac34"));
  EXPECT_TRUE(Accepts("The answer is 5 because the other roots cancel.", "5"));
  EXPECT_TRUE(Accepts("The answers are 3 and 5.", "3, 5"));
  EXPECT_TRUE(Accepts("The final answer is\n\\[\n\\frac{3}{4}.\n\\]", "\\frac34"));
  EXPECT_EQ(extracted("The answer is $x = 5$. Plugging it back in checks out."), "$x = 5$");
  EXPECT_EQ(ScoreMath("So the answer is 42.", "42").method, "final_statement");
  // An intermediate statement followed by the real (boxed) answer: the box decides.
  const Verdict boxed = ScoreMath("The answer is 5 so far. Redoing step 2: $\\boxed{7}$", "5");
  EXPECT_EQ(boxed.extracted, "7");
  EXPECT_FALSE(boxed.correct);
  // The last statement decides; a weak cue counts only at the end of the text.
  EXPECT_FALSE(Accepts("The answer is 5. Hmm, no: the answer is 6.", "5"));
  EXPECT_FALSE(Accepts("The answer is 41.", "42"));
  EXPECT_FALSE(Accepts("The answer is 42. Checking it, the result is 41.", "42"));
  EXPECT_EQ(extracted("The answer is 42. Checking it, the result is 41."), "41");
  EXPECT_EQ(extracted("So the result is 3/4. Then we add 5 more."), "");
  // Never the last number of the text, nor a word that is no cue.
  EXPECT_FALSE(ScoreMath("I computed 12 and then 42.", "42").parsed);
  EXPECT_FALSE(ScoreMath("Let me check the answer. It equals 42.", "42").parsed);
  EXPECT_FALSE(ScoreMath("As a result, 42 is what we get.", "42").parsed);
}

TEST(MathRules3, HostileInputIsLinear) {
  const auto repeat = [](std::string_view unit, size_t bytes) {
    std::string s;
    while (s.size() < bytes) s += unit;
    return s;
  };
  const size_t mb = 1 << 20;
  const std::vector<std::string> texts = {
      "\\boxed{" + repeat("\u221a", mb) + "}",
      "\\boxed{" + repeat("\u00b2", mb) + "}",
      "\\boxed{" + repeat("0.\\overline{3}", mb) + "}",
      "\\boxed{" + repeat("0.333", mb) + "...}",
      "\\boxed{" + repeat("1{,}000", mb) + "}",
      "\\boxed{1" + repeat(",000", mb) + "}",
      "\\boxed{" + repeat("{1,000}", mb) + "}",
      "\\boxed{" + repeat("\\text{a}", mb) + "}",
      "\\boxed{" + repeat("\\text{", mb) + "}",
      "\\boxed{" + repeat("\\textcolor{red}{1}", mb) + "}",
      "\\boxed{12" + repeat(" m", mb) + "}",
      "\\boxed{" + repeat("x\\le", mb) + "}",
      "\\boxed{" + repeat("pi ", mb) + "}",
      "\\boxed{" + repeat("\\,", mb) + "}",
      "\\boxed{" + repeat("x=", mb) + "}",
      "The answer is " + repeat("$", mb),
      "The answer is " + repeat("\\[", mb),
      repeat("The answer is ", mb),
      repeat("**Final Answer**\n", mb),
      repeat("the result is 3. ", mb),
      "The answer is " + repeat("0.", mb),
      "The answer is " + repeat("...", mb),
      "\\boxed{" + std::string(10000, '{') + "0.\\overline{3}" + std::string(10000, '}') + "}",
  };
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& text : texts) {
    const Verdict v = ScoreMath(text, "1");
    EXPECT_EQ(v.rule_set, kMathRuleSet);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace pipette::scorers
