// The words:* checkers. "Tokens" are str.split()'s unless a comment says nltk.word_tokenize.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "src/scorers/ifbench/checkers.h"

namespace pipette::scorers::ifbench {
namespace {

bool AnyAlnum(TextView s) {
  for (char32_t c : s) {
    if (IsAlnum(c)) return true;
  }
  return false;
}

}  // namespace

// Tokens (punctuation deleted) start with successive letters, cyclic a..z; the first must be an
// ASCII letter after str.lower().
bool CheckAlphabet(Doc& doc, const Kwargs&, Profile profile) {
  const Text value = DeletePunct(doc.text(), profile);
  const auto words = Split(StripPunctSpace(value, profile));
  if (words.empty()) return false;
  const Text first = Lower(TextView(words[0]).substr(0, 1));
  if (first.size() != 1 || first[0] < U'a' || first[0] > U'z') return false;
  char32_t letter = first[0];
  for (size_t i = 1; i < words.size(); ++i) {
    const Text w = Lower(StripPunctSpace(words[i], profile));
    if (w.empty()) continue;
    letter = letter == U'z' ? U'a' : letter + 1;
    if (w[0] != letter) return false;
  }
  return true;
}

// value.strip() has no '\n', and its lowercased text uses at most 3 of a, e, i, o, u.
bool CheckVowel(Doc& doc, const Kwargs&, Profile) {
  const TextView v = Strip(doc.text());
  if (v.find(U'\n') != TextView::npos) return false;
  bool seen[5] = {};
  for (char32_t c : Lower(v)) {
    switch (c) {
      case U'a': seen[0] = true; break;
      case U'e': seen[1] = true; break;
      case U'i': seen[2] = true; break;
      case U'o': seen[3] = true; break;
      case U'u': seen[4] = true; break;
      default: break;
    }
  }
  return seen[0] + seen[1] + seen[2] + seen[3] + seen[4] <= 3;
}

// Every lowercased token has two adjacent ASCII consonants (y included).
bool CheckConsonants(Doc& doc, const Kwargs&, Profile) {
  const auto consonant = [](char32_t c) {
    return c >= U'b' && c <= U'z' && c != U'e' && c != U'i' && c != U'o' && c != U'u';
  };
  for (const Text& w : Split(Strip(Lower(doc.text())))) {
    bool cluster = false;
    for (size_t i = 0; i + 1 < w.size() && !cluster; ++i) {
      cluster = consonant(w[i]) && consonant(w[i + 1]);
    }
    if (!cluster) return false;
  }
  return true;
}

// At least 10 tokens (punctuation deleted, lowercased) that read the same reversed and have
// 5 or more code points; repeats count.
bool CheckPalindrome(Doc& doc, const Kwargs&, Profile profile) {
  size_t count = 0;
  for (const Text& w : Split(Lower(DeletePunct(doc.text(), profile)))) {
    if (w.size() >= 5 && std::equal(w.begin(), w.begin() + w.size() / 2, w.rbegin())) ++count;
  }
  return count >= 10;
}

// Every token (punctuation deleted) has a prime length in code points (primes up to 97 only).
bool CheckPrimeLengths(Doc& doc, const Kwargs&, Profile profile) {
  static const std::unordered_set<size_t> kPrimes = {2,  3,  5,  7,  11, 13, 17, 19, 23,
                                                     29, 31, 37, 41, 43, 47, 53, 59, 61,
                                                     67, 71, 73, 79, 83, 89, 97};
  for (const Text& w : Split(DeletePunct(doc.text(), profile))) {
    if (kPrimes.count(w.size()) == 0) return false;
  }
  return true;
}

// The perceptron tag of the first nltk.word_tokenize token contains "VB".
bool CheckStartVerb(Doc& doc, const Kwargs&, Profile) {
  const auto& words = doc.Words();
  if (words.empty()) return false;
  return doc.nlp().tagger.FirstTag(words).find("VB") != std::string::npos;
}

// No lowercased token (punctuation deleted) occurs more than small_n times.
bool CheckRepeats(Doc& doc, const Kwargs& kw, Profile profile) {
  std::unordered_map<Text, size_t, TextHash> counts;
  for (Text& w : Split(DeletePunct(Lower(doc.text()), profile))) {
    if (static_cast<double>(++counts[std::move(w)]) > kw.small_n) return false;
  }
  return true;
}

// syllapy.count parity alternates along the tokens (punctuation deleted, lowercased).
bool CheckOddEvenSyllables(Doc& doc, const Kwargs&, Profile profile) {
  int prev = -1;
  for (const Text& w : Split(Lower(DeletePunct(doc.text(), profile)))) {
    const int parity = ((doc.nlp().syllables.Count(w) % 2) + 2) % 2;
    if (parity == prev) return false;
    prev = parity;
  }
  return true;
}

// The last token of sentence i (right-stripped of punctuation and spaces) equals the first of
// sentence i + 1 (left-stripped), ignoring case (str.lower()).
bool CheckLastFirst(Doc& doc, const Kwargs&, Profile profile) {
  const auto& sentences = doc.Sentences();
  for (size_t i = 0; i + 1 < sentences.size(); ++i) {
    const auto last = Split(RStripPunctSpace(sentences[i], profile));
    const auto first = Split(LStripPunctSpace(sentences[i + 1], profile));
    if (last.empty() || first.empty()) return false;
    if (Lower(last.back()) != Lower(first.front())) return false;
  }
  return true;
}

// In every non-blank '\n' line (stripped, lowercased, then stripped of punctuation and spaces
// at its ends only), the first token equals the last.
bool CheckParagraphLastFirst(Doc& doc, const Kwargs&, Profile profile) {
  for (TextView line : SplitLines(doc.text())) {
    const Text p = Lower(Strip(line));
    if (p.empty()) continue;
    const auto words = Split(StripPunctSpace(p, profile));
    if (words.empty()) continue;
    if (words.front() != words.back()) return false;
  }
  return true;
}

// No two adjacent tokens (lowercased, punctuation deleted) share their first character.
bool CheckNoConsecutive(Doc& doc, const Kwargs&, Profile profile) {
  const auto words = Split(DeletePunct(Lower(doc.text()), profile));
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i][0] == words[i + 1][0]) return false;
  }
  return true;
}

// In sentence n (Python index n - 1), the m-th nltk.word_tokenize token holding an alphanumeric
// character equals keyword, ignoring case. Negative n or m index from the end, as in Python;
// an index out of range raises upstream (false here).
bool CheckKeywordsSpecificPosition(Doc& doc, const Kwargs& kw, Profile) {
  const auto& sentences = doc.Sentences();
  if (static_cast<long long>(sentences.size()) < kw.n) return false;
  const auto s = PyIndex(sentences.size(), kw.n - 1);
  if (!s) return false;
  std::vector<Text> words;
  for (Text& t : WordTokenize(doc.nlp().punkt, sentences[*s])) {
    if (AnyAlnum(t)) words.push_back(std::move(t));
  }
  if (static_cast<long long>(words.size()) < kw.m) return false;
  const auto w = PyIndex(words.size(), kw.m - 1);
  if (!w) return false;
  return Lower(words[*w]) == Lower(kw.keyword);
}

// nltk.word_tokenize tokens [1] and [-2] equal keyword, ignoring case; [-3] instead of [-2] when
// the last token is a substring of string.punctuation (Treebank's '' is not). fixed: positions
// among the tokens that hold an alphanumeric character.
bool CheckWordsPosition(Doc& doc, const Kwargs& kw, Profile profile) {
  const Text key = Lower(kw.keyword);
  if (profile == Profile::kFixed) {
    std::vector<const Text*> words;
    for (const Text& t : doc.Words()) {
      if (AnyAlnum(t)) words.push_back(&t);
    }
    if (words.size() < 2) return false;
    return Lower(*words[1]) == key && Lower(*words[words.size() - 2]) == key;
  }
  const auto& words = doc.Words();
  if (words.size() < 2) return false;
  size_t back = 2;
  if (!words.back().empty() && kPunctuation.find(words.back()) != TextView::npos) {
    if (words.size() < 3) return false;
    back = 3;
  }
  const Text second = Lower(words[1]), tail = Lower(words[words.size() - back]);
  return second == tail && tail == key;
}

}  // namespace pipette::scorers::ifbench
