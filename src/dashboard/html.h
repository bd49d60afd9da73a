// Small pieces every dashboard page uses: escaping, URLs, number formatting and the responses.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipette/dashboard.h"
#include "pipette/status.h"

namespace pipette::dashboard {

// `text` safe as HTML element text and inside quoted attributes (& < > " ' and the control
// characters XML forbids); the same escaping as the report's SVG (report::XmlEscape).
std::string Esc(std::string_view text);

// Percent-encodes everything but RFC 3986 unreserved characters: for query values and path
// segments built from stored strings (ids, model names).
std::string UrlEncode(std::string_view text);

// Query parameters in the order given; a key may repeat.
using Params = std::vector<std::pair<std::string, std::string>>;

// "?k=v&k2=v2" (keys and values encoded), "" when `params` is empty. Not HTML-escaped: pass the
// whole href through Esc.
std::string QueryString(const Params& params);

// A value for people in `unit`: "2353.8 tokens/s", "135.82 ms", "11.35 MiB", "0.0148 nats".
std::string FormatValue(double v, const std::string& unit);
// The same without the unit (table cells under a header naming it).
std::string FormatBare(double v, const std::string& unit);
// "2317.7 .. 2392.3" or "-".
std::string CiText(const std::optional<double>& low, const std::optional<double>& high,
                   const std::string& unit);
// The CI's half width relative to the median: "+-1.6%"; "" when unknown.
std::string CiRelative(double median, const std::optional<double>& low,
                       const std::optional<double>& high);

// Unix seconds as "2026-12-01 05:50:33" (UTC); "-" for 0.
std::string UnixTime(int64_t t);
// "2026-12-01T05:50:33.155Z" as "2026-12-01 05:50:33".
std::string RecordTime(const std::string& rfc3339);

// The first `n` characters.
std::string Prefix(const std::string& s, size_t n);

// How many characters of a result id the pages show: the fleet's short_id (12, as `results list`
// prints it). Eight are not enough: a UUIDv7's first 8 hex digits are its time in units of 65 s,
// so the results of one suite run shared them (two different results showed as "01a2336f").
inline constexpr size_t kShortResultId = 12;

// `value` flattened into a definition list, one line per leaf: "cpu.caches[0].size_bytes" ->
// "49152" (strings unquoted, null as "-"); keys and values escaped. Long arrays of numbers are
// summarized ("[1785 numbers]").
std::string JsonList(const nlohmann::json& value);

// Responses.
DashboardResponse PageResponse(std::string html);
DashboardResponse NotFound(std::string line);
DashboardResponse BadRequest(std::string line);
DashboardResponse StoreError(const Error& error);

}  // namespace pipette::dashboard
