// Private helpers shared by sentences.cc (Punkt) and treebank.cc: CPython's character classes
// with an inline ASCII path. The tokenizers test several classes at every character of the text, and the
// out-of-line pystr.h calls dominated their cost; these answer exactly as pystr.h does.
#pragma once

#include "scorers/ifbench/pystr.h"

namespace pipette::scorers::ifbench::char_class {

// re \s / str.isspace: ASCII 0x09-0x0D and 0x1C-0x20, else as pystr.h.
inline bool Space(char32_t c) {
  if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  return IsSpace(c);
}

// re \w: ASCII letters, digits and "_", else as pystr.h.
inline bool Word(char32_t c) {
  if (c < 0x80) {
    return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9') ||
           c == U'_';
  }
  return IsWord(c);
}

// re \d: ASCII digits, else any decimal digit (category Nd).
inline bool Digit(char32_t c) {
  if (c < 0x80) return c >= U'0' && c <= U'9';
  return IsDecimal(c);
}

}  // namespace pipette::scorers::ifbench::char_class
