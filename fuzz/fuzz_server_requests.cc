// The fleet server's use cases on the bodies of every endpoint a client sends to (register,
// results, plans, claim, heartbeat, job result, fail) and the query of the public listings, over
// a real SQLite fleet store. Each input is signed by a registered, approved client, so it passes
// authentication and reaches the parsing and validation behind it. The first byte picks the
// endpoint; the rest is the body (the query, for the listings).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>

#include "pipette/fleet_store.h"
#include "pipette/identity.h"
#include "server/service.h"

namespace {

using pipette::server::FleetService;
using pipette::server::SignedRequest;

struct Fixture {
  std::unique_ptr<pipette::FleetStore> store;
  std::unique_ptr<FleetService> service;
  pipette::Identity identity;
};

SignedRequest Signed(const pipette::Identity& id, const std::string& method,
                     const std::string& target, const std::string& body) {
  const pipette::SignedHeaders h =
      pipette::SignRequest(id, method, target, body, static_cast<int64_t>(std::time(nullptr)));
  return {method, target, body, h.client_id, h.timestamp, h.nonce, h.signature};
}

Fixture& Get() {
  static Fixture* f = [] {
    auto* fx = new Fixture();
    // On tmpfs where there is one: the store syncs every commit, which a disk makes the cost of an
    // input.
    char dir[] = "/dev/shm/pipette-fuzz-server-XXXXXX";
    char fallback[] = "/tmp/pipette-fuzz-server-XXXXXX";
    const char* made = mkdtemp(dir);
    if (made == nullptr) made = mkdtemp(fallback);
    if (made == nullptr) std::abort();
    static const std::string folder = made;
    std::atexit([] { std::filesystem::remove_all(folder); });
    auto store = pipette::OpenFleetStore(std::string(made) + "/fleet.db");
    if (!store.ok()) std::abort();
    fx->store = std::move(store).value();
    pipette::ServerOptions options;
    options.rate_per_client = 0;
    options.rate_per_address = 0;
    fx->service = std::make_unique<FleetService>(options);
    fx->identity = pipette::GenerateIdentity();
    const pipette::IssuedPreauthKey key = pipette::IssuePreauthKey({"fuzz"}, 0);
    if (!fx->store->AddPreauthKey(key.key).ok()) std::abort();
    const nlohmann::json body = {{"public_key", fx->identity.public_key_hex},
                                 {"label", "fuzz"},
                                 {"preauth_key", key.token}};
    const auto reply = fx->service->Register(
        *fx->store, Signed(fx->identity, "POST", "/api/register", body.dump()));
    if (reply.outcome != pipette::server::Outcome::kCreated) std::abort();
    return fx;
  }();
  return *f;
}

// "a=1&b=2" as the listings' query parameters.
pipette::server::Query QueryOf(const std::string& text) {
  pipette::server::Query q;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('&', start);
    if (end == std::string::npos) end = text.size();
    const std::string pair = text.substr(start, end - start);
    const size_t eq = pair.find('=');
    q.emplace(pair.substr(0, eq), eq == std::string::npos ? "" : pair.substr(eq + 1));
    start = end + 1;
  }
  return q;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  Fixture& f = Get();
  pipette::FleetStore& store = *f.store;
  FleetService& service = *f.service;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string job = "job_00000000000000000000000000000001";
  switch (data[0] % 9) {
    case 0:
      (void)service.Register(store, Signed(f.identity, "POST", "/api/register", body));
      break;
    case 1:
      (void)service.SubmitResult(store, Signed(f.identity, "POST", "/api/results", body));
      break;
    case 2:
      (void)service.CreatePlan(store, Signed(f.identity, "POST", "/api/plans", body));
      break;
    case 3:
      (void)service.Claim(store, Signed(f.identity, "POST", "/api/jobs/claim", body));
      break;
    case 4:
      (void)service.Heartbeat(store, Signed(f.identity, "PUT", "/api/jobs/" + job + "/heartbeat", body),
                              job);
      break;
    case 5:
      (void)service.CompleteJob(store, Signed(f.identity, "POST", "/api/jobs/" + job + "/result", body),
                                job);
      break;
    case 6:
      (void)service.FailJob(store, Signed(f.identity, "POST", "/api/jobs/" + job + "/fail", body),
                            job);
      break;
    case 7:
      (void)service.ListResults(store, QueryOf(body));
      (void)service.ListRecords(store, QueryOf(body));
      break;
    default:
      (void)service.GetResult(store, body);
      (void)service.GetPlan(store, Signed(f.identity, "GET", "/api/plans/" + body, ""), body);
      break;
  }
  return 0;
}
