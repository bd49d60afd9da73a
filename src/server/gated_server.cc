#include "server/gated_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pipette::server {
namespace {

// Runs each task on the calling thread: httplib's accept loop hands a connection over at once.
class InlineQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

void IpAndPort(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

// One connection as httplib's Stream: blocking reads and writes, each bounded by its timeout.
class FdStream : public httplib::Stream {
 public:
  FdStream(int fd, int read_ms, int write_ms) : fd_(fd), read_ms_(read_ms), write_ms_(write_ms) {}
  bool is_readable() const override { return pos_ < len_ || Poll(POLLIN, read_ms_); }
  bool is_writable() const override { return Poll(POLLOUT, write_ms_); }
  // Buffered: httplib reads a request head one byte at a time.
  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == len_) {
      if (size >= sizeof(buf_)) return Recv(ptr, size);
      const ssize_t n = Recv(buf_, sizeof(buf_));
      if (n <= 0) return n;
      pos_ = 0;
      len_ = static_cast<size_t>(n);
    }
    const size_t take = std::min(size, len_ - pos_);
    std::memcpy(ptr, buf_ + pos_, take);
    pos_ += take;
    return static_cast<ssize_t>(take);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do n = send(fd_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) IpAndPort(addr, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) IpAndPort(addr, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  ssize_t Recv(char* ptr, size_t size) {
    if (!Poll(POLLIN, read_ms_)) return -1;
    ssize_t n;
    do n = recv(fd_, ptr, size, 0);
    while (n < 0 && errno == EINTR);
    return n;
  }
  bool Poll(short what, int ms) const {
    pollfd p{fd_, what, 0};
    int r;
    do r = poll(&p, 1, ms);
    while (r < 0 && errno == EINTR);
    return r > 0 && (p.revents & what) != 0;
  }
  int fd_, read_ms_, write_ms_;
  // One stream per request, as httplib's own loop makes them: a client that pipelines requests
  // (sends the next before the answer) is not served, here as there.
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
};

}  // namespace

GatedServer::GatedServer() {
  new_task_queue = [] { return new InlineQueue(); };
}

bool GatedServer::process_and_close_socket(socket_t sock) {
  if (gate_ == nullptr) {
    ::close(sock);
    return false;
  }
  gate_->Admit(sock);
  return true;
}

bool GatedServer::ServeOne(int fd) {
  FdStream strm(fd, static_cast<int>(read_timeout_sec_ * 1000 + read_timeout_usec_ / 1000),
                static_cast<int>(write_timeout_sec_ * 1000 + write_timeout_usec_ / 1000));
  bool closed = false;
  const bool ok = process_request(strm, /*close_connection=*/false, closed, nullptr);
  return ok && !closed;
}

}  // namespace pipette::server
