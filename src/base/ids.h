// Identifiers and timestamps of the result record (DESIGN.md 5).
#pragma once

#include <chrono>
#include <string>

namespace pipette {

// A new UUIDv7 (RFC 9562 section 5.7): 48-bit Unix time in ms, then random bits from the OS's
// entropy source, so ids sort by creation time. Thread-safe.
std::string NewUuidV7();

// RFC 3339 UTC timestamp with millisecond precision, e.g. "2026-11-29T13:48:33.123Z".
std::string Rfc3339Utc(std::chrono::system_clock::time_point t);
inline std::string NowRfc3339() { return Rfc3339Utc(std::chrono::system_clock::now()); }

}  // namespace pipette
