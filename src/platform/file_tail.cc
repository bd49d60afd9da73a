#include "platform/file_tail.h"

#include <fstream>
#include <sstream>

namespace pipette {

std::string ReadFileTail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  const size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace pipette
