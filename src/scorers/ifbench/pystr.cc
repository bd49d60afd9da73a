#include "scorers/ifbench/pystr.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/locid.h>

#include <algorithm>

namespace pipette::scorers::ifbench {
namespace {

bool IsAscii(TextView s) {
  return std::all_of(s.begin(), s.end(), [](char32_t c) { return c < 0x80; });
}

icu::UnicodeString ToIcu(TextView s) {
  return icu::UnicodeString::fromUTF32(reinterpret_cast<const UChar32*>(s.data()),
                                       static_cast<int32_t>(s.size()));
}

Text FromIcu(const icu::UnicodeString& u) {
  Text out;
  out.reserve(static_cast<size_t>(u.length()));
  for (int32_t i = 0; i < u.length();) {
    const UChar32 c = u.char32At(i);
    out.push_back(static_cast<char32_t>(c));
    i += U16_LENGTH(c);
  }
  return out;
}

bool InChars(char32_t c, TextView chars) { return chars.find(c) != TextView::npos; }

}  // namespace

Text Decode(std::string_view utf8) {
  Text out;
  out.reserve(utf8.size());
  const auto* p = reinterpret_cast<const unsigned char*>(utf8.data());
  const size_t n = utf8.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char b = p[i];
    if (b < 0x80) {
      out.push_back(b);
      ++i;
      continue;
    }
    int len = 0;
    char32_t c = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2, c = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3, c = b & 0x0F;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4, c = b & 0x07;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    // A maximal ill-formed subpart becomes one U+FFFD (Unicode's and Python's practice).
    size_t j = i + 1;
    bool good = true;
    for (int k = 1; k < len; ++k, ++j) {
      const unsigned char lo_k = k == 1 ? lo : 0x80, hi_k = k == 1 ? hi : 0xBF;
      if (j >= n || p[j] < lo_k || p[j] > hi_k) {
        good = false;
        break;
      }
      c = (c << 6) | (p[j] & 0x3F);
    }
    out.push_back(good ? c : 0xFFFD);
    i = j;
  }
  return out;
}

std::string Encode(TextView text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

bool IsSpace(char32_t c) {
  if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  if (u_charType(static_cast<UChar32>(c)) == U_SPACE_SEPARATOR) return true;
  const UCharDirection d = u_charDirection(static_cast<UChar32>(c));
  return d == U_WHITE_SPACE_NEUTRAL || d == U_BLOCK_SEPARATOR || d == U_SEGMENT_SEPARATOR;
}

bool IsAlpha(char32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return true;
    default:
      return false;
  }
}

bool IsDecimal(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return u_charType(static_cast<UChar32>(c)) == U_DECIMAL_DIGIT_NUMBER;
}

bool IsDigit(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  const int t = u_getIntPropertyValue(static_cast<UChar32>(c), UCHAR_NUMERIC_TYPE);
  return t == U_NT_DECIMAL || t == U_NT_DIGIT;
}

bool IsNumeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return u_getIntPropertyValue(static_cast<UChar32>(c), UCHAR_NUMERIC_TYPE) != U_NT_NONE;
}

bool IsAlnum(char32_t c) {
  if (c < 0x80) return IsAlpha(c) || (c >= '0' && c <= '9');
  return IsAlpha(c) || IsNumeric(c);
}

bool IsWord(char32_t c) { return c == U'_' || IsAlnum(c); }

bool IsUpper(char32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z';
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_UPPERCASE);
}

bool IsLower(char32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z';
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_LOWERCASE);
}

bool IsTitle(char32_t c) {
  return c >= 0x80 && u_charType(static_cast<UChar32>(c)) == U_TITLECASE_LETTER;
}

bool IsAsciiPunct(char32_t c) { return c < 0x80 && InChars(c, kPunctuation); }

bool StrIsDigit(TextView s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit); }
bool StrIsAlpha(TextView s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsAlpha); }

bool StrIsUpper(TextView s) {
  bool cased = false;
  for (char32_t c : s) {
    if (IsLower(c) || IsTitle(c)) return false;
    if (IsUpper(c)) cased = true;
  }
  return cased;
}

bool StrIsLower(TextView s) {
  bool cased = false;
  for (char32_t c : s) {
    if (IsUpper(c) || IsTitle(c)) return false;
    if (IsLower(c)) cased = true;
  }
  return cased;
}

Text Lower(TextView s) {
  if (IsAscii(s)) {
    Text out(s);
    for (char32_t& c : out) {
      if (c >= 'A' && c <= 'Z') c += 32;
    }
    return out;
  }
  icu::UnicodeString u = ToIcu(s);
  u.toLower(icu::Locale::getRoot());
  return FromIcu(u);
}

Text Upper(TextView s) {
  if (IsAscii(s)) {
    Text out(s);
    for (char32_t& c : out) {
      if (c >= 'a' && c <= 'z') c -= 32;
    }
    return out;
  }
  icu::UnicodeString u = ToIcu(s);
  u.toUpper(icu::Locale::getRoot());
  return FromIcu(u);
}

TextView LStrip(TextView s) {
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  return s.substr(i);
}

TextView RStrip(TextView s) {
  size_t n = s.size();
  while (n > 0 && IsSpace(s[n - 1])) --n;
  return s.substr(0, n);
}

TextView Strip(TextView s) { return RStrip(LStrip(s)); }

TextView LStrip(TextView s, TextView chars) {
  size_t i = 0;
  while (i < s.size() && InChars(s[i], chars)) ++i;
  return s.substr(i);
}

TextView RStrip(TextView s, TextView chars) {
  size_t n = s.size();
  while (n > 0 && InChars(s[n - 1], chars)) --n;
  return s.substr(0, n);
}

TextView Strip(TextView s, TextView chars) { return RStrip(LStrip(s, chars), chars); }

std::vector<TextView> SplitViews(TextView s) {
  std::vector<TextView> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i == s.size()) break;
    const size_t start = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<Text> Split(TextView s) {
  const std::vector<TextView> views = SplitViews(s);
  return std::vector<Text>(views.begin(), views.end());
}

std::vector<Text> Split(TextView s, TextView sep) {
  std::vector<Text> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    if (at == TextView::npos) break;
    out.emplace_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.emplace_back(s.substr(start));
  return out;
}

Text Join(TextView sep, const std::vector<Text>& parts) {
  Text out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

Text Replace(TextView s, TextView old_text, TextView new_text) {
  Text out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(old_text, start);
    if (at == TextView::npos) break;
    out += s.substr(start, at - start);
    out += new_text;
    start = at + old_text.size();
  }
  out += s.substr(start);
  return out;
}

Text Delete(TextView s, TextView chars) {
  Text out;
  out.reserve(s.size());
  for (char32_t c : s) {
    if (!InChars(c, chars)) out.push_back(c);
  }
  return out;
}

Text DeletePunctuation(TextView s) {
  Text out;
  out.reserve(s.size());
  for (char32_t c : s) {
    if (!IsAsciiPunct(c)) out.push_back(c);
  }
  return out;
}

bool StartsWith(TextView s, TextView prefix) { return s.substr(0, prefix.size()) == prefix; }
bool EndsWith(TextView s, TextView suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool Contains(TextView s, TextView part) { return s.find(part) != TextView::npos; }

size_t Count(TextView s, TextView part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != TextView::npos; at = s.find(part, at + part.size())) ++n;
  return n;
}

Text Nfkd(TextView s) {
  if (IsAscii(s)) return Text(s);
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkd = icu::Normalizer2::getNFKDInstance(status);
  if (U_FAILURE(status)) return Text(s);
  const icu::UnicodeString u = nfkd->normalize(ToIcu(s), status);
  if (U_FAILURE(status)) return Text(s);
  return FromIcu(u);
}

long long ParseDecimal(TextView s) {
  if (s.empty() || s.size() > 18) return -1;
  long long v = 0;
  for (char32_t c : s) {
    if (!IsDecimal(c)) return -1;
    const int d = c < 0x80 ? static_cast<int>(c - '0') : u_charDigitValue(static_cast<UChar32>(c));
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

}  // namespace pipette::scorers::ifbench
