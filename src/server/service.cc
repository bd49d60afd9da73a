#include "server/service.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <ctime>
#include <set>

#include "base/json_depth.h"
#include "pipette/build_info.h"
#include "pipette/identity.h"
#include "pipette/record_schema.h"
#include "pipette/store.h"

namespace pipette::server {
namespace {

using nlohmann::json;

constexpr const char* kMissingHeaders =
    "missing signature headers (X-Pipette-Client, X-Pipette-Timestamp, X-Pipette-Nonce, "
    "X-Pipette-Signature)";
constexpr const char* kBadSignature =
    "bad signature (the request was changed after signing, or signed with another key)";

Reply Refuse(Outcome outcome, std::string error) {
  Reply r;
  r.outcome = outcome;
  r.error = std::move(error);
  return r;
}

Reply Success(Outcome outcome, json body) {
  Reply r;
  r.outcome = outcome;
  r.body = std::move(body);
  return r;
}

constexpr const char* kNonceUsed = "nonce already used";

constexpr const char* kResultNotStored = "the server's disk is full; the result was not stored";

// What a submission answers: the generic disk-full line says what was not stored.
Reply ForResult(Reply r) {
  if (r.outcome == Outcome::kStorageFull) r.error = kResultNotStored;
  return r;
}

bool IsLowerHex(const std::string& s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<int64_t> ParseInt(const std::string& s) {
  int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end || s.empty()) return std::nullopt;
  return v;
}

// The body as a JSON object, or the 400.
std::optional<Reply> ParseObject(const std::string& body, json* out) {
  // Bounded before it is parsed: the handlers copy, compare and dump what they were sent.
  if (const auto deep = JsonNestsDeeperThan(body)) {
    return Refuse(Outcome::kInvalid, "the request body is " + TooDeeplyNested(*deep));
  }
  *out = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) return Refuse(Outcome::kInvalid, "the request body is not valid JSON");
  if (!out->is_object()) return Refuse(Outcome::kInvalid, "the request body must be a JSON object");
  return std::nullopt;
}

std::optional<std::vector<std::string>> StringList(const json& v) {
  if (!v.is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const json& e : v) {
    if (!e.is_string()) return std::nullopt;
    out.push_back(e.get<std::string>());
  }
  return out;
}

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json RowJson(const FleetResultRow& f) {
  const ResultRow& r = f.row;
  return {{"result_id", r.result_id},
          {"short_id", r.short_id},
          {"config_id", r.config_id},
          {"status", r.status},
          {"benchmark_id", r.benchmark_id},
          {"benchmark_type", r.benchmark_type},
          {"model_file", r.model_file},
          {"model_sha256", r.model_sha256},
          {"quant", r.quant},
          {"quant_label", r.quant_label},
          {"runtime", r.runtime},
          {"threads", r.threads},
          {"device_id", r.device_id},
          {"label", r.label},
          {"started_at", r.started_at},
          {"headline_metric", r.headline_metric},
          {"headline_unit", r.headline_unit},
          {"headline", Optional(r.headline)},
          {"headline_ci95_low", Optional(r.headline_ci95_low)},
          {"headline_ci95_high", Optional(r.headline_ci95_high)},
          {"headline_n", r.headline_n},
          {"ci_reached", r.ci_reached},
          {"client_id", f.client_id},
          {"received_at", f.received_at},
          {"profile_mismatch", f.profile_mismatch}};
}

json ClientJson(const FleetClient& c) {
  return {{"client_id", c.client_id}, {"status", ClientStatusName(c.status)},
          {"label", c.label},         {"labels", c.labels},
          {"profile", c.profile},     {"created_at", c.created_at}};
}

json JobJson(const Job& j) {
  json failures = json::array();
  for (const JobFailure& f : j.failures) {
    failures.push_back({{"client_id", f.client_id}, {"reason", f.reason}, {"at", f.at}});
  }
  return {{"job_id", j.job_id},
          {"plan_id", j.plan_id},
          {"index", j.index},
          {"spec", j.spec},
          {"state", JobStateName(j.state)},
          {"client_id", j.client_id},
          {"lease_expires_at", j.lease_expires_at},
          {"attempts", j.attempts},
          {"result_id", j.result_id},
          {"failures", failures},
          {"expires_at", j.expires_at}};
}

json PlanJson(const PlanStatus& p) {
  json counts = {{"queued", 0}, {"leased", 0}, {"done", 0}, {"failed", 0}, {"expired", 0}};
  json jobs = json::array();
  json per_client = json::object();
  const auto bump = [&](const std::string& client, const char* what) {
    if (client.empty()) return;
    json& c = per_client[client];
    if (c.is_null()) c = {{"done", 0}, {"leased", 0}, {"failed", 0}};
    c[what] = c[what].get<int>() + 1;
  };
  for (const Job& j : p.jobs) {
    const char* state = JobStateName(j.state);
    counts[state] = counts[state].get<int>() + 1;
    if (j.state == JobState::kDone) bump(j.client_id, "done");
    if (j.state == JobState::kLeased) bump(j.client_id, "leased");
    json failures = json::array();
    for (const JobFailure& f : j.failures) {
      failures.push_back({{"client_id", f.client_id}, {"reason", f.reason}});
      bump(f.client_id, "failed");
    }
    jobs.push_back({{"job_id", j.job_id},
                    {"index", j.index},
                    {"benchmark", j.spec.value("benchmark", json("")).is_string()
                                      ? j.spec.value("benchmark", std::string())
                                      : std::string()},
                    {"state", state},
                    {"client_id", j.client_id},
                    {"attempts", j.attempts},
                    {"result_id", j.result_id},
                    {"failures", failures}});
  }
  return {{"plan_id", p.plan_id}, {"name", p.name}, {"created_at", p.created_at},
          {"counts", counts},     {"jobs", jobs},   {"per_client", per_client}};
}

// Why no registered approved device could take a job with `requires`; nullopt when one can.
std::optional<std::string> Unassignable(const json& required,
                                        const std::vector<FleetClient>& clients) {
  std::string why_all;
  int known = 0;
  for (const FleetClient& c : clients) {
    if (c.status != ClientStatus::kApproved || c.capabilities.is_null()) continue;
    ++known;
    std::string why;
    if (JobMatches(required, c.capabilities, &why)) return std::nullopt;
    if (known <= 3) {
      why_all +=
          (why_all.empty() ? "" : "; ") + (c.label.empty() ? c.client_id : c.label) + ": " + why;
    }
  }
  if (known == 0) {
    return "no device has offered itself yet (an approved worker does with its first claim); "
           "the job stays queued";
  }
  if (known > 3) why_all += "; and " + std::to_string(known - 3) + " more";
  return "no approved device matches (" + why_all + "); the job stays queued";
}

// The outcome of storing a record, as /api/results answers it.
Reply PutReply(PutOutcome put, const std::string& result_id, const std::string& client_id) {
  switch (put) {
    case PutOutcome::kStored:
      return Success(Outcome::kCreated, {{"result_id", result_id}, {"stored", true}});
    case PutOutcome::kSame:
      return Success(Outcome::kOk, {{"result_id", result_id}, {"stored", false}});
    case PutOutcome::kConflict:
      return Refuse(Outcome::kConflict, "result " + result_id + " exists with other content");
    case PutOutcome::kReplayed:
      return Refuse(Outcome::kUnauthenticated, kNonceUsed);
    case PutOutcome::kClientNotApproved:
      return Refuse(Outcome::kForbidden, "client " + client_id + " is not approved");
  }
  return Refuse(Outcome::kInternal, "unknown put outcome");
}

// Parses and validates a submitted record in one pass; the 400 names the bad field.
std::optional<Reply> ParseRecord(const std::string& body, json* record) {
  Result<json> parsed = pipette::ParseRecord(body);
  if (!parsed.ok()) {
    const std::string& why = parsed.error().message;
    // A field's pointer starts with "/"; the other errors are about the body as a whole.
    return Refuse(Outcome::kInvalid, why.rfind('/', 0) == 0 ? why : "the request body is " + why);
  }
  *record = std::move(*parsed);
  return std::nullopt;
}

std::string LeaseLost(const std::string& job_id) {
  return "lease lost: job " + job_id + " is no longer leased to this client";
}

}  // namespace

Reply StoreFailure(const Error& error) {
  Reply r;
  switch (FleetStoreFaultOf(error)) {
    case FleetStoreFault::kUnavailable:
      r = Refuse(Outcome::kUnavailable, kDatabaseNotAnswering);
      break;
    case FleetStoreFault::kFull:
      r = Refuse(Outcome::kStorageFull, kDiskFull);
      break;
    case FleetStoreFault::kOther:
      return Refuse(Outcome::kInternal, error.message);
  }
  r.body = {{"detail", error.message}};  // for the log only
  return r;
}

FleetService::FleetService(const ServerOptions& options, std::function<int64_t()> clock)
    : options_(options),
      clock_(std::move(clock)),
      limiter_(options.rate_per_client),
      address_limiter_(options.rate_per_address) {}

int64_t FleetService::Now() const {
  return clock_ ? clock_() : static_cast<int64_t>(std::time(nullptr));
}

std::optional<Reply> FleetService::CheckSignature(const SignedRequest& req,
                                                  const std::string& public_key_hex) {
  const std::optional<int64_t> ts = ParseInt(req.timestamp);
  if (!ts) {
    return Refuse(Outcome::kUnauthenticated, "X-Pipette-Timestamp '" + req.timestamp.substr(0, 20) +
                                                 "' is not Unix time in whole seconds");
  }
  if (!IsLowerHex(req.nonce, 32)) {
    return Refuse(Outcome::kUnauthenticated,
                  "X-Pipette-Nonce must be 32 lowercase hex digits (16 random bytes)");
  }
  const std::string message =
      SigningString(req.method, req.target, *ts, req.client_id, req.nonce, req.body);
  if (!VerifyMessage(public_key_hex, message, req.signature)) {
    return Refuse(Outcome::kUnauthenticated, kBadSignature);
  }
  const int64_t skew = *ts - Now();
  if (skew > options_.clock_window_s || -skew > options_.clock_window_s) {
    return Refuse(Outcome::kUnauthenticated,
                  "timestamp " + req.timestamp + " is " + std::to_string(skew < 0 ? -skew : skew) +
                      " s away from the server's clock (window +-" +
                      std::to_string(options_.clock_window_s) + " s); fix the device's clock");
  }
  return std::nullopt;
}

int64_t FleetService::NonceKeptUntil(const SignedRequest& req) const {
  return *ParseInt(req.timestamp) + options_.clock_window_s + 1;
}

std::optional<Reply> FleetService::SpendNonce(FleetStore& store, const SignedRequest& req) {
  // Kept until the timestamp can no longer pass the window, so a replay is refused by the clock
  // or by the nonce, across restarts and replicas sharing the database.
  Result<bool> fresh = store.UseNonce(req.client_id, req.nonce, NonceKeptUntil(req));
  if (!fresh.ok()) return StoreFailure(fresh.error());
  if (!*fresh) return Refuse(Outcome::kUnauthenticated, kNonceUsed);
  return std::nullopt;
}

std::optional<Reply> FleetService::Authenticate(FleetStore& store, const SignedRequest& req,
                                                FleetClient* client) {
  if (std::optional<Reply> refused = AuthenticateKeepingNonce(store, req, client)) return refused;
  return SpendNonce(store, req);
}

std::optional<Reply> FleetService::AuthenticateKeepingNonce(FleetStore& store,
                                                            const SignedRequest& req,
                                                            FleetClient* client) {
  if (std::optional<Reply> refused = Identify(store, req, client)) return refused;
  return RateLimit(client->client_id);
}

std::optional<Reply> FleetService::Identify(FleetStore& store, const SignedRequest& req,
                                            FleetClient* client) {
  if (req.client_id.empty() || req.timestamp.empty() || req.nonce.empty() ||
      req.signature.empty()) {
    return Refuse(Outcome::kUnauthenticated, kMissingHeaders);
  }
  Result<std::optional<FleetClient>> found = store.GetClient(req.client_id);
  if (!found.ok()) return StoreFailure(found.error());
  if (!found->has_value()) {
    return Refuse(Outcome::kUnauthenticated, "unknown client " + req.client_id.substr(0, 40) +
                                                 "; register it first (pipette register)");
  }
  *client = std::move(**found);
  if (std::optional<Reply> bad = CheckSignature(req, client->public_key_hex)) return bad;
  if (client->status == ClientStatus::kPending) {
    return Refuse(Outcome::kForbidden, "client " + client->client_id +
                                           " is pending approval (pipette serve clients approve " +
                                           client->client_id + ")");
  }
  if (client->status == ClientStatus::kRevoked) {
    return Refuse(Outcome::kForbidden, "client " + client->client_id + " is revoked");
  }
  return std::nullopt;
}

namespace {

Reply AddressLimited(double rate, int wait) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", rate);
  Reply r = Refuse(Outcome::kRateLimited, std::string("rate limit: ") + text +
                                              " requests/s per address; retry after " +
                                              std::to_string(wait) + " s");
  r.retry_after_s = wait;
  return r;
}

}  // namespace

std::optional<Reply> FleetService::AddressExhausted(const std::string& address) {
  if (const int wait = address_limiter_.Wait(address, std::chrono::steady_clock::now())) {
    return AddressLimited(options_.rate_per_address, wait);
  }
  return std::nullopt;
}

void FleetService::CountFailedAuthentication(const std::string& address) {
  (void)address_limiter_.Take(address, std::chrono::steady_clock::now());
}

std::optional<Reply> FleetService::LimitAddress(const std::string& address) {
  if (const int wait = address_limiter_.Take(address, std::chrono::steady_clock::now())) {
    return AddressLimited(options_.rate_per_address, wait);
  }
  return std::nullopt;
}

std::optional<Reply> FleetService::RateLimit(const std::string& client_id) {
  if (const int wait = limiter_.Take(client_id, std::chrono::steady_clock::now())) {
    char rate[32];
    std::snprintf(rate, sizeof(rate), "%g", options_.rate_per_client);
    Reply r = Refuse(Outcome::kRateLimited, std::string("rate limit: ") + rate +
                                                " requests/s per client; retry after " +
                                                std::to_string(wait) + " s");
    r.retry_after_s = wait;
    return r;
  }
  return std::nullopt;
}

Reply FleetService::Health(FleetStore& store) {
  Status ping = store.Ping();
  if (!ping.ok()) {
    // Whatever the reason, the store does not answer a SELECT 1: the server cannot serve.
    Reply r = Refuse(Outcome::kUnavailable, kDatabaseNotAnswering);
    r.body = {{"detail", ping.error().message}};  // for the log only
    return r;
  }
  return Success(Outcome::kOk, {{"status", "ok"},
                                {"store", store.backend()},
                                {"version", std::string(build_info::kVersion)}});
}

Reply FleetService::Register(FleetStore& store, const SignedRequest& req) {
  if (req.client_id.empty() || req.timestamp.empty() || req.nonce.empty() ||
      req.signature.empty()) {
    return Refuse(Outcome::kUnauthenticated, kMissingHeaders);
  }
  json body;
  if (std::optional<Reply> bad = ParseObject(req.body, &body)) return *bad;
  const json& pk = body.contains("public_key") ? body["public_key"] : json();
  if (!pk.is_string() || !IsLowerHex(pk.get<std::string>(), 64)) {
    return Refuse(Outcome::kInvalid, "/public_key: expected 64 lowercase hex digits");
  }
  FleetClient client;
  client.public_key_hex = pk.get<std::string>();
  Result<std::string> id = ClientIdOf(client.public_key_hex);
  if (!id.ok()) return Refuse(Outcome::kInvalid, "/public_key: " + id.error().message);
  client.client_id = *id;
  if (body.contains("label")) {
    if (!body["label"].is_string()) return Refuse(Outcome::kInvalid, "/label: expected a string");
    client.label = body["label"].get<std::string>();
  }
  if (body.contains("labels")) {
    std::optional<std::vector<std::string>> labels = StringList(body["labels"]);
    if (!labels) return Refuse(Outcome::kInvalid, "/labels: expected an array of strings");
    client.labels = *labels;
  }
  if (body.contains("profile")) {
    if (!body["profile"].is_object()) {
      return Refuse(Outcome::kInvalid, "/profile: expected an object (the record's device block)");
    }
    client.profile = body["profile"];
  }
  std::string preauth;
  if (body.contains("preauth_key") && !body["preauth_key"].is_null()) {
    if (!body["preauth_key"].is_string()) {
      return Refuse(Outcome::kInvalid, "/preauth_key: expected a string");
    }
    preauth = body["preauth_key"].get<std::string>();
  }
  // Proof of possession: the request is signed with the key being registered.
  if (req.client_id != client.client_id) {
    return Refuse(
        Outcome::kUnauthenticated,
        "X-Pipette-Client is not the client id of /public_key (" + client.client_id + ")");
  }
  if (std::optional<Reply> bad = CheckSignature(req, client.public_key_hex)) return *bad;
  if (std::optional<Reply> bad = SpendNonce(store, req)) return *bad;

  const int64_t now = Now();
  client.created_at = now;
  Result<RegisterOutcome> registered = store.Register(client, preauth, now);
  if (!registered.ok()) return StoreFailure(registered.error());
  if (*registered == RegisterOutcome::kBadPreauthKey) {
    return Refuse(Outcome::kUnauthenticated, "pre-authorization key is unknown, expired or spent");
  }
  Result<std::optional<FleetClient>> stored = store.GetClient(client.client_id);
  if (!stored.ok()) return StoreFailure(stored.error());
  if (!stored->has_value()) {
    return Refuse(Outcome::kInternal, "client " + client.client_id + " missing after Register");
  }
  Reply r =
      Success(*registered == RegisterOutcome::kRegistered ? Outcome::kCreated : Outcome::kOk,
              {{"client_id", client.client_id}, {"status", ClientStatusName((*stored)->status)}});
  r.client_id = client.client_id;
  return r;
}

Reply FleetService::Me(FleetStore& store, const SignedRequest& req) {
  FleetClient client;
  if (std::optional<Reply> refused = Authenticate(store, req, &client)) return *refused;
  Reply r = Success(Outcome::kOk, ClientJson(client));
  r.client_id = client.client_id;
  return r;
}

Reply FleetService::SubmitResult(FleetStore& store, const SignedRequest& req) {
  // A client authenticated before is checked against its kept key, and the store checks in the
  // record's transaction that it is still approved. Any other answer than a stored record is
  // given only after the client is read again: a refusal of the client comes first, as on the
  // full path.
  const std::optional<std::string> key = known_keys_.Find(req.client_id);
  Reply r;
  if (key && !CheckSignature(req, *key)) {
    std::optional<Reply> limited = RateLimit(req.client_id);
    r = limited ? ForResult(*limited) : StoreSubmission(store, req, req.client_id);
    if (r.outcome != Outcome::kInvalid && r.outcome != Outcome::kForbidden &&
        r.outcome != Outcome::kRateLimited) {
      return r;
    }
  } else {
    FleetClient client;
    if (std::optional<Reply> refused = AuthenticateKeepingNonce(store, req, &client)) {
      return ForResult(*refused);
    }
    known_keys_.Remember(client.client_id, client.public_key_hex);
    r = StoreSubmission(store, req, client.client_id);
    if (r.outcome != Outcome::kForbidden) return r;
  }
  // Refused, or the store found the client not approved: say why, from the client as it is now.
  FleetClient client;
  if (std::optional<Reply> refused = Identify(store, req, &client)) {
    known_keys_.Forget(req.client_id);
    return ForResult(*refused);
  }
  // Approved again since the store's check: stored as if it had come now (once; a status that
  // keeps changing is answered "not approved").
  if (r.outcome == Outcome::kForbidden) return StoreSubmission(store, req, req.client_id);
  return r;
}

Reply FleetService::StoreSubmission(FleetStore& store, const SignedRequest& req,
                                    const std::string& client_id) {
  // Announced before the parsing and validation, so a commit under way may wait for this one
  // (only a signed request from an approved client is waited for).
  const std::shared_ptr<void> expected = store.ExpectWrite();
  json record;
  Reply r;
  if (std::optional<Reply> bad = ParseRecord(req.body, &record)) {
    r = *bad;
  } else {
    // The nonce is spent with the record, in its transaction: a replay is refused there.
    Result<PutOutcome> put = store.PutResultWithNonce(record, req.body, client_id, req.nonce,
                                                      NonceKeptUntil(req), Now());
    r = put.ok() ? PutReply(*put, record.value("result_id", std::string()), client_id)
                 : StoreFailure(put.error());
  }
  r = ForResult(std::move(r));
  r.client_id = client_id;
  return r;
}

namespace {

// The result filters of docs/fleet-protocol.md from the query parameters, and the page: `limit`
// (1..max_page, default default_page) and `cursor`. nullopt when they are good, else the 400.
struct ResultQuery {
  ResultFilter filter;
  int page_size = 0;
  std::string cursor;
};
std::optional<Reply> ParseResultQuery(const Query& query, int default_page, int max_page,
                                      ResultQuery* out) {
  static const std::set<std::string> kKnown = {"benchmark", "model", "quant",  "runtime",
                                               "device",    "label", "status", "since",
                                               "setting",   "limit", "cursor"};
  ResultFilter& filter = out->filter;
  out->page_size = default_page;
  for (const auto& [key, value] : query) {
    if (!kKnown.count(key)) {
      return Refuse(Outcome::kInvalid,
                    "unknown filter '" + key.substr(0, 40) +
                        "' (filters: benchmark, model, quant, runtime, device, label, status, "
                        "since, setting, limit, cursor)");
    }
    if (key == "benchmark") filter.benchmarks.push_back(value);
    if (key == "model") filter.models.push_back(value);
    if (key == "quant") filter.quants.push_back(value);
    if (key == "runtime") filter.runtimes.push_back(value);
    if (key == "device") filter.devices.push_back(value);
    if (key == "label") filter.labels.push_back(value);
    if (key == "cursor") out->cursor = value;
    if (key == "status") {
      if (value != "ok" && value != "failed") {
        return Refuse(Outcome::kInvalid, "status must be ok or failed");
      }
      filter.status = value;
    }
    if (key == "since") {
      Result<std::string> since = ParseSince(value);
      if (!since.ok()) return Refuse(Outcome::kInvalid, since.error().message);
      filter.since = value;
    }
    if (key == "setting") {
      Result<SettingFilter> setting = ParseSettingFilter(value);
      if (!setting.ok()) return Refuse(Outcome::kInvalid, setting.error().message);
      filter.settings.push_back(value);
    }
    if (key == "limit") {
      std::optional<int64_t> n = ParseInt(value);
      if (!n || *n < 1 || *n > max_page) {
        return Refuse(Outcome::kInvalid,
                      "limit must be a whole number from 1 to " + std::to_string(max_page));
      }
      out->page_size = static_cast<int>(*n);
    }
  }
  return std::nullopt;
}

// One page of the listing as {key: [item(row)..], "total", "next"?}, or the refusal (a bad
// filter or cursor is the client's; anything else ours). `item` may fail (a store read).
template <typename Item>
Reply Listing(FleetStore& store, const Query& query, int default_page, int max_page,
              const char* key, ListOptions options, Item item) {
  ResultQuery q;
  if (std::optional<Reply> bad = ParseResultQuery(query, default_page, max_page, &q)) return *bad;
  Result<ResultPage> page = store.ListResults(q.filter, q.page_size, q.cursor, options);
  if (!page.ok()) {
    return page.error().message.find("cursor") != std::string::npos
               ? Refuse(Outcome::kInvalid, "bad cursor; start from the first page")
               : StoreFailure(page.error());
  }
  json items = json::array();
  for (const FleetResultRow& row : page->rows) {
    Result<json> one = item(row);
    if (!one.ok()) return StoreFailure(one.error());
    if (!one->is_null()) items.push_back(std::move(*one));
  }
  json body = {{key, std::move(items)}, {"total", page->total}};
  if (!page->next.empty()) body["next"] = page->next;
  return Success(Outcome::kOk, std::move(body));
}

}  // namespace

Reply FleetService::ListResults(FleetStore& store, const Query& query) {
  return Listing(store, query, 100, 1000, "results", ListOptions{},
                 [](const FleetResultRow& row) -> Result<json> { return RowJson(row); });
}

Reply FleetService::ListRecords(FleetStore& store, const Query& query) {
  // Records are larger than rows: smaller pages. The page's ids first, then their stored texts in
  // one read, spliced into the answer as they are (parsing and dumping them was most of its time).
  std::vector<std::string> ids;
  // The records carry their ids whole: no short ids.
  Reply listed = Listing(store, query, 50, 200, "records", ListOptions{.short_ids = false},
                         [&ids](const FleetResultRow& row) -> Result<json> {
                           ids.push_back(row.row.result_id);
                           return json();
                         });
  if (listed.outcome != Outcome::kOk) return listed;
  Result<std::vector<std::string>> texts = store.RecordTexts(ids);
  if (!texts.ok()) return StoreFailure(texts.error());
  std::string records = "[";
  for (const std::string& text : *texts) {
    if (text.empty()) continue;  // results are never deleted; skipped all the same
    records += (records.size() > 1 ? "," : "") + text;
  }
  records += "]";
  json rest = std::move(listed.body);
  rest.erase("records");
  std::string tail = rest.dump(-1, ' ', false, json::error_handler_t::replace);
  // {"records":[...],<the rest of the listing>}
  listed.body_text = "{\"records\":" + records + (tail.size() > 2 ? "," + tail.substr(1) : "}");
  listed.body = json();
  return listed;
}

Reply FleetService::GetResult(FleetStore& store, const std::string& id) {
  Result<FoundResult> found = FindResult(store, id);
  if (!found.ok()) return StoreFailure(found.error());
  if (found->ambiguous) {
    return Refuse(Outcome::kInvalid,
                  "result id prefix " + id + " matches several results; give more of it");
  }
  if (!found->record) return Refuse(Outcome::kNotFound, "no result " + id.substr(0, 80));
  return Success(Outcome::kOk, std::move(*found->record));
}

Reply FleetService::CreatePlan(FleetStore& store, const SignedRequest& req) {
  FleetClient client;
  if (std::optional<Reply> refused = Authenticate(store, req, &client)) return *refused;
  Reply r = [&]() -> Reply {
    json body;
    if (std::optional<Reply> bad = ParseObject(req.body, &body)) return *bad;
    if (!body.contains("name") || !body["name"].is_string() ||
        body["name"].get<std::string>().empty()) {
      return Refuse(Outcome::kInvalid, "/name: expected a non-empty string");
    }
    if (!body.contains("jobs") || !body["jobs"].is_array() || body["jobs"].empty()) {
      return Refuse(Outcome::kInvalid, "/jobs: expected a non-empty array of job specs");
    }
    int64_t expires_at = 0;
    if (body.contains("expires_at") && !body["expires_at"].is_null()) {
      if (!body["expires_at"].is_number_integer()) {
        return Refuse(Outcome::kInvalid, "/expires_at: expected Unix time in whole seconds");
      }
      expires_at = body["expires_at"].get<int64_t>();
    }
    std::vector<json> specs;
    for (size_t i = 0; i < body["jobs"].size(); ++i) {
      const json& spec = body["jobs"][i];
      const std::string at = "/jobs/" + std::to_string(i);
      if (!spec.is_object()) return Refuse(Outcome::kInvalid, at + ": expected an object");
      if (!spec.contains("benchmark") || !spec["benchmark"].is_string()) {
        return Refuse(Outcome::kInvalid, at + "/benchmark: expected a benchmark id");
      }
      if (spec.contains("requires") && !spec["requires"].is_object()) {
        return Refuse(Outcome::kInvalid, at + "/requires: expected an object");
      }
      specs.push_back(spec);
    }
    Result<std::vector<FleetClient>> clients = store.ListClients();
    if (!clients.ok()) return StoreFailure(clients.error());
    const int64_t now = Now();
    Result<std::string> plan_id =
        store.CreatePlan(body["name"].get<std::string>(), specs, expires_at, now);
    if (!plan_id.ok()) return StoreFailure(plan_id.error());
    json unassignable = json::array();
    for (size_t i = 0; i < specs.size(); ++i) {
      const json required = specs[i].value("requires", json::object());
      if (std::optional<std::string> why = Unassignable(required, *clients)) {
        unassignable.push_back({{"index", i}, {"reason", *why}});
      }
    }
    return Success(Outcome::kCreated,
                   {{"plan_id", *plan_id}, {"jobs", specs.size()}, {"unassignable", unassignable}});
  }();
  r.client_id = client.client_id;
  return r;
}

Reply FleetService::GetPlan(FleetStore& store, const SignedRequest& req,
                            const std::string& plan_id) {
  FleetClient client;
  if (std::optional<Reply> refused = Authenticate(store, req, &client)) return *refused;
  Result<std::optional<PlanStatus>> plan = store.GetPlan(plan_id);
  Reply r;
  if (!plan.ok()) {
    r = StoreFailure(plan.error());
  } else if (!plan->has_value()) {
    r = Refuse(Outcome::kNotFound, "no plan " + plan_id.substr(0, 80));
  } else {
    r = Success(Outcome::kOk, PlanJson(**plan));
  }
  r.client_id = client.client_id;
  return r;
}

Reply FleetService::Claim(FleetStore& store, const SignedRequest& req) {
  FleetClient client;
  if (std::optional<Reply> refused = Authenticate(store, req, &client)) return *refused;
  Reply r = [&]() -> Reply {
    json caps;
    if (std::optional<Reply> bad = ParseObject(req.body, &caps)) return *bad;
    if (caps.contains("labels") && !StringList(caps["labels"])) {
      return Refuse(Outcome::kInvalid, "/labels: expected an array of strings");
    }
    if (caps.contains("runtimes") && !StringList(caps["runtimes"])) {
      return Refuse(Outcome::kInvalid, "/runtimes: expected an array of strings");
    }
    if (caps.contains("models") && !StringList(caps["models"])) {
      return Refuse(Outcome::kInvalid, "/models: expected an array of SHA-256 digests");
    }
    if (caps.contains("memory_bytes") && !caps["memory_bytes"].is_number()) {
      return Refuse(Outcome::kInvalid, "/memory_bytes: expected a number");
    }
    if (caps.contains("arch") && !caps["arch"].is_string()) {
      return Refuse(Outcome::kInvalid, "/arch: expected a string");
    }
    if (Status s = store.SetCapabilities(client.client_id, caps); !s.ok())
      return StoreFailure(s.error());
    Result<std::optional<Job>> job = store.Claim(client.client_id, caps, Now(), options_.lease_s);
    if (!job.ok()) return StoreFailure(job.error());
    if (!job->has_value()) return Success(Outcome::kNoContent, nullptr);
    return Success(Outcome::kOk,
                   {{"job", JobJson(**job)}, {"lease_expires_at", (*job)->lease_expires_at}});
  }();
  r.client_id = client.client_id;
  return r;
}

Reply FleetService::Heartbeat(FleetStore& store, const SignedRequest& req,
                              const std::string& job_id) {
  FleetClient client;
  if (std::optional<Reply> refused = Authenticate(store, req, &client)) return *refused;
  const int64_t now = Now();
  Result<bool> held = store.Heartbeat(job_id, client.client_id, now, options_.lease_s);
  Reply r;
  if (!held.ok()) {
    r = StoreFailure(held.error());
  } else if (!*held) {
    r = Refuse(Outcome::kConflict, LeaseLost(job_id));
  } else {
    r = Success(Outcome::kOk, {{"lease_expires_at", now + options_.lease_s}});
  }
  r.client_id = client.client_id;
  return r;
}

Reply FleetService::CompleteJob(FleetStore& store, const SignedRequest& req,
                                const std::string& job_id) {
  FleetClient client;
  if (std::optional<Reply> refused = Authenticate(store, req, &client)) {
    return ForResult(*refused);
  }
  Reply r = [&]() -> Reply {
    json record;
    if (std::optional<Reply> bad = ParseRecord(req.body, &record)) return *bad;
    Result<FleetStore::CompleteOutcome> done =
        store.Complete(job_id, client.client_id, record, Now());
    if (!done.ok()) return StoreFailure(done.error());
    Reply put = PutReply(done->put, record.value("result_id", std::string()), client.client_id);
    if (put.outcome != Outcome::kConflict && !done->lease_held) {
      return Refuse(Outcome::kConflict, LeaseLost(job_id) + " (the result is stored)");
    }
    return put;
  }();
  r = ForResult(std::move(r));
  r.client_id = client.client_id;
  return r;
}

Reply FleetService::FailJob(FleetStore& store, const SignedRequest& req,
                            const std::string& job_id) {
  FleetClient client;
  if (std::optional<Reply> refused = Authenticate(store, req, &client)) return *refused;
  Reply r = [&]() -> Reply {
    json body;
    if (std::optional<Reply> bad = ParseObject(req.body, &body)) return *bad;
    if (!body.contains("reason") || !body["reason"].is_string()) {
      return Refuse(Outcome::kInvalid, "/reason: expected a string");
    }
    if (!body.contains("retriable") || !body["retriable"].is_boolean()) {
      return Refuse(Outcome::kInvalid, "/retriable: expected true or false");
    }
    Result<std::pair<JobState, bool>> failed =
        store.Fail(job_id, client.client_id, body["reason"].get<std::string>(),
                   body["retriable"].get<bool>(), Now());
    if (!failed.ok()) return StoreFailure(failed.error());
    if (!failed->second) return Refuse(Outcome::kConflict, LeaseLost(job_id));
    return Success(Outcome::kOk, {{"state", JobStateName(failed->first)}});
  }();
  r.client_id = client.client_id;
  return r;
}

Status FleetService::PruneNonces(FleetStore& store) { return store.PruneNonces(Now()); }

}  // namespace pipette::server
