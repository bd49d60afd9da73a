// CSV records as Python's csv module reads them (see csv.h).
#include "evals/csv.h"

namespace pipette::evals {
namespace {

enum class State { kStartRecord, kStartField, kInField, kInQuoted, kQuoteInQuoted };

}  // namespace

Result<std::vector<CsvRecord>> ParseCsv(std::string_view text, const std::string& path) {
  std::vector<CsvRecord> records;
  CsvRecord record;
  std::string field;
  State state = State::kStartRecord;
  int line = 1;
  int quote_line = 0;  // where the open quoted field started
  auto end_field = [&] {
    record.fields.push_back(std::move(field));
    field.clear();
  };
  auto end_record = [&] {
    end_field();
    records.push_back(std::move(record));
    record = CsvRecord();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool newline = c == '\n' || c == '\r';
    // "\r\n" is one line break: the '\r' ends the record, the '\n' is skipped with it.
    const bool crlf = c == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
    if (state == State::kStartRecord) {
      if (newline) {  // a blank line
        if (crlf) ++i;
        ++line;
        continue;
      }
      record.line = line;
      state = State::kStartField;
    }
    switch (state) {
      case State::kStartRecord:
      case State::kStartField:
        if (c == '"') {
          quote_line = line;
          state = State::kInQuoted;
        } else if (c == ',') {
          end_field();
        } else if (newline) {
          end_record();
          state = State::kStartRecord;
        } else {
          field += c;
          state = State::kInField;
        }
        break;
      case State::kInField:
        if (c == ',') {
          end_field();
          state = State::kStartField;
        } else if (newline) {
          end_record();
          state = State::kStartRecord;
        } else {
          field += c;
        }
        break;
      case State::kInQuoted:
        if (c == '"') {
          state = State::kQuoteInQuoted;
        } else {
          field += c;
        }
        break;
      case State::kQuoteInQuoted:
        if (c == '"') {
          field += '"';
          state = State::kInQuoted;
        } else if (c == ',') {
          end_field();
          state = State::kStartField;
        } else if (newline) {
          end_record();
          state = State::kStartRecord;
        } else {  // text after a closing quote joins the field, as Python's reader keeps it
          field += c;
          state = State::kInField;
        }
        break;
    }
    if (crlf && state != State::kInQuoted) {
      ++i;  // the '\n' of a "\r\n" that ended the record
      ++line;
    } else if (c == '\n' || (c == '\r' && !crlf)) {
      ++line;
    }
  }
  if (state == State::kInQuoted) {
    return MakeError(path + ":" + std::to_string(quote_line) +
                     ": quoted field not closed before the end of the file (truncated?)");
  }
  if (state != State::kStartRecord) end_record();
  return records;
}

}  // namespace pipette::evals
