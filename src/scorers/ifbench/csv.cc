#include "scorers/ifbench/csv.h"

#include <utility>

namespace pipette::scorers::ifbench {
namespace {

// The end-of-line event the reader feeds after each line (never a code point).
constexpr char32_t kEol = 0xFFFFFFFEu;
// csv.field_size_limit()'s default.
constexpr size_t kFieldLimit = 128 * 1024;

enum class State { kStartRecord, kStartField, kInField, kInQuotedField, kQuoteInQuoted, kEatCrnl };

class Reader {
 public:
  explicit Reader(char32_t delimiter) : delimiter_(delimiter) {}

  // One character (or kEol); false where _csv raises.
  bool Process(char32_t c) {
    const bool line_end = c == U'\n' || c == U'\r' || c == kEol;
    switch (state_) {
      case State::kStartRecord:
        if (c == kEol) return true;  // an empty line: the row []
        if (c == U'\n' || c == U'\r') {
          state_ = State::kEatCrnl;
          return true;
        }
        state_ = State::kStartField;
        [[fallthrough]];
      case State::kStartField:
        if (line_end) {
          SaveField();
          state_ = c == kEol ? State::kStartRecord : State::kEatCrnl;
        } else if (c == U'"') {
          state_ = State::kInQuotedField;
        } else if (c == delimiter_) {
          SaveField();
        } else {
          if (!AddChar(c)) return false;
          state_ = State::kInField;
        }
        return true;
      case State::kInField:
        if (line_end) {
          SaveField();
          state_ = c == kEol ? State::kStartRecord : State::kEatCrnl;
        } else if (c == delimiter_) {
          SaveField();
          state_ = State::kStartField;
        } else if (!AddChar(c)) {
          return false;
        }
        return true;
      case State::kInQuotedField:
        if (c == kEol) return true;
        if (c == U'"') {
          state_ = State::kQuoteInQuoted;
          return true;
        }
        return AddChar(c);
      case State::kQuoteInQuoted:
        if (c == U'"') {  // "" is a literal quote
          if (!AddChar(c)) return false;
          state_ = State::kInQuotedField;
        } else if (c == delimiter_) {
          SaveField();
          state_ = State::kStartField;
        } else if (line_end) {
          SaveField();
          state_ = c == kEol ? State::kStartRecord : State::kEatCrnl;
        } else {  // not strict: text after the closing quote joins the field
          if (!AddChar(c)) return false;
          state_ = State::kInField;
        }
        return true;
      case State::kEatCrnl:
        if (c == U'\n' || c == U'\r') return true;
        if (c == kEol) {
          state_ = State::kStartRecord;
          return true;
        }
        return false;  // "new-line character seen in unquoted field"
    }
    return false;
  }

  State state() const { return state_; }
  bool field_pending() const { return !field_.empty(); }
  CsvRow TakeRow() {
    CsvRow row = std::move(fields_);
    fields_.clear();
    return row;
  }
  void SaveField() {
    fields_.push_back(std::move(field_));
    field_.clear();
  }

 private:
  bool AddChar(char32_t c) {
    if (field_.size() >= kFieldLimit) return false;  // "field larger than field limit"
    field_.push_back(c);
    return true;
  }

  char32_t delimiter_;
  State state_ = State::kStartRecord;
  Text field_;
  CsvRow fields_;
};

}  // namespace

std::optional<std::vector<CsvRow>> ReadCsv(TextView text, char32_t delimiter, size_t max_rows) {
  std::vector<CsvRow> rows;
  Reader reader(delimiter);
  size_t i = 0;
  while (true) {
    if (i >= text.size()) {
      // End of input: a record still open (inside quotes) is saved as it stands.
      if (reader.field_pending() || reader.state() == State::kInQuotedField) {
        reader.SaveField();
        rows.push_back(reader.TakeRow());
      }
      break;
    }
    // One line, its '\n' included, then the end-of-line event.
    size_t end = text.find(U'\n', i);
    end = end == TextView::npos ? text.size() : end + 1;
    for (; i < end; ++i) {
      if (!reader.Process(text[i])) return std::nullopt;
    }
    if (!reader.Process(kEol)) return std::nullopt;
    if (reader.state() == State::kStartRecord) {
      rows.push_back(reader.TakeRow());
      if (rows.size() > max_rows) break;  // the caller's verdict is decided
    }
  }
  return rows;
}

}  // namespace pipette::scorers::ifbench
