#include "runtimes/llamacpp_stock/llama_bench_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace pipette {
namespace {

using nlohmann::json;

// How llama-bench types each field (test::get_field_type; INT fields that are flags in older
// builds accept a boolean too).
enum class FieldType { kText, kInteger, kBoolean, kNumber, kIntegerOrBoolean, kSamplesNs, kSamplesTs };

const std::map<std::string, FieldType>& FieldTypes() {
  using T = FieldType;
  static const std::map<std::string, FieldType> types = {
      {"build_commit", T::kText},        {"build_number", T::kInteger},
      {"cpu_info", T::kText},            {"gpu_info", T::kText},
      {"backends", T::kText},            {"model_filename", T::kText},
      {"model_type", T::kText},          {"model_size", T::kInteger},
      {"model_n_params", T::kInteger},   {"n_batch", T::kInteger},
      {"n_ubatch", T::kInteger},         {"n_threads", T::kInteger},
      {"cpu_mask", T::kText},            {"cpu_strict", T::kBoolean},
      {"poll", T::kInteger},             {"type_k", T::kText},
      {"type_v", T::kText},              {"n_gpu_layers", T::kInteger},
      {"n_cpu_moe", T::kInteger},        {"split_mode", T::kText},
      {"main_gpu", T::kInteger},         {"no_kv_offload", T::kBoolean},
      {"flash_attn", T::kIntegerOrBoolean}, {"devices", T::kText},
      {"tensor_split", T::kText},        {"tensor_buft_overrides", T::kText},
      {"load_mode", T::kText},           {"lazy_mode", T::kText},
      {"use_mmap", T::kBoolean},         {"embeddings", T::kBoolean},
      {"no_op_offload", T::kIntegerOrBoolean}, {"no_host", T::kBoolean},
      {"fit_target", T::kInteger},       {"fit_min_ctx", T::kInteger},
      {"n_prompt", T::kInteger},         {"n_gen", T::kInteger},
      {"n_depth", T::kInteger},          {"test_time", T::kText},
      {"avg_ns", T::kInteger},           {"stddev_ns", T::kInteger},
      {"avg_ts", T::kNumber},            {"stddev_ts", T::kNumber},
      {"samples_ns", T::kSamplesNs},     {"samples_ts", T::kSamplesTs}};
  return types;
}

const char* Expected(FieldType t) {
  switch (t) {
    case FieldType::kText: return "text";
    case FieldType::kInteger: return "an integer";
    case FieldType::kBoolean: return "true or false";
    case FieldType::kNumber: return "a number";
    case FieldType::kIntegerOrBoolean: return "an integer or true/false";
    case FieldType::kSamplesNs: return "a list of positive integer nanoseconds";
    case FieldType::kSamplesTs: return "a list of positive numbers";
  }
  return "?";
}

bool PositiveList(const json& v, bool integers) {
  if (!v.is_array()) return false;
  return std::all_of(v.begin(), v.end(), [integers](const json& x) {
    if (integers ? !x.is_number_integer() : !x.is_number()) return false;
    const double d = x.get<double>();
    return std::isfinite(d) && d > 0;
  });
}

bool HasType(const json& v, FieldType t) {
  switch (t) {
    case FieldType::kText: return v.is_string();
    case FieldType::kInteger: return v.is_number_integer();
    case FieldType::kBoolean: return v.is_boolean();
    case FieldType::kNumber: return v.is_number() && std::isfinite(v.get<double>());
    case FieldType::kIntegerOrBoolean: return v.is_number_integer() || v.is_boolean();
    case FieldType::kSamplesNs: return PositiveList(v, true);
    case FieldType::kSamplesTs: return PositiveList(v, false);
  }
  return false;
}

std::string Excerpt(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string Where(const std::string& path, int line) { return fmt::format("{}:{}", path, line); }

// 1-based line of byte `offset` in `text`.
int LineAt(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

std::string Begins(const std::string& text) {
  std::string first = text.substr(0, text.find('\n'));
  if (first.size() > 40) first = first.substr(0, 37) + "...";
  return first;
}

// Checks one row's fields and splits off the unknown ones. `fields` is the row as read.
Status CheckRow(const std::string& path, LlamaBenchRow& row, json fields) {
  const std::string at = Where(path, row.line);
  if (!fields.is_object()) {
    return MakeError(fmt::format("{}: test {} is {}, not an object of llama-bench's fields", at,
                                 row.index, fields.type_name()));
  }
  for (const char* required :
       {"build_commit", "model_filename", "n_prompt", "n_gen", "avg_ns", "avg_ts"}) {
    if (!fields.contains(required)) {
      return MakeError(fmt::format("{}: test {} has no {}; is this llama-bench's output?", at,
                                   row.index, required));
    }
  }
  json known = json::object();
  for (const auto& [name, value] : fields.items()) {
    const auto type = FieldTypes().find(name);
    if (type == FieldTypes().end()) {
      row.unknown[name] = value;
      continue;
    }
    if (!HasType(value, type->second)) {
      return MakeError(fmt::format("{}: test {} has {} = {}, expected {}; the file is not as "
                                   "llama-bench writes it",
                                   at, row.index, name, Excerpt(value), Expected(type->second)));
    }
    known[name] = value;
  }
  for (const char* count : {"n_prompt", "n_gen", "n_depth"}) {
    if (known.contains(count) && known[count].get<int64_t>() < 0) {
      return MakeError(fmt::format("{}: test {} has {} = {}, expected at least 0", at, row.index,
                                   count, known[count].get<int64_t>()));
    }
  }
  if (known["n_prompt"].get<int64_t>() + known["n_gen"].get<int64_t>() < 1) {
    return MakeError(fmt::format("{}: test {} has n_prompt and n_gen both 0; no llama-bench test "
                                 "is like that",
                                 at, row.index));
  }
  if (known.contains("samples_ns") && known["samples_ns"].empty()) {
    return MakeError(fmt::format("{}: test {} has an empty samples_ns list", at, row.index));
  }
  if (known.contains("samples_ns") && known.contains("samples_ts") &&
      known["samples_ns"].size() != known["samples_ts"].size()) {
    return MakeError(fmt::format("{}: test {} has {} samples_ns but {} samples_ts", at, row.index,
                                 known["samples_ns"].size(), known["samples_ts"].size()));
  }
  row.fields = std::move(known);
  return Status::Ok();
}

// ---- json and jsonl -----------------------------------------------------------------------------

Result<std::vector<LlamaBenchRow>> ReadJson(const std::string& text, const std::string& path) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    const bool unfinished = e.byte >= text.size();
    return MakeError(fmt::format(
        "{}: not valid JSON ({}){}", Where(path, LineAt(text, e.byte == 0 ? 0 : e.byte - 1)),
        unfinished ? "it ends before its closing \"]\"" : "a syntax error",
        unfinished ? "; was llama-bench interrupted? rerun it to completion" : ""));
  }
  if (!doc.is_array()) {
    return MakeError(fmt::format("{}: the JSON is {}, not llama-bench's list of tests (-o json)",
                                 path, doc.type_name()));
  }
  // Each test object's first line: llama-bench prints "  {" on a line of its own.
  std::vector<int> lines;
  for (size_t at = text.find('{'); at != std::string::npos && lines.size() < doc.size();) {
    lines.push_back(LineAt(text, at));
    int depth = 0;
    bool in_string = false;
    size_t i = at;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (in_string) {
        if (c == '\\') ++i;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        break;
      }
    }
    at = text.find('{', i);
  }
  std::vector<LlamaBenchRow> rows;
  for (size_t i = 0; i < doc.size(); ++i) {
    LlamaBenchRow row;
    row.index = static_cast<int>(i) + 1;
    row.line = i < lines.size() ? lines[i] : 1;
    if (Status s = CheckRow(path, row, std::move(doc[i])); !s) return s.error();
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<LlamaBenchRow>> ReadJsonl(const std::string& text, const std::string& path) {
  std::vector<LlamaBenchRow> rows;
  size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string content = text.substr(start, end - start);
    start = end + 1;
    if (content.find_first_not_of(" \t\r") == std::string::npos) continue;
    json value = json::parse(content, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) {
      return MakeError(fmt::format("{}: not a JSON object (llama-bench -o jsonl writes one per "
                                   "line){}",
                                   Where(path, line),
                                   end == text.size() ? "; was llama-bench interrupted?" : ""));
    }
    LlamaBenchRow row;
    row.index = static_cast<int>(rows.size()) + 1;
    row.line = line;
    if (Status s = CheckRow(path, row, std::move(value)); !s) return s.error();
    rows.push_back(std::move(row));
  }
  return rows;
}

// ---- sql ------------------------------------------------------------------------------------------

// A cursor over sql text that knows its line.
struct SqlCursor {
  const std::string& text;
  size_t at = 0;

  void SkipSpace() {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  }
  bool Eat(std::string_view word) {  // case-insensitive keyword or punctuation, after spaces
    SkipSpace();
    if (text.size() - at < word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(text[at + i])) !=
          std::tolower(static_cast<unsigned char>(word[i]))) {
        return false;
      }
    }
    at += word.size();
    return true;
  }
  std::string Name() {
    SkipSpace();
    const size_t from = at;
    while (at < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[at])) || text[at] == '_')) {
      ++at;
    }
    return text.substr(from, at - from);
  }
  // A quoted value; '' inside stands for one quote. nullopt when there is none.
  std::optional<std::string> Quoted() {
    SkipSpace();
    if (at >= text.size() || text[at] != '\'') return std::nullopt;
    std::string value;
    for (++at; at < text.size(); ++at) {
      if (text[at] != '\'') {
        value += text[at];
      } else if (at + 1 < text.size() && text[at + 1] == '\'') {
        value += '\'';
        ++at;
      } else {
        ++at;
        return value;
      }
    }
    return std::nullopt;
  }
  int Line() const { return LineAt(text, at); }
};

// `value` (sql text) as the field's type; nullopt when it is not of that type.
std::optional<json> SqlValue(const std::string& name, const std::string& value) {
  const auto type = FieldTypes().find(name);
  if (type == FieldTypes().end()) return json(value);  // unknown: kept as text
  const auto integer = [&value]() -> std::optional<json> {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty()) return std::nullopt;
    return json(v);
  };
  switch (type->second) {
    case FieldType::kText: return json(value);
    case FieldType::kInteger:
    case FieldType::kIntegerOrBoolean: return integer();
    case FieldType::kBoolean:
      if (value == "0" || value == "1") return json(value == "1");
      return std::nullopt;
    case FieldType::kNumber: {
      double v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
        return std::nullopt;
      }
      return json(v);
    }
    default: return std::nullopt;  // sql has no sample lists
  }
}

Result<std::vector<LlamaBenchRow>> ReadSql(const std::string& text, const std::string& path) {
  SqlCursor c{text};
  std::vector<LlamaBenchRow> rows;
  const auto bad = [&](const std::string& what) {
    return MakeError(fmt::format("{}: {}; the file is not llama-bench's -o sql output",
                                 Where(path, c.Line()), what));
  };
  for (c.SkipSpace(); c.at < text.size(); c.SkipSpace()) {
    const int line = c.Line();
    if (c.Eat("CREATE")) {
      const size_t end = text.find(';', c.at);  // the columns' types are llama-bench's own
      if (end == std::string::npos) return bad("a CREATE TABLE statement without its \";\"");
      c.at = end + 1;
      continue;
    }
    if (!c.Eat("INSERT") || !c.Eat("INTO")) return bad("a statement other than INSERT INTO");
    if (const std::string table = c.Name(); table != "llama_bench") {
      return bad("an INSERT INTO table \"" + table + "\", not llama_bench");
    }
    if (!c.Eat("(")) return bad("no column list after INSERT INTO llama_bench");
    std::vector<std::string> names;
    do {
      const std::string name = c.Name();
      if (name.empty()) return bad("a column list that is not names separated by commas");
      names.push_back(name);
    } while (c.Eat(","));
    if (!c.Eat(")") || !c.Eat("VALUES") || !c.Eat("(")) return bad("no VALUES list");
    std::vector<std::string> values;
    do {
      auto value = c.Quoted();
      if (!value) return bad("a value that is not quoted text (or a quote left open)");
      values.push_back(std::move(*value));
    } while (c.Eat(","));
    if (!c.Eat(")") || !c.Eat(";")) return bad("a VALUES list not closed by \");\"");
    if (names.size() != values.size()) {
      return bad(fmt::format("{} columns but {} values", names.size(), values.size()));
    }
    LlamaBenchRow row;
    row.index = static_cast<int>(rows.size()) + 1;
    row.line = line;
    json fields = json::object();
    for (size_t i = 0; i < names.size(); ++i) {
      auto value = SqlValue(names[i], values[i]);
      if (!value) {
        const auto type = FieldTypes().find(names[i]);
        return MakeError(fmt::format(
            "{}: test {} has {} = '{}', expected {}; the file is not as llama-bench writes it",
            Where(path, line), row.index, names[i], values[i].substr(0, 40),
            Expected(type->second)));
      }
      fields[names[i]] = std::move(*value);
    }
    if (Status s = CheckRow(path, row, std::move(fields)); !s) return s.error();
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::string FormatName(LlamaBenchFormat format) {
  switch (format) {
    case LlamaBenchFormat::kJson: return "json";
    case LlamaBenchFormat::kJsonl: return "jsonl";
    case LlamaBenchFormat::kSql: return "sql";
  }
  return "?";
}

const std::vector<std::string>& KnownLlamaBenchFields() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, type] : FieldTypes()) n.push_back(name);
    return n;
  }();
  return names;
}

Result<LlamaBenchFile> ParseLlamaBenchFile(const std::string& text, const std::string& path,
                                           bool allow_unknown) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return MakeError(path + ": the file is empty; give llama-bench's output (-o json, jsonl or sql)");
  }
  LlamaBenchFile file;
  Result<std::vector<LlamaBenchRow>> rows = std::vector<LlamaBenchRow>{};
  const std::string head = text.substr(first, 12);
  const auto starts = [&head](std::string_view word) {
    if (head.size() < word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(head[i])) != word[i]) return false;
    }
    return true;
  };
  if (text[first] == '[') {
    file.format = LlamaBenchFormat::kJson;
    rows = ReadJson(text, path);
  } else if (text[first] == '{') {
    file.format = LlamaBenchFormat::kJsonl;
    rows = ReadJsonl(text, path);
  } else if (starts("CREATE") || starts("INSERT")) {
    file.format = LlamaBenchFormat::kSql;
    rows = ReadSql(text, path);
  } else {
    return MakeError(fmt::format("{}: not llama-bench output (it begins \"{}\"); give the output "
                                 "of llama-bench -o json, -o jsonl or -o sql (the markdown and csv "
                                 "tables are not read)",
                                 path, Begins(text.substr(first))));
  }
  if (!rows) return rows.error();
  if (rows->empty()) {
    return MakeError(path + ": the file holds no llama-bench tests; was llama-bench interrupted "
                            "before its first test ended?");
  }
  if (!allow_unknown) {
    std::vector<std::string> names;
    int line = 0;
    for (const LlamaBenchRow& row : *rows) {
      for (const auto& [name, value] : row.unknown.items()) {
        if (std::find(names.begin(), names.end(), name) == names.end()) {
          if (names.empty()) line = row.line;
          names.push_back(name);
        }
      }
    }
    if (!names.empty()) {
      return MakeError(fmt::format(
          "{}: unknown llama-bench field{} {} (a newer llama-bench than this pipette knows; such a "
          "field may be a setting that changes the measurement); allow unknown fields to import "
          "the rows anyway, keeping them in the record",
          Where(path, line), names.size() == 1 ? "" : "s", fmt::join(names, ", ")));
    }
  }
  file.rows = std::move(*rows);
  return file;
}

}  // namespace pipette
