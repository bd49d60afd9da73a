// The published contract of the result record (DESIGN.md 5): the JSON Schema of
// `pipette.result/1`, kept in the repository as docs/schema/pipette.result-1.schema.json and
// compiled into the binary, and a validator over it (valijson, Debian libvalijson-dev).
// Thread-safe: the schema is parsed once, on first use, and only read afterwards.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "pipette/status.h"

namespace pipette {

// The schema's text, as shipped in docs/schema/pipette.result-1.schema.json.
const std::string& RecordSchemaText();

// Checks `record` field by field against the schema. The Error names the first bad field as a
// JSON pointer (RFC 6901; "/" for the record itself) and says what is wrong, in one line, e.g.
//   "/benchmark/id: required but missing"
//   "/metrics/decode_throughput/median: expected a number, got a string"
//   "/status: expected one of "ok", "failed", got "running""
//   "/result_id: expected a lowercase UUID, got "r1""
//   "/: expected an object, got an array"
// Offending values are echoed shortened to 48 characters. Which error is "first" when there are
// several is valijson's order (deterministic). About 0.1 ms for a typical record.
Status ValidateRecord(const nlohmann::json& record);

}  // namespace pipette
