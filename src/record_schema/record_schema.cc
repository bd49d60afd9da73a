#include "pipette/record_schema.h"

#include <exception>
#include <memory>
#include <string_view>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
#include <vector>

namespace pipette {
namespace record_schema_internal {
extern const char kSchemaText[];  // record_schema_text.cc, generated from the schema file
}  // namespace record_schema_internal

namespace {

using nlohmann::json;

struct Compiled {
  json document;  // the schema as JSON, to name what a failed constraint expected
  valijson::Schema schema;
  std::string error;  // set when the shipped schema does not parse (a build defect)
};

const Compiled& Schema() {
  static const std::unique_ptr<Compiled> compiled = [] {
    auto c = std::make_unique<Compiled>();
    try {
      c->document = json::parse(RecordSchemaText());
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      valijson::adapters::NlohmannJsonAdapter adapter(c->document);
      parser.populateSchema(adapter, c->schema);
    } catch (const std::exception& e) {
      c->error = e.what();
    }
    return c;
  }();
  return *compiled;
}

// valijson's context ("<root>", "[metrics]", "[0]") as a JSON pointer ("/metrics/0").
std::vector<std::string> PathOf(const std::vector<std::string>& context) {
  std::vector<std::string> path;
  for (const std::string& part : context) {
    if (part == "<root>") continue;
    const bool bracketed = part.size() >= 2 && part.front() == '[' && part.back() == ']';
    path.push_back(bracketed ? part.substr(1, part.size() - 2) : part);
  }
  return path;
}

std::string Pointer(const std::vector<std::string>& path) {
  if (path.empty()) return "/";
  std::string out;
  for (const std::string& token : path) {
    out += '/';
    for (char c : token) {
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out += c;
      }
    }
  }
  return out;
}

const json* Resolve(const json& root, const json* node) {
  for (int hops = 0; node && node->is_object() && node->contains("$ref") && hops < 8; ++hops) {
    const std::string ref = (*node)["$ref"].get<std::string>();
    if (ref.rfind("#", 0) != 0) return nullptr;
    const json::json_pointer p(ref.substr(1));
    node = root.contains(p) ? &root[p] : nullptr;
  }
  return node;
}

// The subschema that governs the value at `path`, following properties, additionalProperties,
// items and local $refs; nullptr where the schema says nothing about it.
const json* SchemaAt(const json& root, const std::vector<std::string>& path) {
  const json* node = Resolve(root, &root);
  for (const std::string& token : path) {
    if (!node || !node->is_object()) return nullptr;
    const json* next = nullptr;
    if (node->contains("properties") && (*node)["properties"].contains(token)) {
      next = &(*node)["properties"][token];
    } else if (node->contains("additionalProperties") &&
               (*node)["additionalProperties"].is_object()) {
      next = &(*node)["additionalProperties"];
    } else if (node->contains("items") && (*node)["items"].is_object()) {
      next = &(*node)["items"];
    }
    node = Resolve(root, next);
  }
  return node;
}

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

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Errors that only say a nested value failed; the nested error itself comes first.
bool IsWrapper(const std::string& d) {
  return StartsWith(d, "Failed to validate against schema associated with") ||
         StartsWith(d, "Failed to validate item #") ||
         StartsWith(d, "Failed to validate against a conditional schema") ||
         StartsWith(d, "Failed to validate against additional properties schema") ||
         StartsWith(d, "Failed to validate against any schemas allowed by anyOf") ||
         StartsWith(d, "Failed to validate against child schema");
}

// One line for one valijson error: "<json pointer>: <what is wrong>".
std::string Describe(const Compiled& c, const json& record,
                     const valijson::ValidationResults::Error& e) {
  std::vector<std::string> path = PathOf(e.context);
  const std::string& d = e.description;
  static constexpr std::string_view kMissing = "Missing required property '";
  if (StartsWith(d, kMissing)) {
    const size_t end = d.rfind('\'');
    path.push_back(d.substr(kMissing.size(), end - kMissing.size()));
    return Pointer(path) + ": required but missing";
  }
  const std::string pointer = Pointer(path);
  const json* rule = SchemaAt(c.document, path);
  const json::json_pointer where(path.empty() ? "" : pointer);
  const json* value = record.contains(where) ? &record[where] : nullptr;
  const std::string got = value ? TypeOf(*value) : "nothing";
  if (StartsWith(d, "Value type not permitted")) {
    if (rule && rule->contains("type")) {
      return pointer + ": expected " + ExpectedTypes((*rule)["type"]) + ", got " + got;
    }
    return pointer + ": wrong type (" + got + ")";
  }
  if (StartsWith(d, "Failed to match against any enum values")) {
    std::string one_of;
    if (rule && rule->contains("enum")) {
      for (const json& v : (*rule)["enum"]) one_of += (one_of.empty() ? "" : ", ") + v.dump();
    }
    return pointer + ": expected one of " + one_of + ", got " + (value ? Excerpt(*value) : got);
  }
  if (StartsWith(d, "Failed to match expected value set by 'const'")) {
    const std::string want = rule && rule->contains("const") ? (*rule)["const"].dump() : "?";
    return pointer + ": expected " + want + ", got " + (value ? Excerpt(*value) : got);
  }
  if (StartsWith(d, "Failed to match regex")) {
    std::string want = "a string matching " + (rule ? rule->value("pattern", "?") : "?");
    if (rule && rule->contains("x-expected")) want = (*rule)["x-expected"].get<std::string>();
    return pointer + ": expected " + want + ", got " + (value ? Excerpt(*value) : got);
  }
  if (StartsWith(d, "String should be no fewer than")) {
    return pointer + ": expected a non-empty string";
  }
  if (StartsWith(d, "Object should have no fewer than") && pointer == "/metrics") {
    return pointer + ": expected at least one metric in an ok result";
  }
  if (StartsWith(d, "Expected number greater than or equal to")) {
    return pointer + ": expected at least " +
           (rule && rule->contains("minimum") ? (*rule)["minimum"].dump() : std::string("?")) +
           ", got " + (value ? Excerpt(*value) : got);
  }
  return pointer + ": " + (d.empty() || d.back() != '.' ? d : d.substr(0, d.size() - 1));
}

}  // namespace

const std::string& RecordSchemaText() {
  static const std::string text(record_schema_internal::kSchemaText);
  return text;
}

Status ValidateRecord(const json& record) {
  const Compiled& c = Schema();
  if (!c.error.empty()) {
    return MakeError("the built-in pipette.result/1 schema does not parse (" + c.error +
                     "); rebuild pipette");
  }
  // One validator per thread: it caches the compiled regular expressions of `pattern`.
  thread_local valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  try {
    valijson::adapters::NlohmannJsonAdapter target(record);
    if (validator.validate(c.schema, target, &results)) return Status::Ok();
  } catch (const std::exception& e) {
    return MakeError(std::string("the record could not be checked against its schema: ") +
                     e.what());
  }
  const valijson::ValidationResults::Error* first = nullptr;
  for (const auto& e : results) {
    if (!IsWrapper(e.description)) {
      first = &e;
      break;
    }
  }
  if (first == nullptr && results.numErrors() > 0) first = &*results.begin();
  if (first == nullptr) return MakeError("/: does not match the pipette.result/1 schema");
  return MakeError(Describe(c, record, *first));
}

}  // namespace pipette
