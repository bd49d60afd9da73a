// A small libcurl client for the `openai` runtime: one connection kept alive between requests,
// JSON bodies, and a streamed POST that hands Server-Sent-Events lines over as they arrive, each
// stamped with its arrival time on std::chrono::steady_clock.
//
// This layer only moves bytes: it never phrases user-facing errors. It reports what happened
// (a transport failure, the HTTP status, the headers that matter, the body) and the caller
// (openai_client.cc) turns that into one line that names the server and what to do.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "pipette/status.h"

namespace pipette {

// Why a request got no complete answer.
enum class TransportFailure {
  kNone,
  kNoConnection,  // nothing listens there (connection refused), or the host is unknown/unreachable
  kTimedOut,      // the request's timeout passed (connecting included)
  kCut,           // the connection closed or was reset before the answer was complete
  kAborted,       // the caller's line handler or abort check asked to stop
  kOther,         // anything else (malformed URL, TLS, ...): `failure_detail` says what
};

// What one request got back.
struct HttpResponse {
  TransportFailure failure = TransportFailure::kNone;
  // One line, lower case, when failure != kNone: "connection refused", "timed out after 2000 ms",
  // "connection closed", "connection reset by peer" (from errno or curl).
  std::string failure_detail;
  long status = 0;           // HTTP status; 0 when no status line arrived
  std::string content_type;  // as sent, e.g. "application/json; charset=utf-8"; "" when absent
  std::string server;        // the `Server:` header, e.g. "llama.cpp"; "" when absent
  // The body. For PostJsonStream: only when the answer was not a 2xx event stream (an error
  // body, an HTML page), capped at kMaxBody bytes; an event stream goes to the line handler.
  std::string body;
  // PostJsonStream: true when the body was a 2xx event stream and went to the line handler.
  bool event_stream = false;

  // True when a complete answer with a 2xx status arrived.
  bool ok() const { return failure == TransportFailure::kNone && status >= 200 && status < 300; }
};

// One field line of a Server-Sent-Events stream (https://html.spec.whatwg.org/#event-stream-
// interpretation). Blank lines (event separators) and comments (":...") are not delivered.
struct SseLine {
  std::string field;  // "data", "event", "id", "retry", or whatever the server sent before ':'
  std::string value;  // after the first ':' and one optional space; "" for a line without ':'
  // When libcurl handed over the bytes that completed this line: lines that arrived in one read
  // share a time.
  std::chrono::steady_clock::time_point arrival;
};

// Not thread-safe: one request at a time per client. Move-only; the connection it keeps alive
// closes with it. Any number of clients may exist in a process (curl_global_init runs once).
class HttpClient {
 public:
  // Returns true to go on, false to abort the request (its failure is then kAborted).
  using LineHandler = std::function<bool(const SseLine&)>;
  // Polled while a request waits (at least once a second): true aborts it (kAborted).
  using AbortCheck = std::function<bool()>;

  static constexpr size_t kMaxBody = 16u << 20;  // 16 MiB: far above any model list or error

  // Errors: libcurl cannot make a handle (out of memory).
  static Result<HttpClient> Create();

  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  ~HttpClient();

  // Sets a check polled during every later request; empty: none.
  void SetAbortCheck(AbortCheck check) { abort_check_ = std::move(check); }

  // GET `url`; the whole exchange (connecting included) must end within `timeout`.
  HttpResponse Get(const std::string& url, std::chrono::milliseconds timeout);

  // POST `json_body` (sent as is, Content-Type: application/json) to `url`, within `timeout`.
  HttpResponse PostJson(const std::string& url, const std::string& json_body,
                        std::chrono::milliseconds timeout);

  // POST as above, for an answer streamed as Server-Sent Events: when the answer has a 2xx
  // status and Content-Type text/event-stream, `on_line` receives each field line on the calling
  // thread as soon as it is complete (a last line without its newline is delivered at the end of
  // a stream that ended cleanly); otherwise the body is kept in the response. `timeout` bounds the
  // whole exchange, the stream included. A stream that ends cleanly has failure kNone even when
  // the server stopped early: whether the events said they were finished is the caller's call.
  HttpResponse PostJsonStream(const std::string& url, const std::string& json_body,
                              std::chrono::milliseconds timeout, const LineHandler& on_line);

 private:
  struct Handle;
  explicit HttpClient(std::unique_ptr<Handle> handle);
  HttpResponse Perform(const std::string& url, const std::string* post_body,
                       std::chrono::milliseconds timeout, const LineHandler* on_line);

  std::unique_ptr<Handle> handle_;
  AbortCheck abort_check_;
};

}  // namespace pipette
