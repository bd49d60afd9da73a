#include "server/client_address.h"

#include <arpa/inet.h>

#include <algorithm>

namespace pipette::server {

bool IsIpAddress(const std::string& text) {
  unsigned char buf[sizeof(in6_addr)];
  if (text.empty() || text.size() > 45) return false;
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

std::string CanonicalAddress(const std::string& address) {
  unsigned char buf[sizeof(in6_addr)];
  char text[INET6_ADDRSTRLEN] = {0};
  if (inet_pton(AF_INET, address.c_str(), buf) == 1) {
    inet_ntop(AF_INET, buf, text, sizeof(text));
  } else if (inet_pton(AF_INET6, address.c_str(), buf) == 1) {
    inet_ntop(AF_INET6, buf, text, sizeof(text));
  } else {
    return address;
  }
  return PlainAddress(text);
}

std::string PlainAddress(const std::string& address) {
  constexpr const char* kMapped = "::ffff:";
  if (address.rfind(kMapped, 0) == 0 && address.find('.') != std::string::npos) {
    return address.substr(7);
  }
  return address;
}

std::string ClientAddress(const std::string& peer_as_read, const std::string& forwarded_for,
                          const std::vector<std::string>& trusted_proxies) {
  const std::string peer = PlainAddress(peer_as_read);
  if (forwarded_for.empty() ||
      std::none_of(trusted_proxies.begin(), trusted_proxies.end(),
                   [&](const std::string& proxy) { return CanonicalAddress(proxy) == peer; })) {
    return peer;
  }
  const size_t comma = forwarded_for.rfind(',');
  std::string last = comma == std::string::npos ? forwarded_for : forwarded_for.substr(comma + 1);
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!last.empty() && space(last.back())) last.pop_back();
  last.erase(last.begin(), std::find_if_not(last.begin(), last.end(), space));
  return IsIpAddress(last) ? PlainAddress(last) : peer;
}

}  // namespace pipette::server
