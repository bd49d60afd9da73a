#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "platform/sysfs_text.h"
#include "platform/thermal.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

// Parses a whole line as a signed integer ("45000"); std::nullopt for anything else.
std::optional<long long> ParseInteger(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') return std::nullopt;
  return v;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// N in a directory name "<prefix>N", or -1 when `name` is not of that form.
int NumberedEntry(const std::string& name, const std::string& prefix) {
  if (!StartsWith(name, prefix) || name.size() == prefix.size()) return -1;
  const std::string digits = name.substr(prefix.size());
  const auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  if (!std::all_of(digits.begin(), digits.end(), is_digit)) return -1;
  return std::atoi(digits.c_str());
}

std::optional<ThermalSample> ReadZone(const fs::path& dir) {
  const auto millidegrees = ParseInteger(sysfs::ReadFirstLine(dir / "temp"));
  if (!millidegrees) return std::nullopt;
  ThermalSample z;
  z.zone = dir.filename().string();
  z.type = sysfs::ReadFirstLine(dir / "type");
  z.celsius = static_cast<double>(*millidegrees) / 1000.0;
  z.gates = IsCpuThermalZoneType(z.type);
  return z;
}

}  // namespace

bool IsCpuThermalZoneType(const std::string& type) {
  static const char* const kPrefixes[] = {"x86_pkg_temp", "coretemp", "k10temp", "zenpower",
                                          "cpu",          "soc",      "bigcore", "littlecore",
                                          "tcpu",         "b0d4",     "acpitz"};
  const std::string t = sysfs::Lower(type);
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](const char* p) { return StartsWith(t, p); });
}

std::vector<ThermalSample> ReadThermalSnapshot(const std::string& sys_root) {
  std::vector<std::pair<int, ThermalSample>> numbered;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(sys_root) / "class/thermal", ec)) {
    const int n = NumberedEntry(entry.path().filename().string(), "thermal_zone");
    if (n < 0) continue;
    if (auto z = ReadZone(entry.path())) numbered.emplace_back(n, std::move(*z));
  }
  std::sort(numbered.begin(), numbered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ThermalSample> zones;
  for (auto& [n, z] : numbered) zones.push_back(std::move(z));
  return zones;
}

ThrottleCounts ReadThrottleCounts(const std::string& sys_root) {
  ThrottleCounts counts;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(sys_root) / "devices/system/cpu", ec)) {
    if (NumberedEntry(entry.path().filename().string(), "cpu") < 0) continue;
    for (const char* file : {"core_throttle_count", "package_throttle_count"}) {
      const auto v = ParseInteger(sysfs::ReadFirstLine(entry.path() / "thermal_throttle" / file));
      if (!v || *v < 0) continue;
      counts.available = true;
      counts.total += static_cast<uint64_t>(*v);
    }
  }
  return counts;
}

}  // namespace pipette
