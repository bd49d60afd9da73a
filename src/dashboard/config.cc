#include "dashboard/config.h"

#include <cctype>

#include "pipette/record.h"

namespace pipette::dashboard {

std::string Config::Key() const {
  return model_sha256 + "|" + quant + "|" + runtime + "|" + std::to_string(threads) + "|" +
         device_id;
}

std::string Config::Name() const {
  std::string out;
  for (const std::string& part : Parts()) {
    if (!part.empty()) out += (out.empty() ? "" : " ") + part;
  }
  return out;
}

std::vector<std::string> Config::Parts() const {
  std::string model = model_file.empty() ? model_sha256.substr(0, 12) : model_file;
  // "stories260K-Q8_0.gguf" already says Q8_0.
  std::string lower_file = model, lower_quant = quant;
  for (char& ch : lower_file) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (char& ch : lower_quant) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (!quant.empty() && lower_file.find(lower_quant) == std::string::npos) model += " " + quant;
  return {model, runtime, threads > 0 ? "t=" + std::to_string(threads) : "",
          "@" + (device_name.empty() ? device_id.substr(0, 8) : device_name)};
}

Config ConfigOf(const ResultRow& row, const DeviceNames& names) {
  Config c;
  c.model_file = row.model_file;
  c.model_sha256 = row.model_sha256;
  c.quant = row.quant;
  c.runtime = row.runtime;
  c.device_id = row.device_id;
  c.device_name = names.Of(row.device_id);
  c.threads = row.threads;
  return c;
}

Config ConfigOf(const nlohmann::json& record, const DeviceNames& names) {
  Config c;
  c.model_file = record::StringAt(record, "/model/file_name");
  c.model_sha256 = record::StringAt(record, "/model/sha256");
  c.quant = record::StringAt(record, "/model/quant");
  c.runtime = record::StringAt(record, "/runtime/name");
  c.device_id = record::StringAt(record, "/device/id");
  c.device_name = names.Of(c.device_id);
  if (const auto t = record::NumberAt(record, "/runtime/settings/threads")) {
    c.threads = static_cast<int>(*t);
  }
  return c;
}

namespace {

// The numbers after `prefix`, separated by '_'; empty when the rest is not all numbers.
std::vector<int> Numbers(const std::string& id, const std::string& prefix) {
  if (id.rfind(prefix, 0) != 0) return {};
  std::vector<int> out;
  std::string cur;
  for (size_t i = prefix.size(); i <= id.size(); ++i) {
    if (i == id.size() || id[i] == '_') {
      if (cur.empty() || cur.size() > 9) return {};
      out.push_back(std::stoi(cur));
      cur.clear();
    } else if (std::isdigit(static_cast<unsigned char>(id[i]))) {
      cur += id[i];
    } else {
      return {};
    }
  }
  return out;
}

}  // namespace

Shape PrefillShape(const std::string& benchmark_id) {
  const std::vector<int> n = Numbers(benchmark_id, "prefill_throughput_");
  if (n.size() != 1) return {};
  return {n[0], 0};
}

Shape DecodeShape(const std::string& benchmark_id) {
  const std::vector<int> n = Numbers(benchmark_id, "decode_throughput_");
  if (n.size() != 2) return {};
  return {n[0], n[1]};
}

}  // namespace pipette::dashboard
