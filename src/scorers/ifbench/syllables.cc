// syllapy 0.7.2's count(word) (syllapy/__init__.py) over its word list (syllapy/data.csv).
//
// Upstream, for a str word:
//   word = word.strip().lower().strip(string.punctuation)
//   empty -> 0; any re `\d` (a Unicode decimal digit) -> 0; in the word list -> its count;
//   re.match("([^-]+)-(.+)", word) -> count(group 1) + count(group 2), or 0 if either is 0;
//   else the vowel-group heuristic _syllables(word).
// The compound rule recurses once per hyphen; here it is a loop, linear in the word's length.
// Group 1 is everything before the first '-' (it must be non-empty); group 2 runs from after that
// '-' to the first '\n' or the end (`.` does not match a newline) and must be non-empty. Group 1
// holds no '-' (and stripping and lower-casing add none), so its count never recurses.
#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "scorers/ifbench/nlp.h"

namespace pipette::scorers::ifbench {
namespace {

constexpr const char* kFile = "syllapy/data.csv";
// The longest word the list may hold (its longest has 18 characters), so that Count never
// hashes a longer piece of its input.
constexpr size_t kMaxWord = 64;

bool IsVowel(char32_t c) {
  return c == U'a' || c == U'e' || c == U'i' || c == U'o' || c == U'u' || c == U'y';
}

// syllapy._syllables, for a non-empty word.
int Heuristic(TextView word) {
  int count = IsVowel(word[0]) ? 1 : 0;
  for (size_t i = 1; i < word.size(); ++i) {
    if (IsVowel(word[i]) && !IsVowel(word[i - 1])) ++count;
  }
  if (EndsWith(word, U"e")) --count;
  if (EndsWith(word, U"le") && word.size() > 2 && !IsVowel(word[word.size() - 3])) ++count;
  if (count == 0) ++count;
  return count;
}

}  // namespace

Result<Syllables> Syllables::Parse(std::string_view data_csv) {
  auto table = std::make_shared<std::unordered_map<Text, int, TextHash>>();
  table->reserve(8192);
  size_t line_number = 0;
  size_t pos = 0;
  while (pos < data_csv.size()) {
    ++line_number;
    size_t end = data_csv.find('\n', pos);
    if (end == std::string_view::npos) end = data_csv.size();
    std::string_view line = data_csv.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto bad = [&](const std::string& what) {
      return MakeError(std::string(kFile) + ": line " + std::to_string(line_number) + " " + what +
                       " (want word,count)");
    };
    const size_t comma = line.find(',');
    if (comma == std::string_view::npos || line.find(',', comma + 1) != std::string_view::npos) {
      return bad("does not have exactly two fields");
    }
    // csv.reader would unquote; the file quotes nothing, so a quote is refused.
    if (line.find('"') != std::string_view::npos) return bad("has a quote");
    const std::string_view number = line.substr(comma + 1);
    if (number.empty() || number.size() > 6 ||
        number.find_first_not_of("0123456789") != std::string_view::npos) {
      return bad("has a count that is not a decimal number");
    }
    int count = 0;
    for (char c : number) count = count * 10 + (c - '0');
    Text word = Decode(line.substr(0, comma));
    if (word.size() > kMaxWord) return bad("has a word longer than 64 characters");
    (*table)[std::move(word)] = count;  // later rows win, as dict assignment
  }
  Syllables s;
  s.table_ = std::move(table);
  return s;
}

int Syllables::Count(TextView word) const {
  // Upstream's normalisation of the whole word.
  const Text lowered = Lower(Strip(word));
  TextView w = Strip(lowered, kPunctuation);
  if (w.empty()) return 0;
  for (char32_t c : w) {
    if (IsDecimal(c)) return 0;
  }
  // The compound rule re-normalises each tail (strip, lower, strip punctuation). The tails are
  // pieces of `w`, and lower() changes no piece when it leaves all of `w` unchanged (root-locale
  // lowering is per character but for the capital sigma, which lowered text lacks), checked
  // once here, so the loop costs O(|w|). Otherwise each tail is lowered again, as upstream does.
  const bool lower_is_identity =
      std::all_of(w.begin(), w.end(), [](char32_t c) { return c < 0x80; }) || Lower(w) == w;
  Text buffer;                      // the current tail, when lowering changed it
  size_t newline = TextView::npos;  // in `lowered`: the first '\n' at or after newline_from
  size_t newline_from = TextView::npos;
  int total = 0;  // the counts of the compound heads passed so far (all non-zero)
  for (;;) {
    // Words longer than kMaxWord are not in the list (Parse refuses them).
    if (table_ && w.size() <= kMaxWord) {
      if (const auto it = table_->find(Text(w)); it != table_->end()) {
        return it->second == 0 ? 0 : total + it->second;
      }
    }
    const size_t dash = w.find(U'-');
    if (dash == TextView::npos || dash == 0 || dash + 1 == w.size() || w[dash + 1] == U'\n') {
      return total + Heuristic(w);
    }
    // re.match("([^-]+)-(.+)", w): the tail ends at the first '\n' after the dash.
    size_t tail_end = w.size();
    if (lower_is_identity) {
      const size_t base = static_cast<size_t>(w.data() - lowered.data());
      const size_t from = base + dash + 1;
      if (newline_from == TextView::npos || from < newline_from || newline < from) {
        newline = TextView(lowered).find(U'\n', from);
        newline_from = from;
      }
      if (newline != TextView::npos) tail_end = std::min(tail_end, newline - base);
    } else if (const size_t nl = w.find(U'\n', dash + 1); nl != TextView::npos) {
      tail_end = nl;
    }
    const int head = Count(w.substr(0, dash));  // never recurses further: no '-' in it
    if (head == 0) return 0;
    total += head;
    const TextView tail = Strip(w.substr(dash + 1, tail_end - dash - 1));
    if (lower_is_identity) {
      w = Strip(tail, kPunctuation);
    } else {
      Text next = Lower(tail);
      buffer = std::move(next);
      w = Strip(buffer, kPunctuation);
      for (char32_t c : w) {
        if (IsDecimal(c)) return 0;
      }
    }
    if (w.empty()) return 0;
  }
}

}  // namespace pipette::scorers::ifbench
