#include "evals/file_read.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace pipette {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return MakeError(path + ": cannot read: " + std::strerror(errno));
  return bytes.str();
}

Result<std::string> ReadGzipFile(const std::string& path) {
  errno = 0;
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return MakeError(path + ": cannot open: " + std::strerror(errno != 0 ? errno : ENOMEM));
  }
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  int code = Z_OK;
  const std::string message = gzerror(file, &code);
  gzclose_r(file);
  if (n < 0 || code != Z_OK) {
    return MakeError(path + ": cannot decompress: " + message + " (truncated or not gzip?)");
  }
  return text;
}

}  // namespace pipette
