// The format:* checkers.
#include <unordered_map>
#include <unordered_set>

#include "scorers/ifbench/checkers.h"

namespace pipette::scorers::ifbench {
namespace {

// Calls fn(line) for each piece of s.split('\n'), without building the list.
template <typename Fn>
void ForEachLine(TextView s, Fn fn) {
  size_t start = 0;
  while (true) {
    const size_t at = s.find(U'\n', start);
    if (at == TextView::npos) {
      fn(s.substr(start));
      return;
    }
    fn(s.substr(start, at - start));
    start = at + 1;
  }
}

bool IsEmojiChar(const NlpData& nlp, char32_t c) { return nlp.emoji.IsEmoji(TextView(&c, 1)); }

bool IsSpaceOrPunct(char32_t c) { return IsSpace(c) || IsPunct(c, Profile::kFixed); }

// The longest emoji sequence we look for at an end of a sentence (ZWJ sequences run to 10).
constexpr size_t kMaxEmojiLength = 16;

// fixed profile: the sentence, its trailing spaces and punctuation dropped, ends with an emoji
// sequence of the table (flags and keycaps included), or does once a final U+FE0F is dropped.
bool EndsWithEmojiSequence(const NlpData& nlp, TextView s) {
  size_t n = s.size();
  while (n > 0 && IsSpaceOrPunct(s[n - 1])) --n;
  for (int pass = 0; pass < 2 && n > 0; ++pass) {
    for (size_t len = 1; len <= kMaxEmojiLength && len <= n; ++len) {
      if (nlp.emoji.IsEmoji(s.substr(n - len, len))) return true;
    }
    if (s[n - 1] != 0xFE0F) break;
    --n;
  }
  return false;
}

bool StartsWithEmojiSequence(const NlpData& nlp, TextView s) {
  size_t i = 0;
  while (i < s.size() && IsSpaceOrPunct(s[i])) ++i;
  for (size_t len = 1; len <= kMaxEmojiLength && i + len <= s.size(); ++len) {
    if (nlp.emoji.IsEmoji(s.substr(i, len))) return true;
  }
  return false;
}

}  // namespace

// A stack of ([{ (a mismatched closer empties it); true once a group closes after the depth has
// reached 5.
bool CheckParentheses(Doc& doc, const Kwargs&, Profile) {
  std::vector<char> levels;
  size_t max_depth = 0;
  for (char32_t c : doc.text()) {
    if (c == U'(' || c == U'[' || c == U'{') {
      levels.push_back(static_cast<char>(c));
      if (levels.size() > max_depth) max_depth = levels.size();
    } else if (c == U')' || c == U']' || c == U'}') {
      const char open = c == U')' ? '(' : c == U']' ? '[' : '{';
      if (!levels.empty() && levels.back() == open) {
        levels.pop_back();
        if (max_depth >= 5 && levels.size() < max_depth) return true;
      } else {
        levels.clear();
        max_depth = 0;
      }
    }
  }
  return false;
}

// A stack of ' and " (the same character closes the innermost; apostrophes take part; curly
// quotes are ignored); true once 3 levels have closed below the deepest point reached.
bool CheckQuotes(Doc& doc, const Kwargs&, Profile) {
  std::vector<char> levels;
  long long reached = 0, current = 0;
  for (char32_t c : doc.text()) {
    if (!levels.empty() && c == static_cast<char32_t>(levels.back())) {
      levels.pop_back();
      --current;
      if (reached - current >= 3) return true;
    } else if (c == U'"' || c == U'\'') {
      levels.push_back(static_cast<char>(c));
      ++current;
      if (current > reached) reached = current;
    }
  }
  return false;
}

// a), b), c), d) style: the raw response is exactly one of the options. Otherwise the response,
// stripped of punctuation and spaces and lowercased, equals an option treated alike. fixed: a
// lettered option may be written in any case, as "(b)", "b." or "b", and may carry its text on
// the same line ("b) inventive").
bool CheckOptions(Doc& doc, const Kwargs& kw, Profile profile) {
  if (kw.options_strict) {
    for (const Text& o : kw.options_list) {
      if (doc.text() == TextView(o)) return true;
    }
    if (profile != Profile::kFixed) return false;
    const Text t = Lower(Strip(doc.text()));
    if (t.empty() || t.find(U'\n') != Text::npos) return false;
    size_t i = t[0] == U'(' ? 1 : 0;
    if (i >= t.size()) return false;
    const char32_t letter = t[i++];
    if (i < t.size() && (t[i] == U')' || t[i] == U'.' || t[i] == U':')) ++i;
    if (i < t.size() && !IsSpace(t[i])) return false;
    for (const Text& o : kw.options_list) {
      const Text lo = Lower(o);
      for (char32_t c : lo) {
        if (IsAlpha(c)) {
          if (c == letter) return true;
          break;
        }
      }
    }
    return false;
  }
  const Text value = Lower(StripPunctSpace(doc.text(), profile));
  for (const Text& o : kw.options_list) {
    if (Lower(StripPunctSpace(o, profile)) == value) return true;
  }
  return false;
}

// With punctuation deleted, the non-empty '\n' lines of the stripped text are as many as its
// tokens.
bool CheckNewline(Doc& doc, const Kwargs&, Profile profile) {
  const Text value = DeletePunct(doc.text(), profile);
  size_t lines = 0;
  ForEachLine(Strip(value), [&lines](TextView line) { lines += !line.empty(); });
  return lines == CountSplit(value);
}

// Each sentence, punctuation deleted and stripped, has an emoji as its last or second-last code
// point, or the next one's first code point is an emoji (emoji.is_emoji on one code point, so
// flags and keycaps fail). fixed: a sentence may also end (or the next begin) with any emoji
// sequence of the table.
bool CheckEmoji(Doc& doc, const Kwargs&, Profile profile) {
  const NlpData& nlp = doc.nlp();
  const auto& sentences = doc.Sentences();
  for (size_t i = 0; i < sentences.size(); ++i) {
    bool ok = false;
    const Text stripped(Strip(DeletePunct(sentences[i], profile)));
    if (!stripped.empty()) {
      const char32_t last = stripped.back();
      const char32_t second = stripped.size() > 1 ? stripped[stripped.size() - 2] : last;
      ok = IsEmojiChar(nlp, last) || IsEmojiChar(nlp, second);
      if (!ok && i + 1 < sentences.size()) {
        const Text next(Strip(DeletePunct(sentences[i + 1], profile)));
        ok = !next.empty() && IsEmojiChar(nlp, next[0]);
      }
    }
    if (!ok && profile == Profile::kFixed) {
      ok = EndsWithEmojiSequence(nlp, sentences[i]) ||
           (i + 1 < sentences.size() && StartsWithEmojiSequence(nlp, sentences[i + 1]));
    }
    if (!ok) return false;
  }
  return true;
}

// Leading-space counts strictly increase from line to line once blank lines are removed, as
// upstream removes them: `for line in lines: if not line.strip(): lines.remove(line)`. Removing
// while iterating skips the line after each removed one, and remove() drops the first equal
// line, so blank lines can survive (two consecutive ones leave one behind). Per blank value the
// removals take its first occurrences, as many as that value was visited, which is what this
// computes in two linear passes. Tabs count as no indentation. fixed: every blank line removed,
// and leading tabs count like spaces.
bool CheckLineIndent(Doc& doc, const Kwargs&, Profile profile) {
  const TextView text = doc.text();
  const auto blank = [](TextView line) { return Strip(line).empty(); };
  std::unordered_map<Text, size_t, TextHash> visits;
  if (profile != Profile::kFixed) {
    bool skip = false;
    ForEachLine(text, [&](TextView line) {
      if (skip) {
        skip = false;
      } else if (blank(line)) {
        ++visits[Text(line)];
        skip = true;
      }
    });
  }
  std::unordered_map<Text, size_t, TextHash> seen;
  bool ok = true, first = true;
  size_t prev = 0;
  ForEachLine(text, [&](TextView line) {
    if (!ok) return;
    if (blank(line)) {
      if (profile == Profile::kFixed) return;
      const Text key(line);
      const size_t index = seen[key]++;
      const auto it = visits.find(key);
      if (it != visits.end() && index < it->second) return;  // removed
    }
    size_t indent = 0;
    while (indent < line.size() &&
           (line[indent] == U' ' || (profile == Profile::kFixed && line[indent] == U'\t'))) {
      ++indent;
    }
    if (!first && indent <= prev) ok = false;
    first = false;
    prev = indent;
  });
  return ok;
}

// With '\'"\'' removed and all whitespace deleted: no '""', and the text, stripped of digits and
// punctuation other than '"', does not end with '"'. Upstream's curly-quote normalisation
// replaces '"' with itself. fixed: curly double quotes count as '"'.
bool CheckQuoteUnquote(Doc& doc, const Kwargs&, Profile profile) {
  Text v(doc.text());
  if (profile == Profile::kFixed) {
    for (char32_t& c : v) {
      if (c == 0x201C || c == 0x201D) c = U'"';
    }
  }
  v = Replace(v, U"'\"'", U"");
  Text joined;
  joined.reserve(v.size());
  for (char32_t c : v) {
    if (!IsSpace(c)) joined.push_back(c);
  }
  if (Contains(joined, U"\"\"")) return false;
  static const Text kChars = [] {
    Text chars = U"0123456789";
    for (char32_t c : kPunctuation) {
      if (c != U'"') chars.push_back(c);
    }
    return chars;
  }();
  const TextView stripped = RStrip(joined, kChars);
  return stripped.empty() || stripped.back() != U'"';
}

// sep occurs at least twice anywhere (re.findall of the escaped separator). fixed: at least two
// lines start with sep (after leading white space).
bool CheckList(Doc& doc, const Kwargs& kw, Profile profile) {
  if (profile != Profile::kFixed || kw.sep.empty()) return PyCount(doc.text(), kw.sep) >= 2;
  size_t count = 0;
  ForEachLine(doc.text(), [&](TextView line) { count += StartsWith(LStrip(line), kw.sep); });
  return count >= 2;
}

// From the first "<i>" (else "<em>"), up to the first "</i>" (else "</em>") after it: the text
// value[3:end] must be non-blank, and so must value[end + 4:]. With <em> both slices are one
// character short ("<em>x</em>" passes with nothing after it). fixed: the tags' real lengths,
// and the closing tag matching the opening one.
bool CheckThesis(Doc& doc, const Kwargs&, Profile profile) {
  const TextView text = doc.text();
  bool em = false;
  size_t index = text.find(U"<i>");
  if (index == TextView::npos) {
    index = text.find(U"<em>");
    if (index == TextView::npos) return false;
    em = true;
  }
  const TextView value = text.substr(index);
  size_t open_len = 3, close_len = 4;
  size_t end;
  if (profile == Profile::kFixed) {
    end = value.find(em ? U"</em>" : U"</i>");
    if (em) open_len = 4, close_len = 5;
  } else {
    end = value.find(U"</i>");
    if (end == TextView::npos) end = value.find(U"</em>");
  }
  if (end == TextView::npos) return false;
  const TextView thesis = PySlice(value, static_cast<long long>(open_len),
                                  static_cast<long long>(end));
  if (Strip(thesis).empty()) return false;
  const TextView rest = end + close_len >= value.size() ? TextView() : value.substr(end + close_len);
  return !Strip(rest).empty();
}

// Every piece of value.split('*') after the first contains '-' (no '*' passes, and the loose
// variants without '*' always pass). fixed: as upstream's docstring says: at least one line
// starts with a '*' bullet ('*' not followed by another '*', so "**Bold**" is no bullet), and
// each is followed, before the next one, by a line starting with "- " (after leading white
// space).
bool CheckSubBullets(Doc& doc, const Kwargs&, Profile profile) {
  const TextView text = doc.text();
  if (profile != Profile::kFixed) {
    size_t star = text.find(U'*');
    while (star != TextView::npos) {
      const size_t next = text.find(U'*', star + 1);
      const TextView piece = text.substr(star + 1, next == TextView::npos ? TextView::npos
                                                                          : next - star - 1);
      if (piece.find(U'-') == TextView::npos) return false;
      star = next;
    }
    return true;
  }
  size_t bullets = 0;
  bool pending = false, ok = true;
  ForEachLine(text, [&](TextView line) {
    const TextView t = LStrip(line);
    if (!t.empty() && t[0] == U'*' && (t.size() == 1 || t[1] != U'*')) {
      if (pending) ok = false;
      pending = true;
      ++bullets;
    } else if (t.size() >= 2 && t[0] == U'-' && IsSpace(t[1])) {
      pending = false;
    }
  });
  return ok && bullets > 0 && !pending;
}

// Lines before the first line starting (stripped) with '*' hold >= 2 Punkt sentences; every later
// line starts with '*'; >= 2 such lines. Upstream reuses one variable for "still in the
// sentences" and the last line's sentence list, so after a blank line (no sentences) the next
// non-bullet line fails, as does a trailing blank line. fixed: blank lines are skipped, and only
// sentences ending in '.' count.
bool CheckNoBulletsBullets(Doc& doc, const Kwargs&, Profile profile) {
  const PunktParameters& punkt = doc.nlp().punkt;
  const bool fixed = profile == Profile::kFixed;
  bool sentences_truthy = true, ok = true;
  size_t count_sentences = 0, count_bullets = 0;
  ForEachLine(doc.text(), [&](TextView line) {
    if (!ok) return;
    const TextView t = Strip(line);
    if (fixed && t.empty()) return;
    if (StartsWith(t, U"*")) {
      sentences_truthy = false;
      if (count_sentences < 2) ok = false;
      ++count_bullets;
    } else if (sentences_truthy) {
      if (t.empty()) {
        sentences_truthy = false;  // sent_tokenize('') == []
        return;
      }
      const auto sentences = SentTokenize(punkt, t);
      if (fixed) {
        for (const Text& s : sentences) count_sentences += !s.empty() && s.back() == U'.';
      } else {
        count_sentences += sentences.size();
        sentences_truthy = !sentences.empty();
      }
    } else {
      ok = false;
    }
  });
  return ok && count_bullets >= 2;
}

// Every nltk.word_tokenize token starting with a letter is capitalised: a one-letter token must
// not be lower case; otherwise a lower-case first letter fails when the rest is all upper or all
// lower case. So "a", "the" and "n't" fail. fixed: "n't" and minor words (articles, short
// conjunctions and prepositions) pass, except as the first word.
bool CheckTitleCase(Doc& doc, const Kwargs&, Profile profile) {
  static const std::unordered_set<Text, TextHash> kMinor = {
      U"a",  U"an", U"the", U"and", U"but", U"or",  U"nor", U"for", U"so",  U"yet", U"as",
      U"at", U"by", U"in",  U"of",  U"off", U"on",  U"per", U"to",  U"up",  U"via", U"vs"};
  bool first_word = true;
  return ForEachWord(doc.Sentences(), [&](Text& w) {
    if (w.empty() || !IsAlpha(w[0])) return true;
    if (profile == Profile::kFixed) {
      const bool was_first = first_word;
      first_word = false;
      const Text lower = Lower(w);
      if (lower == U"n't" || (!was_first && kMinor.count(lower) != 0)) return true;
    }
    if (w.size() == 1) return !IsLower(w[0]);
    const TextView rest = TextView(w).substr(1);
    if (IsUpper(w[0]) && StrIsLower(rest)) return true;
    return !(IsLower(w[0]) && (StrIsUpper(rest) || StrIsLower(rest)));
  });
}

// Contains "My Answer:", "My Conclusion:" and "Future Outlook:".
bool CheckOutputTemplate(Doc& doc, const Kwargs&, Profile) {
  const TextView v = doc.text();
  return Contains(v, U"My Answer:") && Contains(v, U"My Conclusion:") &&
         Contains(v, U"Future Outlook:");
}

// No character is str.isspace().
bool CheckNoWhitespace(Doc& doc, const Kwargs&, Profile) {
  for (char32_t c : doc.text()) {
    if (IsSpace(c)) return false;
  }
  return true;
}

}  // namespace pipette::scorers::ifbench
