// Between accepting a connection and giving it a request thread (issue 24): a connection waits,
// on no thread, until a whole request head (at most 16 KiB; a larger one gets a 431) has arrived, so that idle connections (or a slow
// sender's half a head) cannot hold the request threads. Caps keep one peer, or all of them, from
// exhausting the server's file descriptors: when a cap is reached, the oldest connection still
// waiting for its head gives way to the new one (never a request being served), so a client that
// sends requests gets in however many idle connections are open.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pipette::server {

struct GateLimits {
  // Connections one address may hold open, waiting or being served.
  int per_peer = 256;
  // Addresses the per-peer cap does not apply to (trusted reverse proxies: every client's
  // connection comes from them), as CanonicalAddress (server/client_address.h) gives them.
  std::vector<std::string> unlimited_peers;
  // Connections open in all (also bounded by the process's file descriptor limit).
  int total = 4096;
  // From accepting a connection to the end of its request head; a connection that has not sent
  // a whole head by then is closed.
  std::chrono::milliseconds head_deadline{10000};
  // How long a kept-alive connection may wait for its next request.
  std::chrono::milliseconds keep_alive{5000};
  // Requests served on one connection before it is closed.
  int keep_alive_max = 100000;
};

// Thread-safe. `serve` runs on one of `threads` request threads with a connection whose request
// head has arrived; it serves one request and returns true to keep the connection open for the
// next one (it never closes the descriptor itself).
class ConnectionGate {
 public:
  ConnectionGate(GateLimits limits, int threads, std::function<bool(int fd)> serve);
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Takes an accepted connection (its descriptor is the gate's from now on).
  void Admit(int fd);
  // Closes every waiting connection, finishes the requests being served, stops the threads.
  void Stop();

 private:
  struct Conn {
    std::string peer;
    std::chrono::steady_clock::time_point since, deadline;
    int served = 0;
    bool waiting = true;
  };

  void Wait(int fd, Conn conn, std::chrono::milliseconds deadline);  // mu_ held
  bool MakeRoom(const std::string& peer);                            // mu_ held
  void CloseLocked(int fd);                                          // mu_ held
  void Ready(int fd);                                                // mu_ held
  void Loop();
  void Work();
  void Finished(int fd, bool keep, int served);
  static bool HeadArrived(int fd, bool* gone);

  const GateLimits limits_;
  const std::function<bool(int)> serve_;
  int epoll_ = -1, wake_ = -1;
  std::mutex mu_;
  std::condition_variable ready_cv_;
  std::map<int, Conn> conns_;
  std::map<std::string, int> per_peer_;
  std::deque<int> ready_;  // heads arrived, for the request threads
  std::atomic<bool> stopping_{false};  // written under mu_, read by request threads too
  std::thread loop_;
  std::vector<std::thread> workers_;
};

// The descriptor limit raised to its hard maximum; returns the soft limit now in force.
int RaiseOpenFileLimit();

}  // namespace pipette::server
