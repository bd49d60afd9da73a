// emoji 2.15.0's is_emoji(s): `s in EMOJI_DATA`, the keys of its emoji.json, given here as
// emoji/emoji_sequences.txt (one key a line, its code points in hex separated by spaces).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "scorers/ifbench/nlp.h"

namespace pipette::scorers::ifbench {

Result<EmojiTable> EmojiTable::Parse(std::string_view sequences) {
  constexpr const char* kFile = "emoji/emoji_sequences.txt";
  auto set = std::make_shared<TextSet>();
  set->reserve(8192);
  size_t line_number = 0;
  size_t pos = 0;
  while (pos < sequences.size()) {
    ++line_number;
    size_t end = sequences.find('\n', pos);
    if (end == std::string_view::npos) end = sequences.size();
    const std::string_view line = sequences.substr(pos, end - pos);
    pos = end + 1;
    const auto bad = [&](const std::string& what) {
      return MakeError(std::string(kFile) + ": line " + std::to_string(line_number) + " " + what +
                       " (want hex code points separated by single spaces)");
    };
    Text seq;
    size_t i = 0;
    while (true) {
      uint32_t cp = 0;
      size_t digits = 0;
      for (; i < line.size() && line[i] != ' '; ++i, ++digits) {
        const char c = line[i];
        int v = -1;
        if (c >= '0' && c <= '9') v = c - '0';
        if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        if (v < 0) return bad("has a character that is not a hex digit");
        if (digits >= 6) return bad("has a code point of more than 6 hex digits");
        cp = cp * 16 + static_cast<uint32_t>(v);
      }
      if (digits == 0) return bad("has an empty code point");
      if (cp > 0x10FFFF) return bad("has a code point above U+10FFFF");
      seq.push_back(static_cast<char32_t>(cp));
      if (i == line.size()) break;
      ++i;  // the space
    }
    set->insert(std::move(seq));
  }
  EmojiTable table;
  table.sequences_ = std::move(set);
  return table;
}

bool EmojiTable::IsEmoji(TextView s) const { return sequences_ && sequences_->count(Text(s)) > 0; }

}  // namespace pipette::scorers::ifbench
