// Byte counts for people: "512 bytes", "1.1 MiB", "2.3 GiB" (binary units, one decimal).
#pragma once

#include <cstdint>
#include <string>

namespace pipette {

std::string HumanBytes(uint64_t bytes);

}  // namespace pipette
