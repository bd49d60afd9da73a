#include "fleet_store/pg/pg_result_query.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <vector>

#include "store/record.h"

namespace pipette::pg {
namespace {

bool IsNumber(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(v);
}

// "(a OR b ...)" of `condition(value)` over `values`; "" when there are none.
template <typename F>
std::string Any(const std::vector<std::string>& values, F condition) {
  std::string any;
  for (const std::string& v : values) any += (any.empty() ? "(" : " OR ") + condition(v);
  return any.empty() ? any : any + ")";
}

}  // namespace

std::string Quote(pqxx::connection_base& conn, const std::string& text) {
  return std::string(1, '\'').append(conn.esc(text)).append(1, '\'');
}

namespace {

// "column = ANY (ARRAY[...])" over `values`; "" when there are none. Not an OR of equalities:
// PostgreSQL plans an OR of n terms in time that grows with n (5 ms for the dashboard's ten
// decode benchmarks at 1,000,000 results, against 0.15 ms for the array), and runs it slower.
std::string EqualsAny(pqxx::connection_base& conn, const std::string& column,
                      const std::vector<std::string>& values) {
  if (values.empty()) return "";
  std::string list;
  for (const std::string& v : values) list.append(list.empty() ? "" : ", ").append(Quote(conn, v));
  return column + " = ANY (ARRAY[" + list + "]::text[])";
}

// One runtime.settings entry against its filter value, as the SQLite store compares it (see
// ParseSettingFilter): the same text, or for a number the same value, or for true/false the same
// boolean; strings case-insensitively. Numbers and booleans are containment (@>), which the GIN
// index on settings serves; a string needs the key (?, also served) and then a look at the value.
std::string SettingCondition(pqxx::connection_base& conn, const SettingFilter& f) {
  const std::string key = Quote(conn, f.key);
  const std::string v = Quote(conn, f.value);
  if (f.value == "true" || f.value == "false") {
    return "settings @> jsonb_build_object(" + key + ", " + f.value + ")";
  }
  if (IsNumber(f.value)) {
    // 2 matches 2, 2.0 and "2" (a number recorded as text, spelled the same).
    return "(settings @> jsonb_build_object(" + key + ", " + v +
           "::float8) OR settings @> jsonb_build_object(" + key + ", " + v + "::text))";
  }
  return "(settings ? " + key + " AND jsonb_typeof(settings->" + key +
         ") = 'string' AND lower(settings->>" + key + ") = lower(" + v + "))";
}

const char kHex[] = "0123456789abcdef";

std::string Lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A LIKE pattern matching the texts that start with `prefix` (its %, _ and \ taken literally);
// with the column's "C" collation, PostgreSQL serves it from the index as a range.
std::string LikePrefix(const std::string& prefix) {
  std::string out;
  for (char c : prefix) {
    if (c == '%' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  return out + "%";
}

}  // namespace

Result<std::string> WhereClause(pqxx::connection_base& conn, const ResultFilter& f) {
  std::vector<std::string> conditions;
  auto add = [&conditions](std::string c) {
    if (!c.empty()) conditions.push_back(std::move(c));
  };
  auto q = [&conn](const std::string& v) { return Quote(conn, v); };
  add(EqualsAny(conn, "benchmark_id", f.benchmarks));
  add(Any(f.models, [&](const std::string& v) {
    return "(model_sha256 LIKE " + q(LikePrefix(Lowercase(v))) + " OR strpos(model_file, " + q(v) +
           ") > 0)";
  }));
  add(Any(f.quants, [&](const std::string& v) { return "lower(quant) = lower(" + q(v) + ")"; }));
  if (!f.status.empty()) add("status = " + q(f.status));
  add(Any(f.devices,
          [&](const std::string& v) { return "device_id LIKE " + q(LikePrefix(Lowercase(v))); }));
  add(EqualsAny(conn, "runtime", f.runtimes));
  add(EqualsAny(conn, "label", f.labels));
  // Alternatives of one key are ORed, keys ANDed.
  std::map<std::string, std::vector<SettingFilter>> by_key;
  for (const std::string& text : f.settings) {
    auto parsed = ParseSettingFilter(text);
    if (!parsed.ok()) return parsed.error();
    by_key[parsed->key].push_back(*parsed);
  }
  for (const auto& [key, alternatives] : by_key) {
    std::string any;
    for (const SettingFilter& a : alternatives) {
      any += (any.empty() ? "(" : " OR ") + SettingCondition(conn, a);
    }
    add(any + ")");
  }
  if (!f.since.empty()) {
    auto since = ParseSince(f.since);
    if (!since.ok()) return since.error().Wrap("since");
    add("started_at >= " + q(*since));
  }
  std::string where;
  for (const std::string& c : conditions) where += (where.empty() ? " WHERE " : " AND ") + c;
  return where;
}

// The SQLite store's format, so a cursor reads the same on either backend: hex of
// "<started_at>|<result_id>".
std::string EncodeCursor(const Cursor& cursor) {
  const std::string raw = cursor.started_at + "|" + cursor.result_id;
  std::string out;
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

Result<Cursor> DecodeCursor(const std::string& text) {
  const Error bad = MakeError("bad cursor; start from the first page");
  if (text.size() % 2 != 0) return bad;
  std::string raw;
  for (size_t i = 0; i < text.size(); i += 2) {
    int v = 0;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + i + 2, v, 16);
    if (ec != std::errc() || end != text.data() + i + 2) return bad;
    if (v < 0x20 || v > 0x7e) return bad;  // times and ids are printable ASCII
    raw += static_cast<char>(v);
  }
  const size_t bar = raw.rfind('|');
  if (bar == std::string::npos || bar == 0 || bar + 1 == raw.size()) return bad;
  Cursor c{raw.substr(0, bar), raw.substr(bar + 1)};
  if (!store::IsLowercaseUuid(c.result_id)) return bad;
  return c;
}

}  // namespace pipette::pg
