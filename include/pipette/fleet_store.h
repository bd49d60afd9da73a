// The fleet database of `pipette serve` (DESIGN.md 8; the protocol: docs/fleet-protocol.md):
// registered clients, pre-authorization keys, used nonces, submitted result records, plans and
// their jobs. Two backends behind this one interface, with the same schema and behaviour:
// SQLite (a file: the embedded default; every write one BEGIN IMMEDIATE transaction, WAL) and
// PostgreSQL (`postgresql://` URL, libpqxx; the job claim uses SELECT ... FOR UPDATE SKIP LOCKED).
//
// Times are Unix seconds (int64, UTC) given by the caller (`now`), so tests can move the clock.
// Every function returns an Error with one line naming the store and what failed ("fleet store
// <where>: database is not answering: <reason>"); none throws. A FleetStore is NOT thread-safe:
// the server keeps one per worker thread (or a pool); separate instances may share a database.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/status.h"
#include "pipette/store.h"

namespace pipette {

enum class ClientStatus { kPending, kApproved, kRevoked };
const char* ClientStatusName(ClientStatus status);  // "pending", "approved", "revoked"

struct FleetClient {
  std::string client_id;       // "pc_" + 32 hex (docs/fleet-protocol.md)
  std::string public_key_hex;  // 64 hex digits (Ed25519)
  ClientStatus status = ClientStatus::kPending;
  std::string label;                // a name for people ("pixel-8", "ci-x86")
  std::vector<std::string> labels;  // capability labels jobs may require
  nlohmann::json profile = nlohmann::json::object();  // the record's `device` block at
                                                      // registration (device.id, cpu, memory...)
  // The capabilities sent with its last claim (docs/fleet-protocol.md "Worker capabilities");
  // null before the first claim. Used to find the devices a job could run on.
  nlohmann::json capabilities;
  int64_t created_at = 0;
};

struct PreauthKey {
  std::string key_id;         // 16 hex digits; the token is "preauth_<key_id>.<secret hex 64>"
  std::string secret_sha256;  // hex SHA-256 of the secret's 32 bytes; the secret is never stored
  std::vector<std::string> labels;  // given to the client that spends it
  int64_t expires_at = 0;           // 0: never
};

// A new pre-authorization key from the system's random source (`pipette serve keys create`):
// `key` is what the store keeps (AddPreauthKey), `token` ("preauth_<key_id>.<secret hex 64>") is
// shown to the operator once and never stored. One place knows the token's format and digest, so
// the server and both stores agree on them.
struct IssuedPreauthKey {
  PreauthKey key;
  std::string token;
};
IssuedPreauthKey IssuePreauthKey(std::vector<std::string> labels, int64_t expires_at);

enum class RegisterOutcome {
  kRegistered,         // a new client (approved when a key was spent, else pending)
  kAlreadyRegistered,  // this public key was registered before; nothing changed, no key spent
  kBadPreauthKey,      // the key is unknown, expired or spent; nothing stored
};

// A result row plus what the server adds.
struct FleetResultRow {
  ResultRow row;          // as `pipette results list` shows it
  std::string client_id;  // who submitted it
  int64_t received_at = 0;
  // The record's device.id differs from the submitting client's registered profile device.id.
  bool profile_mismatch = false;
};

enum class PutOutcome {
  kStored,    // new
  kSame,      // this result_id was stored before with identical content: nothing changed
  kConflict,  // this result_id was stored before with other content: nothing changed
  kReplayed,  // the request's nonce was used before (PutResultWithNonce): nothing changed
  kClientNotApproved,  // the client is not registered and approved (PutResultWithNonce): nothing
                       // changed, and the nonce is not spent
};

// What a listing computes beyond its rows.
struct ListOptions {
  // Each row's short_id (two index probes a row): false for charts, which show no ids.
  bool short_ids = true;
};

// What Records returns of each record.
enum class RecordParts { kWhole, kSummary };

// One page of ListResults.
struct ResultPage {
  std::vector<FleetResultRow> rows;  // newest first (started_at, result_id descending)
  std::string next;   // opaque cursor of the next page; empty at the end
  int64_t total = 0;  // rows matching the filter, all pages
};

enum class JobState { kQueued, kLeased, kDone, kFailed, kExpired };
const char* JobStateName(JobState state);  // "queued", "leased", "done", "failed", "expired"

struct JobFailure {
  std::string client_id;
  std::string reason;
  int64_t at = 0;
};

struct Job {
  std::string job_id;  // "job_" + 32 hex
  std::string plan_id;
  int index = 0;                                   // 0-based position in the plan
  nlohmann::json spec = nlohmann::json::object();  // the JobSpec (docs/fleet-protocol.md)
  JobState state = JobState::kQueued;
  std::string client_id;  // the lease holder (leased) or who completed it (done)
  int64_t lease_expires_at = 0;
  int attempts = 0;        // claims so far
  std::string result_id;   // done
  std::vector<JobFailure> failures;
  int64_t expires_at = 0;  // 0: never
};

struct PlanStatus {
  std::string plan_id, name;
  int64_t created_at = 0;
  std::vector<Job> jobs;  // by index
};

// Whether `capabilities` (a claim body) satisfy `requirements` (a JobSpec's "requires"); when not,
// `why` (if given) gets one line ("needs label gpu", "needs model 3f2a...").
bool JobMatches(const nlohmann::json& requirements, const nlohmann::json& capabilities,
                std::string* why = nullptr);

class FleetStore {
 public:
  virtual ~FleetStore() = default;

  virtual std::string backend() const = 0;  // "sqlite" or "postgresql"
  virtual std::string where() const = 0;    // the file, or the URL without its password

  // A cheap round trip (SELECT 1): for /health.
  virtual Status Ping() = 0;

  // --- clients -----------------------------------------------------------------------------
  // Registers `client` (its status is set here: approved when `preauth` names a key that is
  // valid at `now`, which is then spent in the same transaction; pending without one).
  // `preauth` is the token text "preauth_<id>.<secret>" or empty.
  virtual Result<RegisterOutcome> Register(FleetClient client, const std::string& preauth,
                                           int64_t now) = 0;
  virtual Result<std::optional<FleetClient>> GetClient(const std::string& client_id) = 0;
  virtual Result<std::vector<FleetClient>> ListClients() = 0;
  // Errors: no such client.
  virtual Status SetClientStatus(const std::string& client_id, ClientStatus status) = 0;
  virtual Status SetCapabilities(const std::string& client_id,
                                 const nlohmann::json& capabilities) = 0;

  virtual Status AddPreauthKey(const PreauthKey& key) = 0;

  // Records that `client_id` used `nonce`; false (and nothing changes) when it was used before.
  // Nonces are kept until `keep_until` and then may be pruned (PruneNonces).
  virtual Result<bool> UseNonce(const std::string& client_id, const std::string& nonce,
                                int64_t keep_until) = 0;
  virtual Status PruneNonces(int64_t now) = 0;

  // --- results -----------------------------------------------------------------------------
  // Stores a record already validated against the record's JSON Schema (the server does that),
  // with the indexed columns of a ResultRow, atomically. Idempotent by result_id (PutOutcome).
  virtual Result<PutOutcome> PutResult(const nlohmann::json& record, const std::string& client_id,
                                       int64_t now) = 0;
  // PutResult and UseNonce(client_id, nonce, keep_until) in one transaction, for a client that
  // is registered and approved as the transaction reads it: kClientNotApproved (nothing stored)
  // when it is not, kReplayed (nothing stored) when the nonce was used before. The server spends
  // a submission's nonce so, after validating it: one commit a submission instead of two, and a
  // client revoked while its record was being checked stores nothing. `text` is the JSON text
  // `record` was parsed from (the submitted body): a store may keep it as the record's text
  // instead of serializing `record` again.
  virtual Result<PutOutcome> PutResultWithNonce(const nlohmann::json& record,
                                                std::string_view text,
                                                const std::string& client_id,
                                                const std::string& nonce, int64_t keep_until,
                                                int64_t now) = 0;
  // Says that a write is on its way (a submission being parsed and validated) until the token is
  // dropped, so the store may hold a commit briefly for the write to share it (SQLite's group
  // commit: at most 2 ms). nullptr where the store has no use for it. Thread-safe.
  virtual std::shared_ptr<void> ExpectWrite() { return nullptr; }
  // Errors: a bad filter (ParseSince / ParseSettingFilter's messages), a cursor not made by this
  // store ("bad cursor; start from the first page").
  Result<ResultPage> ListResults(const ResultFilter& filter, int page_size,
                                 const std::string& cursor) {
    return ListResults(filter, page_size, cursor, ListOptions{});
  }
  virtual Result<ResultPage> ListResults(const ResultFilter& filter, int page_size,
                                         const std::string& cursor, ListOptions options) = 0;
  virtual Result<std::optional<nlohmann::json>> GetResult(const std::string& result_id) = 0;
  // The distinct benchmark ids among the newest `newest` results `filter` selects, in byte order:
  // what a dashboard page probes to learn which benchmarks of a family are there. Reads no more
  // than an index where it can (SQLite: the newest-first index carries benchmark_id).
  virtual Result<std::vector<std::string>> RecentBenchmarkIds(const ResultFilter& filter,
                                                              int newest) = 0;
  // The result_ids that start with `prefix` (as given: ids are lowercase), in byte order, at
  // most `limit`: for reading a result by the short id a listing shows. Empty when none.
  virtual Result<std::vector<std::string>> ResultIdsStartingWith(const std::string& prefix,
                                                                 int limit) = 0;
  // The stored JSON text of each result (compact, as stored: valid JSON, never re-serialized),
  // in the order of `result_ids`; "" for an id not stored. One read for all: a page of records
  // is served without parsing them.
  virtual Result<std::vector<std::string>> RecordTexts(
      const std::vector<std::string>& result_ids) = 0;
  // Full records matching `filter` (limit applies), newest first: for compare/select/report.
  Result<std::vector<nlohmann::json>> Records(const ResultFilter& filter) {
    return Records(filter, RecordParts::kWhole);
  }
  // kSummary: each record's result_id, status, benchmark {id, type}, model {file_name, sha256,
  // quant}, runtime {name, settings}, device {id, label} (from the indexed columns, "" where the
  // record lacks a field) and its metrics, put together by the database: for pages that read
  // metrics and configurations only (a record's other parts are most of its bytes).
  virtual Result<std::vector<nlohmann::json>> Records(const ResultFilter& filter,
                                                      RecordParts parts) = 0;
  virtual Result<int64_t> CountResults() = 0;

  // --- plans and jobs ----------------------------------------------------------------------
  // Creates a plan with one queued job per spec (index = position). Returns the plan_id.
  virtual Result<std::string> CreatePlan(const std::string& name,
                                         const std::vector<nlohmann::json>& specs,
                                         int64_t expires_at, int64_t now) = 0;
  // In one transaction: returns jobs whose lease expired before `now` to the queue, marks queued
  // jobs past their expiry expired, then leases to `client_id` the oldest queued job whose
  // requires JobMatches `capabilities` and that this client has not failed, until
  // now + lease_s. nullopt: no job for this client.
  virtual Result<std::optional<Job>> Claim(const std::string& client_id,
                                           const nlohmann::json& capabilities, int64_t now,
                                           int lease_s) = 0;
  // Extends the lease; false when the job is not leased to this client any more.
  virtual Result<bool> Heartbeat(const std::string& job_id, const std::string& client_id,
                                 int64_t now, int lease_s) = 0;
  // Stores the record (as PutResult) and marks the job done, in one transaction, if the job is
  // leased to `client_id` (or already done with this result_id: idempotent). When the lease was
  // lost the record is still stored and `lease_held` is false.
  struct CompleteOutcome {
    PutOutcome put = PutOutcome::kStored;
    bool lease_held = true;
  };
  virtual Result<CompleteOutcome> Complete(const std::string& job_id, const std::string& client_id,
                                           const nlohmann::json& record, int64_t now) = 0;
  // Records the failure; a retriable one returns the job to the queue unless every registered
  // approved client whose capabilities match it has now failed it, then the job is failed (as
  // is a non-retriable one). Returns the job's new state; false lease_held when not leased to
  // this client (nothing changes).
  virtual Result<std::pair<JobState, bool>> Fail(const std::string& job_id,
                                                 const std::string& client_id,
                                                 const std::string& reason, bool retriable,
                                                 int64_t now) = 0;
  // Returns expired leases to the queue (also done by Claim); the number returned.
  virtual Result<int> RequeueExpired(int64_t now) = 0;
  virtual Result<std::optional<PlanStatus>> GetPlan(const std::string& plan_id) = 0;
  virtual Result<std::vector<PlanStatus>> ListPlans() = 0;  // jobs left empty
};

// A result read by its id, or by a short id: 8 to 35 characters (lowercase hex digits and '-')
// that start the ids of results, as listings show them. `record` is empty when nothing matches;
// `ambiguous` is true (and `record` empty) when several results start so. Errors: the store's.
struct FoundResult {
  std::optional<nlohmann::json> record;
  bool ambiguous = false;
};
Result<FoundResult> FindResult(FleetStore& store, const std::string& id);

struct FleetStoreOptions {
  // A quota: the SQLite file may not grow beyond about this many bytes (SQLite's max_page_count);
  // writes beyond it fail exactly as on a full disk (FleetStoreFault::kFull). 0: no quota.
  // PostgreSQL has no such setting (quotas are the database server's): ignored there.
  int64_t max_size_bytes = 0;
};

// Opens (creating the schema when missing) the store named by `db`: a "postgresql://" or
// "postgres://" URL, or an SQLite file path (parent folders are created). Errors name the
// database: unreachable server, authentication refused, not an SQLite file, read-only, a schema
// newer than this build.
Result<std::unique_ptr<FleetStore>> OpenFleetStore(const std::string& db,
                                                   const FleetStoreOptions& options = {});

// What kind of failure a FleetStore's Error is, so a server can answer each kind with its own
// status without reading the text itself.
enum class FleetStoreFault {
  kOther,        // anything else: a bug, corruption, a refused connection (bad URL, password)
  kUnavailable,  // the database server cannot be reached or broke off ("database is not
                 // answering", a connection lost mid-commit) or is busy: retry later
  kFull,         // the disk under the database (or the quota) is full: nothing was written
};
FleetStoreFault FleetStoreFaultOf(const Error& error);

// A consistent copy of the SQLite fleet database `db` at `out_path` (SQLite's online backup):
// the server may go on writing meanwhile, and the copy holds every commit acknowledged before the
// backup began. Written under a temporary name and renamed when whole; it never replaces a file.
// Errors, one line: a PostgreSQL URL (pg_dump is its tool: the message says how), no such
// database, out_path exists; the copy itself failing (a full disk: nothing is left behind) has
// stage "backup".
Status BackupFleetDb(const std::string& db, const std::string& out_path);

// The default SQLite fleet database: $XDG_DATA_HOME (or ~/.local/share)/pipette/fleet.db.
std::string DefaultFleetDbPath();

}  // namespace pipette
