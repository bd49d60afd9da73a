#include "runtimes/openai/fault_server.h"

#include <chrono>

namespace pipette::testing {

bool FaultServer::Start() {
  // Idle keep-alive connections hold a server thread for this long after the client is gone.
  server_.set_keep_alive_timeout(1);
  server_.set_tcp_nodelay(true);  // else Nagle and delayed ACKs add 40 ms to each answer
  port_ = server_.bind_to_any_port("127.0.0.1");
  if (port_ <= 0) return false;
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // stop() does nothing before the server runs: a destructor right after Start() would hang.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return server_.is_running();
}

void FaultServer::Hang() {
  std::unique_lock<std::mutex> lock(mu_);
  released_cv_.wait(lock, [this] { return released_; });
}

FaultServer::~FaultServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
  }
  released_cv_.notify_all();
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace pipette::testing
