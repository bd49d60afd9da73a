// The address a request comes from, for the per-address rate limit and the request log (issue
// 24). Behind a reverse proxy every connection comes from the proxy: the client's address is then
// the one the proxy reports, believed only from the proxies the operator named, since anyone
// else could write any X-Forwarded-For.
#pragma once

#include <string>
#include <vector>

namespace pipette::server {

// `peer`: the connection's address as text (IPv4 dotted or IPv6). `forwarded_for`: the
// X-Forwarded-For header ("" when absent). `trusted_proxies`: peer addresses whose header is
// believed. Returns the last entry of the header (the address the trusted proxy saw the request
// come from: it appends or replaces, so earlier entries are the client's own words) when the
// peer is trusted and that entry is an IP address; the peer otherwise. An IPv4-mapped IPv6
// address ("::ffff:192.0.2.1") is given, and matched, as the IPv4 address it is.
std::string ClientAddress(const std::string& peer, const std::string& forwarded_for,
                          const std::vector<std::string>& trusted_proxies);

// An IPv4 peer of a dual-stack socket reads "::ffff:192.0.2.1": the IPv4 address it is. Any
// other text as it is.
std::string PlainAddress(const std::string& address);

// `address` as inet_ntop writes it (lowercase, zeros compressed), then PlainAddress:
// "0:0:0:0:0:0:0:1" -> "::1", "2001:DB8::1" -> "2001:db8::1", "::ffff:127.0.0.1" -> "127.0.0.1".
// Text that is no address is returned as it is.
std::string CanonicalAddress(const std::string& address);

// Whether `text` is an IPv4 or IPv6 address (no port, no brackets).
bool IsIpAddress(const std::string& text);

}  // namespace pipette::server
