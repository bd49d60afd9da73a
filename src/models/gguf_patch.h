// In-place edits of a GGUF header (internal to pipette_models).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

// Overwrites the value of the existing uint32 key `key` in the GGUF file at `path` with `value`,
// in place (the file's size and layout do not change), and syncs the file.
// Errors: the file is not a valid GGUF file (ReadGgufInfo's messages), the key is absent or not a
// uint32, or the write fails.
Status PatchGgufU32(const std::string& path, const std::string& key, uint32_t value);

// Removes from the GGUF file at `path` every tokenizer.ggml.*_token_id key whose id is not a token
// of its vocabulary (tokenizer.ggml.tokens), e.g. the 4294967295 (-1) that llama.cpp's
// llama2.c converter writes for the separator and padding tokens a llama2.c model does not have:
// llama.cpp's loader would warn "bad special token" on every load. Rewrites the header and copies
// the tensor data after it (through `path`.ids, renamed into place); the file is untouched when
// no key is invalid or there is no vocabulary. Returns the keys removed.
// Errors: ggml cannot read the file, or writing or renaming fails (the partial file is removed).
Result<std::vector<std::string>> DropInvalidTokenIds(const std::string& path);

}  // namespace pipette
