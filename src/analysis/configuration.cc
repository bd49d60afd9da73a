// Configurations: grouping records by what a team ships, and naming each one briefly.
#include <algorithm>
#include <sstream>
#include <cctype>
#include <map>
#include <set>

#include "analysis/record_fields.h"
#include "base/sha256.h"
#include "pipette/analysis.h"
#include "pipette/gguf.h"
#include "pipette/record.h"

namespace pipette {

using nlohmann::json;

namespace {

json KeyFields(const json& record) {
  const auto at = [&](const char* pointer) { return record::ValueAt(record, pointer); };
  return {{"model.sha256", at("/model/sha256")},
          {"model.quant", at("/model/quant")},
          {"runtime.name", at("/runtime/name")},
          {"runtime.version", at("/runtime/version")},
          {"runtime.commit", at("/runtime/commit")},
          {"runtime.settings", analysis::ConfigurationSettings(record)},
          {"device.id", at("/device/id")}};
}

// Newer first: started_at, then result_id (UUIDv7 ids sort by creation time).
bool Newer(const json& a, const json& b) {
  const std::string sa = record::StringAt(a, "/started_at");
  const std::string sb = record::StringAt(b, "/started_at");
  if (sa != sb) return sa > sb;
  return record::StringAt(a, "/result_id") > record::StringAt(b, "/result_id");
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string SettingText(const std::string& key, const json& value) {
  // Absent: the harness's default (for n_ctx, the benchmark's shape).
  const std::string v = value.is_string() ? value.get<std::string>()
                        : value.is_null() ? std::string("default")
                                          : value.dump();
  if (key == "threads") return "t=" + v;
  if (key == "server") {  // a command line: named by its program, past launchers like taskset
    std::istringstream words(v);
    std::string program;
    for (std::string w; words >> w;) {
      const std::string base = w.substr(w.rfind('/') + 1);
      if (program.empty()) program = base;
      if (w.find('/') != std::string::npos && base != "taskset" && base != "nice" &&
          base != "numactl" && base != "env") {
        program = base;
        break;
      }
    }
    return "server=" + program;
  }
  return key + "=" + v;
}

// Gives every configuration a short name made of the fields that tell it apart from the others.
void NameConfigurations(std::vector<Configuration>& configs) {
  if (configs.empty()) return;
  const auto differs = [&](auto field) {
    std::set<std::string> values;
    for (const Configuration& c : configs) values.insert(field(c));
    return values.size() > 1;
  };
  const bool quant_differs = differs([](const Configuration& c) { return c.quant; });
  // The model file is named when the quantization alone does not tell the files apart.
  std::map<std::string, std::set<std::string>> files_per_quant;
  for (const Configuration& c : configs) files_per_quant[c.quant].insert(c.model_sha256);
  bool file_needed = false;
  for (const auto& [quant, files] : files_per_quant) file_needed = file_needed || files.size() > 1;
  const bool runtime_differs = differs(
      [](const Configuration& c) { return c.runtime + " " + c.runtime_version; });
  const bool device_differs = differs([](const Configuration& c) { return c.device_id; });
  std::set<std::string> setting_keys;
  for (const Configuration& c : configs) {
    for (const auto& [key, value] : c.settings.items()) setting_keys.insert(key);
  }
  // A setting names configurations where it differs among those that have it: a runtime without
  // the setting (an OpenAI server has no KV cache type) is told apart by its runtime, not by a
  // list of settings it never had.
  std::vector<std::string> differing_settings;
  for (const std::string& key : setting_keys) {
    std::set<std::string> values;
    for (const Configuration& c : configs) {
      if (c.settings.contains(key)) values.insert(c.settings[key].dump());
    }
    const bool someone_lacks = std::any_of(configs.begin(), configs.end(), [&](const auto& c) {
      return !c.settings.contains(key);
    });
    if (values.size() > 1 || (someone_lacks && !runtime_differs && !values.empty())) {
      differing_settings.push_back(key);
    }
  }

  for (Configuration& c : configs) {
    std::vector<std::string> parts;
    const bool file_part = file_needed;
    if (file_part) parts.push_back(c.model_file);
    if (quant_differs && !(file_part && Lower(c.model_file).find(Lower(c.quant)) != std::string::npos &&
                           c.quant_label == c.quant)) {
      parts.push_back(c.quant_label);
    }
    if (runtime_differs) parts.push_back(c.runtime + " " + c.runtime_version);
    if (device_differs) parts.push_back(c.device_id.substr(0, 8));
    for (const std::string& key : differing_settings) {
      if (!c.settings.contains(key) && runtime_differs) continue;
      parts.push_back(SettingText(key, c.settings.contains(key) ? c.settings[key] : json(nullptr)));
    }
    if (parts.empty()) {
      parts.push_back(c.model_file);
      if ((Lower(c.model_file).find(Lower(c.quant)) == std::string::npos ||
           c.quant_label != c.quant) &&
          !c.quant.empty()) {
        parts.push_back(c.quant_label);
      }
    }
    std::string name;
    for (const std::string& p : parts) {
      if (p.empty()) continue;
      name += (name.empty() ? "" : " ") + p;
    }
    c.name = name.empty() ? c.key.substr(0, 8) : name;
  }
  // Fields outside the name (the runtime commit, say) can still differ: keep names unique.
  std::map<std::string, int> count;
  for (const Configuration& c : configs) ++count[c.name];
  for (Configuration& c : configs) {
    if (count[c.name] > 1) c.name += " #" + c.key.substr(0, 8);
  }
}

}  // namespace

std::string ConfigurationKey(const json& record) { return Sha256Hex(KeyFields(record).dump()); }

const json* Configuration::Find(const std::string& benchmark_id) const {
  for (const json& r : results) {
    if (record::BenchmarkId(r) == benchmark_id) return &r;
  }
  return nullptr;
}

std::vector<Configuration> GroupConfigurations(const std::vector<json>& records, Repeats repeats) {
  // key -> benchmark -> the ok records, newest first
  std::map<std::string, std::map<std::string, std::vector<const json*>>> grouped;
  for (const json& r : records) {
    if (!r.is_object() || !record::IsOk(r)) continue;
    const std::string benchmark = record::BenchmarkId(r);
    if (benchmark.empty()) continue;
    grouped[ConfigurationKey(r)][benchmark].push_back(&r);
  }
  std::map<std::string, std::map<std::string, json>> chosen;  // key -> benchmark -> record
  for (auto& [key, by_benchmark] : grouped) {
    for (auto& [benchmark, list] : by_benchmark) {
      std::sort(list.begin(), list.end(), [](const json* a, const json* b) { return Newer(*a, *b); });
      if (repeats == Repeats::kNewest) {
        chosen[key][benchmark] = *list.front();
        continue;
      }
      // Pool only what shares the newest result's config_id (the same methodology and shape).
      std::vector<const json*> same;
      const std::string config_id = record::ConfigId(*list.front());
      for (const json* r : list) {
        if (record::ConfigId(*r) == config_id) same.push_back(r);
      }
      chosen[key][benchmark] = PoolResults(same);
    }
  }
  std::vector<Configuration> configs;
  for (auto& [key, by_benchmark] : chosen) {
    Configuration c;
    c.key = key;
    for (auto& [id, record] : by_benchmark) c.results.push_back(std::move(record));
    const json& r = c.results.front();
    c.model_file = record::StringAt(r, "/model/file_name");
    c.model_sha256 = record::StringAt(r, "/model/sha256");
    c.quant = record::StringAt(r, "/model/quant");
    c.quant_label = r.contains("model") ? QuantLabel(r["model"]) : c.quant;
    const json* size = record::Find(r, "/model/size_bytes");
    if (size != nullptr && size->is_number() && size->get<double>() > 0) {
      c.model_size_bytes = size->is_number_unsigned() ? size->get<uint64_t>()
                                                      : static_cast<uint64_t>(size->get<double>());
    }
    const json* synth = record::Find(r, "/model/synthetic");
    c.synthetic = synth != nullptr && synth->is_boolean() && synth->get<bool>();
    c.runtime = record::StringAt(r, "/runtime/name");
    c.runtime_version = record::StringAt(r, "/runtime/version");
    c.device_id = record::StringAt(r, "/device/id");
    c.settings = analysis::ConfigurationSettings(r);
    configs.push_back(std::move(c));
  }
  std::sort(configs.begin(), configs.end(), [](const Configuration& a, const Configuration& b) {
    if (a.model_file != b.model_file) return a.model_file < b.model_file;
    if (a.quant != b.quant) return a.quant < b.quant;
    const std::string sa = a.settings.dump(), sb = b.settings.dump();
    if (sa != sb) return sa < sb;
    return a.key < b.key;
  });
  NameConfigurations(configs);
  return configs;
}

}  // namespace pipette
