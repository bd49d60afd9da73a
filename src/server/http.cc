#include "server/http.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "base/utf8.h"
#include "pipette/dashboard.h"
#include "server/client_address.h"

namespace pipette::server {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// What the request log line needs beyond the request and response. httplib handles a request on
// one thread from the pre-routing handler to the logger, so a thread_local carries it.
struct RequestLog {
  Clock::time_point start;
  bool started = false;
  std::string client_id;
  std::string address;  // the client's (server/client_address.h)
};
thread_local RequestLog t_log;

int StatusOf(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return 200;
    case Outcome::kCreated:
      return 201;
    case Outcome::kNoContent:
      return 204;
    case Outcome::kInvalid:
      return 400;
    case Outcome::kUnauthenticated:
      return 401;
    case Outcome::kForbidden:
      return 403;
    case Outcome::kNotFound:
      return 404;
    case Outcome::kConflict:
      return 409;
    case Outcome::kRateLimited:
      return 429;
    case Outcome::kUnavailable:
      return 503;
    case Outcome::kStorageFull:
      return 507;  // Insufficient Storage (RFC 4918): the request may succeed once space is freed
    case Outcome::kInternal:
      return 500;
  }
  return 500;
}

void WriteJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void WriteError(httplib::Response& res, int status, const std::string& line) {
  WriteJson(res, status, {{"error", line}});
}

void LogLine(const std::string& line) {
  // One write per line, so lines from different threads do not interleave.
  const std::string out = "pipette serve: " + line + "\n";
  std::fwrite(out.data(), 1, out.size(), stderr);
}

void LogInternal(const httplib::Request& req, const std::string& detail) {
  LogLine("internal error on " + req.method + " " + req.path + ": " + detail);
}

// A database that does not answer or is full: what the client heard, and the store's detail.
void LogStoreFault(const httplib::Request& req, const std::string& line,
                   const std::string& detail) {
  LogLine(req.method + " " + req.path.substr(0, 200) + ": " + line + " (" + detail + ")");
}

void WriteReply(const httplib::Request& req, httplib::Response& res, const Reply& reply) {
  t_log.client_id = reply.client_id;
  const int status = StatusOf(reply.outcome);
  switch (reply.outcome) {
    case Outcome::kOk:
    case Outcome::kCreated:
      if (!reply.body_text.empty()) {
        res.status = status;
        res.set_content(reply.body_text, "application/json");
        return;
      }
      WriteJson(res, status, reply.body);
      return;
    case Outcome::kNoContent:
      res.status = status;
      return;
    case Outcome::kInternal:
      LogInternal(req, reply.error);
      WriteError(res, status, "internal error");
      return;
    case Outcome::kUnavailable:
    case Outcome::kStorageFull:
      LogStoreFault(req, reply.error,
                    reply.body.is_object() ? reply.body.value("detail", std::string()) : "");
      WriteError(res, status, reply.error);
      return;
    case Outcome::kRateLimited:
      res.set_header("Retry-After", std::to_string(reply.retry_after_s));
      WriteError(res, status, reply.error);
      return;
    default:
      WriteError(res, status, reply.error);
      return;
  }
}

SignedRequest ToSigned(const httplib::Request& req) {
  SignedRequest s;
  s.method = req.method;
  s.target = req.target;
  s.body = req.body;
  s.client_id = req.get_header_value("X-Pipette-Client");
  s.timestamp = req.get_header_value("X-Pipette-Timestamp");
  s.nonce = req.get_header_value("X-Pipette-Nonce");
  s.signature = req.get_header_value("X-Pipette-Signature");
  return s;
}

std::string TooLarge(int64_t limit) {
  return "request body is too large (limit " + std::to_string(limit) + " bytes)";
}

using UseCase = std::function<Reply(FleetStore&, const httplib::Request&)>;

// Who a route's requests are rate-limited as: the signed client (FleetService does it), or the
// address of a caller no registered client vouches for.
enum class Limit { kByClient, kByAddress };

// A route: the body limit (checked before anything is parsed), the per-address limit where it
// applies, a store for this request, the use case, the reply.
httplib::Server::Handler Route(FleetService& service, StorePool& pool, int64_t limit,
                               Limit by, UseCase use) {
  return [&service, &pool, limit, by, use = std::move(use)](const httplib::Request& req,
                                                            httplib::Response& res) {
    if (std::optional<Reply> limited = by == Limit::kByAddress
                                           ? service.LimitAddress(t_log.address)
                                           : service.AddressExhausted(t_log.address)) {
      WriteReply(req, res, *limited);
      return;
    }
    if (static_cast<int64_t>(req.body.size()) > limit) {
      WriteError(res, 413, TooLarge(limit));
      return;
    }
    Result<StorePool::Lease> lease = pool.Acquire();
    if (!lease.ok()) {
      // No store to lend (a database server that is down refuses the connection): the same
      // answer as a store failing mid-request.
      WriteReply(req, res, StoreFailure(lease.error()));
      return;
    }
    const Reply reply = use(**lease, req);
    if (by == Limit::kByClient && reply.outcome == Outcome::kUnauthenticated) {
      service.CountFailedAuthentication(t_log.address);
    }
    // A failed store may hold a broken connection: the next request opens a fresh one.
    if (reply.outcome == Outcome::kInternal || reply.outcome == Outcome::kUnavailable) {
      lease->Discard();
    }
    WriteReply(req, res, reply);
  };
}

bool UnderApi(const std::string& path) { return path == "/api" || path.rfind("/api/", 0) == 0; }

}  // namespace

void InstallRoutes(httplib::Server& svr, FleetService& service, StorePool& pool,
                   const ServerOptions& options, bool log_requests) {
  const int64_t small = options.max_body_bytes;
  const int64_t record = options.max_record_bytes;
  // httplib refuses (413) what exceeds the largest limit while reading; each route then applies
  // its own limit before parsing.
  svr.set_payload_max_length(static_cast<size_t>(std::max(small, record)));
  // On every response, API and dashboard alike (issue 24): the pages run no script and may not be
  // framed; a body is read as the type it is sent as; no page's address leaves with a link.
  // Style attributes stay allowed (the plan progress bars' widths).
  svr.set_default_headers({
      {"Content-Security-Policy",
       "default-src 'none'; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' "
       "data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
  });

  svr.set_pre_routing_handler([proxies = options.trusted_proxies](const httplib::Request& req,
                                                                  httplib::Response& res) {
    t_log.start = Clock::now();
    t_log.started = true;
    t_log.client_id.clear();
    // The last header line: a proxy that adds its own line leaves the client's lines before it.
    const size_t lines = req.get_header_value_count("X-Forwarded-For");
    t_log.address = ClientAddress(
        req.remote_addr, lines == 0 ? "" : req.get_header_value("X-Forwarded-For", lines - 1),
        proxies);
    // Ids and filters are text: bytes that are not UTF-8 (after percent-decoding) name nothing
    // stored, and PostgreSQL refuses them in a query.
    bool utf8 = !FirstBadUtf8Byte(req.path);
    for (auto it = req.params.begin(); utf8 && it != req.params.end(); ++it) {
      utf8 = !FirstBadUtf8Byte(it->first) && !FirstBadUtf8Byte(it->second);
    }
    if (!utf8) {
      const std::string line = "the path or query is not UTF-8 text; percent-encode UTF-8 bytes";
      if (UnderApi(req.path)) {
        WriteError(res, 400, line);
      } else {  // a dashboard page: its errors are text, as the pages' own
        res.status = 400;
        res.set_content(line + "\n", "text/plain; charset=utf-8");
      }
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  svr.Get("/health", [&service, &pool](const httplib::Request& req, httplib::Response& res) {
    Result<StorePool::Lease> lease = pool.Acquire();
    Reply reply;
    if (!lease.ok()) {
      reply.outcome = Outcome::kUnavailable;
      reply.error = kDatabaseNotAnswering;
      reply.body = {{"detail", lease.error().message}};
    } else {
      reply = service.Health(**lease);
      if (reply.outcome != Outcome::kOk) lease->Discard();
    }
    WriteReply(req, res, reply);
  });

  svr.Post("/api/register", Route(service, pool, small, Limit::kByAddress, [&service](FleetStore& s, const auto& req) {
             return service.Register(s, ToSigned(req));
           }));
  svr.Get("/api/me", Route(service, pool, small, Limit::kByClient, [&service](FleetStore& s, const auto& req) {
            return service.Me(s, ToSigned(req));
          }));
  svr.Post("/api/results", Route(service, pool, record, Limit::kByClient, [&service](FleetStore& s, const auto& req) {
             return service.SubmitResult(s, ToSigned(req));
           }));
  svr.Get("/api/results", Route(service, pool, small, Limit::kByAddress, [&service](FleetStore& s, const auto& req) {
            return service.ListResults(s, req.params);
          }));
  svr.Get("/api/records", Route(service, pool, small, Limit::kByAddress, [&service](FleetStore& s, const auto& req) {
            return service.ListRecords(s, req.params);
          }));
  svr.Get(R"(/api/results/([^/]+))", Route(service, pool, small, Limit::kByAddress, [&service](FleetStore& s, const auto& req) {
            return service.GetResult(s, req.matches[1].str());
          }));
  svr.Post("/api/plans", Route(service, pool, small, Limit::kByClient, [&service](FleetStore& s, const auto& req) {
             return service.CreatePlan(s, ToSigned(req));
           }));
  svr.Get(R"(/api/plans/([^/]+))", Route(service, pool, small, Limit::kByClient, [&service](FleetStore& s, const auto& req) {
            return service.GetPlan(s, ToSigned(req), req.matches[1].str());
          }));
  svr.Post("/api/jobs/claim", Route(service, pool, small, Limit::kByClient, [&service](FleetStore& s, const auto& req) {
             return service.Claim(s, ToSigned(req));
           }));
  svr.Put(R"(/api/jobs/([^/]+)/heartbeat)",
          Route(service, pool, small, Limit::kByClient, [&service](FleetStore& s, const auto& req) {
            return service.Heartbeat(s, ToSigned(req), req.matches[1].str());
          }));
  svr.Post(R"(/api/jobs/([^/]+)/result)",
           Route(service, pool, record, Limit::kByClient, [&service](FleetStore& s, const auto& req) {
             return service.CompleteJob(s, ToSigned(req), req.matches[1].str());
           }));
  svr.Post(R"(/api/jobs/([^/]+)/fail)",
           Route(service, pool, small, Limit::kByClient, [&service](FleetStore& s, const auto& req) {
             return service.FailJob(s, ToSigned(req), req.matches[1].str());
           }));

  // Everything else that is read is the dashboard's.
  auto pages = std::make_shared<PageCache>(static_cast<size_t>(options.page_cache_bytes));
  svr.Get(R"(.*)", [&service, &pool, pages](const httplib::Request& req,
                                             httplib::Response& res) {
    if (UnderApi(req.path)) {
      WriteError(res, 404, "no such endpoint: GET " + req.path.substr(0, 200));
      return;
    }
    if (std::optional<Reply> limited = service.LimitAddress(t_log.address)) {
      res.status = StatusOf(limited->outcome);
      res.set_header("Retry-After", std::to_string(limited->retry_after_s));
      res.set_content(limited->error + "\n", "text/plain; charset=utf-8");
      return;
    }
    // The dashboard's pages are text: a store failure is its status and one line.
    const auto store_failed = [&req, &res](const std::string& detail) {
      const Reply reply = StoreFailure(MakeError(detail));
      const int status = StatusOf(reply.outcome);
      if (reply.outcome == Outcome::kInternal) {
        LogInternal(req, detail);
      } else {
        LogStoreFault(req, reply.error, detail);
      }
      res.status = status;
      res.set_content((reply.outcome == Outcome::kInternal ? "internal error" : reply.error) +
                          std::string("\n"),
                      "text/plain; charset=utf-8");
    };
    Result<StorePool::Lease> lease = pool.Acquire();
    if (!lease.ok()) {
      store_failed(lease.error().message);
      return;
    }
    const DashboardResponse page = RenderDashboard(**lease, req.path, req.params, pages.get());
    switch (page.kind) {
      case DashboardResponse::Kind::kPage:
        res.status = 200;
        res.set_content(page.body, page.content_type.c_str());
        return;
      case DashboardResponse::Kind::kNotFound:
        res.status = 404;
        res.set_content(page.body + "\n", "text/plain; charset=utf-8");
        return;
      case DashboardResponse::Kind::kBadRequest:
        res.status = 400;
        res.set_content(page.body + "\n", "text/plain; charset=utf-8");
        return;
      case DashboardResponse::Kind::kStoreError:
        lease->Discard();
        store_failed(page.body);
        return;
    }
  });

  // httplib's own refusals (no route, a body over the largest limit, a malformed request) get the
  // protocol's JSON error body too.
  svr.set_error_handler(httplib::Server::HandlerWithResponse(
      [record, small](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string line;
        switch (res.status) {
          case 413:
            // httplib itself caps a form-encoded body (which no endpoint takes) at 8192 bytes.
            line = req.get_header_value("Content-Type")
                               .rfind("application/x-www-form-urlencoded", 0) == 0
                       ? std::string("a form-encoded body is limited to 8192 bytes; send JSON "
                                     "with Content-Type: application/json")
                       : TooLarge(std::max(record, small));
            break;
          case 404:
            line = "no such endpoint: " + req.method + " " + req.path.substr(0, 200);
            break;
          case 400:
            line = "malformed HTTP request";
            break;
          case 500:
            line = "internal error";
            break;
          default:
            line = "request refused (HTTP " + std::to_string(res.status) + ")";
            break;
        }
        WriteError(res, res.status, line);
        return httplib::Server::HandlerResponse::Handled;
      }));

  svr.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        LogInternal(req, what);
        WriteError(res, 500, "internal error");
      });

  if (log_requests) {
    svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      char ms[32] = "-";
      if (t_log.started) {
        std::snprintf(
            ms, sizeof(ms), "%.1fms",
            std::chrono::duration<double, std::milli>(Clock::now() - t_log.start).count());
      }
      std::string client = t_log.client_id;
      if (client.empty()) client = t_log.address.empty() ? req.remote_addr : t_log.address;
      LogLine(req.method + " " + req.path.substr(0, 200) + " " + std::to_string(res.status) + " " +
              ms + " " + client);
      t_log.started = false;
      t_log.client_id.clear();
      t_log.address.clear();
    });
  }
}

}  // namespace pipette::server
