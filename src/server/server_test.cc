// The fleet server on a free port over a real store (a temporary SQLite file; a fresh PostgreSQL
// database when the test server can run), driven by a real HTTP client that signs as devices do.
#include "pipette/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "base/ids.h"
#include "pipette/fleet_store.h"
#include "pipette/identity.h"
#include "server/client_address.h"
#ifdef PIPETTE_HAVE_TEST_POSTGRES
#include "tests/support/postgres_server.h"
#endif

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A record a real run produced (stories260K, prefill_throughput_100), under a fresh result_id.
json RealRecord() {
  static const json record = [] {
    std::ifstream in(fs::path(PIPETTE_SOURCE_DIR) / "src/server/testdata" /
                     "stories260k_prefill_record.json");
    return json::parse(in);
  }();
  json r = record;
  r["result_id"] = NewUuidV7();
  return r;
}

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

// A server running on a thread of this process until destroyed.
class RunningServer {
 public:
  explicit RunningServer(ServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    std::promise<int> bound;
    std::future<int> port = bound.get_future();
    thread_ = std::thread([this, options, &bound] {
      ServeHooks hooks;
      hooks.stop = &stop_;
      hooks.handle_signals = false;
      hooks.log_requests = false;
      hooks.on_listening = [&bound](int p) { bound.set_value(p); };
      status_ = Serve(options, hooks);
      if (!status_.ok()) bound.set_value(-1);
    });
    port_ = port.get();
  }
  ~RunningServer() {
    stop_ = true;
    thread_.join();
  }
  int port() const { return port_; }
  const Status& status() const { return status_; }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int port_ = -1;
  Status status_;
};

struct Response {
  int status = 0;
  json body;
  std::string raw;
  std::string retry_after;
};

class ServerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      dir_ = fs::temp_directory_path() /
             ("pipette-server-test-" + std::to_string(::getpid()) + "-" + NewNonce().substr(0, 8));
      fs::create_directories(dir_);
      db_ = (dir_ / "fleet.db").string();
    } else {
#ifdef PIPETTE_HAVE_TEST_POSTGRES
      Result<std::string> url = testing::FreshPostgresDatabase();
      if (!url.ok()) GTEST_SKIP() << url.error().message;
      db_ = *url;
#else
      GTEST_SKIP() << "built without the PostgreSQL test server (tests/support)";
#endif
    }
    options_.db = db_;
    options_.threads = 4;
    Start();
    Result<std::unique_ptr<FleetStore>> store = OpenFleetStore(db_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
  }
  void TearDown() override {
    server_.reset();
    store_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void Start() {
    server_ = std::make_unique<RunningServer>(options_);
    ASSERT_GT(server_->port(), 0) << server_->status().error().message;
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
  }
  void Restart() {
    server_.reset();
    Start();
  }

  static Response Parse(const httplib::Result& res) {
    Response r;
    if (!res) return r;
    r.status = res->status;
    r.raw = res->body;
    r.body = json::parse(res->body, nullptr, false);
    r.retry_after = res->get_header_value("Retry-After");
    return r;
  }

  Response Send(const std::string& method, const std::string& target, const std::string& body,
                const httplib::Headers& headers) {
    if (method == "GET") return Parse(client_->Get(target.c_str(), headers));
    if (method == "PUT")
      return Parse(client_->Put(target.c_str(), headers, body, "application/json"));
    return Parse(client_->Post(target.c_str(), headers, body, "application/json"));
  }

  static httplib::Headers Signed(const Identity& id, const std::string& method,
                                 const std::string& target, const std::string& body,
                                 int64_t timestamp) {
    const SignedHeaders h = SignRequest(id, method, target, body, timestamp);
    return {{"X-Pipette-Client", h.client_id},
            {"X-Pipette-Timestamp", h.timestamp},
            {"X-Pipette-Nonce", h.nonce},
            {"X-Pipette-Signature", h.signature}};
  }

  Response SignedSend(const Identity& id, const std::string& method, const std::string& target,
                      const std::string& body, int64_t timestamp = 0) {
    return Send(method, target, body,
                Signed(id, method, target, body, timestamp ? timestamp : Now()));
  }

  Response Register(const Identity& id, const std::string& preauth, const std::string& label) {
    json body = {{"public_key", id.public_key_hex},
                 {"label", label},
                 {"labels", {"x86"}},
                 {"profile", {{"id", "dev-" + label}}}};
    if (!preauth.empty()) body["preauth_key"] = preauth;
    return SignedSend(id, "POST", "/api/register", body.dump());
  }

  std::string NewKey() {
    IssuedPreauthKey key = IssuePreauthKey({"x86"}, Now() + 3600);
    Status s = store_->AddPreauthKey(key.key);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return key.token;
  }

  // A registered, approved client.
  Identity Approved(const std::string& label = "dev") {
    Identity id = GenerateIdentity();
    Response r = Register(id, NewKey(), label);
    EXPECT_EQ(r.status, 201) << r.raw;
    return id;
  }

  std::string Error(const Response& r) {
    return r.body.is_object() ? r.body.value("error", std::string("<no error field>")) : r.raw;
  }

  ServerOptions options_;
  fs::path dir_;
  std::string db_;
  std::unique_ptr<RunningServer> server_;
  std::unique_ptr<httplib::Client> client_;
  std::unique_ptr<FleetStore> store_;
};

TEST(ClientAddress, TheProxysHeaderIsBelievedFromTheProxyOnly) {
  using server::ClientAddress;
  const std::vector<std::string> proxies = {"127.0.0.1", "::1"};
  // From the proxy: the last entry, the address the proxy saw.
  EXPECT_EQ(ClientAddress("127.0.0.1", "198.51.100.7", proxies), "198.51.100.7");
  EXPECT_EQ(ClientAddress("127.0.0.1", "203.0.113.9, 198.51.100.7 ", proxies), "198.51.100.7");
  EXPECT_EQ(ClientAddress("::ffff:127.0.0.1", "2001:db8::1", proxies), "2001:db8::1");
  EXPECT_EQ(ClientAddress("::1", "::ffff:198.51.100.7", proxies), "198.51.100.7");
  // Anyone else's header is ignored, whatever it says.
  EXPECT_EQ(ClientAddress("192.0.2.5", "198.51.100.7", proxies), "192.0.2.5");
  EXPECT_EQ(ClientAddress("192.0.2.5", "127.0.0.1", proxies), "192.0.2.5");
  EXPECT_EQ(ClientAddress("192.0.2.5", "198.51.100.7", {}), "192.0.2.5");
  // From the proxy without a usable entry: the proxy's own address, never text of the header.
  EXPECT_EQ(ClientAddress("127.0.0.1", "", proxies), "127.0.0.1");
  EXPECT_EQ(ClientAddress("127.0.0.1", "198.51.100.7, unknown", proxies), "127.0.0.1");
  EXPECT_EQ(ClientAddress("127.0.0.1", "198.51.100.7:443", proxies), "127.0.0.1");
  EXPECT_EQ(ClientAddress("127.0.0.1", "<script>", proxies), "127.0.0.1");
  // A proxy named in another spelling of its address is still the proxy.
  EXPECT_EQ(ClientAddress("::1", "198.51.100.7", {"0:0:0:0:0:0:0:1"}), "198.51.100.7");
  EXPECT_EQ(ClientAddress("2001:db8::5", "198.51.100.7", {"2001:DB8:0::5"}), "198.51.100.7");
  EXPECT_EQ(server::CanonicalAddress("::ffff:127.0.0.1"), "127.0.0.1");
}

TEST_P(ServerTest, HealthNamesTheStore) {
  Response r = Send("GET", "/health", "", {});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["status"], "ok");
  EXPECT_EQ(r.body["store"], GetParam());
}

TEST_P(ServerTest, RegistrationWithAKeyIsApprovedAndTheKeyIsSpent) {
  const std::string key = NewKey();
  Identity a = GenerateIdentity();
  Response r = Register(a, key, "a");
  ASSERT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(r.body["status"], "approved");
  EXPECT_EQ(r.body["client_id"], a.client_id);
  // The same key again: already registered, 200, nothing spent.
  r = Register(a, key, "a");
  EXPECT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["status"], "approved");
  // Another device with the spent key.
  Identity b = GenerateIdentity();
  r = Register(b, key, "b");
  EXPECT_EQ(r.status, 401) << r.raw;
  EXPECT_EQ(Error(r), "pre-authorization key is unknown, expired or spent");
  r = SignedSend(a, "GET", "/api/me", "");
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["client_id"], a.client_id);
  EXPECT_EQ(r.body["label"], "a");
}

TEST_P(ServerTest, SubmitIsIdempotentAndListed) {
  Identity id = Approved();
  const json record = RealRecord();
  const std::string rid = record["result_id"];
  Response r = SignedSend(id, "POST", "/api/results", record.dump());
  ASSERT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(r.body["result_id"], rid);
  EXPECT_EQ(r.body["stored"], true);
  r = SignedSend(id, "POST", "/api/results", record.dump());
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["stored"], false);
  json changed = record;
  changed["finished_at"] = "2030-01-01T00:00:00Z";
  r = SignedSend(id, "POST", "/api/results", changed.dump());
  EXPECT_EQ(r.status, 409) << r.raw;
  EXPECT_EQ(Error(r), "result " + rid + " exists with other content");

  r = Send("GET", "/api/results", "", {});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["total"], 1);
  ASSERT_EQ(r.body["results"].size(), 1u);
  EXPECT_EQ(r.body["results"][0]["result_id"], rid);
  EXPECT_EQ(r.body["results"][0]["client_id"], id.client_id);
  EXPECT_EQ(r.body["results"][0]["benchmark_id"], record["benchmark"]["id"]);
  r = Send("GET", "/api/results?benchmark=no_such_benchmark", "", {});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["total"], 0);
  r = Send("GET", "/api/results?limit=5000", "", {});
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(Error(r), "limit must be a whole number from 1 to 1000");
  r = Send("GET", "/api/results?colour=red", "", {});
  EXPECT_EQ(r.status, 400) << r.raw;
  r = Send("GET", "/api/results/" + rid, "", {});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["result_id"], rid);
  EXPECT_EQ(r.body["samples"], record["samples"]);
  r = Send("GET", "/api/results/nope", "", {});
  EXPECT_EQ(r.status, 404) << r.raw;
  EXPECT_EQ(Error(r), "no result nope");
}

// GET /api/records pages full records with the filters of /api/results; /api/results/<prefix>
// reads a record by the short id a listing shows.
TEST_P(ServerTest, RecordsArePagedAndAShortIdReadsItsResult) {
  Identity id = Approved();
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    json record = RealRecord();
    record["started_at"] = "2026-11-30T10:00:0" + std::to_string(i) + ".000Z";
    ids.push_back(record["result_id"]);
    ASSERT_EQ(SignedSend(id, "POST", "/api/results", record.dump()).status, 201);
  }
  std::vector<std::string> seen;
  std::string target = "/api/records?limit=2";
  for (int page = 0; page < 5 && !target.empty(); ++page) {
    Response r = Send("GET", target, "", {});
    ASSERT_EQ(r.status, 200) << r.raw;
    EXPECT_EQ(r.body["total"], 5);
    EXPECT_LE(r.body["records"].size(), 2u);
    for (const json& record : r.body["records"]) {
      seen.push_back(record["result_id"]);
      EXPECT_TRUE(record.contains("samples")) << "a whole record, not a row";
    }
    target = r.body.contains("next") ? "/api/records?limit=2&cursor=" + r.body["next"].get<std::string>()
                                     : "";
  }
  EXPECT_EQ(seen, std::vector<std::string>(ids.rbegin(), ids.rend()));  // newest first, once each
  Response none = Send("GET", "/api/records?quant=NO_SUCH_QUANT", "", {});
  ASSERT_EQ(none.status, 200) << none.raw;
  EXPECT_EQ(none.body["records"].size(), 0u);
  Response big = Send("GET", "/api/records?limit=201", "", {});
  EXPECT_EQ(big.status, 400) << big.raw;
  EXPECT_EQ(Error(big), "limit must be a whole number from 1 to 200");

  // Every short id of the listing reads its own result.
  Response listed = Send("GET", "/api/results", "", {});
  ASSERT_EQ(listed.status, 200) << listed.raw;
  for (const json& row : listed.body["results"]) {
    Response shortid = Send("GET", "/api/results/" + row["short_id"].get<std::string>(), "", {});
    ASSERT_EQ(shortid.status, 200) << shortid.raw;
    EXPECT_EQ(shortid.body["result_id"], row["result_id"]);
  }
  // UUIDv7 ids made in the same millisecond share their first 8 characters, often 12.
  std::string common = ids[0];
  for (const std::string& other : ids) {
    size_t n = 0;
    while (n < common.size() && n < other.size() && common[n] == other[n]) ++n;
    common.resize(n);
  }
  if (common.size() >= 8) {
    Response ambiguous = Send("GET", "/api/results/" + common, "", {});
    EXPECT_EQ(ambiguous.status, 400) << ambiguous.raw;
    EXPECT_EQ(Error(ambiguous), "result id prefix " + common + " matches several results; give more of it");
  }
  Response too_short = Send("GET", "/api/results/" + ids[2].substr(0, 7), "", {});
  EXPECT_EQ(too_short.status, 404) << too_short.raw;
}

TEST_P(ServerTest, UnsignedRequestIsRefused) {
  Response r = Send("POST", "/api/results", RealRecord().dump(), {});
  EXPECT_EQ(r.status, 401) << r.raw;
  EXPECT_EQ(Error(r),
            "missing signature headers (X-Pipette-Client, X-Pipette-Timestamp, X-Pipette-Nonce, "
            "X-Pipette-Signature)");
}

TEST_P(ServerTest, BadSignatureIsRefused) {
  Identity id = Approved();
  Identity other = GenerateIdentity();
  const std::string body = RealRecord().dump();
  httplib::Headers h = Signed(other, "POST", "/api/results", body, Now());
  h.erase("X-Pipette-Client");
  h.emplace("X-Pipette-Client", id.client_id);
  Response r = Send("POST", "/api/results", body, h);
  EXPECT_EQ(r.status, 401) << r.raw;
  EXPECT_EQ(Error(r),
            "bad signature (the request was changed after signing, or signed with another key)");
}

TEST_P(ServerTest, BodyChangedAfterSigningIsRefused) {
  Identity id = Approved();
  json record = RealRecord();
  httplib::Headers h = Signed(id, "POST", "/api/results", record.dump(), Now());
  record["metrics"]["prefill_throughput"]["median"] = 1e9;  // a better number, after signing
  Response r = Send("POST", "/api/results", record.dump(), h);
  EXPECT_EQ(r.status, 401) << r.raw;
  EXPECT_EQ(Error(r),
            "bad signature (the request was changed after signing, or signed with another key)");
  // A changed path too: the signature covers it.
  h = Signed(id, "GET", "/api/me", "", Now());
  r = Send("GET", "/api/me?x=1", "", h);
  EXPECT_EQ(r.status, 401) << r.raw;
}

TEST_P(ServerTest, TimestampTenMinutesOldIsRefused) {
  Identity id = Approved();
  const int64_t old = Now() - 600;
  Response r = SignedSend(id, "GET", "/api/me", "", old);
  EXPECT_EQ(r.status, 401) << r.raw;
  // The server's clock may tick between signing and checking.
  const std::string e = Error(r);
  EXPECT_TRUE(e == "timestamp " + std::to_string(old) +
                       " is 600 s away from the server's clock (window +-300 s); fix the "
                       "device's clock" ||
              e == "timestamp " + std::to_string(old) +
                       " is 601 s away from the server's clock (window +-300 s); fix the "
                       "device's clock")
      << e;
}

TEST_P(ServerTest, ReplayedNonceIsRefusedAlsoAfterARestart) {
  Identity id = Approved();
  const std::string body = RealRecord().dump();
  const httplib::Headers h = Signed(id, "POST", "/api/results", body, Now());
  Response r = Send("POST", "/api/results", body, h);
  ASSERT_EQ(r.status, 201) << r.raw;
  r = Send("POST", "/api/results", body, h);
  EXPECT_EQ(r.status, 401) << r.raw;
  EXPECT_EQ(Error(r), "nonce already used");
  Restart();
  r = Send("POST", "/api/results", body, h);
  EXPECT_EQ(r.status, 401) << r.raw;
  EXPECT_EQ(Error(r), "nonce already used");
}

TEST_P(ServerTest, UnknownPendingAndRevokedClientsAreRefused) {
  Identity stranger = GenerateIdentity();
  Response r = SignedSend(stranger, "GET", "/api/me", "");
  EXPECT_EQ(r.status, 401) << r.raw;
  EXPECT_EQ(Error(r),
            "unknown client " + stranger.client_id + "; register it first (pipette register)");

  Identity pending = GenerateIdentity();
  r = Register(pending, "", "p");
  ASSERT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(r.body["status"], "pending");
  r = SignedSend(pending, "POST", "/api/results", RealRecord().dump());
  EXPECT_EQ(r.status, 403) << r.raw;
  EXPECT_EQ(Error(r), "client " + pending.client_id +
                          " is pending approval (pipette serve clients approve " +
                          pending.client_id + ")");
  ASSERT_TRUE(store_->SetClientStatus(pending.client_id, ClientStatus::kApproved).ok());
  r = SignedSend(pending, "POST", "/api/results", RealRecord().dump());
  EXPECT_EQ(r.status, 201) << r.raw;

  // Revoked after the server has seen it approved (its key is kept, the store checks the status):
  // refused as revoked, also with a record that would be a 400 from an approved client.
  ASSERT_TRUE(store_->SetClientStatus(pending.client_id, ClientStatus::kRevoked).ok());
  const json record = RealRecord();
  r = SignedSend(pending, "POST", "/api/results", record.dump());
  EXPECT_EQ(r.status, 403) << r.raw;
  EXPECT_EQ(Error(r), "client " + pending.client_id + " is revoked");
  r = SignedSend(pending, "POST", "/api/results", "{\"schema\": 1}");
  EXPECT_EQ(r.status, 403) << r.raw;
  EXPECT_EQ(Error(r), "client " + pending.client_id + " is revoked");
  EXPECT_FALSE(store_->GetResult(record["result_id"])->has_value());
  ASSERT_TRUE(store_->SetClientStatus(pending.client_id, ClientStatus::kApproved).ok());
  r = SignedSend(pending, "POST", "/api/results", record.dump());
  EXPECT_EQ(r.status, 201) << r.raw;
  r = SignedSend(pending, "POST", "/api/results", "{\"schema\": 1}");
  EXPECT_EQ(r.status, 400) << r.raw;
}

TEST_P(ServerTest, OversizedBodiesAre413) {
  Identity id = Approved();
  // A small endpoint: over max_body_bytes (64 KiB).
  const std::string big = json{{"name", std::string(70000, 'x')}, {"jobs", json::array()}}.dump();
  Response r = SignedSend(id, "POST", "/api/plans", big);
  EXPECT_EQ(r.status, 413) << r.raw;
  EXPECT_EQ(Error(r), "request body is too large (limit 65536 bytes)");
  // The connection still works afterwards.
  r = Send("GET", "/health", "", {});
  EXPECT_EQ(r.status, 200) << r.raw;
}

TEST_P(ServerTest, AFormEncodedBodyOverHttplibsFormLimitIs413SayingSo) {
  // What `curl --data` sends by default; httplib refuses such a body over 8192 bytes itself.
  Response r = Parse(client_->Post("/api/results", std::string(10000, 'x'),
                                   "application/x-www-form-urlencoded"));
  EXPECT_EQ(r.status, 413) << r.raw;
  EXPECT_EQ(Error(r),
            "a form-encoded body is limited to 8192 bytes; send JSON with Content-Type: "
            "application/json");
}

TEST_P(ServerTest, RecordOverTheRecordLimitIs413) {
  options_.max_record_bytes = 100000;
  Restart();
  Identity id = Approved();
  json record = RealRecord();
  record["logs"]["runtime_stderr_tail"] = std::string(200000, 'x');
  Response r = SignedSend(id, "POST", "/api/results", record.dump());
  EXPECT_EQ(r.status, 413) << r.raw;
  EXPECT_EQ(Error(r), "request body is too large (limit 100000 bytes)");
}

// Issue 24: a signed POST of 100,000 nested arrays (200 KB, under --max-record) killed the
// server with a stack overflow. Every endpoint that reads a body refuses deep nesting with a 400
// and one line, and the server goes on serving.
// Issue 24: 120 TCP connections opened and left idle (no request sent) starved the server: each
// held a request thread until its read timed out, and /health got no answer within 20 s. With
// 1,000 idle connections /health answers within a second, and a signed client gets through.
// Issue 24: every response, API or page, success or refusal, carries the security headers.
// Issue 24: a backup taken while signed submissions keep arriving holds every record
// acknowledged before it began, and opens as a fleet database of its own.
TEST_P(ServerTest, ABackupTakenUnderLoadHoldsEveryAcknowledgedRecord) {
  if (GetParam() != std::string("sqlite")) {
    const Status refused = BackupFleetDb(db_, dir_.string() + "/never.db");
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("pg_dump"), std::string::npos);
    return;
  }
  Identity id = Approved();
  std::mutex mu;
  std::vector<std::string> acknowledged;
  std::atomic<bool> stop{false};
  std::thread load([&] {
    httplib::Client c("127.0.0.1", server_->port());
    while (!stop) {
      json record = RealRecord();
      record["result_id"] = NewUuidV7();
      const std::string body = record.dump();
      auto r = c.Post("/api/results", Signed(id, "POST", "/api/results", body, Now()), body,
                      "application/json");
      if (r && r->status == 201) {
        std::lock_guard<std::mutex> lock(mu);
        acknowledged.push_back(record["result_id"]);
      }
    }
  });
  for (bool enough = false; !enough;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::lock_guard<std::mutex> lock(mu);
    enough = acknowledged.size() >= 50;
  }
  std::vector<std::string> before;
  {
    std::lock_guard<std::mutex> lock(mu);
    before = acknowledged;
  }
  const std::string copy = dir_.string() + "/backup.db";
  const Status taken = BackupFleetDb(db_, copy);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the load goes on after it
  stop = true;
  load.join();
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_GT(acknowledged.size(), before.size());
  auto restored = OpenFleetStore(copy);
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  for (const std::string& rid : before) {
    auto got = (*restored)->GetResult(rid);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_TRUE(got->has_value()) << rid << " was acknowledged before the backup began";
  }
  const Status again = BackupFleetDb(db_, copy);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("exists; give a new file"), std::string::npos);
  // Only a fleet database is backed up: an empty file or another program's is refused.
  const std::string empty = dir_.string() + "/empty.db";
  std::ofstream(empty) << "";
  const Status foreign = BackupFleetDb(empty, dir_.string() + "/never.db");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("is not a pipette fleet database"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_.string() + "/never.db"));
}

TEST_P(ServerTest, EveryResponseCarriesTheSecurityHeaders) {
  httplib::Client c("127.0.0.1", server_->port());
  for (const char* path : {"/health", "/", "/devices", "/static/dashboard.css", "/api/results",
                           "/no/such/page", "/api/nothing", "/?sort=<b>bad</b>"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    const std::string csp = r->get_header_value("Content-Security-Policy");
    EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << path << ": " << csp;
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << path;
    EXPECT_EQ(csp.find("script-src"), std::string::npos) << path;  // none allowed: default-src
    EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(r->get_header_value("Referrer-Policy"), "no-referrer") << path;
    EXPECT_EQ(r->get_header_value("X-Frame-Options"), "DENY") << path;
    if (r->status >= 400) {  // an error that echoes input is text (or JSON), never markup
      EXPECT_EQ(r->get_header_value("Content-Type").find("text/html"), std::string::npos)
          << path << ": " << r->body;
    }
  }
  auto unsigned_post = c.Post("/api/results", "{}", "application/json");
  ASSERT_TRUE(unsigned_post);
  EXPECT_EQ(unsigned_post->get_header_value("X-Content-Type-Options"), "nosniff");
}

TEST_P(ServerTest, IdleConnectionsDoNotStarveTheServer) {
  Identity id = Approved();
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      break;  // refused: the server caps what one peer may hold open
    }
    idle.push_back(fd);
  }
  EXPECT_GE(idle.size(), 120u);
  // A slow sender too: half a request head, never finished.
  ASSERT_FALSE(idle.empty());
  const std::string half = "GET /health HTTP/1.1\r\nHost: x\r\n";
  ASSERT_EQ(::send(idle.front(), half.data(), half.size(), 0), static_cast<ssize_t>(half.size()));
  httplib::Client fresh("127.0.0.1", server_->port());
  fresh.set_connection_timeout(1, 0);
  fresh.set_read_timeout(1, 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto health = fresh.Get("/health");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(health) << "no answer to /health within 1 s with " << idle.size()
                      << " idle connections open";
  EXPECT_EQ(health->status, 200);
  EXPECT_LT(seconds, 1.0);
  std::cout << "/health with " << idle.size() << " idle connections: " << seconds * 1000
            << " ms" << std::endl;
  client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  client_->set_read_timeout(10, 0);
  EXPECT_EQ(SignedSend(id, "POST", "/api/results", RealRecord().dump()).status, 201);
  for (int fd : idle) ::close(fd);
  // A head of 10,000 small header lines (over 16 KiB) is refused before any thread reads it.
  httplib::Headers many;
  for (int i = 0; i < 10000; ++i) many.emplace("X-Filler-" + std::to_string(i), "x");
  auto big = fresh.Get("/health", many);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 431);
}

TEST_P(ServerTest, DeeplyNestedBodiesAre400AndTheServerLives) {
  Identity id = Approved();
  // Deep bodies within each endpoint's size limit (64 KiB but for records).
  const auto arrays = [](int n) { return std::string(n, '[') + std::string(n, ']'); };
  std::string objects;
  for (int i = 0; i < 10000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(10000, '}');
  const std::vector<std::string> bodies = {arrays(30000), objects,
                                           "{\"profile\":" + arrays(30000) + "}"};
  const std::string record = arrays(100000);
  for (const char* target : {"/api/results", "/api/register", "/api/plans", "/api/jobs/claim",
                             "/api/jobs/job_0/result", "/api/jobs/job_0/fail"}) {
    std::vector<const std::string*> sent;
    for (const std::string& b : bodies) sent.push_back(&b);
    if (std::string(target).ends_with("result") || std::string(target).ends_with("results")) {
      sent.push_back(&record);
    }
    for (const std::string* body : sent) {
      Response r = SignedSend(id, "POST", target, *body);
      EXPECT_EQ(r.status, 400) << target << ": " << r.raw.substr(0, 200);
      EXPECT_NE(Error(r).find("nested deeper than 64 levels"), std::string::npos)
          << target << ": " << Error(r);
    }
  }
  EXPECT_EQ(Send("GET", "/health", "", {}).status, 200);
  EXPECT_EQ(SignedSend(id, "POST", "/api/results", RealRecord().dump()).status, 201);
}

TEST_P(ServerTest, MalformedRecordIs400NamingTheField) {
  Identity id = Approved();
  json record = RealRecord();
  record["benchmark"].erase("id");
  Response r = SignedSend(id, "POST", "/api/results", record.dump());
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(Error(r).rfind("/benchmark", 0), 0u) << Error(r);
  EXPECT_NE(Error(r).find("id"), std::string::npos) << Error(r);
  record = RealRecord();
  record["metrics"]["prefill_throughput"]["median"] = "fast";
  r = SignedSend(id, "POST", "/api/results", record.dump());
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(Error(r).rfind("/metrics/prefill_throughput/median", 0), 0u) << Error(r);
  r = SignedSend(id, "POST", "/api/results", "{not json");
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(Error(r),
            "the request body is not valid JSON (byte 1: missing a name for object member)");
  std::string twice = RealRecord().dump();
  twice.insert(1, R"("status":"failed",)");
  r = SignedSend(id, "POST", "/api/results", twice);
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(Error(r), "/status: given twice (a member name may appear once in an object)");
  // PostgreSQL cannot store U+0000: refused on both backends, as the client's fault (a 5xx would
  // have the outbox send it again and again).
  record = RealRecord();
  record["runtime"]["settings"]["note"] = std::string("a\0b", 3);
  r = SignedSend(id, "POST", "/api/results", record.dump());
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(Error(r).rfind("/runtime/settings/note: holds U+0000", 0), 0u) << Error(r);
}

TEST_P(ServerTest, RateLimitIs429WithRetryAfter) {
  options_.rate_per_client = 1;  // bursts of 2
  Restart();
  Identity id = Approved();
  int refused = 0;
  Response last;
  for (int i = 0; i < 4; ++i) {
    last = SignedSend(id, "GET", "/api/me", "");
    if (last.status == 429) ++refused;
  }
  EXPECT_GE(refused, 1);
  EXPECT_EQ(last.status, 429) << last.raw;
  EXPECT_EQ(Error(last), "rate limit: 1 requests/s per client; retry after 1 s");
  EXPECT_EQ(last.retry_after, "1");
}

TEST_P(ServerTest, PlanClaimHeartbeatResultAndStatus) {
  Identity worker = Approved("w1");
  const json caps = {{"labels", {"x86"}},
                     {"arch", "x86_64"},
                     {"memory_bytes", 1ll << 33},
                     {"runtimes", {"llamacpp"}},
                     {"models", {std::string(64, 'a')}}};
  // The first claim reports the worker's capabilities; nothing is queued yet.
  Response r = SignedSend(worker, "POST", "/api/jobs/claim", caps.dump());
  ASSERT_EQ(r.status, 204) << r.raw;

  const json job = {{"benchmark", "prefill_throughput_100"},
                    {"model", {{"sha256", std::string(64, 'a')}, {"file_name", "m.gguf"}}},
                    {"runtime", "llamacpp"},
                    {"requires", {{"labels", {"x86"}}, {"models", {std::string(64, 'a')}}}}};
  json unknown_model = job;
  unknown_model["requires"]["models"] = {std::string(64, 'b')};
  const json plan = {{"name", "p"}, {"jobs", {job, unknown_model}}};
  r = SignedSend(worker, "POST", "/api/plans", plan.dump());
  ASSERT_EQ(r.status, 201) << r.raw;
  const std::string plan_id = r.body["plan_id"];
  EXPECT_EQ(r.body["jobs"], 2);
  ASSERT_EQ(r.body["unassignable"].size(), 1u) << r.raw;
  EXPECT_EQ(r.body["unassignable"][0]["index"], 1);
  EXPECT_NE(r.body["unassignable"][0]["reason"].get<std::string>().find("no approved device"),
            std::string::npos);

  r = SignedSend(worker, "POST", "/api/jobs/claim", caps.dump());
  ASSERT_EQ(r.status, 200) << r.raw;
  const std::string job_id = r.body["job"]["job_id"];
  EXPECT_EQ(r.body["job"]["index"], 0);
  EXPECT_EQ(r.body["job"]["spec"]["benchmark"], "prefill_throughput_100");
  EXPECT_GT(r.body["lease_expires_at"].get<int64_t>(), Now());
  r = SignedSend(worker, "PUT", "/api/jobs/" + job_id + "/heartbeat", "");
  ASSERT_EQ(r.status, 200) << r.raw;
  // Another worker cannot heartbeat or complete it.
  Identity other = Approved("w2");
  r = SignedSend(other, "PUT", "/api/jobs/" + job_id + "/heartbeat", "");
  EXPECT_EQ(r.status, 409) << r.raw;
  EXPECT_EQ(Error(r), "lease lost: job " + job_id + " is no longer leased to this client");

  const json record = RealRecord();
  r = SignedSend(worker, "POST", "/api/jobs/" + job_id + "/result", record.dump());
  ASSERT_EQ(r.status, 201) << r.raw;
  r = SignedSend(worker, "POST", "/api/jobs/" + job_id + "/result", record.dump());
  EXPECT_EQ(r.status, 200) << r.raw;

  r = SignedSend(worker, "GET", "/api/plans/" + plan_id, "");
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["counts"]["done"], 1);
  EXPECT_EQ(r.body["counts"]["queued"], 1);
  EXPECT_EQ(r.body["jobs"][0]["state"], "done");
  EXPECT_EQ(r.body["jobs"][0]["result_id"], record["result_id"]);
  EXPECT_EQ(r.body["per_client"][worker.client_id]["done"], 1);
  r = SignedSend(worker, "GET", "/api/plans/plan_nope", "");
  EXPECT_EQ(r.status, 404) << r.raw;
}

TEST_P(ServerTest, UnknownApiPathIsJson404) {
  Response r = Send("GET", "/api/nothing", "", {});
  EXPECT_EQ(r.status, 404) << r.raw;
  EXPECT_EQ(Error(r), "no such endpoint: GET /api/nothing");
  r = Send("POST", "/nothing", "{}", {});
  EXPECT_EQ(r.status, 404) << r.raw;
  EXPECT_EQ(Error(r), "no such endpoint: POST /nothing");
}

TEST_P(ServerTest, DashboardIsServedAtTheRoot) {
  httplib::Result res = client_->Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body.substr(0, 300);
  EXPECT_NE(res->get_header_value("Content-Type").find("text/html"), std::string::npos);
  res = client_->Get("/results/no-such-result");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404) << res->body.substr(0, 300);
  // Bytes that are not UTF-8 in a path or filter name nothing: a 400 on both backends
  // (PostgreSQL refuses them in a query).
  const std::string line = "the path or query is not UTF-8 text; percent-encode UTF-8 bytes";
  Response api = Send("GET", "/api/results?benchmark=%FF", "", {});
  EXPECT_EQ(api.status, 400) << api.raw;
  EXPECT_EQ(Error(api), line);
  for (const char* page : {"/?label=%E9", "/results/%E9%E9%E9%E9",
                           "/compare?a=%E9%E9%E9%E9%E9%E9%E9%E9&b=x"}) {
    res = client_->Get(page);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << page << ": " << res->body;
    EXPECT_EQ(res->body, line + "\n") << page;  // text, as every page's error
  }
}

// The database stopped under the running server: every request that needs it is 503 with one
// line (the store's detail stays in the log), /health too; once it is back the same server
// serves again and the refused submission goes through, once.
TEST_P(ServerTest, DatabaseGoneIs503WithOneLineAndServesAgainWhenBack) {
  if (GetParam() != "postgresql") GTEST_SKIP() << "only a database server can go away";
#ifdef PIPETTE_HAVE_TEST_POSTGRES
  Identity id = Approved();
  const json record = RealRecord();
  ASSERT_TRUE(testing::StopTestPostgres().ok());
  const std::string line = "the database is not answering; retry later";
  for (int i = 0; i < 2; ++i) {  // a broken kept connection, then refused new ones
    Response r = SignedSend(id, "POST", "/api/results", record.dump());
    EXPECT_EQ(r.status, 503) << r.raw;
    EXPECT_EQ(Error(r), line);
    EXPECT_EQ(r.raw.find("fleet store"), std::string::npos) << "no internals: " << r.raw;
  }
  Response r = Send("GET", "/health", "", {});
  EXPECT_EQ(r.status, 503) << r.raw;
  EXPECT_EQ(Error(r), line);
  r = Send("GET", "/api/results", "", {});
  EXPECT_EQ(r.status, 503) << r.raw;
  EXPECT_EQ(Error(r), line);
  r = SignedSend(id, "POST", "/api/jobs/claim", "{}");
  EXPECT_EQ(r.status, 503) << r.raw;
  httplib::Result page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 503);
  EXPECT_EQ(page->body, line + "\n");

  ASSERT_TRUE(testing::StartTestPostgres().ok());
  r = Send("GET", "/health", "", {});
  EXPECT_EQ(r.status, 200) << r.raw;
  r = SignedSend(id, "POST", "/api/results", record.dump());
  EXPECT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(*store_->CountResults(), 1);
#endif
}

// The SQLite database at its quota (ServerOptions::db_max_size_bytes, SQLITE_FULL as on a full
// disk): a submission is 507 with one line and leaves nothing behind; reads and /health go on;
// with room again the same record is stored.
TEST_P(ServerTest, FullDatabaseIs507NothingHalfStoredAndReadsGoOn) {
  if (GetParam() != "sqlite") GTEST_SKIP() << "the quota is SQLite's (max_page_count)";
  Identity id = Approved();
  const json stored = RealRecord();
  ASSERT_EQ(SignedSend(id, "POST", "/api/results", stored.dump()).status, 201);
  // Every connection closed, the file holds all pages: one page of room above that.
  server_.reset();
  store_.reset();
  options_.db_max_size_bytes = static_cast<int64_t>(fs::file_size(db_)) + 4096;
  Start();
  store_ = std::move(OpenFleetStore(db_).value());

  const json record = RealRecord();
  Response r = SignedSend(id, "POST", "/api/results", record.dump());
  EXPECT_EQ(r.status, 507) << r.raw;
  EXPECT_EQ(Error(r), "the server's disk is full; the result was not stored");
  EXPECT_EQ(*store_->CountResults(), 1);
  auto missing = store_->GetResult(record["result_id"]);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  r = Send("GET", "/api/results", "", {});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["total"], 1);
  EXPECT_EQ(Send("GET", "/health", "", {}).status, 200);
  EXPECT_EQ(Send("GET", "/api/results/" + stored["result_id"].get<std::string>(), "", {}).status,
            200);

  server_.reset();
  options_.db_max_size_bytes = 0;
  Start();
  r = SignedSend(id, "POST", "/api/results", record.dump());
  EXPECT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(*store_->CountResults(), 2);
}

INSTANTIATE_TEST_SUITE_P(Backends, ServerTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

TEST(ServeTest, AddressInUseSaysSo) {
  const fs::path dir =
      fs::temp_directory_path() / ("pipette-serve-inuse-" + NewNonce().substr(0, 8));
  fs::create_directories(dir);
  ServerOptions options;
  options.db = (dir / "fleet.db").string();
  {
    RunningServer first(options);
    ASSERT_GT(first.port(), 0);
    options.port = first.port();
    ServeHooks hooks;
    hooks.handle_signals = false;
    Status s = Serve(options, hooks);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "cannot listen on 127.0.0.1:" + std::to_string(first.port()) +
                                     ": address in use; pick another listen address");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipette
