// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface. Digests are returned as 64 lowercase
// hexadecimal characters, the form `sha256sum` prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "pipette/status.h"

namespace pipette {

// Incremental hasher. Not thread-safe; one instance per stream.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(const void* data, size_t size);
  // Finishes the digest; the hasher must not be used afterwards.
  std::string HexDigest();

 private:
  void* ctx_;  // EVP_MD_CTX*
};

std::string Sha256Hex(std::string_view bytes);

// Digest of a token id sequence: each id as a 4-byte little-endian signed integer, in order.
// This is `input.prompt_sha256` of the result record (DESIGN.md 4.2 step 3).
std::string Sha256OfTokens(std::span<const int32_t> tokens);

// Streams a file through SHA-256. Errors: the file cannot be opened or read (message names it).
Result<std::string> Sha256OfFile(const std::string& path);

}  // namespace pipette
