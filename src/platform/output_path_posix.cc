#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "platform/output_path.h"

namespace pipette {

Status CheckOutputPath(const std::string& out, const std::vector<std::string>& inputs) {
  if (out.empty()) return MakeError("the output path is empty; give a file name with -o");
  const std::filesystem::path parent = std::filesystem::absolute(out).parent_path();
  if (!std::filesystem::is_directory(parent)) {
    return MakeError(out + ": folder " + parent.string() + " does not exist; create it first");
  }
  struct stat st{};
  if (stat(out.c_str(), &st) != 0) return Status::Ok();  // a new file
  if (!S_ISREG(st.st_mode)) {
    return MakeError(out + " exists and is not a regular file; choose another output path");
  }
  for (const std::string& in : inputs) {
    struct stat in_st{};
    if (stat(in.c_str(), &in_st) == 0 && in_st.st_dev == st.st_dev && in_st.st_ino == st.st_ino) {
      return MakeError(out + " is also an input of this command; choose another output path");
    }
  }
  char magic[16] = {};
  std::ifstream f(out, std::ios::binary);
  f.read(magic, sizeof magic);
  if (f.gcount() == 16 && std::memcmp(magic, "SQLite format 3", 16) == 0) {
    return MakeError(out + " is an SQLite database (a results store?); choose another output path");
  }
  return Status::Ok();
}

}  // namespace pipette
