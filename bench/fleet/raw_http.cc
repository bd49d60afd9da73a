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
  return true;
}

int RawHttpConnection::Send(const std::string& request, std::string* body) {
  if (fd_ < 0 && !Connect()) return -1;
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
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
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
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
