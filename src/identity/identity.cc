#include "pipette/identity.h"

#include <sodium.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "base/json_depth.h"
#include "base/sha256.h"

namespace pipette {
namespace {

void InitSodium() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (sodium_init() < 0) std::abort();  // no entropy source: nothing safe can be done
  });
}

std::string ToHex(const unsigned char* bytes, size_t n) {
  std::string hex(n * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), bytes, n);
  hex.resize(n * 2);
  return hex;
}

bool FromHex(const std::string& hex, std::vector<unsigned char>& out, size_t n) {
  if (hex.size() != n * 2) return false;
  for (char c : hex) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  out.assign(n, 0);
  size_t len = 0;
  return sodium_hex2bin(out.data(), n, hex.data(), hex.size(), nullptr, &len, nullptr) == 0 &&
         len == n;
}

std::string HomeBased(const char* xdg_var, const char* fallback) {
  const char* xdg = std::getenv(xdg_var);
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg);
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : ".") + "/" + fallback;
}

Result<Identity> ParseIdentity(const std::string& path, const std::string& text) {
  nlohmann::json j = ParseBoundedJson(text);
  if (!j.is_object() || !j.contains("public_key") || !j.contains("secret_key") ||
      !j["public_key"].is_string() || !j["secret_key"].is_string()) {
    return MakeError(path + ": not a pipette identity (expected {\"public_key\", \"secret_key\"}); "
                            "move it away to create a new one");
  }
  Identity id{j["public_key"], j["secret_key"], {}};
  std::vector<unsigned char> pk, sk;
  if (!FromHex(id.public_key_hex, pk, crypto_sign_PUBLICKEYBYTES) ||
      !FromHex(id.secret_key_hex, sk, crypto_sign_SECRETKEYBYTES) ||
      sodium_memcmp(sk.data() + crypto_sign_SEEDBYTES, pk.data(), pk.size()) != 0) {
    return MakeError(path + ": the identity's keys are malformed or do not belong together; "
                            "move it away to create a new one");
  }
  id.client_id = *ClientIdOf(id.public_key_hex);
  return id;
}

}  // namespace

Identity GenerateIdentity() {
  InitSodium();
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_keypair(pk, sk);
  Identity id{ToHex(pk, sizeof pk), ToHex(sk, sizeof sk), {}};
  sodium_memzero(sk, sizeof sk);
  id.client_id = *ClientIdOf(id.public_key_hex);
  return id;
}

Result<std::string> ClientIdOf(const std::string& public_key_hex) {
  InitSodium();
  std::vector<unsigned char> pk;
  if (!FromHex(public_key_hex, pk, crypto_sign_PUBLICKEYBYTES)) {
    return MakeError("public key must be 64 hex digits (an Ed25519 key)");
  }
  std::string bytes(pk.begin(), pk.end());
  return "pc_" + Sha256Hex(bytes).substr(0, 32);
}

std::string DefaultIdentityPath() {
  const char* env = std::getenv("PIPETTE_IDENTITY");
  if (env != nullptr && *env != '\0') return env;
  return HomeBased("XDG_CONFIG_HOME", ".config") + "/pipette/identity.json";
}

Result<Identity> LoadIdentity(const std::string& path) {
  std::ifstream in(path);
  if (!in) return MakeError("no identity at " + path + "; run `pipette register` first");
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    return MakeError(path + ": the identity's secret key is readable by others; chmod 600 " + path);
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseIdentity(path, text.str());
}

Result<Identity> LoadOrCreateIdentity(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return LoadIdentity(path);
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) return MakeError(parent.string() + ": cannot create the folder: " + ec.message());
  }
  const Identity id = GenerateIdentity();
  const std::string text = nlohmann::json{{"public_key", id.public_key_hex},
                                          {"secret_key", id.secret_key_hex}}
                               .dump() +
                           "\n";
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return MakeError(path + ": cannot write the identity (is the folder writable?)");
    ::chmod(tmp.c_str(), 0600);
    out << text;
    out.flush();
    if (!out) return MakeError(path + ": writing the identity failed (disk full?)");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return MakeError(path + ": cannot write the identity: " + ec.message());
  return id;
}

std::string SigningString(std::string_view method, std::string_view path_and_query,
                          int64_t timestamp, std::string_view client_id, std::string_view nonce,
                          std::string_view body) {
  std::string s = "pipette-request/1\n";
  s.append(method).append("\n").append(path_and_query).append("\n");
  s.append(std::to_string(timestamp)).append("\n").append(client_id).append("\n");
  s.append(nonce).append("\n").append(Sha256Hex(body));
  return s;
}

std::string SignMessage(const Identity& identity, std::string_view message) {
  InitSodium();
  std::vector<unsigned char> sk;
  FromHex(identity.secret_key_hex, sk, crypto_sign_SECRETKEYBYTES);
  unsigned char sig[crypto_sign_BYTES];
  crypto_sign_detached(sig, nullptr, reinterpret_cast<const unsigned char*>(message.data()),
                       message.size(), sk.data());
  sodium_memzero(sk.data(), sk.size());
  return ToHex(sig, sizeof sig);
}

bool VerifyMessage(const std::string& public_key_hex, std::string_view message,
                   const std::string& signature_hex) {
  InitSodium();
  std::vector<unsigned char> pk, sig;
  if (!FromHex(public_key_hex, pk, crypto_sign_PUBLICKEYBYTES) ||
      !FromHex(signature_hex, sig, crypto_sign_BYTES)) {
    return false;
  }
  return crypto_sign_verify_detached(sig.data(),
                                     reinterpret_cast<const unsigned char*>(message.data()),
                                     message.size(), pk.data()) == 0;
}

std::string NewNonce() {
  InitSodium();
  unsigned char bytes[16];
  randombytes_buf(bytes, sizeof bytes);
  return ToHex(bytes, sizeof bytes);
}

SignedHeaders SignRequest(const Identity& identity, std::string_view method,
                          std::string_view path_and_query, std::string_view body,
                          int64_t timestamp) {
  SignedHeaders h{identity.client_id, std::to_string(timestamp), NewNonce(), {}};
  h.signature = SignMessage(
      identity, SigningString(method, path_and_query, timestamp, h.client_id, h.nonce, body));
  return h;
}

}  // namespace pipette
