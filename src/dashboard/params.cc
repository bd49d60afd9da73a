#include "dashboard/params.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>

namespace pipette::dashboard {
namespace {

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

std::string Param(const Query& query, const std::string& key) {
  const auto it = query.find(key);
  return it == query.end() ? std::string() : Trim(it->second);
}

std::vector<std::string> ParamList(const Query& query, const std::string& key) {
  std::vector<std::string> out;
  const auto [b, e] = query.equal_range(key);
  for (auto it = b; it != e; ++it) {
    size_t start = 0;
    const std::string& v = it->second;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      if (comma == std::string::npos) comma = v.size();
      std::string part = Trim(v.substr(start, comma - start));
      if (!part.empty()) out.push_back(std::move(part));
      start = comma + 1;
    }
  }
  return out;
}

Result<int> IntParam(const Query& query, const std::string& key, int fallback, int lo, int hi) {
  const std::string text = Param(query, key);
  if (text.empty()) return fallback;
  const std::string error =
      fmt::format("{} must be a whole number from {} to {} (got '{}')", key, lo, hi, text);
  size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size() || text.size() > 10) return MakeError(error);
  for (; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return MakeError(error);
  }
  const long long v = std::stoll(text);
  if (v < lo || v > hi) return MakeError(error);
  return static_cast<int>(v);
}

Result<std::string> ChoiceParam(const Query& query, const std::string& key,
                                const std::vector<std::string>& allowed,
                                const std::string& fallback) {
  const std::string text = Param(query, key);
  if (text.empty()) return fallback;
  for (const std::string& a : allowed) {
    if (a == text) return text;
  }
  return MakeError(
      fmt::format("{} must be one of {} (got '{}')", key, fmt::join(allowed, ", "), text));
}

ResultFilter Filters::ToResultFilter() const {
  ResultFilter f;
  f.benchmarks = benchmarks;
  f.models = models;
  f.quants = quants;
  f.runtimes = runtimes;
  f.devices = devices;
  f.labels = labels;
  f.status = status;
  f.since = since;
  return f;
}

Params Filters::ToParams() const {
  Params p;
  const auto add = [&p](const char* key, const std::vector<std::string>& v) {
    if (!v.empty()) p.emplace_back(key, fmt::format("{}", fmt::join(v, ", ")));
  };
  add("benchmark", benchmarks);
  add("model", models);
  add("quant", quants);
  add("runtime", runtimes);
  add("device", devices);
  add("label", labels);
  if (!status.empty()) p.emplace_back("status", status);
  if (!since.empty()) p.emplace_back("since", since);
  return p;
}

bool Filters::empty() const { return ToParams().empty(); }

Result<Filters> ParseFilters(const Query& query) {
  Filters f;
  f.benchmarks = ParamList(query, "benchmark");
  f.models = ParamList(query, "model");
  f.quants = ParamList(query, "quant");
  f.runtimes = ParamList(query, "runtime");
  f.devices = ParamList(query, "device");
  f.labels = ParamList(query, "label");
  f.status = Param(query, "status");
  if (!f.status.empty() && f.status != "ok" && f.status != "failed") {
    return MakeError("status must be ok or failed (got '" + f.status + "')");
  }
  f.since = Param(query, "since");
  if (!f.since.empty()) {
    if (auto parsed = ParseSince(f.since); !parsed.ok()) {
      return MakeError("since: " + parsed.error().message);
    }
  }
  return f;
}

std::string FilterForm(const std::string& action, const Filters& filters, const Params& hidden,
                       const std::vector<std::string>& fields) {
  const Params current = filters.ToParams();
  std::string out = "<form class=\"filters\" method=\"get\" action=\"" + Esc(action) + "\">";
  for (const std::string& field : fields) {
    std::string value;
    for (const auto& [k, v] : current) {
      if (k == field) value = v;
    }
    out += "<label>" + Esc(field) + "<input type=\"text\" name=\"" + Esc(field) + "\" value=\"" +
           Esc(value) + "\"></label>";
  }
  for (const auto& [k, v] : hidden) {
    out += "<input type=\"hidden\" name=\"" + Esc(k) + "\" value=\"" + Esc(v) + "\">";
  }
  out += "<button type=\"submit\">Filter</button>";
  if (!filters.empty()) out += " <a href=\"" + Esc(action) + "\">clear</a>";
  out += "</form>\n";
  return out;
}

}  // namespace pipette::dashboard
