// The one-line wording of a schema failure (record_schema.h gives examples).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace pipette::record_schema_internal {

// Where RapidJSON's validator stopped: the keyword that failed ("type", "required", "anyOf"...),
// the rule that holds it and the value it failed on, both as JSON pointers (RFC 6901; "" is the
// root) into the schema and into the record.
struct Failure {
  std::string keyword;
  std::string rule;
  std::string value;
};

// The first failure of `record` against the draft-04 schema `schema`; nullopt when it conforms.
// Compiles `schema` on each call: for the rare paths (the branches of a failed anyOf).
std::optional<Failure> FirstFailure(const nlohmann::json& schema, const nlohmann::json& record);

// "<pointer>: <what is wrong>" for `failure` of `record` against `schema`. A failed anyOf is
// worded as the failure of the branch that applies: the first one that fails on something other
// than an enum (branches are told apart by an enum, as the status branches of the record are).
std::string Describe(const nlohmann::json& schema, const Failure& failure,
                     const nlohmann::json& record);

}  // namespace pipette::record_schema_internal
