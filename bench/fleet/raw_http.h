// The load tools' HTTP/1.1 client: one keep-alive connection to a loopback server that sends a
// request prepared beforehand (its head and body in one buffer, as wrk sends them) with one
// write, and reads the answer's status and body. httplib's client writes the head and the body
// apart and parses every header: 0.13 ms of CPU a submission, a tenth of the machine in an
// ingest run that shares the server's two cores. Over TLS (OpenSSL) when given a context: the
// proxy figures (nginx in front, deploy/). Not thread-safe: one per sending thread.
#pragma once

#include <openssl/ssl.h>

#include <string>

namespace pipette::bench {

// The bytes of a request: `head_lines` are "Name: value\r\n" lines (Host, Content-Length and
// Connection are added).
std::string HttpRequest(const std::string& method, const std::string& target,
                        const std::string& head_lines, const std::string& body);

class RawHttpConnection {
 public:
  // `tls`: a client context (it must outlive the connection; its verification settings apply, the
  // name checked is "localhost"), or null for plain HTTP.
  explicit RawHttpConnection(int port, SSL_CTX* tls = nullptr) : port_(port), tls_ctx_(tls) {}
  ~RawHttpConnection();
  RawHttpConnection(const RawHttpConnection&) = delete;
  RawHttpConnection& operator=(const RawHttpConnection&) = delete;

  // Sends `request` (connecting first when needed) and returns the answer's status code, its body
  // in `*body`; -1 when the connection failed or the answer is not HTTP/1.1 with a
  // Content-Length (then the connection is closed, and the next call connects again).
  int Send(const std::string& request, std::string* body);

 private:
  int SendOnce(const std::string& request, std::string* body, bool* answered);
  bool Connect();
  void Close();
  ssize_t Write(const char* data, size_t size);
  ssize_t Read(char* data, size_t size);
  int port_;
  SSL_CTX* tls_ctx_ = nullptr;
  SSL* tls_ = nullptr;
  int fd_ = -1;
  std::string in_;  // bytes read past the last answer
};

}  // namespace pipette::bench
