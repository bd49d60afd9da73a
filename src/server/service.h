// The fleet server's use cases (docs/fleet-protocol.md), apart from HTTP: authenticate a signed
// request, register, submit, plans, claim, heartbeat, result, fail, read results. Each returns a
// Reply whose Outcome the HTTP layer (http.cc) maps to a status code. Thread-safe: the only
// shared state is the rate limiter and the known keys; the FleetStore passed in belongs to the
// calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pipette/fleet_store.h"
#include "pipette/server.h"
#include "server/known_keys.h"
#include "server/rate_limiter.h"

namespace pipette::server {

enum class Outcome {
  kOk,               // body
  kCreated,          // body: something new was stored
  kNoContent,        // nothing to give (no job for this worker)
  kInvalid,          // error: a bad request (field, filter, JSON)
  kUnauthenticated,  // error: missing or bad signature, clock, nonce, unknown client, key
  kForbidden,        // error: the client is pending or revoked
  kNotFound,         // error
  kConflict,         // error: other content under this id, or a lost lease
  kRateLimited,      // error, retry_after_s
  kUnavailable,      // error: the database does not answer (down, restarting, busy); retriable;
                     // body["detail"] is for the log only
  kStorageFull,      // error: the disk under the database (or its quota) is full; nothing was
                     // stored; retriable once space is freed; body["detail"] for the log only
  kInternal,         // error holds the detail for the log only; the client is told nothing
};

struct Reply {
  Outcome outcome = Outcome::kOk;
  nlohmann::json body;  // success body (null for kNoContent)
  // A success body already serialized as JSON, sent instead of `body` when not empty (a page of
  // stored records, spliced without parsing them).
  std::string body_text;
  std::string error;    // one line
  int retry_after_s = 0;
  std::string client_id;  // the authenticated client, for the request log ("" when none)
};

// What authentication reads from a request.
struct SignedRequest {
  std::string method;
  std::string target;  // path and query, byte for byte as sent
  std::string body;
  // The X-Pipette-* headers; "" when missing.
  std::string client_id, timestamp, nonce, signature;
};

using Query = std::multimap<std::string, std::string>;

// The lines a client hears for the store faults (docs/fleet-protocol.md, "Refusals").
inline constexpr const char* kDatabaseNotAnswering = "the database is not answering; retry later";
inline constexpr const char* kDiskFull = "the server's disk is full; nothing was stored; retry later";

// The reply to a store failure, by its FleetStoreFault: kUnavailable (503), kStorageFull (507),
// else kInternal with the detail for the log (the client hears "internal error"). Never puts the
// store's message in what the client hears.
Reply StoreFailure(const Error& error);

class FleetService {
 public:
  // `clock`: Unix seconds now (time(nullptr) when empty).
  explicit FleetService(const ServerOptions& options, std::function<int64_t()> clock = {});

  Reply Health(FleetStore& store);
  Reply Register(FleetStore& store, const SignedRequest& req);
  Reply Me(FleetStore& store, const SignedRequest& req);
  Reply SubmitResult(FleetStore& store, const SignedRequest& req);
  Reply ListResults(FleetStore& store, const Query& query);
  // GET /api/records: full records, the filters and paging of ListResults (limit at most 200).
  Reply ListRecords(FleetStore& store, const Query& query);
  // `id`: a result_id, or a unique prefix of one (at least 8 characters: a listing's short id).
  Reply GetResult(FleetStore& store, const std::string& id);
  Reply CreatePlan(FleetStore& store, const SignedRequest& req);
  Reply GetPlan(FleetStore& store, const SignedRequest& req, const std::string& plan_id);
  Reply Claim(FleetStore& store, const SignedRequest& req);
  Reply Heartbeat(FleetStore& store, const SignedRequest& req, const std::string& job_id);
  Reply CompleteJob(FleetStore& store, const SignedRequest& req, const std::string& job_id);
  Reply FailJob(FleetStore& store, const SignedRequest& req, const std::string& job_id);

  // The per-address limit of requests that no registered client signs (register, the dashboard,
  // reading results): the refusal when `address` has spent its bucket.
  std::optional<Reply> LimitAddress(const std::string& address);
  // Signed requests whose authentication failed (unknown client, bad signature, clock, nonce)
  // count against their address's bucket too (CountFailedAuthentication), and are refused
  // before any work once it is empty (AddressExhausted): no registered client vouches for them.
  std::optional<Reply> AddressExhausted(const std::string& address);
  void CountFailedAuthentication(const std::string& address);

  // Deletes nonces whose window has passed.
  Status PruneNonces(FleetStore& store);

  int64_t Now() const;

 private:
  // The approved client that signed `req`, or the refusal. Spends the request's nonce.
  std::optional<Reply> Authenticate(FleetStore& store, const SignedRequest& req,
                                    FleetClient* client);
  // Authenticate without spending the nonce: the caller spends it with its write
  // (FleetStore::PutResultWithNonce). Identify, then the rate limit.
  std::optional<Reply> AuthenticateKeepingNonce(FleetStore& store, const SignedRequest& req,
                                                FleetClient* client);
  // The registered, approved client that signed `req` (read from the store), or the refusal.
  std::optional<Reply> Identify(FleetStore& store, const SignedRequest& req, FleetClient* client);
  std::optional<Reply> RateLimit(const std::string& client_id);
  // Parses, validates and stores a submission of `client_id` (signature checked), spending its
  // nonce: the reply to it.
  Reply StoreSubmission(FleetStore& store, const SignedRequest& req,
                        const std::string& client_id);
  // Until when the store keeps the nonce of `req` (a signature already checked): past it the
  // timestamp falls outside the window, so a replay is refused by the clock instead.
  int64_t NonceKeptUntil(const SignedRequest& req) const;
  // The checks every signed request gets once the public key is known: signature, clock window.
  std::optional<Reply> CheckSignature(const SignedRequest& req, const std::string& public_key_hex);
  std::optional<Reply> SpendNonce(FleetStore& store, const SignedRequest& req);

  ServerOptions options_;
  std::function<int64_t()> clock_;
  RateLimiter limiter_;          // per client id
  RateLimiter address_limiter_;  // per client address
  KnownKeys known_keys_;
};

}  // namespace pipette::server
