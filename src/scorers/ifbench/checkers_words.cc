// The words:* checkers. "Tokens" are str.split()'s unless a comment says nltk.word_tokenize.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "scorers/ifbench/checkers.h"

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
  bool first = true;
  char32_t letter = 0;
  for (TextView word : Tokens(StripPunctSpace(value, profile))) {
    if (first) {
      first = false;
      const Text lower = Lower(word.substr(0, 1));
      if (lower.size() != 1 || lower[0] < U'a' || lower[0] > U'z') return false;
      letter = lower[0];
      continue;
    }
    const Text w = Lower(StripPunctSpace(word, profile));
    if (w.empty()) continue;
    letter = letter == U'z' ? U'a' : letter + 1;
    if (w[0] != letter) return false;
  }
  return !first;
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
  const Text lowered = Lower(doc.text());
  for (TextView w : Tokens(lowered)) {
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
  const Text value = Lower(DeletePunct(doc.text(), profile));
  for (TextView w : Tokens(value)) {
    if (w.size() >= 5 && std::equal(w.begin(), w.begin() + w.size() / 2, w.rbegin())) ++count;
  }
  return count >= 10;
}

// Every token (punctuation deleted) has a prime length in code points (primes up to 97 only).
bool CheckPrimeLengths(Doc& doc, const Kwargs&, Profile profile) {
  static const std::unordered_set<size_t> kPrimes = {2,  3,  5,  7,  11, 13, 17, 19, 23,
                                                     29, 31, 37, 41, 43, 47, 53, 59, 61,
                                                     67, 71, 73, 79, 83, 89, 97};
  const Text value = DeletePunct(doc.text(), profile);
  for (TextView w : Tokens(value)) {
    if (kPrimes.count(w.size()) == 0) return false;
  }
  return true;
}

// The perceptron tag of the first nltk.word_tokenize token contains "VB".
bool CheckStartVerb(Doc& doc, const Kwargs&, Profile) {
  // The tag of token 0 depends on tokens 0..2 only.
  const auto words = FirstWords(doc.Sentences(), 3);
  if (words.empty()) return false;
  return doc.nlp().tagger.FirstTag(words).find("VB") != std::string::npos;
}

// No lowercased token (punctuation deleted) occurs more than small_n times.
bool CheckRepeats(Doc& doc, const Kwargs& kw, Profile profile) {
  std::unordered_map<TextView, size_t> counts;
  const Text value = DeletePunct(Lower(doc.text()), profile);
  for (TextView w : Tokens(value)) {
    if (static_cast<double>(++counts[w]) > kw.small_n) return false;
  }
  return true;
}

// syllapy.count parity alternates along the tokens (punctuation deleted, lowercased).
bool CheckOddEvenSyllables(Doc& doc, const Kwargs&, Profile profile) {
  int prev = -1;
  const Text value = Lower(DeletePunct(doc.text(), profile));
  for (TextView w : Tokens(value)) {
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
    const TextView last = LastToken(RStripPunctSpace(sentences[i], profile));
    const TextView first = FirstToken(LStripPunctSpace(sentences[i + 1], profile));
    if (last.empty() || first.empty()) return false;
    if (Lower(last) != Lower(first)) return false;
  }
  return true;
}

// In every non-blank '\n' line (stripped, lowercased, then stripped of punctuation and spaces
// at its ends only), the first token equals the last.
bool CheckParagraphLastFirst(Doc& doc, const Kwargs&, Profile profile) {
  for (TextView line : SplitLines(doc.text())) {
    const Text p = Lower(Strip(line));
    if (p.empty()) continue;
    const TextView words = StripPunctSpace(p, profile);
    const TextView first = FirstToken(words);
    if (first.empty()) continue;
    if (first != LastToken(words)) return false;
  }
  return true;
}

// No two adjacent tokens (lowercased, punctuation deleted) share their first character.
bool CheckNoConsecutive(Doc& doc, const Kwargs&, Profile profile) {
  const Text value = DeletePunct(Lower(doc.text()), profile);
  char32_t prev = 0;
  bool has_prev = false;
  for (TextView w : Tokens(value)) {
    if (has_prev && w[0] == prev) return false;
    prev = w[0];
    has_prev = true;
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
// among the tokens that hold an alphanumeric character. Only the first and last sentences that
// hold those tokens are tokenized.
bool CheckWordsPosition(Doc& doc, const Kwargs& kw, Profile profile) {
  const bool fixed = profile == Profile::kFixed;
  const auto& sentences = doc.Sentences();
  const auto tokens = [&](size_t i) {
    std::vector<Text> t = TreebankTokenize(sentences[i]);
    if (fixed) std::erase_if(t, [](const Text& w) { return !AnyAlnum(w); });
    return t;
  };
  // The tokens of sentences [0, a) and [b, n): all of them when a == b.
  std::vector<Text> front, back;
  size_t a = 0, b = sentences.size();
  while (a < b && front.size() < 2) {
    for (Text& w : tokens(a++)) front.push_back(std::move(w));
  }
  std::vector<std::vector<Text>> tail;
  size_t back_count = 0;
  while (a < b && back_count < 3) {
    tail.push_back(tokens(--b));
    back_count += tail.back().size();
  }
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
    for (Text& w : *it) back.push_back(std::move(w));
  }
  if (a == b) {  // everything read: one list
    front.insert(front.end(), std::make_move_iterator(back.begin()),
                 std::make_move_iterator(back.end()));
    back = front;
  }
  // Now front[0..] starts the token list, back[..end] ends it, and it has at least
  // front.size() + back.size() tokens when they are apart (or exactly front.size()).
  const size_t size = a == b ? front.size() : front.size() + back.size();
  const auto from_end = [&](size_t k) -> const Text& { return back[back.size() - k]; };
  const Text key = Lower(kw.keyword);
  if (size < 2) return false;
  if (fixed) return Lower(front[1]) == key && Lower(from_end(2)) == key;
  size_t k = 2;
  const Text& last = from_end(1);
  if (!last.empty() && kPunctuation.find(last) != TextView::npos) {
    if (size < 3) return false;
    k = 3;
  }
  const Text second = Lower(front[1]), tail_word = Lower(from_end(k));
  return second == tail_word && tail_word == key;
}

}  // namespace pipette::scorers::ifbench
