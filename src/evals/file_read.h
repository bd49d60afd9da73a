// Reading an eval's files whole: plain, or gzip-compressed (zlib). Errors name the file.
#pragma once

#include <string>

#include "pipette/status.h"

namespace pipette {

// Errors: the file cannot be opened or read.
Result<std::string> ReadFile(const std::string& path);
// A gzip file decompressed; a file that is not gzip-compressed is read as it is (zlib's gzread).
// Errors: cannot open, truncated or corrupt compressed data.
Result<std::string> ReadGzipFile(const std::string& path);

}  // namespace pipette
