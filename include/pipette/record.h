// Reading a `pipette.result/1` record (DESIGN.md 5): the one set of accessors that the store, the
// analysis, the reports and the CLI share.
//
// A record is a JSON object; every field may be absent or of another type than DESIGN.md 5 says
// (a reader meets records written by other versions, and reports and analyses read whatever the
// store holds). So no accessor fails: each says what it returns when the field is absent or
// mistyped, and it is not an error if a field did not exist.
//
// Fields are named by JSON pointers (RFC 6901): "/benchmark/id", "/runtime/settings/threads",
// "/device/gpus/0/name". A pointer walks objects and arrays; below a string, number, boolean or
// null there is nothing. REQUIRES: `pointer` is a valid JSON pointer, "" (the whole value) or
// starting with '/' with '~' only in "~0" and "~1"; a malformed one is a programming error and
// throws nlohmann::json::parse_error.
//
// Numbers are returned as they are stored, in the unit the metric's "unit" names (tokens/s, ms,
// bytes, nats, ...); nothing is converted.
//
// Thread-safety: every function only reads its argument and keeps no state; calls on the same
// record may run at once from several threads as long as no thread modifies the record.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette::record {

// ---- any field ---------------------------------------------------------------------------------

// The value at `pointer` in `j`, or nullptr when there is none. The pointer points into `j` and
// is valid as long as `j` is neither modified nor destroyed.
const nlohmann::json* Find(const nlohmann::json& j, std::string_view pointer);

// A copy of the value at `pointer`; null when there is none (a stored null reads the same).
nlohmann::json ValueAt(const nlohmann::json& j, std::string_view pointer);

// The string at `pointer`; "" when absent or not a string (a number is not converted).
std::string StringAt(const nlohmann::json& j, std::string_view pointer);

// The value at `pointer` as text for people: a string as it is; a number, boolean, array or
// object as its JSON text ("512", "true", "[\"CUDA\"]"); "" when absent or null.
std::string TextAt(const nlohmann::json& j, std::string_view pointer);

// The number at `pointer` when it is a finite number (an integer is converted to double);
// nullopt when absent, not a number, or not finite.
std::optional<double> NumberAt(const nlohmann::json& j, std::string_view pointer);

// ---- named fields ------------------------------------------------------------------------------

// benchmark.id ("decode-p512-d128", ...); "" when absent or not a string.
std::string BenchmarkId(const nlohmann::json& record);

// config_id (hex SHA-256 of the configuration, DESIGN.md 5); "" when absent or not a string.
std::string ConfigId(const nlohmann::json& record);

// True when status is "ok"; false for "failed", for any other value and when absent.
bool IsOk(const nlohmann::json& record);

// logs.warnings in order: a string as it is, any other entry as its JSON text, less the engine's
// notes (IsEngineNote) that records written before logs.notes kept among them. Empty when absent
// or not an array.
std::vector<std::string> Warnings(const nlohmann::json& record);

// logs.notes, then the engine's notes among logs.warnings (older records), in order: harmless
// lines of the runtime's log that readers show quietly, not as warnings. Empty when there are
// none.
std::vector<std::string> Notes(const nlohmann::json& record);

// Whether a line of the runtime's log is a harmless note rather than a warning: llama.cpp's
// loader replacing a model's invalid tokenizer metadata by its own default ("load: bad special
// token: 'tokenizer.ggml.seperator_token_id' = 4294967295, using default id -1", "load:
// control-looking token: ... its type will be overridden"). Nothing measured depends on it, and
// nothing but converting the model again changes it.
bool IsEngineNote(std::string_view line);

// ---- metrics -----------------------------------------------------------------------------------

// metrics.<metric>.<field> when it is a finite number; nullopt when the record has no metrics
// object, no object for `metric`, no such field, or the field is not a finite number. Fields
// (DESIGN.md 5): "median" (the default), "mean", "stddev", "min", "max", "ci95_low" and
// "ci95_high" (the 95% interval of the median), "p50", "p90", "p99" in the metric's unit; "cv" a
// fraction (0.01 is 1%); "n" the count of values the summary is of. `metric` and `field` are
// keys, not pointers: '/' and '~' in them are plain characters.
std::optional<double> MetricValue(const nlohmann::json& record, std::string_view metric,
                                  std::string_view field = "median");

// metrics.<metric>.unit ("tokens/s", "ms", "bytes", ...); "" when absent or not a string.
std::string MetricUnit(const nlohmann::json& record, std::string_view metric);

}  // namespace pipette::record
