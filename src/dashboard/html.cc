#include "dashboard/html.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

#include "report/chart.h"

namespace pipette::dashboard {

std::string Esc(std::string_view text) { return report::XmlEscape(text); }

std::string UrlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string QueryString(const Params& params) {
  std::string out;
  for (const auto& [key, value] : params) {
    out += out.empty() ? '?' : '&';
    out += UrlEncode(key) + "=" + UrlEncode(value);
  }
  return out;
}

std::string FormatBare(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  if (unit == "bytes") return report::FormatBytes(v);
  if (unit == "ms" || unit == "tokens/s") {
    return std::abs(v) >= 100 ? fmt::format("{:.1f}", v) : fmt::format("{:#.3g}", v);
  }
  return fmt::format("{:.4g}", v);
}

std::string FormatValue(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  if (unit == "bytes" || unit.empty() || unit == "ratio") return FormatBare(v, unit);
  return FormatBare(v, unit) + " " + unit;
}

std::string CiText(const std::optional<double>& low, const std::optional<double>& high,
                   const std::string& unit) {
  if (!low || !high) return "-";
  return FormatBare(*low, unit) + " .. " + FormatBare(*high, unit);
}

std::string CiRelative(double median, const std::optional<double>& low,
                       const std::optional<double>& high) {
  if (!low || !high || median == 0 || !std::isfinite(median)) return "";
  return fmt::format("+-{:.1f}%", 50 * (*high - *low) / std::abs(median));
}

std::string UnixTime(int64_t t) {
  if (t == 0) return "-";
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string RecordTime(const std::string& rfc3339) {
  std::string s = Prefix(rfc3339, 19);
  if (s.size() > 10 && (s[10] == 'T' || s[10] == 't')) s[10] = ' ';
  return s;
}

std::string Prefix(const std::string& s, size_t n) { return s.substr(0, std::min(n, s.size())); }

DashboardResponse PageResponse(std::string html) {
  DashboardResponse r;
  r.body = std::move(html);
  return r;
}

namespace {

void Flatten(const nlohmann::json& v, const std::string& path, std::string& out) {
  if (v.is_object() && !v.empty()) {
    for (const auto& [key, child] : v.items()) {
      Flatten(child, path.empty() ? key : path + "." + key, out);
    }
    return;
  }
  if (v.is_array() && !v.empty()) {
    bool numbers = true;
    for (const auto& e : v) numbers = numbers && e.is_number();
    if (numbers && v.size() > 8) {
      out += "<dt>" + Esc(path) + "</dt><dd>[" + std::to_string(v.size()) + " numbers]</dd>";
      return;
    }
    for (size_t i = 0; i < v.size(); ++i) Flatten(v[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  std::string text = v.is_string() ? v.get<std::string>() : v.is_null() ? "-" : v.dump();
  out += "<dt>" + Esc(path) + "</dt><dd>" + Esc(text) + "</dd>";
}

}  // namespace

std::string JsonList(const nlohmann::json& value) {
  std::string out = "<dl class=\"kv\">";
  Flatten(value, "", out);
  return out + "</dl>\n";
}

namespace {
DashboardResponse Line(DashboardResponse::Kind kind, std::string line) {
  DashboardResponse r;
  r.kind = kind;
  r.body = std::move(line);
  r.content_type = "text/plain; charset=utf-8";
  return r;
}
}  // namespace

DashboardResponse NotFound(std::string line) {
  return Line(DashboardResponse::Kind::kNotFound, std::move(line));
}
DashboardResponse BadRequest(std::string line) {
  return Line(DashboardResponse::Kind::kBadRequest, std::move(line));
}
DashboardResponse StoreError(const Error& error) {
  return Line(DashboardResponse::Kind::kStoreError, error.message);
}

}  // namespace pipette::dashboard
