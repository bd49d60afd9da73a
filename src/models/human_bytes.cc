#include "models/human_bytes.h"

#include <fmt/format.h>

namespace pipette {

std::string HumanBytes(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace pipette
