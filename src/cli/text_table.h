// Plain-text tables for the terminal output of the pipette commands.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace pipette::cli {

// Writes `rows` as left-aligned columns separated by two spaces; the last column is not padded.
// Rows may have different lengths. Widths count bytes (the tables hold ASCII).
void PrintTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out);

}  // namespace pipette::cli
