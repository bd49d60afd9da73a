// A CSV reader for the GPQA Diamond file: RFC 4180 records as Python's csv module (excel dialect)
// reads them. Fields are separated by ','; a field that starts with '"' is quoted, may hold ',',
// '"' (written "") and line breaks; a record ends at "\n", "\r\n" or "\r" outside quotes. Blank
// lines are skipped, as csv.DictReader skips them. Unlike Python's non-strict reader, input that
// ends inside a quoted field is an error (a truncated file).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipette/status.h"

namespace pipette::evals {

struct CsvRecord {
  int line = 0;  // 1-based physical line the record starts on
  std::vector<std::string> fields;
};

// Parses all of `text`. Errors name `path` and the line: "PATH:LINE: ...".
Result<std::vector<CsvRecord>> ParseCsv(std::string_view text, const std::string& path);

}  // namespace pipette::evals
