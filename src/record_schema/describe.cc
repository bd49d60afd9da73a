#include "describe.h"

#include <string_view>

namespace pipette::record_schema_internal {
namespace {

using nlohmann::json;

std::string Article(std::string_view type) {
  if (type == "null") return "null";
  if (type == "integer" || type == "object" || type == "array") return "an " + std::string(type);
  return "a " + std::string(type);
}

std::string TypeOf(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    default:
      return "an object";
  }
}

// A value as a short quoted excerpt, for messages that echo what was sent.
std::string Excerpt(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 48) s = s.substr(0, 45) + "...";
  return s;
}

std::string ExpectedTypes(const json& type) {
  if (type.is_string()) return Article(type.get<std::string>());
  std::string out;
  for (size_t i = 0; i < type.size(); ++i) {
    if (i > 0) out += i + 1 == type.size() ? " or " : ", ";
    out += Article(type[i].get<std::string>());
  }
  return out;
}

const json* At(const json& root, const std::string& pointer) {
  try {
    const json::json_pointer p(pointer);
    return root.contains(p) ? &root[p] : nullptr;
  } catch (const json::exception&) {
    return nullptr;
  }
}

std::string Number(const json& rule, const char* key) {
  return rule.contains(key) ? rule[key].dump() : std::string("?");
}

std::string DescribeAnyOf(const json& schema, const json& rule, const Failure& f,
                          const json& record) {
  std::optional<std::string> first;
  for (const json& branch : rule.value("anyOf", json::array())) {
    json alone = branch;
    // The branch's $refs point into the whole schema.
    if (schema.contains("definitions")) alone["definitions"] = schema["definitions"];
    const std::optional<Failure> failed = FirstFailure(alone, record);
    if (!failed) continue;
    std::string line = Describe(alone, *failed, record);
    if (failed->keyword != "enum") return line;
    if (!first) first = std::move(line);
  }
  return first ? *first
               : (f.value.empty() ? "/" : f.value) + ": matches none of the schema's alternatives";
}

}  // namespace

std::string Describe(const json& schema, const Failure& f, const json& record) {
  const std::string pointer = f.value.empty() ? "/" : f.value;
  const json* found = At(schema, f.rule);
  const json rule = found != nullptr && found->is_object() ? *found : json::object();
  const json* value = At(record, f.value);
  const std::string got = value ? TypeOf(*value) : "nothing";
  const std::string echo = value ? Excerpt(*value) : got;
  const std::string& k = f.keyword;
  if (k == "anyOf") return DescribeAnyOf(schema, rule, f, record);
  if (k == "required") {
    for (const json& name : rule.value("required", json::array())) {
      if (name.is_string() && value != nullptr && value->is_object() &&
          !value->contains(name.get<std::string>())) {
        return f.value + "/" + name.get<std::string>() + ": required but missing";
      }
    }
    return pointer + ": a required member is missing";
  }
  if (k == "type") {
    if (rule.contains("type")) {
      return pointer + ": expected " + ExpectedTypes(rule["type"]) + ", got " + got;
    }
    return pointer + ": wrong type (" + got + ")";
  }
  if (k == "enum") {
    const json choices = rule.value("enum", json::array());
    if (choices.size() == 1) return pointer + ": expected " + choices[0].dump() + ", got " + echo;
    std::string one_of;
    for (const json& v : choices) one_of += (one_of.empty() ? "" : ", ") + v.dump();
    return pointer + ": expected one of " + one_of + ", got " + echo;
  }
  // The schema's own words for what its pattern and counts mean, where it has them.
  if (rule.contains("x-expected") && k != "type") {
    return pointer + ": expected " + rule["x-expected"].get<std::string>() +
           (k == "pattern" ? ", got " + echo : "");
  }
  if (k == "pattern") {
    return pointer + ": expected a string matching " + rule.value("pattern", "?") + ", got " + echo;
  }
  if (k == "minLength") {
    if (rule.value("minLength", 0) == 1) return pointer + ": expected a non-empty string";
    return pointer + ": expected at least " + Number(rule, "minLength") + " characters";
  }
  if (k == "maxLength") {
    return pointer + ": expected at most " + Number(rule, "maxLength") + " characters";
  }
  if (k == "minimum") {
    const bool strict = rule.value("exclusiveMinimum", false);
    return pointer + ": expected " + (strict ? "more than " : "at least ") +
           Number(rule, "minimum") + ", got " + echo;
  }
  if (k == "maximum") {
    const bool strict = rule.value("exclusiveMaximum", false);
    return pointer + ": expected " + (strict ? "less than " : "at most ") +
           Number(rule, "maximum") + ", got " + echo;
  }
  if (k == "minProperties") {
    return pointer + ": expected at least " + Number(rule, "minProperties") + " members";
  }
  if (k == "minItems") {
    return pointer + ": expected at least " + Number(rule, "minItems") + " items";
  }
  if (k == "maxItems") return pointer + ": expected at most " + Number(rule, "maxItems") + " items";
  return pointer + ": does not satisfy the schema's \"" + k + "\"";
}

}  // namespace pipette::record_schema_internal
