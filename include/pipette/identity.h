// Device identity and request signing for the fleet (DESIGN.md 8; docs/fleet-protocol.md).
//
// A client is an Ed25519 key pair (libsodium). Every request it sends to `pipette serve` is signed
// over method, path and query, timestamp, client id, nonce and the SHA-256 of the body, so neither
// the body nor the target can be changed in flight and a request cannot be replayed (the server
// remembers nonces). Thread-safe: all functions are pure or read their arguments only (libsodium is
// initialised once, on first use).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pipette/status.h"

namespace pipette {

struct Identity {
  std::string public_key_hex;  // 64 lowercase hex digits (32 bytes)
  std::string secret_key_hex;  // 128 lowercase hex digits (libsodium's 64-byte secret key)
  std::string client_id;       // ClientIdOf(public_key_hex)
};

// A fresh key pair from the system's random source.
Identity GenerateIdentity();

// "pc_" + the first 32 hex digits of SHA-256(public key bytes). Errors: not 64 hex digits.
Result<std::string> ClientIdOf(const std::string& public_key_hex);

// $PIPETTE_IDENTITY, else $XDG_CONFIG_HOME (or ~/.config)/pipette/identity.json.
std::string DefaultIdentityPath();

// Reads the identity at `path`, creating it (mode 0600, parent folders 0700) when the file does
// not exist. Errors, naming the path: unreadable, not the JSON written here, a secret key that
// does not match its public key, a file readable by others (fix with chmod 600).
Result<Identity> LoadOrCreateIdentity(const std::string& path);
// Reads it; an Error when missing ("no identity at <path>; run pipette register first").
Result<Identity> LoadIdentity(const std::string& path);

// The signed text of docs/fleet-protocol.md:
// "pipette-request/1\n<METHOD>\n<path_and_query>\n<timestamp>\n<client_id>\n<nonce>\n<sha256(body)>".
std::string SigningString(std::string_view method, std::string_view path_and_query,
                          int64_t timestamp, std::string_view client_id, std::string_view nonce,
                          std::string_view body);

// 128 hex digits: the detached signature of `message`. REQUIRES: a valid identity.
std::string SignMessage(const Identity& identity, std::string_view message);

// Whether `signature_hex` is a valid signature of `message` by `public_key_hex` (strict: refuses
// malformed hex, wrong lengths, small-order keys).
bool VerifyMessage(const std::string& public_key_hex, std::string_view message,
                   const std::string& signature_hex);

// 32 lowercase hex digits from the system's random source.
std::string NewNonce();

// The four X-Pipette-* header values of one signed request.
struct SignedHeaders {
  std::string client_id, timestamp, nonce, signature;
};
SignedHeaders SignRequest(const Identity& identity, std::string_view method,
                          std::string_view path_and_query, std::string_view body,
                          int64_t timestamp);

}  // namespace pipette
