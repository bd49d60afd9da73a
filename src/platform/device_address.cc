#include <algorithm>
#include <cctype>

#include "platform/transport.h"

namespace pipette {
namespace {

constexpr const char* kForms = "local, ssh://[user@]host[:port] or adb://SERIAL";

Error Bad(const std::string& text, const std::string& why) {
  return MakeError("device '" + text + "': " + why + " (give " + kForms + ")");
}

// A host, user or serial goes to ssh or adb as one argument: nothing an option parser or a shell
// could read as something else.
bool Plain(const std::string& s) {
  if (s.empty() || s[0] == '-') return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == ':' || c == '[' ||
           c == ']' || c == '%';
  });
}

}  // namespace

std::string DeviceAddress::Uri() const {
  std::string uri;
  switch (kind) {
    case TransportKind::kLocal:
      return "local";
    case TransportKind::kSsh:
      uri = "ssh://" + (user.empty() ? "" : user + "@") + host;
      if (port) uri.append(":").append(std::to_string(port));
      break;
    case TransportKind::kAdb:
      uri = "adb://" + serial;
      break;
  }
  return dir.empty() ? uri : uri + "?dir=" + dir;
}

Result<DeviceAddress> ParseDeviceAddress(const std::string& text) {
  DeviceAddress a;
  if (text.empty() || text == "local") return a;
  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string::npos) return Bad(text, "not a device address");
  const std::string scheme = text.substr(0, scheme_end);
  std::string rest = text.substr(scheme_end + 3);
  if (const size_t q = rest.find('?'); q != std::string::npos) {
    const std::string query = rest.substr(q + 1);
    rest = rest.substr(0, q);
    if (query.rfind("dir=", 0) != 0 || query.size() == 4) {
      return Bad(text, "the only query it takes is ?dir=PATH");
    }
    a.dir = query.substr(4);
    if (a.dir.find('\n') != std::string::npos || a.dir.find('\0') != std::string::npos) {
      return Bad(text, "dir= holds a control character");
    }
  }
  if (scheme == "adb") {
    a.kind = TransportKind::kAdb;
    a.serial = rest;
    if (!Plain(a.serial)) return Bad(text, "the adb serial is empty or not a plain word");
    return a;
  }
  if (scheme != "ssh") return Bad(text, "unknown scheme '" + scheme + "'");
  a.kind = TransportKind::kSsh;
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    a.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (!Plain(a.user)) return Bad(text, "the user name is empty or not a plain word");
  }
  // [v6addr]:port, host:port, or host alone.
  std::string port;
  if (!rest.empty() && rest[0] == '[') {
    const size_t close = rest.find(']');
    if (close == std::string::npos) return Bad(text, "an IPv6 address needs its closing ']'");
    a.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return Bad(text, "expected ':PORT' after ']'");
      port = rest.substr(close + 2);
    }
  } else if (const size_t colon = rest.find(':'); colon != std::string::npos) {
    a.host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  } else {
    a.host = rest;
  }
  if (!Plain(a.host) || a.host.find('%') != std::string::npos) {
    return Bad(text, "the host is empty or not a plain name or address");
  }
  if (!port.empty() || (rest.find(':') != std::string::npos && rest[0] != '[')) {
    const bool digits = !port.empty() && port.size() <= 5 &&
                        std::all_of(port.begin(), port.end(), ::isdigit);
    const int p = digits ? std::stoi(port) : 0;
    if (p < 1 || p > 65535) return Bad(text, "the port '" + port + "' is not 1..65535");
    a.port = p;
  }
  return a;
}

std::string ShellQuote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace pipette
