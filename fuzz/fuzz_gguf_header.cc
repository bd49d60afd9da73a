// A GGUF file's header, as `--model` reads a file on this machine (ReadGgufInfo) and a device's
// from a copy of its first bytes (ReadGgufInfoFromPrefix, the whole size claimed from the
// input's last 8 bytes): counts, lengths, types and offsets from the file never overrun, loop or
// allocate beyond the file.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "pipette/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("fuzz.gguf", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  (void)pipette::ReadGgufInfo(path);
  uint64_t claimed = size;
  if (size >= 8) {
    std::memcpy(&claimed, data + size - 8, 8);
    claimed = size + claimed % (uint64_t{1} << 40);
  }
  bool prefix_short = false;
  (void)pipette::ReadGgufInfoFromPrefix(path, "device:/fuzz.gguf", claimed, &prefix_short);
  return 0;
}
