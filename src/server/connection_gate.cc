#include "server/connection_gate.h"

#include "server/client_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "server/client_address.h"

namespace pipette::server {
namespace {

using Clock = std::chrono::steady_clock;

// The largest request head, bytes: a connection that sends more without ending its head gets a
// 431 and is closed.
constexpr size_t kPeekBytes = 16 * 1024;
// How long a request thread waits for a served connection's next request before handing it back
// (ms): long enough for a client sending back to back, too short for idle ones to hold threads.
constexpr int kLinger = 2;

std::string PeerOf(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char text[INET6_ADDRSTRLEN] = {0};
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, text, sizeof(text));
  } else if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr, text, sizeof(text));
  }
  return PlainAddress(text);
}

}  // namespace

int RaiseOpenFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1024;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
    getrlimit(RLIMIT_NOFILE, &lim);
  }
  return lim.rlim_cur > 1u << 30 ? 1 << 30 : static_cast<int>(lim.rlim_cur);
}

ConnectionGate::ConnectionGate(GateLimits limits, int threads, std::function<bool(int)> serve)
    : limits_(limits), serve_(std::move(serve)) {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev);
  loop_ = std::thread([this] { Loop(); });
  for (int i = 0; i < std::max(1, threads); ++i) workers_.emplace_back([this] { Work(); });
}

ConnectionGate::~ConnectionGate() {
  Stop();
  if (epoll_ >= 0) close(epoll_);
  if (wake_ >= 0) close(wake_);
}

void ConnectionGate::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    std::vector<int> waiting;
    for (const auto& [fd, c] : conns_) {
      if (c.waiting) waiting.push_back(fd);
    }
    for (int fd : waiting) CloseLocked(fd);
  }
  const uint64_t one = 1;
  (void)!write(wake_, &one, sizeof(one));
  ready_cv_.notify_all();
  if (loop_.joinable()) loop_.join();
  for (std::thread& t : workers_) t.join();  // the requests in flight finish first
  workers_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  while (!conns_.empty()) CloseLocked(conns_.begin()->first);
}

void ConnectionGate::CloseLocked(int fd) {
  const auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  if (it->second.waiting) epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  if (--per_peer_[it->second.peer] <= 0) per_peer_.erase(it->second.peer);
  conns_.erase(it);
  ready_.erase(std::remove(ready_.begin(), ready_.end(), fd), ready_.end());
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

// Room for one more connection of `peer`: the oldest waiting connection of that peer (over the
// per-peer cap) or of anyone (over the total cap) is closed; false when every one is being served.
bool ConnectionGate::MakeRoom(const std::string& peer) {
  const auto oldest_waiting = [&](bool same_peer) {
    int best = -1;
    for (const auto& [fd, c] : conns_) {
      if (!c.waiting || (same_peer && c.peer != peer)) continue;
      if (best < 0 || c.since < conns_.at(best).since) best = fd;
    }
    return best;
  };
  const auto peer_count = [&] {
    const auto it = per_peer_.find(peer);
    return it == per_peer_.end() ? 0 : it->second;
  };
  const bool capped = std::find(limits_.unlimited_peers.begin(), limits_.unlimited_peers.end(),
                                peer) == limits_.unlimited_peers.end();
  while (capped && peer_count() >= limits_.per_peer) {
    const int fd = oldest_waiting(true);
    if (fd < 0) return false;
    CloseLocked(fd);
  }
  while (static_cast<int>(conns_.size()) >= limits_.total) {
    const int fd = oldest_waiting(false);
    if (fd < 0) return false;
    CloseLocked(fd);
  }
  return true;
}

void ConnectionGate::Wait(int fd, Conn conn, std::chrono::milliseconds deadline) {
  conn.waiting = true;
  conn.since = Clock::now();
  conn.deadline = conn.since + deadline;
  conns_[fd] = conn;
  // Edge-triggered: woken when more bytes arrive, while the ones already there stay unread.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.fd = fd;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
  // Bytes that arrived before the registration wake no one: looked at now (bytes arriving from
  // here on raise an edge).
  bool gone = false;
  if (HeadArrived(fd, &gone)) {
    Ready(fd);
  } else if (gone) {
    CloseLocked(fd);
  }
}

void ConnectionGate::Ready(int fd) {
  epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  conns_[fd].waiting = false;
  ready_.push_back(fd);
  ready_cv_.notify_one();
}

void ConnectionGate::Admit(int fd) {
  // Small responses go out at once (Nagle's algorithm would hold them for the client's ACK).
  const int yes = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  std::lock_guard<std::mutex> lock(mu_);
  const std::string peer = PeerOf(fd);
  if (stopping_ || !MakeRoom(peer)) {
    ::close(fd);
    return;
  }
  ++per_peer_[peer];
  Conn c;
  c.peer = peer;
  Wait(fd, c, limits_.head_deadline);
}

bool ConnectionGate::HeadArrived(int fd, bool* gone) {
  static thread_local std::vector<char> buf(kPeekBytes);
  const ssize_t n = recv(fd, buf.data(), buf.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    *gone = true;
    return false;
  }
  if (n <= 0) return false;
  const std::string_view text(buf.data(), static_cast<size_t>(n));
  if (text.find("\r\n\r\n") != std::string_view::npos) return true;
  if (static_cast<size_t>(n) >= buf.size()) {
    // No head of the protocol comes near this: refused before any thread reads it.
    static const std::string body = R"({"error":"the request head is larger than 16 KiB"})";
    const std::string reply =
        "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
        "X-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    (void)!send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    *gone = true;
  }
  return false;
}

void ConnectionGate::Loop() {
  std::vector<epoll_event> events(256);
  auto next_sweep = Clock::now();
  while (true) {
    const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 100);
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_) continue;  // Stop()
      const auto it = conns_.find(fd);
      if (it == conns_.end() || !it->second.waiting) continue;
      bool gone = false;
      if (HeadArrived(fd, &gone)) {
        Ready(fd);
      } else if (gone) {
        CloseLocked(fd);
      }
    }
    // Deadlines: at most every 100 ms, so a sweep over thousands of connections stays cheap.
    const auto now = Clock::now();
    if (now < next_sweep) continue;
    next_sweep = now + std::chrono::milliseconds(100);
    std::vector<int> expired;
    for (const auto& [fd, c] : conns_) {
      if (c.waiting && now >= c.deadline) expired.push_back(fd);
    }
    for (int fd : expired) CloseLocked(fd);
  }
}

void ConnectionGate::Work() {
  while (true) {
    int fd = -1;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_cv_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
      if (ready_.empty()) return;  // stopping, nothing left to serve
      fd = ready_.front();
      ready_.pop_front();
    }
    // A client that sends its next request at once (a worker, a load tool) is served on this
    // thread; one that does not within kLinger goes back to wait on no thread.
    int served = 0;
    bool keep = true;
    while (keep) {
      keep = serve_(fd);
      ++served;
      if (!keep || stopping_) break;
      pollfd p{fd, POLLIN, 0};
      bool gone = false;
      if (poll(&p, 1, kLinger) <= 0 || !HeadArrived(fd, &gone)) {
        keep = !gone;
        break;
      }
    }
    Finished(fd, keep, served);
  }
}

void ConnectionGate::Finished(int fd, bool keep, int served) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  Conn c = it->second;
  c.served += served;
  if (!keep || stopping_ || c.served >= limits_.keep_alive_max) {
    CloseLocked(fd);
    return;
  }
  Wait(fd, c, limits_.keep_alive);
}

}  // namespace pipette::server
