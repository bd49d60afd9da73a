// The 58 IFBench instruction checkers (allenai/IFBench db69a6f, ifbench/instructions.py), private
// to the IFBench scorer: the registry from instruction id to checker, the typed kwargs each
// checker reads (validated when the gold is parsed, as upstream's build_description would take
// them), and the per-response text a checker sees. Behaviour, quirks and the `fixed` profile's
// corrections: ../shared/docs/reference/ifbench-checkers.md (section 2: checkers, 6: quirks).
//
// Where upstream's Python raises while checking (an IndexError, csv.Error, ZeroDivisionError),
// the checker returns false: one bad response never aborts a scoring run. Every checker is
// linear (or n log n) in the response's length and uses no recursion.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pipette/scorers.h"
#include "pipette/status.h"
#include "scorers/ifbench/nlp.h"
#include "scorers/ifbench/pystr.h"

namespace pipette::scorers::ifbench {

using Profile = IfBenchProfile;

// The kwargs of one instruction, typed as upstream's JSON gives them, after build_description's
// own preprocessing (keyword.strip(), the options list, ...). Only the fields the instruction
// declares are set.
struct Kwargs {
  // Python floats in the data set (5.0); ints are accepted too, as Python compares them alike.
  double N = 0, small_n = 0, percentage = 0, min_words = 0, max_words = 0;
  // Python ints.
  long long n = 0, m = 0, n_start = 0, n_end = 0;
  Text word, keyword, options, sep, reference_text, prompt_to_repeat;
  std::array<Text, 5> keywords;  // keyword1..keyword5, stripped

  // Derived once at parse time.
  bool options_strict = false;     // format:options: a), b), c), d) style
  std::vector<Text> options_list;  // format:options: options split and stripped
  std::vector<unsigned long long> reference_trigrams;  // ratio:overlap: sorted, unique
};

// One text a checker looks at (the response or one of its loose variants), with the NLP results
// computed at most once per text.
class Doc {
 public:
  Doc(TextView text, const NlpData& nlp) : text_(text), nlp_(&nlp) {}
  TextView text() const { return text_; }
  const NlpData& nlp() const { return *nlp_; }
  // nltk.sent_tokenize(text).
  const std::vector<Text>& Sentences();

 private:
  TextView text_;
  const NlpData* nlp_;
  std::optional<std::vector<Text>> sentences_;
};

// nltk.word_tokenize is the Treebank tokens of each Punkt sentence in turn. These read them
// sentence by sentence, so a checker that needs only a few tokens tokenizes only a few sentences.
// ForEachWord calls fn on each token of `sentences` (nltk.sent_tokenize's), in order, until fn
// returns false (then it returns false).
bool ForEachWord(const std::vector<Text>& sentences, const std::function<bool(Text&)>& fn);
// The tokens of the first sentences, up to and including the one that brings the count to n.
std::vector<Text> FirstWords(const std::vector<Text>& sentences, size_t n);

using CheckFn = bool (*)(Doc& doc, const Kwargs& kw, Profile profile);

enum class KwargType { kNumber, kInt, kString };
struct KwargSpec {
  std::string_view name;
  KwargType type;
};

struct InstructionSpec {
  std::string_view id;
  CheckFn check;
  std::vector<KwargSpec> kwargs;  // every one required (upstream draws a random value otherwise)
  bool accepts_extra = false;     // build_description(**kwargs): other kwargs are ignored
};

// All 58, in upstream's registry order.
const std::vector<InstructionSpec>& Instructions();
// nullptr for an unknown id.
const InstructionSpec* FindInstruction(std::string_view id);
// Validates one instruction's kwargs object (null values already ignored) as build_description
// would take it, and prepares the derived fields. Errors (one line): not an object, a required
// kwarg missing, a kwarg of the wrong type or out of range, a kwarg the instruction does not take.
Result<Kwargs> ParseKwargs(const InstructionSpec& spec, const nlohmann::json& kwargs);

// ---- Python helpers shared by the checkers (checkers_util.cc) ---------------------------------

// The punctuation the word checkers strip or delete: string.punctuation upstream; in the fixed
// profile also every Unicode punctuation character (general category P*: curly quotes, dashes,
// the ellipsis...).
bool IsPunct(char32_t c, Profile profile);
// s.translate(str.maketrans('', '', string.punctuation)) (profile-dependent set).
Text DeletePunct(TextView s, Profile profile);
// s.strip(string.punctuation + ' ') and its lstrip/rstrip (profile-dependent set).
TextView StripPunctSpace(TextView s, Profile profile);
TextView LStripPunctSpace(TextView s, Profile profile);
TextView RStripPunctSpace(TextView s, Profile profile);

// The maximal runs of characters of a class, as views into s, read lazily by range-for (no
// vector is built): Tokens is str.split(), WordRuns re.findall(r'\w+'), DigitRuns
// re.findall(r'\d+') (Unicode classes).
class TokenRange {
 public:
  using Pred = bool (*)(char32_t);
  TokenRange(TextView s, Pred in_token) : s_(s), in_(in_token) {}
  class iterator {
   public:
    TextView operator*() const { return current_; }
    iterator& operator++() {
      Advance();
      return *this;
    }
    bool operator!=(const iterator& other) const { return done_ != other.done_; }

   private:
    friend class TokenRange;
    iterator(TextView s, Pred in, bool done) : s_(s), in_(in), done_(done) {
      if (!done_) Advance();
    }
    void Advance() {
      while (next_ < s_.size() && !in_(s_[next_])) ++next_;
      if (next_ >= s_.size()) {
        done_ = true;
        return;
      }
      const size_t start = next_;
      while (next_ < s_.size() && in_(s_[next_])) ++next_;
      current_ = s_.substr(start, next_ - start);
    }
    TextView s_;
    Pred in_;
    bool done_;
    size_t next_ = 0;
    TextView current_;
  };
  iterator begin() const { return iterator(s_, in_, false); }
  iterator end() const { return iterator(s_, in_, true); }

 private:
  TextView s_;
  Pred in_;
};
inline bool NotSpace(char32_t c) { return !IsSpace(c); }
inline TokenRange Tokens(TextView s) { return TokenRange(s, NotSpace); }
inline TokenRange WordRuns(TextView s) { return TokenRange(s, IsWord); }
inline TokenRange DigitRuns(TextView s) { return TokenRange(s, IsDecimal); }
// len(s.split()), len(re.findall(r'\w+', s)).
size_t CountSplit(TextView s);
size_t CountWordRuns(TextView s);
// s.split()[0] and s.split()[-1]; empty when s has no token.
TextView FirstToken(TextView s);
TextView LastToken(TextView s);

// re.search(r'\b' + re.escape(word) + r'\b', s, re.IGNORECASE) (word non-empty).
bool SearchWordIgnoreCase(TextView s, TextView word);
// Characters equal under re.IGNORECASE.
bool IgnoreCaseEqual(char32_t a, char32_t b);

// s[start:stop] with Python's slice rules (negative indices count from the end, clamped).
TextView PySlice(TextView s, long long start, long long stop);
// Python's index rule for seq[i]: nullopt where Python raises IndexError.
std::optional<size_t> PyIndex(size_t size, long long i);
// str.count(part), including the empty part (len(s) + 1).
size_t PyCount(TextView s, TextView part);
// s.split('\n') and s.split(sep), as views into s.
std::vector<TextView> SplitLines(TextView s);
std::vector<TextView> SplitChar(TextView s, char32_t sep);
// sep.join(parts).
Text JoinViews(TextView sep, const std::vector<TextView>& parts);
// unicodedata.normalize('NFKD', s).encode('ASCII', 'ignore').decode('ASCII').
Text NfkdAscii(TextView s);

// ---- The checkers, by family ------------------------------------------------------------------
// checkers_count.cc
bool CheckWordCountRange(Doc&, const Kwargs&, Profile);
bool CheckUniqueWordCount(Doc&, const Kwargs&, Profile);
bool CheckConjunctions(Doc&, const Kwargs&, Profile);
bool CheckPersonNames(Doc&, const Kwargs&, Profile);
bool CheckNumbers(Doc&, const Kwargs&, Profile);
bool CheckPunctuation(Doc&, const Kwargs&, Profile);
bool CheckWordsJapanese(Doc&, const Kwargs&, Profile);
bool CheckPronouns(Doc&, const Kwargs&, Profile);
bool CheckKeywordsMultiple(Doc&, const Kwargs&, Profile);
// checkers_ratio_sentence.cc
bool CheckStopWords(Doc&, const Kwargs&, Profile);
bool CheckSentenceType(Doc&, const Kwargs&, Profile);
bool CheckSentenceBalance(Doc&, const Kwargs&, Profile);
bool CheckOverlap(Doc&, const Kwargs&, Profile);
bool CheckSentenceWords(Doc&, const Kwargs&, Profile);
bool CheckAlliterationIncrement(Doc&, const Kwargs&, Profile);
bool CheckSentenceKeyword(Doc&, const Kwargs&, Profile);
bool CheckSentenceIncrement(Doc&, const Kwargs&, Profile);
// checkers_words.cc
bool CheckAlphabet(Doc&, const Kwargs&, Profile);
bool CheckVowel(Doc&, const Kwargs&, Profile);
bool CheckConsonants(Doc&, const Kwargs&, Profile);
bool CheckPalindrome(Doc&, const Kwargs&, Profile);
bool CheckPrimeLengths(Doc&, const Kwargs&, Profile);
bool CheckStartVerb(Doc&, const Kwargs&, Profile);
bool CheckRepeats(Doc&, const Kwargs&, Profile);
bool CheckOddEvenSyllables(Doc&, const Kwargs&, Profile);
bool CheckLastFirst(Doc&, const Kwargs&, Profile);
bool CheckParagraphLastFirst(Doc&, const Kwargs&, Profile);
bool CheckNoConsecutive(Doc&, const Kwargs&, Profile);
bool CheckKeywordsSpecificPosition(Doc&, const Kwargs&, Profile);
bool CheckWordsPosition(Doc&, const Kwargs&, Profile);
// checkers_format.cc
bool CheckParentheses(Doc&, const Kwargs&, Profile);
bool CheckQuotes(Doc&, const Kwargs&, Profile);
bool CheckOptions(Doc&, const Kwargs&, Profile);
bool CheckNewline(Doc&, const Kwargs&, Profile);
bool CheckEmoji(Doc&, const Kwargs&, Profile);
bool CheckLineIndent(Doc&, const Kwargs&, Profile);
bool CheckQuoteUnquote(Doc&, const Kwargs&, Profile);
bool CheckList(Doc&, const Kwargs&, Profile);
bool CheckThesis(Doc&, const Kwargs&, Profile);
bool CheckSubBullets(Doc&, const Kwargs&, Profile);
bool CheckNoBulletsBullets(Doc&, const Kwargs&, Profile);
bool CheckTitleCase(Doc&, const Kwargs&, Profile);
bool CheckOutputTemplate(Doc&, const Kwargs&, Profile);
bool CheckNoWhitespace(Doc&, const Kwargs&, Profile);
// checkers_custom_repeat.cc
bool CheckMultiples(Doc&, const Kwargs&, Profile);
bool CheckMcqCountLength(Doc&, const Kwargs&, Profile);
bool CheckReverseNewline(Doc&, const Kwargs&, Profile);
bool CheckWordReverse(Doc&, const Kwargs&, Profile);
bool CheckCharacterReverse(Doc&, const Kwargs&, Profile);
bool CheckSentenceAlphabet(Doc&, const Kwargs&, Profile);
bool CheckEuropeanCapitalsSort(Doc&, const Kwargs&, Profile);
bool CheckCsvCity(Doc&, const Kwargs&, Profile);
bool CheckCsvSpecialCharacter(Doc&, const Kwargs&, Profile);
bool CheckCsvQuotes(Doc&, const Kwargs&, Profile);
bool CheckDateFormatList(Doc&, const Kwargs&, Profile);
bool CheckRepeatChange(Doc&, const Kwargs&, Profile);
bool CheckRepeatSimple(Doc&, const Kwargs&, Profile);
bool CheckRepeatSpan(Doc&, const Kwargs&, Profile);

}  // namespace pipette::scorers::ifbench
