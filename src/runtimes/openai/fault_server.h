// Test only: a tiny HTTP server (cpp-httplib) on a free loopback port, for the failures a real
// OpenAI-compatible server cannot be made to produce on demand (wrong status, HTML, bad JSON, a
// stream cut short, no answer at all).
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace pipette::testing {

// Register handlers on server() (ordinary cpp-httplib handlers), then Start(). The destructor
// releases handlers blocked in Hang() and stops the server.
class FaultServer {
 public:
  FaultServer() = default;
  FaultServer(const FaultServer&) = delete;
  FaultServer& operator=(const FaultServer&) = delete;
  ~FaultServer();

  httplib::Server& server() { return server_; }

  // Binds 127.0.0.1 on a free port and serves on a thread. Returns false when it cannot bind.
  bool Start();

  // "http://127.0.0.1:<port>".
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // For a handler that must never answer: blocks until the server is being destroyed.
  void Hang();

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::mutex mu_;
  std::condition_variable released_cv_;
  bool released_ = false;
};

}  // namespace pipette::testing
