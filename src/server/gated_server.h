// cpp-httplib's server with its accepted connections given to a ConnectionGate (issue 24):
// httplib accepts and parses; the gate decides when a connection gets a request thread.
#pragma once

#include <httplib.h>

#include "server/connection_gate.h"

namespace pipette::server {

class GatedServer : public httplib::Server {
 public:
  GatedServer();
  // The gate that accepted connections go to; set before listening, outliving the server's loop.
  void SetGate(ConnectionGate* gate) { gate_ = gate; }
  // Serves one request on `fd` (a request thread of the gate): true when the connection stays
  // open for another. The descriptor stays open either way.
  bool ServeOne(int fd);

 private:
  // httplib calls it for each accepted connection, here on its accepting thread: the connection
  // goes to the gate.
  bool process_and_close_socket(socket_t sock) override;

  ConnectionGate* gate_ = nullptr;
};

}  // namespace pipette::server
