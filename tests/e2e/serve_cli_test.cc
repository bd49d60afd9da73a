// `pipette serve` as a process: its operator commands, and SIGTERM with a request in flight (the
// request completes, the process exits 0).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "base/ids.h"
#include "cli_runner.h"
#include "pipette/identity.h"
#include "platform/process.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_models::RunPipette;

std::string Pipette() { return std::string(PIPETTE_BIN_DIR) + "/src/cli/pipette"; }

json RealRecord() {
  std::ifstream in(fs::path(PIPETTE_SOURCE_DIR) / "src/server/testdata" /
                   "stories260k_prefill_record.json");
  json r = json::parse(in);
  r["result_id"] = NewUuidV7();
  return r;
}

class ServeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pipette-serve-cli-" + NewNonce().substr(0, 10));
    fs::create_directories(dir_);
    db_ = (dir_ / "fleet.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Starts `pipette serve` on a free port; returns the port from its listening line.
  int StartServer() {
    Result<ChildProcess> child =
        ChildProcess::Start({Pipette(), "serve", "--listen", "127.0.0.1:0", "--db", db_},
                            (dir_ / "serve.err").string());
    EXPECT_TRUE(child.ok()) << child.error().message;
    if (!child.ok()) return -1;
    server_.emplace(std::move(child).value());
    std::optional<std::string> line = server_->ReadLine(std::chrono::milliseconds(10000));
    EXPECT_TRUE(line.has_value()) << "no listening line; stderr: " << Stderr();
    if (!line) return -1;
    std::smatch m;
    const std::regex re(
        R"(^pipette serve: listening on http://127\.0\.0\.1:(\d+) \(store: sqlite (.+)\)$)");
    EXPECT_TRUE(std::regex_match(*line, m, re)) << *line;
    EXPECT_EQ(m[2].str(), db_);
    return std::stoi(m[1].str());
  }

  std::string Stderr() {
    std::ifstream in(dir_ / "serve.err");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string NewKey() {
    testing_models::CliResult r =
        RunPipette({"serve", "keys", "create", "--db", db_, "--labels", "x86"});
    EXPECT_EQ(r.exit.code, 0) << r.err;
    std::string token = r.out.substr(0, r.out.find('\n'));
    EXPECT_EQ(token.rfind("preauth_", 0), 0u) << r.out;
    return token;
  }

  fs::path dir_;
  std::string db_;
  std::optional<ChildProcess> server_;
};

// An empty --db (an unset shell variable) is refused, never the default database in $HOME.
TEST_F(ServeCliTest, AnEmptyDatabaseIsRefused) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"serve", "--listen", "127.0.0.1:0", "--db", ""},
        std::vector<std::string>{"serve", "clients", "list", "--db", ""},
        std::vector<std::string>{"serve", "keys", "create", "--db", ""}}) {
    testing_models::CliResult r = RunPipette(args);
    EXPECT_EQ(r.exit.code, 2) << args[1];
    EXPECT_NE(r.err.find("--db: give a file or a postgresql:// URL"), std::string::npos) << r.err;
  }
}

TEST_F(ServeCliTest, KeysAndClientsCommands) {
  const std::string token = NewKey();
  const int port = StartServer();
  ASSERT_GT(port, 0);
  Identity id = GenerateIdentity();
  const std::string body =
      json{{"public_key", id.public_key_hex}, {"label", "box"}, {"preauth_key", token}}.dump();
  const SignedHeaders h = SignRequest(id, "POST", "/api/register", body, std::time(nullptr));
  httplib::Client cli("127.0.0.1", port);
  httplib::Result res = cli.Post("/api/register",
                                 {{"X-Pipette-Client", h.client_id},
                                  {"X-Pipette-Timestamp", h.timestamp},
                                  {"X-Pipette-Nonce", h.nonce},
                                  {"X-Pipette-Signature", h.signature}},
                                 body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;

  testing_models::CliResult r = RunPipette({"serve", "clients", "list", "--db", db_});
  EXPECT_EQ(r.exit.code, 0) << r.err;
  EXPECT_NE(r.out.find(id.client_id), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("approved"), std::string::npos) << r.out;
  r = RunPipette({"serve", "clients", "revoke", id.client_id, "--db", db_});
  EXPECT_EQ(r.exit.code, 0) << r.err;
  EXPECT_EQ(r.out, "client " + id.client_id + " is revoked\n");
  r = RunPipette({"serve", "clients", "approve", "pc_nope", "--db", db_});
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_NE(r.err.find("no client pc_nope"), std::string::npos) << r.err;

  // A second server on the same port says so.
  r = RunPipette({"serve", "--listen", "127.0.0.1:" + std::to_string(port), "--db", db_});
  EXPECT_EQ(r.exit.code, 1);
  EXPECT_NE(r.err.find("cannot listen on 127.0.0.1:" + std::to_string(port) +
                       ": address in use; pick another listen address (--listen)"),
            std::string::npos)
      << r.err;

  // The quota is SQLite's: with a PostgreSQL URL it is bad input, said before anything starts.
  r = RunPipette({"serve", "--listen", "127.0.0.1:0", "--db", "postgresql://u@127.0.0.1:1/db",
                  "--db-max-size", "1000000"});
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_NE(r.err.find("--db-max-size is a quota on an SQLite fleet database; a PostgreSQL "
                       "server's quotas are its own (drop --db-max-size)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  server_->Kill(SIGTERM);
  std::optional<ExitInfo> exit = server_->Wait(std::chrono::milliseconds(10000));
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->exited && exit->code == 0) << exit->Describe();
}

TEST_F(ServeCliTest, SigtermLetsTheRequestInFlightFinish) {
  const std::string token = NewKey();
  const int port = StartServer();
  ASSERT_GT(port, 0);
  Identity id = GenerateIdentity();
  {
    const std::string body = json{{"public_key", id.public_key_hex}, {"preauth_key", token}}.dump();
    const SignedHeaders h = SignRequest(id, "POST", "/api/register", body, std::time(nullptr));
    httplib::Client cli("127.0.0.1", port);
    httplib::Result res = cli.Post("/api/register",
                                   {{"X-Pipette-Client", h.client_id},
                                    {"X-Pipette-Timestamp", h.timestamp},
                                    {"X-Pipette-Nonce", h.nonce},
                                    {"X-Pipette-Signature", h.signature}},
                                   body, "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
  }

  // A submission whose body arrives in two parts, with SIGTERM in between.
  const json record = RealRecord();
  const std::string body = record.dump();
  const SignedHeaders h = SignRequest(id, "POST", "/api/results", body, std::time(nullptr));
  const std::string head =
      "POST /api/results HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\nX-Pipette-Client: " + h.client_id +
      "\r\nX-Pipette-Timestamp: " + h.timestamp + "\r\nX-Pipette-Nonce: " + h.nonce +
      "\r\nX-Pipette-Signature: " + h.signature + "\r\n\r\n";
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string first = head + body.substr(0, body.size() / 2);
  ASSERT_EQ(::send(fd, first.data(), first.size(), 0), static_cast<ssize_t>(first.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  server_->Kill(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(server_->Wait(std::chrono::milliseconds(0)).has_value())
      << "the server exited with a request in flight";

  const std::string rest = body.substr(body.size() / 2);
  ASSERT_EQ(::send(fd, rest.data(), rest.size(), 0), static_cast<ssize_t>(rest.size()));
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
    response.append(buf, static_cast<size_t>(n));
    if (response.find("\r\n\r\n") != std::string::npos &&
        response.find("\"stored\"") != std::string::npos) {
      break;
    }
  }
  ::close(fd);
  EXPECT_EQ(response.rfind("HTTP/1.1 201", 0), 0u) << response;
  EXPECT_NE(response.find("\"stored\":true"), std::string::npos) << response;

  std::optional<ExitInfo> exit = server_->Wait(std::chrono::milliseconds(10000));
  ASSERT_TRUE(exit.has_value()) << "the server did not stop after SIGTERM";
  EXPECT_TRUE(exit->exited && exit->code == 0) << exit->Describe() << "\n" << Stderr();
  const std::string err = Stderr();
  EXPECT_NE(err.find("SIGTERM: finishing requests in flight, then stopping"), std::string::npos)
      << err;
  EXPECT_NE(err.find("POST /api/results 201"), std::string::npos) << err;
}

}  // namespace
}  // namespace pipette
