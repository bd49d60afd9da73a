// The ratio:* and sentence:* checkers. Sentences are nltk.sent_tokenize's (Punkt).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "scorers/ifbench/checkers.h"

namespace pipette::scorers::ifbench {
namespace {

// A set of packed trigrams (open addressing, linear probing), growing with the distinct ones:
// memory follows the vocabulary of the text, not its length.
class TrigramSet {
 public:
  // True when g was not in the set.
  bool Insert(unsigned long long g) {
    if (g == 0) {  // three U+0000: the empty-slot marker has its own flag
      const bool added = !has_zero_;
      has_zero_ = true;
      size_ += added;
      return added;
    }
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    size_t i = Hash(g) & (slots_.size() - 1);
    while (slots_[i] != 0) {
      if (slots_[i] == g) return false;
      i = (i + 1) & (slots_.size() - 1);
    }
    slots_[i] = g;
    ++size_;
    return true;
  }
  size_t size() const { return size_; }

 private:
  static size_t Hash(unsigned long long g) {
    g ^= g >> 33;
    g *= 0xff51afd7ed558ccdULL;
    g ^= g >> 33;
    return static_cast<size_t>(g);
  }
  void Grow() {
    std::vector<unsigned long long> old(slots_.empty() ? 1024 : slots_.size() * 2, 0);
    old.swap(slots_);
    for (unsigned long long g : old) {
      if (g == 0) continue;
      size_t i = Hash(g) & (slots_.size() - 1);
      while (slots_[i] != 0) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = g;
    }
  }
  std::vector<unsigned long long> slots_;
  size_t size_ = 0;
  bool has_zero_ = false;
};

}  // namespace

// (stopword \w+ tokens / \w+ tokens) * 100 <= percentage; no words fails. The division comes
// first, as in Python: (7 / 25) * 100 is 28.000000000000004, over 28.
bool CheckStopWords(Doc& doc, const Kwargs& kw, Profile) {
  size_t stop = 0, words = 0;
  for (TextView w : WordRuns(doc.text())) {
    ++words;
    stop += doc.nlp().stopwords.count(Lower(w));
  }
  if (words == 0) return false;
  const double pct = (static_cast<double>(stop) / static_cast<double>(words)) * 100;
  return pct <= kw.percentage;
}

namespace {

struct Endings {
  size_t period = 0, question = 0, exclamation = 0;
};

Endings CountEndings(const std::vector<Text>& sentences) {
  Endings e;
  for (const Text& s : sentences) {
    if (s.empty()) continue;
    e.period += s.back() == U'.';
    e.question += s.back() == U'?';
    e.exclamation += s.back() == U'!';
  }
  return e;
}

}  // namespace

// #sentences ending '.' == 2 * #ending '?' (0 == 0 passes). fixed: at least one question.
bool CheckSentenceType(Doc& doc, const Kwargs&, Profile profile) {
  const Endings e = CountEndings(doc.Sentences());
  if (profile == Profile::kFixed && e.question == 0) return false;
  return e.period == 2 * e.question;
}

// #'.' == #'?' == #'!' sentence endings (all 0 passes). fixed: at least one of each.
bool CheckSentenceBalance(Doc& doc, const Kwargs&, Profile profile) {
  const Endings e = CountEndings(doc.Sentences());
  if (profile == Profile::kFixed && e.period == 0) return false;
  return e.period == e.question && e.question == e.exclamation;
}

// Character trigram sets R (response) and F (reference): |R & F| / |R| * 100 within
// percentage +- 2; fewer than 3 characters fails.
bool CheckOverlap(Doc& doc, const Kwargs& kw, Profile) {
  const TextView v = doc.text();
  if (v.size() < 3) return false;
  TrigramSet grams;
  size_t common = 0;
  for (size_t i = 0; i + 2 < v.size(); ++i) {
    const unsigned long long g = (static_cast<unsigned long long>(v[i]) << 42) |
                                 (static_cast<unsigned long long>(v[i + 1]) << 21) | v[i + 2];
    if (grams.Insert(g)) {
      common += std::binary_search(kw.reference_trigrams.begin(), kw.reference_trigrams.end(), g);
    }
  }
  const double overlap = static_cast<double>(common) / static_cast<double>(grams.size());
  const double pct = overlap * 100;
  return kw.percentage - 2 <= pct && pct <= kw.percentage + 2;
}

// Exactly 3 sentences of equal stripped length (code points); "all different words" is not
// checked. fixed: and no word (lowercased, stripped of punctuation) is in two of them.
bool CheckSentenceWords(Doc& doc, const Kwargs&, Profile profile) {
  const auto& sentences = doc.Sentences();
  if (sentences.size() != 3) return false;
  const size_t len = Strip(sentences[0]).size();
  for (const Text& s : sentences) {
    if (Strip(s).size() != len) return false;
  }
  if (profile == Profile::kFixed) {
    std::unordered_map<Text, size_t, TextHash> owner;
    for (size_t i = 0; i < sentences.size(); ++i) {
      for (TextView w : Tokens(sentences[i])) {
        Text norm = Lower(StripPunctSpace(w, profile));
        if (norm.empty()) continue;
        const auto [it, inserted] = owner.emplace(std::move(norm), i);
        if (!inserted && it->second != i) return false;
      }
    }
  }
  return true;
}

// Per sentence, the alliteration score of its lowercased tokens (left-stripped of punctuation
// and spaces, empty ones dropped): a run of k >= 2 tokens with the same first character scores
// k. Scores must strictly increase from sentence to sentence (the first must be >= 0).
bool CheckAlliterationIncrement(Doc& doc, const Kwargs&, Profile profile) {
  long long prev = -1;
  for (const Text& sentence : doc.Sentences()) {
    const Text lowered = Lower(sentence);
    long long score = 0;
    bool in_run = false;
    char32_t prev_first = 0;
    bool has_prev = false;
    for (TextView w : Tokens(lowered)) {
      const TextView clean = LStripPunctSpace(w, profile);
      if (clean.empty()) continue;
      if (has_prev) {
        if (prev_first == clean[0]) {
          score += in_run ? 1 : 2;
          in_run = true;
        } else {
          in_run = false;
        }
      }
      prev_first = clean[0];
      has_prev = true;
    }
    if (score <= prev) return false;
    prev = score;
  }
  return true;
}

// Sentence N (sentences[int(N - 1)], so N == 0 means the last) matches \bword\b, ignoring case.
bool CheckSentenceKeyword(Doc& doc, const Kwargs& kw, Profile) {
  const auto& sentences = doc.Sentences();
  if (static_cast<double>(sentences.size()) < kw.N) return false;
  const auto at = PyIndex(sentences.size(), static_cast<long long>(kw.N - 1));
  if (!at) return false;  // IndexError upstream
  return SearchWordIgnoreCase(sentences[*at], kw.word);
}

// Each sentence has exactly small_n more tokens (punctuation deleted, str.split()) than the one
// before. No sentence raises IndexError upstream (false here).
bool CheckSentenceIncrement(Doc& doc, const Kwargs& kw, Profile profile) {
  const auto& sentences = doc.Sentences();
  if (sentences.empty()) return false;
  double prev = static_cast<double>(CountSplit(DeletePunct(sentences[0], profile)));
  for (size_t i = 1; i < sentences.size(); ++i) {
    const double n = static_cast<double>(CountSplit(DeletePunct(sentences[i], profile)));
    if (n != prev + kw.small_n) return false;
    prev = n;
  }
  return true;
}

}  // namespace pipette::scorers::ifbench
