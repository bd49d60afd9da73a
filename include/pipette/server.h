// `pipette serve`: the fleet server of DESIGN.md 8 over one fleet database (pipette/fleet_store.h).
// The contract it serves (signed requests, endpoints, refusals) is docs/fleet-protocol.md.
//
// Serve() opens the store, binds the socket, prints one line saying where it listens, serves
// requests on `threads` threads (one FleetStore each, from a pool), logs each request in one line
// to stderr, and returns when SIGTERM or SIGINT arrives (or `hooks.stop` is set): requests in
// flight finish first. Errors (one line, naming the thing): the store cannot be opened, the
// address is in use or cannot be bound.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8750;  // 0: any free port (ServeHooks::on_listening says which)
  std::string db;   // SQLite file path or "postgresql://" URL; empty: DefaultFleetDbPath()
  // A quota on the SQLite fleet database, in bytes (FleetStoreOptions::max_size_bytes): writes
  // beyond it are refused as on a full disk (507). 0: none. Ignored for PostgreSQL.
  int64_t db_max_size_bytes = 0;
  // Largest request body of the small endpoints (register, plans, claims...), bytes.
  int64_t max_body_bytes = 65536;
  // Largest result record (POST /api/results, /api/jobs/<id>/result), bytes: raw samples and eval
  // completions make records large.
  int64_t max_record_bytes = 64ll * 1024 * 1024;
  // Signed requests per second per client (token bucket, bursts of twice this); 0: no limit.
  double rate_per_client = 100;
  // Requests of no registered client (registering, the dashboard's pages, reading results) per
  // second per client address, bursts of twice this; 0: no limit. /health is never limited.
  double rate_per_address = 50;
  // Addresses of reverse proxies in front of the server (deploy/nginx), as the server sees their
  // connections (e.g. "127.0.0.1"). A request from one of them is attributed to the address its
  // X-Forwarded-For ends with (the per-address rate limit, the request log); from any other peer
  // that header is ignored. They are exempt from max_connections_per_peer: every client's
  // connection comes from them.
  std::vector<std::string> trusted_proxies;
  int lease_s = 60;                 // job lease length, seconds
  int clock_window_s = 300;         // accepted |request timestamp - server clock|, seconds
  int threads = 8;                  // request threads (each keeps one open FleetStore)
  // Connections (issue 24): an accepted connection gets a request thread only once its request
  // head has arrived, so idle connections hold no thread. When a cap is reached, the oldest
  // connection still waiting for its head is closed for the new one.
  int max_connections_per_peer = 256;  // open connections of one address
  int max_connections = 4096;          // open connections in all (and the descriptor limit)
  int head_timeout_s = 10;             // accept to a whole request head, seconds
  int keep_alive_s = 5;                // idle wait for a kept-alive connection's next request
  int nonce_prune_interval_s = 60;  // how often used nonces past their window are deleted
  // The most bytes of rendered dashboard pages kept for reuse (PageCache in pipette/dashboard.h:
  // a page that reads results only is rendered again once a result was added); 0: none kept.
  int64_t page_cache_bytes = 64ll * 1024 * 1024;
};

struct ServeHooks {
  // Called once the socket is bound (with the real port when ServerOptions::port is 0), before
  // the first request is served. Called on Serve()'s thread.
  std::function<void(int port)> on_listening;
  // When set, Serve() stops (as on SIGTERM) once it reads true; polled every 50 ms.
  const std::atomic<bool>* stop = nullptr;
  // Whether SIGTERM and SIGINT stop the server. Serve() then blocks both in the calling thread
  // and the threads it starts, and restores the mask before returning. Tests that run servers
  // inside the test process set false and use `stop`.
  bool handle_signals = true;
  // Whether to log each request to stderr (the listening line is printed to stdout always).
  bool log_requests = true;
};

// Runs the server until stopped (see above). Returns Ok after a graceful stop.
Status Serve(const ServerOptions& options, ServeHooks hooks = {});

}  // namespace pipette
