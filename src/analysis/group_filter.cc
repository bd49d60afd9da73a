#include "analysis/group_filter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "analysis/record_fields.h"
#include "pipette/record.h"

namespace pipette::analysis {

using nlohmann::json;

namespace {

// Lowercase hex: what a device id (SHA-256) prefix is made of.
bool IsIdPrefix(const std::string& v) {
  return !v.empty() && v.find_first_not_of("0123456789abcdef") == std::string::npos;
}

constexpr const char* kFilterKeys[] = {"quant",  "model",  "benchmark", "runtime",
                                       "commit", "device", "label"};

// The results list filters, then the recorded runtime.settings (pipette/store.h).
std::vector<std::string> Keys() {
  std::vector<std::string> keys(std::begin(kFilterKeys), std::end(kFilterKeys));
  for (const std::string& s : RecordedSettingNames()) keys.push_back(s);
  return keys;
}

bool IsSettingKey(const std::string& key) {
  const auto& names = RecordedSettingNames();
  return std::find(names.begin(), names.end(), key) != names.end();
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

bool Newer(const json& a, const json& b) {
  const std::string sa = record::StringAt(a, "/started_at");
  const std::string sb = record::StringAt(b, "/started_at");
  if (sa != sb) return sa > sb;
  return record::StringAt(a, "/result_id") > record::StringAt(b, "/result_id");
}

// Per benchmark id, the estimate of one side: its ok results of that benchmark pooled
// (PoolResults: those sharing the newest one's config_id), or the newest alone.
std::map<std::string, json> ByBenchmark(const std::vector<json>& records, Repeats repeats) {
  std::map<std::string, std::vector<const json*>> all;
  for (const json& r : records) {
    if (!record::IsOk(r)) continue;
    const std::string id = record::BenchmarkId(r);
    if (!id.empty()) all[id].push_back(&r);
  }
  std::map<std::string, json> out;
  for (auto& [id, list] : all) {
    std::stable_sort(list.begin(), list.end(),
                     [](const json* a, const json* b) { return Newer(*a, *b); });
    if (repeats == Repeats::kNewest) {
      out[id] = *list.front();
      continue;
    }
    std::vector<const json*> same;
    const std::string config_id = record::ConfigId(*list.front());
    for (const json* r : list) {
      if (record::ConfigId(*r) == config_id) same.push_back(r);
    }
    out[id] = PoolResults(same);
  }
  return out;
}

}  // namespace

Result<GroupFilter> ParseGroupFilter(std::string_view text) {
  GroupFilter f;
  f.text = std::string(text);
  const std::vector<std::string> keys = Keys();
  std::string known;
  for (const std::string& k : keys) known += (known.empty() ? "" : ", ") + k;
  if (Trim(text).empty()) {
    return MakeError("empty group filter: give key=value[,key=value], keys " + known);
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string term = Trim(text.substr(start, end - start));
    start = end + 1;
    const size_t eq = term.find('=');
    if (eq == std::string::npos) {
      return MakeError("group filter '" + f.text + "': '" + term +
                       "' is not key=value (keys " + known + ")");
    }
    const std::string key = Lower(Trim(term.substr(0, eq)));
    const std::string value = Trim(term.substr(eq + 1));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      return MakeError("group filter '" + f.text + "': unknown key '" + key + "' (keys " + known +
                       ")");
    }
    if (value.empty()) {
      return MakeError("group filter '" + f.text + "': " + key + " has no value");
    }
    if (key == "threads") {
      int n = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || p != value.data() + value.size() || n <= 0) {
        return MakeError("group filter '" + f.text + "': threads=" + value +
                         " is not a positive integer");
      }
    }
    if (!f.terms.emplace(key, value).second) {
      return MakeError("group filter '" + f.text + "': " + key + " is given twice");
    }
    if (end == text.size()) break;
  }
  return f;
}

bool Matches(const GroupFilter& filter, const json& record) {
  if (!record::IsOk(record)) return false;
  for (const auto& [key, value] : filter.terms) {
    if (key == "quant") {
      if (Lower(record::StringAt(record, "/model/quant")) != Lower(value)) return false;
    } else if (key == "model") {
      const bool sha = Lower(record::StringAt(record, "/model/sha256")).starts_with(Lower(value));
      const bool file =
          record::StringAt(record, "/model/file_name").find(value) != std::string::npos;
      if (!sha && !file) return false;
    } else if (key == "benchmark") {
      if (record::BenchmarkId(record) != value) return false;
    } else if (key == "runtime") {
      if (record::StringAt(record, "/runtime/name") != value) return false;
    } else if (key == "commit") {  // the runtime's commit, a prefix: two llama.cpp builds apart
      const std::string commit = Lower(record::StringAt(record, "/runtime/commit"));
      const std::string v = Lower(value);
      if (commit.empty() || !(commit.starts_with(v) || v.starts_with(commit))) return false;
    } else if (key == "device") {  // an id prefix, the device's name, or its URI
      if (!record::StringAt(record, "/device/id").starts_with(value) &&
          record::StringAt(record, "/device/name") != value &&
          record::StringAt(record, "/device/uri") != value) {
        return false;
      }
    } else if (key == "label") {
      if (record::StringAt(record, "/device/label") != value) return false;
    } else if (IsSettingKey(key)) {
      const json* v = record::Find(record, "/runtime/settings/" + key);
      if (v == nullptr) return false;
      const std::string text = v->is_string() ? v->get<std::string>() : v->dump();
      if (text != value) return false;
    }
  }
  return true;
}

ResultFilter ToResultFilter(const GroupFilter& group, const ResultFilter& base) {
  ResultFilter f = base;
  f.status = "ok";
  for (const auto& [key, value] : group.terms) {
    if (key == "quant") f.quants = {value};
    else if (key == "model") f.models = {value};
    else if (key == "benchmark") f.benchmarks = {value};
    else if (key == "runtime") f.runtimes = {value};
    else if (key == "device") {
      // The store narrows by id prefix; a name or a URI is matched by Matches() alone.
      if (IsIdPrefix(value)) f.devices = {value};
    }
    else if (key == "label") f.labels = {value};
    else if (key == "commit") continue;  // no store filter: Matches() narrows by commit prefix
    else f.settings.push_back(key + "=" + value);
  }
  return f;
}

GroupPairs PairByBenchmark(const std::vector<json>& a, const std::vector<json>& b,
                           Repeats repeats) {
  auto na = ByBenchmark(a, repeats), nb = ByBenchmark(b, repeats);
  GroupPairs out;
  for (auto& [id, ra] : na) {
    auto it = nb.find(id);
    if (it == nb.end()) {
      out.only_a.push_back(id);
    } else {
      out.pairs.push_back({id, std::move(ra), std::move(it->second)});
    }
  }
  for (const auto& [id, rb] : nb) {
    if (!na.contains(id)) out.only_b.push_back(id);
  }
  return out;
}

}  // namespace pipette::analysis
