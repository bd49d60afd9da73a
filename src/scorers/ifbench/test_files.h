// Test only: how the data's files are read, for the IFBench tests (where the data lies:
// tests/support/test_data.h; the eval runner has the real loader, with the SHA-256 checks).
#pragma once

#include <zlib.h>

#include <fstream>
#include <sstream>
#include <string>

namespace pipette::scorers::ifbench::test_files {

inline bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

inline bool ReadGzip(const std::string& path, std::string* out) {
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) return false;
  out->clear();
  char buf[65536];
  int n = 0;
  while ((n = gzread(in, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  gzclose(in);
  return n == 0;
}

}  // namespace pipette::scorers::ifbench::test_files
