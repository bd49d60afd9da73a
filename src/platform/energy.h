// Power and energy of the device while it works (issue 23), where the device reports them:
//   RAPL   /sys/class/powercap/intel-rapl:<N>/energy_uj, the package domains' energy counters
//          (microjoules since an arbitrary origin, wrapping at max_energy_range_uj): x86 laptops,
//          desktops and servers (Linux powercap, Documentation/power/powercap/powercap.rst).
//   battery /sys/class/power_supply/<bat>/power_now (microwatts), else current_now (microamps) x
//          voltage_now (microvolts), while the system battery is Discharging: phones and laptops
//          on battery (Documentation/ABI/testing/sysfs-class-power). On a charger the battery's
//          current is the charging current, not the device's draw: not used.
// Where the device reports neither, nothing is measured and the metrics are absent (never 0).
// Readers take a sysfs root, so tests point them at fixture folders built from these formats.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette {

struct RaplDomain {
  std::string name;            // the domain's `name`, "package-0"
  uint64_t energy_uj = 0;      // energy_uj
  uint64_t range_uj = 0;       // max_energy_range_uj (0: unknown; a wrap is then not undone)
};

// One reading. Thread-safe to take (it only reads files).
struct EnergyReading {
  std::vector<RaplDomain> rapl;          // package domains (intel-rapl:<N>, not subzones)
  std::optional<double> battery_watts;   // the draw from a discharging system battery, W
};

EnergyReading ReadEnergy(const std::string& sys_root = "/sys");

// The energy used between two readings `seconds` apart, joules: the RAPL packages' counters
// (a wrap undone with max_energy_range_uj) when both readings have the same domains, else the
// battery draw averaged over the two readings times `seconds`. nullopt when neither source
// gives a positive value.
std::optional<double> EnergyBetween(const EnergyReading& before, const EnergyReading& after,
                                    double seconds);

// As JSON for the device's probe ({"rapl": [{name, energy_uj, range_uj}], "battery_watts"}) and
// back.
nlohmann::json EnergyToJson(const EnergyReading& reading);
EnergyReading EnergyFromJson(const nlohmann::json& j);

}  // namespace pipette
