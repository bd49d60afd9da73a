// The registry of the 58 IFBench instructions (upstream's instructions_registry order) and the
// validation of their kwargs, as each build_description would take them.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "scorers/ifbench/checkers.h"

namespace pipette::scorers::ifbench {
namespace {

constexpr KwargType kNum = KwargType::kNumber;
constexpr KwargType kInt = KwargType::kInt;
constexpr KwargType kStr = KwargType::kString;

std::vector<InstructionSpec> BuildInstructions() {
  return {
      {"count:word_count_range", CheckWordCountRange, {{"min_words", kNum}, {"max_words", kNum}}},
      {"count:unique_word_count", CheckUniqueWordCount, {{"N", kNum}}},
      {"ratio:stop_words", CheckStopWords, {{"percentage", kNum}}},
      {"ratio:sentence_type", CheckSentenceType, {}},
      {"ratio:sentence_balance", CheckSentenceBalance, {}},
      {"count:conjunctions", CheckConjunctions, {{"small_n", kNum}}},
      {"count:person_names", CheckPersonNames, {{"N", kNum}}},
      {"ratio:overlap", CheckOverlap, {{"reference_text", kStr}, {"percentage", kNum}}},
      {"count:numbers", CheckNumbers, {{"N", kNum}}},
      {"words:alphabet", CheckAlphabet, {}},
      {"words:vowel", CheckVowel, {}},
      {"words:consonants", CheckConsonants, {}},
      {"sentence:alliteration_increment", CheckAlliterationIncrement, {}},
      {"words:palindrome", CheckPalindrome, {}},
      {"count:punctuation", CheckPunctuation, {}},
      {"format:parentheses", CheckParentheses, {}},
      {"format:quotes", CheckQuotes, {}},
      {"words:prime_lengths", CheckPrimeLengths, {}},
      {"format:options", CheckOptions, {{"options", kStr}}},
      {"format:newline", CheckNewline, {}},
      {"format:emoji", CheckEmoji, {}},
      {"ratio:sentence_words", CheckSentenceWords, {}},
      {"count:words_japanese", CheckWordsJapanese, {{"N", kNum}}},
      {"words:start_verb", CheckStartVerb, {}},
      {"words:repeats", CheckRepeats, {{"small_n", kNum}}},
      {"sentence:keyword", CheckSentenceKeyword, {{"word", kStr}, {"N", kNum}}},
      {"count:pronouns", CheckPronouns, {{"N", kNum}}},
      {"words:odd_even_syllables", CheckOddEvenSyllables, {}},
      {"words:last_first", CheckLastFirst, {}},
      {"words:paragraph_last_first", CheckParagraphLastFirst, {}},
      {"sentence:increment", CheckSentenceIncrement, {{"small_n", kNum}}},
      {"words:no_consecutive", CheckNoConsecutive, {}},
      {"format:line_indent", CheckLineIndent, {}},
      {"format:quote_unquote", CheckQuoteUnquote, {}},
      {"format:list", CheckList, {{"sep", kStr}}},
      {"format:thesis", CheckThesis, {}},
      {"format:sub-bullets", CheckSubBullets, {}},
      {"format:no_bullets_bullets", CheckNoBulletsBullets, {}},
      {"custom:multiples", CheckMultiples, {}, true},
      {"custom:mcq_count_length", CheckMcqCountLength, {}, true},
      {"custom:reverse_newline", CheckReverseNewline, {}, true},
      {"custom:word_reverse", CheckWordReverse, {}, true},
      {"custom:character_reverse", CheckCharacterReverse, {}, true},
      {"custom:sentence_alphabet", CheckSentenceAlphabet, {}, true},
      {"custom:european_capitals_sort", CheckEuropeanCapitalsSort, {}, true},
      {"custom:csv_city", CheckCsvCity, {}, true},
      {"custom:csv_special_character", CheckCsvSpecialCharacter, {}, true},
      {"custom:csv_quotes", CheckCsvQuotes, {}, true},
      {"custom:date_format_list", CheckDateFormatList, {}, true},
      {"count:keywords_multiple",
       CheckKeywordsMultiple,
       {{"keyword1", kStr}, {"keyword2", kStr}, {"keyword3", kStr}, {"keyword4", kStr},
        {"keyword5", kStr}}},
      {"words:keywords_specific_position",
       CheckKeywordsSpecificPosition,
       {{"keyword", kStr}, {"n", kInt}, {"m", kInt}}},
      {"words:words_position", CheckWordsPosition, {{"keyword", kStr}}},
      {"repeat:repeat_change", CheckRepeatChange, {{"prompt_to_repeat", kStr}}},
      {"repeat:repeat_simple", CheckRepeatSimple, {}},
      {"repeat:repeat_span",
       CheckRepeatSpan,
       {{"prompt_to_repeat", kStr}, {"n_start", kInt}, {"n_end", kInt}}},
      {"format:title_case", CheckTitleCase, {}},
      {"format:output_template", CheckOutputTemplate, {}},
      {"format:no_whitespace", CheckNoWhitespace, {}},
  };
}

// OptionsResponseChecker.build_description: strict for re.match(r"\W*[aA]\W*[bB]\W*[cC]\W*"),
// the separator "/" if present, else "or" if present (as a substring), else ",".
void PrepareOptions(Kwargs& kw) {
  const Text& o = kw.options;
  size_t i = 0;
  kw.options_strict = true;
  for (char32_t letter : {U'a', U'b', U'c'}) {
    while (i < o.size() && !IsWord(o[i])) ++i;
    if (i >= o.size() || (o[i] != letter && o[i] != letter - 32)) {
      kw.options_strict = false;
      break;
    }
    ++i;
  }
  const TextView sep = Contains(o, U"/") ? U"/" : Contains(o, U"or") ? U"or" : U",";
  for (const Text& piece : Split(o, sep)) kw.options_list.emplace_back(Strip(piece));
}

void PrepareTrigrams(Kwargs& kw) {
  const Text& r = kw.reference_text;
  for (size_t i = 0; i + 2 < r.size(); ++i) {
    kw.reference_trigrams.push_back((static_cast<unsigned long long>(r[i]) << 42) |
                                    (static_cast<unsigned long long>(r[i + 1]) << 21) | r[i + 2]);
  }
  std::sort(kw.reference_trigrams.begin(), kw.reference_trigrams.end());
  kw.reference_trigrams.erase(
      std::unique(kw.reference_trigrams.begin(), kw.reference_trigrams.end()),
      kw.reference_trigrams.end());
}

}  // namespace

const std::vector<InstructionSpec>& Instructions() {
  static const std::vector<InstructionSpec> instructions = BuildInstructions();
  return instructions;
}

const InstructionSpec* FindInstruction(std::string_view id) {
  static const std::unordered_map<std::string_view, const InstructionSpec*> index = [] {
    std::unordered_map<std::string_view, const InstructionSpec*> m;
    for (const InstructionSpec& s : Instructions()) m.emplace(s.id, &s);
    return m;
  }();
  const auto it = index.find(id);
  return it == index.end() ? nullptr : it->second;
}

Result<Kwargs> ParseKwargs(const InstructionSpec& spec, const nlohmann::json& kwargs) {
  if (!kwargs.is_object()) return MakeError("kwargs is not an object");
  Kwargs kw;
  for (const auto& item : kwargs.items()) {
    if (item.value().is_null()) continue;  // upstream drops None values before build_description
    const std::string& name = item.key();
    const auto it = std::find_if(spec.kwargs.begin(), spec.kwargs.end(),
                                 [&](const KwargSpec& k) { return k.name == name; });
    if (it == spec.kwargs.end()) {
      if (spec.accepts_extra) continue;
      return MakeError("unexpected kwarg " + name + " (the instruction takes none such)");
    }
  }
  for (const KwargSpec& k : spec.kwargs) {
    const std::string name(k.name);
    const auto it = kwargs.find(name);
    if (it == kwargs.end() || it->is_null()) {
      return MakeError("kwarg " + name + " missing (upstream would draw a random value)");
    }
    const nlohmann::json& v = *it;
    switch (k.type) {
      case KwargType::kNumber: {
        if (!v.is_number()) return MakeError("kwarg " + name + " is not a number");
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < 0) {
          return MakeError("kwarg " + name + " is negative (upstream would draw a random value)");
        }
        if (name == "N") kw.N = d;
        if (name == "small_n") kw.small_n = d;
        if (name == "percentage") kw.percentage = d;
        if (name == "min_words") kw.min_words = d;
        if (name == "max_words") kw.max_words = d;
        break;
      }
      case KwargType::kInt: {
        if (!v.is_number_integer()) return MakeError("kwarg " + name + " is not an integer");
        if (v.is_number_unsigned() && v.get<unsigned long long>() > (1ULL << 62)) {
          return MakeError("kwarg " + name + " is out of range");
        }
        const long long i = v.get<long long>();
        if (i < -(1LL << 62)) return MakeError("kwarg " + name + " is out of range");
        if ((name == "n" || name == "m") && i == 0) {
          return MakeError("kwarg " + name + " is 0 (upstream would draw a random value)");
        }
        if (name == "n") kw.n = i;
        if (name == "m") kw.m = i;
        if (name == "n_start") kw.n_start = i;
        if (name == "n_end") kw.n_end = i;
        break;
      }
      case KwargType::kString: {
        if (!v.is_string()) return MakeError("kwarg " + name + " is not a string");
        Text s = Decode(v.get_ref<const std::string&>());
        if (s.empty() && (name == "word" || name == "prompt_to_repeat" ||
                          (name == "keyword" && spec.id == "words:keywords_specific_position"))) {
          return MakeError("kwarg " + name + " is empty");
        }
        if (name == "word") kw.word = std::move(s);
        if (name == "keyword") kw.keyword = Text(Strip(s));
        if (name == "options") kw.options = std::move(s);
        if (name == "sep") kw.sep = std::move(s);
        if (name == "reference_text") kw.reference_text = std::move(s);
        if (name == "prompt_to_repeat") kw.prompt_to_repeat = std::move(s);
        if (name.size() == 8 && name.compare(0, 7, "keyword") == 0) {
          kw.keywords[static_cast<size_t>(name[7] - '1')] = Text(Strip(s));
        }
        break;
      }
    }
  }
  if (spec.id == "format:options") PrepareOptions(kw);
  if (spec.id == "ratio:overlap") PrepareTrigrams(kw);
  return kw;
}

}  // namespace pipette::scorers::ifbench
