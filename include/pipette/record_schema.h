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
// JSON pointer and says what is wrong, in one line, e.g.
//   "/benchmark/id: required but missing"
//   "/metrics/decode_throughput/median: expected a number, got a string"
// (a record that is not an object: "/: expected an object").
Status ValidateRecord(const nlohmann::json& record);

}  // namespace pipette
