// The fleet behind the supported deployment (issue 24, item 3): real nginx with
// deploy/nginx/pipette.conf terminating TLS (a certificate made here by a CA made here) in front
// of `pipette serve` started with deploy/systemd/pipette-serve.service's command line. Through it:
// register (refused without the CA, verified with --ca-file), a signed submission, a signed
// request whose path the proxy must pass byte for byte, a plan run by a worker, the dashboard;
// the per-address rate limit keyed by the address nginx reports and by nothing a client writes;
// a thousand idle connections held at the proxy while /health still answers.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
#include "cli_runner.h"
#include "model_fixtures.h"
#include "pipette/fleet_client.h"
#include "pipette/fleet_store.h"
#include "pipette/identity.h"
#include "platform/process.h"
#include "tests/support/nginx_proxy.h"

namespace pipette::testing_models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The unit's ExecStart, split on spaces (it has no quoting).
std::vector<std::string> UnitCommand() {
  std::istringstream unit(ReadFile(std::string(PIPETTE_SOURCE_DIR) +
                                   "/deploy/systemd/pipette-serve.service"));
  for (std::string line; std::getline(unit, line);) {
    if (line.rfind("ExecStart=", 0) != 0) continue;
    std::istringstream words(line.substr(10));
    std::vector<std::string> argv;
    for (std::string w; words >> w;) argv.push_back(w);
    return argv;
  }
  return {};
}

struct Answer {
  long status = 0;
  std::string body;
  std::string headers;  // lowercased (HTTP/2 sends them so)
  std::string error;    // curl's, when no answer came
};

// One HTTPS or HTTP request with libcurl: from `source` (a loopback address to send from; empty:
// any), trusting `ca_file`, with `extra_headers`.
Answer Fetch(const std::string& url, const std::string& ca_file, const std::string& source = "",
             const std::vector<std::string>& extra_headers = {}, const char* method = nullptr) {
  Answer a;
  CURL* c = curl_easy_init();
  char err[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  for (const auto& h : extra_headers) headers = curl_slist_append(headers, h.c_str());
  const auto write = +[](char* p, size_t size, size_t n, void* out) {
    static_cast<std::string*>(out)->append(p, size * n);
    return size * n;
  };
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, write);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &a.headers);
  if (!ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, ca_file.c_str());
  if (!source.empty()) curl_easy_setopt(c, CURLOPT_INTERFACE, source.c_str());
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (method != nullptr && std::string(method) == "POST") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");  // an empty body, Content-Length: 0
  } else if (method != nullptr) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  }
  // HTTP/1.1, as pipette's clients speak it (and as the oversized-body check needs: HTTP/2 refuses
  // a declared length no body follows before nginx looks at the size).
  curl_easy_setopt(c, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  if (curl_easy_perform(c) == CURLE_OK) {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.status);
  } else {
    a.error = err;
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  for (char& ch : a.headers) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return a;
}

class FleetBehindNginx : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(WorkDir()) / ("fleet-proxy-" + NewNonce().substr(0, 8));
    fs::create_directories(dir_ / "nginx");
    fs::create_directories(dir_ / "models");
    fs::copy_file(TinySynthetic(), dir_ / "models" / "tiny.gguf");
    db_ = (dir_ / "fleet.db").string();
    setenv("PIPETTE_IDENTITY", (dir_ / "identity.json").c_str(), 1);
    setenv("PIPETTE_OUTBOX", (dir_ / "outbox").c_str(), 1);

    // The server exactly as the unit starts it, but for the binary, the port and the database.
    std::vector<std::string> argv = UnitCommand();
    ASSERT_FALSE(argv.empty()) << "no ExecStart= in deploy/systemd/pipette-serve.service";
    ASSERT_EQ(argv[0], "/usr/local/bin/pipette");
    argv[0] = Binary("pipette");
    for (std::string& a : argv) {
      if (a == "127.0.0.1:8750") a = "127.0.0.1:0";
      if (a == "/var/lib/pipette/fleet.db") a = db_;
    }
    // Small enough that the rate-limit test runs out in a few requests.
    argv.insert(argv.end(), {"--address-rate-limit", "5"});
    serve_err_ = dir_ / "serve.err";
    Result<ChildProcess> child = ChildProcess::Start(argv, serve_err_.string());
    ASSERT_TRUE(child.ok()) << child.error().message;
    server_.emplace(std::move(child).value());
    const std::optional<std::string> line = server_->ReadLine(std::chrono::milliseconds(10000));
    ASSERT_TRUE(line.has_value()) << ReadFile(serve_err_);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(*line, m, std::regex(R"(listening on http://127\.0\.0\.1:(\d+))")))
        << *line;
    port_ = std::stoi(m[1].str());

    auto proxy = pipette::testing::NginxProxy::Start((dir_ / "nginx").string(), port_);
    if (!proxy.ok()) {
      if (proxy.error().message.find("install") != std::string::npos) {
        GTEST_SKIP() << proxy.error().message;
      }
      FAIL() << proxy.error().message;
    }
    proxy_ = std::move(proxy).value();
    url_ = proxy_->url();
    ca_ = proxy_->ca_file();
  }
  void TearDown() override {
    proxy_.reset();
    if (server_) {
      server_->Kill(SIGTERM);
      server_->Wait();
    }
    unsetenv("PIPETTE_IDENTITY");
    unsetenv("PIPETTE_OUTBOX");
  }

  std::string NewKey() {
    CliResult r = RunPipette({"serve", "keys", "create", "--db", db_});
    EXPECT_EQ(r.exit.code, 0) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  }
  int64_t ResultsOnServer() {
    auto store = OpenFleetStore(db_);
    if (!store.ok()) return -1;
    auto n = (*store)->CountResults();
    return n.ok() ? *n : -1;
  }
  std::string Logs() { return ReadFile(serve_err_) + "\nnginx: " + proxy_->error_log(); }

  fs::path dir_, serve_err_;
  std::string db_, url_, ca_;
  int port_ = 0;
  std::optional<ChildProcess> server_;
  std::unique_ptr<pipette::testing::NginxProxy> proxy_;
};

TEST_F(FleetBehindNginx, RegisterSubmitPlanWorkerAndDashboardGoThroughTls) {
  // Without the private CA the certificate cannot be trusted: one line, nothing sent.
  CliResult untrusted = RunPipette({"register", "--server", url_, "--preauth", NewKey()});
  EXPECT_EQ(untrusted.exit.code, 1) << untrusted.err;
  EXPECT_NE(untrusted.err.find("cannot trust " + url_ + ": its TLS certificate failed "
                               "verification (unable to get local issuer certificate)"),
            std::string::npos)
      << untrusted.err;
  EXPECT_NE(untrusted.err.find("CA file (--ca-file)"), std::string::npos) << untrusted.err;

  CliResult reg = RunPipette({"--ca-file", ca_, "register", "--server", url_, "--preauth",
                              NewKey(), "--labels", "proxy"});
  ASSERT_EQ(reg.exit.code, 0) << reg.err << Logs();
  EXPECT_NE(reg.out.find("status: approved"), std::string::npos) << reg.out;
  EXPECT_EQ(reg.err.find("not encrypted"), std::string::npos) << reg.err;

  // A signed submission through the proxy.
  CliResult run = RunPipette({"--store", (dir_ / "local.db").string(), "--json", "run", "-q",
                              "--model", (dir_ / "models" / "tiny.gguf").string(), "--benchmark",
                              "prefill_throughput_8", "--threads", "1", "--min-reps", "3",
                              "--max-reps", "3", "--no-readiness-load", "--submit", url_,
                              "--ca-file", ca_});
  ASSERT_EQ(run.exit.code, 0) << run.err;
  EXPECT_EQ(run.err.find("not submitted"), std::string::npos) << run.err;
  EXPECT_EQ(ResultsOnServer(), 1) << run.err << Logs();

  // A signed request whose path a normalizing proxy would change (an encoded slash, dots, a
  // space, a question mark): the signature holds, so the server looks the plan up and has none.
  auto identity = LoadIdentity((dir_ / "identity.json").string());
  ASSERT_TRUE(identity.ok());
  FleetClientOptions options;
  options.ca_file = ca_;
  const FleetHttpClient client(url_, *identity, options);
  const FleetResult odd = client.GetPlan("plan_../a/./b c?d=%2F");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().status, 404) << odd.error().message;

  // A plan through the proxy, run by a worker that reaches the server only through it.
  const fs::path suite = dir_ / "suite.toml";
  std::ofstream(suite) << "name = \"proxied\"\nmode = \"matrix\"\n"
                       << "benchmarks = [\"prefill_throughput_8\", \"decode_throughput_8_4\"]\n"
                       << "[[models]]\npath = \"models/tiny.gguf\"\n"
                       << "[[runtimes]]\nname = \"llamacpp\"\nsettings = { threads = 1 }\n"
                       << "[harness]\nwarmup_runs = 0\nmin_reps = 2\nmax_reps = 2\nspin_up_ms = 0\n"
                       << "[readiness]\nwaive = [\"load\", \"thermal\", \"throttle\"]\n";
  CliResult plan = RunPipette({"--ca-file", ca_, "--store", (dir_ / "submitter.db").string(),
                               "plan", "submit", suite.string(), "--server", url_,
                               "--requires-label", "proxy"});
  ASSERT_EQ(plan.exit.code, 0) << plan.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(plan.out, m, std::regex(R"(plan (plan_[0-9a-f]+): 2 jobs)")))
      << plan.out;
  const std::string plan_id = m[1].str();
  CliResult worker = RunPipette({"--ca-file", ca_, "--store", (dir_ / "worker.db").string(),
                                 "worker", "--server", url_, "--labels", "proxy", "--models",
                                 (dir_ / "models").string(), "--logs",
                                 (dir_ / "worker-logs").string(), "--once"});
  ASSERT_EQ(worker.exit.code, 0) << worker.out << worker.err << Logs();
  CliResult status = RunPipette({"--ca-file", ca_, "--json", "plan", "status", plan_id,
                                 "--server", url_});
  ASSERT_EQ(status.exit.code, 0) << status.err;
  EXPECT_EQ(json::parse(status.out)["counts"].value("done", 0), 2) << status.out;
  EXPECT_EQ(ResultsOnServer(), 3);

  // Reading through the proxy, as the CLI and a browser do.
  CliResult list = RunPipette({"--ca-file", ca_, "--json", "results", "list", "--server", url_});
  ASSERT_EQ(list.exit.code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out).size(), 3u) << list.out;
  const Answer page = Fetch(url_ + "/", ca_);
  ASSERT_TRUE(page.error.empty()) << page.error;
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<html"), std::string::npos);
  EXPECT_NE(page.headers.find("content-security-policy: default-src 'none'"), std::string::npos)
      << page.headers;
  EXPECT_NE(page.headers.find("strict-transport-security: max-age="), std::string::npos)
      << page.headers;
  // Plain HTTP at the proxy only redirects to HTTPS.
  const Answer plain = Fetch("http://127.0.0.1:" + std::to_string(proxy_->http_port()) +
                                 "/api/results?x=1",
                             "");
  EXPECT_EQ(plain.status, 301);
  EXPECT_NE(plain.headers.find("location: https://localhost/api/results?x=1"), std::string::npos)
      << plain.headers;
  // A body over the limit is refused by nginx in pipette's error shape, which a client reads as
  // a verdict on the record (it is set aside, not sent again).
  const Answer big = Fetch(url_ + "/api/results", ca_, "", {"Content-Length: 70000000"}, "POST");
  EXPECT_EQ(big.status, 413) << big.error;
  EXPECT_EQ(big.body, R"x({"error":"request body is too large (limit 67108864 bytes)"})x");
}

TEST_F(FleetBehindNginx, TheRateLimitIsKeyedByTheAddressTheProxyReportsAndNothingElse) {
  // 127.0.0.2 through the proxy, each request claiming another address of its own: the proxy
  // replaces the header, so all of them count against 127.0.0.2 (5/s, bursts of 10).
  int ok = 0, limited = 0;
  for (int i = 0; i < 16; ++i) {
    const Answer a = Fetch(url_ + "/api/results", ca_, "127.0.0.2",
                           {"X-Forwarded-For: 203.0.113." + std::to_string(i)});
    ASSERT_TRUE(a.error.empty()) << a.error;
    (a.status == 200 ? ok : limited) += 1;
    if (a.status == 429) {
      EXPECT_NE(a.body.find("rate limit: 5 requests/s per address"), std::string::npos) << a.body;
      EXPECT_NE(a.headers.find("retry-after: "), std::string::npos) << a.headers;
    }
  }
  EXPECT_GE(ok, 10);
  EXPECT_GE(limited, 1) << Logs();
  // Another client behind the same proxy has a bucket of its own.
  EXPECT_EQ(Fetch(url_ + "/api/results", ca_, "127.0.0.3").status, 200);
  // The server logged the proxied requests under the address nginx reported.
  EXPECT_NE(ReadFile(serve_err_).find("GET /api/results 429"), std::string::npos);
  EXPECT_NE(ReadFile(serve_err_).find(" 127.0.0.2\n"), std::string::npos) << ReadFile(serve_err_);
  EXPECT_EQ(ReadFile(serve_err_).find("203.0.113."), std::string::npos);

  // Straight to the server from an address that is not the proxy: its X-Forwarded-For is
  // ignored, however it varies.
  const std::string direct = "http://127.0.0.1:" + std::to_string(port_) + "/api/results";
  int direct_limited = 0;
  for (int i = 0; i < 16; ++i) {
    const Answer a =
        Fetch(direct, "", "127.0.0.4", {"X-Forwarded-For: 198.51.100." + std::to_string(i)});
    ASSERT_TRUE(a.error.empty()) << a.error;
    direct_limited += a.status == 429 ? 1 : 0;
  }
  EXPECT_GE(direct_limited, 1);
  // Signed endpoints: requests that fail authentication count against their address as well.
  int unauthenticated = 0, refused = 0;
  for (int i = 0; i < 16; ++i) {
    const Answer a = Fetch("http://127.0.0.1:" + std::to_string(port_) + "/api/jobs/claim", "",
                           "127.0.0.5", {"Content-Type: application/json"}, "POST");
    ASSERT_TRUE(a.error.empty()) << a.error;
    unauthenticated += a.status == 401 ? 1 : 0;
    refused += a.status == 429 ? 1 : 0;
  }
  EXPECT_GE(unauthenticated, 10);
  EXPECT_GE(refused, 1);
  // /health is never limited.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Fetch(url_ + "/health", ca_, "127.0.0.2").status, 200);
}

TEST_F(FleetBehindNginx, AThousandIdleConnectionsAtTheProxyDoNotStarveIt) {
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(proxy_->https_port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0) << i;
    idle.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  double worst_ms = 0;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    const Answer a = Fetch(url_ + "/health", ca_);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    worst_ms = std::max(worst_ms, ms);
    ASSERT_TRUE(a.error.empty()) << a.error << Logs();
    EXPECT_EQ(a.status, 200);
  }
  EXPECT_LT(worst_ms, 1000.0);
  std::cout << "with 1000 idle connections at nginx: /health through it, slowest of 5: "
            << worst_ms << " ms\n";
  for (int fd : idle) close(fd);
}

TEST(FleetClientWarnings, HttpToAnotherMachineIsWarnedAboutOnceAndLoopbackOrHttpsIsNot) {
  // A name that cannot resolve: the warning comes before any connection is tried.
  CliResult far = RunPipette({"results", "list", "--server", "http://fleet.invalid:8750"});
  EXPECT_NE(far.err.find("pipette: warning: http://fleet.invalid:8750 is not encrypted"),
            std::string::npos)
      << far.err;
  CliResult near = RunPipette({"results", "list", "--server", "http://127.0.0.1:1"});
  EXPECT_EQ(near.err.find("not encrypted"), std::string::npos) << near.err;
  CliResult tls = RunPipette({"results", "list", "--server", "https://fleet.invalid:8750"});
  EXPECT_EQ(tls.err.find("not encrypted"), std::string::npos) << tls.err;
  CliResult missing_ca = RunPipette({"--ca-file", "/nonexistent/ca.pem", "results", "list",
                                     "--server", "https://fleet.invalid:8750"});
  EXPECT_EQ(missing_ca.exit.code, 2);
  EXPECT_NE(missing_ca.err.find("--ca-file"), std::string::npos) << missing_ca.err;
}

}  // namespace
}  // namespace pipette::testing_models
