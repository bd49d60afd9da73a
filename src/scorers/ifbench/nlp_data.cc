// ParseNlpData: the whole NlpData from the files of the eval data folder's ifbench/nlp/, and the
// English stopword list (NLTK's stopwords.words("english")).
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "scorers/ifbench/nlp.h"

namespace pipette::scorers::ifbench {
namespace {

constexpr std::string_view kAbbrevTypes = "punkt_tab/english/abbrev_types.txt";
constexpr std::string_view kCollocations = "punkt_tab/english/collocations.tab";
constexpr std::string_view kSentStarters = "punkt_tab/english/sent_starters.txt";
constexpr std::string_view kOrthoContext = "punkt_tab/english/ortho_context.tab";
constexpr std::string_view kClasses =
    "averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.classes.json";
constexpr std::string_view kTagdict =
    "averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.tagdict.json";
constexpr std::string_view kWeights =
    "averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.weights.json";
constexpr std::string_view kStopwords = "stopwords/english";
constexpr std::string_view kSyllables = "syllapy/data.csv";
constexpr std::string_view kEmoji = "emoji/emoji_sequences.txt";

constexpr std::array<std::string_view, 10> kFiles = {
    kAbbrevTypes, kCollocations, kSentStarters, kOrthoContext, kClasses,
    kTagdict,     kWeights,      kStopwords,    kSyllables,    kEmoji};

// str.splitlines() line boundaries.
bool IsLineBreak(char32_t c) {
  return c == U'\n' || c == U'\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D ||
         c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
}

// WordListCorpusReader.words(): line_tokenize(raw), i.e. str.splitlines() keeping the lines
// whose rstrip() is not empty (unstripped otherwise).
TextSet ParseWordList(std::string_view raw) {
  const Text text = Decode(raw);
  TextSet words;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = start;
    while (end < text.size() && !IsLineBreak(text[end])) ++end;
    const TextView line = TextView(text).substr(start, end - start);
    if (!RStrip(line).empty()) words.emplace(line);
    start = end + 1;
    if (end < text.size() && text[end] == U'\r' && start < text.size() && text[start] == U'\n') {
      ++start;
    }
  }
  return words;
}

}  // namespace

Result<NlpData> ParseNlpData(const NlpFiles& files) {
  std::array<std::string_view, kFiles.size()> content;
  for (size_t i = 0; i < kFiles.size(); ++i) {
    const auto it = files.find(std::string(kFiles[i]));
    if (it == files.end()) {
      return MakeError("IFBench NLP data: the file " + std::string(kFiles[i]) + " is missing");
    }
    content[i] = it->second;
  }
  const auto file = [&](std::string_view name) {
    for (size_t i = 0; i < kFiles.size(); ++i) {
      if (kFiles[i] == name) return content[i];
    }
    return std::string_view();
  };

  NlpData data;
  Result<PunktParameters> punkt = ParsePunktParameters(file(kAbbrevTypes), file(kCollocations),
                                                       file(kSentStarters), file(kOrthoContext));
  if (!punkt.ok()) return punkt.error();
  data.punkt = std::move(punkt).value();

  Result<PerceptronTagger> tagger =
      PerceptronTagger::Parse(file(kClasses), file(kTagdict), file(kWeights));
  if (!tagger.ok()) return tagger.error();
  data.tagger = std::move(tagger).value();

  data.stopwords = ParseWordList(file(kStopwords));

  Result<Syllables> syllables = Syllables::Parse(file(kSyllables));
  if (!syllables.ok()) return syllables.error();
  data.syllables = std::move(syllables).value();

  Result<EmojiTable> emoji = EmojiTable::Parse(file(kEmoji));
  if (!emoji.ok()) return emoji.error();
  data.emoji = std::move(emoji).value();
  return data;
}

}  // namespace pipette::scorers::ifbench
