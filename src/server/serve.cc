// Serve(): the store, the socket, the threads, the signals (include/pipette/server.h).
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "pipette/fleet_store.h"
#include "pipette/server.h"
#include "server/client_address.h"
#include "server/connection_gate.h"
#include "server/gated_server.h"
#include "server/http.h"
#include "server/service.h"
#include "server/store_pool.h"

namespace pipette {
namespace {

std::string HostPort(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string BindFailure(int err) {
  switch (err) {
    case EADDRINUSE:
      return "address in use; pick another listen address";
    case EACCES:
      return "permission denied (ports below 1024 need privileges); pick another port";
    case EADDRNOTAVAIL:
      return "no such address on this machine; pick another listen address";
    case 0:
      return "the address could not be resolved or bound; check the listen address";
    default:
      return std::string(std::strerror(err)) + "; pick another listen address";
  }
}

}  // namespace

Status Serve(const ServerOptions& options, ServeHooks hooks) {
  ServerOptions opts = options;
  if (opts.db.empty()) opts.db = DefaultFleetDbPath();
  if (opts.threads < 1) opts.threads = 1;
  for (const std::string& proxy : opts.trusted_proxies) {
    if (!server::IsIpAddress(proxy)) {
      return MakeError("trusted proxy '" + proxy.substr(0, 60) +
                       "' is not an IP address; give the proxy's address as its connections "
                       "reach the server (e.g. 127.0.0.1)");
    }
  }

  FleetStoreOptions store_options;
  store_options.max_size_bytes = opts.db_max_size_bytes;
  Result<std::unique_ptr<FleetStore>> first = OpenFleetStore(opts.db, store_options);
  if (!first.ok()) return first.error();
  const std::string described = (*first)->backend() + " " + (*first)->where();
  server::StorePool pool(opts.db, store_options);
  pool.Add(std::move(first).value());
  server::FleetService service(opts);

  server::GatedServer svr;
  // Connections wait for their request head in the gate, on no thread; the request threads serve
  // heads that arrived (issue 24: idle connections starved the server).
  server::GateLimits limits;
  limits.per_peer = std::max(1, opts.max_connections_per_peer);
  for (const std::string& proxy : opts.trusted_proxies) {
    limits.unlimited_peers.push_back(server::CanonicalAddress(proxy));
  }
  limits.total = std::max(1, std::min(opts.max_connections, server::RaiseOpenFileLimit() - 64));
  limits.head_deadline = std::chrono::seconds(std::max(1, opts.head_timeout_s));
  limits.keep_alive = std::chrono::seconds(std::max(1, opts.keep_alive_s));
  // Workers and the load tool keep connections open; httplib's default closes after 5 requests.
  limits.keep_alive_max = 100000;
  svr.set_tcp_nodelay(true);
  // httplib's default sets SO_REUSEPORT, which lets a second server bind a port in use and split
  // the connections with the first: only SO_REUSEADDR (a restart may rebind at once).
  socket_t listening = INVALID_SOCKET;
  svr.set_socket_options([&listening](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listening = sock;
  });
  server::InstallRoutes(svr, service, pool, opts, hooks.log_requests);

  // Block the stop signals here, before any thread starts, so that every thread inherits the
  // mask and the watcher alone receives them (sigtimedwait).
  sigset_t stop_signals, old_mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  if (hooks.handle_signals) pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);
  const auto restore_mask = [&] {
    if (hooks.handle_signals) pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  };
  // Its threads start now, with the stop signals blocked as every thread of the server.
  server::ConnectionGate gate(limits, opts.threads, [&svr](int fd) { return svr.ServeOne(fd); });
  svr.SetGate(&gate);

  errno = 0;
  int port = opts.port;
  if (port == 0) {
    port = svr.bind_to_any_port(opts.host);
  } else if (!svr.bind_to_port(opts.host, port)) {
    port = -1;
  }
  // httplib listens with a backlog of 5: a fleet's workers (or a load test) connecting at once
  // overflow it, and each connection dropped waits a second for its SYN to be sent again.
  if (port > 0 && listening != INVALID_SOCKET) ::listen(listening, SOMAXCONN);
  if (port <= 0) {
    const int err = errno;
    restore_mask();
    return MakeError("cannot listen on " + HostPort(opts.host, opts.port) + ": " +
                     BindFailure(err));
  }
  std::cout << "pipette serve: listening on http://" << HostPort(opts.host, port)
            << " (store: " << described << ")" << std::endl;
  if (hooks.on_listening) hooks.on_listening(port);

  std::atomic<bool> done{false};
  std::thread watcher([&] {
    using Clock = std::chrono::steady_clock;
    auto next_prune = Clock::now() + std::chrono::seconds(opts.nonce_prune_interval_s);
    bool stopping = false;
    while (!done.load()) {
      if (!stopping && hooks.stop != nullptr && hooks.stop->load()) stopping = true;
      if (!stopping && hooks.handle_signals) {
        const timespec wait{0, 50 * 1000 * 1000};
        siginfo_t info;
        const int sig = sigtimedwait(&stop_signals, &info, &wait);
        if (sig == SIGTERM || sig == SIGINT) {
          stopping = true;
          std::cerr << "pipette serve: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
                    << ": finishing requests in flight, then stopping" << std::endl;
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      // stop() does nothing before the accept loop runs: repeat until listen_after_bind returns.
      if (stopping) svr.stop();
      if (!stopping && Clock::now() >= next_prune) {
        next_prune = Clock::now() + std::chrono::seconds(opts.nonce_prune_interval_s);
        Result<server::StorePool::Lease> lease = pool.Acquire();
        Status pruned = lease.ok() ? service.PruneNonces(**lease) : Status(lease.error());
        if (!pruned.ok()) {
          std::cerr << "pipette serve: pruning used nonces failed: " << pruned.error().message
                    << std::endl;
        }
      }
    }
  });

  // Returns once stopped, after the requests in flight finished (false after a stop too).
  svr.listen_after_bind();
  gate.Stop();  // the requests in flight finish; connections waiting for a head are closed
  done.store(true);
  watcher.join();
  restore_mask();
  std::cerr << "pipette serve: stopped" << std::endl;
  return Status::Ok();
}

}  // namespace pipette
