#include "cli/text_table.h"

#include <fmt/format.h>

#include <algorithm>

namespace pipette::cli {

void PrintTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += c + 1 < row.size() ? fmt::format("{:<{}}  ", row[c], width[c]) : row[c];
    }
    out << line << '\n';
  }
}

}  // namespace pipette::cli
