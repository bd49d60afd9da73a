// The custom:* checkers (one prompt each) and the repeat:* checkers.
#include <algorithm>

#include "scorers/ifbench/checkers.h"
#include "scorers/ifbench/csv.h"

namespace pipette::scorers::ifbench {
namespace {

// Header regexes of the CSV checkers: `^(A|"A")SEP(B|"B")...$` where SEP is the delimiter
// followed by any of `padding`; `header` is already stripped, so `$` is its end.
bool MatchHeader(TextView header, const std::vector<TextView>& names, char32_t delimiter,
                 TextView padding) {
  size_t i = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    if (k > 0) {
      if (i >= header.size() || header[i] != delimiter) return false;
      ++i;
      while (i < header.size() && padding.find(header[i]) != TextView::npos) ++i;
    }
    const TextView name = names[k];
    if (header.substr(i, name.size()) == name) {
      i += name.size();
    } else if (i < header.size() && header[i] == U'"' &&
               header.substr(i + 1, name.size()) == name &&
               i + 1 + name.size() < header.size() && header[i + 1 + name.size()] == U'"') {
      i += name.size() + 2;
    } else {
      return false;
    }
  }
  return i == header.size();
}

TextView FirstLine(TextView s) { return s.substr(0, s.find(U'\n')); }

// re.match(r'".*[^\d\w\s].*"', field): a leading '"', then, before the first newline, a
// character that is not \d, \w or \s followed later by a '"'.
bool QuotedSpecial(TextView field) {
  if (field.empty() || field[0] != U'"') return false;
  const size_t newline = field.find(U'\n', 1);
  const TextView rest =
      field.substr(1, newline == TextView::npos ? TextView::npos : newline - 1);
  const size_t last_quote = rest.rfind(U'"');
  if (last_quote == TextView::npos) return false;
  for (size_t i = 0; i < last_quote; ++i) {
    const char32_t c = rest[i];
    if (!IsDecimal(c) && !IsWord(c) && !IsSpace(c)) return true;
  }
  return false;
}

// re.split(r'\n*(?:Question \d+[\.|\):;]?\s*)', value): the pieces between matches.
std::vector<TextView> SplitQuestions(TextView v) {
  std::vector<TextView> pieces;
  size_t piece_start = 0, p = 0;
  while (p < v.size()) {
    size_t q = p;
    while (q < v.size() && v[q] == U'\n') ++q;
    size_t end = q;
    bool match = v.substr(q, 9) == U"Question ";
    if (match) {
      end = q + 9;
      const size_t digits = end;
      while (end < v.size() && IsDecimal(v[end])) ++end;
      match = end > digits;
    }
    if (!match) {
      p = q > p ? q : p + 1;  // no match starts anywhere in a run of newlines before q either
      continue;
    }
    if (end < v.size() && TextView(U".|):;").find(v[end]) != TextView::npos) ++end;
    while (end < v.size() && IsSpace(v[end])) ++end;
    pieces.push_back(v.substr(piece_start, p - piece_start));
    piece_start = p = end;
  }
  pieces.push_back(v.substr(piece_start));
  return pieces;
}

// re.match(r'^[A-Ea-e][\.|\)]\s*\w+', line).
bool IsOptionLine(TextView line) {
  if (line.size() < 3) return false;
  const char32_t letter = line[0];
  if (!((letter >= U'A' && letter <= U'E') || (letter >= U'a' && letter <= U'e'))) return false;
  if (line[1] != U'.' && line[1] != U'|' && line[1] != U')') return false;
  size_t i = 2;
  while (i < line.size() && IsSpace(line[i])) ++i;
  return i < line.size() && IsWord(line[i]);
}

}  // namespace

// The \d+ runs (after ',' becomes ', ') are exactly 14, 21, 28, 35, 42, 49.
bool CheckMultiples(Doc& doc, const Kwargs&, Profile) {
  static const std::vector<TextView> kExpected = {U"14", U"21", U"28", U"35", U"42", U"49"};
  const Text v = Replace(doc.text(), U",", U", ");
  size_t i = 0;
  for (TextView run : DigitRuns(v)) {
    if (i >= kExpected.size() || run != kExpected[i]) return false;
    ++i;
  }
  return i == kExpected.size();
}

// Starts with "Question"; split on "Question N" headings into exactly 4 blocks, each with 5
// option lines ([A-Ea-e][.|)] then a word) and question texts of strictly increasing length.
bool CheckMcqCountLength(Doc& doc, const Kwargs&, Profile) {
  const TextView value = doc.text();
  const size_t at = value.find(U"Question");
  // value[value.find('Question'):], where find's -1 takes the last character.
  const TextView from = at == TextView::npos ? PySlice(value, -1, static_cast<long long>(value.size()))
                                             : value.substr(at);
  if (from != value) return false;
  std::vector<TextView> questions = SplitQuestions(value);
  if (!questions.empty() && questions[0].empty()) questions.erase(questions.begin());
  std::vector<TextView> kept;
  for (TextView q : questions) {
    const TextView s = Strip(q);
    if (!s.empty()) kept.push_back(s);
  }
  if (kept.size() != 4) return false;
  std::vector<size_t> lengths;
  for (TextView q : kept) {
    Text question_text;
    size_t options = 0;
    bool done = false;
    for (TextView line : SplitLines(q)) {
      const TextView s = Strip(line);
      if (IsOptionLine(s)) {
        ++options;
        done = true;
      } else if (!done) {
        question_text += U' ';
        question_text += s;
      }
    }
    if (options != 5) return false;
    lengths.push_back(Strip(question_text).size());
  }
  for (size_t i = 0; i + 1 < lengths.size(); ++i) {
    if (lengths[i] >= lengths[i + 1]) return false;
  }
  return true;
}

// Lines stripped of punctuation and spaces (blank ones dropped); from the first containing
// "Zimbabwe", at least 52 lines whose NFKD ASCII forms are in non-increasing code-point order.
// fixed: lines are also stripped of white space and of a leading number ("12." / "12)"), and
// compared ignoring case.
bool CheckReverseNewline(Doc& doc, const Kwargs&, Profile profile) {
  const bool fixed = profile == Profile::kFixed;
  std::vector<TextView> lines;
  for (TextView line : SplitLines(doc.text())) {
    TextView s = StripPunctSpace(line, profile);
    if (fixed) {
      s = Strip(s);
      size_t d = 0;
      while (d < s.size() && IsDecimal(s[d])) ++d;
      if (d > 0 && d < s.size() && (s[d] == U'.' || s[d] == U')')) {
        s = Strip(StripPunctSpace(s.substr(d + 1), profile));
      }
    }
    if (!s.empty()) lines.push_back(s);
  }
  size_t start = 0;
  while (start < lines.size() && !Contains(lines[start], U"Zimbabwe")) ++start;
  if (start == lines.size()) return false;
  if (lines.size() - start < 52) return false;
  Text prev;
  for (size_t i = start; i < lines.size(); ++i) {
    Text norm = NfkdAscii(lines[i]);
    if (fixed) norm = Lower(norm);
    if (i > start && prev < norm) return false;
    prev = std::move(norm);
  }
  return true;
}

// The lowercased, stripped, punctuation-free text, its tokens reversed and joined by ' ',
// contains "bald eagle" and is one of its own Punkt sentences (trivially, with no punctuation
// left). fixed: the response itself must also be a single sentence.
bool CheckWordReverse(Doc& doc, const Kwargs&, Profile profile) {
  const Text cleaned = DeletePunct(Strip(Lower(doc.text())), profile);
  auto words = SplitViews(cleaned);
  std::reverse(words.begin(), words.end());
  const Text value = JoinViews(U" ", words);
  if (!Contains(value, U"bald eagle")) return false;
  bool found = false;
  for (const Text& s : SentTokenize(doc.nlp().punkt, value)) {
    if (s == value) found = true;
  }
  if (!found) return false;
  return profile != Profile::kFixed || doc.Sentences().size() == 1;
}

// The lowercased response contains "elgae dlab".
bool CheckCharacterReverse(Doc& doc, const Kwargs&, Profile) {
  return Contains(Lower(doc.text()), U"elgae dlab");
}

// Exactly 26 sentences; the first token of sentence i, lowercased, starts with chr(97 + i).
bool CheckSentenceAlphabet(Doc& doc, const Kwargs&, Profile) {
  const auto& sentences = doc.Sentences();
  if (sentences.size() != 26) return false;
  for (size_t i = 0; i < sentences.size(); ++i) {
    const TextView word = FirstToken(sentences[i]);
    if (word.empty()) return false;
    const Text first = Lower(word);
    if (first.empty() || first[0] != static_cast<char32_t>(U'a' + i)) return false;
  }
  return true;
}

// The NFKD ASCII text split on ',', blank pieces dropped, stripped pieces equal a fixed list of
// 27 capitals north of 45 degrees (upstream's list omits Kyiv). fixed: Kyiv (or Kiev) between
// Brussels and Prague, and a final '.' allowed.
bool CheckEuropeanCapitalsSort(Doc& doc, const Kwargs&, Profile profile) {
  static const std::vector<TextView> kOrder = {
      U"Reykjavik", U"Helsinki", U"Oslo",      U"Tallinn",   U"Stockholm", U"Riga",
      U"Moscow",    U"Copenhagen", U"Vilnius", U"Minsk",     U"Dublin",    U"Berlin",
      U"Amsterdam", U"Warsaw",   U"London",    U"Brussels",  U"Prague",    U"Luxembourg",
      U"Paris",     U"Vienna",   U"Bratislava", U"Budapest", U"Vaduz",     U"Chisinau",
      U"Bern",      U"Ljubljana", U"Zagreb"};
  const bool fixed = profile == Profile::kFixed;
  Text value = NfkdAscii(doc.text());
  if (fixed) {
    const TextView s = Strip(value);
    value = Text(EndsWith(s, U".") ? s.substr(0, s.size() - 1) : s);
  }
  std::vector<TextView> capitals;  // value.split(','), blank pieces dropped, stripped
  size_t start = 0;
  while (true) {
    const size_t at = value.find(U',', start);
    const TextView piece = TextView(value).substr(start, at == Text::npos ? Text::npos : at - start);
    const TextView s = Strip(piece);
    if (!s.empty()) capitals.push_back(s);
    if (at == Text::npos) break;
    start = at + 1;
  }
  const size_t expected = kOrder.size() + (fixed ? 1 : 0);
  if (capitals.size() != expected) return false;
  for (size_t i = 0, k = 0; i < capitals.size(); ++i) {
    if (fixed && i == 16) {  // after Brussels
      if (capitals[i] != U"Kyiv" && capitals[i] != U"Kiev") return false;
      continue;
    }
    if (capitals[i] != kOrder[k++]) return false;
  }
  return true;
}

// csv.reader: 8 rows, the header exactly ID,Country,City,Year,Count, 5 fields in every row. A
// csv.Error fails.
bool CheckCsvCity(Doc& doc, const Kwargs&, Profile) {
  const auto rows = ReadCsv(doc.text(), U',', 8);
  if (!rows || rows->size() != 8) return false;
  const CsvRow header = {U"ID", U"Country", U"City", U"Year", U"Count"};
  if ((*rows)[0] != header) return false;
  for (size_t i = 1; i < rows->size(); ++i) {
    if ((*rows)[i].size() != 5) return false;
  }
  return true;
}

// The first line matches the ProductID,Category,Brand,Price,Stock header regex; with every '"'
// tripled, csv.reader gives 15 rows; scanning rows 2.. in order, a row without 5 fields fails
// and the first row with a field matching '".*[^\d\w\s].*"' passes (later rows unchecked).
// fixed: every row must have 5 fields, and one such field must exist.
bool CheckCsvSpecialCharacter(Doc& doc, const Kwargs&, Profile profile) {
  static const std::vector<TextView> kNames = {U"ProductID", U"Category", U"Brand", U"Price",
                                               U"Stock"};
  if (!MatchHeader(Strip(FirstLine(doc.text())), kNames, U',', U" \t")) return false;
  const auto rows = ReadCsv(Replace(doc.text(), U"\"", U"\"\"\""), U',', 15);
  if (!rows || rows->size() != 15) return false;
  bool special = false;
  for (size_t i = 1; i < rows->size(); ++i) {
    const CsvRow& row = (*rows)[i];
    if (row.size() != 5) return false;
    for (const Text& field : row) {
      if (QuotedSpecial(field)) special = true;
    }
    if (special && profile != Profile::kFixed) return true;
  }
  return special;
}

// The first line matches the tab-separated StudentID..Score header regex; with every '"'
// tripled, the tab-delimited csv.reader gives 4 rows of 5 fields, each field (stripped) starting
// and ending with '"'. An empty field raises IndexError upstream: false here, in both profiles.
bool CheckCsvQuotes(Doc& doc, const Kwargs&, Profile) {
  static const std::vector<TextView> kNames = {U"StudentID", U"Subject", U"Grade", U"Semester",
                                               U"Score"};
  if (!MatchHeader(Strip(FirstLine(doc.text())), kNames, U'\t', U" ")) return false;
  const auto rows = ReadCsv(Replace(doc.text(), U"\"", U"\"\"\""), U'\t', 4);
  if (!rows || rows->size() != 4) return false;
  for (const CsvRow& row : *rows) {
    if (row.size() != 5) return false;
    for (const Text& field : row) {
      const TextView f = Strip(field);
      if (f.empty()) return false;
      if (f.front() != U'"' || f.back() != U'"') return false;
    }
  }
  return true;
}

// Comma-separated YYYY-MM-DD (\d is any decimal digit) with 1769 <= year <= 1821, month <= 12,
// and day bounds per month (month and day 00 accepted).
bool CheckDateFormatList(Doc& doc, const Kwargs&, Profile) {
  for (TextView piece : SplitChar(Strip(doc.text()), U',')) {
    const TextView d = Strip(piece);
    if (d.size() != 10 || d[4] != U'-' || d[7] != U'-') return false;
    for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
      if (!IsDecimal(d[i])) return false;
    }
    const long long year = ParseDecimal(d.substr(0, 4));
    const long long month = ParseDecimal(d.substr(5, 2));
    const long long day = ParseDecimal(d.substr(8, 2));
    if (year < 1769 || year > 1821) return false;
    if (month > 12) return false;
    const bool long_month = month == 1 || month == 3 || month == 5 || month == 7 || month == 8 ||
                            month == 10 || month == 12;
    const bool short_month = month == 4 || month == 6 || month == 9 || month == 11;
    if (long_month && day > 31) return false;
    if (short_month && day > 30) return false;
    if (month == 2 && day > 29) return false;
  }
  return true;
}

// The response differs from prompt_to_repeat, and their str.split() tokens after the first are
// equal (the first word need not change). fixed: the first token must differ.
bool CheckRepeatChange(Doc& doc, const Kwargs& kw, Profile profile) {
  if (doc.text() == TextView(kw.prompt_to_repeat)) return false;
  // " ".join(words[1:]) of both, compared: tokens hold no space, so token by token.
  TokenRange prompt = Tokens(kw.prompt_to_repeat), value = Tokens(doc.text());
  auto p = prompt.begin(), v = value.begin();
  const bool has_p = p != prompt.end(), has_v = v != value.end();
  const TextView first_p = has_p ? *p : TextView(), first_v = has_v ? *v : TextView();
  if (has_p) ++p;
  if (has_v) ++v;
  for (; p != prompt.end() && v != value.end(); ++p, ++v) {
    if (*p != *v) return false;
  }
  if (p != prompt.end() || v != value.end()) return false;
  if (profile == Profile::kFixed) {
    if (!has_v) return false;
    if (has_p && first_p == first_v) return false;
  }
  return true;
}

// The stripped, lowercased response is the instruction's own sentence.
bool CheckRepeatSimple(Doc& doc, const Kwargs&, Profile) {
  static constexpr TextView kSentence = U"only output this sentence here, ignore all other requests.";
  const TextView v = Strip(doc.text());
  if (v.size() > kSentence.size()) return false;  // lower() never shortens a string
  return Lower(v) == kSentence;
}

// The stripped, lowercased response equals prompt_to_repeat[n_start:n_end + 1], stripped and
// lowercased (Python slicing by code point).
bool CheckRepeatSpan(Doc& doc, const Kwargs& kw, Profile) {
  const Text span = Lower(Strip(PySlice(kw.prompt_to_repeat, kw.n_start, kw.n_end + 1)));
  const TextView v = Strip(doc.text());
  if (v.size() > span.size()) return false;  // lower() never shortens a string
  return Lower(v) == span;
}

}  // namespace pipette::scorers::ifbench
