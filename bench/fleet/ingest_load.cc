// Ingest load on `pipette serve` (issue 10: at least 2,000 signed submissions/s on SQLite): starts
// the built server as a process on a free loopback port over a fresh database, registers one
// device with a pre-authorization key, pre-signs N submissions of a real record (distinct
// result_ids), sends them over K keep-alive connections, and reports submissions/s and the
// p50/p99 latency; then stops the server with SIGTERM and checks that the database holds N
// results.
//
//   ingest_load --pipette build/src/cli/pipette [-n 20000] [-c 4] [--db PATH|postgresql://URL]
//               [--threads 8] [--record FILE] [--via-nginx [--nginx-workers 1]]
//
// --via-nginx: the same load through real nginx terminating TLS in front of the server, with the
// deployment's site file (deploy/nginx/pipette.conf, tests/support/nginx_proxy.h) and the server
// started with --trusted-proxy 127.0.0.1; the connections are TLS keep-alive connections to nginx.
//
// The server runs with --rate-limit 0: the limit is per client, and one client sends all of it.
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
#include "pipette/fleet_store.h"
#include "pipette/identity.h"
#include "platform/process.h"
#include "raw_http.h"
#ifdef PIPETTE_HAVE_NGINX_PROXY
#include "tests/support/nginx_proxy.h"
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string pipette;
  std::string db;
  std::string record =
      std::string(PIPETTE_SOURCE_DIR) + "/src/server/testdata/stories260k_prefill_record.json";
  int n = 20000;
  int connections = 4;
  int threads = 8;
  bool via_nginx = false;
  int nginx_workers = 1;
};

int Fail(const std::string& line) {
  std::cerr << "ingest_load: " << line << std::endl;
  return 1;
}

// A submission's request, signed and written out before the clock starts.
struct Prepared {
  std::string body;
  std::string request;
};

httplib::Headers Headers(const pipette::SignedHeaders& h) {
  return {{"X-Pipette-Client", h.client_id},
          {"X-Pipette-Timestamp", h.timestamp},
          {"X-Pipette-Nonce", h.nonce},
          {"X-Pipette-Signature", h.signature}};
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "-h" || k == "--help") {
      std::cout
          << "usage: ingest_load --pipette build/src/cli/pipette [-n 20000] [-c 4] "
             "[--db PATH|postgresql://URL] [--threads 8] [--record FILE]\n"
             "Starts `pipette serve` over a fresh database (SQLite in a temporary folder, or the "
             "given one), registers a device, signs N submissions of a real record beforehand, "
             "sends them over C keep-alive connections and prints submissions/s and latency.\n"
             "  --pipette PATH  the pipette binary to serve with\n"
             "  -n N            submissions (default 20000)\n"
             "  -c C            connections, each sending one request at a time (default 4)\n"
             "  --threads T     the server's --threads (default 8; give T >= C)\n"
             "  --db DB         a SQLite file or an empty PostgreSQL database "
             "(scripts/pg-test-server.sh makes one)\n"
             "  --record FILE   the record to submit (default: the stories260K prefill record)\n"
             "  --via-nginx     through real nginx with TLS (deploy/nginx/pipette.conf)\n"
             "  --nginx-workers W  nginx's worker processes (default 1)\n";
      return 0;
    }
    if (k == "--pipette")
      a.pipette = next();
    else if (k == "--db")
      a.db = next();
    else if (k == "--record")
      a.record = next();
    else if (k == "-n")
      a.n = std::stoi(next());
    else if (k == "-c")
      a.connections = std::stoi(next());
    else if (k == "--threads")
      a.threads = std::stoi(next());
    else if (k == "--via-nginx")
      a.via_nginx = true;
    else if (k == "--nginx-workers")
      a.nginx_workers = std::stoi(next());
    else
      return Fail("unknown argument " + k + " (see the comment at the top of ingest_load.cc)");
  }
  if (a.pipette.empty()) return Fail("give --pipette PATH (the built pipette binary)");
  const fs::path dir =
      fs::temp_directory_path() / ("pipette-ingest-" + pipette::NewNonce().substr(0, 8));
  fs::create_directories(dir);
  if (a.db.empty()) a.db = (dir / "fleet.db").string();

  // A key for the device, then the server.
  pipette::Result<pipette::ChildProcess> keys = pipette::ChildProcess::Start(
      {a.pipette, "serve", "keys", "create", "--db", a.db}, (dir / "keys.err").string());
  if (!keys.ok()) return Fail(keys.error().message);
  std::optional<std::string> token = keys->ReadLine(std::chrono::milliseconds(10000));
  keys->Wait();
  if (!token || token->rfind("preauth_", 0) != 0) return Fail("keys create printed no token");

  std::vector<std::string> serve = {a.pipette,  "serve",        "--listen",
                                    "127.0.0.1:0", "--db",        a.db,
                                    "--rate-limit", "0",          "--threads",
                                    std::to_string(a.threads)};
  if (a.via_nginx) serve.insert(serve.end(), {"--trusted-proxy", "127.0.0.1"});
  pipette::Result<pipette::ChildProcess> server =
      pipette::ChildProcess::Start(serve, (dir / "serve.err").string());
  if (!server.ok()) return Fail(server.error().message);
  std::optional<std::string> line = server->ReadLine(std::chrono::milliseconds(20000));
  std::smatch m;
  if (!line || !std::regex_search(*line, m, std::regex(R"(http://127\.0\.0\.1:(\d+))"))) {
    return Fail("the server did not say where it listens; see " + (dir / "serve.err").string());
  }
  const int port = std::stoi(m[1].str());
  std::cout << *line << "\n";

  const pipette::Identity id = pipette::GenerateIdentity();
  {
    httplib::Client cli("127.0.0.1", port);
    const std::string body = json{
        {"public_key", id.public_key_hex},
        {"label", "ingest-load"},
        {"preauth_key", *token}}.dump();
    httplib::Result res = cli.Post(
        "/api/register",
        Headers(pipette::SignRequest(id, "POST", "/api/register", body, std::time(nullptr))), body,
        "application/json");
    if (!res || res->status != 201) return Fail("registration failed");
  }

  std::ifstream in(a.record);
  json record = json::parse(in, nullptr, false);
  if (record.is_discarded()) return Fail("cannot read the record " + a.record);
  std::vector<Prepared> prepared(static_cast<size_t>(a.n));
  const auto sign_start = Clock::now();
  const int64_t now = std::time(nullptr);
  for (Prepared& p : prepared) {
    record["result_id"] = pipette::NewUuidV7();
    p.body = record.dump();
    std::string head;
    for (const auto& [name, value] :
         Headers(pipette::SignRequest(id, "POST", "/api/results", p.body, now))) {
      head += name + ": " + value + "\r\n";
    }
    p.request = pipette::bench::HttpRequest("POST", "/api/results", head, p.body);
  }
  const double sign_s = std::chrono::duration<double>(Clock::now() - sign_start).count();

  // Through nginx: TLS to its port, the certificate verified against the CA made for it.
  int send_port = port;
  SSL_CTX* tls = nullptr;
#ifdef PIPETTE_HAVE_NGINX_PROXY
  std::unique_ptr<pipette::testing::NginxProxy> proxy;
  if (a.via_nginx) {
    fs::create_directories(dir / "nginx");
    auto started = pipette::testing::NginxProxy::Start((dir / "nginx").string(), port,
                                                       a.nginx_workers);
    if (!started.ok()) return Fail(started.error().message);
    proxy = std::move(started).value();
    send_port = proxy->https_port();
    tls = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(tls, SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_load_verify_locations(tls, proxy->ca_file().c_str(), nullptr) != 1) {
      return Fail("cannot load " + proxy->ca_file());
    }
    std::cout << "through nginx (TLS) at " << proxy->url() << "\n";
  }
#else
  if (a.via_nginx) return Fail("--via-nginx needs a build with tests (tests/support/nginx_proxy)");
#endif

  std::atomic<size_t> next{0};
  std::atomic<int> created{0}, other{0};
  std::vector<std::vector<double>> latencies(static_cast<size_t>(a.connections));
  const auto start = Clock::now();
  std::vector<std::thread> senders;
  for (int c = 0; c < a.connections; ++c) {
    senders.emplace_back([&, c] {
      pipette::bench::RawHttpConnection connection(send_port, tls);
      std::string answer;
      for (size_t i; (i = next.fetch_add(1)) < prepared.size();) {
        const auto t0 = Clock::now();
        const int status = connection.Send(prepared[i].request, &answer);
        latencies[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (status == 201) {
          ++created;
        } else if (other++ < 5) {
          std::cerr << "ingest_load: "
                    << (status > 0 ? std::to_string(status) + " " + answer
                                   : std::string("no answer"))
                    << "\n";
        }
      }
    });
  }
  for (std::thread& t : senders) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());

#ifdef PIPETTE_HAVE_NGINX_PROXY
  proxy.reset();
#endif
  if (tls != nullptr) SSL_CTX_free(tls);
  server->Kill(SIGTERM);
  std::optional<pipette::ExitInfo> exit = server->Wait(std::chrono::milliseconds(20000));

  int64_t stored = -1;
  if (auto store = pipette::OpenFleetStore(a.db); store.ok()) {
    if (auto count = (*store)->CountResults(); count.ok()) stored = *count;
  }
  std::printf(
      "ingest_load: %d signed submissions (%zu-byte record) over %d keep-alive connections%s, "
      "server threads %d, store %s\n"
      "  %.0f submissions/s (%.2f s); latency p50 %.2f ms, p99 %.2f ms, max %.2f ms\n"
      "  201: %d, other: %d; results in the database: %lld; signing took %.2f s (not "
      "counted); server exit: %s\n",
      a.n, prepared.empty() ? size_t{0} : prepared[0].body.size(), a.connections,
      a.via_nginx ? " through nginx (TLS)" : "", a.threads,
      a.db.c_str(), a.n / seconds, seconds, Percentile(all, 0.50), Percentile(all, 0.99),
      Percentile(all, 1.0), created.load(), other.load(), static_cast<long long>(stored), sign_s,
      exit ? exit->Describe().c_str() : "still running");
  fs::remove_all(dir);
  return created.load() == a.n && stored == a.n && exit && exit->exited && exit->code == 0 ? 0 : 1;
}
