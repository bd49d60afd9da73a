// The end of a log file, for records (logs.runtime_stderr_tail).
#pragma once

#include <cstddef>
#include <string>

namespace pipette {

// The last `max_bytes` of a file (a runtime log), "" when unreadable.
std::string ReadFileTail(const std::string& path, size_t max_bytes = 4000);

}  // namespace pipette
