// A result record as a server receives it (POST /api/results) and `pipette` reads it from a file:
// ParseRecord (bounded JSON, then the published schema). Any input: an Error or a record, never a
// crash or a hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pipette/record_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  pipette::Result<nlohmann::json> record = pipette::ParseRecord(text);
  if (record.ok()) (void)pipette::ValidateRecord(*record);
  return 0;
}
