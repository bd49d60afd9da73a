// Tests of the perceptron tagger, syllapy, emoji and stopword ports (tagger.cc, syllables.cc,
// emoji.cc, nlp_data.cc). Small hand-made models pin the algorithm (feature strings, tie-break,
// summation order); the real data (../shared/data/evals/ifbench/nlp, skipped with the reason
// when absent) pins the results against upstream Python: the expected values below were
// produced by NLTK's PerceptronTagger and by syllapy 0.7.2's count() on the same data.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scorers/ifbench/nlp.h"
#include "scorers/ifbench/test_files.h"
#include "tests/support/test_data.h"

namespace pipette::scorers::ifbench {
namespace {

using test_files::ReadFile;
using test_files::ReadGzip;
using ::pipette::testing::DataDir;
using ::pipette::testing::NeedData;

namespace fs = std::filesystem;


std::string NlpDir() { return DataDir() + "/evals/ifbench/nlp"; }



const char* const kPlainFiles[] = {
    "punkt_tab/english/abbrev_types.txt",
    "punkt_tab/english/collocations.tab",
    "punkt_tab/english/sent_starters.txt",
    "punkt_tab/english/ortho_context.tab",
    "averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.classes.json",
    "averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.tagdict.json",
    "stopwords/english",
    "syllapy/data.csv",
    "emoji/emoji_sequences.txt",
};
constexpr const char* kWeights =
    "averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.weights.json";

// The files of nlp/, as ParseNlpData takes them (the weights decompressed); empty if absent.
const NlpFiles& Files() {
  static const NlpFiles files = [] {
    NlpFiles f;
    for (const char* name : kPlainFiles) {
      if (!ReadFile(NlpDir() + "/" + name, &f[name])) return NlpFiles();
    }
    if (!ReadGzip(NlpDir() + "/" + kWeights + ".gz", &f[kWeights])) return NlpFiles();
    return f;
  }();
  return files;
}

// The parsed data, once for all tests, its parse timed; null when ../shared is absent.
const NlpData* TimedNlp() {
  static const NlpData* const data = []() -> const NlpData* {
    if (Files().empty()) return nullptr;
    const auto start = std::chrono::steady_clock::now();
    Result<NlpData> r = ParseNlpData(Files());
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!r.ok()) {
      ADD_FAILURE() << r.error().message;
      return nullptr;
    }
    std::cout << "ParseNlpData: " << ms << " ms\n";
    return new NlpData(std::move(r).value());
  }();
  return data;
}

#define REQUIRE_NLP()                                                                 \
  const NlpData* nlp = TimedNlp();                                                         \
  if (nlp == nullptr) {                                                               \
    GTEST_SKIP() << NeedData("IFBench's model data");                               \
  }

std::vector<Text> Tokens(std::initializer_list<const char*> utf8) {
  std::vector<Text> out;
  for (const char* s : utf8) out.push_back(Decode(s));
  return out;
}

std::vector<std::string> Tags(std::initializer_list<const char*> tags) {
  return std::vector<std::string>(tags.begin(), tags.end());
}

// ---- The algorithm, on hand-made models -------------------------------------------------------

PerceptronTagger Model(const std::string& weights, const std::string& tagdict = "{}",
                       const std::string& classes = R"(["B", "A"])") {
  Result<PerceptronTagger> r = PerceptronTagger::Parse(classes, tagdict, weights);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return std::move(r).value();
}

TEST(PerceptronTagger, EqualScoresGoToTheGreatestLabel) {
  // max(classes, key=lambda label: (scores[label], label)).
  EXPECT_EQ(Model("{}").Tag(Tokens({"x", "y"})), Tags({"B", "B"}));
  EXPECT_EQ(Model(R"({"bias": {"A": 0.25, "B": 0.25}})").FirstTag(Tokens({"x"})), "B");
  EXPECT_EQ(Model(R"({"bias": {"A": 0.25, "B": 0.125}})").FirstTag(Tokens({"x"})), "A");
  EXPECT_EQ(Model(R"({"bias": {"A": -1}})").FirstTag(Tokens({"x"})), "B");
  EXPECT_EQ(Model(R"({"bias": {"B": -1}})").FirstTag(Tokens({"x"})), "A");
}

TEST(PerceptronTagger, SumsInFeatureOrder) {
  // A: ((0 + 1e16) + 1) + -1e16 = 0 in doubles (1e16 + 1 rounds to 1e16), below B's 0.5; any
  // other order would give A 1.
  const PerceptronTagger t = Model(
      R"({"i pref1 x": {"A": -1e16}, "i suffix x": {"A": 1.0}, "bias": {"A": 1e16, "B": 0.5}})");
  EXPECT_EQ(t.FirstTag(Tokens({"x"})), "B");
}

// Each of the 14 features of a token but "bias", alone, decides its tag.
TEST(PerceptronTagger, FeatureStrings) {
  struct Case {
    const char* feature;
    size_t token;  // of {"Héllo", "Wörld-x", "1234", "Ünïcode"}
  };
  const std::vector<Text> tokens = Tokens({"Héllo", "Wörld-x", "1234", "Ünïcode"});
  const Case cases[] = {
      {"i suffix llo", 0},
      {"i pref1 H", 0},
      {"i-1 tag -START-", 0},
      {"i-2 tag -START2-", 0},
      {"i tag+i-2 tag -START- -START2-", 0},
      {"i word héllo", 0},
      {"i-1 tag+i word -START- héllo", 0},
      {"i-1 word -START2-", 0},
      {"i-1 suffix T2-", 0},
      {"i-2 word -START-", 0},
      {"i+1 word !HYPHEN", 0},
      {"i+1 suffix HEN", 0},
      {"i+2 word !YEAR", 0},
      {"i suffix d-x", 1},
      {"i pref1 W", 1},
      {"i-1 tag B", 1},
      {"i-2 tag -START-", 1},
      {"i tag+i-2 tag B -START-", 1},
      {"i word !HYPHEN", 1},
      {"i-1 tag+i word B !HYPHEN", 1},
      {"i-1 word héllo", 1},
      {"i-1 suffix llo", 1},
      {"i-2 word -START2-", 1},
      {"i+1 word !YEAR", 1},
      {"i+1 suffix EAR", 1},
      {"i+2 word ünïcode", 1},
      {"i suffix ode", 3},
      {"i pref1 Ü", 3},
      {"i tag+i-2 tag B B", 2},
      {"i word ünïcode", 3},
      {"i-1 word !YEAR", 3},
      {"i-1 suffix EAR", 3},
      {"i-2 word !HYPHEN", 3},
      {"i+1 word -END-", 3},
      {"i+1 suffix ND-", 3},
      {"i+2 word -END2-", 3},
  };
  for (const Case& c : cases) {
    // A by the feature alone, B (0.5 from bias) otherwise.
    const PerceptronTagger t =
        Model(std::string(R"({"bias": {"B": 0.5}, ")") + c.feature + R"(": {"A": 1.0}})");
    // Tokens after c.token may see the feature too (the previous tag is now A).
    std::vector<std::string> want(c.token, "B");
    want.emplace_back("A");
    std::vector<std::string> got = t.Tag(tokens);
    got.resize(c.token + 1);
    EXPECT_EQ(got, want) << c.feature;
  }
}

TEST(PerceptronTagger, TagdictAndPreviousTags) {
  // The raw token is looked up; the tag found becomes prev; an empty tag counts as absent.
  const PerceptronTagger t =
      Model(R"({"bias": {"B": 0.5}, "i-1 tag A": {"A": 1.0}})", R"({"X": "A", "z": ""})");
  EXPECT_EQ(t.Tag(Tokens({"X", "y", "z", "w"})), Tags({"A", "A", "A", "A"}));
  EXPECT_EQ(t.Tag(Tokens({"x", "y"})), Tags({"B", "B"}));
  EXPECT_EQ(t.Tag(Tokens({"z"})), Tags({"B"}));
  EXPECT_EQ(t.Tag({}), Tags({}));
  EXPECT_EQ(t.FirstTag({}), "");
}

TEST(PerceptronTagger, DuplicateKeysKeepTheLastValue) {
  const PerceptronTagger t =
      Model(R"({"bias": {"A": 2.0}, "i word x": {"A": 1, "A": -1}, "bias": {"B": 0.5}})",
            R"({"y": "B", "y": "A"})");
  EXPECT_EQ(t.Tag(Tokens({"x", "y"})), Tags({"B", "A"}));
}

TEST(PerceptronTagger, ParseErrorsNameTheFile) {
  struct Case {
    const char* classes;
    const char* tagdict;
    const char* weights;
    const char* want;
  };
  const Case cases[] = {
      {"{}", "{}", "{}", "classes.json: not a list"},
      {"[]", "{}", "{}", "classes.json: no tags"},
      {"[1]", "{}", "{}", "classes.json: an element is not a string"},
      {"[\"A\"", "{}", "{}", "classes.json: not valid JSON"},
      {"[\"A\"]", "[]", "{}", "tagdict.json: not an object"},
      {"[[\"A\"]]", "{}", "{}", "classes.json: an element is not a string"},
      {"[\"A\"]", "{\"x\": {}}", "{}", "tagdict.json: the tag of 'x' is not a string"},
      {"[\"A\"]", "{\"x\": null}", "{}", "tagdict.json: the tag of 'x' is not a string"},
      {"[\"A\"]", "{\"x\": 1}", "{}", "tagdict.json: the tag of 'x' is not a string"},
      {"[\"A\"]", "{}", "[]", "weights.json: the top level is not an object"},
      {"[\"A\"]", "{}", "{\"f\": 1}", "weights.json: feature 'f': its weights are not"},
      {"[\"A\"]", "{}", "{\"f\": {\"A\": \"1\"}}", "weights.json: feature 'f': the weight of tag"},
      {"[\"A\"]", "{}", "{\"f\": {\"A\": {}}}", "weights.json: feature 'f': the weight of tag"},
      {"[\"A\"]", "{}", "{\"f\": {\"A\": 1e999}}", "weights.json: not valid JSON"},
      // Python would read 0.0; a weight no double holds is refused.
      {"[\"A\"]", "{}", "{\"f\": {\"A\": 1e-400}}", "weights.json: feature 'f': the weight"},
      {"[\"A\"]", "{}", "{\"f\": {\"A\": 1}", "weights.json: not valid JSON"},
      {"[\"A\"]", "{}", "{\"f\": {\"A\": 1}} x", "weights.json: not valid JSON"},
  };
  for (const Case& c : cases) {
    const Result<PerceptronTagger> r = PerceptronTagger::Parse(c.classes, c.tagdict, c.weights);
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_NE(r.error().message.find(c.want), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
}

// ---- The real English model ------------------------------------------------------------------

// ../shared/docs/reference/ifbench-checkers.md section 5: the first-token tags behind
// words:start_verb. The tag depends on the next two tokens too; each sentence here gives the
// listed tag in NLTK (nltk.word_tokenize's tokens).
struct FirstWordCase {
  std::vector<Text> tokens;
  const char* tag;
};

std::vector<FirstWordCase> FirstWordCases() {
  // "<word> a world where cats rule."
  const auto world = [](const char* w, const char* tag) {
    return FirstWordCase{Tokens({w, "a", "world", "where", "cats", "rule", "."}), tag};
  };
  return {
      world("Imagine", "VB"),
      world("Write", "VB"),
      world("Explain", "VB"),
      {Tokens({"Describe", "a", "short", "poem", "."}), "VB"},
      world("Consider", "VB"),
      world("Build", "VB"),
      world("Let", "VB"),
      {Tokens({"Create", "yourself", "in", "a", "quiet", "room", "."}), "NNP"},
      {Tokens({"Forge", "an", "essay", "on", "climate", "change", "."}), "NNP"},
      world("Design", "NNP"),
      {Tokens({"Craft", "the", "following", "story", "about", "a", "dragon", "."}), "NNP"},
      {Tokens({"Generate", "yourself", "in", "a", "quiet", "room", "."}), "NNP"},
      {Tokens({"Begin", "Hello", "world", "."}), "NNP"},
      world("Embark", "NNP"),
      world("Envision", "NN"),
      world("Picture", "NN"),
      {Tokens({"Establish", "yourself", "in", "a", "quiet", "room", "."}), "JJ"},
      world("Discover", "IN"),
      world("Behold", "IN"),
      // The context matters: the same words, other tags.
      world("Describe", "NNP"),
      {Tokens({"Build", "resilient", "bridges", "today", "."}), "NNP"},
  };
}

// The sentence the tokens came from: joined by spaces, the final "." attached.
std::string JoinSentence(const std::vector<Text>& tokens) {
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0 && tokens[i] != U".") out += ' ';
    out += Encode(tokens[i]);
  }
  return out;
}

TEST(PerceptronTaggerEnglish, FirstWordsOfTheChecklist) {
  REQUIRE_NLP();
  for (const FirstWordCase& c : FirstWordCases()) {
    const std::string sentence = JoinSentence(c.tokens);
    EXPECT_EQ(nlp->tagger.FirstTag(c.tokens), c.tag) << sentence;
    EXPECT_EQ(nlp->tagger.Tag(c.tokens)[0], c.tag) << sentence;
  }
}

// The same through nltk.word_tokenize (punkt.cc, treebank.cc): the words:start_verb path.
TEST(PerceptronTaggerEnglish, FirstWordsThroughWordTokenize) {
  REQUIRE_NLP();
  for (const FirstWordCase& c : FirstWordCases()) {
    const std::string sentence = JoinSentence(c.tokens);
    const std::vector<Text> tokens = WordTokenize(nlp->punkt, Decode(sentence));
    EXPECT_EQ(tokens, c.tokens) << sentence;
    EXPECT_EQ(nlp->tagger.FirstTag(tokens), c.tag) << sentence;
  }
}

TEST(PerceptronTaggerEnglish, WholeSentences) {
  REQUIRE_NLP();
  const PerceptronTagger& t = nlp->tagger;
  // NLTK's own doctests.
  EXPECT_EQ(t.Tag(Tokens({"The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"})),
            Tags({"DT", "JJ", "NN", "NN", "VBZ", "IN", "DT", "JJ", "NN"}));
  EXPECT_EQ(t.Tag(Tokens({"John", "'s", "big", "idea", "is", "n't", "all", "that", "bad", "."})),
            Tags({"NNP", "POS", "JJ", "NN", "VBZ", "RB", "PDT", "DT", "JJ", "."}));
}

TEST(PerceptronTaggerEnglish, Normalization) {
  REQUIRE_NLP();
  const PerceptronTagger& t = nlp->tagger;
  // normalize(): "!YEAR" for 4 str.isdigit characters (superscripts and other scripts too),
  // "!DIGITS" for a leading digit, "!HYPHEN" for a '-' not in front, else lower() (full case
  // mapping: İ becomes i + U+0307, Σ at the end a final sigma).
  EXPECT_EQ(t.Tag(Tokens({"1999", "was", "a", "year"})), Tags({"CD", "VBD", "DT", "NN"}));
  EXPECT_EQ(t.Tag(Tokens({"²³⁴⁵", "x"})), Tags({"CD", "NN"}));
  EXPECT_EQ(t.Tag(Tokens({"١٢٣٤"})), Tags({"CD"}));
  EXPECT_EQ(t.Tag(Tokens({"12", "apples"})), Tags({"CD", "NNS"}));
  EXPECT_EQ(t.Tag(Tokens({"well-known", "-x", "x-"})), Tags({"JJ", "CD", "JJ"}));
  EXPECT_EQ(t.Tag(Tokens({"İstanbul", "is", "big"})), Tags({"NN", "VBZ", "JJ"}));
  EXPECT_EQ(t.Tag(Tokens({""})), Tags({"NN"}));
  EXPECT_EQ(t.Tag(Tokens({"", "a", ""})), Tags({"VB", "DT", "NN"}));
  EXPECT_EQ(t.Tag(Tokens({"😀", "!"})), Tags({"NN", "."}));
  EXPECT_EQ(t.Tag(Tokens({"ΣΑΣ", "ﬁne", "Straße"})), Tags({"JJ", "NNP", "NNP"}));
  EXPECT_EQ(t.Tag(Tokens({"a b", "c"})), Tags({"NNS", "VBP"}));
  EXPECT_EQ(t.Tag(Tokens({"Ⅻ", "½", "٣"})), Tags({"JJ", "CD", "CD"}));
}

// On the 192 responses of the verdict corpus: FirstTag is Tag's first tag, and tagging is fast.
TEST(PerceptronTaggerEnglish, FirstTagIsTagsFirstOnTheCorpus) {
  REQUIRE_NLP();
  std::string data;
  const std::string path = DataDir() + "/evals/scoring/ifbench_verdicts.jsonl.gz";
  if (!ReadGzip(path, &data)) GTEST_SKIP() << NeedData("the scorer verdict corpus");
  // Whitespace-split responses; the JSON string escapes do not matter for this check.
  size_t responses = 0, tokens = 0;
  double seconds = 0;
  for (size_t start = 0; start < data.size();) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    const std::vector<Text> words = Split(Decode(data.substr(start, end - start)));
    start = end + 1;
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<std::string> tags = nlp->tagger.Tag(words);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(tags.size(), words.size());
    if (!words.empty()) {
      EXPECT_EQ(nlp->tagger.FirstTag(words), tags[0]);
    }
    ++responses;
    tokens += words.size();
  }
  EXPECT_GT(responses, 100u);
  std::cout << "tagged " << tokens << " tokens in " << seconds * 1e3 << " ms\n";
}

// ---- syllapy ---------------------------------------------------------------------------------

TEST(Syllables, Count) {
  REQUIRE_NLP();
  struct Case {
    const char* word;
    int count;
  };
  const Case cases[] = {
      {"Hello!", 2},
      {"self-care", 2},
      {"co-\nop", 2},  // no compound: `.+` stops at a newline; the heuristic counts "o" twice
      {"a-\nb", 1},
      {"x-y-z", 3},
      {"well--known", 2},  // "well" + "-known", which strips to "known"
      {"a.-b", 2},
      {"don't", 1},
      {"123", 0},
      {"x1", 0},
      {"¹", 1},  // not a decimal (re's \d), so not refused
      {"٣", 0},
      {"Little", 2},
      {"table", 2},
      {"e", 1},
      {"le", 1},
      {"the", 1},
      {"naïve", 1},
      {"ÉCOLE", 1},  // "é" is no vowel to syllapy
      {"ÉCOLE-x", 2},
      {"a--b", 2},
      {"cafe-", 2},
      {"", 0},
      {"  -- ", 0},
      {"people", 2},
      {"ﬁre", 1},
      {"Straße", 1},
      {"syllable", 3},
      {"african-american", 1},
      {"rhythm", 1},
      {"queue", 1},
      {"Zebra-crossing!", 4},
      {"x-1", 0},
      {"0", 0},  // digits are refused before the list (which has "0")
      // Compounds: the tail stops at a newline; each part is stripped and lowered again.
      {"Ab-CD-\nef", 2},
      {"a-b\nc-d", 2},
      {"x- y-z", 3},
      {"a-.b-c", 3},
      {"ΑΣ-ΒΣ", 2},
      {"a-b-\nc", 2},
      {"a-b -c", 3},
      {"self-care-\nx-y", 2},
      {"Mother-In-Law!", 4},
      {"ex-İx", 2},
  };
  for (const Case& c : cases) EXPECT_EQ(nlp->syllables.Count(Decode(c.word)), c.count) << c.word;
  // A long compound is a loop here (upstream recurses once per hyphen).
  Text chain;
  for (int i = 0; i < 10000; ++i) chain += U"zq-";
  chain += U"zq";
  EXPECT_EQ(nlp->syllables.Count(chain), 10001 * nlp->syllables.Count(U"zq"));
}

TEST(Syllables, ParseErrors) {
  EXPECT_TRUE(Syllables::Parse("").ok());
  EXPECT_TRUE(Syllables::Parse("a,1\nb,2\n").ok());
  EXPECT_EQ(Syllables::Parse("a,1\nb,2").value().Count(U"b"), 2);
  EXPECT_EQ(Syllables::Parse("b,3\nb,2\n").value().Count(U"b"), 2);
  for (const char* bad : {"a\n", "a,1,2\n", "a,x\n", "a,\n", "a,1\n\nb,2\n", "\"a\",1\n"}) {
    const Result<Syllables> r = Syllables::Parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.rfind("syllapy/data.csv: line ", 0), 0u) << r.error().message;
  }
  // Count relies on no word being longer than 64 characters.
  EXPECT_TRUE(Syllables::Parse(std::string(64, 'a') + ",1\n").ok());
  const Result<Syllables> r = Syllables::Parse("a,1\n" + std::string(65, 'a') + ",1\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "syllapy/data.csv: line 2 has a word longer than 64 characters (want word,count)");
}

// ---- emoji -----------------------------------------------------------------------------------

TEST(EmojiTable, IsEmoji) {
  REQUIRE_NLP();
  const EmojiTable& e = nlp->emoji;
  EXPECT_TRUE(e.IsEmoji(U"\U0001F600"));            // grinning face
  EXPECT_TRUE(e.IsEmoji(U"#\uFE0F\u20E3"));         // keycap #, fully qualified
  EXPECT_TRUE(e.IsEmoji(U"#\u20E3"));               // and unqualified
  EXPECT_TRUE(e.IsEmoji(U"\U0001F1FA\U0001F1F8"));  // a flag sequence
  EXPECT_TRUE(e.IsEmoji(U"\U0001F6D8"));            // new in emoji 2.15.0
  EXPECT_TRUE(e.IsEmoji(U"\u2764\uFE0F"));          // red heart
  EXPECT_TRUE(e.IsEmoji(U"\u2764"));                // unqualified
  EXPECT_FALSE(e.IsEmoji(U"\U0001F1FA"));           // a lone regional indicator
  EXPECT_FALSE(e.IsEmoji(U"\u20E3"));
  EXPECT_FALSE(e.IsEmoji(U"#"));
  EXPECT_FALSE(e.IsEmoji(U"A"));
  EXPECT_FALSE(e.IsEmoji(U""));
  EXPECT_FALSE(e.IsEmoji(U"\U0001F600\U0001F600"));
}

TEST(EmojiTable, ParseErrors) {
  EXPECT_TRUE(EmojiTable::Parse("").ok());
  EXPECT_TRUE(EmojiTable::Parse("1F600\n0023 FE0F 20E3\n").value().IsEmoji(U"#\uFE0F\u20E3"));
  for (const char* bad : {"1F60G\n", "1F600  20E3\n", "110000\n", "\n", "1F600 \n", "1234567\n"}) {
    const Result<EmojiTable> r = EmojiTable::Parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.rfind("emoji/emoji_sequences.txt: line 1 ", 0), 0u)
        << r.error().message;
  }
}

// ---- stopwords and the whole data ------------------------------------------------------------

TEST(NlpData, Stopwords) {
  REQUIRE_NLP();
  EXPECT_EQ(nlp->stopwords.size(), 198u);
  for (const char32_t* w : {U"a", U"the", U"don't", U"you've", U"ourselves", U"y"}) {
    EXPECT_EQ(nlp->stopwords.count(w), 1u) << Encode(w);
  }
  for (const char32_t* w : {U"", U"The", U"hello", U"dont"}) {
    EXPECT_EQ(nlp->stopwords.count(w), 0u) << Encode(w);
  }
}

TEST(NlpData, MissingFile) {
  if (Files().empty()) GTEST_SKIP() << NeedData("IFBench's model data");
  NlpFiles files = Files();
  files.erase("syllapy/data.csv");
  const Result<NlpData> r = ParseNlpData(files);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("syllapy/data.csv"), std::string::npos) << r.error().message;
}

TEST(NlpData, ErrorsComeFromTheFileAtFault) {
  if (Files().empty()) GTEST_SKIP() << NeedData("IFBench's model data");
  NlpFiles files = Files();
  files[kWeights] = "{\"bias\": [] }";
  const Result<NlpData> r = ParseNlpData(files);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("weights.json"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace pipette::scorers::ifbench
