// The count:* checkers. Each comment names upstream's check; "fixed:" what the fixed profile
// changes (ifbench-checkers.md section 6).
#include <cmath>
#include <unordered_set>

#include "scorers/ifbench/checkers.h"

namespace pipette::scorers::ifbench {
namespace {

// re.findall(r'\b' + re.escape(word) + r'\b', s, re.IGNORECASE) count (non-overlapping).
size_t CountWordIgnoreCase(TextView s, TextView word) {
  if (word.empty()) return 0;
  size_t count = 0;
  const auto boundary = [s](size_t p) {
    return (p > 0 && IsWord(s[p - 1])) != (p < s.size() && IsWord(s[p]));
  };
  for (size_t i = 0; i + word.size() <= s.size();) {
    size_t k = 0;
    while (k < word.size() && IgnoreCaseEqual(s[i + k], word[k])) ++k;
    if (k == word.size() && boundary(i) && boundary(i + k)) {
      ++count;
      i += word.size();
    } else {
      ++i;
    }
  }
  return count;
}

}  // namespace

// min_words <= len(re.findall(r'\w+', value)) <= max_words.
bool CheckWordCountRange(Doc& doc, const Kwargs& kw, Profile) {
  const double n = static_cast<double>(CountWordRuns(doc.text()));
  return kw.min_words <= n && n <= kw.max_words;
}

// len({w.strip(punctuation + ' ') for w in value.lower().split()}) >= N.
bool CheckUniqueWordCount(Doc& doc, const Kwargs& kw, Profile profile) {
  const Text lowered = Lower(doc.text());
  std::unordered_set<TextView> unique;
  for (TextView w : Tokens(lowered)) unique.insert(StripPunctSpace(w, profile));
  return static_cast<double>(unique.size()) >= kw.N;
}

// Distinct raw tokens whose stripped, lowercased form is a coordinating conjunction, >= small_n.
// fixed: distinct conjunctions ("and", "And" and "and," count once).
bool CheckConjunctions(Doc& doc, const Kwargs& kw, Profile profile) {
  static const std::unordered_set<Text, TextHash> kConjunctions = {U"and", U"but", U"for", U"nor",
                                                                   U"or",  U"so",  U"yet"};
  std::unordered_set<Text, TextHash> found;
  for (TextView w : Tokens(doc.text())) {
    const TextView stripped = StripPunctSpace(w, profile);
    if (stripped.size() > 3) continue;  // lower() never shortens a string
    Text norm = Lower(stripped);
    if (kConjunctions.count(norm) == 0) continue;
    found.insert(profile == Profile::kFixed ? std::move(norm) : Text(w));
  }
  return static_cast<double>(found.size()) >= kw.small_n;
}

// How many of the 50 names occur as re.search(r'\bName\b', value) (case-sensitive), >= N. A
// name is all word characters, so a match is exactly a maximal \w run equal to it.
bool CheckPersonNames(Doc& doc, const Kwargs& kw, Profile) {
  static const std::unordered_set<Text, TextHash> kNames = {
      U"Emma",     U"Liam",     U"Sophia",    U"Jackson",   U"Olivia",   U"Noah",
      U"Ava",      U"Lucas",    U"Isabella",  U"Mason",     U"Mia",      U"Ethan",
      U"Charlotte", U"Alexander", U"Amelia",  U"Benjamin",  U"Harper",   U"Leo",
      U"Zoe",      U"Daniel",   U"Chloe",     U"Samuel",    U"Lily",     U"Matthew",
      U"Grace",    U"Owen",     U"Abigail",   U"Gabriel",   U"Ella",     U"Jacob",
      U"Scarlett", U"Nathan",   U"Victoria",  U"Elijah",    U"Layla",    U"Nicholas",
      U"Audrey",   U"David",    U"Hannah",    U"Christopher", U"Penelope", U"Thomas",
      U"Nora",     U"Andrew",   U"Aria",      U"Joseph",    U"Claire",   U"Ryan",
      U"Stella",   U"Jonathan"};
  std::unordered_set<Text, TextHash> found;
  for (TextView run : WordRuns(doc.text())) {
    Text t(run);
    if (kNames.count(t) != 0) found.insert(std::move(t));
  }
  return static_cast<double>(found.size()) >= kw.N;
}

// len(re.findall(r'\d+', value without string.punctuation)) == N ("3.14", "1,000", "10-20" and
// dates are one number each). fixed: numbers are \d+(?:[.,]\d+)* in the raw text.
bool CheckNumbers(Doc& doc, const Kwargs& kw, Profile profile) {
  size_t count = 0;
  if (profile == Profile::kFixed) {
    const TextView s = doc.text();
    size_t i = 0;
    while (i < s.size()) {
      if (!IsDecimal(s[i])) {
        ++i;
        continue;
      }
      ++count;
      while (i < s.size() && IsDecimal(s[i])) ++i;
      while (i + 1 < s.size() && (s[i] == U'.' || s[i] == U',') && IsDecimal(s[i + 1])) {
        ++i;
        while (i < s.size() && IsDecimal(s[i])) ++i;
      }
    }
  } else {
    const Text value = DeletePunct(doc.text(), profile);
    for (TextView run : DigitRuns(value)) count += !run.empty();
  }
  return static_cast<double>(count) == kw.N;
}

// Has "?!", "!?" or U+203D; after removing the first "?!" (else the first "!?"), each of
// . , ! ? ; : occurs.
bool CheckPunctuation(Doc& doc, const Kwargs&, Profile) {
  const TextView v = doc.text();
  if (!Contains(v, U"!?") && !Contains(v, U"?!") && !Contains(v, U"\u203D")) return false;
  size_t cut = v.find(U"?!");
  if (cut == TextView::npos) cut = v.find(U"!?");
  bool seen[6] = {};
  static constexpr char32_t kMarks[6] = {U'.', U',', U'!', U'?', U';', U':'};
  for (size_t i = 0; i < v.size(); ++i) {
    if (cut != TextView::npos && (i == cut || i == cut + 1)) continue;
    for (int k = 0; k < 6; ++k) {
      if (v[i] == kMarks[k]) seen[k] = true;
    }
  }
  for (bool s : seen) {
    if (!s) return false;
  }
  return true;
}

// Every N-th str.split() token (stripped of punctuation and spaces; skipped when empty or
// isdigit) contains a character of U+3040-30FF or U+4E00-9FFF. (i + 1) % N is Python's float
// modulo; N == 0 raises ZeroDivisionError upstream (false here) as soon as there is a token.
bool CheckWordsJapanese(Doc& doc, const Kwargs& kw, Profile profile) {
  size_t i = 0;
  for (TextView word : Tokens(doc.text())) {
    if (kw.N == 0) return false;
    const TextView w = StripPunctSpace(word, profile);
    ++i;
    if (std::fmod(static_cast<double>(i), kw.N) != 0 || w.empty() || StrIsDigit(w)) continue;
    bool japanese = false;
    for (char32_t c : w) {
      if ((c >= 0x3040 && c <= 0x30FF) || (c >= 0x4E00 && c <= 0x9FFF)) {
        japanese = true;
        break;
      }
    }
    if (!japanese) return false;
  }
  return true;
}

// Tokens of nltk.word_tokenize(value with '/' as ' ', lowercased) in the 63-word pronoun set,
// >= N.
bool CheckPronouns(Doc& doc, const Kwargs& kw, Profile) {
  static const std::unordered_set<Text, TextHash> kPronouns = {
      U"i",        U"me",        U"we",         U"us",        U"you",       U"he",
      U"him",      U"she",       U"her",        U"it",        U"they",      U"them",
      U"my",       U"mine",      U"our",        U"ours",      U"your",      U"yours",
      U"his",      U"hers",      U"its",        U"their",     U"theirs",    U"myself",
      U"ourselves", U"yourself", U"yourselves", U"himself",   U"herself",   U"itself",
      U"themselves", U"this",    U"that",       U"these",     U"those",     U"who",
      U"whom",     U"whose",     U"which",      U"what",      U"whoever",   U"whomever",
      U"whatever", U"whichever", U"anybody",    U"anyone",    U"anything",  U"everybody",
      U"everyone", U"everything", U"nobody",    U"nothing",   U"somebody",  U"someone",
      U"something", U"each",     U"either",     U"neither",   U"both",      U"all",
      U"some",     U"any",       U"none"};
  if (kw.N <= 0) return true;
  const Text lowered = Lower(Replace(doc.text(), U"/", U" "));
  size_t count = 0;
  // The count only has to reach N: stop tokenizing there.
  return !ForEachWord(SentTokenize(doc.nlp().punkt, lowered), [&](Text& w) {
    count += kPronouns.count(w);
    return static_cast<double>(count) < kw.N;
  });
}

// value.lower().count(keyword_i.lower()) == 1, 2, 3, 5, 7 (substrings: "whispers" counts as
// "whisper"). fixed: whole words (\bkeyword\b, case-insensitive).
bool CheckKeywordsMultiple(Doc& doc, const Kwargs& kw, Profile profile) {
  static constexpr size_t kCounts[5] = {1, 2, 3, 5, 7};
  if (profile == Profile::kFixed) {
    for (int i = 0; i < 5; ++i) {
      const TextView k = kw.keywords[i];
      if (k.empty() || CountWordIgnoreCase(doc.text(), k) != kCounts[i]) return false;
    }
    return true;
  }
  const Text lowered = Lower(doc.text());
  for (int i = 0; i < 5; ++i) {
    if (PyCount(lowered, Lower(kw.keywords[i])) != kCounts[i]) return false;
  }
  return true;
}

}  // namespace pipette::scorers::ifbench
