// Punkt sentence splitting as nltk 3.9.2 runs it for nltk.sent_tokenize(text) (language
// "english"): PunktSentenceTokenizer.tokenize with realign_boundaries, over the punkt_tab
// parameters. Inference only; the trainer is not needed.
//
// Upstream is a cascade of Python regular expressions. Each is rebuilt here as a scan that
// decides exactly what `re` decides (leftmost match, greedy or lazy as written, `$` also
// before a final "\n", \s \d \w as CPython defines them), so that every sentence boundary is
// upstream's. The scans are linear: every position is looked at a bounded number of times,
// and nothing recurses.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scorers/ifbench/nlp.h"
#include "scorers/ifbench/char_class.h"
#include "scorers/ifbench/pystr.h"

namespace pipette::scorers::ifbench {
namespace {

using char_class::Digit;
using char_class::Space;
using char_class::Word;

constexpr size_t kNone = TextView::npos;

// ---- Parameters (nltk.tokenize.punkt.load_punkt_params, nltk.tabdata.PunktDecoder) ---------

// The lines Python yields when iterating a text-mode file: "\r\n" and "\r" read as "\n" (universal
// newlines), each line without its "\n", and no empty line after a final "\n". An empty file has
// no lines (a blank abbreviation type would otherwise make "x-." an abbreviation).
std::vector<std::string> FileLines(std::string_view data) {
  std::string text;
  text.reserve(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] == '\r') {
      text.push_back('\n');
      if (i + 1 < data.size() && data[i + 1] == '\n') ++i;
    } else {
      text.push_back(data[i]);
    }
  }
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

Error FileError(std::string_view file, size_t line, std::string_view what) {
  return MakeError("punkt_tab/english/" + std::string(file) + " line " + std::to_string(line) +
                   ": " + std::string(what) +
                   "; restore the file from the eval data folder (ifbench/nlp/)");
}

// Python int(s) for the flags column: surrounding whitespace, an optional sign, decimal digits
// (any script) with single underscores between them. nullopt when int() would raise.
std::optional<long long> PythonInt(std::string_view utf8) {
  const Text text = Decode(utf8);
  TextView s = Strip(TextView(text));
  bool negative = false;
  if (!s.empty() && (s.front() == U'+' || s.front() == U'-')) {
    negative = s.front() == U'-';
    s.remove_prefix(1);
  }
  Text digits;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == U'_' && i > 0 && i + 1 < s.size() && s[i - 1] != U'_' && s[i + 1] != U'_') {
      continue;
    }
    digits.push_back(s[i]);
  }
  const long long v = ParseDecimal(digits);
  if (v < 0) return std::nullopt;
  return negative ? -v : v;
}

TextSet ParseTypeSet(std::string_view data) {
  TextSet out;
  for (const std::string& line : FileLines(data)) out.insert(Decode(line));
  return out;
}

Result<std::unordered_set<std::u32string>> ParseCollocations(std::string_view data) {
  std::unordered_set<std::u32string> out;
  const std::vector<std::string> lines = FileLines(data);
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t tab = lines[i].find('\t');
    // Upstream keeps any tuple, but only pairs can ever be looked up; a line that is not a pair
    // is a damaged file.
    if (tab == std::string::npos || lines[i].find('\t', tab + 1) != std::string::npos) {
      return FileError("collocations.tab", i + 1, "expected two words separated by one tab");
    }
    out.insert(Decode(lines[i]));
  }
  return out;
}

Result<std::unordered_map<Text, int, TextHash>> ParseOrthoContext(std::string_view data) {
  std::unordered_map<Text, int, TextHash> out;
  const std::vector<std::string> lines = FileLines(data);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || line.find('\t', tab + 1) != std::string::npos) {
      return FileError("ortho_context.tab", i + 1, "expected \"word<TAB>flags\"");
    }
    const std::optional<long long> flags = PythonInt(std::string_view(line).substr(tab + 1));
    if (!flags || *flags < INT32_MIN || *flags > INT32_MAX) {
      return FileError("ortho_context.tab", i + 1, "the flags are not an integer");
    }
    // A dict built from the lines: a repeated word keeps its last flags.
    out.insert_or_assign(Decode(std::string_view(line).substr(0, tab)), static_cast<int>(*flags));
  }
  return out;
}

// ---- Character classes of PunktLanguageVars (English) -----------------------------------------

bool IsSentEndChar(char32_t c) { return c == U'.' || c == U'?' || c == U'!'; }

// A set of ASCII characters, tested in constant time.
class AsciiSet {
 public:
  constexpr explicit AsciiSet(std::string_view chars) {
    for (char c : chars) bits_[c >> 6] |= uint64_t{1} << (c & 63);
  }
  constexpr bool contains(char32_t c) const { return c < 128 && ((bits_[c >> 6] >> (c & 63)) & 1); }

 private:
  uint64_t bits_[2] = {0, 0};
};

// _re_non_word_chars: [)";}\]*:@'({[] plus the sentence ends other than ".".
constexpr AsciiSet kNonWordChars(")\";}]*:@'({[?!");
bool IsNonWordChar(char32_t c) { return kNonWordChars.contains(c); }

// _re_word_start is [^("`{[:;&#*@)}\]\-,]: these characters cannot begin a word token.
constexpr AsciiSet kNotWordStart("(\"`{[:;&#*@)}]-,");
bool CannotStartWord(char32_t c) { return kNotWordStart.contains(c); }

// string.whitespace, which _get_last_whitespace_index uses instead of \s: ASCII only.
bool IsAsciiWhitespace(char32_t c) {
  return c == U' ' || c == U'\t' || c == U'\n' || c == U'\r' || c == U'\x0b' || c == U'\x0c';
}

// re_boundary_realignment's ["')\]}].
bool IsClosingPunct(char32_t c) {
  return c == U'"' || c == U'\'' || c == U')' || c == U']' || c == U'}';
}

// ---- PunktLanguageVars.word_tokenize (one line; Punkt never tokenizes across "\n") ----------

// _re_multi_char_punct, (?:\-{2,}|\.{2,}|(?:\.\s){2,}\.), matched at `i`: its end, or kNone.
// A failed attempt looks at no more than five characters, which keeps the word scan linear.
size_t MatchMultiChar(TextView s, size_t i) {
  const size_t n = s.size();
  if (i >= n) return kNone;
  if (s[i] == U'-' || s[i] == U'.') {
    size_t j = i;
    while (j < n && s[j] == s[i]) ++j;
    if (j - i >= 2) return j;
  }
  if (s[i] != U'.') return kNone;
  // (?:\.\s){2,} is greedy and gives back one pair at a time until a "." follows.
  size_t pairs = 0;
  size_t p = i;
  while (p + 1 < n && s[p] == U'.' && Space(s[p + 1])) {
    ++pairs;
    p += 2;
  }
  if (pairs < 2) return kNone;
  if (p < n && s[p] == U'.') return p + 1;
  // With one pair given back, the "." that began the last pair ends the match.
  return pairs >= 3 ? p - 1 : kNone;
}

// The lookahead that ends a lazily grown word: whitespace, the end, a non-word character,
// multi-character punctuation, or a comma that is itself followed by one of those.
bool WordEndsAt(TextView s, size_t j) {
  const size_t n = s.size();
  if (j >= n || Space(s[j]) || IsNonWordChar(s[j]) || MatchMultiChar(s, j) != kNone) {
    return true;
  }
  if (s[j] != U',') return false;
  return j + 1 >= n || Space(s[j + 1]) || IsNonWordChar(s[j + 1]) ||
         MatchMultiChar(s, j + 1) != kNone;
}

// One step of findall of _word_tokenize_fmt over one line, from *pos: multi-character
// punctuation, else a word that may start here grown to the first position where WordEndsAt,
// else one non-space character. False at the end of the line.
bool NextWordInLine(TextView line, size_t* pos, TextView* word) {
  for (size_t i = *pos; i < line.size();) {
    size_t end = MatchMultiChar(line, i);
    if (end == kNone) {
      if (Space(line[i])) {
        ++i;
        continue;
      }
      end = i + 1;
      if (!CannotStartWord(line[i])) {
        while (!WordEndsAt(line, end)) ++end;
      }
    }
    *word = line.substr(i, end - i);
    *pos = end;
    return true;
  }
  *pos = line.size();
  return false;
}

// _tokenize_words as a stream: the words of each line in turn. (Upstream skips lines that
// strip() to nothing; they hold no words anyway.) A stream lets a decision stop at the first
// sentence break instead of tokenizing a whole context that may be the whole text.
class WordStream {
 public:
  explicit WordStream(TextView text) : text_(text) {}

  bool Next(TextView* word) {
    while (!NextWordInLine(line_, &pos_, word)) {
      if (next_line_ > text_.size()) return false;
      size_t nl = text_.find(U'\n', next_line_);
      if (nl == kNone) nl = text_.size();
      line_ = text_.substr(next_line_, nl - next_line_);
      pos_ = 0;
      next_line_ = nl + 1;
    }
    return true;
  }

 private:
  TextView text_;
  TextView line_;
  size_t pos_ = 0;
  size_t next_line_ = 0;
};

// ---- PunktToken ------------------------------------------------------------------------------

struct PunktToken {
  TextView tok;
  Text type;  // tok.lower(), or "##number##" for a numeric token
  bool sentbreak = false;
  bool abbr = false;
  bool ellipsis = false;
};

constexpr TextView kNumberType = U"##number##";

// _RE_NUMERIC, ^-?[\.,]?\d[\d,\.-]*\.?$, on the whole token. Lower-casing never touches the
// characters it accepts, so the token itself is tested.
bool IsNumeric(TextView t) {
  size_t i = 0;
  if (i < t.size() && t[i] == U'-') ++i;
  if (i < t.size() && (t[i] == U'.' || t[i] == U',')) ++i;
  if (i >= t.size() || !Digit(t[i])) return false;
  for (++i; i < t.size(); ++i) {
    const char32_t c = t[i];
    if (!Digit(c) && c != U',' && c != U'.' && c != U'-') return false;
  }
  return true;
}

PunktToken MakeToken(TextView tok) {
  PunktToken t;
  t.tok = tok;
  t.type = IsNumeric(tok) ? Text(kNumberType) : Lower(tok);
  return t;
}

bool PeriodFinal(const PunktToken& t) { return !t.tok.empty() && t.tok.back() == U'.'; }

TextView TypeNoPeriod(const PunktToken& t) {
  TextView type = t.type;
  if (type.size() > 1 && type.back() == U'.') type.remove_suffix(1);
  return type;
}

TextView TypeNoSentPeriod(const PunktToken& t) {
  return t.sentbreak ? TypeNoPeriod(t) : TextView(t.type);
}

// tok[0].isupper() / islower(): CPython answers a one-character string from the character's
// Uppercase / Lowercase property alone.
bool FirstUpper(const PunktToken& t) { return !t.tok.empty() && IsUpper(t.tok[0]); }
bool FirstLower(const PunktToken& t) { return !t.tok.empty() && IsLower(t.tok[0]); }

// _RE_ELLIPSIS, \.\.+$, matched at the start: two or more periods and nothing else.
bool IsEllipsis(TextView tok) {
  if (tok.size() < 2) return false;
  for (char32_t c : tok) {
    if (c != U'.') return false;
  }
  return true;
}

// _RE_INITIAL, [^\W\d]\.$: one word character that is not a digit, then a period.
bool IsInitial(TextView tok) {
  return tok.size() == 2 && Word(tok[0]) && !Digit(tok[0]) && tok[1] == U'.';
}

// ---- Annotation (PunktBaseClass._first_pass_annotation, PunktSentenceTokenizer second pass) --

constexpr int kOrthoBegUc = 1 << 1;
constexpr int kOrthoMidUc = 1 << 2;
constexpr int kOrthoUnkUc = 1 << 3;
constexpr int kOrthoBegLc = 1 << 4;
constexpr int kOrthoMidLc = 1 << 5;
constexpr int kOrthoUnkLc = 1 << 6;
constexpr int kOrthoUc = kOrthoBegUc + kOrthoMidUc + kOrthoUnkUc;
constexpr int kOrthoLc = kOrthoBegLc + kOrthoMidLc + kOrthoUnkLc;

bool IsAbbrevType(const PunktParameters& p, const Text& type) {
  return p.abbrev_types.count(type) > 0;
}

void FirstPass(const PunktParameters& p, PunktToken* t) {
  const TextView tok = t->tok;
  if (tok.size() == 1 && IsSentEndChar(tok[0])) {
    t->sentbreak = true;
  } else if (IsEllipsis(tok)) {
    t->ellipsis = true;
  } else if (PeriodFinal(*t) && !EndsWith(tok, U"..")) {
    // tok[:-1].lower(), and the part of it after its last hyphen ("co-op." -> "op").
    const Text stem = Lower(tok.substr(0, tok.size() - 1));
    const size_t hyphen = stem.rfind(U'-');
    const bool abbr =
        IsAbbrevType(p, stem) || (hyphen != Text::npos && IsAbbrevType(p, stem.substr(hyphen + 1)));
    (abbr ? t->abbr : t->sentbreak) = true;
  }
}

int OrthoContext(const PunktParameters& p, TextView type) {
  const auto it = p.ortho_context.find(Text(type));
  return it == p.ortho_context.end() ? 0 : it->second;
}

enum class Starter { kNo, kYes, kUnknown };

// _ortho_heuristic: whether the orthographic evidence says `t` begins a sentence.
Starter OrthoHeuristic(const PunktParameters& p, const PunktToken& t) {
  if (t.tok.size() == 1 && TextView(U";:,.!?").find(t.tok[0]) != kNone) return Starter::kNo;
  const int context = OrthoContext(p, TypeNoSentPeriod(t));
  if (FirstUpper(t) && (context & kOrthoLc) && !(context & kOrthoMidUc)) return Starter::kYes;
  if (FirstLower(t) && ((context & kOrthoUc) || !(context & kOrthoBegLc))) return Starter::kNo;
  return Starter::kUnknown;
}

void MarkAbbreviation(PunktToken* t) {
  t->sentbreak = false;
  t->abbr = true;
}

// _second_pass_annotation: revises `t1` (a period-final token) from the token after it, whose
// own annotation is still the first pass's.
void SecondPass(const PunktParameters& p, PunktToken* t1, const PunktToken& t2) {
  if (!PeriodFinal(*t1)) return;
  const TextView typ = TypeNoPeriod(*t1);
  const TextView next_typ = TypeNoSentPeriod(t2);
  const bool initial = IsInitial(t1->tok);

  // Collocation heuristic.
  Text pair(typ);
  pair.push_back(U'\t');
  pair.append(next_typ);
  if (p.collocations.count(pair) > 0) {
    MarkAbbreviation(t1);
    return;
  }
  // An abbreviation or ellipsis may also end the sentence.
  if ((t1->abbr || t1->ellipsis) && !initial) {
    if (OrthoHeuristic(p, t2) == Starter::kYes) {
      t1->sentbreak = true;
      return;
    }
    if (FirstUpper(t2) && p.sent_starters.count(Text(next_typ)) > 0) {
      t1->sentbreak = true;
      return;
    }
  }
  // Initials and ordinals.
  if (initial || typ == kNumberType) {
    const Starter starter = OrthoHeuristic(p, t2);
    if (starter == Starter::kNo) {
      MarkAbbreviation(t1);
      return;
    }
    if (starter == Starter::kUnknown && initial && FirstUpper(t2) &&
        !(OrthoContext(p, next_typ) & kOrthoLc)) {
      MarkAbbreviation(t1);
    }
  }
}

// text_contains_sentbreak: some token, not the last, ends a sentence after both passes. Each
// token's second pass reads only the next token's first-pass annotation, so two suffice.
bool ContainsSentBreak(const PunktParameters& p, TextView context) {
  WordStream words(context);
  TextView word;
  if (!words.Next(&word)) return false;
  PunktToken current = MakeToken(word);
  FirstPass(p, &current);
  while (words.Next(&word)) {
    PunktToken next = MakeToken(word);
    FirstPass(p, &next);
    SecondPass(p, &current, next);
    if (current.sentbreak) return true;
    current = std::move(next);
  }
  return false;
}

// ---- Candidate boundaries (period_context_re, _match_potential_end_contexts) --------------

struct EndMatch {
  size_t pos = 0;           // the ".", "?" or "!"
  size_t after_end = 0;     // end of the after_tok group
  size_t next_tok = kNone;  // start of the next_tok group, kNone when after_tok is punctuation
};

// period_context_re at `i`: [.?!](?=(?P<after_tok>NonWord|\s+(?P<next_tok>\S+))).
std::optional<EndMatch> MatchEndAt(TextView text, size_t i) {
  const size_t n = text.size();
  if (!IsSentEndChar(text[i]) || i + 1 >= n) return std::nullopt;
  EndMatch m;
  m.pos = i;
  if (IsNonWordChar(text[i + 1])) {
    m.after_end = i + 2;
    return m;
  }
  size_t j = i + 1;
  while (j < n && Space(text[j])) ++j;
  if (j == i + 1 || j == n) return std::nullopt;
  m.next_tok = j;
  while (j < n && !Space(text[j])) ++j;
  m.after_end = j;
  return m;
}

// A candidate boundary with the text its decision reads: the word before it (as upstream finds
// that word), the mark, and after_tok. These are contiguous in the text.
struct EndContext {
  EndMatch match;
  size_t context_start = 0;
};

// _get_last_whitespace_index over text[begin, end): the offset of the last ASCII whitespace
// character from `begin`, or 0 when there is none (also when it is the first character).
size_t LastWhitespaceOffset(TextView text, size_t begin, size_t end) {
  for (size_t i = end; i > begin; --i) {
    if (IsAsciiWhitespace(text[i - 1])) return i - 1 - begin;
  }
  return 0;
}

// _match_potential_end_contexts. A candidate whose preceding word overlaps the next
// candidate's is dropped (the next one, "!!!" read as one, decides instead).
std::vector<EndContext> PotentialEndContexts(TextView text) {
  std::vector<EndContext> out;
  size_t prev_start = 0, prev_stop = 0;  // previous_slice
  std::optional<EndMatch> prev_match;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::optional<EndMatch> m = MatchEndAt(text, i);
    if (!m) continue;
    size_t word_start = LastWhitespaceOffset(text, prev_stop, m->pos);
    word_start = word_start != 0 ? word_start + prev_stop + 1 : prev_start;
    if (prev_match && prev_stop <= word_start) out.push_back({*prev_match, prev_start});
    prev_match = m;
    prev_start = word_start;
    prev_stop = m->pos;
  }
  if (prev_match) out.push_back({*prev_match, prev_start});
  return out;
}

struct Span {
  size_t start = 0;
  size_t stop = 0;
  bool empty() const { return start >= stop; }
};

// _slices_from_text: the sentences before realignment.
std::vector<Span> SliceSentences(const PunktParameters& p, TextView text) {
  std::vector<Span> slices;
  size_t last_break = 0;
  for (const EndContext& c : PotentialEndContexts(text)) {
    const TextView context = text.substr(c.context_start, c.match.after_end - c.context_start);
    if (!ContainsSentBreak(p, context)) continue;
    slices.push_back({last_break, c.match.pos + 1});
    last_break = c.match.next_tok != kNone ? c.match.next_tok : c.match.pos + 1;
  }
  slices.push_back({last_break, RStrip(text).size()});
  return slices;
}

// re_boundary_realignment.match(s), ["')\]}]+?(?:\s+|(?=--)|$) with MULTILINE: the length of
// the closing punctuation it takes into the previous sentence and the match's end, if any.
struct Realignment {
  size_t kept = 0;
  size_t end = 0;
};

std::optional<Realignment> MatchRealignment(TextView s) {
  const size_t n = s.size();
  // Lazy: the shortest run of closing punctuation after which an alternative holds.
  for (size_t i = 1; i <= n && IsClosingPunct(s[i - 1]); ++i) {
    if (i < n && Space(s[i])) {
      size_t j = i;
      while (j < n && Space(s[j])) ++j;
      return Realignment{i, j};
    }
    if (i == n || s.substr(i, 2) == U"--") return Realignment{i, i};
  }
  return std::nullopt;
}

// _realign_boundaries: closing quotes and brackets after a boundary move into the sentence
// they close.
std::vector<Span> RealignBoundaries(TextView text, const std::vector<Span>& slices) {
  std::vector<Span> out;
  size_t realign = 0;
  for (size_t k = 0; k < slices.size(); ++k) {
    const Span s1{slices[k].start + realign, slices[k].stop};
    if (k + 1 == slices.size()) {
      if (!s1.empty()) out.push_back(s1);
      continue;
    }
    const Span& s2 = slices[k + 1];
    const TextView next = s2.empty() ? TextView() : text.substr(s2.start, s2.stop - s2.start);
    if (const std::optional<Realignment> m = MatchRealignment(next)) {
      out.push_back({s1.start, s2.start + m->kept});
      realign = m->end;
    } else {
      realign = 0;
      if (!s1.empty()) out.push_back(s1);
    }
  }
  return out;
}

}  // namespace

Result<PunktParameters> ParsePunktParameters(std::string_view abbrev_types,
                                             std::string_view collocations,
                                             std::string_view sent_starters,
                                             std::string_view ortho_context) {
  PunktParameters p;
  p.abbrev_types = ParseTypeSet(abbrev_types);
  p.sent_starters = ParseTypeSet(sent_starters);
  Result<std::unordered_set<std::u32string>> colloc = ParseCollocations(collocations);
  if (!colloc.ok()) return colloc.error();
  p.collocations = std::move(colloc).value();
  Result<std::unordered_map<Text, int, TextHash>> ortho = ParseOrthoContext(ortho_context);
  if (!ortho.ok()) return ortho.error();
  p.ortho_context = std::move(ortho).value();
  return p;
}

std::vector<Text> SentTokenize(const PunktParameters& punkt, TextView text) {
  std::vector<Text> sentences;
  for (const Span& s : RealignBoundaries(text, SliceSentences(punkt, text))) {
    sentences.emplace_back(text.substr(s.start, s.stop - s.start));
  }
  return sentences;
}

std::vector<Text> WordTokenize(const PunktParameters& punkt, TextView text) {
  std::vector<Text> words;
  for (const Text& sentence : SentTokenize(punkt, text)) {
    std::vector<Text> w = TreebankTokenize(sentence);
    words.insert(words.end(), std::make_move_iterator(w.begin()), std::make_move_iterator(w.end()));
  }
  return words;
}

}  // namespace pipette::scorers::ifbench
