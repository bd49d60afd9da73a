// The client side of the fleet protocol (DESIGN.md 8; docs/fleet-protocol.md): a signed HTTP
// client for `pipette serve`, and the outbox that delivers result records at least once.
//
// FleetHttpClient signs every request with the device's Identity (pipette/identity.h) over the
// exact path and query it sends and the exact body bytes. Each call returns a FleetResult: the
// server's answer when it accepted the request (a success code), else a FleetError whose kind says
// whether trying again later can help. Nothing here throws.
//
// Outbox keeps records on disk until the server acknowledged them: `pipette submit`,
// `run|suite run --submit` and `pipette worker` put each record there first, then Flush.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pipette/identity.h"
#include "pipette/status.h"
#include "pipette/store.h"

namespace pipette {

// Why a call did not succeed.
enum class FleetFailure {
  kUnreachable,  // no answer: connection refused, DNS, timeout, connection dropped mid-reply
  kRetriable,    // the server answered but may accept later: a server error, a request timeout,
                 // a rate limit (see retry_after_s)
  kRejected,     // the server refused this request as it is; sending it again will not help
};

struct FleetError {
  FleetFailure kind = FleetFailure::kUnreachable;
  int status = 0;  // the HTTP status code the server sent; 0 when it did not answer
  // One line, e.g. "cannot reach http://127.0.0.1:8080 (connection refused); is pipette serve
  // running there?" or "server refused (401): nonce already used" (the server's error line).
  std::string message;
  int retry_after_s = 0;  // the server's Retry-After, 0 when absent

  bool retriable() const { return kind != FleetFailure::kRejected; }
  Error ToError() const { return MakeError(message); }
};

// A successful answer (any 2xx status).
struct FleetReply {
  int status = 0;       // the HTTP status code the server sent (201 created, 200 already there,
                        // 204 nothing: e.g. no job for this worker)
  nlohmann::json body;  // the parsed JSON body; null when the body was empty
};

// FleetReply or FleetError. REQUIRES: check ok() before value(), !ok() before error().
class FleetResult {
 public:
  FleetResult(FleetReply reply) : reply_(std::move(reply)) {}  // NOLINT: implicit by design
  FleetResult(FleetError error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return reply_.has_value(); }
  explicit operator bool() const { return ok(); }
  const FleetReply& value() const { return *reply_; }
  const FleetReply* operator->() const { return &*reply_; }
  const FleetError& error() const { return error_; }

 private:
  std::optional<FleetReply> reply_;
  FleetError error_;
};

struct FleetClientOptions {
  int connect_timeout_ms = 5000;
  int read_timeout_ms = 60000;  // a claim or a large record may take a while
  int write_timeout_ms = 60000;
  // For https:// servers: a PEM file of the CA certificates to trust (a private CA, a self-signed
  // server certificate); empty: the system's (/etc/ssl/certs). The server's certificate is always
  // verified, its name included; there is no way to turn that off.
  std::string ca_file;
};

// Thread-safe: every call opens its own connection (a worker heartbeats from another thread while
// it submits). Copyable.
class FleetHttpClient {
 public:
  // `server_url`: "http://HOST:PORT" or "https://HOST:PORT" (a trailing "/" is ignored; the port
  // defaults to 80 and 443). An invalid URL is reported by every call (and by Check()) as a
  // kRejected error naming it.
  FleetHttpClient(std::string server_url, Identity identity, FleetClientOptions options = {});

  // The URL as given, without a trailing "/"; "host:port" (the outbox folder's name).
  const std::string& server_url() const { return url_; }
  std::string host_port() const;
  const Identity& identity() const { return identity_; }
  // An Error when the URL is not "http[s]://HOST[:PORT]" ("'<url>' is not a server URL; give
  // http://HOST:PORT, e.g. http://127.0.0.1:8080"), or the CA file cannot be read.
  Status Check() const;
  // Whether requests go over the network unencrypted: an http:// URL whose host is not this
  // machine (localhost, 127.0.0.0/8, ::1). Signatures still stop forgery and replay, but records
  // and job specs can be read, and the dashboard's answers altered, on the way.
  bool SendsInTheClear() const;

  // GET /health (unsigned).
  FleetResult Health() const;
  // POST /api/register. `profile`: the record's device block (pipette device --json). `preauth`:
  // "preauth_<id>.<secret>" or empty (then the client is pending until an operator approves).
  // body: {"client_id","status":"approved"|"pending"}.
  FleetResult Register(const std::string& label, const std::vector<std::string>& labels,
                       const nlohmann::json& profile, const std::string& preauth) const;
  // GET /api/me.
  FleetResult Me() const;
  // POST /api/results: 201 {"result_id","stored":true}; 200 {"stored":false} already there.
  FleetResult SubmitResult(const nlohmann::json& record) const;
  // Reading results is public: these three are sent unsigned (any Identity, even an empty one).
  // GET /api/results?<filter as query parameters>&limit=<page_size>&cursor=<cursor>
  // (page_size 0: the server's default). body: {"results":[row..],"next":CURSOR?,"total":N};
  // rows as ResultRowFromJson reads them.
  FleetResult ListResults(const ResultFilter& filter, int page_size = 0,
                          const std::string& cursor = "") const;
  // GET /api/records?<filter>&limit=<page_size>&cursor=<cursor>: the same listing as full
  // records (page_size at most 200; 0: the server's default, 50).
  // body: {"records":[record..],"next":CURSOR?,"total":N}.
  FleetResult ListRecords(const ResultFilter& filter, int page_size = 0,
                          const std::string& cursor = "") const;
  // GET /api/results/<id>: the record. `result_id` may be a unique prefix of at least 8
  // characters (the short id of a listing); a prefix of several results is kRejected, 400.
  FleetResult GetResult(const std::string& result_id) const;
  // POST /api/plans: {"name","jobs":[JobSpec..],"expires_at"?} (expires_at 0: not sent).
  FleetResult CreatePlan(const std::string& name, const std::vector<nlohmann::json>& jobs,
                         int64_t expires_at = 0) const;
  // GET /api/plans/<id>.
  FleetResult GetPlan(const std::string& plan_id) const;
  // POST /api/jobs/claim with the worker capabilities. 200 {"job","lease_expires_at"}; 204 (body
  // null) when there is no job for this worker.
  FleetResult Claim(const nlohmann::json& capabilities) const;
  // PUT /api/jobs/<id>/heartbeat: {"lease_expires_at"}. A lost lease is kRejected, status 409.
  FleetResult Heartbeat(const std::string& job_id) const;
  // POST /api/jobs/<id>/result: as SubmitResult, and the job is done. A lost lease is kRejected,
  // status 409 (the record was still stored when valid).
  FleetResult CompleteJob(const std::string& job_id, const nlohmann::json& record) const;
  // POST /api/jobs/<id>/fail: {"state":"queued"|"failed"}.
  FleetResult FailJob(const std::string& job_id, const std::string& reason, bool retriable) const;

  // Any signed request (for paths not wrapped above). `path_and_query` starts with "/" and is
  // sent byte for byte as signed; `body` is empty or JSON.
  FleetResult Send(const std::string& method, const std::string& path_and_query,
                   const std::string& body, bool sign = true) const;

 private:
  std::string url_, host_;
  int port_ = 0;
  bool url_ok_ = false;
  Identity identity_;
  FleetClientOptions options_;
};

// "?benchmark=..&model=..": the filter as the query parameters of GET /api/results (lists
// repeated; values percent-encoded); "" for an empty filter. `limit` is ResultFilter::limit.
std::string ResultFilterQuery(const ResultFilter& filter);

// One row of GET /api/results (the JSON `pipette results list --json` prints) as a ResultRow.
// Missing fields read as empty. Errors: not an object.
Result<ResultRow> ResultRowFromJson(const nlohmann::json& row);
// The JSON of one row (what the server sends and `results list --json` prints).
nlohmann::json ResultRowToJson(const ResultRow& row);

// --- the outbox --------------------------------------------------------------------------------

// $PIPETTE_OUTBOX (or $XDG_DATA_HOME, else ~/.local/share, + /pipette/outbox) + "/<host_port>"
// of `server_url` ("127.0.0.1_8080": ':' is written '_').
std::string DefaultOutboxDir(const std::string& server_url);

struct FlushReport {
  int sent = 0;      // acknowledged as newly stored (201)
  int already = 0;   // acknowledged as stored before (200, idempotent)
  int rejected = 0;  // refused for good: moved to rejected/ (rejections says why)
  int pending = 0;   // still in the outbox (not due yet, or the server did not take it)
  std::vector<std::string> acknowledged;  // result_ids sent or already there, in send order
  std::vector<std::string> rejections;    // "<result_id>: <the server's line>"
  // The first failure that left records pending ("cannot reach ...", "server refused (503):
  // ..."); empty when none.
  std::string retry_reason;
  // Job results whose job endpoint refused them (a lost lease): the record was then submitted as
  // a plain result. One line each: "<result_id> (job <job_id>): <the server's line>".
  std::vector<std::string> job_notes;
};

// A folder of records waiting for the server: <result_id>.json each, holding
// {"record":..,"job_id":"..","attempts":N,"next_try_at":T,"last_error":".."}, written atomically
// (temporary file, fsync, rename, fsync of the folder), so a crash leaves the old file or the new
// one, never a partial one. Refused records move to rejected/<result_id>.json with "reason".
// Several processes may share a folder: a record may then be sent twice, which the server's
// idempotence by result_id absorbs. Not thread-safe: one Outbox per thread.
class Outbox {
 public:
  // Creates the folder (0700) when missing. Errors name the folder.
  static Result<Outbox> Open(const std::string& dir);

  const std::string& dir() const { return dir_; }

  // Writes the record (its result_id names the file; replaces a waiting copy and makes it due
  // now). `job_id` non-empty: deliver it as that job's result (CompleteJob). Errors: no
  // result_id, the disk (naming the file).
  Status Add(const nlohmann::json& record, const std::string& job_id = "");

  // Sends the records due at `now` (Unix seconds; all of them when `ignore_backoff`), oldest
  // first: job results through CompleteJob (falling back to SubmitResult when the job endpoint
  // refuses it), the others through SubmitResult. Removes each one acknowledged; moves each one
  // rejected; backs off the rest (next try 1 s after the first failure, doubling to 60 s). Stops
  // at the first unreachable answer, and at the first refusal of the client itself (401, 403:
  // unknown, pending, revoked, clock off), which would refuse every record alike: the rest stay
  // pending, counted. Errors: the disk only.
  Result<FlushReport> Flush(const FleetHttpClient& client, int64_t now,
                            bool ignore_backoff = false);

  // Records waiting (not rejected). Errors: the folder is unreadable.
  Result<int> Pending() const;
  // The result_ids waiting, oldest first.
  Result<std::vector<std::string>> PendingIds() const;

 private:
  explicit Outbox(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace pipette
