// The NLTK, syllapy and emoji behaviour IFBench's checkers depend on, reimplemented over the
// third-party model data in the eval data folder (ifbench/nlp/, README there: sources, versions,
// licences; ../shared/docs/reference/ifbench-checkers.md: what each checker needs). Versions
// reproduced: nltk 3.9.2 (Punkt with its English parameters, NLTKWordTokenizer, the averaged
// perceptron tagger with its English weights, the English stopwords), syllapy 0.7.2, emoji 2.15.0.
//
// The data is parsed once (ParseNlpData) and then only read: every function here is pure and
// thread-safe. Costs are linear in the text's length; no recursion depends on the input.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pipette/status.h"
#include "scorers/ifbench/pystr.h"

namespace pipette::scorers::ifbench {

struct TextHash {
  size_t operator()(const Text& t) const noexcept {
    return std::hash<std::u32string_view>{}(t);
  }
};
using TextSet = std::unordered_set<Text, TextHash>;

// ---- Punkt (nltk/tokenize/punkt.py), English parameters (punkt_tab/english/) ----------------
struct PunktParameters {
  TextSet abbrev_types;                           // abbrev_types.txt, one per line
  std::unordered_set<std::u32string> collocations;  // collocations.tab "a\tb" stored as a + U'\t' + b
  TextSet sent_starters;                          // sent_starters.txt
  std::unordered_map<Text, int, TextHash> ortho_context;  // ortho_context.tab "word\tflags"
};

// Parses the four punkt_tab files (UTF-8, "\n"-separated, no final newline). Errors: a line of
// collocations.tab or ortho_context.tab without its tab, flags that are not an integer.
Result<PunktParameters> ParsePunktParameters(std::string_view abbrev_types,
                                             std::string_view collocations,
                                             std::string_view sent_starters,
                                             std::string_view ortho_context);

// nltk.sent_tokenize(text) (language "english"): PunktSentenceTokenizer.tokenize with
// realign_boundaries, sentences as substrings of `text` (stripped as Punkt strips them).
std::vector<Text> SentTokenize(const PunktParameters& punkt, TextView text);

// nltk.word_tokenize(text) (preserve_line=False): SentTokenize, then NLTKWordTokenizer on each
// sentence (Treebank conventions: "n't" split off, double quotes as `` and '', ...).
std::vector<Text> WordTokenize(const PunktParameters& punkt, TextView text);
// NLTKWordTokenizer().tokenize(text) on one piece of text, without sentence splitting.
std::vector<Text> TreebankTokenize(TextView text);

// ---- Averaged perceptron tagger (nltk/tag/perceptron.py), English weights --------------------
class PerceptronTagger {
 public:
  // classes.json (list of tags), tagdict.json (word -> tag), weights.json (feature -> tag ->
  // weight), the weights decompressed. Errors: any of them not of that shape.
  static Result<PerceptronTagger> Parse(std::string_view classes_json,
                                        std::string_view tagdict_json,
                                        std::string_view weights_json);
  // nltk.pos_tag(tokens) (tagset None, lang "eng"): one tag per token.
  std::vector<std::string> Tag(const std::vector<Text>& tokens) const;
  // The tag of tokens[0] only, as Tag(tokens)[0] (it reads tokens 0..2); "" for no tokens.
  // A default-constructed tagger (no data) tags nothing: "" for every token.
  std::string FirstTag(const std::vector<Text>& tokens) const;

 private:
  struct Data;
  std::shared_ptr<const Data> data_;
};

// ---- syllapy 0.7.2 ---------------------------------------------------------------------------
class Syllables {
 public:
  // syllapy's data.csv ("word,count" lines). Errors: a line not of that shape.
  static Result<Syllables> Parse(std::string_view data_csv);
  // syllapy.count(word).
  int Count(TextView word) const;

 private:
  std::shared_ptr<const std::unordered_map<Text, int, TextHash>> table_;
};

// ---- emoji 2.15.0 ----------------------------------------------------------------------------
class EmojiTable {
 public:
  // emoji_sequences.txt: one sequence per line, code points as hex separated by spaces.
  static Result<EmojiTable> Parse(std::string_view sequences);
  // emoji.is_emoji(s): s is exactly one of the sequences.
  bool IsEmoji(TextView s) const;

 private:
  std::shared_ptr<const TextSet> sequences_;
};

// ---- Everything the checkers read ------------------------------------------------------------
struct NlpData {
  PunktParameters punkt;
  PerceptronTagger tagger;
  TextSet stopwords;  // stopwords/english, one word per line
  Syllables syllables;
  EmojiTable emoji;
};

// The files of the nlp/ folder, by their path below it ("punkt_tab/english/abbrev_types.txt",
// "averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.weights.json" decompressed, ...:
// the paths of scorers::IfBenchDataFiles(), the weights without their ".gz").
using NlpFiles = std::unordered_map<std::string, std::string>;
Result<NlpData> ParseNlpData(const NlpFiles& files);

}  // namespace pipette::scorers::ifbench
