// The backend-independent parts of the fleet store (common.h) and IssuePreauthKey.
#include "fleet_store/common.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "base/sha256.h"
#include "pipette/gguf.h"
#include "pipette/record.h"

namespace pipette {
namespace fleet_store {
namespace {

bool IsLowerHex(const std::string& s, size_t size) {
  if (s.size() != size) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

int HexValue(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

}  // namespace

std::string RandomHex(int bytes) {
  std::string raw(static_cast<size_t>(bytes), '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), bytes) != 1) {
    // The system's random source failing is not something to carry on from: ids and secrets
    // would be guessable.
    std::abort();
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::string NewPlanId() { return "plan_" + RandomHex(16); }
std::string NewJobId() { return "job_" + RandomHex(16); }

std::optional<PreauthToken> ParsePreauthToken(const std::string& token) {
  static constexpr char kPrefix[] = "preauth_";
  constexpr size_t kPrefixSize = sizeof(kPrefix) - 1;
  if (token.size() != kPrefixSize + 16 + 1 + 64 || token.compare(0, kPrefixSize, kPrefix) != 0 ||
      token[kPrefixSize + 16] != '.') {
    return std::nullopt;
  }
  PreauthToken parsed{token.substr(kPrefixSize, 16), token.substr(kPrefixSize + 17)};
  if (!IsLowerHex(parsed.key_id, 16) || !IsLowerHex(parsed.secret_hex, 64)) return std::nullopt;
  return parsed;
}

std::string PreauthSecretDigest(const std::string& secret_hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < secret_hex.size(); i += 2) {
    bytes += static_cast<char>(HexValue(secret_hex[i]) * 16 + HexValue(secret_hex[i + 1]));
  }
  return Sha256Hex(bytes);
}

bool PreauthSecretMatches(const std::string& secret_hex, const std::string& stored_digest) {
  const std::string digest = PreauthSecretDigest(secret_hex);
  return stored_digest.size() == digest.size() &&
         CRYPTO_memcmp(digest.data(), stored_digest.data(), digest.size()) == 0;
}

std::string FleetShortId(const std::string& result_id, const std::string& before,
                         const std::string& after) {
  const auto shared = [&](const std::string& other) {
    size_t n = 0;
    while (n < result_id.size() && n < other.size() && result_id[n] == other[n]) ++n;
    return n;
  };
  const size_t length = std::max<size_t>(8, std::max(shared(before), shared(after)) + 1);
  return result_id.substr(0, length);
}

bool ProfileMismatch(const nlohmann::json& record, const nlohmann::json& profile) {
  const std::string record_id = record::StringAt(record, "/device/id");
  const std::string profile_id = record::StringAt(profile, "/id");
  return !record_id.empty() && !profile_id.empty() && record_id != profile_id;
}

std::string RecordQuantLabel(const nlohmann::json& record) {
  const nlohmann::json* model = record::Find(record, "/model");
  return model != nullptr ? QuantLabel(*model) : "";
}

bool IsCompactJson(std::string_view text) {
  // Strings are skipped with memchr (most of a record's bytes are in them); between strings, only
  // punctuation, numbers and literals may appear.
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const char c = *p;
    if (c == '"') {
      // The closing quote: the first one after an even number of backslashes.
      const char* q = p + 1;
      for (;;) {
        q = static_cast<const char*>(std::memchr(q, '"', static_cast<size_t>(end - q)));
        if (q == nullptr) return true;  // unterminated: cannot be, in a text that parsed
        size_t backslashes = 0;
        while (q - 1 - backslashes > p && q[-1 - static_cast<ptrdiff_t>(backslashes)] == '\\') {
          ++backslashes;
        }
        if (backslashes % 2 == 0) break;
        ++q;
      }
      p = q + 1;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t' ||
        static_cast<unsigned char>(c) >= 0x80) {  // a byte-order mark
      return false;
    }
    ++p;
  }
  return true;
}

void ClientJsonCache::Fill(FleetClient& client, std::string profile, std::string caps) {
  auto [it, added] = by_client_.try_emplace(client.client_id);
  Parsed& parsed = it->second;
  if (added || parsed.profile_text != profile || parsed.caps_text != caps) {
    nlohmann::json p = nlohmann::json::parse(profile, nullptr, /*allow_exceptions=*/false);
    parsed.profile = p.is_discarded() ? nlohmann::json::object() : std::move(p);
    nlohmann::json c = nlohmann::json::parse(caps, nullptr, /*allow_exceptions=*/false);
    parsed.caps = caps.empty() || c.is_discarded() ? nlohmann::json() : std::move(c);
    parsed.profile_text = std::move(profile);
    parsed.caps_text = std::move(caps);
  }
  client.profile = parsed.profile;
  client.capabilities = parsed.caps;
}

}  // namespace fleet_store

IssuedPreauthKey IssuePreauthKey(std::vector<std::string> labels, int64_t expires_at) {
  IssuedPreauthKey issued;
  issued.key.key_id = fleet_store::RandomHex(8);
  const std::string secret = fleet_store::RandomHex(32);
  issued.key.secret_sha256 = fleet_store::PreauthSecretDigest(secret);
  issued.key.labels = std::move(labels);
  issued.key.expires_at = expires_at;
  issued.token = "preauth_" + issued.key.key_id + "." + secret;
  return issued;
}

FleetStoreFault FleetStoreFaultOf(const Error& error) {
  const std::string& m = error.message;
  const auto has = [&m](const char* phrase) { return m.find(phrase) != std::string::npos; };
  if (has(fleet_store::kDiskFull)) return FleetStoreFault::kFull;
  if (has(fleet_store::kNotAnswering) || has(fleet_store::kLostWhileCommitting) ||
      has(fleet_store::kBusy)) {
    return FleetStoreFault::kUnavailable;
  }
  return FleetStoreFault::kOther;
}

}  // namespace pipette
