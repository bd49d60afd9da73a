// Whatever a server answers, to the two HTTP clients of pipette: the fleet client (a worker, a
// device submitting, `results --server`) and the openai runtime's client (any OpenAI-compatible
// server). A loopback server answers every request of an input with the input's bytes, as they
// are (status line, headers, body, or none of these), then closes. The first byte picks the
// call; a successful fleet answer goes on to what its caller reads from it (result rows, a job's
// cell). A hostile or broken server must never crash a worker or the harness.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "pipette/fleet_client.h"
#include "pipette/fleet_plan.h"
#include "pipette/identity.h"
#include "runtimes/openai/openai_client.h"

namespace {

// Answers each connection with the current answer: reads the request head (and what comes with
// it), writes the answer, closes.
class AnswerServer {
 public:
  AnswerServer() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd_, 64) != 0) {
      std::abort();
    }
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    std::thread([this] { Loop(); }).detach();
  }
  int port() const { return port_; }
  void Set(std::string answer) {
    std::lock_guard<std::mutex> lock(mu_);
    answer_ = std::move(answer);
  }

 private:
  void Loop() {
    for (;;) {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      timeval tv{0, 200000};
      setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      std::string request;
      char buf[8192];
      while (request.find("\r\n\r\n") == std::string::npos && request.size() < (1u << 20)) {
        const ssize_t n = recv(c, buf, sizeof(buf), 0);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      std::string answer;
      {
        std::lock_guard<std::mutex> lock(mu_);
        answer = answer_;
      }
      for (size_t sent = 0; sent < answer.size();) {
        const ssize_t n = send(c, answer.data() + sent, answer.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
      shutdown(c, SHUT_RDWR);
      close(c);
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::string answer_;
};

AnswerServer& Server() {
  static AnswerServer* s = new AnswerServer();
  return *s;
}

void ReadRows(const pipette::FleetResult& r, const char* key) {
  if (!r.ok() || !r->body.is_object() || !r->body.contains(key) || !r->body[key].is_array()) return;
  for (const nlohmann::json& row : r->body[key]) (void)pipette::ResultRowFromJson(row);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  AnswerServer& server = Server();
  server.Set(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  static const pipette::Identity identity = pipette::GenerateIdentity();
  pipette::FleetClientOptions options;
  options.connect_timeout_ms = options.read_timeout_ms = options.write_timeout_ms = 2000;
  const pipette::FleetHttpClient client(url, identity, options);
  const std::string job = "job_00000000000000000000000000000001";
  switch (data[0] % 10) {
    case 0:
      (void)client.Health();
      (void)client.Me();
      break;
    case 1:
      (void)client.Register("fuzz", {"x"}, nlohmann::json::object(), "");
      break;
    case 2:
      ReadRows(client.ListResults(pipette::ResultFilter{}, 10, "c"), "results");
      break;
    case 3:
      (void)client.ListRecords(pipette::ResultFilter{}, 10, "");
      (void)client.GetResult("0123456789abcdef");
      break;
    case 4: {
      const pipette::FleetResult r = client.Claim(nlohmann::json::object());
      if (r.ok() && r->body.is_object() && r->body.contains("job") && r->body["job"].is_object()) {
        const nlohmann::json& j = r->body["job"];
        if (j.contains("spec")) {
          pipette::JobContext context;
          context.models = {{std::string(64, 'a'), "/nonexistent/model.gguf"}};
          context.checkpoint_dir = "/nonexistent-fuzz-checkpoints";
          context.open_runtime = [](const pipette::RuntimeChoice&)
              -> pipette::Result<std::shared_ptr<pipette::Runtime>> {
            return pipette::MakeError("no runtime in the fuzzer");
          };
          (void)pipette::CellSpecFromJob(j["spec"], context);
        }
      }
      break;
    }
    case 5:
      (void)client.Heartbeat(job);
      (void)client.FailJob(job, "fuzz", true);
      break;
    case 6:
      (void)client.CompleteJob(job, nlohmann::json::object());
      (void)client.CreatePlan("p", {}, 0);
      (void)client.GetPlan("plan_1");
      break;
    default: {
      // The openai runtime: identify the server, tokenize, stream a completion.
      auto ai = pipette::OpenAiClient::Connect(url, std::chrono::milliseconds(2000));
      if (!ai.ok()) break;
      (void)ai->Tokenize("Once upon a time", true);
      pipette::HttpCompletionRequest request;
      request.prompt = "Once";
      request.max_tokens = 4;
      request.timeout = std::chrono::milliseconds(2000);
      (void)ai->Complete(request);
      break;
    }
  }
  return 0;
}
