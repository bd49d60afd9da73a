#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "platform/output_path.h"

namespace pipette {

namespace {

// The same path once symbolic links and "." / ".." are resolved (as far as it exists).
bool SamePath(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a), ea);
  const auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b), eb);
  return !ea && !eb && ca == cb;
}

bool SameFile(const struct stat& st, const std::string& other) {
  struct stat other_st{};
  return stat(other.c_str(), &other_st) == 0 && other_st.st_dev == st.st_dev &&
         other_st.st_ino == st.st_ino;
}

}  // namespace

Status CheckOutputPath(const std::string& out, const std::vector<std::string>& inputs,
                       const std::string& store) {
  if (out.empty()) return MakeError("the output path is empty; give a file name with -o");
  const std::filesystem::path parent = std::filesystem::absolute(out).parent_path();
  if (!std::filesystem::is_directory(parent)) {
    return MakeError(out + ": folder " + parent.string() + " does not exist; create it first");
  }
  struct stat st{};
  const bool exists = stat(out.c_str(), &st) == 0;
  if (!store.empty()) {
    if (SamePath(out, store) || (exists && SameFile(st, store))) {
      return MakeError(out + " is the results store this command reads; choose another output "
                             "path");
    }
    for (const char* side : {"-wal", "-shm", "-journal"}) {
      if (SamePath(out, store + side) || (exists && SameFile(st, store + side))) {
        return MakeError(out + " is SQLite's " + side + " file of the results store " + store +
                         " (writing it would corrupt the store); choose another output path");
      }
    }
  }
  if (!exists) return Status::Ok();  // a new file
  if (!S_ISREG(st.st_mode)) {
    return MakeError(out + " exists and is not a regular file; choose another output path");
  }
  for (const std::string& in : inputs) {
    if (SameFile(st, in)) {
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

Status WriteFileAtomically(const std::string& path, const std::string& what,
                           const std::function<Status(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  Status s;
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) return MakeError(path + ": cannot write " + what + "; check the directory");
    s = write(file);
    file.close();
    if (s.ok() && !file) s = MakeError("writing " + what + " failed (disk full?)");
  }
  std::error_code ec;
  if (s.ok()) std::filesystem::rename(tmp, path, ec);
  if (!s.ok() || ec) {
    std::filesystem::remove(tmp, ec);
    return s.ok() ? MakeError(path + ": cannot write " + what + " (" + ec.message() + ")")
                  : s.error().Wrap(path);
  }
  return Status::Ok();
}

}  // namespace pipette
