#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "platform/energy.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string FirstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<double> Number(const fs::path& p) {
  const std::string text = FirstLine(p);
  if (text.empty()) return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<double> BatteryWatts(const fs::path& power_supply) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(power_supply, ec)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& d : dirs) {
    if (FirstLine(d / "type") != "Battery" || FirstLine(d / "scope") == "Device") continue;
    if (FirstLine(d / "status") != "Discharging") continue;
    if (const auto uw = Number(d / "power_now"); uw && *uw != 0) return std::fabs(*uw) / 1e6;
    const auto ua = Number(d / "current_now"), uv = Number(d / "voltage_now");
    if (ua && uv && *ua != 0 && *uv > 0) return std::fabs(*ua) / 1e6 * (*uv / 1e6);
  }
  return std::nullopt;
}

}  // namespace

EnergyReading ReadEnergy(const std::string& sys_root) {
  EnergyReading r;
  std::error_code ec;
  std::vector<fs::path> zones;
  for (const auto& e : fs::directory_iterator(fs::path(sys_root) / "class/powercap", ec)) {
    const std::string name = e.path().filename().string();
    // Package domains only: intel-rapl:0, intel-rapl:1 (subzones intel-rapl:0:0 are inside them).
    if (name.rfind("intel-rapl:", 0) == 0 && name.find(':', 11) == std::string::npos) {
      zones.push_back(e.path());
    }
  }
  std::sort(zones.begin(), zones.end());
  for (const fs::path& z : zones) {
    const auto uj = Number(z / "energy_uj");
    if (!uj) continue;  // unreadable (root-only on kernels after 5.10): not a source
    r.rapl.push_back({FirstLine(z / "name"), static_cast<uint64_t>(*uj),
                      static_cast<uint64_t>(Number(z / "max_energy_range_uj").value_or(0))});
  }
  r.battery_watts = BatteryWatts(fs::path(sys_root) / "class/power_supply");
  return r;
}

std::optional<double> EnergyBetween(const EnergyReading& a, const EnergyReading& b,
                                    double seconds) {
  if (!a.rapl.empty() && a.rapl.size() == b.rapl.size()) {
    double uj = 0;
    for (size_t i = 0; i < a.rapl.size(); ++i) {
      if (a.rapl[i].name != b.rapl[i].name) return std::nullopt;
      const uint64_t x = a.rapl[i].energy_uj, y = b.rapl[i].energy_uj;
      if (y >= x) {
        uj += static_cast<double>(y - x);
      } else if (a.rapl[i].range_uj > x) {
        uj += static_cast<double>(a.rapl[i].range_uj - x + y);  // the counter wrapped once
      } else {
        return std::nullopt;
      }
    }
    if (uj > 0) return uj / 1e6;
  }
  if (a.battery_watts && b.battery_watts && seconds > 0) {
    const double joules = (*a.battery_watts + *b.battery_watts) / 2 * seconds;
    if (joules > 0) return joules;
  }
  return std::nullopt;
}

json EnergyToJson(const EnergyReading& r) {
  json rapl = json::array();
  for (const auto& d : r.rapl) {
    rapl.push_back({{"name", d.name}, {"energy_uj", d.energy_uj}, {"range_uj", d.range_uj}});
  }
  return {{"rapl", rapl},
          {"battery_watts", r.battery_watts ? json(*r.battery_watts) : json(nullptr)}};
}

EnergyReading EnergyFromJson(const json& j) {
  EnergyReading r;
  if (!j.is_object()) return r;
  for (const auto& d : j.value("rapl", json::array())) {
    if (!d.is_object()) continue;
    r.rapl.push_back({d.value("name", ""), d.value("energy_uj", uint64_t{0}),
                      d.value("range_uj", uint64_t{0})});
  }
  if (j.contains("battery_watts") && j["battery_watts"].is_number()) {
    r.battery_watts = j["battery_watts"].get<double>();
  }
  return r;
}

}  // namespace pipette
