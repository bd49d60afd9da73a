#include "runtimes/openai/http.h"

#include <curl/curl.h>
#include <strings.h>

#include <cctype>
#include <cstring>
#include <mutex>
#include <string_view>

namespace pipette {

struct HttpClient::Handle {
  CURL* curl = nullptr;
  ~Handle() {
    if (curl) curl_easy_cleanup(curl);
  }
};

namespace {

// What the callbacks of one transfer share.
struct Transfer {
  CURL* curl = nullptr;
  HttpResponse* response = nullptr;
  const HttpClient::LineHandler* on_line = nullptr;  // null: keep the body
  const HttpClient::AbortCheck* abort_check = nullptr;
  bool decided = false;    // whether the first body bytes told us stream or body
  bool streaming = false;  // the body is an event stream going to on_line
  bool aborted = false;    // on_line asked to stop
  std::string pending;     // bytes of an event-stream line not yet ended by '\n'
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsEventStream(const std::string& content_type) {
  return strncasecmp(content_type.c_str(), "text/event-stream", 17) == 0;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {  // a new header block (after "100 Continue" or a redirect)
    t->response->server.clear();
    t->response->content_type.clear();
    return size * n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  const std::string name(Trim(line.substr(0, colon)));
  const std::string value(Trim(line.substr(colon + 1)));
  if (strcasecmp(name.c_str(), "server") == 0) t->response->server = value;
  if (strcasecmp(name.c_str(), "content-type") == 0) t->response->content_type = value;
  return size * n;
}

// Hands one event-stream line to on_line; false when it asks to stop.
bool DeliverLine(Transfer* t, std::string_view line, std::chrono::steady_clock::time_point at) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || line.front() == ':') return true;  // event separator or comment
  SseLine sse;
  const size_t colon = line.find(':');
  sse.field = std::string(line.substr(0, colon));
  if (colon != std::string_view::npos) {
    std::string_view value = line.substr(colon + 1);
    if (value.starts_with(' ')) value.remove_prefix(1);
    sse.value = std::string(value);
  }
  sse.arrival = at;
  return (*t->on_line)(sse);
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (!t->decided) {  // headers are complete by the first body bytes
    t->decided = true;
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    t->streaming = t->on_line != nullptr && status >= 200 && status < 300 &&
                   IsEventStream(t->response->content_type);
    t->response->event_stream = t->streaming;
  }
  if (!t->streaming) {
    std::string& body = t->response->body;
    body.append(
        data, std::min(bytes, HttpClient::kMaxBody - std::min(body.size(), HttpClient::kMaxBody)));
    return bytes;
  }
  const auto now = std::chrono::steady_clock::now();
  t->pending.append(data, bytes);
  size_t start = 0;
  for (size_t nl; (nl = t->pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    if (!DeliverLine(t, std::string_view(t->pending).substr(start, nl - start), now)) {
      t->aborted = true;
      return 0;  // anything but `bytes` makes curl stop with CURLE_WRITE_ERROR
    }
  }
  t->pending.erase(0, start);
  return bytes;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* t = static_cast<Transfer*>(user);
  return (*t->abort_check)() ? 1 : 0;
}

std::string LowerFirst(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// One place that turns a curl result into a TransportFailure and its one-line detail.
void Classify(CURLcode rc, CURL* curl, const char* errbuf, bool aborted, long timeout_ms,
              HttpResponse* r) {
  long os_errno = 0;
  curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_errno);
  const std::string curl_text = LowerFirst(*errbuf ? errbuf : curl_easy_strerror(rc));
  const std::string errno_text = os_errno ? LowerFirst(strerror(static_cast<int>(os_errno))) : "";
  switch (rc) {
    case CURLE_OK:
      r->failure = TransportFailure::kNone;
      return;
    case CURLE_COULDNT_CONNECT:
      r->failure = TransportFailure::kNoConnection;
      r->failure_detail = errno_text.empty() ? curl_text : errno_text;
      return;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      r->failure = TransportFailure::kNoConnection;
      r->failure_detail = curl_text;
      return;
    case CURLE_OPERATION_TIMEDOUT:
      r->failure = TransportFailure::kTimedOut;
      r->failure_detail = "timed out after " + std::to_string(timeout_ms) + " ms";
      return;
    case CURLE_PARTIAL_FILE:  // curl: "transfer closed with outstanding read data remaining"
      r->failure = TransportFailure::kCut;
      r->failure_detail = "connection closed";
      return;
    case CURLE_GOT_NOTHING:
      r->failure = TransportFailure::kCut;
      r->failure_detail = "connection closed without an answer";
      return;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      r->failure = TransportFailure::kCut;
      r->failure_detail =
          errno_text.empty() ? curl_text : errno_text;  // "connection reset by peer"
      return;
    case CURLE_ABORTED_BY_CALLBACK:
      r->failure = TransportFailure::kAborted;
      r->failure_detail = "aborted";
      return;
    case CURLE_WRITE_ERROR:
      if (aborted) {
        r->failure = TransportFailure::kAborted;
        r->failure_detail = "aborted";
        return;
      }
      [[fallthrough]];
    default:
      r->failure = TransportFailure::kOther;
      r->failure_detail = curl_text;
  }
}

}  // namespace

Result<HttpClient> HttpClient::Create() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  auto handle = std::make_unique<Handle>();
  handle->curl = curl_easy_init();
  if (!handle->curl) return MakeError("libcurl could not make an HTTP handle (out of memory?)");
  return HttpClient(std::move(handle));
}

HttpClient::HttpClient(std::unique_ptr<Handle> handle) : handle_(std::move(handle)) {}
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;
HttpClient::~HttpClient() = default;

HttpResponse HttpClient::Get(const std::string& url, std::chrono::milliseconds timeout) {
  return Perform(url, nullptr, timeout, nullptr);
}

HttpResponse HttpClient::PostJson(const std::string& url, const std::string& json_body,
                                  std::chrono::milliseconds timeout) {
  return Perform(url, &json_body, timeout, nullptr);
}

HttpResponse HttpClient::PostJsonStream(const std::string& url, const std::string& json_body,
                                        std::chrono::milliseconds timeout,
                                        const LineHandler& on_line) {
  return Perform(url, &json_body, timeout, &on_line);
}

HttpResponse HttpClient::Perform(const std::string& url, const std::string* post_body,
                                 std::chrono::milliseconds timeout, const LineHandler* on_line) {
  CURL* c = handle_->curl;
  curl_easy_reset(c);  // options only: the live connection stays for reuse
  HttpResponse response;
  Transfer t;
  t.curl = c;
  t.response = &response;
  t.on_line = on_line;
  t.abort_check = abort_check_ ? &abort_check_ : nullptr;
  char errbuf[CURL_ERROR_SIZE] = "";
  const long timeout_ms = static_cast<long>(std::max<int64_t>(1, timeout.count()));

  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: safe in threads
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  if (t.abort_check) {
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  }
  curl_slist* headers = nullptr;
  if (post_body) {
    // "Expect:" turns off curl's "Expect: 100-continue" for bodies over 1 KiB, which would add
    // a round trip (or a 1 s wait) inside the timed region of a long prompt.
    headers = curl_slist_append(headers, "Expect:");
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, post_body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post_body->size()));
  }
  if (on_line) headers = curl_slist_append(headers, "Accept: text/event-stream");
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);

  const CURLcode rc = curl_easy_perform(c);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);  // errbuf dies with this call
  curl_slist_free_all(headers);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  if (rc == CURLE_OK && t.streaming && !t.pending.empty()) {
    DeliverLine(&t, t.pending, std::chrono::steady_clock::now());
  }
  Classify(rc, c, errbuf, t.aborted, timeout_ms, &response);
  return response;
}

}  // namespace pipette
