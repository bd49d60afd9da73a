#include "pipette/record_schema.h"

// RapidJSON copies unescaped strings 16 bytes at a time with SSE2, which every x86-64 has.
#if defined(__SSE2__) && !defined(RAPIDJSON_SSE2)
#define RAPIDJSON_SSE2
#endif
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <set>
#include <vector>

#include "base/utf8.h"
#include "describe.h"

namespace pipette {
namespace record_schema_internal {
extern const char kSchemaText[];  // record_schema_text.cc, generated from the schema file
}  // namespace record_schema_internal

namespace {

using nlohmann::json;
using record_schema_internal::Failure;

// Iterative: deep nesting is refused (DepthLimit), never a stack overflow.
constexpr unsigned kParseFlags =
    rapidjson::kParseFullPrecisionFlag | rapidjson::kParseIterativeFlag;

// A schema compiled for RapidJSON. Not shareable between threads: the compiled patterns keep
// their matching state.
struct Compiled {
  rapidjson::Document source;  // the schema document refers into it
  std::unique_ptr<rapidjson::SchemaDocument> schema;
  std::string error;  // set when the schema text does not parse
};

std::unique_ptr<Compiled> Compile(const std::string& text) {
  auto c = std::make_unique<Compiled>();
  c->source.Parse(text.data(), text.size());
  if (c->source.HasParseError()) {
    c->error = std::string(rapidjson::GetParseError_En(c->source.GetParseError())) + " at byte " +
               std::to_string(c->source.GetErrorOffset());
    return c;
  }
  c->schema = std::make_unique<rapidjson::SchemaDocument>(c->source);
  return c;
}

const Compiled& ThreadSchema() {
  thread_local const std::unique_ptr<Compiled> compiled = Compile(RecordSchemaText());
  return *compiled;
}

// The schema in two parts, for ParseRecord. RapidJSON passes every event of a document to each
// branch of an anyOf at its root, as well as to the root's own schema: the record's anyOf (an ok
// result has metrics, a failed one its failure) made validating a record 35% slower
// (bench/micro/ingest_bench). `body` is the schema without its root anyOf; `rules` is that anyOf
// alone, checked afterwards on an object holding only the root members its branches name
// (`members`). Exactly the same verdict when each branch constrains only named members
// (properties, required); `split` is false otherwise, and `body` is the whole schema. The
// failures are the same too: a root anyOf is checked when the root object ends, after all else.
struct SplitSchema {
  std::unique_ptr<Compiled> body, rules;
  std::vector<std::string> members;
  bool split = false;
};

std::unique_ptr<SplitSchema> Split(const std::string& text) {
  auto out = std::make_unique<SplitSchema>();
  json schema = json::parse(text, nullptr, false);
  const json* any_of = schema.is_object() && schema.contains("anyOf") ? &schema["anyOf"] : nullptr;
  bool splittable = any_of != nullptr && any_of->is_array();
  std::set<std::string> members;
  for (const json& branch : splittable ? *any_of : json::array()) {
    if (!branch.is_object()) {
      splittable = false;
      continue;
    }
    for (const auto& [keyword, value] : branch.items()) {
      if (keyword == "properties" && value.is_object()) {
        for (const auto& [name, rule] : value.items()) members.insert(name);
      } else if (keyword == "required" && value.is_array()) {
        for (const json& name : value) {
          if (name.is_string()) members.insert(name.get<std::string>());
        }
      } else if (keyword.rfind("x-", 0) != 0) {
        splittable = false;  // a keyword about the object as a whole, or not understood here
      }
    }
  }
  if (!splittable) {
    out->body = Compile(text);
    return out;
  }
  json rules = json::object();
  rules["anyOf"] = *any_of;
  if (schema.contains("definitions")) rules["definitions"] = schema["definitions"];
  schema.erase("anyOf");
  out->body = Compile(schema.dump());
  out->rules = Compile(rules.dump());
  out->members.assign(members.begin(), members.end());
  out->split = out->body->error.empty() && out->rules->error.empty();
  if (!out->split) out->body = Compile(text);  // the whole schema, or its own error
  return out;
}

const SplitSchema& ThreadSplitSchema() {
  thread_local const std::unique_ptr<SplitSchema> split = Split(RecordSchemaText());
  return *split;
}

// Memory for one thread's validations, kept between them. RapidJSON's validator otherwise makes a
// 64 KB memory pool for its state and one for each of its two stacks, and frees them after each
// record; freeing a block that large makes glibc consolidate its free lists, 5% of a submission.
struct Scratch {
  static constexpr size_t kBytes = 256 * 1024;
  std::vector<char> buffer = std::vector<char>(kBytes);
  rapidjson::MemoryPoolAllocator<> pool{buffer.data(), buffer.size()};
  rapidjson::Reader reader;  // keeps its stack's capacity
  bool busy = false;
};

// The thread's Scratch for one validation, emptied; a fresh one while the thread's is in use (a
// failure being worded is validated again, under the validator that found it). Declared before
// the validator, so that it outlives it.
class ScratchUse {
 public:
  ScratchUse() {
    thread_local Scratch mine;
    if (mine.busy) {
      own_ = std::make_unique<Scratch>();
      s_ = own_.get();
    } else {
      s_ = &mine;
    }
    s_->busy = true;
    s_->pool.Clear();
  }
  ~ScratchUse() { s_->busy = false; }
  ScratchUse(const ScratchUse&) = delete;
  ScratchUse& operator=(const ScratchUse&) = delete;
  rapidjson::MemoryPoolAllocator<>* pool() { return &s_->pool; }
  rapidjson::Reader& reader() { return s_->reader; }

 private:
  std::unique_ptr<Scratch> own_;
  Scratch* s_ = nullptr;
};

// The shipped schema as JSON, to word failures; read-only, shared.
const json& SchemaJson() {
  static const json document = json::parse(RecordSchemaText(), nullptr, false);
  return document;
}

std::string Stringify(const rapidjson::Pointer& p) {
  rapidjson::StringBuffer out;
  p.Stringify(out);
  return std::string(out.GetString(), out.GetSize());
}

// Builds the nlohmann value from the events the validator passes on (only while they conform).
// Holds the open containers on its own stack: no recursion.
class JsonBuilder {
 public:
  bool Null() { return Add(json(nullptr)); }
  bool Bool(bool b) { return Add(json(b)); }
  // As json::parse: a non-negative integer is unsigned.
  bool Int(int i) { return i < 0 ? Add(json(int64_t{i})) : Add(json(uint64_t(i))); }
  bool Uint(unsigned u) { return Add(json(uint64_t{u})); }
  bool Int64(int64_t i) { return i < 0 ? Add(json(i)) : Add(json(uint64_t(i))); }
  bool Uint64(uint64_t u) { return Add(json(u)); }
  bool Double(double d) { return Add(json(d)); }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return false; }  // not asked for
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (HoldsNul(s, n)) return false;
    return Add(json(std::string(s, n)));
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (HoldsNul(s, n)) return false;
    key_.assign(s, n);
    return true;
  }
  bool StartObject() { return Open(json::object()); }
  bool EndObject(rapidjson::SizeType) { return Close(); }
  bool StartArray() { return Open(json::array()); }
  bool EndArray(rapidjson::SizeType) { return Close(); }

  json Take() { return std::move(root_); }
  // A member name repeated in one object, or a string holding U+0000: the builder stopped there
  // (Unstorable names it).
  bool stopped() const { return duplicate_ || nul_; }

 private:
  // The open containers are the last members of their parents, and a parent grows only after its
  // open child closes, so these pointers stay valid while they are on the stack.
  json* Place(json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *open_.back();
    if (parent.is_object()) {
      auto [slot, fresh] = parent.get_ref<json::object_t&>().try_emplace(key_, std::move(v));
      if (!fresh) duplicate_ = true;
      return &slot->second;
    }
    auto& array = parent.get_ref<json::array_t&>();
    array.push_back(std::move(v));
    return &array.back();
  }
  bool Add(json v) {
    Place(std::move(v));
    return !duplicate_;
  }
  bool Open(json v) {
    open_.push_back(Place(std::move(v)));
    return !duplicate_;
  }
  bool Close() {
    open_.pop_back();
    return true;
  }

  json root_;
  std::vector<json*> open_;
  std::string key_;
  bool duplicate_ = false;
  bool nul_ = false;
  // PostgreSQL's text and jsonb cannot hold U+0000, so no record may: both stores keep the same.
  bool HoldsNul(const char* s, size_t n) {
    if (std::memchr(s, 0, n) != nullptr) nul_ = true;
    return nul_;
  }
};


// The validator's output handler: passes events to a JsonBuilder. RapidJSON gives the validators
// it makes for anyOf branches a default-constructed handler shared by all threads (its "null
// handler"), so the handler itself must hold no state: this one does nothing when made so.
class Into {
 public:
  Into() = default;
  explicit Into(JsonBuilder* builder) : b_(builder) {}
  bool Null() { return !b_ || b_->Null(); }
  bool Bool(bool v) { return !b_ || b_->Bool(v); }
  bool Int(int v) { return !b_ || b_->Int(v); }
  bool Uint(unsigned v) { return !b_ || b_->Uint(v); }
  bool Int64(int64_t v) { return !b_ || b_->Int64(v); }
  bool Uint64(uint64_t v) { return !b_ || b_->Uint64(v); }
  bool Double(double v) { return !b_ || b_->Double(v); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool c) {
    return !b_ || b_->RawNumber(s, n, c);
  }
  bool String(const char* s, rapidjson::SizeType n, bool c) { return !b_ || b_->String(s, n, c); }
  bool Key(const char* s, rapidjson::SizeType n, bool c) { return !b_ || b_->Key(s, n, c); }
  bool StartObject() { return !b_ || b_->StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return !b_ || b_->EndObject(n); }
  bool StartArray() { return !b_ || b_->StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return !b_ || b_->EndArray(n); }

 private:
  JsonBuilder* b_ = nullptr;
};

// Its states and stacks in a ScratchUse's pool.
using Validator = rapidjson::GenericSchemaValidator<rapidjson::SchemaDocument, Into,
                                                   rapidjson::MemoryPoolAllocator<>>;

// Passes the reader's events on while the nesting stays within kMaxDepth. RapidJSON's validator
// walks its whole stack of open values on every event, so depth d costs O(d^2): 200,000 nested
// arrays took six minutes.
constexpr int kMaxDepth = 64;
template <typename Next>
class DepthLimit {
 public:
  explicit DepthLimit(Next& next) : next_(next) {}
  bool too_deep() const { return too_deep_; }

  bool Null() { return next_.Null(); }
  bool Bool(bool b) { return next_.Bool(b); }
  bool Int(int i) { return next_.Int(i); }
  bool Uint(unsigned u) { return next_.Uint(u); }
  bool Int64(int64_t i) { return next_.Int64(i); }
  bool Uint64(uint64_t u) { return next_.Uint64(u); }
  bool Double(double d) { return next_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
    return next_.RawNumber(s, n, copy);
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return next_.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return next_.Key(s, n, copy); }
  bool StartObject() { return Deeper() && next_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) {
    --depth_;
    return next_.EndObject(n);
  }
  bool StartArray() { return Deeper() && next_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) {
    --depth_;
    return next_.EndArray(n);
  }

 private:
  bool Deeper() {
    if (++depth_ <= kMaxDepth) return true;
    too_deep_ = true;
    return false;
  }
  Next& next_;
  int depth_ = 0;
  bool too_deep_ = false;
};

std::string TooDeep(const rapidjson::ParseResult& r) {
  return "nested deeper than " + std::to_string(kMaxDepth) + " levels (byte " +
         std::to_string(r.Offset()) + ")";
}

constexpr const char* kHoldsNul =
    ": holds U+0000 (a NUL character), which no stored text may hold; leave it out";

// Finds the first member name given twice in one object, or string holding U+0000, as a JSON
// pointer with its line. For the rare paths: a set of names for each open object.
class UnstorableFinder
    : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, UnstorableFinder> {
 public:
  bool Default() { return Value(); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    Value();
    if (!found_ && std::memchr(s, 0, n) != nullptr) {
      const std::string at = Pointer();
      found_ = (at.empty() ? "/" : at) + kHoldsNul;
    }
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    Level& level = open_.back();
    level.token.assign(s, n);
    if (found_) return true;
    if (std::memchr(s, 0, n) != nullptr) {
      const std::string object = Pointer(open_.size() - 1);
      found_ = (object.empty() ? "/" : object) + ": a member name" + kHoldsNul;
    } else if (!level.names.insert(level.token).second) {
      found_ = Pointer() + ": given twice (a member name may appear once in an object)";
    }
    return true;
  }
  bool StartObject() { return Open(true); }
  bool StartArray() { return Open(false); }
  bool EndObject(rapidjson::SizeType) { return Close(); }
  bool EndArray(rapidjson::SizeType) { return Close(); }
  const std::optional<std::string>& found() const { return found_; }

 private:
  struct Level {
    bool object;
    int64_t index = -1;  // of an array's current element
    std::string token;   // of an object's current member
    std::set<std::string> names;
  };
  bool Value() {
    if (!open_.empty() && !open_.back().object) ++open_.back().index;
    return true;
  }
  bool Open(bool object) {
    Value();
    open_.push_back(Level{object, -1, {}, {}});
    return true;
  }
  bool Close() {
    open_.pop_back();
    return true;
  }
  // The pointer of the current value, or of its container `levels` deep.
  std::string Pointer(size_t levels = std::string::npos) const {
    json::json_pointer pointer;
    for (size_t i = 0; i < open_.size() && i < levels; ++i) {
      const Level& l = open_[i];
      pointer.push_back(l.object ? l.token : std::to_string(l.index));
    }
    return pointer.to_string();
  }
  std::vector<Level> open_;
  std::optional<std::string> found_;
};

// The line for the first member name repeated in its object, or string holding U+0000, of `text`.
std::optional<std::string> Unstorable(const std::string& text) {
  UnstorableFinder finder;
  DepthLimit<UnstorableFinder> limit(finder);
  rapidjson::MemoryStream in(text.data(), text.size());
  // Read to the end: text that is not JSON is that first.
  if (rapidjson::Reader().Parse<kParseFlags>(in, limit).IsError()) return std::nullopt;
  return finder.found();
}

// Where `validator` stopped.
template <typename Validator>
Failure FailureOf(const Validator& validator) {
  return Failure{validator.GetInvalidSchemaKeyword(),
                 Stringify(validator.GetInvalidSchemaPointer()),
                 Stringify(validator.GetInvalidDocumentPointer())};
}

std::string NotJson(const rapidjson::ParseResult& r) {
  std::string what = rapidjson::GetParseError_En(r.Code());
  if (!what.empty() && what.back() == '.') what.pop_back();
  what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  return "not valid JSON (byte " + std::to_string(r.Offset()) + ": " + what + ")";
}

// A record made in the process may hold bytes that are not UTF-8; it is checked as its JSON text
// has them, U+FFFD.
std::string Text(const json& record) {
  return record.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The first failure of `text` against `schema`, or the parse error that stopped it.
struct Checked {
  std::optional<Failure> failure;
  std::optional<std::string> not_json;
};
Checked Check(const rapidjson::SchemaDocument& schema, std::string_view text) {
  ScratchUse scratch;
  Into nowhere;
  Validator validator(schema, nowhere, scratch.pool());
  DepthLimit<Validator> limit(validator);
  rapidjson::MemoryStream in(text.data(), text.size());
  const rapidjson::ParseResult parsed = scratch.reader().Parse<kParseFlags>(in, limit);
  if (limit.too_deep()) return {std::nullopt, TooDeep(parsed)};
  if (!validator.IsValid()) return {FailureOf(validator), std::nullopt};
  if (parsed.IsError()) return {std::nullopt, NotJson(parsed)};
  return {};
}

Status Unusable(const Compiled& c) {
  return MakeError("the built-in pipette.result/1 schema does not parse (" + c.error +
                   "); rebuild pipette");
}

}  // namespace

namespace record_schema_internal {

std::optional<Failure> FirstFailure(const json& schema, const json& record) {
  const std::unique_ptr<Compiled> c = Compile(schema.dump());
  if (!c->error.empty()) return std::nullopt;
  return Check(*c->schema, Text(record)).failure;
}

}  // namespace record_schema_internal

const std::string& RecordSchemaText() {
  static const std::string text(record_schema_internal::kSchemaText);
  return text;
}

Status ValidateRecord(const json& record) {
  const Compiled& c = ThreadSchema();
  if (!c.error.empty()) return Unusable(c);
  const Checked checked = Check(*c.schema, Text(record));
  if (checked.failure) return MakeError(Describe(SchemaJson(), *checked.failure, record));
  if (checked.not_json) return MakeError("/: " + *checked.not_json);  // not for a dumped value
  return Status::Ok();
}

namespace {

// Passes `v` to `out` as a reader would pass its text (numbers as json::parse made them); false
// when `out` stopped. Recursive: only for values already checked to nest at most kMaxDepth deep.
template <typename Handler>
bool Emit(const json& v, Handler& out) {
  using rapidjson::SizeType;
  switch (v.type()) {
    case json::value_t::null:
      return out.Null();
    case json::value_t::boolean:
      return out.Bool(v.get<bool>());
    case json::value_t::number_integer:
      return out.Int64(v.get<int64_t>());
    case json::value_t::number_unsigned:
      return out.Uint64(v.get<uint64_t>());
    case json::value_t::number_float:
      return out.Double(v.get<double>());
    case json::value_t::string: {
      const std::string& text = v.get_ref<const std::string&>();
      return out.String(text.data(), static_cast<SizeType>(text.size()), false);
    }
    case json::value_t::object: {
      if (!out.StartObject()) return false;
      for (const auto& [key, member] : v.items()) {
        if (!out.Key(key.data(), static_cast<SizeType>(key.size()), false) || !Emit(member, out)) {
          return false;
        }
      }
      return out.EndObject(static_cast<SizeType>(v.size()));
    }
    case json::value_t::array: {
      if (!out.StartArray()) return false;
      for (const json& element : v) {
        if (!Emit(element, out)) return false;
      }
      return out.EndArray(static_cast<SizeType>(v.size()));
    }
    default:
      return false;  // binary and discarded values: never parsed from text
  }
}

// ParseRecord against `schema` alone.
Result<json> ParseAgainst(const rapidjson::SchemaDocument& schema, const std::string& text) {
  // With SSE2 the reader scans whole aligned 16-byte blocks, up to 15 bytes past the text's end:
  // never a fault, but outside the string's allocation unless it has room to spare (found by
  // AddressSanitizer in fuzz/fuzz_record_schema). A copy with that room costs a memcpy.
  std::string padded;
  const std::string* scanned = &text;
  if (text.capacity() - text.size() < 16) {
    padded.reserve(text.size() + 16);
    padded = text;
    scanned = &padded;
  }
  JsonBuilder builder;
  Into into(&builder);
  ScratchUse scratch;
  Validator validator(schema, into, scratch.pool());
  DepthLimit<Validator> limit(validator);
  rapidjson::StringStream in(scanned->c_str());
  const rapidjson::ParseResult parsed = scratch.reader().Parse<kParseFlags>(in, limit);
  if (limit.too_deep()) return MakeError(TooDeep(parsed));
  if (validator.IsValid() && !parsed.IsError()) return builder.Take();
  if (validator.IsValid() && !builder.stopped()) return MakeError(NotJson(parsed));
  // The validator or a repeated member stopped the reader early: the rest of the text may not
  // even be JSON, or may nest deeper than the limit, which is the first thing to say, and is
  // checked before the whole value is built for the wording: code that words it recurses once per
  // level (dump), and 100,000 levels overflowed a server thread's stack (issue 24).
  {
    rapidjson::BaseReaderHandler<> ignore;
    DepthLimit<rapidjson::BaseReaderHandler<>> deep(ignore);
    rapidjson::MemoryStream again(text.data(), text.size());
    const rapidjson::ParseResult syntax = rapidjson::Reader().Parse<kParseFlags>(again, deep);
    if (deep.too_deep()) return MakeError(TooDeep(syntax));
    if (syntax.IsError()) return MakeError(NotJson(syntax));
  }
  const json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
  // A repeated member next (the validator checked each copy, the wording would see one), or a
  // string holding U+0000.
  if (std::optional<std::string> line = Unstorable(text)) return MakeError(*line);
  return MakeError(Describe(SchemaJson(), FailureOf(validator), record));
}

// The byte of the first number whose exponent has more than 4 significant digits: no double
// holds it, and RapidJSON's full-precision reading shifts by the exponent unchecked (undefined
// behaviour; found by fuzz/fuzz_record_schema with 1e-303183745). Strings are skipped; an
// exponent is an e or E after a digit or a point outside them.
std::optional<size_t> HugeExponent(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      continue;
    }
    if ((c != 'e' && c != 'E') || i == 0 ||
        !(std::isdigit(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.')) {
      continue;
    }
    size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    while (j < text.size() && text[j] == '0') ++j;
    size_t digits = 0;
    while (j + digits < text.size() && std::isdigit(static_cast<unsigned char>(text[j + digits]))) {
      ++digits;
    }
    if (digits > 4) return i;
    i = j + digits - 1;
  }
  return std::nullopt;
}

}  // namespace

Result<json> ParseRecord(const std::string& text) {
  const SplitSchema& s = ThreadSplitSchema();
  if (!s.body->error.empty()) return Unusable(*s.body).error();
  if (const std::optional<size_t> bad = FirstBadUtf8Byte(text)) {
    return MakeError("not valid UTF-8 (byte " + std::to_string(*bad) + ")");
  }
  // StringStream (its SIMD string copy wants it) reads up to a NUL, which JSON text never holds.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    return MakeError("not valid JSON (byte " + std::to_string(nul) + ": a NUL byte)");
  }
  if (const std::optional<size_t> at = HugeExponent(text)) {
    return MakeError("not valid JSON (byte " + std::to_string(*at) +
                     ": a number's exponent is out of range)");
  }
  Result<json> record = ParseAgainst(*s.body->schema, text);
  if (!record.ok() || !s.split) return record;
  // The named members go to the rules' validator straight from the value: written out and read
  // again, their numbers cost more than all the rest.
  ScratchUse scratch;
  Into nowhere;
  Validator rules(*s.rules->schema, nowhere, scratch.pool());
  bool going = rules.StartObject();
  rapidjson::SizeType named = 0;
  for (const std::string& member : s.members) {
    const auto it = record->find(member);
    if (going && it != record->end()) {
      ++named;
      going = rules.Key(member.data(), static_cast<rapidjson::SizeType>(member.size()), false) &&
              Emit(*it, rules);
    }
  }
  if (going) rules.EndObject(named);
  if (!rules.IsValid()) return MakeError(Describe(SchemaJson(), FailureOf(rules), *record));
  return record;
}

}  // namespace pipette
