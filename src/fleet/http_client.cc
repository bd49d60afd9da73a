// FleetHttpClient over cpp-httplib (built with OpenSSL: https:// verified): one connection per
// call, every request signed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/json_depth.h"
#include "pipette/fleet_client.h"

namespace pipette {
namespace {

using nlohmann::json;

std::string PercentEncode(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The path segment of an id: ids are ours ("job_<hex>", hex), but a typo must not change the path.
std::string Segment(const std::string& id) { return PercentEncode(id); }

// The largest answer read (a page of records included), in bytes.
constexpr uint64_t kMaxAnswerBytes = uint64_t{512} << 20;

// The server's one line: its {"error": ...}, else the start of the body.
std::string ErrorLine(const std::string& body, bool* is_pipette_error) {
  *is_pipette_error = false;
  try {
    const json j = ParseBoundedJson(body);
    if (j.is_object() && j.contains("error") && j["error"].is_string()) {
      *is_pipette_error = true;
      return j["error"].get<std::string>();
    }
  } catch (const std::exception&) {
  }
  std::string line = body.substr(0, 200);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line.empty() ? "no reason given" : line;
}

// Why a connection to host:port fails, as errno (0: it connects now; -1: the name does not
// resolve). httplib reports a refused and a timed-out connect alike, and the message the user
// needs differs ("is it running?" against "is the address right?").
int ProbeConnect(const std::string& host, int port, int timeout_ms) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    return -1;
  }
  int result = ECONNREFUSED;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd =
        ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int err = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, timeout_ms) <= 0) {
          err = ETIMEDOUT;
        } else {
          socklen_t len = sizeof err;
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        }
      }
    }
    ::close(fd);
    result = err;
    if (err == 0) break;
  }
  ::freeaddrinfo(found);
  return result;
}

std::string ConnectionReason(httplib::Error error, int saved_errno, const FleetClientOptions& o) {
  switch (error) {
    case httplib::Error::Connection:
      if (saved_errno == -1) return "cannot resolve the host name";
      if (saved_errno == 0) return "the connection dropped";
      if (saved_errno == ECONNREFUSED) return "connection refused";
      if (saved_errno == ETIMEDOUT || saved_errno == EINPROGRESS) {
        return "no connection within " + std::to_string(o.connect_timeout_ms / 1000) + " s";
      }
      if (saved_errno == EHOSTUNREACH || saved_errno == ENETUNREACH) return "host unreachable";
      return saved_errno != 0 ? std::string(std::strerror(saved_errno)) : "connection failed";
    case httplib::Error::ConnectionTimeout:
      return "no connection within " + std::to_string(o.connect_timeout_ms / 1000) + " s";
    case httplib::Error::Read:
      return "no complete answer within " + std::to_string(o.read_timeout_ms / 1000) +
             " s, or the connection dropped";
    case httplib::Error::Write:
      return "the connection dropped while sending";
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      return "TLS failed: " + httplib::to_string(error);
    default:
      return httplib::to_string(error);
  }
}

}  // namespace

FleetHttpClient::FleetHttpClient(std::string server_url, Identity identity,
                                 FleetClientOptions options)
    : url_(std::move(server_url)), identity_(std::move(identity)), options_(options) {
  while (!url_.empty() && url_.back() == '/') url_.pop_back();
  std::string rest;
  int default_port = 0;
  if (url_.rfind("http://", 0) == 0) {
    rest = url_.substr(7);
    default_port = 80;
  } else if (url_.rfind("https://", 0) == 0) {
    rest = url_.substr(8);
    default_port = 443;
  } else {
    return;
  }
  if (rest.empty() || rest.find('/') != std::string::npos || rest.find('?') != std::string::npos) {
    return;
  }
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']', colon) == std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos) {
      return;
    }
    port_ = std::stoi(port);
    host_ = rest.substr(0, colon);
  } else {
    port_ = default_port;
    host_ = rest;
  }
  url_ok_ = !host_.empty() && port_ > 0 && port_ < 65536;
}

bool FleetHttpClient::SendsInTheClear() const {
  if (!url_ok_ || url_.rfind("http://", 0) != 0) return false;
  std::string host = host_;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost" || host == "::1") return false;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) != 127;
  return true;
}

std::string FleetHttpClient::host_port() const {
  return url_ok_ ? host_ + ":" + std::to_string(port_) : url_;
}

Status FleetHttpClient::Check() const {
  if (url_ok_) {
    if (!options_.ca_file.empty()) {
      std::FILE* f = std::fopen(options_.ca_file.c_str(), "r");
      if (f == nullptr) {
        return MakeError("cannot read the CA file " + options_.ca_file + ": " +
                         std::strerror(errno));
      }
      std::fclose(f);
    }
    return Status::Ok();
  }
  return MakeError("'" + url_ +
                   "' is not a server URL; give http://HOST:PORT, e.g. http://127.0.0.1:8080");
}

FleetResult FleetHttpClient::Send(const std::string& method, const std::string& path_and_query,
                                  const std::string& body, bool sign) const {
  if (!url_ok_) {
    return FleetError{FleetFailure::kRejected, 0, Check().error().message, 0};
  }
  try {
    const std::string scheme = url_.rfind("https://", 0) == 0 ? "https://" : "http://";
    httplib::Client client(scheme + host_ + ":" + std::to_string(port_));
    client.set_connection_timeout(options_.connect_timeout_ms / 1000,
                                  (options_.connect_timeout_ms % 1000) * 1000);
    client.set_read_timeout(options_.read_timeout_ms / 1000,
                            (options_.read_timeout_ms % 1000) * 1000);
    client.set_write_timeout(options_.write_timeout_ms / 1000,
                             (options_.write_timeout_ms % 1000) * 1000);
    client.set_keep_alive(false);
    if (scheme == "https://") {
      client.enable_server_certificate_verification(true);
      if (!options_.ca_file.empty()) client.set_ca_cert_path(options_.ca_file.c_str());
    }
    httplib::Headers headers;
    if (sign) {
      const SignedHeaders h = SignRequest(identity_, method, path_and_query, body,
                                          static_cast<int64_t>(std::time(nullptr)));
      headers = {{"X-Pipette-Client", h.client_id},
                 {"X-Pipette-Timestamp", h.timestamp},
                 {"X-Pipette-Nonce", h.nonce},
                 {"X-Pipette-Signature", h.signature}};
    }
    const char* content_type = "application/json";
    if (method != "GET" && method != "POST" && method != "PUT" && method != "DELETE") {
      return FleetError{FleetFailure::kRejected, 0, "unsupported method " + method, 0};
    }
    errno = 0;
    httplib::Result res = [&] {
      // A bounded answer: a stray server streaming without end must not exhaust memory.
      if (method == "GET") {
        return client.Get(path_and_query.c_str(), headers,
                          [](uint64_t read, uint64_t) { return read <= kMaxAnswerBytes; });
      }
      if (method == "POST") return client.Post(path_and_query.c_str(), headers, body, content_type);
      if (method == "PUT") return client.Put(path_and_query.c_str(), headers, body, content_type);
      return client.Delete(path_and_query.c_str(), headers, body, content_type);
    }();
    if (!res && res.error() == httplib::Error::Canceled) {
      return FleetError{FleetFailure::kRejected, 0,
                        "the answer of " + url_ + " is over " +
                            std::to_string(kMaxAnswerBytes >> 20) +
                            " MiB; is it pipette serve?",
                        0};
    }
    if (!res) {
      const int saved_errno = res.error() == httplib::Error::Connection
                                  ? ProbeConnect(host_, port_, options_.connect_timeout_ms)
                                  : errno;
      // Neither is a verdict on the request: records wait in the outbox until the certificate
      // (or whom the client trusts) is fixed, as they would for a server that is down.
      if (res.error() == httplib::Error::SSLServerVerification) {
        const long verify = client.get_openssl_verify_result();
        const std::string why =
            verify == X509_V_OK
                ? "its TLS certificate is valid but does not name " + host_
                : "its TLS certificate failed verification (" +
                      std::string(X509_verify_cert_error_string(verify)) +
                      "); for a private CA or a self-signed certificate give the CA file that "
                      "signed it";
        return FleetError{FleetFailure::kUnreachable, 0, "cannot trust " + url_ + ": " + why, 0};
      }
      if (res.error() == httplib::Error::SSLLoadingCerts) {
        return FleetError{FleetFailure::kUnreachable, 0,
                          "cannot load CA certificates from " +
                              (options_.ca_file.empty() ? std::string("the system's store")
                                                        : options_.ca_file) +
                              "; give a PEM CA file",
                          0};
      }
      return FleetError{FleetFailure::kUnreachable, 0,
                        "cannot reach " + url_ + " (" +
                            ConnectionReason(res.error(), saved_errno, options_) +
                            "); is pipette serve running there?",
                        0};
    }
    const int status = res->status;
    if (status >= 200 && status < 300) {
      FleetReply reply{status, nullptr};
      if (!res->body.empty()) {
        try {
          // A hostile or broken server must not crash a worker: bounded like any outside JSON.
          if (JsonNestsDeeperThan(res->body)) throw std::runtime_error("too deep");
          reply.body = json::parse(res->body);
        } catch (const std::exception&) {
          return FleetError{FleetFailure::kRetriable, status,
                            "the server at " + url_ + " answered " + std::to_string(status) +
                                " with a body that is not JSON; is it pipette serve?",
                            0};
        }
      }
      return reply;
    }
    bool is_pipette_error = false;
    const std::string line = ErrorLine(res->body, &is_pipette_error);
    int retry_after = 0;
    if (res->has_header("Retry-After")) {
      try {
        retry_after = std::stoi(res->get_header_value("Retry-After"));
      } catch (const std::exception&) {
      }
    }
    FleetError error{FleetFailure::kRejected, status, "", retry_after};
    if (status >= 500 || status == 408 || status == 429) {
      error.kind = FleetFailure::kRetriable;
      error.message = (status >= 500 ? "server error (" : "server refused (") +
                      std::to_string(status) + "): " +
                      (is_pipette_error ? line : "no pipette error in the answer");
    } else if (!is_pipette_error) {
      // Not pipette's error shape: a proxy or another program at that address (its body, an
      // HTML page as often as not, is not repeated). Refusing the request for good would throw
      // away records that were never judged.
      error.kind = FleetFailure::kRetriable;
      error.message = "the server at " + url_ + " answered " + std::to_string(status) +
                      " without a pipette error; is it pipette serve?";
    } else {
      error.message = "server refused (" + std::to_string(status) + "): " + line;
    }
    return error;
  } catch (const std::exception& e) {
    return FleetError{
        FleetFailure::kUnreachable, 0,
        "cannot reach " + url_ + " (" + e.what() + "); is pipette serve running there?", 0};
  }
}

FleetResult FleetHttpClient::Health() const { return Send("GET", "/health", "", false); }

FleetResult FleetHttpClient::Register(const std::string& label,
                                      const std::vector<std::string>& labels, const json& profile,
                                      const std::string& preauth) const {
  json body = {{"public_key", identity_.public_key_hex},
               {"label", label},
               {"labels", labels},
               {"profile", profile.is_null() ? json::object() : profile}};
  if (!preauth.empty()) body["preauth_key"] = preauth;
  return Send("POST", "/api/register", body.dump());
}

FleetResult FleetHttpClient::Me() const { return Send("GET", "/api/me", ""); }

FleetResult FleetHttpClient::SubmitResult(const json& record) const {
  return Send("POST", "/api/results", record.dump());
}

namespace {

// The query of a paged listing: the filter, the page size (0: the server's default), the cursor.
std::string PageQuery(const ResultFilter& filter, int page_size, const std::string& cursor) {
  ResultFilter f = filter;
  f.limit = page_size > 0 ? page_size : 0;
  std::string query = ResultFilterQuery(f);
  if (!cursor.empty()) {
    query += query.empty() ? '?' : '&';
    query += "cursor=";
    query += PercentEncode(cursor);
  }
  return query;
}

}  // namespace

FleetResult FleetHttpClient::ListResults(const ResultFilter& filter, int page_size,
                                         const std::string& cursor) const {
  return Send("GET", "/api/results" + PageQuery(filter, page_size, cursor), "", /*sign=*/false);
}

FleetResult FleetHttpClient::ListRecords(const ResultFilter& filter, int page_size,
                                         const std::string& cursor) const {
  return Send("GET", "/api/records" + PageQuery(filter, page_size, cursor), "", /*sign=*/false);
}

FleetResult FleetHttpClient::GetResult(const std::string& result_id) const {
  return Send("GET", "/api/results/" + Segment(result_id), "", /*sign=*/false);
}

FleetResult FleetHttpClient::CreatePlan(const std::string& name, const std::vector<json>& jobs,
                                        int64_t expires_at) const {
  json body = {{"name", name}, {"jobs", jobs}};
  if (expires_at > 0) body["expires_at"] = expires_at;
  return Send("POST", "/api/plans", body.dump());
}

FleetResult FleetHttpClient::GetPlan(const std::string& plan_id) const {
  return Send("GET", "/api/plans/" + Segment(plan_id), "");
}

FleetResult FleetHttpClient::Claim(const json& capabilities) const {
  return Send("POST", "/api/jobs/claim", capabilities.dump());
}

FleetResult FleetHttpClient::Heartbeat(const std::string& job_id) const {
  return Send("PUT", "/api/jobs/" + Segment(job_id) + "/heartbeat", "");
}

FleetResult FleetHttpClient::CompleteJob(const std::string& job_id, const json& record) const {
  return Send("POST", "/api/jobs/" + Segment(job_id) + "/result", record.dump());
}

FleetResult FleetHttpClient::FailJob(const std::string& job_id, const std::string& reason,
                                     bool retriable) const {
  const json body = {{"reason", reason}, {"retriable", retriable}};
  return Send("POST", "/api/jobs/" + Segment(job_id) + "/fail", body.dump());
}

std::string ResultFilterQuery(const ResultFilter& f) {
  std::vector<std::string> parts;
  const auto add = [&](const char* key, const std::string& value) {
    parts.push_back(std::string(key) + "=" + PercentEncode(value));
  };
  for (const auto& v : f.benchmarks) add("benchmark", v);
  for (const auto& v : f.models) add("model", v);
  for (const auto& v : f.quants) add("quant", v);
  for (const auto& v : f.runtimes) add("runtime", v);
  for (const auto& v : f.devices) add("device", v);
  for (const auto& v : f.labels) add("label", v);
  if (!f.status.empty()) add("status", f.status);
  if (!f.since.empty()) add("since", f.since);
  for (const auto& v : f.settings) add("setting", v);
  if (f.limit > 0) add("limit", std::to_string(f.limit));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "?" : "&") + p;
  return out;
}

namespace {

std::string Text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<double> Opt(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

Result<ResultRow> ResultRowFromJson(const json& j) {
  if (!j.is_object()) return MakeError("a result row from the server is not a JSON object");
  ResultRow r;
  r.result_id = Text(j, "result_id");
  r.short_id = Text(j, "short_id");
  if (r.short_id.empty()) r.short_id = r.result_id.substr(0, 12);
  r.config_id = Text(j, "config_id");
  r.status = Text(j, "status");
  r.benchmark_id = Text(j, "benchmark_id");
  r.benchmark_type = Text(j, "benchmark_type");
  r.model_file = Text(j, "model_file");
  r.model_sha256 = Text(j, "model_sha256");
  r.quant = Text(j, "quant");
  r.quant_label = Text(j, "quant_label");
  if (r.quant_label.empty()) r.quant_label = r.quant;
  r.runtime = Text(j, "runtime");
  r.device_id = Text(j, "device_id");
  r.label = Text(j, "label");
  r.started_at = Text(j, "started_at");
  if (auto t = Opt(j, "threads")) r.threads = static_cast<int>(*t);
  r.headline = Opt(j, "headline");
  r.headline_metric = Text(j, "headline_metric");
  r.headline_unit = Text(j, "headline_unit");
  r.headline_ci95_low = Opt(j, "headline_ci95_low");
  r.headline_ci95_high = Opt(j, "headline_ci95_high");
  if (auto n = Opt(j, "headline_n")) r.headline_n = static_cast<int>(*n);
  auto ci = j.find("ci_reached");
  r.ci_reached = ci == j.end() || !ci->is_boolean() || ci->get<bool>();
  return r;
}

json ResultRowToJson(const ResultRow& r) {
  const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"result_id", r.result_id},
          {"short_id", r.short_id},
          {"config_id", r.config_id},
          {"status", r.status},
          {"benchmark_id", r.benchmark_id},
          {"benchmark_type", r.benchmark_type},
          {"model_file", r.model_file},
          {"model_sha256", r.model_sha256},
          {"quant", r.quant},
          {"quant_label", r.quant_label},
          {"runtime", r.runtime},
          {"threads", r.threads},
          {"device_id", r.device_id},
          {"label", r.label},
          {"started_at", r.started_at},
          {"headline_metric", r.headline_metric},
          {"headline_unit", r.headline_unit},
          {"headline", opt(r.headline)},
          {"headline_ci95_low", opt(r.headline_ci95_low)},
          {"headline_ci95_high", opt(r.headline_ci95_high)},
          {"headline_n", r.headline_n},
          {"ci_reached", r.ci_reached}};
}

}  // namespace pipette
