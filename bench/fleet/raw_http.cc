#include "raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace pipette::bench {

std::string HttpRequest(const std::string& method, const std::string& target,
                        const std::string& head_lines, const std::string& body) {
  return method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n" +
         head_lines + "Content-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

RawHttpConnection::~RawHttpConnection() { Close(); }

void RawHttpConnection::Close() {
  if (tls_ != nullptr) SSL_free(tls_);
  tls_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  in_.clear();
}

bool RawHttpConnection::Connect() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Close();
    return false;
  }
  if (tls_ctx_ != nullptr) {
    tls_ = SSL_new(tls_ctx_);
    SSL_set_fd(tls_, fd_);
    SSL_set_tlsext_host_name(tls_, "localhost");
    SSL_set1_host(tls_, "localhost");
    if (SSL_connect(tls_) != 1) {
      Close();
      return false;
    }
  }
  return true;
}

ssize_t RawHttpConnection::Write(const char* data, size_t size) {
  if (tls_ != nullptr) {
    const int n = SSL_write(tls_, data, static_cast<int>(size));
    return n > 0 ? n : -1;
  }
  ssize_t n;
  do {
    n = ::send(fd_, data, size, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

ssize_t RawHttpConnection::Read(char* data, size_t size) {
  if (tls_ != nullptr) {
    const int n = SSL_read(tls_, data, static_cast<int>(size));
    return n > 0 ? n : -1;
  }
  ssize_t n;
  do {
    n = ::recv(fd_, data, size, 0);
  } while (n < 0 && errno == EINTR);
  return n;
}

int RawHttpConnection::Send(const std::string& request, std::string* body) {
  // A kept-alive connection the other end closed (nginx after keepalive_requests, a server's
  // idle timeout) fails before any byte of an answer: sent again once on a new connection, as
  // HTTP clients do. Submissions are idempotent (the same result_id is stored once).
  const bool reused = fd_ >= 0;
  bool answered = false;
  const int status = SendOnce(request, body, &answered);
  if (status < 0 && reused && !answered) return SendOnce(request, body, &answered);
  return status;
}

int RawHttpConnection::SendOnce(const std::string& request, std::string* body, bool* answered) {
  if (fd_ < 0 && !Connect()) return -1;
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = Write(request.data() + sent, request.size() - sent);
    if (n <= 0) {
      Close();
      return -1;
    }
    sent += static_cast<size_t>(n);
  }
  // The head, then Content-Length bytes of body.
  size_t head_end = std::string::npos, need = 0;
  char buffer[16384];
  for (;;) {
    if (head_end == std::string::npos) {
      head_end = in_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const char* cl = strcasestr(in_.c_str(), "\r\ncontent-length:");
        if (cl == nullptr || cl > in_.c_str() + head_end) {
          Close();
          return -1;
        }
        need = head_end + 4 + std::strtoull(cl + 17, nullptr, 10);
      }
    }
    if (head_end != std::string::npos && in_.size() >= need) break;
    const ssize_t n = Read(buffer, sizeof(buffer));
    if (n > 0) *answered = true;
    if (n <= 0) {
      Close();
      return -1;
    }
    in_.append(buffer, static_cast<size_t>(n));
  }
  if (in_.compare(0, 9, "HTTP/1.1 ") != 0) {
    Close();
    return -1;
  }
  const int status = std::atoi(in_.c_str() + 9);
  if (body != nullptr) body->assign(in_, head_end + 4, need - head_end - 4);
  in_.erase(0, need);
  return status;
}

}  // namespace pipette::bench
