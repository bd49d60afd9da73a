// The published contract of the result record (DESIGN.md 5): the JSON Schema of
// `pipette.result/1`, kept in the repository as docs/schema/pipette.result-1.schema.json (draft-04)
// and compiled into the binary, and a validator over it (RapidJSON's schema validator, Debian
// rapidjson-dev).
// Thread-safe: each thread compiles the schema once, on first use (RapidJSON's regular expressions
// keep matching state in the compiled schema).
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
// several is the order the record is read in (deterministic). Strings that are not UTF-8 are
// checked as if each bad byte were U+FFFD. About 0.1 ms for a typical record.
Status ValidateRecord(const nlohmann::json& record);

// Parses `text` as one JSON document and checks it against the schema in the same pass, building
// the value only as far as it conforms: what `pipette serve` does with every submission. Errors:
//   "not valid UTF-8 (byte N)", "not valid JSON (byte N: <what>)", "nested deeper than 64 levels
//   (byte N)", or a bad field named as ValidateRecord names it.
// Numbers parse as json::parse parses them (non-negative integers unsigned, doubles exactly). A
// member name given twice in one object is refused ("<pointer>: given twice ..."): readers differ
// on which copy counts. About 0.08 ms for the 11.5 KB stories260K record, against 0.25 ms for
// json::parse then ValidateRecord (bench/micro/ingest_bench).
Result<nlohmann::json> ParseRecord(const std::string& text);

}  // namespace pipette
