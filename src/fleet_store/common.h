// What both fleet store backends (SQLite here, PostgreSQL in pg/) share apart from SQL: names of
// states, the pre-authorization token's format and digest, random ids, the short id and the
// profile-mismatch rule. Pure functions, thread-safe; and ClientJsonCache, a store's own.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pipette/fleet_store.h"

namespace pipette::fleet_store {

std::optional<JobState> ParseJobState(const std::string& name);
std::optional<ClientStatus> ParseClientStatus(const std::string& name);

// `bytes` random bytes from the system's source, as lowercase hex.
std::string RandomHex(int bytes);
std::string NewPlanId();  // "plan_" + 32 hex
std::string NewJobId();   // "job_" + 32 hex

// The parts of a token "preauth_<key_id 16 hex>.<secret 64 hex>"; nullopt when malformed.
struct PreauthToken {
  std::string key_id, secret_hex;
};
std::optional<PreauthToken> ParsePreauthToken(const std::string& token);
// PreauthKey::secret_sha256 of a secret: SHA-256 of the secret's 32 bytes (the hex decoded), in
// lowercase hex. REQUIRES: 64 hex digits.
std::string PreauthSecretDigest(const std::string& secret_hex);
// Whether `secret_hex` hashes to `stored_digest`, compared in constant time.
bool PreauthSecretMatches(const std::string& secret_hex, const std::string& stored_digest);

// ResultRow::short_id in the fleet, as the local store makes it: the shortest prefix of
// `result_id` (at least 8 characters) that neither of its neighbours in id order (`before`,
// `after`; "" at either end) shares, so it reads that result alone (FleetStore::
// ResultIdsStartingWith) while no result is added between them.
std::string FleetShortId(const std::string& result_id, const std::string& before,
                         const std::string& after);

// The record's device.id differs from the registered profile's "id" (both present, non-empty).
bool ProfileMismatch(const nlohmann::json& record, const nlohmann::json& profile);

// ResultRow::quant_label of a record (QuantLabel over its model block), computed once at PutResult
// so listing never parses records.
std::string RecordQuantLabel(const nlohmann::json& record);

// Whether a JSON text (one that parsed) is compact: no whitespace (nor a byte-order mark) outside
// its strings, as FleetStore::RecordTexts promises of what it stores.
bool IsCompactJson(std::string_view text);

// The phrases FleetStoreFaultOf looks for: each backend words these faults with them (the SQLite
// ones come from store/sqlite.cc's SqliteError), so the server's answer does not depend on the
// backend.
inline constexpr const char* kNotAnswering = ": database is not answering";
inline constexpr const char* kLostWhileCommitting = ": the connection was lost while committing";
inline constexpr const char* kBusy = ": database is busy";
inline constexpr const char* kDiskFull = ": disk full";

// Each client's profile and capabilities as last read, by their text: every signed request reads
// its client, and parsing the same JSON again was 3% of a submission's CPU. One per store; not
// thread-safe.
class ClientJsonCache {
 public:
  // Sets `client`'s profile ({} when `profile` is not JSON) and capabilities (null when `caps`
  // is empty or not JSON) from their stored text.
  void Fill(FleetClient& client, std::string profile, std::string caps);

 private:
  struct Parsed {
    std::string profile_text, caps_text;
    nlohmann::json profile, caps;
  };
  std::unordered_map<std::string, Parsed> by_client_;
};

}  // namespace pipette::fleet_store
