// CPython 3.11's csv.reader over io.StringIO(text), hand-written from the behaviour of its
// `_csv` state machine for the excel dialect with a chosen delimiter (quotechar '"',
// doublequote, no escapechar, skipinitialspace off, strict off): the three IFBench CSV checkers
// read responses with it. Non-strict rules: a quote inside an unquoted field is literal; text
// after a closing quote is appended to the field; a quoted field runs across lines. Lines end at
// '\n' only (StringIO's default), and a '\r' is a line end to the state machine.
#pragma once

#include <optional>
#include <vector>

#include "scorers/ifbench/pystr.h"

namespace pipette::scorers::ifbench {

using CsvRow = std::vector<Text>;

// list(csv.reader(io.StringIO(text), delimiter=delimiter)); nullopt where the reader raises
// csv.Error: a character after a '\r' line end on the same line ("new-line character seen in
// unquoted field"), or a field longer than the default field_size_limit (131,072 characters).
// Linear in the text's length. Reading stops after max_rows + 1 rows (the checkers need an exact
// row count, so a longer table fails whatever follows, error or not).
std::optional<std::vector<CsvRow>> ReadCsv(TextView text, char32_t delimiter, size_t max_rows);

}  // namespace pipette::scorers::ifbench
