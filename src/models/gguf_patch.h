// In-place edits of a GGUF header (internal to pipette_models).
#pragma once

#include <cstdint>
#include <string>

#include "pipette/status.h"

namespace pipette {

// Overwrites the value of the existing uint32 key `key` in the GGUF file at `path` with `value`,
// in place (the file's size and layout do not change), and syncs the file.
// Errors: the file is not a valid GGUF file (ReadGgufInfo's messages), the key is absent or not a
// uint32, or the write fails.
Status PatchGgufU32(const std::string& path, const std::string& key, uint32_t value);

}  // namespace pipette
