// Tests of the IFBench scorer: hand-written cases for each of the 58 checkers (upstream's
// verdicts, quirks included, and the fixed profile's corrections), hostile input, and agreement
// with upstream's own verdicts on the shared corpus (../shared/data/evals/scoring/
// ifbench_verdicts.jsonl.gz, keyed to ../shared/data/evals/ifbench/IFBench_test.jsonl). The model
// data comes from ../shared/data/evals/ifbench/nlp; tests that need it or the corpus are skipped,
// with the reason, when ../shared is absent ($PIPETTE_DATA_DIR names another place:
// tests/support/test_data.h).
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "pipette/scorers.h"
#include "scorers/ifbench/checkers.h"
#include "scorers/ifbench/csv.h"
#include "scorers/ifbench/nlp.h"
#include "scorers/ifbench/test_files.h"
#include "tests/support/test_data.h"

namespace pipette::scorers::ifbench {
namespace {

using test_files::ReadFile;
using test_files::ReadGzip;
using ::pipette::testing::DataDir;
using ::pipette::testing::NeedData;

using json = nlohmann::json;
constexpr Profile kUp = Profile::kUpstream;
constexpr Profile kFix = Profile::kFixed;

// ---- Shared data --------------------------------------------------------------------------------




// A test-only loader (the eval runner has the real one, with the SHA-256 checks): the files
// IfBenchDataFiles() names, read from ../shared and decompressed where stored as gzip.
const IfBenchScorer* Scorer() {
  static const std::unique_ptr<IfBenchScorer> scorer = []() -> std::unique_ptr<IfBenchScorer> {
    std::unordered_map<std::string, std::string> files;
    const std::string dir = DataDir() + "/evals/ifbench/nlp/";
    for (const IfBenchDataFile& f : IfBenchDataFiles()) {
      std::string& content = files[f.path];
      if (!(f.gzip ? ReadGzip(dir + f.path, &content) : ReadFile(dir + f.path, &content))) {
        return nullptr;
      }
    }
    Result<IfBenchScorer> s = IfBenchScorer::FromFiles(files);
    if (!s.ok()) {
      ADD_FAILURE() << s.error().message;
      return nullptr;
    }
    return std::make_unique<IfBenchScorer>(std::move(s).value());
  }();
  return scorer.get();
}

// The parsed NLP data, for calling checkers directly (nullptr when ../shared is absent).
const NlpData* Nlp() {
  static const std::unique_ptr<NlpData> nlp = []() -> std::unique_ptr<NlpData> {
    NlpFiles files;
    const std::string dir = DataDir() + "/evals/ifbench/nlp/";
    for (const IfBenchDataFile& f : IfBenchDataFiles()) {
      std::string key = f.path;
      if (f.gzip) key.resize(key.size() - 3);
      if (!(f.gzip ? ReadGzip(dir + f.path, &files[key]) : ReadFile(dir + f.path, &files[key]))) {
        return nullptr;
      }
    }
    Result<NlpData> data = ParseNlpData(files);
    if (!data.ok()) return nullptr;
    return std::make_unique<NlpData>(std::move(data).value());
  }();
  return nlp.get();
}

#define NEED_NLP()                                                                           \
  if (Nlp() == nullptr) {                                                                    \
    GTEST_SKIP() << NeedData("IFBench's model data");                                      \
  }

// Runs one checker on `text` (UTF-8) with `kwargs`, as the scorer would on one variant. Checkers
// that need no model data run on an empty NlpData.
bool Check(std::string_view id, std::string_view text, const json& kwargs = json::object(),
           Profile profile = kUp) {
  static const NlpData empty;
  const InstructionSpec* spec = FindInstruction(id);
  if (spec == nullptr) {
    ADD_FAILURE() << "unknown id " << id;
    return false;
  }
  Result<Kwargs> kw = ParseKwargs(*spec, kwargs);
  if (!kw.ok()) {
    ADD_FAILURE() << id << ": " << kw.error().message;
    return false;
  }
  const Text t = Decode(text);
  Doc doc(t, Nlp() != nullptr ? *Nlp() : empty);
  return spec->check(doc, kw.value(), profile);
}

bool Fixed(std::string_view id, std::string_view text, const json& kwargs = json::object()) {
  return Check(id, text, kwargs, kFix);
}

std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// ---- Registry and kwargs -----------------------------------------------------------------------

TEST(IfBenchRegistry, HasThe58Ids) {
  EXPECT_EQ(Instructions().size(), 58u);
  for (const InstructionSpec& s : Instructions()) EXPECT_EQ(FindInstruction(s.id), &s);
  EXPECT_EQ(FindInstruction("punctuation:no_comma"), nullptr);  // a classic IFEval id
}

TEST(IfBenchRegistry, DataFiles) {
  const auto& files = IfBenchDataFiles();
  ASSERT_EQ(files.size(), 10u);
  size_t gz = 0;
  for (const IfBenchDataFile& f : files) {
    EXPECT_EQ(f.sha256.size(), 64u) << f.path;
    gz += f.gzip;
  }
  EXPECT_EQ(gz, 1u);
}

TEST(IfBenchKwargs, TypesAndRanges) {
  const InstructionSpec& numbers = *FindInstruction("count:numbers");
  EXPECT_TRUE(ParseKwargs(numbers, {{"N", 5.0}}).ok());
  EXPECT_TRUE(ParseKwargs(numbers, {{"N", 5}}).ok());  // Python compares int and float alike
  EXPECT_TRUE(ParseKwargs(numbers, {{"N", 5.0}, {"word", nullptr}}).ok());  // nulls dropped
  EXPECT_FALSE(ParseKwargs(numbers, json::object()).ok());                  // missing
  EXPECT_FALSE(ParseKwargs(numbers, {{"N", "5"}}).ok());                    // wrong type
  EXPECT_FALSE(ParseKwargs(numbers, {{"N", true}}).ok());
  EXPECT_FALSE(ParseKwargs(numbers, {{"N", -1.0}}).ok());  // upstream: a random value
  EXPECT_FALSE(ParseKwargs(numbers, {{"N", 5.0}, {"word", "x"}}).ok());  // TypeError upstream
  EXPECT_FALSE(ParseKwargs(numbers, json::array()).ok());
  const InstructionSpec& position = *FindInstruction("words:keywords_specific_position");
  EXPECT_TRUE(ParseKwargs(position, {{"keyword", "x"}, {"n", 2}, {"m", 3}}).ok());
  EXPECT_FALSE(ParseKwargs(position, {{"keyword", "x"}, {"n", 2.0}, {"m", 3}}).ok());
  EXPECT_FALSE(ParseKwargs(position, {{"keyword", "x"}, {"n", 0}, {"m", 3}}).ok());
  EXPECT_FALSE(ParseKwargs(position, {{"keyword", ""}, {"n", 1}, {"m", 3}}).ok());
  // build_description(**kwargs) ignores what it does not use.
  EXPECT_TRUE(ParseKwargs(*FindInstruction("custom:csv_city"), {{"N", 3.0}}).ok());
  EXPECT_FALSE(ParseKwargs(*FindInstruction("repeat:repeat_change"), {{"prompt_to_repeat", ""}})
                   .ok());
  const Result<Kwargs> kw =
      ParseKwargs(*FindInstruction("words:words_position"), {{"keyword", "  despite "}});
  ASSERT_TRUE(kw.ok());
  EXPECT_EQ(kw->keyword, U"despite");  // build_description strips it
}

// ---- count:* -------------------------------------------------------------------------------------

TEST(IfBenchCount, WordCountRange) {
  const json kw = {{"min_words", 3.0}, {"max_words", 5.0}};
  EXPECT_TRUE(Check("count:word_count_range", "one two three", kw));
  EXPECT_TRUE(Check("count:word_count_range", "don't stop", kw));  // \w+: don, t, stop
  EXPECT_FALSE(Check("count:word_count_range", "x_y z", kw));      // '_' is a word character
  EXPECT_TRUE(Check("count:word_count_range", "na\xC3\xAFve caf\xC3\xA9 r\xC3\xA9sum\xC3\xA9", kw));
  EXPECT_FALSE(Check("count:word_count_range", "a b c d e f", kw));
}

TEST(IfBenchCount, UniqueWordCount) {
  EXPECT_FALSE(Check("count:unique_word_count", "Apple apple, APPLE! banana", {{"N", 3.0}}));
  EXPECT_TRUE(Check("count:unique_word_count", "Apple apple, APPLE! banana", {{"N", 2.0}}));
  // A token of punctuation only strips to "", which counts as a word.
  EXPECT_TRUE(Check("count:unique_word_count", "... apple banana", {{"N", 3.0}}));
  // Curly quotes are not string.punctuation upstream; the fixed profile strips them.
  const char* curly = "\xE2\x80\x9C" "apple\xE2\x80\x9D apple";
  EXPECT_TRUE(Check("count:unique_word_count", curly, {{"N", 2.0}}));
  EXPECT_FALSE(Fixed("count:unique_word_count", curly, {{"N", 2.0}}));
}

TEST(IfBenchCount, Conjunctions) {
  EXPECT_TRUE(Check("count:conjunctions", "and And and,", {{"small_n", 3.0}}));  // raw tokens
  EXPECT_FALSE(Fixed("count:conjunctions", "and And and,", {{"small_n", 2.0}}));
  EXPECT_TRUE(Check("count:conjunctions", "cats and dogs, but not birds", {{"small_n", 2.0}}));
  EXPECT_FALSE(Check("count:conjunctions", "cats and dogs", {{"small_n", 2.0}}));
}

TEST(IfBenchCount, PersonNames) {
  EXPECT_TRUE(Check("count:person_names", "Emma met Liam's sister.", {{"N", 2.0}}));
  EXPECT_FALSE(Check("count:person_names", "Emmanuel and Liam", {{"N", 2.0}}));
  EXPECT_FALSE(Check("count:person_names", "emma and liam", {{"N", 1.0}}));  // case-sensitive
  EXPECT_FALSE(Check("count:person_names", "Liam_Emma", {{"N", 1.0}}));      // '_' joins words
  EXPECT_TRUE(Check("count:person_names", "Emma Emma Emma", {{"N", 1.0}}));
  EXPECT_FALSE(Check("count:person_names", "Emma Emma Emma", {{"N", 2.0}}));
}

TEST(IfBenchCount, Numbers) {
  EXPECT_TRUE(Check("count:numbers", "3.14 and 1,000", {{"N", 2.0}}));
  EXPECT_TRUE(Check("count:numbers", "from 10-20", {{"N", 1.0}}));  // "1020" once deleted
  EXPECT_TRUE(Fixed("count:numbers", "from 10-20", {{"N", 2.0}}));
  EXPECT_TRUE(Fixed("count:numbers", "3.14 and 1,000", {{"N", 2.0}}));
  EXPECT_TRUE(Check("count:numbers", "\xD9\xA3 apples", {{"N", 1.0}}));  // Arabic-Indic 3
  EXPECT_FALSE(Check("count:numbers", "no numbers", {{"N", 1.0}}));
  EXPECT_TRUE(Check("count:numbers", "no numbers", {{"N", 0.0}}));
}

TEST(IfBenchCount, Punctuation) {
  EXPECT_FALSE(Check("count:punctuation", "Really?! Yes. No, wait; here: ok!"));  // '?' consumed
  EXPECT_TRUE(Check("count:punctuation", "Really?! Yes. No, wait; here: ok! Why?"));
  EXPECT_TRUE(Check("count:punctuation", "Wow\xE2\x80\xBD . , ! ? ; :"));
  EXPECT_FALSE(Check("count:punctuation", ". , ! ? ; :"));  // no interrobang
  EXPECT_TRUE(Check("count:punctuation", "A!? B?! . , ; :"));
}

TEST(IfBenchCount, WordsJapanese) {
  EXPECT_TRUE(Check("count:words_japanese", "hello \xE4\xB8\x96\xE7\x95\x8C foo "
                                            "\xE3\x81\xB2\xE3\x82\x89",
                    {{"N", 2.0}}));
  EXPECT_FALSE(Check("count:words_japanese", "hello world", {{"N", 2.0}}));
  EXPECT_TRUE(Check("count:words_japanese", "hello 42 foo ...", {{"N", 2.0}}));  // skipped
  EXPECT_TRUE(Check("count:words_japanese", "a b c", {{"N", 4.0}}));
  EXPECT_FALSE(Check("count:words_japanese", "a b c", {{"N", 0.0}}));  // ZeroDivisionError
  EXPECT_TRUE(Check("count:words_japanese", "a b c d \xE4\xB8\x96", {{"N", 2.5}}));  // 5 % 2.5
}

TEST(IfBenchCount, Pronouns) {
  NEED_NLP();
  EXPECT_TRUE(Check("count:pronouns", "She/her/hers", {{"N", 3.0}}));
  EXPECT_FALSE(Check("count:pronouns", "I think you know.", {{"N", 3.0}}));
  EXPECT_TRUE(Check("count:pronouns", "I think you know it.", {{"N", 3.0}}));
}

TEST(IfBenchCount, KeywordsMultiple) {
  const json kw = {{"keyword1", "cloud"}, {"keyword2", "bread"}, {"keyword3", "fish"},
                   {"keyword4", "lamp"},  {"keyword5", "dawn"}};
  const std::string base = "Cloud. " + Repeat("bread ", 2) + Repeat("fish ", 3) +
                           Repeat("LAMP ", 5) + Repeat("dawn ", 7);
  EXPECT_TRUE(Check("count:keywords_multiple", base, kw));
  EXPECT_TRUE(Fixed("count:keywords_multiple", base, kw));
  EXPECT_FALSE(Check("count:keywords_multiple", base + " clouds", kw));  // a substring counts
  EXPECT_TRUE(Fixed("count:keywords_multiple", base + " clouds", kw));
  EXPECT_FALSE(Check("count:keywords_multiple", "cloud", kw));
}

// ---- ratio:* and sentence:* ---------------------------------------------------------------------

TEST(IfBenchRatio, StopWords) {
  NEED_NLP();
  EXPECT_TRUE(Check("ratio:stop_words", "the cat", {{"percentage", 50.0}}));
  EXPECT_FALSE(Check("ratio:stop_words", "the cat", {{"percentage", 49.0}}));
  EXPECT_FALSE(Check("ratio:stop_words", "...", {{"percentage", 100.0}}));  // no words
  // 7 of 25: (7 / 25) * 100 == 28.000000000000004 in Python, over 28.
  const std::string text = Repeat("the ", 7) + Repeat("cat ", 18);
  EXPECT_FALSE(Check("ratio:stop_words", text, {{"percentage", 28.0}}));
  EXPECT_TRUE(Check("ratio:stop_words", text, {{"percentage", 28.000000000000004}}));
  EXPECT_TRUE(Check("ratio:stop_words", "don't", {{"percentage", 100.0}}));  // don, t
}

TEST(IfBenchRatio, SentenceTypeAndBalance) {
  NEED_NLP();
  EXPECT_TRUE(Check("ratio:sentence_type", "It is. It is. Is it?"));
  EXPECT_FALSE(Check("ratio:sentence_type", "One. Two?"));
  EXPECT_TRUE(Check("ratio:sentence_type", "Wow! Great!"));  // 0 == 2 * 0
  EXPECT_FALSE(Fixed("ratio:sentence_type", "Wow! Great!"));
  // Punkt keeps a closing quote with its sentence, so it does not end with '.'.
  EXPECT_TRUE(Check("ratio:sentence_type", "He said hi. Is it? Yes."));
  EXPECT_FALSE(Check("ratio:sentence_type", "He said \"hi.\" Is it? Yes."));
  EXPECT_TRUE(Check("ratio:sentence_balance", "Yes. No? Wow!"));
  EXPECT_FALSE(Check("ratio:sentence_balance", "Yes. No? Wow! Ok."));
  EXPECT_TRUE(Check("ratio:sentence_balance", "Hmm"));
  EXPECT_FALSE(Fixed("ratio:sentence_balance", "Hmm"));
  EXPECT_TRUE(Fixed("ratio:sentence_balance", "Yes. No? Wow!"));
}

TEST(IfBenchRatio, Overlap) {
  const json kw = {{"reference_text", "abcdef"}, {"percentage", 25.0}};
  EXPECT_TRUE(Check("ratio:overlap", "abcxyz", kw));  // abc of {abc, bcx, cxy, xyz}
  EXPECT_FALSE(Check("ratio:overlap", "abcxyz", {{"reference_text", "abcdef"}, {"percentage", 50.0}}));
  EXPECT_TRUE(Check("ratio:overlap", "abcxyz", {{"reference_text", "abcdef"}, {"percentage", 27.0}}));
  EXPECT_FALSE(Check("ratio:overlap", "ab", kw));  // no trigram
  EXPECT_TRUE(Check("ratio:overlap", "abcabcabc", {{"reference_text", "abc"}, {"percentage", 33.0}}));
}

TEST(IfBenchRatio, SentenceWords) {
  NEED_NLP();
  EXPECT_TRUE(Check("ratio:sentence_words", "Cats run. Dogs ran. Pigs sit."));
  EXPECT_FALSE(Check("ratio:sentence_words", "Cats run. Dogs ran."));
  EXPECT_FALSE(Check("ratio:sentence_words", "Cats run. Dogs ran. Pig sits!!"));
  EXPECT_TRUE(Check("ratio:sentence_words", "Cats run. Cats ran. Pigs sit."));
  EXPECT_FALSE(Fixed("ratio:sentence_words", "Cats run. Cats ran. Pigs sit."));
}

TEST(IfBenchSentence, AlliterationIncrement) {
  NEED_NLP();
  EXPECT_TRUE(Check("sentence:alliteration_increment", "The cat. Big bad bear."));
  EXPECT_FALSE(Check("sentence:alliteration_increment", "Big bad bear. The cat."));
  EXPECT_FALSE(Check("sentence:alliteration_increment", "Big bad. Sly sad."));  // 2, 2
}

TEST(IfBenchSentence, Keyword) {
  NEED_NLP();
  const json kw = {{"word", "cat"}, {"N", 2.0}};
  EXPECT_TRUE(Check("sentence:keyword", "I saw a dog. The Cat sat.", kw));
  EXPECT_FALSE(Check("sentence:keyword", "I saw a dog. The cats sat.", kw));
  EXPECT_FALSE(Check("sentence:keyword", "A cat sat.", kw));
  EXPECT_FALSE(Check("sentence:keyword", "A cat. A dog.", kw));
  // N == 0: sentences[int(-1)], the last one.
  EXPECT_TRUE(Check("sentence:keyword", "A dog. A cat.", {{"word", "cat"}, {"N", 0.0}}));
  EXPECT_FALSE(Check("sentence:keyword", "A cat. A dog.", {{"word", "cat"}, {"N", 0.0}}));
}

TEST(IfBenchSentence, Increment) {
  NEED_NLP();
  EXPECT_TRUE(Check("sentence:increment", "I run. I ran far. I ran very far.", {{"small_n", 1.0}}));
  EXPECT_FALSE(Check("sentence:increment", "I run. I ran.", {{"small_n", 1.0}}));
  EXPECT_TRUE(Check("sentence:increment", "One sentence only.", {{"small_n", 3.0}}));
}

// ---- words:* ---------------------------------------------------------------------------------

TEST(IfBenchWords, Alphabet) {
  EXPECT_TRUE(Check("words:alphabet", "Apple banana cherry"));
  EXPECT_FALSE(Check("words:alphabet", "Apple cherry"));
  EXPECT_TRUE(Check("words:alphabet", "Xylophone yak zebra apple"));
  EXPECT_FALSE(Check("words:alphabet", "123 abc"));
  EXPECT_TRUE(Check("words:alphabet", "A, b. c!"));
  EXPECT_FALSE(Check("words:alphabet", "..."));
}

TEST(IfBenchWords, Vowel) {
  EXPECT_TRUE(Check("words:vowel", "cat hat bat"));
  EXPECT_FALSE(Check("words:vowel", "one\ntwo"));
  EXPECT_FALSE(Check("words:vowel", "education"));
  EXPECT_TRUE(Check("words:vowel", "  hello world  \n"));
}

TEST(IfBenchWords, Consonants) {
  EXPECT_TRUE(Check("words:consonants", "strong bright try"));
  EXPECT_FALSE(Check("words:consonants", "strong cat"));
  EXPECT_TRUE(Check("words:consonants", "BRR"));
}

TEST(IfBenchWords, Palindrome) {
  EXPECT_TRUE(Check("words:palindrome",
                    "level radar civic kayak refer rotor madam stats tenet racecar"));
  EXPECT_FALSE(Check("words:palindrome", "level radar civic kayak refer rotor madam stats tenet"));
  EXPECT_TRUE(Check("words:palindrome", Repeat("Level, ", 10)));  // repeats count
  EXPECT_FALSE(Check("words:palindrome", Repeat("abba ", 10)));   // too short
}

TEST(IfBenchWords, PrimeLengths) {
  EXPECT_TRUE(Check("words:prime_lengths", "an ant was"));
  EXPECT_FALSE(Check("words:prime_lengths", "a cat"));
  EXPECT_FALSE(Check("words:prime_lengths", "The cat's"));  // "cats"
  EXPECT_TRUE(Check("words:prime_lengths", "caf\xC3\xA9s"));  // 5 code points
}

TEST(IfBenchWords, StartVerb) {
  NEED_NLP();
  EXPECT_TRUE(Check("words:start_verb", "Write a poem."));
  EXPECT_TRUE(Check("words:start_verb", "Describe a short poem."));
  // The tagger's own verdicts (NLTK gives NNP for these first words).
  EXPECT_FALSE(Check("words:start_verb", "Create yourself in a quiet room."));
  EXPECT_FALSE(Check("words:start_verb", "Forge an essay on climate change."));
  EXPECT_FALSE(Check("words:start_verb", "The end."));
}

TEST(IfBenchWords, Repeats) {
  EXPECT_TRUE(Check("words:repeats", "a a b", {{"small_n", 2.0}}));
  EXPECT_FALSE(Check("words:repeats", "a A a", {{"small_n", 2.0}}));
  EXPECT_FALSE(Check("words:repeats", "a a, a.", {{"small_n", 2.0}}));
}

TEST(IfBenchWords, OddEvenSyllables) {
  NEED_NLP();
  EXPECT_TRUE(Check("words:odd_even_syllables", "cat apple dog"));
  EXPECT_FALSE(Check("words:odd_even_syllables", "cat dog"));
}

TEST(IfBenchWords, LastFirst) {
  NEED_NLP();
  EXPECT_TRUE(Check("words:last_first", "I love cats. Cats love me."));
  EXPECT_FALSE(Check("words:last_first", "I love cats. Dogs love me."));
  EXPECT_TRUE(Check("words:last_first", "Just one sentence."));
}

TEST(IfBenchWords, ParagraphLastFirst) {
  EXPECT_TRUE(Check("words:paragraph_last_first", "Hello world hello.\n\nBye now bye"));
  EXPECT_FALSE(Check("words:paragraph_last_first", "Hello world"));
  // Only the line's outer punctuation is stripped: "hello," is not "hello".
  EXPECT_FALSE(Check("words:paragraph_last_first", "Hello, world, hello,"));
}

TEST(IfBenchWords, NoConsecutive) {
  EXPECT_TRUE(Check("words:no_consecutive", "apple banana cherry"));
  EXPECT_FALSE(Check("words:no_consecutive", "apple avocado"));
  EXPECT_FALSE(Check("words:no_consecutive", "Apple, 'avocado'"));
}

TEST(IfBenchWords, KeywordsSpecificPosition) {
  NEED_NLP();
  const auto kw = [](int n, int m) { return json{{"keyword", "cat"}, {"n", n}, {"m", m}}; };
  const char* text = "Hello there. I love cat food.";
  EXPECT_TRUE(Check("words:keywords_specific_position", text, kw(2, 3)));
  EXPECT_FALSE(Check("words:keywords_specific_position", text, kw(2, 2)));
  EXPECT_FALSE(Check("words:keywords_specific_position", text, kw(3, 3)));
  EXPECT_FALSE(Check("words:keywords_specific_position", text, kw(-1, 3)));  // sentence [-2]
  EXPECT_TRUE(Check("words:keywords_specific_position", text, kw(2, -1)));   // word [-2]
  EXPECT_FALSE(Check("words:keywords_specific_position", text, kw(2, -9)));  // IndexError
}

TEST(IfBenchWords, WordsPosition) {
  NEED_NLP();
  const json kw = {{"keyword", "despite"}};
  EXPECT_TRUE(Check("words:words_position", "A despite b despite c.", kw));
  EXPECT_TRUE(Check("words:words_position", "A despite b despite c", kw));
  EXPECT_FALSE(Check("words:words_position", "A despite b despite", kw));
  // A closing '"' gives Treebank's '' token, not string.punctuation.
  EXPECT_FALSE(Check("words:words_position", "\"A despite b despite c.\"", kw));
  EXPECT_TRUE(Fixed("words:words_position", "\"A despite b despite c.\"", kw));
}

// ---- format:* ----------------------------------------------------------------------------------

TEST(IfBenchFormat, Parentheses) {
  EXPECT_TRUE(Check("format:parentheses", "((((( x )))))"));
  EXPECT_FALSE(Check("format:parentheses", "(((( x ))))"));
  EXPECT_TRUE(Check("format:parentheses", "([{(( x ))}])"));
  EXPECT_FALSE(Check("format:parentheses", "((((( ]"));
  EXPECT_TRUE(Check("format:parentheses", "((((( x )"));  // one group closing is enough
  EXPECT_FALSE(Check("format:parentheses", "((((] x )"));
}

TEST(IfBenchFormat, Quotes) {
  EXPECT_TRUE(Check("format:quotes", "\"a 'b \"c\" b' a\""));
  EXPECT_FALSE(Check("format:quotes", "\"a 'b' a\""));
  EXPECT_FALSE(Check("format:quotes", "\xE2\x80\x9C" "a \xE2\x80\x98" "b \"c\" b\xE2\x80\x99 a\xE2\x80\x9D"));
  // Apostrophes take part: don't closes the single-quote level early.
  EXPECT_FALSE(Check("format:quotes", "\"a 'b don't \"c\" d' e\""));
}

TEST(IfBenchFormat, Options) {
  const json yn = {{"options", "yes/no/maybe"}};
  EXPECT_TRUE(Check("format:options", "Yes.", yn));
  EXPECT_FALSE(Check("format:options", "Yes, definitely", yn));
  const json abcd = {{"options", "a), b), c), d)"}};
  EXPECT_TRUE(Check("format:options", "a)", abcd));
  EXPECT_FALSE(Check("format:options", "A)", abcd));
  EXPECT_FALSE(Check("format:options", "b) inventive", abcd));
  EXPECT_TRUE(Fixed("format:options", "A)", abcd));
  EXPECT_TRUE(Fixed("format:options", "b) inventive", abcd));
  EXPECT_TRUE(Fixed("format:options", "(c)", abcd));
  EXPECT_FALSE(Fixed("format:options", "e)", abcd));
  EXPECT_FALSE(Fixed("format:options", "because a) is right", abcd));
  const json know = {{"options", "I know or I don't know"}};
  EXPECT_TRUE(Check("format:options", "I don't know.", know));
  EXPECT_FALSE(Check("format:options", "I do not know.", know));
}

TEST(IfBenchFormat, Newline) {
  EXPECT_TRUE(Check("format:newline", "one\ntwo\nthree"));
  EXPECT_FALSE(Check("format:newline", "one two\nthree"));
  EXPECT_TRUE(Check("format:newline", "one\n\ntwo"));
  EXPECT_TRUE(Check("format:newline", "- one\n- two"));
  EXPECT_FALSE(Check("format:newline", "one\n \ntwo"));  // only '' lines are removed
}

TEST(IfBenchFormat, Emoji) {
  NEED_NLP();
  EXPECT_TRUE(Check("format:emoji", "Hello \xF0\x9F\x98\x80. Bye \xF0\x9F\x98\x80."));
  EXPECT_FALSE(Check("format:emoji", "Hello. Bye \xF0\x9F\x98\x80."));
  const char* flag = "Go \xF0\x9F\x87\xBA\xF0\x9F\x87\xB8.";  // a flag: two regional indicators
  EXPECT_FALSE(Check("format:emoji", flag));
  EXPECT_TRUE(Fixed("format:emoji", flag));
  // The second-last code point counts (an emoji and U+FE0F), but a space does not.
  EXPECT_TRUE(Check("format:emoji", "Hello \xF0\x9F\x98\x80\xEF\xB8\x8F."));
  EXPECT_FALSE(Check("format:emoji", "Hello \xF0\x9F\x98\x80 x."));
}

TEST(IfBenchFormat, LineIndent) {
  EXPECT_TRUE(Check("format:line_indent", "a\n b\n  c"));
  EXPECT_FALSE(Check("format:line_indent", "a\n b\n b"));
  EXPECT_TRUE(Check("format:line_indent", "a\n\n b"));
  // Two blank lines in a row leave one behind (list.remove while iterating).
  EXPECT_FALSE(Check("format:line_indent", "a\n\n\n b"));
  EXPECT_TRUE(Fixed("format:line_indent", "a\n\n\n b"));
  // remove() drops the first equal line: here the skipped "" survives and a later one goes.
  EXPECT_FALSE(Check("format:line_indent", "a\n\n\n b\n\n  c"));
  EXPECT_TRUE(Check("format:line_indent", "a\n\n b\n\n  c"));
  EXPECT_FALSE(Check("format:line_indent", "a\n\tb"));  // tabs are not indentation
  EXPECT_TRUE(Fixed("format:line_indent", "a\n\tb"));
}

TEST(IfBenchFormat, QuoteUnquote) {
  EXPECT_TRUE(Check("format:quote_unquote", "He said \"hi\" loudly."));
  EXPECT_FALSE(Check("format:quote_unquote", "\"hi\" \"there\" yes"));
  EXPECT_FALSE(Check("format:quote_unquote", "He said \"hi\"."));
  const char* curly = "He said \xE2\x80\x9Chi\xE2\x80\x9D.";
  EXPECT_TRUE(Check("format:quote_unquote", curly));  // curly quotes are never normalised
  EXPECT_FALSE(Fixed("format:quote_unquote", curly));
  EXPECT_TRUE(Check("format:quote_unquote", "The char '\"' is fine"));
}

TEST(IfBenchFormat, List) {
  EXPECT_TRUE(Check("format:list", "a - b - c", {{"sep", "-"}}));
  EXPECT_FALSE(Check("format:list", "well-known", {{"sep", "-"}}));
  EXPECT_TRUE(Check("format:list", "well-known and self-made", {{"sep", "-"}}));
  EXPECT_FALSE(Fixed("format:list", "well-known and self-made", {{"sep", "-"}}));
  EXPECT_TRUE(Fixed("format:list", "- a\n  - b", {{"sep", "-"}}));
  EXPECT_TRUE(Check("format:list", "x!?!?y!?!?", {{"sep", "!?!?"}}));
  EXPECT_FALSE(Check("format:list", "x!?!?!?y", {{"sep", "!?!?"}}));  // non-overlapping
}

TEST(IfBenchFormat, Thesis) {
  EXPECT_TRUE(Check("format:thesis", "<i>Thesis</i> Body"));
  EXPECT_FALSE(Check("format:thesis", "<i>Thesis</i>"));
  EXPECT_TRUE(Check("format:thesis", "<em>x</em>"));  // slices one character short
  EXPECT_FALSE(Fixed("format:thesis", "<em>x</em>"));
  EXPECT_TRUE(Fixed("format:thesis", "<em>x</em> body"));
  EXPECT_FALSE(Check("format:thesis", "<i> </i> text"));
  EXPECT_FALSE(Check("format:thesis", "no tags"));
}

TEST(IfBenchFormat, SubBullets) {
  EXPECT_TRUE(Check("format:sub-bullets", "* a\n - b\n* c\n - d"));
  EXPECT_FALSE(Check("format:sub-bullets", "* a\n* b\n - c"));
  EXPECT_TRUE(Check("format:sub-bullets", "no bullets"));  // vacuous
  EXPECT_FALSE(Fixed("format:sub-bullets", "no bullets"));
  EXPECT_TRUE(Fixed("format:sub-bullets", "* a\n  - b\n* c\n  - d"));
  EXPECT_FALSE(Fixed("format:sub-bullets", "* a\n  - b\n* c"));
  EXPECT_TRUE(Fixed("format:sub-bullets", "*a\n  - b\n**Bold** line"));
  EXPECT_FALSE(Fixed("format:sub-bullets", "**Bold**\n- b"));
}

TEST(IfBenchFormat, NoBulletsBullets) {
  NEED_NLP();
  EXPECT_TRUE(Check("format:no_bullets_bullets", "First one. Second one.\n* one\n* two"));
  EXPECT_FALSE(Check("format:no_bullets_bullets", "First one. Second one.\n* one\n* two\n"));
  EXPECT_TRUE(Fixed("format:no_bullets_bullets", "First one. Second one.\n* one\n* two\n"));
  EXPECT_FALSE(Check("format:no_bullets_bullets", "One.\n\nTwo.\n* a\n* b"));
  EXPECT_TRUE(Fixed("format:no_bullets_bullets", "One.\n\nTwo.\n* a\n* b"));
  EXPECT_FALSE(Check("format:no_bullets_bullets", "Only one.\n* a\n* b"));
  EXPECT_FALSE(Check("format:no_bullets_bullets", "One. Two.\n* a"));
  EXPECT_TRUE(Check("format:no_bullets_bullets", "Is it? Yes!\n* a\n* b"));  // any sentence
  EXPECT_FALSE(Fixed("format:no_bullets_bullets", "Is it? Yes!\n* a\n* b"));
}

TEST(IfBenchFormat, TitleCase) {
  NEED_NLP();
  EXPECT_TRUE(Check("format:title_case", "The Quick Brown Fox"));
  EXPECT_FALSE(Check("format:title_case", "The quick Brown"));
  EXPECT_FALSE(Check("format:title_case", "A Tale of Two Cities"));
  EXPECT_TRUE(Fixed("format:title_case", "A Tale of Two Cities"));
  EXPECT_FALSE(Check("format:title_case", "Don't Stop"));  // n't
  EXPECT_TRUE(Fixed("format:title_case", "Don't Stop"));
  EXPECT_TRUE(Check("format:title_case", "NASA Rocks"));
  EXPECT_FALSE(Fixed("format:title_case", "the End"));
}

TEST(IfBenchFormat, OutputTemplateAndNoWhitespace) {
  EXPECT_TRUE(Check("format:output_template",
                    "My Answer: x My Conclusion: y Future Outlook: z"));
  EXPECT_FALSE(Check("format:output_template", "My answer: x My Conclusion: y Future Outlook: z"));
  EXPECT_TRUE(Check("format:no_whitespace", "abc"));
  EXPECT_FALSE(Check("format:no_whitespace", "a b"));
  EXPECT_FALSE(Check("format:no_whitespace", "a\xC2\xA0" "b"));        // NBSP is isspace
  EXPECT_FALSE(Check("format:no_whitespace", "a\x1F" "b"));            // so is U+001F
  EXPECT_TRUE(Check("format:no_whitespace", "a\xE2\x80\x8B" "b"));     // ZWSP is not
}

// ---- custom:* -------------------------------------------------------------------------------

TEST(IfBenchCustom, Multiples) {
  EXPECT_TRUE(Check("custom:multiples", "14, 21, 28, 35, 42, 49"));
  EXPECT_TRUE(Check("custom:multiples", "14,21,28,35,42,49"));
  EXPECT_FALSE(Check("custom:multiples", "7, 14, 21, 28, 35, 42, 49"));
  EXPECT_FALSE(Check("custom:multiples", "Multiples of 7: 14, 21, 28, 35, 42, 49"));
}

std::string Mcq(const std::vector<std::string>& questions) {
  std::string out;
  for (size_t i = 0; i < questions.size(); ++i) {
    out += "Question " + std::to_string(i + 1) + ": " + questions[i] + "\n";
    for (char c : std::string("ABCDE")) out += std::string(1, c) + ". option\n";
    out += "\n";
  }
  return out;
}

TEST(IfBenchCustom, McqCountLength) {
  const std::vector<std::string> q = {"What?", "What is?", "What is it?", "What is it now?"};
  EXPECT_TRUE(Check("custom:mcq_count_length", Mcq(q)));
  EXPECT_FALSE(Check("custom:mcq_count_length", "Here are they:\n" + Mcq(q)));
  EXPECT_FALSE(Check("custom:mcq_count_length", Mcq({"What?", "What?", "What is it?", "Why?"})));
  EXPECT_FALSE(Check("custom:mcq_count_length", Mcq({"a?", "ab?", "abc?"})));
}

std::string Countries(size_t n, bool numbered = false) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (numbered) out += std::to_string(i + 1) + ". ";
    out += i == 0 ? "Zimbabwe" : "Country " + std::to_string(99 - i);
    out += "\n";
  }
  return out;
}

TEST(IfBenchCustom, ReverseNewline) {
  EXPECT_TRUE(Check("custom:reverse_newline", Countries(52)));
  EXPECT_FALSE(Check("custom:reverse_newline", Countries(51)));
  EXPECT_TRUE(Check("custom:reverse_newline", "Intro line\n" + Countries(52) + "- "));
  EXPECT_FALSE(Check("custom:reverse_newline", Countries(52) + "Zzz"));
  EXPECT_FALSE(Check("custom:reverse_newline", Countries(52, true)));  // numbered lists fail
  EXPECT_TRUE(Fixed("custom:reverse_newline", Countries(52, true)));
  // NFKD, then ASCII only: "S\u00e3o Tom\u00e9" sorts as "Sao Tome", not after it.
  const std::string sao = "Zimbabwe\nSao Tome\nS\xC3\xA3o Tom\xC3\xA9\n" + Countries(50).substr(9);
  EXPECT_TRUE(Check("custom:reverse_newline", sao));
}

TEST(IfBenchCustom, WordAndCharacterReverse) {
  NEED_NLP();
  EXPECT_TRUE(Check("custom:word_reverse", "eagle bald the is symbol national The"));
  EXPECT_FALSE(Check("custom:word_reverse", "The bald eagle."));
  const char* two = "eagle bald the is it. Some more text.";
  EXPECT_TRUE(Check("custom:word_reverse", two));  // the sentence test is trivial
  EXPECT_FALSE(Fixed("custom:word_reverse", two));
  EXPECT_TRUE(Check("custom:character_reverse", "ELGAE DLAB EHT"));
  EXPECT_FALSE(Check("custom:character_reverse", "bald eagle"));
}

TEST(IfBenchCustom, SentenceAlphabet) {
  NEED_NLP();
  std::string story;
  for (char c = 'A'; c <= 'Z'; ++c) story += std::string(1, c) + "xe went home. ";
  EXPECT_TRUE(Check("custom:sentence_alphabet", story));
  EXPECT_FALSE(Check("custom:sentence_alphabet", story.substr(0, story.size() - 15)));
  EXPECT_FALSE(Check("custom:sentence_alphabet", "Bxe went home. " + story.substr(15)));
}

std::string Capitals(bool kyiv) {
  std::string out;
  const char* names[] = {"Reykjav\xC3\xADk", "Helsinki", "Oslo", "Tallinn", "Stockholm",
                         "Riga", "Moscow", "Copenhagen", "Vilnius", "Minsk", "Dublin", "Berlin",
                         "Amsterdam", "Warsaw", "London", "Brussels", "Prague", "Luxembourg",
                         "Paris", "Vienna", "Bratislava", "Budapest", "Vaduz",
                         "Chi\xC8\x99in\xC4\x83u", "Bern", "Ljubljana", "Zagreb"};
  for (const char* n : names) {
    if (!out.empty()) out += ", ";
    if (kyiv && std::string(n) == "Prague") out += "Kyiv, ";
    out += n;
  }
  return out;
}

TEST(IfBenchCustom, EuropeanCapitalsSort) {
  EXPECT_TRUE(Check("custom:european_capitals_sort", Capitals(false)));
  EXPECT_FALSE(Check("custom:european_capitals_sort", Capitals(true)));
  EXPECT_FALSE(Check("custom:european_capitals_sort", Capitals(false) + "."));
  EXPECT_TRUE(Fixed("custom:european_capitals_sort", Capitals(true) + "."));
  EXPECT_FALSE(Fixed("custom:european_capitals_sort", Capitals(false)));
}

std::string CityCsv(size_t rows, const std::string& header = "ID,Country,City,Year,Count") {
  std::string out = header + "\n";
  for (size_t i = 0; i < rows; ++i) out += std::to_string(i) + ",France,Paris,2000,5\n";
  return out;
}

TEST(IfBenchCustom, CsvCity) {
  EXPECT_TRUE(Check("custom:csv_city", CityCsv(7)));
  EXPECT_FALSE(Check("custom:csv_city", CityCsv(6)));
  EXPECT_FALSE(Check("custom:csv_city", CityCsv(7, "ID, Country, City, Year, Count")));
  EXPECT_FALSE(Check("custom:csv_city", CityCsv(7) + "\n"));  // a blank line is the row []
  EXPECT_TRUE(Check("custom:csv_city", CityCsv(6) + "7,\"Paris, FR\",x,2000,5"));
  EXPECT_FALSE(Check("custom:csv_city", CityCsv(6) + "7,Paris\rx,y,2000,5"));  // csv.Error
  EXPECT_TRUE(Check("custom:csv_city", "\"ID\",Country,City,Year,Count\r\n" + CityCsv(7).substr(27)));
}

TEST(IfBenchCsv, ReaderStates) {
  const auto read = [](const char* s, char32_t d = U',') {
    return ReadCsv(Decode(s), d, 100);
  };
  ASSERT_TRUE(read("a,b\n\nc").has_value());
  EXPECT_EQ(*read("a,b\n\nc"), (std::vector<CsvRow>{{U"a", U"b"}, {}, {U"c"}}));
  EXPECT_EQ(*read("\"a\"\"b\",c"), (std::vector<CsvRow>{{U"a\"b", U"c"}}));
  EXPECT_EQ(*read("\"a\"x,c"), (std::vector<CsvRow>{{U"ax", U"c"}}));  // not strict
  EXPECT_EQ(*read("a\"b,c"), (std::vector<CsvRow>{{U"a\"b", U"c"}}));
  EXPECT_EQ(*read("\"a\nb\",c\n"), (std::vector<CsvRow>{{U"a\nb", U"c"}}));
  EXPECT_EQ(*read("\"open"), (std::vector<CsvRow>{{U"open"}}));  // EOF inside quotes
  EXPECT_EQ(*read("a,\n"), (std::vector<CsvRow>{{U"a", U""}}));
  EXPECT_EQ(*read("a\r\nb"), (std::vector<CsvRow>{{U"a"}, {U"b"}}));
  EXPECT_FALSE(read("a\rb").has_value());
  EXPECT_EQ(*read("a\tb", U'\t'), (std::vector<CsvRow>{{U"a", U"b"}}));
  EXPECT_EQ(*ReadCsv(Text(U"a\0b,c", 5), U',', 9), (std::vector<CsvRow>{{Text(U"a\0b", 3), U"c"}}));
  EXPECT_FALSE(ReadCsv(Text(131073, U'x'), U',', 9).has_value());  // field_size_limit
  EXPECT_TRUE(ReadCsv(Text(131072, U'x'), U',', 9).has_value());
}

std::string ProductCsv(size_t rows, bool special) {
  std::string out = "ProductID,Category,Brand,Price,Stock\n";
  for (size_t i = 0; i < rows; ++i) {
    out += std::to_string(i) + ",Toys," +
           (special && i == 3 ? "\"Tom & Jerry\"" : std::string("Acme")) + ",9.99,5\n";
  }
  return out;
}

TEST(IfBenchCustom, CsvSpecialCharacter) {
  EXPECT_TRUE(Check("custom:csv_special_character", ProductCsv(14, true)));
  EXPECT_FALSE(Check("custom:csv_special_character", ProductCsv(14, false)));
  EXPECT_FALSE(Check("custom:csv_special_character", ProductCsv(13, true)));
  // A short row after the special one goes unchecked upstream.
  std::string bad_tail = ProductCsv(13, true) + "13,Toys\n";
  EXPECT_TRUE(Check("custom:csv_special_character", bad_tail));
  EXPECT_FALSE(Fixed("custom:csv_special_character", bad_tail));
  EXPECT_TRUE(Check("custom:csv_special_character",
                    "\"ProductID\", \"Category\",\t\"Brand\",Price,Stock\n" +
                        ProductCsv(14, true).substr(37)));
}

std::string StudentTsv(const std::string& field) {
  std::string out = "\"StudentID\"\t\"Subject\"\t\"Grade\"\t\"Semester\"\t\"Score\"\n";
  for (int i = 0; i < 3; ++i) out += "\"1\"\t\"Math\"\t" + field + "\t\"Fall\"\t\"90\"\n";
  return out;
}

TEST(IfBenchCustom, CsvQuotes) {
  EXPECT_TRUE(Check("custom:csv_quotes", StudentTsv("\"A\"")));
  EXPECT_FALSE(Check("custom:csv_quotes", StudentTsv("A")));
  // An empty field raises IndexError upstream: a failed instruction in both profiles.
  EXPECT_FALSE(Check("custom:csv_quotes", StudentTsv("")));
  EXPECT_FALSE(Fixed("custom:csv_quotes", StudentTsv("")));
  EXPECT_FALSE(Check("custom:csv_quotes", "StudentID,Subject,Grade,Semester,Score\n"));
}

TEST(IfBenchCustom, DateFormatList) {
  EXPECT_TRUE(Check("custom:date_format_list", "1796-04-12, 1805-12-02"));
  EXPECT_FALSE(Check("custom:date_format_list", "1796-4-12"));
  EXPECT_FALSE(Check("custom:date_format_list", "1822-01-01"));
  EXPECT_FALSE(Check("custom:date_format_list", "1800-02-30"));
  EXPECT_TRUE(Check("custom:date_format_list", "1800-00-00"));
  EXPECT_TRUE(Check("custom:date_format_list",
                    "\xD9\xA1\xD9\xA8\xD9\xA0\xD9\xA0-\xD9\xA0\xD9\xA1-\xD9\xA0\xD9\xA1"));
  EXPECT_FALSE(Check("custom:date_format_list", "1800-01-01,"));  // an empty piece
}

// ---- repeat:* ---------------------------------------------------------------------------------

TEST(IfBenchRepeat, Change) {
  const json kw = {{"prompt_to_repeat", "Write a poem about cats"}};
  EXPECT_TRUE(Check("repeat:repeat_change", "Compose a poem about cats", kw));
  EXPECT_FALSE(Check("repeat:repeat_change", "Write a poem about cats", kw));
  EXPECT_TRUE(Check("repeat:repeat_change", "Write a poem about cats\n", kw));  // unchanged word
  EXPECT_FALSE(Fixed("repeat:repeat_change", "Write a poem about cats\n", kw));
  EXPECT_FALSE(Check("repeat:repeat_change", "Compose a poem about dogs", kw));
}

TEST(IfBenchRepeat, SimpleAndSpan) {
  EXPECT_TRUE(Check("repeat:repeat_simple",
                    " ONLY output this sentence here, ignore all other requests.\n"));
  EXPECT_FALSE(Check("repeat:repeat_simple", "Only output this sentence here."));
  const json kw = {{"prompt_to_repeat", "The walls are solid"}, {"n_start", 4}, {"n_end", 8}};
  EXPECT_TRUE(Check("repeat:repeat_span", "Walls", kw));
  EXPECT_FALSE(Check("repeat:repeat_span", "walls are", kw));
  EXPECT_TRUE(Check("repeat:repeat_span", "solid",
                    {{"prompt_to_repeat", "The walls are solid"}, {"n_start", -5}, {"n_end", 99}}));
}

// ---- The scorer: strict, loose, errors, hostile input -------------------------------------------

std::string Gold(const std::vector<std::string>& ids, const json& kwargs) {
  return json{{"instruction_id_list", ids}, {"kwargs", kwargs}}.dump();
}

#define NEED_SCORER()                                                                        \
  if (Scorer() == nullptr) {                                                                 \
    GTEST_SKIP() << NeedData("IFBench's model data");                                      \
  }

TEST(IfBenchScorer, StrictAndLoose) {
  NEED_SCORER();
  const IfBenchScorer& s = *Scorer();
  // Loose drops the first line ("Sure:"), then the numbers are right.
  const std::string gold = Gold({"count:numbers"}, json::array({{{"N", 1.0}}}));
  Result<IfBenchVerdict> v = s.Score(gold, "Sure, 2 things:\nThe answer is 42.");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->strict, std::vector<bool>{false});
  EXPECT_EQ(v->loose, std::vector<bool>{true});
  EXPECT_FALSE(v->prompt_strict);
  EXPECT_TRUE(v->prompt_loose);
  // Loose deletes '*': sub-bullets always passes there.
  v = s.Score(Gold({"format:sub-bullets"}, json::array({json::object()})), "* a\n* b");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->strict, std::vector<bool>{false});
  EXPECT_EQ(v->loose, std::vector<bool>{true});
  v = s.Score(Gold({"format:sub-bullets"}, json::array({json::object()})), "* a\n* b",
              IfBenchProfile::kFixed);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->loose, std::vector<bool>{false});
  // A blank response fails everything, even a vacuous checker.
  v = s.Score(Gold({"format:sub-bullets", "count:numbers"},
                   json::array({json::object(), {{"N", 0.0}}})),
              " \n\t ");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->strict, (std::vector<bool>{false, false}));
  EXPECT_EQ(v->loose, (std::vector<bool>{false, false}));
  // Two instructions, each with its own variant.
  v = s.Score(Gold({"format:no_whitespace", "count:numbers"},
                   json::array({json::object(), {{"N", 0.0}}})),
              "Answer 7:\nabc");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->strict, (std::vector<bool>{false, false}));
  EXPECT_EQ(v->loose, (std::vector<bool>{true, true}));
  EXPECT_TRUE(v->prompt_loose);
}

TEST(IfBenchScorer, GoldErrors) {
  NEED_SCORER();
  const IfBenchScorer& s = *Scorer();
  const auto error = [&](const std::string& gold) {
    Result<IfBenchVerdict> v = s.Score(gold, "text");
    if (v.ok()) return std::string("ok");
    EXPECT_EQ(v.error().message.find('\n'), std::string::npos);
    return v.error().message;
  };
  EXPECT_NE(error("{"), "ok");
  EXPECT_NE(error("[]"), "ok");
  EXPECT_NE(error(R"({"instruction_id_list": ["count:numbers"]})"), "ok");
  EXPECT_NE(error(R"({"instruction_id_list": ["count:numbers"], "kwargs": []})"), "ok");
  EXPECT_NE(error(R"({"instruction_id_list": [], "kwargs": []})"), "ok");
  EXPECT_NE(error(R"({"instruction_id_list": ["nope:x"], "kwargs": [{}]})"), "ok");
  EXPECT_NE(error(R"({"instruction_id_list": [3], "kwargs": [{}]})"), "ok");
  EXPECT_NE(error(R"({"instruction_id_list": ["count:numbers"], "kwargs": [{"N": "5"}]})"), "ok");
  EXPECT_NE(error(R"({"instruction_id_list": ["count:numbers"], "kwargs": [{"N": null}]})"), "ok");
  EXPECT_NE(error(R"({"instruction_id_list": ["count:numbers"], "kwargs": [null]})"), "ok");
  EXPECT_NE(error(R"({"instruction_id_list": ["format:list"], "kwargs": [{"sep": 1}]})"), "ok");
  EXPECT_EQ(error(R"({"instruction_id_list": ["count:numbers"], "kwargs": [{"N": 5.0, "word": null}]})"),
            "ok");
  EXPECT_NE(error(R"({"instruction_id_list": ["nope:x"], "kwargs": [{}]})").find("nope:x"),
            std::string::npos);
}

TEST(IfBenchScorer, NotUtf8) {
  NEED_SCORER();
  Result<IfBenchVerdict> v =
      Scorer()->Score(Gold({"count:word_count_range"}, json::array({{{"min_words", 2.0},
                                                                      {"max_words", 2.0}}})),
                      "hello\xFF\xFEworld \xC3");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->strict[0]);  // U+FFFD separates the words
}

// Every instruction with kwargs that make it run; the gold of all 58 at once.
std::string AllGold() {
  std::vector<std::string> ids;
  json kwargs = json::array();
  for (const InstructionSpec& s : Instructions()) {
    ids.emplace_back(s.id);
    json kw = json::object();
    for (const KwargSpec& k : s.kwargs) {
      const std::string name(k.name);
      if (k.type == KwargType::kNumber) kw[name] = 3.0;
      if (k.type == KwargType::kInt) kw[name] = name == "n_end" ? 40 : 2;
      if (k.type == KwargType::kString) kw[name] = name == "options" ? "a), b), c), d)" : "word";
    }
    kwargs.push_back(kw);
  }
  return json{{"instruction_id_list", ids}, {"kwargs", kwargs}}.dump();
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// All 58 instructions on one 10 MB response (every loose variant checked, as most fail): the
// cost is linear, about 0.3 s per instruction at -O1 (the fixed profile on 1 MB).
TEST(IfBenchScorer, TenMegabytesIsLinear) {
  NEED_SCORER();
  const std::string gold = AllGold();
  // Prose with lines, bullets, quotes, brackets and CSV-like commas.
  const std::string unit =
      "* The quick (brown) fox, \"jumps\" over 12 lazy dogs; isn't it? Yes! Emma said.\n"
      "  - a sub point, with 3.14 and <i>x</i> here\n\n";
  for (IfBenchProfile p : {IfBenchProfile::kUpstream, IfBenchProfile::kFixed}) {
    const size_t bytes = p == IfBenchProfile::kFixed ? 1'000'000 : 10'000'000;
    const std::string text = Repeat(unit, bytes / unit.size());
    const auto start = std::chrono::steady_clock::now();
    Result<IfBenchVerdict> v = Scorer()->Score(gold, text, p);
    ASSERT_TRUE(v.ok()) << v.error().message;
    EXPECT_EQ(v->strict.size(), 58u);
    EXPECT_LT(Seconds(start), 120.0);
    std::printf("%zu MB response, all 58 instructions, %s profile: %.1f s\n", bytes / 1'000'000,
                p == IfBenchProfile::kFixed ? "fixed" : "upstream", Seconds(start));
  }
}

TEST(IfBenchScorer, PathologicalNesting) {
  NEED_SCORER();
  const std::string deep = Repeat("(", 1'000'000) + Repeat(")", 1'000'000);
  const std::string quotes = Repeat("\"'", 1'000'000);
  const std::string blank_lines = std::string("a").append(Repeat("\n \n  \n", 300'000)).append("b");
  const std::string gold = Gold(
      {"format:parentheses", "format:quotes", "format:line_indent", "format:sub-bullets",
       "custom:mcq_count_length", "custom:csv_city", "custom:csv_quotes"},
      json::array({json::object(), json::object(), json::object(), json::object(),
                   json::object(), json::object(), json::object()}));
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& t : {deep, quotes, blank_lines, Repeat("\n", 2'000'000),
                               Repeat("Question 1", 500'000), Repeat("\"", 2'000'000)}) {
    Result<IfBenchVerdict> v = Scorer()->Score(gold, t);
    ASSERT_TRUE(v.ok());
  }
  Result<IfBenchVerdict> v = Scorer()->Score(gold, deep);
  EXPECT_TRUE(v->strict[0]);
  EXPECT_LT(Seconds(start), 60.0);
}

// ---- Agreement with upstream's verdicts ---------------------------------------------------------

std::vector<json> ReadJsonLines(const std::string& data) {
  std::vector<json> out;
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    if (end > start) out.push_back(json::parse(data.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

struct Tally {
  size_t n = 0, agree = 0;
  void Add(bool same) { ++n, agree += same; }
  std::string Str() const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%zu/%zu (%.2f%%)", agree, n, n ? 100.0 * agree / n : 0.0);
    return buf;
  }
  double Rate() const { return n ? static_cast<double>(agree) / n : 0.0; }
};

TEST(IfBenchAgreement, UpstreamVerdicts) {
  const std::string dir = DataDir() + "/evals";
  std::string verdicts_raw, test_raw;
  if (!ReadGzip(dir + "/scoring/ifbench_verdicts.jsonl.gz", &verdicts_raw)) {
    GTEST_SKIP() << NeedData("the scorer verdict corpus");
  }
  if (!ReadFile(dir + "/ifbench/IFBench_test.jsonl", &test_raw)) GTEST_SKIP() << NeedData("IFBench");
  NEED_SCORER();
  std::map<std::string, json> items;
  for (json& item : ReadJsonLines(test_raw)) items[item["key"].get<std::string>()] = item;
  const std::vector<json> records = ReadJsonLines(verdicts_raw);
  ASSERT_EQ(records.size(), 192u);

  Tally strict_ins, loose_ins, strict_prompt, loose_prompt;
  size_t fixed_diff_strict = 0, fixed_diff_loose = 0;
  std::map<std::string, std::pair<size_t, size_t>> fixed_by_id;  // id -> strict, loose changes
  for (const json& r : records) {
    const json& item = items.at(r["key"].get<std::string>());
    const std::string gold =
        json{{"instruction_id_list", item["instruction_id_list"]}, {"kwargs", item["kwargs"]}}
            .dump();
    const std::string response = r["response"].get<std::string>();
    Result<IfBenchVerdict> v = Scorer()->Score(gold, response);
    ASSERT_TRUE(v.ok()) << v.error().message;
    const auto strict = r["strict"].get<std::vector<bool>>();
    const auto loose = r["loose"].get<std::vector<bool>>();
    ASSERT_EQ(v->strict.size(), strict.size());
    for (size_t i = 0; i < strict.size(); ++i) {
      const std::string id = item["instruction_id_list"][i].get<std::string>();
      strict_ins.Add(v->strict[i] == strict[i]);
      loose_ins.Add(v->loose[i] == loose[i]);
      if (v->strict[i] != strict[i] || v->loose[i] != loose[i]) {
        std::printf("MISS key %s %s: strict %d (upstream %d), loose %d (upstream %d)\n",
                    r["key"].get<std::string>().c_str(), id.c_str(), int(v->strict[i]),
                    int(strict[i]), int(v->loose[i]), int(loose[i]));
      }
    }
    strict_prompt.Add(v->prompt_strict == r["strict_prompt"].get<bool>());
    loose_prompt.Add(v->prompt_loose == r["loose_prompt"].get<bool>());

    Result<IfBenchVerdict> f = Scorer()->Score(gold, response, IfBenchProfile::kFixed);
    ASSERT_TRUE(f.ok());
    for (size_t i = 0; i < strict.size(); ++i) {
      const std::string id = item["instruction_id_list"][i].get<std::string>();
      if (f->strict[i] != v->strict[i]) ++fixed_diff_strict, ++fixed_by_id[id].first;
      if (f->loose[i] != v->loose[i]) ++fixed_diff_loose, ++fixed_by_id[id].second;
      if (f->strict[i] != v->strict[i] || f->loose[i] != v->loose[i]) {
        std::printf("fixed differs: key %s %s: strict %d -> %d, loose %d -> %d\n",
                    r["key"].get<std::string>().c_str(), id.c_str(), int(v->strict[i]),
                    int(f->strict[i]), int(v->loose[i]), int(f->loose[i]));
      }
    }
  }
  std::printf("agreement with upstream (192 responses):\n");
  std::printf("  instruction level: strict %s, loose %s\n", strict_ins.Str().c_str(),
              loose_ins.Str().c_str());
  std::printf("  prompt level:      strict %s, loose %s\n", strict_prompt.Str().c_str(),
              loose_prompt.Str().c_str());
  std::printf("fixed profile vs upstream profile: %zu strict and %zu loose verdicts differ\n",
              fixed_diff_strict, fixed_diff_loose);
  for (const auto& [id, d] : fixed_by_id) {
    std::printf("  %s: %zu strict, %zu loose\n", id.c_str(), d.first, d.second);
  }
  EXPECT_GE(strict_ins.Rate(), 0.995);
  EXPECT_GE(loose_ins.Rate(), 0.995);
  EXPECT_GE(loose_prompt.Rate(), 0.99);
  EXPECT_GE(strict_prompt.Rate(), 0.99);
}

}  // namespace
}  // namespace pipette::scorers::ifbench
