// Tests of the Punkt sentence splitter and the Treebank word tokenizer (sentences.cc, treebank.cc),
// ports of nltk 3.9.2's sent_tokenize / word_tokenize / NLTKWordTokenizer.
//
// Every expected value below was produced by NLTK itself (Debian's nltk 3.8, whose Punkt
// inference is 3.9.2's, with NLTKWordTokenizer given 3.9.2's whitespace collapse before its
// clitic rules), not by reading the C++. The hand-written cases pin single behaviours; the
// differential test runs all 492 IFBench texts of ../shared (the 192 sample responses and the
// 300 prompts) and compares hashes of NLTK's sentence and word lists for each, so that no
// third-party text is committed here. Tests that need ../shared skip, saying so, without it.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "scorers/ifbench/nlp.h"
#include "scorers/ifbench/test_files.h"
#include "tests/support/test_data.h"
#include "scorers/ifbench/pystr.h"

namespace pipette::scorers::ifbench {
namespace {

using test_files::ReadFile;
using test_files::ReadGzip;
using ::pipette::testing::DataDir;
using ::pipette::testing::NeedData;

// ---- Helpers ---------------------------------------------------------------------------------


std::string EvalsDir() { return DataDir() + "/evals"; }



// UTF-8 copies, so that a failure prints readable text.
std::vector<std::string> Utf8(const std::vector<Text>& items) {
  std::vector<std::string> out;
  for (const Text& t : items) out.push_back(Encode(t));
  return out;
}

using Strings = std::vector<std::string>;

Strings Sents(const PunktParameters& p, const std::string& text) {
  return Utf8(SentTokenize(p, Decode(text)));
}
Strings Words(const PunktParameters& p, const std::string& text) {
  return Utf8(WordTokenize(p, Decode(text)));
}
Strings Treebank(const std::string& text) { return Utf8(TreebankTokenize(Decode(text))); }

// Punkt's _ORTHO_* flags the cases below use.
constexpr int kMidUc = 1 << 2, kBegLc = 1 << 4, kMidLc = 1 << 5;

// Hand-made parameters: abbreviation types, "a\tb" collocations, sentence starters, and
// orthographic contexts.
PunktParameters Params(std::initializer_list<const char*> abbrevs,
                       std::initializer_list<const char*> collocations = {},
                       std::initializer_list<const char*> starters = {},
                       std::initializer_list<std::pair<const char*, int>> ortho = {}) {
  PunktParameters p;
  for (const char* a : abbrevs) p.abbrev_types.insert(Decode(a));
  for (const char* c : collocations) p.collocations.insert(Decode(c));
  for (const char* s : starters) p.sent_starters.insert(Decode(s));
  for (const auto& [word, flags] : ortho) p.ortho_context[Decode(word)] = flags;
  return p;
}

// ---- ParsePunktParameters ----------------------------------------------------------------

TEST(ParsePunktParameters, ReadsTheFourFormats) {
  Result<PunktParameters> r = ParsePunktParameters(
      "dr\nu.s\n. . ", "##number##\tinternational\ns\tbach", "the\nhowever", "smith\t4\nthe\t114");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->abbrev_types, (TextSet{U"dr", U"u.s", U". . "}));  // ". . " kept as it is
  EXPECT_EQ(r->collocations,
            (std::unordered_set<std::u32string>{U"##number##\tinternational", U"s\tbach"}));
  EXPECT_EQ(r->sent_starters, (TextSet{U"the", U"however"}));
  ASSERT_EQ(r->ortho_context.size(), 2u);
  EXPECT_EQ(r->ortho_context.at(U"smith"), 4);
  EXPECT_EQ(r->ortho_context.at(U"the"), 114);
}

TEST(ParsePunktParameters, LinesAreReadAsPythonIteratesATextFile) {
  // A final newline adds no empty entry, "\r\n" reads as "\n", a blank line inside is an entry,
  // and no other whitespace is stripped.
  Result<PunktParameters> r =
      ParsePunktParameters("a\r\n\r\nb \n", "x\ty\r\n", "s\n", "w\t 7 \nw\t8\nv\t-1\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->abbrev_types, (TextSet{U"a", U"", U"b "}));
  EXPECT_EQ(r->collocations, (std::unordered_set<std::u32string>{U"x\ty"}));
  EXPECT_EQ(r->sent_starters, (TextSet{U"s"}));
  EXPECT_EQ(r->ortho_context.at(U"w"), 8);  // int(" 7 ") parses; the last line wins
  EXPECT_EQ(r->ortho_context.at(U"v"), -1);
}

TEST(ParsePunktParameters, EmptyFilesHaveNoEntries) {
  Result<PunktParameters> r = ParsePunktParameters("", "", "", "");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->abbrev_types.empty());
  EXPECT_TRUE(r->collocations.empty());
  EXPECT_TRUE(r->sent_starters.empty());
  EXPECT_TRUE(r->ortho_context.empty());
}

TEST(ParsePunktParameters, RejectsDamagedLines) {
  Result<PunktParameters> r = ParsePunktParameters("", "a\tb\nnotab", "", "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("collocations.tab line 2"), std::string::npos)
      << r.error().message;
  r = ParsePunktParameters("", "", "", "w\t1\nx");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("ortho_context.tab line 2"), std::string::npos)
      << r.error().message;
  r = ParsePunktParameters("", "", "", "w\tlots");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not an integer"), std::string::npos) << r.error().message;
  EXPECT_FALSE(ParsePunktParameters("", "", "", "w\t1\t2").ok());
  EXPECT_FALSE(ParsePunktParameters("", "", "", "w\t1__0").ok());
}

// ---- The Punkt algorithm, on hand-made parameters ------------------------------------------

TEST(SentTokenize, AKnownAbbreviationDoesNotEndTheSentence) {
  EXPECT_EQ(Sents(Params({"dr"}), "Dr. Smith went home. He slept."),
            (Strings{"Dr. Smith went home.", "He slept."}));
  EXPECT_EQ(Sents(Params({}), "Dr. Smith went home. He slept."),
            (Strings{"Dr.", "Smith went home.", "He slept."}));
  // The part after the last hyphen counts too.
  EXPECT_EQ(Sents(Params({"op"}), "Our co-op. is here. The pre-op. visit."),
            (Strings{"Our co-op. is here.", "The pre-op. visit."}));
}

TEST(SentTokenize, AnAbbreviationEndsTheSentenceBeforeAFrequentStarter) {
  EXPECT_EQ(Sents(Params({"dr"}, {}, {"the"}), "Ask the Dr. The answer is here."),
            (Strings{"Ask the Dr.", "The answer is here."}));
  // ... or before a word the orthographic evidence says starts sentences.
  EXPECT_EQ(Sents(Params({"dr"}, {}, {}, {{"the", kBegLc}}), "Ask the Dr. The answer is here."),
            (Strings{"Ask the Dr.", "The answer is here."}));
  EXPECT_EQ(Sents(Params({"dr"}), "Ask the Dr. The answer is here."),
            (Strings{"Ask the Dr. The answer is here."}));
}

TEST(SentTokenize, InitialsFollowTheOrthographicHeuristic) {
  // A word never seen in lower case after an initial: "S. Bach" is a name.
  EXPECT_EQ(Sents(Params({}, {}, {}, {{"bach", kMidUc}}), "Johann S. Bach played. Then he left."),
            (Strings{"Johann S. Bach played.", "Then he left."}));
  EXPECT_EQ(Sents(Params({}, {}, {}, {{"bach", kMidUc | kMidLc}}),
                  "Johann S. Bach played. Then he left."),
            (Strings{"Johann S.", "Bach played.", "Then he left."}));
  EXPECT_EQ(Sents(Params({}), "A. The end."), (Strings{"A. The end."}));
}

TEST(SentTokenize, OrdinalsFollowTheOrthographicHeuristic) {
  EXPECT_EQ(Sents(Params({}), "See chapter 5. then read on."),
            (Strings{"See chapter 5. then read on."}));
  EXPECT_EQ(Sents(Params({}, {}, {}, {{"then", kBegLc}}), "See chapter 5. then read on."),
            (Strings{"See chapter 5.", "then read on."}));
  EXPECT_EQ(Sents(Params({}), "See chapter 5. Then read on."),
            (Strings{"See chapter 5.", "Then read on."}));
}

TEST(SentTokenize, AKnownCollocationDoesNotBreak) {
  EXPECT_EQ(Sents(Params({}, {"x\ty"}), "Plan x. Y follows. Done."),
            (Strings{"Plan x. Y follows.", "Done."}));
}

TEST(SentTokenize, SpacedEllipsisPieces) {
  // ". . ." is one Punkt word, an abbreviation in the English data; the candidate contexts
  // around each of its periods are read separately.
  EXPECT_EQ(Sents(Params({". . "}), "Wait . . . then go. Now."),
            (Strings{"Wait .", ".", ".", "then go.", "Now."}));
}

TEST(SentTokenize, EmptyAndBlankTexts) {
  EXPECT_EQ(Sents(Params({}), ""), Strings{});
  EXPECT_EQ(Sents(Params({}), " \n\t "), Strings{});
  EXPECT_EQ(Sents(Params({}), "Ends with space.   "), (Strings{"Ends with space."}));
}

// ---- NLTKWordTokenizer ---------------------------------------------------------------------

TEST(TreebankTokenize, SplitsClitics) {
  EXPECT_EQ(Treebank("Don't stop."), (Strings{"Do", "n't", "stop", "."}));
  EXPECT_EQ(Treebank("I can't go, won't go."),
            (Strings{"I", "ca", "n't", "go", ",", "wo", "n't", "go", "."}));
  EXPECT_EQ(Treebank("'s 'S 'm 'D 'll 'LL 're 've n't N'T"),
            (Strings{"'s", "'S", "'m", "'D", "'ll", "'LL", "'re", "'ve", "n't", "N'T"}));
  EXPECT_EQ(Treebank("DON'T Don'T"), (Strings{"DO", "N'T", "Don'T"}));
  EXPECT_EQ(Treebank("The children's toys' boxes."),
            (Strings{"The", "children", "'s", "toys", "'", "boxes", "."}));
  EXPECT_EQ(Treebank("café's naïve"), (Strings{"café", "'s", "naïve"}));
  EXPECT_EQ(Treebank("x_y's"), (Strings{"x_y", "'s"}));
}

TEST(TreebankTokenize, WhitespaceIsCollapsedBeforeTheCliticRules) {
  // nltk 3.9.2 (PR #3224): a clitic before a newline or tab splits as before a space.
  EXPECT_EQ(Treebank("I'm\nfine."), (Strings{"I", "'m", "fine", "."}));
  EXPECT_EQ(Treebank("It's\tok."), (Strings{"It", "'s", "ok", "."}));
}

TEST(TreebankTokenize, SplitsMacIntyreContractions) {
  EXPECT_EQ(Treebank("cannot CANNOT Cannot"), (Strings{"can", "not", "CAN", "NOT", "Can", "not"}));
  EXPECT_EQ(Treebank("gonna wanna gimme lemme gotta d'ye more'n"),
            (Strings{"gon", "na", "wan", "na", "gim", "me", "lem", "me", "got", "ta", "d", "'ye",
                     "more", "'n"}));
  EXPECT_EQ(Treebank("'Tis the season, 'twas fun."),
            (Strings{"'T", "is", "the", "season", ",", "'t", "was", "fun", "."}));
  EXPECT_EQ(Treebank("wanna\n"), (Strings{"wan", "na"}));
  EXPECT_EQ(Treebank("wanna."), (Strings{"wan", "na", "."}));
}

TEST(TreebankTokenize, Quotes) {
  EXPECT_EQ(Treebank("\"Hello,\" he said."),
            (Strings{"``", "Hello", ",", "''", "he", "said", "."}));
  EXPECT_EQ(
      Treebank("She said \u201chi\u201d and \u2018bye\u2019."),
      (Strings{"She", "said", "\u201c", "hi", "\u201d", "and", "\u2018", "bye", "\u2019", "."}));
  EXPECT_EQ(Treebank("\u00abQuoi?\u00bb"), (Strings{"\u00ab", "Quoi", "?", "\u00bb"}));
  EXPECT_EQ(Treebank("The 'x' and 'a b' here."),
            (Strings{"The", "'", "x", "'", "and", "'", "a", "b", "'", "here", "."}));
  EXPECT_EQ(Treebank("''quoted'' and ``back``"),
            (Strings{"''", "quoted", "''", "and", "``", "back", "``"}));
  EXPECT_EQ(Treebank("(\"x\") [\"y\"] {''z''}"), (Strings{"(", "``", "x", "''", ")", "[", "``", "y",
                                                          "''", "]", "{", "``", "z", "''", "}"}));
  EXPECT_EQ(Treebank("\""), (Strings{"``"}));
  // IGNORECASE as sre has it: U+017F is "s" (a clitic), U+0131, U+0130 and U+212A are not.
  EXPECT_EQ(Treebank("'\u017f '\u0131 '\u0130 'k '\u212a"),
            (Strings{"'\u017f", "'", "\u0131", "'", "\u0130", "'", "k", "'", "\u212a"}));
}

TEST(TreebankTokenize, Punctuation) {
  EXPECT_EQ(Treebank("**x**"), (Strings{"*", "*", "x", "*", "*"}));
  EXPECT_EQ(Treebank("Pay $3.88 (roughly 3,36 euros) at 5:30, or 1,000; ok: yes"),
            (Strings{"Pay", "$", "3.88", "(", "roughly", "3,36", "euros", ")", "at", "5:30", ",",
                     "or", "1,000", ";", "ok", ":", "yes"}));
  EXPECT_EQ(Treebank("end..."), (Strings{"end", "..."}));
  EXPECT_EQ(Treebank("wait... what"), (Strings{"wait", "...", "what"}));
  EXPECT_EQ(Treebank("x--y---z"), (Strings{"x", "--", "y", "--", "-z"}));
  EXPECT_EQ(Treebank("a[b]c{d}e<f>g"),
            (Strings{"a", "[", "b", "]", "c", "{", "d", "}", "e", "<", "f", ">", "g"}));
  EXPECT_EQ(Treebank("a;b@c#d$e%f&g"),
            (Strings{"a", ";", "b", "@", "c", "#", "d", "$", "e", "%", "f", "&", "g"}));
  EXPECT_EQ(Treebank("Really?! Yes!"), (Strings{"Really", "?", "!", "Yes", "!"}));
  EXPECT_EQ(Treebank("a,b,,c,"), (Strings{"a", ",", "b", ",", ",c", ","}));
  EXPECT_EQ(Treebank("x:\n"), (Strings{"x", ":"}));
}

TEST(TreebankTokenize, OnlyTheFinalPeriodIsSplit) {
  EXPECT_EQ(Treebank("The end.)"), (Strings{"The", "end", ".", ")"}));
  EXPECT_EQ(Treebank("The end.\""), (Strings{"The", "end", ".", "''"}));
  EXPECT_EQ(Treebank("The end. \""), (Strings{"The", "end.", "``"}));
  EXPECT_EQ(Treebank("Tab\tend.\t"), (Strings{"Tab", "end", "."}));
  EXPECT_EQ(Treebank("end.\n"), (Strings{"end", "."}));
  EXPECT_EQ(Treebank("1.2.3."), (Strings{"1.2.3", "."}));
  EXPECT_EQ(Treebank("e.g. etc. i.e."), (Strings{"e.g.", "etc.", "i.e", "."}));
  EXPECT_EQ(Treebank("\u0130s this it? \u0130S."),
            (Strings{"\u0130s", "this", "it", "?", "\u0130S", "."}));
}

TEST(TreebankTokenize, EmptyAndBlankTexts) {
  EXPECT_EQ(Treebank(""), Strings{});
  EXPECT_EQ(Treebank("   "), Strings{});
}

// ---- The English parameters (../shared) ------------------------------------------------------

std::string PunktDir() { return EvalsDir() + "/ifbench/nlp/punkt_tab/english"; }

// The English parameters, parsed once; null when ../shared is absent.
const PunktParameters* English() {
  static const PunktParameters* const params = []() -> const PunktParameters* {
    std::string files[4];
    const char* names[4] = {"abbrev_types.txt", "collocations.tab", "sent_starters.txt",
                            "ortho_context.tab"};
    for (int i = 0; i < 4; ++i) {
      if (!ReadFile(PunktDir() + "/" + names[i], &files[i])) return nullptr;
    }
    Result<PunktParameters> r = ParsePunktParameters(files[0], files[1], files[2], files[3]);
    if (!r.ok()) {
      ADD_FAILURE() << r.error().message;
      return nullptr;
    }
    return new PunktParameters(std::move(r).value());
  }();
  return params;
}

#define REQUIRE_ENGLISH()                                                               \
  const PunktParameters* en = English();                                                \
  if (en == nullptr) {                                                                  \
    GTEST_SKIP() << NeedData("IFBench's model data");                                  \
  }

TEST(SentTokenizeEnglish, TheDataHasItsDocumentedSize) {
  REQUIRE_ENGLISH();
  EXPECT_EQ(en->abbrev_types.size(), 156u);
  EXPECT_EQ(en->collocations.size(), 37u);
  EXPECT_EQ(en->sent_starters.size(), 39u);
  EXPECT_EQ(en->ortho_context.size(), 20366u);
  EXPECT_EQ(en->abbrev_types.count(U". . "), 1u);
}

// The behaviours docs/reference/ifbench-checkers.md (section 5) lists.
TEST(SentTokenizeEnglish, DocumentedBehaviours) {
  REQUIRE_ENGLISH();
  EXPECT_EQ(Sents(*en, "Title\n\nPara one. Para two."),
            (Strings{"Title\n\nPara one.", "Para two."}));
  EXPECT_EQ(Sents(*en, "This is e.g. a test."), (Strings{"This is e.g.", "a test."}));
  EXPECT_EQ(Sents(*en, "Dr. Smith arrived. He sat down."),
            (Strings{"Dr. Smith arrived.", "He sat down."}));
  EXPECT_EQ(Sents(*en, "The U.S. economy grew. Prices rose."),
            (Strings{"The U.S. economy grew.", "Prices rose."}));
  EXPECT_EQ(Sents(*en, "1. Introduction\n2. Methods\n3. Results"),
            (Strings{"1.", "Introduction\n2.", "Methods\n3.", "Results"}));
  EXPECT_EQ(Sents(*en, "Really? it?!Yes"), (Strings{"Really?", "it?", "!Yes"}));
  EXPECT_EQ(Sents(*en, "He said \"hi.\" Then he left."),
            (Strings{"He said \"hi.\"", "Then he left."}));
  EXPECT_EQ(Sents(*en, "**Bold**\nText."), (Strings{"**Bold**\nText."}));
}

TEST(SentTokenizeEnglish, NltkDocstringExamples) {
  REQUIRE_ENGLISH();
  EXPECT_EQ(Sents(*en,
                  "Punkt knows that the periods in Mr. Smith and Johann S. Bach\ndo not mark "
                  "sentence boundaries.  And sometimes sentences\ncan start with "
                  "non-capitalized words.  i is a good variable\nname."),
            (Strings{"Punkt knows that the periods in Mr. Smith and Johann S. Bach\ndo not mark "
                     "sentence boundaries.",
                     "And sometimes sentences\ncan start with non-capitalized words.",
                     "i is a good variable\nname."}));
  EXPECT_EQ(Sents(*en,
                  "(How does it deal with this parenthesis?)  \"It should be part of the\n"
                  "previous sentence.\" \"(And the same with this one.)\" ('And this one!')\n"
                  "\"('(And (this)) '?)\" [(and this. )]"),
            (Strings{"(How does it deal with this parenthesis?)",
                     "\"It should be part of the\nprevious sentence.\"",
                     "\"(And the same with this one.)\"", "('And this one!')",
                     "\"('(And (this)) '?)\"", "[(and this. )]"}));
  EXPECT_EQ(Sents(*en, "Very bad acting!!! I promise."),
            (Strings{"Very bad acting!!!", "I promise."}));
}

TEST(SentTokenizeEnglish, MoreCases) {
  REQUIRE_ENGLISH();
  EXPECT_EQ(Sents(*en, "Wait... What happened?"), (Strings{"Wait... What happened?"}));
  EXPECT_EQ(Sents(*en, "It costs 3.5 dollars. That is cheap."),
            (Strings{"It costs 3.5 dollars.", "That is cheap."}));
  EXPECT_EQ(Sents(*en, "See p. 5 for details. Next."), (Strings{"See p. 5 for details.", "Next."}));
  EXPECT_EQ(Sents(*en, "No. 1 is best."), (Strings{"No.", "1 is best."}));
  EXPECT_EQ(Sents(*en, "He said: \"Go.\" -- and left."),
            (Strings{"He said: \"Go.\"", "-- and left."}));
  EXPECT_EQ(Sents(*en, "x. . . y. Z"), (Strings{"x. .", ".", "y.", "Z"}));
  // Only ASCII whitespace delimits the word before a candidate; \s (U+3000) does not.
  EXPECT_EQ(Sents(*en, "a.\u3000b.\u3000C."), (Strings{"a.\u3000b.\u3000C."}));
  EXPECT_EQ(Sents(*en, "Hello world"), (Strings{"Hello world"}));
}

TEST(WordTokenizeEnglish, SentencesThenTreebank) {
  REQUIRE_ENGLISH();
  EXPECT_EQ(Words(*en, "Mr. Smith's dog can't bark. It's \"quiet.\""),
            (Strings{"Mr.", "Smith", "'s", "dog", "ca", "n't", "bark", ".", "It", "'s", "``",
                     "quiet", ".", "''"}));
  EXPECT_EQ(Words(*en, "1. Introduction\n2. Methods"),
            (Strings{"1", ".", "Introduction", "2", ".", "Methods"}));
}

// ---- Differential: the IFBench texts against NLTK -----------------------------------------

// FNV-1a (64 bits) over the UTF-8 of each item, each followed by the byte 0xFF (never in UTF-8).
uint64_t HashItems(const std::vector<Text>& items) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](unsigned char b) {
    h ^= b;
    h *= 0x100000001b3ULL;
  };
  for (const Text& item : items) {
    for (char c : Encode(item)) mix(static_cast<unsigned char>(c));
    mix(0xFF);
  }
  return h;
}

struct Expected {
  uint64_t text_hash;
  size_t sentences;
  uint64_t sentences_hash;
  size_t words;
  uint64_t words_hash;
};

// For each text, in file order (the "response" of each line of scoring/ifbench_verdicts.jsonl.gz,
// then the "prompt" of each line of ifbench/IFBench_test.jsonl): the hash of the text, and the
// number and hash of nltk.sent_tokenize's sentences and of nltk.word_tokenize's words.
const Expected kExpected[] = {
    {0xc160f6159c2f1bf1ULL, 22, 0xda948fdae32082d2ULL, 591, 0xd9f5ad4df3046635ULL},
    {0x708f70e0ce024a8eULL, 14, 0x0b541f42635af13bULL, 768, 0xb2f2a79aa8c420adULL},
    {0x0fb278e6fa22df0cULL, 7, 0xe61305a66e4f34b2ULL, 224, 0x8d17e5ad7f99bbb3ULL},
    {0xb667277a351d5577ULL, 20, 0x58cbae1755b93c6eULL, 447, 0x24c5226a95d86b53ULL},
    {0x76e146e192d0dec2ULL, 9, 0x2f8a5846fd7c90e8ULL, 231, 0x6e1de3de21e7de7cULL},
    {0x5bcf26ea595c6817ULL, 7, 0x44dab34101587323ULL, 196, 0xe18c71740c3f727cULL},
    {0x53b2db8eb38390ceULL, 10, 0x081586242ed61a7fULL, 227, 0xa96a1fad92be6e84ULL},
    {0x31678e90a2a9098fULL, 7, 0xa0ec05063f4c7f2fULL, 151, 0xdad48d0cfe222e81ULL},
    {0x814147d50eed07bfULL, 30, 0xd0ec2281f7147142ULL, 494, 0xa61db72f8131ec22ULL},
    {0x43e2e9e6839b8282ULL, 1, 0x43e2e9e6839b8282ULL, 3, 0x9b569a6733b02656ULL},
    {0xdedcaa4779bbbe3cULL, 9, 0x68e621c7e5d7771aULL, 332, 0xda06fae73430a2bdULL},
    {0x51c68648a426c9afULL, 4, 0x7decbb4c3a323000ULL, 33, 0x3d3f02a5ff61a781ULL},
    {0xebdfe452474f69b4ULL, 4, 0x90db72a705f5b2c3ULL, 113, 0x7fadc2a4c619baf0ULL},
    {0x2b7665533c180e43ULL, 11, 0xa258b4a4721c4ba9ULL, 346, 0x9f681a9b48820e44ULL},
    {0x52b47d4fb077e430ULL, 7, 0x4d5ec60d615dc090ULL, 184, 0x857b1e5e3ed01a01ULL},
    {0x30db3291d3a87ae9ULL, 72, 0x20a3029810bba4deULL, 853, 0x4dad38132df445e5ULL},
    {0x51a034afac3ea252ULL, 17, 0xc6a754d65e781c9aULL, 510, 0x336975fe6442f871ULL},
    {0x477dbad0786d1a4bULL, 54, 0xc3acf6a9abfcca6cULL, 1013, 0x5c74038710847715ULL},
    {0x12dfdb04f6a77731ULL, 9, 0xfa56b255568b732dULL, 283, 0x7ca35bb3a9850739ULL},
    {0x46e578bdce1a36ddULL, 52, 0xd27b2f6079fead26ULL, 1085, 0x9d3e44859b026e0dULL},
    {0xd71f85718055b650ULL, 30, 0x7febfc9d5e94a007ULL, 776, 0xd3ec4cb66e05d0a3ULL},
    {0x3b8dcfd56d4666edULL, 57, 0xb4edd12061ac62bbULL, 908, 0xbe66d90f63ea3ebeULL},
    {0x20c47ee457ccf37fULL, 23, 0xe93ce8472761d635ULL, 794, 0x0ff876446420a1c4ULL},
    {0x68e43a4e467c4738ULL, 46, 0x9d538cfa9b130aafULL, 734, 0x57adffd0fd7ed4adULL},
    {0x9a9ee21b8978fa56ULL, 9, 0x323de4faf661f17eULL, 1599, 0x519f41a5d898398cULL},
    {0xacad70c8056fc40cULL, 26, 0x0c49ad2beae0bd41ULL, 530, 0x671a36c06c7ab3e7ULL},
    {0x574006d9f572abf7ULL, 16, 0xe50f09bbf259b27eULL, 369, 0xa2f4e7ac32af8929ULL},
    {0xe31d1f1042daa45bULL, 18, 0x62e6e8cccf6ae90cULL, 743, 0x658a828dc6bac481ULL},
    {0xea2c2a4914744c2eULL, 2, 0x8a8d94cbc0bd4fbbULL, 59, 0x38c853bcb51ae756ULL},
    {0x39984dbfd4f68cb9ULL, 10, 0x96e778fd2dddb480ULL, 151, 0xa2228479a9ebcce9ULL},
    {0xc3f9897da6465eafULL, 7, 0x29e08f40ffc32873ULL, 151, 0x906a189a1182ff55ULL},
    {0xd410bf85d0280ef5ULL, 5, 0xd0f90f2880c9e863ULL, 104, 0x5c7c155070cfebe4ULL},
    {0x44c1d60626d1bd48ULL, 27, 0xb7ff44d8ede95a94ULL, 172, 0x918c2c23cc1998c3ULL},
    {0xfb53710551065858ULL, 34, 0xa39e9044079baab5ULL, 476, 0x6a37b7c7cc1a4d83ULL},
    {0x673e360a5283d3e5ULL, 28, 0x0eb5d1b7c5fc149eULL, 182, 0x8f58f37b74fe4f68ULL},
    {0xa5f2c409e38b1d79ULL, 10, 0x2688d8df931134acULL, 267, 0x981c6b71889b9fedULL},
    {0x374361a81e0834eaULL, 51, 0xd4d577bea0e0d5deULL, 999, 0x62033218e2aa3732ULL},
    {0x2184a31d146d62adULL, 1, 0x2184a31d146d62adULL, 15, 0x86fecc19ca7ba359ULL},
    {0x05cf9b92c5eea987ULL, 1, 0x05cf9b92c5eea987ULL, 19, 0x93a8b28c0784dd47ULL},
    {0x9757163627f90d5eULL, 1, 0x9757163627f90d5eULL, 34, 0x16144a3a8d00bb83ULL},
    {0xb44be61288e06e6aULL, 6, 0xad2eece801c2493fULL, 95, 0x0d6351a7a7d4f7f0ULL},
    {0x6d7d8564dba2782bULL, 3, 0x75d0e3f17860a527ULL, 54, 0xeb116730aa49bbc2ULL},
    {0x42001b7432fe66f1ULL, 14, 0x270c9b24f9d6ae96ULL, 255, 0x2f3d4006b38d1957ULL},
    {0x1eb7accc07241a83ULL, 8, 0xd9cb1693ba060a6eULL, 161, 0x27769048cd73c28bULL},
    {0xd8ff8660a70a6c25ULL, 9, 0xf90d1d5e48417d91ULL, 143, 0x9497f79a7c107aa1ULL},
    {0x52069acddcee86abULL, 19, 0xe2ec0825016f0533ULL, 514, 0xe8fd0ad380bde60aULL},
    {0x4f67fc51ea36d734ULL, 23, 0x786132c064d15f6cULL, 431, 0x60e4f542f125cdfaULL},
    {0x9c543802f20aabf2ULL, 23, 0xb9cfda82cb39ea0cULL, 638, 0x9f46aa4280cb1a17ULL},
    {0x8ffd392c7e08cbdeULL, 17, 0xb9f9fe678ede010eULL, 465, 0x51bfe2cec16f11f6ULL},
    {0xadc81d8ac58ac6bdULL, 3, 0x9d627605cf0aa749ULL, 40, 0x97902dd04d908148ULL},
    {0xdb5878bb912287a0ULL, 1, 0xdb5878bb912287a0ULL, 22, 0xccdf1b996634b187ULL},
    {0xfd8430dcb0d37b0fULL, 34, 0x08f2f3ddfbb538c8ULL, 528, 0x2b7d166649007ec6ULL},
    {0xf7d1b432d6d53f5dULL, 1, 0xf7d1b432d6d53f5dULL, 50, 0xec970880bcf67bc0ULL},
    {0xb960e8c146bdc11aULL, 1, 0xb960e8c146bdc11aULL, 226, 0x65880b3828fd05c5ULL},
    {0x5810935c9d104a4dULL, 3, 0xca389cd95897001dULL, 25, 0xf93fba388c771c71ULL},
    {0xb4e916284183bb78ULL, 1, 0xb4e916284183bb78ULL, 288, 0x095c0297a1e1ecbdULL},
    {0x712fb2f3bcd8280dULL, 1, 0x712fb2f3bcd8280dULL, 4, 0xc90e784452a35972ULL},
    {0xea1a95b8246d1395ULL, 10, 0x1bfd12568d6698bcULL, 180, 0x4c63ad3f9cee92d8ULL},
    {0x81e633c590df3159ULL, 17, 0x46e1596733bf9a71ULL, 357, 0x6a70afdf0c7ae1b9ULL},
    {0xb484a7a283c8b858ULL, 10, 0xb961d2962b79704bULL, 435, 0xcbb575a627c75b00ULL},
    {0x556a67b68bd1ce9bULL, 10, 0xa20ed1ac3dc0eb4cULL, 366, 0x06428f5775c97324ULL},
    {0x6da03ed85ad35d7dULL, 20, 0xa7d30d8a152d897aULL, 383, 0xbf3b5368a1e3d3e7ULL},
    {0x4db3ff8168508ad1ULL, 5, 0xda921820ab49d3dfULL, 136, 0xd0b5d86182149ca0ULL},
    {0x4eb8c1877bc26c40ULL, 9, 0x10603c75fb7c217aULL, 260, 0x4782e536b72da4cfULL},
    {0x7c93e849776ab19dULL, 1, 0x7c93e849776ab19dULL, 1, 0x7c93e849776ab19dULL},
    {0x0979e485916748b8ULL, 1, 0x0979e485916748b8ULL, 2, 0x5059c4bfbb636dc3ULL},
    {0x7c93e849776ab19dULL, 1, 0x7c93e849776ab19dULL, 1, 0x7c93e849776ab19dULL},
    {0x59a668bafc8546baULL, 1, 0x59a668bafc8546baULL, 4, 0x6c7ccfce2ed11761ULL},
    {0xd17e31095f1271beULL, 10, 0x0990f318a99ee9e3ULL, 746, 0x4dc91729249512cbULL},
    {0x731f71bf0c4a1bfaULL, 1, 0x731f71bf0c4a1bfaULL, 451, 0xbe26e0f0ad3485f4ULL},
    {0xa8dc206aa64a81c5ULL, 12, 0xa840b826c6bbca1aULL, 309, 0x96f8e3100892ca8fULL},
    {0xc1b40c82dd4efec7ULL, 12, 0x0efcfa716f77474aULL, 438, 0x8abf67f70df189f8ULL},
    {0x2075bcf85c7ef0b7ULL, 13, 0x7a82634c5ca47b07ULL, 263, 0x48dc25dc070ff6cfULL},
    {0xf39b953eba71e9aeULL, 8, 0x030857cc352ed1a7ULL, 175, 0x53d710be7175a5d2ULL},
    {0x053434e4f7691acaULL, 8, 0xd2dba4adc9ed1dc3ULL, 211, 0x5e7f062301b1bdb6ULL},
    {0x7dc2ca567671949cULL, 25, 0x8bf991d2d6d48be6ULL, 515, 0xde8d9449eddc6d98ULL},
    {0x23e3d419c75bded3ULL, 9, 0x8eccb1fc39f1a809ULL, 228, 0x15350db207014520ULL},
    {0x6163da95dcc6d1e4ULL, 46, 0x0171103bca7213bbULL, 1356, 0x0b059cd95e09860dULL},
    {0xd8c7445ac8555066ULL, 23, 0xf99e6970ee51ddcaULL, 998, 0x908eebadc705ea55ULL},
    {0xc818c6d5a3bc0c5cULL, 10, 0x8e2637155df00259ULL, 337, 0x22a44f001b9cbec0ULL},
    {0x37995e38e20a03cbULL, 10, 0x429e0489bcec5376ULL, 229, 0xc0dcc8665dabd7b3ULL},
    {0xf97d6899a9fea51eULL, 12, 0x7b3ac14d452e38e1ULL, 828, 0x4e0291c33f53f4e3ULL},
    {0x5ca7ead2037e8837ULL, 22, 0x4f44febe3497a9d6ULL, 764, 0x47275d513958ad98ULL},
    {0xba358d19426ac310ULL, 1, 0xba358d19426ac310ULL, 188, 0x0c514ade28896685ULL},
    {0x481fe127cb72fa05ULL, 14, 0x5b53d371a6199aaeULL, 437, 0x2c467517fd673e8bULL},
    {0x397ab6ff82b4ff00ULL, 18, 0x89ea003b8fedcde7ULL, 394, 0xb1b6ed017fed0239ULL},
    {0x32ce6b05e7c48f46ULL, 1, 0x32ce6b05e7c48f46ULL, 154, 0x24c7c5277de968b1ULL},
    {0xacf6924d31d539ecULL, 23, 0x0f0262798aa2b368ULL, 418, 0x3a0be6393f9512a5ULL},
    {0xbe3460b1a191f4d3ULL, 18, 0x76716122a6473daaULL, 347, 0x34b88c5abe30b82bULL},
    {0xe25f793e21c3299cULL, 15, 0xd056952dc9093742ULL, 464, 0x9c47a9759a55a405ULL},
    {0x8c561ed5357933afULL, 14, 0x9579d6ea24cc031eULL, 525, 0x3645bd8a33cbc5d1ULL},
    {0x94b993ee422d299cULL, 18, 0x3f6ee32440202c75ULL, 528, 0x98cb2ce003f18e0fULL},
    {0xccc8b5f2f6ee394bULL, 21, 0xe2e68820a4c4e69fULL, 892, 0x3a77fbfe9d0b9d98ULL},
    {0x89b1905e6c48825aULL, 14, 0x2a89b8cd433955fbULL, 506, 0x69c60ba409ef17b1ULL},
    {0xbd5b57fc25e649c4ULL, 7, 0xd63d94ffcfcd2588ULL, 240, 0xfed8f17fc8b22e3fULL},
    {0xf951500984024d09ULL, 28, 0x1b04af415076cbccULL, 592, 0x0fba3b33ef9f3ce2ULL},
    {0x615ef96c10dd442eULL, 7, 0xd3bd447b2257ab30ULL, 699, 0x3c9fe881beae9ed8ULL},
    {0x69402549d39dafe3ULL, 51, 0xa83b4dbe46a52259ULL, 648, 0x7fee81e17f19fceaULL},
    {0x328052ae9b9f5c3eULL, 44, 0x2f5c530c300c0089ULL, 838, 0xee151c29ba733aa9ULL},
    {0x1accab3b3cf7c158ULL, 3, 0xcb4d9dd697225488ULL, 50, 0x5dd9a6e2b8dead7fULL},
    {0xb2e48d1fa0270d42ULL, 8, 0x93b4cc83234104e9ULL, 168, 0xa6bcb0706e317fabULL},
    {0xd031e5319f56549eULL, 10, 0xe141ea1ada6d40f7ULL, 239, 0x49506292d0d1accaULL},
    {0x1e6274164c6763f8ULL, 24, 0x94fb27419a3a4cd7ULL, 666, 0x75fddb5c052c9e33ULL},
    {0x40ef97832cca20a2ULL, 14, 0x6bdaa8ad103a9525ULL, 323, 0x07625c9ac9f14e26ULL},
    {0x3f492fd08b00f1ffULL, 2, 0xd78ac9027011f894ULL, 47, 0x211250b5512ba93fULL},
    {0x6fcea073a37d6423ULL, 20, 0x9a8d015567a6d584ULL, 398, 0x295284be31445406ULL},
    {0x7563108c2686f3e9ULL, 19, 0x813f28081407acdfULL, 615, 0xf0e9478c9bf2ea0fULL},
    {0x90b34341e30210daULL, 35, 0xf14f0972dbcbfc66ULL, 202, 0x2fd80076310eee81ULL},
    {0x780ce342d753a562ULL, 3, 0x09c3d911297302f8ULL, 35, 0xd8dc91c9eb3083c4ULL},
    {0x4be22ac5183a80b7ULL, 3, 0x817caa86665ea23fULL, 35, 0x234115c687bc5557ULL},
    {0x8966671e66be882fULL, 3, 0x3c725f2e2d6a5c1fULL, 31, 0x4486af9759ad4eebULL},
    {0x1406a293f268c6b0ULL, 2, 0x79520a31b587bdc7ULL, 96, 0x03507ba9a21ed61bULL},
    {0xd77877e299d8bbe6ULL, 6, 0xa449e2d922043991ULL, 277, 0x44343743b6e874acULL},
    {0x3a56d246fbe6e288ULL, 6, 0x4e581e2f3b0f73adULL, 108, 0x5b8bc823abd0c701ULL},
    {0x61e8cacc7ddee64fULL, 34, 0xb7f12f9083e7917aULL, 777, 0x33196f8f3bf43f43ULL},
    {0x8b8243c5e5f16940ULL, 3, 0x5be480d93f7a518cULL, 113, 0x75f65ad46286aa94ULL},
    {0x43e4ef1651026d0bULL, 4, 0x9512dff122a5472aULL, 81, 0x42cc61c7979054e7ULL},
    {0xd4446c361caf8e43ULL, 36, 0x2807025678cf7256ULL, 373, 0x6975df6d27a1af83ULL},
    {0x811f83eb90f985a7ULL, 10, 0xabac9a777324f96cULL, 215, 0xf97c0fb2a9c8b3c7ULL},
    {0x562a3cafb686c318ULL, 5, 0x4af7d99cde2bc386ULL, 60, 0x26d534b145346339ULL},
    {0x993ae200aeb04b5cULL, 4, 0xeb597fbe347cc093ULL, 67, 0x87e94839a8207ebaULL},
    {0x8d347cdd4a7b9846ULL, 2, 0x0a1733d347ed3f59ULL, 32, 0xc6c1fb6f4072a36dULL},
    {0x2393d4c69aefa4adULL, 6, 0xe56b43174f40047eULL, 134, 0x44cdf4acc34eb2d4ULL},
    {0x5f7b704f8316a637ULL, 64, 0xedeaacca5624c7e0ULL, 1457, 0x82f7a4cdf609b31fULL},
    {0xed8021edb7ad0b61ULL, 57, 0xf74c2f41cbac9531ULL, 874, 0x3dce33643db9a182ULL},
    {0xa4a647203a52f1d2ULL, 8, 0xa239a46a2b7a7cabULL, 189, 0xe831ac5d95b67df6ULL},
    {0x8f3288120a117fe0ULL, 6, 0x93ec59c5acbc1cd9ULL, 140, 0x39573b99e4193de7ULL},
    {0x25d78ae9668bbbd6ULL, 13, 0x3776618c2ea5c156ULL, 286, 0x75fe209acd686d6dULL},
    {0x30003e382417142eULL, 37, 0xfd01db04e7485712ULL, 552, 0x863288b4cb660a93ULL},
    {0xcf41706e2146cb37ULL, 50, 0x5fd07a2f0456a7b4ULL, 502, 0xebabeed647cf033aULL},
    {0x1be1b092a074dbdeULL, 10, 0xe90d3f464a444f63ULL, 223, 0xae8eebd9050959deULL},
    {0xe3bcf76b5f871af3ULL, 13, 0xd8cbb8f8e1ffa5adULL, 192, 0x1886a4263bcf994cULL},
    {0xa003d25fd5563e82ULL, 37, 0xfa9937187504fefaULL, 524, 0xd47b9c20d92d51a5ULL},
    {0x02f7eef8bef8e0b4ULL, 5, 0x7ebf722adfc645a6ULL, 69, 0x6d31f01cd856b2ccULL},
    {0xab1fa1280e864517ULL, 19, 0xa2fbbf1f9102b8a5ULL, 526, 0xc07ca483ca025bf2ULL},
    {0xb5a109ae716e265dULL, 31, 0x18b3408cd6db5515ULL, 309, 0x1cc1f5afcaba10f7ULL},
    {0xb85ac4e34a0eafabULL, 19, 0xdf0cf9ce6585bee3ULL, 352, 0x2c3993f62725905aULL},
    {0x1d21580ed2c079dfULL, 14, 0x00eeeded835cde40ULL, 226, 0x8e3ba2964dc67370ULL},
    {0x130a10b99c6c2af6ULL, 11, 0xf0521cc4f081af6cULL, 109, 0x0511d33606ad221cULL},
    {0x90053231a164c36bULL, 20, 0x65ffccce77f59c06ULL, 357, 0x397a65281fc16da7ULL},
    {0x4ac06f17fb44e42dULL, 1, 0x4ac06f17fb44e42dULL, 42, 0x47c74719becc6042ULL},
    {0x37246e6a0f00961aULL, 16, 0x1c15c8680ae6c0cdULL, 224, 0x2e3e1732cfc66759ULL},
    {0xb0141d2eb2bab3ceULL, 1, 0xb0141d2eb2bab3ceULL, 120, 0x4ab21f88ef1a6193ULL},
    {0xbddf6c1690eb8911ULL, 20, 0x9e1d7da49c7cdaccULL, 212, 0x7d14be248320a034ULL},
    {0xe30393d64120954cULL, 1, 0xe30393d64120954cULL, 10, 0x6259a764754056abULL},
    {0x381c701ba1f32fc3ULL, 1, 0x381c701ba1f32fc3ULL, 13, 0x75d9bef43106825dULL},
    {0xfefd28d55c86d5c5ULL, 40, 0x30df25b45494947cULL, 751, 0x27d52033ae34acbfULL},
    {0xe2f4eb2df5b9272dULL, 39, 0xdb8974a82b6e263bULL, 830, 0x8653177718f27486ULL},
    {0xf432ada32bd7d2c5ULL, 18, 0x1f0625ab575d8fc0ULL, 215, 0x3f5ace02e9d7f0cfULL},
    {0xfa00e549dc51e939ULL, 17, 0xdaf5ecafe2249419ULL, 618, 0x3d3dd086db9f705cULL},
    {0x4e7b1076b13e3f1aULL, 1, 0x4e7b1076b13e3f1aULL, 44, 0xe019a2d08adda181ULL},
    {0x1a1b02e4da2b4cd0ULL, 9, 0x95c89878711d9c3aULL, 161, 0x936a757f0a07eca2ULL},
    {0x6f50343a9923312fULL, 4, 0x90fbcbe97d4f0276ULL, 46, 0x5d29e08dae8f59acULL},
    {0x943dfe77cb33b3ccULL, 20, 0x46c7dfe18513cb85ULL, 416, 0x301d783363098dabULL},
    {0x8e64ca32188d9d0dULL, 35, 0x1066569a7cc7cea7ULL, 711, 0xc9a2f9b9a48bbbabULL},
    {0xd3da9f497446d9e1ULL, 28, 0x11aa7506b165e018ULL, 808, 0xe9e2b543ebc71fdaULL},
    {0x6708d4a0a726ef16ULL, 29, 0x9264dc1d9a9b6d6cULL, 520, 0xf3fcef8ac76cd741ULL},
    {0x5246137cd891b281ULL, 9, 0xc6fd05efb4be8417ULL, 213, 0x149141dfaf01396fULL},
    {0x51794ae06a96d916ULL, 18, 0xc91edc8a8156b475ULL, 411, 0x5324cb10317eb3d0ULL},
    {0xf8169eb40c004652ULL, 26, 0x8a9a0d211944bf2bULL, 388, 0x6018655156beb647ULL},
    {0xa1bd9c76229a7b27ULL, 12, 0xd75938cbcd79a70aULL, 180, 0x876c2ea6e0a1f8d8ULL},
    {0x9c443c48073def26ULL, 2, 0x0f28f4a538956fe5ULL, 24, 0xde5227d80a5e2c53ULL},
    {0x9977a9fa0c947cd2ULL, 1, 0x9977a9fa0c947cd2ULL, 3, 0xf3cd574061c64194ULL},
    {0x37b23e73a44ae601ULL, 35, 0xc23b014deb16a001ULL, 792, 0xeea8769889ca81a6ULL},
    {0xc191782d79a34505ULL, 45, 0xa390c745dcc175f1ULL, 571, 0x06d3b17f01d67dfdULL},
    {0x39f600d3899396bfULL, 3, 0x8984152f43b1e27fULL, 43, 0x00b01ac86a5c7e41ULL},
    {0x79cb117b42136b15ULL, 17, 0x2f854def266d0595ULL, 431, 0xf9f0653209c7a33fULL},
    {0x60da2d902aca7f01ULL, 22, 0xa80945816eb09026ULL, 760, 0xef98bca79630de0cULL},
    {0x3439e752f092ff8aULL, 1, 0x3439e752f092ff8aULL, 25, 0xc4b35df5dc34a8c6ULL},
    {0xb46cc680a2ba013aULL, 20, 0x51556a5acccb1d7bULL, 556, 0x569477d616d56307ULL},
    {0x81f0f84da9765db6ULL, 3, 0xf85626b2096588feULL, 72, 0x5ba873b433663199ULL},
    {0x0d0405067fdd64baULL, 6, 0x75f0c7fd89a102fdULL, 130, 0x31554cf197fd8d11ULL},
    {0x585320f093cfd911ULL, 10, 0x4ed1719cb1a8f48cULL, 245, 0x9ca1fd555fa54d07ULL},
    {0xaec1eac5dd9c0fbaULL, 5, 0xf311a7d6ddf86e34ULL, 102, 0x2420fb9a3eb8daefULL},
    {0x2702cfd41fd7bab2ULL, 1, 0x2702cfd41fd7bab2ULL, 79, 0xa3d753670a696ca6ULL},
    {0xef92d8a723cde58cULL, 1, 0xef92d8a723cde58cULL, 35, 0x0af39f78b0e162b8ULL},
    {0x61374c84160d58d6ULL, 26, 0xf6eaf6f64d11404bULL, 672, 0x4ba97afc9038f91dULL},
    {0xcd0e82b74be9405fULL, 5, 0x3055c13daa9b8903ULL, 184, 0x4928733254e8d11cULL},
    {0x9d232554f4684c76ULL, 1, 0x9d232554f4684c76ULL, 172, 0x5665c6100e79e55dULL},
    {0x12f53d04ae00a014ULL, 1, 0x12f53d04ae00a014ULL, 6, 0x40bb4befc290f4abULL},
    {0x00427e1ab5aa69d5ULL, 14, 0x0c41b7bd482c6798ULL, 406, 0x9c95d4c10a372e5aULL},
    {0x388f7cae5a11139eULL, 24, 0xfcad2ec58d4e55b3ULL, 522, 0xc61106e7ca13ad8bULL},
    {0x8b604f59a75c81ddULL, 3, 0xd2651f2770cd16fdULL, 41, 0x470e409ecce3b7cdULL},
    {0x764773568a183d90ULL, 34, 0x29bb9f46e1f0a813ULL, 720, 0xe12cd1aa782d44edULL},
    {0xf34debae2fd1f20cULL, 16, 0x53057afcfc739e2fULL, 413, 0xd9114c557ac54ec2ULL},
    {0x1a5dc39a95ad7163ULL, 41, 0xb83006f9186f2909ULL, 576, 0x6074c3ae779db730ULL},
    {0x8b58d7fe39b47fe0ULL, 6, 0xfdca88750236bb07ULL, 121, 0x5af94f94b5076e32ULL},
    {0xb1de5fd7a4956027ULL, 4, 0x6ff619005e92cb9aULL, 136, 0x539a445cc34cfdeeULL},
    {0x056f6522cfcad002ULL, 6, 0x7d3cb2f5f4caf86dULL, 128, 0x8c6cbbf37c022927ULL},
    {0x1a161ea784f614b7ULL, 11, 0x3691f6a0821e992dULL, 910, 0x0b8429c0158dfc60ULL},
    {0xa905be9cb4d78052ULL, 1, 0xa905be9cb4d78052ULL, 1, 0xa905be9cb4d78052ULL},
    {0x0a9acf506833c5a9ULL, 1, 0x0a9acf506833c5a9ULL, 21, 0x24e8e475a630a40bULL},
    {0xbf0c1eb02393601bULL, 4, 0xdf6f96fb74eb2cd2ULL, 121, 0xe8dbc26beba8168fULL},
    {0x59bc54d16946e04eULL, 2, 0xacc513a1fa166f93ULL, 48, 0x16e4f75647ba8377ULL},
    {0xe04b56840e20fe2bULL, 2, 0x53e4e466fce9b3b8ULL, 126, 0x73152bf9e20ee1a4ULL},
    {0xff2be6f118f9daf5ULL, 6, 0xb54b8c4480c90748ULL, 153, 0x6806cb269db23b2fULL},
    {0xb547d168a5c6e6ccULL, 2, 0xe13fce0f56a0f461ULL, 79, 0x0458935b2a38d694ULL},
    {0xf2534da137bcc673ULL, 7, 0x7e215aaf03a1b3a7ULL, 104, 0x942defae18818296ULL},
    {0xe89f62e0d94c4f6cULL, 2, 0x53d82339247d4045ULL, 103, 0xbfcf71fb1ab4a024ULL},
    {0x142aa961b264c069ULL, 4, 0xf04e950f7ccf1024ULL, 70, 0x22905c32cfc89d24ULL},
    {0xcedf3f5b0a04aa97ULL, 5, 0x4395353b6c9da4a5ULL, 109, 0xc330f281113ff753ULL},
    {0xc56545721a140f3eULL, 4, 0x78ddbc095fab3a83ULL, 105, 0x2d9d30a5f4637eaeULL},
    {0x546262321fb4e612ULL, 2, 0x2224415be8bab8a5ULL, 42, 0x403dc438f472d207ULL},
    {0x2823232dca85b89bULL, 2, 0x96db16e1e7cac4ccULL, 52, 0xe95ebe25efe58b10ULL},
    {0xe70956b7ae2d7974ULL, 5, 0x9d2fe60b3ff4a936ULL, 105, 0x5581e4e88da8c456ULL},
    {0x732ae9b93ccdf192ULL, 2, 0x6e0932cdf952b0abULL, 89, 0xe1eab1d4ce6adad8ULL},
    {0x17b0bf2ce5402040ULL, 2, 0xb7eaba6114b5331fULL, 110, 0x1323022bc0bff525ULL},
    {0xb86bb070f3efdf06ULL, 4, 0x4065d6eb49a58483ULL, 101, 0x3a97ade25e409d36ULL},
    {0xcc5317c7ee504b29ULL, 2, 0xee65f6d3a986c7d6ULL, 42, 0x0a989d2a176185bcULL},
    {0x5e931f387315695bULL, 2, 0xa984bff83b233f84ULL, 21, 0x4f402184cd91ca93ULL},
    {0x98fbe6306c8347e2ULL, 5, 0xe382c600df986954ULL, 105, 0x09dd1517e5efc2aaULL},
    {0xbffb1dd4913e004eULL, 2, 0x07aaccdcb7c0d763ULL, 67, 0x2c02ecdc6fdb0808ULL},
    {0x5fcfbe318f54c5f3ULL, 2, 0xa67422e3b01dd76eULL, 67, 0x8a2eb79a946a121dULL},
    {0xa7ebd7ce5871d232ULL, 3, 0x9e65b8c4d9bc1f66ULL, 40, 0x828dca80ca8fb721ULL},
    {0x0a0d833af4d3ec35ULL, 3, 0x75afeb83ee7cd9d9ULL, 26, 0xff8c99b930924c32ULL},
    {0xbf17064c0cd955bfULL, 3, 0x8a14854d8b9f098bULL, 24, 0xf574f7b1e0c2071cULL},
    {0x277a89d267dbbaaaULL, 3, 0x2314ad0406e2c1aeULL, 37, 0x4fb0f691adbb03eaULL},
    {0xd9ce18398a448dcfULL, 3, 0x1e6a734c9d04e023ULL, 170, 0x4a22652a2d70766aULL},
    {0xd66a7f71c4b1232cULL, 2, 0x1516ba82836acd93ULL, 166, 0xe16b8b3973e16611ULL},
    {0xf460429fa3c100a2ULL, 3, 0x2b5d6bce99aa8d04ULL, 160, 0x539b42fabdae0251ULL},
    {0xfb54442e2dd234baULL, 2, 0xfa86788181dec951ULL, 135, 0x3ae57475a98897e8ULL},
    {0x59e4d42b60aa0754ULL, 3, 0x9182b066b3d638dcULL, 186, 0xf617401862bbb8cbULL},
    {0xf69aec1a394f8663ULL, 2, 0xf8b92ea1b0b0ef9eULL, 17, 0xa48a013f6509f8e5ULL},
    {0xa4405e4ad5f80132ULL, 1, 0xa4405e4ad5f80132ULL, 29, 0x2d5647f1b91b6dd8ULL},
    {0xa998696696c02214ULL, 4, 0xc0ac88b9f6d934f1ULL, 92, 0x14e7c4b742f36a65ULL},
    {0xfdffc629fa87b255ULL, 4, 0x036f90cb1c62d67aULL, 98, 0x4626573590ca68f8ULL},
    {0x50c7e849a9e9d454ULL, 2, 0x289d196aed9cb3fbULL, 25, 0xc27e36a8826e6604ULL},
    {0xae7cc481e3f386a2ULL, 6, 0x565d81d7e6f2b461ULL, 117, 0x306c317277549ab6ULL},
    {0x761acf2eaddb5323ULL, 10, 0x1dd894212b366806ULL, 128, 0x5d09380f3dd35d44ULL},
    {0xa30d16779b084086ULL, 4, 0x8dc642799fde87c7ULL, 83, 0x2a17ead422fa4c34ULL},
    {0x2cb6ad8acd9940fbULL, 3, 0x330dde0ea9880d77ULL, 64, 0x9df0075d2db0baaeULL},
    {0x766b7053584757a1ULL, 4, 0xe7168db60ccfd4c4ULL, 49, 0x577c5146ab95225dULL},
    {0xf95a6ce45fd66ac7ULL, 4, 0x612c367c255df08eULL, 79, 0xc7fdf190697a0c51ULL},
    {0xa2d92d27893ab3dcULL, 5, 0x37c5b4636617062eULL, 112, 0x0969b958cf847575ULL},
    {0x79d93453b7d27ecaULL, 1, 0x79d93453b7d27ecaULL, 30, 0xef6fb510f938881dULL},
    {0xff34126f46e758f2ULL, 2, 0x01ed595b92969fd5ULL, 86, 0xa12fa59a16fa99a1ULL},
    {0x23808ac8d571d60dULL, 4, 0x55a22703b228499eULL, 61, 0xb05f7ca7bf49a7c1ULL},
    {0x9f18ae3717cd4e21ULL, 2, 0x03ca99c410615792ULL, 24, 0x1946182b275fa4f6ULL},
    {0x23ecdebdda3b0441ULL, 6, 0xfbd5a50757b5b294ULL, 72, 0xf15574615253b7faULL},
    {0xdfedb69059ac34d5ULL, 2, 0x80156bdf465bafa8ULL, 45, 0xd4330a5896d5327bULL},
    {0xc8a956724a588083ULL, 2, 0xe87fc201c3f69e9eULL, 52, 0xd3219c88478aac46ULL},
    {0x3aee60dc46c8f0f2ULL, 3, 0x4139942efcf991e8ULL, 35, 0x8c59a8b6c6165d7aULL},
    {0x389c26c3eaa6bac9ULL, 1, 0x389c26c3eaa6bac9ULL, 26, 0xd0e4f130365d82ecULL},
    {0x35f64f73705727beULL, 2, 0x706760a38d1af03fULL, 41, 0x3c40c8cc45b53fa4ULL},
    {0xef83096ee6538214ULL, 3, 0x8fd73fe211d1b224ULL, 195, 0xd60d849738d1158eULL},
    {0x80433ac38054a39eULL, 4, 0x245c6d4f732571bbULL, 97, 0xc55d7750f150a15eULL},
    {0x516db0d7854bf135ULL, 2, 0x49340c2a8498eaf8ULL, 15, 0xa468df8c0037cad3ULL},
    {0x24fb729e2177f2caULL, 1, 0x24fb729e2177f2caULL, 18, 0x9ba6a5f8c4f39e97ULL},
    {0x2a56f81fdba2ba47ULL, 3, 0x9cbeaa961cb9d137ULL, 120, 0x5cd5dd703a7773c4ULL},
    {0x16e85418e0507e2eULL, 2, 0x2294386a7a655405ULL, 19, 0x0aea3e84bdf167feULL},
    {0x73a1e79233079787ULL, 2, 0x2d78f9453aa9274cULL, 17, 0x10bcd07e251b4e79ULL},
    {0x5b84444d2d9ec49aULL, 6, 0xe31ed115edab93adULL, 108, 0x706e726575ba2297ULL},
    {0x88b587605a4f8636ULL, 2, 0xef3ab985df43fc69ULL, 59, 0x5ef57dd71082abc2ULL},
    {0x1c9f29756a0c1160ULL, 2, 0xc374df440defcd2fULL, 67, 0x655f97ee3dc34f68ULL},
    {0x0ea50535cd92accdULL, 3, 0x16443c2ff2d29279ULL, 125, 0x0216956b0d62ed45ULL},
    {0x38e6cfe3590afcd6ULL, 13, 0x835d7db56f1722e2ULL, 148, 0x6b769775fb148fb5ULL},
    {0x630d463cae163400ULL, 2, 0x9cab42eca0c9ff8fULL, 21, 0xbbf6f696aad335caULL},
    {0x4baafd116b15a1e4ULL, 7, 0x9d0b8e9b1faba076ULL, 127, 0xf5a30e0659771d26ULL},
    {0x7ac2be49cb01f1f0ULL, 3, 0xbc29c4ef41ff1e2cULL, 66, 0x524dc1f1b3b2d053ULL},
    {0xc26a8d0ded502f46ULL, 3, 0x5584d79209873a3cULL, 83, 0x0289bc6854466692ULL},
    {0xe6d1d41df5eb1b5cULL, 5, 0x380241b49e593d12ULL, 96, 0xbef11b6c9be88eedULL},
    {0x5dcadff475feac89ULL, 3, 0x6acc8c87bb5fdce5ULL, 77, 0x7e579e249a44eb25ULL},
    {0x4f5b486f8cdf9439ULL, 1, 0x4f5b486f8cdf9439ULL, 14, 0x9dcefbfb1a6603ecULL},
    {0x4c5ab0acefb09fabULL, 5, 0x3eaeb5da120664afULL, 98, 0xeed08d4a5a7a864cULL},
    {0x678ce3256b6bda10ULL, 4, 0x92c6a917a2af86e7ULL, 73, 0xe515f2db4765e4feULL},
    {0x06d4912f3fe33638ULL, 2, 0x3d976c342ac220bdULL, 25, 0x6cad53a1d54ad56aULL},
    {0xb37cc1e7318b1965ULL, 2, 0x249c03912448f1bcULL, 18, 0x25deba7023170c1cULL},
    {0xfc26950998ea51b4ULL, 2, 0x5e06645cc4ee4829ULL, 26, 0xa6d23ca4057ed8b9ULL},
    {0xa4dd912176b43c7bULL, 3, 0x18f0a140ac0b9147ULL, 60, 0xe08fc253cbe6b32cULL},
    {0x056dade170514ad6ULL, 2, 0xbea632d10891a07fULL, 44, 0x14378533498d2b9bULL},
    {0x9d28593d7b8d7e0dULL, 4, 0x35e3413e87db503aULL, 77, 0x0b167a4bda9697e3ULL},
    {0x132a6013c9d3ad89ULL, 3, 0xb93a88115423ca01ULL, 63, 0x9ce0fcba9023a117ULL},
    {0xc4dffcf388578c15ULL, 3, 0x11b2c083de8460adULL, 36, 0x3253cdb3e43091c6ULL},
    {0x52d4a08d7f634a4dULL, 3, 0x49af6d59aa4e7875ULL, 71, 0xa0ab1b85ab406cb7ULL},
    {0x5a2880316f1d5e49ULL, 5, 0xc703d23b9420e5fdULL, 80, 0x49b67cf68c72865dULL},
    {0x2c8833dcf9936437ULL, 3, 0x23e71c5213401da3ULL, 27, 0x627c812058f6127dULL},
    {0xcfb0f5d9487d7d38ULL, 3, 0x78790022a79116eaULL, 43, 0xff1d81af3e8ac7acULL},
    {0x1fe8c4fea0d6c1d5ULL, 3, 0x1a0939e0da3deecfULL, 59, 0x423538ec9a9cbc93ULL},
    {0x291dd6c1ef401de2ULL, 2, 0xb011fc47def5fde9ULL, 30, 0x3ca30b27f384e425ULL},
    {0xf2821a08acdb152cULL, 6, 0x50ef333cbfb8f8adULL, 127, 0x8e8e478c5c8424d8ULL},
    {0x730716a272466678ULL, 5, 0xbcea4233f395b866ULL, 69, 0x2bdd8ce6fea90a62ULL},
    {0x46cf3270dfb63a47ULL, 3, 0x9f259e188b23b473ULL, 38, 0x4f53e44d5362cb1eULL},
    {0x7ae37b35dd6029e2ULL, 3, 0x2aa0c40870e6a310ULL, 36, 0x2507b3d64e3bbb4fULL},
    {0x0b004cba181c6ee9ULL, 4, 0x6215115bf742566aULL, 78, 0xab003eb34efaf0d2ULL},
    {0x0b59559812f9320eULL, 3, 0xe96baec6fbb66588ULL, 52, 0xbbf4ce866f28fb03ULL},
    {0xffed910f000d7f10ULL, 3, 0x419ed2c65e49155eULL, 56, 0xe13abf332bfcddfdULL},
    {0x73e8588276ac57c4ULL, 8, 0x3ceeb47fd3966247ULL, 106, 0x3b7f1c7239ca2bffULL},
    {0x4abbaa4a9fd435b4ULL, 2, 0x611932fc9a102c03ULL, 48, 0x483c3dec95dac6edULL},
    {0x9801715692740b3fULL, 1, 0x9801715692740b3fULL, 52, 0x22f1e0eccc79aa54ULL},
    {0xa3fb5e3025b55e88ULL, 4, 0x10bffd53d808d761ULL, 107, 0x7d6f8113b69fa28cULL},
    {0x98dc35c5600c2c8dULL, 1, 0x98dc35c5600c2c8dULL, 33, 0xf4213b2b7a3e67c7ULL},
    {0xcec14ec02ce4d7d3ULL, 5, 0x9f5fac72c906483bULL, 134, 0x5f2c65fc7548f338ULL},
    {0x3a84532a9b7c5ccaULL, 2, 0xa2c8ef968904deb1ULL, 31, 0xb59fd55cfd8098deULL},
    {0xa2454a3631b4a837ULL, 4, 0x1950439c62e04294ULL, 62, 0xa1ba81b9c2de0ca8ULL},
    {0xe2077b9c6208be9aULL, 8, 0x5441cab5f5fceecbULL, 118, 0x52b21400877168f3ULL},
    {0xffa42b36e15246e2ULL, 4, 0xdf2289776ba069a3ULL, 49, 0x57c2c22766b12630ULL},
    {0xa586b8f8eb6224daULL, 5, 0x9fbdf0e3c9c6bdfcULL, 76, 0xfffea3817ad2f99fULL},
    {0xb5f5952427099373ULL, 3, 0x63337caa5ce20bbdULL, 43, 0xba1ab0edda742bdfULL},
    {0x8f1b83a63ce4405eULL, 2, 0x535d81d0818296fdULL, 67, 0x5a44e5775a7e6476ULL},
    {0x62728e46622b8969ULL, 2, 0x1542271dfd63e644ULL, 50, 0x802dca581f18ab62ULL},
    {0x9f88577640f3439aULL, 2, 0xb00e5ac505f21e8bULL, 37, 0xe0e4458102203fd6ULL},
    {0x7dba5282856ec479ULL, 5, 0xd684ccac71cb7225ULL, 123, 0x3e9e77db673af5dbULL},
    {0x42a54dc558a2d8a6ULL, 2, 0x2dc27c294778c613ULL, 25, 0x2d88253757466162ULL},
    {0x3888ec8f41b7ab42ULL, 8, 0xd947990bd8d3774fULL, 94, 0x5aa4982d0e4b8af3ULL},
    {0x507ea4e2f996b3b4ULL, 3, 0x2eeac18178968a3cULL, 71, 0x21125f37778b1a0aULL},
    {0x7a47cdaf9cfb24aaULL, 2, 0xfb2f3bc4826907dbULL, 77, 0xd95fe854b05a6cdaULL},
    {0x174d09682d3ec3dfULL, 4, 0xadcb1847668ce98cULL, 68, 0x93ebfa3e353a8e3eULL},
    {0x490db0404d6ede63ULL, 2, 0x44b0faba8bf06dc2ULL, 66, 0x442d15aa352cdf88ULL},
    {0x9477fa9c4d437c2cULL, 3, 0x3a6bdfe8ef67b33eULL, 42, 0x440411e9d7067fabULL},
    {0x4c70f96843f3f625ULL, 6, 0x5ab2c7d15fccaf52ULL, 114, 0x55a04d94006ed6e8ULL},
    {0x9497de44905e0b0eULL, 1, 0x9497de44905e0b0eULL, 48, 0x1353fb7def4ca56dULL},
    {0xb1e33cfa233c86d4ULL, 1, 0xb1e33cfa233c86d4ULL, 35, 0x05613c8bd906d72cULL},
    {0xfc27dcef80d98f94ULL, 2, 0xac3e1a0ba994f23fULL, 43, 0xb8a08cb946e3e0d4ULL},
    {0xfef92a99e436932dULL, 1, 0xfef92a99e436932dULL, 48, 0xb66344e333342f7eULL},
    {0x385097dd4ea76618ULL, 2, 0x5bd912036cc78783ULL, 46, 0x34f878a36706d989ULL},
    {0x4cb281e655716d6eULL, 4, 0xa028cbc03abc8373ULL, 107, 0x2cd99a6ab89bf414ULL},
    {0x57c2785818930db7ULL, 5, 0xc4b506c50632b9adULL, 111, 0xcb2692633c7d3575ULL},
    {0xb3a62974280eadc8ULL, 4, 0x412ad1efac509619ULL, 147, 0x82c2871b7f9d1ee2ULL},
    {0x99f0d01759cf1a56ULL, 1, 0x99f0d01759cf1a56ULL, 33, 0x4de3843b83599342ULL},
    {0x161322e08bc5075eULL, 2, 0x48de7baecdc0a1afULL, 45, 0xd3924329a44945a0ULL},
    {0x06f59c610cdb5a78ULL, 2, 0x0e0130bcfc6c2d05ULL, 103, 0x7cc835f0e09b1022ULL},
    {0x8a986738f528d0f0ULL, 3, 0xbbd408a2d9a4e820ULL, 71, 0xa760de415a7c48aaULL},
    {0x15ec069c062c77acULL, 3, 0xcc1308e2889cf94cULL, 75, 0x497b20894491af66ULL},
    {0x9b4e6159d9e10831ULL, 5, 0x9adb9bd5a240dcb3ULL, 102, 0xad5e8a9f1376c0fcULL},
    {0xc199532d840012b9ULL, 2, 0x9ff8008f7ce6e714ULL, 43, 0x59f76bc4718efb85ULL},
    {0xa906adcd0f464edfULL, 3, 0x7140ec76320515a3ULL, 68, 0x6abdf02a39783e64ULL},
    {0x0f1574703c2eaaecULL, 3, 0x657b8ee961e21ec8ULL, 46, 0x1c320a150585097fULL},
    {0x13f3fee5cc0653deULL, 2, 0xf2be85144c69c8f7ULL, 52, 0x688fa04e5cf7c951ULL},
    {0x482402e009014b90ULL, 3, 0xf03d4c05ccd1be10ULL, 69, 0xc106e943184a6360ULL},
    {0x6e11cb847b4dd72eULL, 2, 0xfb8134490bf3acb7ULL, 45, 0xeee1c20de60c7b08ULL},
    {0xb858a6a26523d70dULL, 3, 0x858171155993f46fULL, 53, 0xfb6b2d95798390dfULL},
    {0xb9a6dc205e807b6cULL, 2, 0x08baaeb66aacd9f9ULL, 61, 0x7c298fab32af7056ULL},
    {0x5b2fd9ef17aa7115ULL, 2, 0xabd78f428ebe2ea0ULL, 39, 0x253ec0118e73074dULL},
    {0x3d0d8852231ea064ULL, 3, 0xce12a40457e7708eULL, 49, 0x3ee187fcf8b86f74ULL},
    {0x63ce35a534afca01ULL, 2, 0xd54c36d4018bcb0cULL, 26, 0x99d8869185a24becULL},
    {0x3d91f98b87eb587bULL, 3, 0x9c60e79242411039ULL, 35, 0xbb46cb510974cfb5ULL},
    {0xbf036e92ed625a49ULL, 3, 0xb94ce227f2eeba39ULL, 50, 0x4bfd2e50ec919174ULL},
    {0x3b9b794ab4b941a5ULL, 9, 0x6e152ce19b132161ULL, 125, 0x552f13327c22831fULL},
    {0xfae72eec3d049b06ULL, 5, 0x4f2412c48133dbecULL, 95, 0x8045f5691030ca36ULL},
    {0x0c1e890543a2c40cULL, 4, 0x7d4fc4b259108fddULL, 85, 0x904b5aab235a9dfcULL},
    {0xf27df7b3f4d769c2ULL, 3, 0x3dcc78cd1dcac1feULL, 109, 0x1657d3c1b4ead554ULL},
    {0xc86a255ee820454bULL, 3, 0xb12a23341fd5536dULL, 41, 0x211adecaa76a1af3ULL},
    {0xf30ae13b0fce9eccULL, 6, 0x4918b7a802c8664fULL, 135, 0x1678d15a6d52ba70ULL},
    {0xfa417a53cdc5f6f2ULL, 3, 0x00cb06feb9ebb25eULL, 56, 0x6100a4c4035826a7ULL},
    {0xce3dbc5375d479afULL, 3, 0xd06a15ec7f732ea5ULL, 36, 0x2f4f74c520a3a6b8ULL},
    {0x54f8c62511db2381ULL, 3, 0xd5996fd59b484d6fULL, 43, 0x52f888ea84da121bULL},
    {0xab99181cb074acbcULL, 3, 0x615b86246e7225b0ULL, 66, 0x672fe053832f9cbfULL},
    {0x3571e9a30aa38478ULL, 1, 0x3571e9a30aa38478ULL, 26, 0xacda12cc4500c06bULL},
    {0xfc7d31a8be31b804ULL, 3, 0x51d39908c13c3ce6ULL, 73, 0x373460c8ca701bdaULL},
    {0x31a99961e4fca4faULL, 4, 0xcb256bb3a09cb153ULL, 130, 0xf0a67bc83cd71bc1ULL},
    {0xdf839fc9b804aac1ULL, 7, 0xd414797cb2a32361ULL, 94, 0xaba84a2091a51822ULL},
    {0xbf3ad2f38cbbdec7ULL, 2, 0xb461c9c2c56aa7eaULL, 79, 0xe46ecf0dabc65549ULL},
    {0x945db905ea9931adULL, 8, 0x6f7987f80c0bbbb4ULL, 109, 0x18f1148e6fc69a0dULL},
    {0xb15bdc3605633312ULL, 6, 0x264f07e5443a7e61ULL, 101, 0xf25a0bdf6a8681eaULL},
    {0x8ca048784deb0f09ULL, 5, 0xa13d2288fe78a349ULL, 94, 0x982096908639fae4ULL},
    {0x8f1f8cd3f08c8296ULL, 2, 0xebc922e487a5225fULL, 32, 0x0b833189670fc2a5ULL},
    {0x790dfef053a7967dULL, 2, 0x12037735fee3dcd2ULL, 60, 0xfad0c7ae7e0a669eULL},
    {0xcc060ab5a74019a0ULL, 28, 0x61178e2f7f08e14bULL, 134, 0xc60338b8e5613ab5ULL},
    {0xa3bba8127abe68b6ULL, 1, 0xa3bba8127abe68b6ULL, 47, 0x8d82e89a723e359eULL},
    {0x3c60daee5bc2626cULL, 2, 0x6bf380a1c66b04b9ULL, 60, 0x3ff70aeb59c7a135ULL},
    {0x05abb9be8e123ad3ULL, 2, 0x9aca24859e89787aULL, 61, 0x33f9c51a836dee07ULL},
    {0x570efa51901775cfULL, 4, 0x30bd13b01bc6325aULL, 110, 0xca26731e6637163cULL},
    {0x8f32cb2832f91593ULL, 3, 0xa85b560bfb1e0fc5ULL, 85, 0x96cc375f9899883bULL},
    {0xa0a8afe008d65ff8ULL, 3, 0xc27a8928e2a53496ULL, 77, 0x90ebdd3a58b83136ULL},
    {0x92636436a37a7f08ULL, 1, 0x92636436a37a7f08ULL, 23, 0x1fac3e82933d6728ULL},
    {0x08e83aeed37fe1afULL, 3, 0xe56085e5f16f6323ULL, 50, 0x6e2290c580d79eaaULL},
    {0xddc2f78b1d41a046ULL, 2, 0x7088a0ee06874ed3ULL, 58, 0x22e2582d68907877ULL},
    {0x67d5f024671f0856ULL, 3, 0x55cab86b38d59c14ULL, 107, 0x4afd4bd6aa1e1936ULL},
    {0x6b5e464c46ce9de8ULL, 3, 0xd0e60154dea52768ULL, 119, 0xd2468a576ebe73e2ULL},
    {0x116ec649afe73c47ULL, 3, 0x6546a69cf82d11efULL, 70, 0xab88f6ac967b8bb2ULL},
    {0x3677ee37a6c9495dULL, 4, 0x31b551a65822014aULL, 120, 0xc9936400e72f5f60ULL},
    {0x54a8f394e9db05acULL, 2, 0xc6db6c10fab652ddULL, 47, 0xa1cfb3fefa92810eULL},
    {0xe636cf8a67b7596eULL, 3, 0x6bb77204292531ccULL, 70, 0x3576d4346946db27ULL},
    {0xf561ed40aa163b0eULL, 3, 0x2be91d8d6247711aULL, 64, 0x6e0e6ad8f778c627ULL},
    {0x1f894b4e5c1163c1ULL, 2, 0x0a144d383dd80220ULL, 55, 0xfe4273ce3b1ad759ULL},
    {0x0f7d950c49e0b036ULL, 1, 0x0f7d950c49e0b036ULL, 69, 0x1a5895236451c17cULL},
    {0x047f7276a244bf77ULL, 4, 0xa23526fdaa6fa568ULL, 79, 0xfbb0fc860bea7ccfULL},
    {0xfdaa06f2b24675aaULL, 2, 0x48c5feb26e13112bULL, 27, 0x2d7771a609a98c40ULL},
    {0xc4355839e817ee48ULL, 2, 0xc6cab200c07afca7ULL, 41, 0xdc9c962310b22ff8ULL},
    {0x3144724b3dfdd91bULL, 2, 0xcfcf27c6b60c22c6ULL, 30, 0x77336f20f039436aULL},
    {0xaf35e341b0d025cbULL, 3, 0x205b95fda67c4863ULL, 60, 0xe0c6d999d9f2a5b8ULL},
    {0xc37142ff14cd8a46ULL, 3, 0x8b0290334fc1d960ULL, 47, 0x875d900719589104ULL},
    {0x72f2cf0b2cc44078ULL, 7, 0x9d4d3b37108b1c4eULL, 109, 0xf75753da033a81e4ULL},
    {0x83f78645a625fe07ULL, 6, 0xd9ee69af59ffc496ULL, 123, 0x6379cad19f2e6515ULL},
    {0x62ebea4b7098d8fcULL, 2, 0xdeed9d64cb89d1bfULL, 37, 0xf336d441016b5bbcULL},
    {0xd5c6db875c88388bULL, 1, 0xd5c6db875c88388bULL, 21, 0x9c63c27a6986c245ULL},
    {0x9dd493372f929915ULL, 2, 0x86afd4b76a0476faULL, 15, 0x7396270d62eb3543ULL},
    {0x1830bfe585b91603ULL, 3, 0x6dfada2a3e910e67ULL, 55, 0x60cc1befa0bd8dc7ULL},
    {0x26a9548d82f0b954ULL, 4, 0x9ee32df357bac4b3ULL, 70, 0xc2b345ffd375e9f7ULL},
    {0x9c546c1fb180422bULL, 3, 0x11f37119d2ff03e1ULL, 34, 0xea14d240c253225eULL},
    {0x3ee7286791089becULL, 3, 0xdd7f24e91d81b9daULL, 35, 0xbb9a802a444e7828ULL},
    {0xf6ceff2e60a4ad9bULL, 3, 0x693f2c23953e4a69ULL, 27, 0x19e0bfe35f1c9fd5ULL},
    {0xac02b7ca2c12f943ULL, 3, 0x4198165274b661dbULL, 74, 0x420a2a3fc61e19c4ULL},
    {0x719d46b3be1f1a98ULL, 6, 0xe17bf7288f323791ULL, 118, 0x48c7bbed429aaeb9ULL},
    {0x67c1d03f79138119ULL, 2, 0xc3a31111d7e0badaULL, 50, 0xe7a57caee86b78ecULL},
    {0x275c73684ee15ec8ULL, 3, 0xa4af70d4b55665a6ULL, 73, 0xbfbabe6c930bfff0ULL},
    {0x3746bfccf2d592faULL, 4, 0x8842a2ac0625c383ULL, 69, 0x7160492cff74d36aULL},
    {0x09653d456d6294c9ULL, 3, 0xf6c4786556b77ff3ULL, 121, 0x5214461b56470345ULL},
    {0xfbd4c65cccb49a3fULL, 3, 0x13f2d34bee103e6bULL, 88, 0x3f9c889a64c6d80aULL},
    {0xfba04b4fcfcb9547ULL, 2, 0x239d1a2669779a16ULL, 60, 0x5539c62cb12229e0ULL},
    {0x219de35d4fb202c4ULL, 4, 0x14de8665fa0aca31ULL, 71, 0xe9f5d02b8a009b0cULL},
    {0x7af496855ee5a45bULL, 2, 0x3c1c15a97fb6c9a4ULL, 47, 0x160ad53651a325efULL},
    {0x20791df66dfc65f1ULL, 6, 0xe0838e259b8437ecULL, 117, 0x64047bfae2634dedULL},
    {0x9272066f049c0f85ULL, 2, 0x1cc42dde65303cdeULL, 46, 0xbdd349d238dc7dbaULL},
    {0xaea5c0674863c88eULL, 3, 0x85f7323bd4c8f852ULL, 91, 0x22249dad8fc41718ULL},
    {0xca790713fe204968ULL, 6, 0xaabf4a3d1ad43eddULL, 80, 0x1098c05e2f4921f9ULL},
    {0x20d3455af502b2f5ULL, 3, 0x1cebace814bb8d1bULL, 58, 0x7d2ee91302ab23c8ULL},
    {0x1f4304b27fdb056dULL, 3, 0x9d6b30d193662301ULL, 44, 0x599660d4d01dc4f6ULL},
    {0xb86005598b7dc012ULL, 7, 0x07fd3b88dad8d966ULL, 126, 0xc831edc59d1f575fULL},
    {0xa75742da682728daULL, 3, 0x8b7e1da8c4922dfeULL, 45, 0x38355f8523803ca4ULL},
    {0x6da0c6863a294c05ULL, 4, 0x439006ed7bedf6d4ULL, 89, 0x4126806ccec86b59ULL},
    {0x15143007fb7d7078ULL, 2, 0xc0b02ad468c2f0f1ULL, 39, 0xc007363202230a94ULL},
    {0x801feb2e8ac41364ULL, 3, 0x07438c83ac1c760eULL, 37, 0xe450f6b76cd95d70ULL},
    {0xfe037ce2e41ba7c5ULL, 2, 0x8bcaeb4a2fcd29d6ULL, 45, 0x01eb39ec53a9780bULL},
    {0xd673b1db14dcef61ULL, 5, 0xcc7d45b04da4bee3ULL, 135, 0x63ceb3042c603c93ULL},
    {0x833ce30a7b36def2ULL, 3, 0x0c333c7b9a1e83d4ULL, 90, 0x41d763aecc6fe0f9ULL},
    {0x3976dba73ac667f4ULL, 2, 0xf57eda5dadc78629ULL, 59, 0xf41fb6617e865d00ULL},
    {0x3f307106c1355d6fULL, 2, 0x3175eaf2398a2384ULL, 32, 0x47d15073cc621222ULL},
    {0x576e4bf681227e54ULL, 1, 0x576e4bf681227e54ULL, 32, 0x623a96ac2621c155ULL},
    {0xd97a6f44b5220d0eULL, 2, 0x580f50de3bf0d713ULL, 119, 0xf4725b45c58557faULL},
    {0xf4ba7af651da8b44ULL, 3, 0x5980b5c270c939d8ULL, 60, 0x53177811a4a07f9fULL},
    {0xdceebd5aee3880d0ULL, 2, 0x8ffc50d1b3e945f7ULL, 28, 0xc20b738ed186ea8bULL},
    {0xd9bd9ba97d40f3cbULL, 2, 0x0bee67b974884b98ULL, 34, 0xd73807086240b462ULL},
    {0x8e34dbf52c178558ULL, 2, 0x278961d2d19d32d1ULL, 28, 0x731fbfcc070b346fULL},
    {0xb2179abb5bbbb149ULL, 2, 0xc541359f5e96f038ULL, 27, 0xfed46f5e922a5d8dULL},
    {0x1bd7b511ed2ae777ULL, 2, 0xa384ccb16d10fab2ULL, 22, 0x96dd78bd308d07b6ULL},
    {0xd29367c356c78c71ULL, 1, 0xd29367c356c78c71ULL, 42, 0xb407b770a4a5467aULL},
    {0x2cf4d06b4979de87ULL, 3, 0x2a81be41aeab242fULL, 71, 0x0a9197d8fb398677ULL},
    {0x7cebb3b34913e44fULL, 2, 0xa3dea9c862291546ULL, 42, 0xc0a9f67a74983aa8ULL},
    {0xaf00022657f93c84ULL, 2, 0x304f82f5e649f3c7ULL, 36, 0xd5cc9b960be8885dULL},
    {0xc6be875964b6e7d8ULL, 2, 0x9e1fb8355e537981ULL, 52, 0x557c41244b66fbf7ULL},
    {0xc3c57dde64109e76ULL, 5, 0xb7057d0cfe0fda40ULL, 136, 0xf482bbccdfa2ef71ULL},
    {0x945c4f5b4784b5f6ULL, 1, 0x945c4f5b4784b5f6ULL, 32, 0x159bc79d253a3cb9ULL},
    {0xde86cbb0cd2db6beULL, 1, 0xde86cbb0cd2db6beULL, 34, 0xe25aa9446cd6b161ULL},
    {0xc6e0928f768a659dULL, 3, 0x34710b290d1ef465ULL, 71, 0xbe2852030aaeb5f3ULL},
    {0x6a3212b34fdbbdedULL, 4, 0x0b98495a4afcba1cULL, 75, 0x482e121e888317adULL},
    {0xe96b4d76e4f4bf0eULL, 2, 0x563d34be9e823927ULL, 42, 0x4d07fe819ab60007ULL},
    {0xbadf8c7e450a3cc4ULL, 9, 0x94c090d9b0395abaULL, 121, 0xe49d82c1fb249114ULL},
    {0x31cb5dba632ce744ULL, 3, 0xe276883846e3927aULL, 50, 0xf9c2860d2f5c08d5ULL},
    {0x9d8d3b939ccbd148ULL, 2, 0x4181d021aa363ef1ULL, 15, 0x8adf60ff6c07baccULL},
    {0xa62725e3e230a07fULL, 4, 0xbd9b3ad0e22aa990ULL, 48, 0x365a556c4f85dd12ULL},
    {0x3c21065d0d2ceb65ULL, 3, 0xa47cf57041d060adULL, 61, 0xe59772976a634e09ULL},
    {0xbdcc6a835ae2c59aULL, 1, 0xbdcc6a835ae2c59aULL, 14, 0xa2e1ba89ecb6fbadULL},
    {0x71740c02af9187c8ULL, 5, 0xdca4254a18c97d74ULL, 96, 0xa962ea8907a1da29ULL},
    {0xefe46215166608b8ULL, 2, 0x3d38b2f8874455f1ULL, 83, 0x1d5b6f4f62b308e8ULL},
    {0x249ab96e864f7ef2ULL, 2, 0x048f3cff361085c7ULL, 32, 0x4a533b97d625b3b5ULL},
    {0xc9a8d15b894a2c9cULL, 2, 0x165b64798edaae37ULL, 30, 0xef091cdd5cec3449ULL},
    {0x742c423984bc962bULL, 3, 0xac526ed0fb74c4edULL, 117, 0x7183c2cff46a0e2bULL},
    {0xba38071bbe4c5cc4ULL, 2, 0x27ee6806647f695dULL, 24, 0x17efac4d740fe8f3ULL},
    {0x7ffdb0b5dd11ef21ULL, 1, 0x7ffdb0b5dd11ef21ULL, 16, 0x3c274a8f1f74d17aULL},
    {0x1b40aafce4d4c060ULL, 2, 0x61baedba7345c5d3ULL, 17, 0xe2091d81a779bc4aULL},
    {0x5974d651286a3ca3ULL, 3, 0xe29443d9f0f15a13ULL, 51, 0xc4cc7a0452f45b99ULL},
    {0xabde4efc689df641ULL, 4, 0x05c9234881998668ULL, 35, 0x5b4731384a9fe5dfULL},
    {0x1334b4b6ce126209ULL, 4, 0xdccf7d1b3f549f8aULL, 93, 0x452289a2a7df003dULL},
    {0xc487e199043d205bULL, 2, 0x651988fc4b30f442ULL, 133, 0x9c6b6c933fa17983ULL},
    {0xd0846a3d9bd9f822ULL, 2, 0x9f2f595bbdf9900fULL, 29, 0x5f50d213bc11a2d0ULL},
    {0xc4d709319b71437cULL, 2, 0x10cbb5fb0200ae29ULL, 27, 0x7efe9b29e05c6b00ULL},
    {0xbe5222b3ff38c023ULL, 2, 0x385e611cf1532316ULL, 60, 0xeb960f844c06973eULL},
    {0x60c96f48dd32a786ULL, 2, 0x9d64fbe7497e969bULL, 24, 0xc57e192ad47d46a5ULL},
    {0x867696098d0f8399ULL, 5, 0xe6be2997cbf20399ULL, 81, 0xf08c21d19e40a99dULL},
    {0x2ce0b949d5428220ULL, 7, 0x73d1823b888adcdeULL, 127, 0x903191f9ef6d226cULL},
    {0xe27c93b412428da2ULL, 2, 0x1921e97a14f2aecbULL, 20, 0xaf860536a5dfa471ULL},
    {0x4d6e284f86d553c8ULL, 3, 0xd5eba7bebdf99074ULL, 62, 0xd343103a9435c1fbULL},
    {0x8c9174fee02c4c21ULL, 8, 0xcd06e3ce723a2466ULL, 123, 0xd2e12a28aea9703fULL},
    {0xf0fe7c373c595fb1ULL, 3, 0xa11c44edd230e1c7ULL, 36, 0xed6d6e4ec95c57a2ULL},
    {0x94c4b9736754e99fULL, 2, 0x65566ecc0668bf5cULL, 31, 0x71847cf42de96127ULL},
    {0x870bf748a680ebc0ULL, 2, 0xe62ae72f569d7ff1ULL, 42, 0x52147aa8e813ba2dULL},
    {0x8864d0cc1e6f761dULL, 2, 0x762c488809dccbeaULL, 50, 0xb8ee98dfa6f924b6ULL},
    {0x3f792b9ee83b144eULL, 3, 0xf91cd240d6e73c90ULL, 57, 0xccac73ed6ab86beeULL},
    {0x4fe7d997f6ac8c2eULL, 2, 0xce71752e2f4e7971ULL, 28, 0xad5b8e63a2745779ULL},
    {0xd67dc17fd65af54aULL, 2, 0x6efcab7ad07ebe07ULL, 41, 0x7d0c24e50ac4135aULL},
    {0x108fafae8caae1f1ULL, 4, 0x63d6f5f6153f70baULL, 41, 0xeadadf8273e07a31ULL},
    {0x026f0c702e0e6297ULL, 1, 0x026f0c702e0e6297ULL, 12, 0x072baa2832c19638ULL},
    {0x2db9c72ad10e7de4ULL, 1, 0x2db9c72ad10e7de4ULL, 16, 0x98a3cb8c1e7c5aa7ULL},
    {0x60f3a5543903dd4dULL, 1, 0x60f3a5543903dd4dULL, 21, 0xcc5de18cdec93231ULL},
    {0x5c27f84f631f800fULL, 2, 0x9680244ca49e5de4ULL, 31, 0x3f8318cd6750da0fULL},
    {0xa0d97d66fa1dbb7dULL, 2, 0xbff23fd341b354baULL, 44, 0x58dba032e25b3ce4ULL},
    {0x85deecf4703f856dULL, 2, 0x84969b8ef55f45f0ULL, 56, 0xae8ce03914d480fcULL},
    {0x2a0592b92a63c105ULL, 5, 0x5d422442e74b1f0bULL, 77, 0xa46468ff5826ac6fULL},
    {0x8f3e79815a8f5b0dULL, 2, 0xf2fc47fa6f7963d6ULL, 42, 0xf37d5c3765e7d7d0ULL},
    {0x61b0c59bd8a6c3b1ULL, 4, 0xfa5682365827206cULL, 51, 0xd5a00499c9cf91c3ULL},
    {0x280d09b184a35736ULL, 2, 0xd452bc991a87cb95ULL, 40, 0x01577a29e749f37bULL},
    {0xba56dd7112b6a640ULL, 2, 0x1f3354c9980778e9ULL, 76, 0xff0a6b2a5aa330abULL},
    {0x8d718a58d84beb6eULL, 2, 0xe4aed27bc00b675dULL, 29, 0x72aabb593700c89cULL},
    {0x3b96cf5ad31649d4ULL, 2, 0x3c898db448c72c03ULL, 30, 0x113acb84ce8eacadULL},
    {0x512159181dc68fddULL, 2, 0x6c0c32855428f112ULL, 36, 0x7ab38f468ce306caULL},
    {0xf642fd31df7a1701ULL, 3, 0x752d061fe5300a3dULL, 96, 0x9f7fa9a91fcacc26ULL},
    {0x9d275ec9e2ce2653ULL, 1, 0x9d275ec9e2ce2653ULL, 36, 0x0db96f9125accc1eULL},
    {0x1f59490a60cbff70ULL, 2, 0xaf210a99ea9a7485ULL, 17, 0x59d3c0ddfec71d8aULL},
    {0xd265095ec8a8f979ULL, 2, 0x9831beff4de727ccULL, 17, 0x9232feabae63b3b1ULL},
    {0x0fd392929a81c4bdULL, 2, 0xc10ad1b3d16f6678ULL, 13, 0x935e53af4186ffa5ULL},
    {0xabef2d2f3591be47ULL, 3, 0x8bfd26bba3b87d5fULL, 50, 0x0bf0b59911650942ULL},
};

struct Corpus {
  std::vector<Text> texts;
  std::vector<std::string> names;  // where each text comes from, for failure messages
  std::string error;
};

// Appends the string member `field` of each JSON line of `jsonl`.
void AddJsonLines(const std::string& jsonl, const char* field, const std::string& source,
                  Corpus* corpus) {
  std::istringstream in(jsonl);
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    rapidjson::Document d;
    d.Parse(line.data(), line.size());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember(field) || !d[field].IsString()) {
      corpus->error = source + " line " + std::to_string(n) + ": no string \"" + field + "\"";
      return;
    }
    corpus->texts.push_back(
        Decode(std::string_view(d[field].GetString(), d[field].GetStringLength())));
    corpus->names.push_back(source + " line " + std::to_string(n));
  }
}

// The 492 texts; empty when ../shared is absent.
const Corpus& IfbenchTexts() {
  static const Corpus corpus = [] {
    Corpus c;
    std::string verdicts, prompts;
    const std::string verdicts_path = EvalsDir() + "/scoring/ifbench_verdicts.jsonl.gz";
    const std::string prompts_path = EvalsDir() + "/ifbench/IFBench_test.jsonl";
    if (!ReadGzip(verdicts_path, &verdicts) || !ReadFile(prompts_path, &prompts)) return c;
    AddJsonLines(verdicts, "response", "scoring/ifbench_verdicts.jsonl.gz", &c);
    if (c.error.empty()) AddJsonLines(prompts, "prompt", "ifbench/IFBench_test.jsonl", &c);
    return c;
  }();
  return corpus;
}

#define REQUIRE_CORPUS()                                                                 \
  REQUIRE_ENGLISH();                                                                     \
  const Corpus& corpus = IfbenchTexts();                                                 \
  if (corpus.texts.empty() && corpus.error.empty()) {                                    \
    GTEST_SKIP() << NeedData(std::filesystem::exists(EvalsDir() + "/scoring")            \
                                 ? "IFBench"                                             \
                                 : "the scorer verdict corpus");                         \
  }                                                                                      \
  ASSERT_TRUE(corpus.error.empty()) << corpus.error;

TEST(PunktDifferential, EveryIfbenchTextSplitsAsNltkSplitsIt) {
  REQUIRE_CORPUS();
  constexpr size_t kTexts = sizeof(kExpected) / sizeof(kExpected[0]);
  ASSERT_EQ(corpus.texts.size(), kTexts) << "the IFBench files changed; regenerate kExpected";
  size_t same_sentences = 0, same_words = 0;
  for (size_t i = 0; i < kTexts; ++i) {
    const Text& text = corpus.texts[i];
    const Expected& want = kExpected[i];
    ASSERT_EQ(HashItems({text}), want.text_hash)
        << corpus.names[i] << " is not the text kExpected was made from";
    const std::vector<Text> sentences = SentTokenize(*en, text);
    const std::vector<Text> words = WordTokenize(*en, text);
    const bool sentences_ok =
        sentences.size() == want.sentences && HashItems(sentences) == want.sentences_hash;
    const bool words_ok = words.size() == want.words && HashItems(words) == want.words_hash;
    EXPECT_TRUE(sentences_ok) << corpus.names[i] << ": " << sentences.size()
                              << " sentences, NLTK has " << want.sentences;
    EXPECT_TRUE(words_ok) << corpus.names[i] << ": " << words.size() << " words, NLTK has "
                          << want.words;
    same_sentences += sentences_ok;
    same_words += words_ok;
  }
  std::cout << "identical to NLTK: sentences " << same_sentences << "/" << kTexts << ", words "
            << same_words << "/" << kTexts << "\n";
}

// Not a pass/fail check: the throughput on the 192 sample responses, printed.
TEST(PunktDifferential, Throughput) {
  REQUIRE_CORPUS();
  const std::vector<Text> responses(
      corpus.texts.begin(), corpus.texts.begin() + std::min<size_t>(192, corpus.texts.size()));
  size_t chars = 0, sentences = 0, words = 0;
  for (const Text& t : responses) chars += t.size();
  const auto t0 = std::chrono::steady_clock::now();
  for (const Text& t : responses) sentences += SentTokenize(*en, t).size();
  const auto t1 = std::chrono::steady_clock::now();
  for (const Text& t : responses) words += WordTokenize(*en, t).size();
  const auto t2 = std::chrono::steady_clock::now();
  const double s_sec = std::chrono::duration<double>(t1 - t0).count();
  const double w_sec = std::chrono::duration<double>(t2 - t1).count();
  std::cout << responses.size() << " responses (" << chars << " characters): SentTokenize "
            << s_sec * 1000 << " ms (" << static_cast<double>(sentences) / s_sec
            << " sentences/s), WordTokenize " << w_sec * 1000 << " ms ("
            << static_cast<double>(words) / w_sec << " words/s)\n";
}

// ---- Cost: linear in the text, whatever the text ------------------------------------------------

Text Repeat(TextView piece, size_t times) {
  Text out;
  out.reserve(piece.size() * times);
  for (size_t i = 0; i < times; ++i) out.append(piece);
  return out;
}

// Inputs that make backtracking regular expressions, or a careless port of them, quadratic or
// deeply recursive. At a quarter of a million characters a quadratic pass would take minutes; the
// bound is loose enough for sanitizer and unoptimized builds.
TEST(PunktCost, PathologicalInputsTakeLinearTime) {
  const PunktParameters params = English() != nullptr ? *English() : Params({"dr", ". . "});
  constexpr size_t kN = 50000;
  const std::pair<const char*, Text> cases[] = {
      {"periods", Repeat(U".", 5 * kN)},
      {"'. '", Repeat(U". ", 2 * kN)},
      {"'A. '", Repeat(U"A. ", kN)},
      {"'!'", Repeat(U"!", 5 * kN)},
      {"'?!'", Repeat(U"?!", 2 * kN)},
      {"double quotes", Repeat(U"\"", 5 * kN)},
      {"'.\"'", Repeat(U".\"", 2 * kN)},
      {"apostrophes", Repeat(U"'", 5 * kN)},
      {"backticks", Repeat(U"`", 5 * kN)},
      {"nested brackets", Repeat(U"(", 2 * kN) + Repeat(U")", 2 * kN)},
      {"closing run", U"x. " + Repeat(U")]", 2 * kN) + U" y"},
      {"one long word", Repeat(U"a", 5 * kN) + U". B"},
      {"'a.' without space", Repeat(U"a.", 2 * kN)},
      {"'a.' U+3000", Repeat(U"a.\u3000", kN)},
      {"commas", Repeat(U",", 5 * kN)},
      {"dashes", Repeat(U"-", 5 * kN)},
      {"'. . x'", Repeat(U". . x", kN)},
      {"spaces", U"a." + Repeat(U" ", 5 * kN) + U"B"},
      {"\"can't \"", Repeat(U"can't ", kN)},
      {"'a.\\n'", Repeat(U"a.\n", kN)},
  };
  for (const auto& [name, text] : cases) {
    const auto start = std::chrono::steady_clock::now();
    const size_t sentences = SentTokenize(params, text).size();
    const size_t words = WordTokenize(params, text).size();
    const size_t tokens = TreebankTokenize(text).size();
    const double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(sec, 20.0) << name;
    EXPECT_GT(sentences + words + tokens, 0u) << name;
    std::cout << name << " (" << text.size() << " characters): " << sec * 1000 << " ms\n";
  }
}

}  // namespace
}  // namespace pipette::scorers::ifbench
