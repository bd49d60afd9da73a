// Python string semantics over UTF-32, for the IFBench port: upstream's checkers are Python, and
// their verdicts hang on CPython's exact definitions of whitespace, letters, digits, `\w`, case
// mapping and slicing by code point. Character properties, case mapping and NFKD come from ICU
// (Unicode 15.0; CPython 3.11's unicodedata is 14.0, so a handful of characters new in 15.0
// differ); where CPython defines a class differently from Unicode's own properties, its
// definition is rebuilt here (each function names it). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pipette::scorers::ifbench {

using Text = std::u32string;
using TextView = std::u32string_view;

// UTF-8 to code points. A byte that does not begin a well-formed sequence becomes U+FFFD, as
// Python's bytes.decode("utf-8", "replace") does for each maximal ill-formed subpart.
Text Decode(std::string_view utf8);
std::string Encode(TextView text);

// Character classes, as CPython 3.11 defines them for str methods and `re` (str patterns).
bool IsSpace(char32_t c);    // str.isspace / re \s: category Zs, or bidi class WS, B or S
bool IsAlpha(char32_t c);    // str.isalpha: categories Lu Ll Lt Lm Lo
bool IsDecimal(char32_t c);  // str.isdecimal / re \d: category Nd
bool IsDigit(char32_t c);    // str.isdigit: Numeric_Type Decimal or Digit
bool IsNumeric(char32_t c);  // str.isnumeric: any Numeric_Type
bool IsAlnum(char32_t c);    // str.isalnum: alpha, decimal, digit or numeric
bool IsWord(char32_t c);     // re \w: alnum or '_'
bool IsUpper(char32_t c);    // Py_UNICODE_ISUPPER: the Uppercase property
bool IsLower(char32_t c);    // Py_UNICODE_ISLOWER: the Lowercase property
bool IsTitle(char32_t c);    // category Lt
bool IsAsciiPunct(char32_t c);  // a character of string.punctuation

// string.punctuation: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
inline constexpr TextView kPunctuation = U"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

// Whole-string predicates, as the str methods (false for the empty string).
bool StrIsDigit(TextView s);
bool StrIsAlpha(TextView s);
bool StrIsUpper(TextView s);  // at least one cased character, none lower or title case
bool StrIsLower(TextView s);

// str.lower() / str.upper(): full case mapping (one character may become several), final sigma.
Text Lower(TextView s);
Text Upper(TextView s);

// str.strip() / lstrip() / rstrip(): whitespace as IsSpace; with `chars`, those characters.
TextView Strip(TextView s);
TextView LStrip(TextView s);
TextView RStrip(TextView s);
TextView Strip(TextView s, TextView chars);
TextView LStrip(TextView s, TextView chars);
TextView RStrip(TextView s, TextView chars);

// str.split() (runs of whitespace, no empty pieces) and str.split(sep) (sep non-empty, every
// piece kept, empty ones included).
std::vector<Text> Split(TextView s);
std::vector<Text> Split(TextView s, TextView sep);
// str.split() as views into `s` (no copies; `s` must outlive them).
std::vector<TextView> SplitViews(TextView s);
Text Join(TextView sep, const std::vector<Text>& parts);

// str.replace(old, new) for every occurrence (old non-empty).
Text Replace(TextView s, TextView old_text, TextView new_text);
// s.translate(str.maketrans("", "", chars)): every character in `chars` deleted.
Text Delete(TextView s, TextView chars);
// Delete(s, kPunctuation).
Text DeletePunctuation(TextView s);

bool StartsWith(TextView s, TextView prefix);
bool EndsWith(TextView s, TextView suffix);
bool Contains(TextView s, TextView part);
// str.count(part) for non-empty part: non-overlapping occurrences, left to right.
size_t Count(TextView s, TextView part);

// unicodedata.normalize("NFKD", s).
Text Nfkd(TextView s);

// Python int(): the digits of `s` (decimal characters of any script, as int() accepts them)
// as a number; nullopt-like -1 when `s` is empty, not all decimal, or over 18 digits.
long long ParseDecimal(TextView s);

}  // namespace pipette::scorers::ifbench
