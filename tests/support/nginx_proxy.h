// Real nginx in front of a pipette serve, for tests and the proxy load figures (no fakes): the
// site file a deployment installs (deploy/nginx/pipette.conf) with only its ports, server name,
// certificate paths and upstream address replaced, TLS with a server certificate for localhost
// and 127.0.0.1 signed by a CA made here (ECDSA P-256, by the openssl command).
//
// Not thread-safe; one proxy per object. The destructor stops nginx (SIGQUIT, then SIGKILL).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "pipette/status.h"

namespace pipette::testing {

class NginxProxy {
 public:
  // Makes the CA and certificate in `dir` (a folder that exists), writes the configuration there
  // and starts nginx in the foreground with HTTPS on a free loopback port, plain HTTP (the
  // redirect) on another, proxying to 127.0.0.1:`upstream_port`. `workers`: nginx worker
  // processes. Errors say why none can run (nginx or openssl missing: "install nginx and openssl
  // (scripts/deps.sh --test)"; the site file changed so a placeholder is gone; nginx exited:
  // the end of its error log). Tests skip on the first, fail on the others.
  static Result<std::unique_ptr<NginxProxy>> Start(const std::string& dir, int upstream_port,
                                                   int workers = 1);
  ~NginxProxy();
  NginxProxy(const NginxProxy&) = delete;
  NginxProxy& operator=(const NginxProxy&) = delete;

  int https_port() const { return https_port_; }
  int http_port() const { return http_port_; }
  // "https://localhost:<port>"
  std::string url() const;
  // The CA certificate (PEM) that signs the server's: what a client gives as its CA file.
  const std::string& ca_file() const { return ca_file_; }
  // nginx's error log.
  std::string error_log() const;

 private:
  NginxProxy() = default;
  std::string dir_, ca_file_;
  int https_port_ = 0, http_port_ = 0;
  pid_t pid_ = -1;
};

// The site file of the deployment: deploy/nginx/pipette.conf in this source tree.
std::string DeployedSiteFile();

}  // namespace pipette::testing
